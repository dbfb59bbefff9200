// Loads an ONNX model, validates it, and imports its main graph into IR, reporting every
// problem in one run.
#include "Import.h"

#include "Rules.h"
#include "Tensor.h"
#include "ir/Limits.h"
#include "ops/OpDef.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <functional>
#include <map>
#include <set>

namespace odlac {
namespace {

std::string dirOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Expected<onnx::ModelProto> parseModel(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return Status::error(path + ": cannot open the model file");
  onnx::ModelProto model;
  bool ok;
  {
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    ok = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  close(fd);
  if (!ok)
    return Status::error(path + ": not a valid ONNX model (protobuf parse failed)");
  return model;
}

std::string nodeLabel(const onnx::NodeProto &n, int index, int64_t opset) {
  std::string label = n.name().empty() ? "node #" + std::to_string(index)
                                       : "node '" + n.name() + "'";
  std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                                 : n.domain() + "." + n.op_type();
  return label + " (" + op + ", opset " + std::to_string(opset) + ")";
}

// Initializers up to this many elements keep their data in the copy of the model that
// ONNX's shape inference reads (copyForShapeInference): shape-like operands are far smaller.
constexpr int64_t kInferDataElements = 4096;

// The names visible while importing one graph: the main graph, or a body nested in it.
// ONNX's scoping: a body sees its own names first, then its enclosing graphs' names. An
// outer value a body reads becomes one of its inputs (a capture); an outer constant becomes
// a body constant first (rules can read its data), which is hoisted out again when the body
// is complete, since IR bodies hold no constants.
struct Scope {
  Graph *graph = nullptr;
  Scope *outer = nullptr;
  std::map<std::string, Value *> values;
  std::set<std::string> poisoned;
  std::vector<Value *> captures;              // outer values bound to the capture inputs
  std::map<Value *, Value *> constantOrigin;  // body constant -> the outer value it copies
};

class Importer : public BodyImporter {
public:
  // `keepAlive`, when given, owns `m`: initializers then reference its raw data in place.
  Importer(const onnx::ModelProto &m, const std::string &path, const ImportOptions &opts,
           std::shared_ptr<const void> keepAlive = nullptr)
      : model_(m), keepAlive_(std::move(keepAlive)), opts_(opts), modelDir_(dirOf(path)) {
    std::string name = m.graph().name().empty() ? "model" : m.graph().name();
    graph_ = std::make_unique<Graph>(name);
    root_.graph = graph_.get();
    ModelInfo &info = graph_->info();
    info.fileName = baseName(path);
    info.producerName = m.producer_name();
    info.producerVersion = m.producer_version();
    info.irVersion = m.ir_version();
  }

  Expected<std::unique_ptr<Graph>> run() {
    if (!readOpsets())
      return errors_;
    inferDeclaredTypes();
    importInitializers();
    importInputs();
    importNodes(model_.graph(), root_);
    importOutputs();
    // After every node verified (a failed node's results are already reported): the size
    // limit of the target on every value the rules made.
    if (errors_.isOk())
      errors_.append(checkSizeLimits(*graph_, opts_.limits));
    if (!errors_.isOk())
      return errors_;
    return std::move(graph_);
  }

private:
  void error(const std::string &message) { errors_.append(Status::error(message)); }

  bool readOpsets() {
    for (const auto &os : model_.opset_import()) {
      std::string domain = os.domain() == "ai.onnx" ? "" : os.domain();
      graph_->info().opsets[domain] = os.version();
    }
    auto it = graph_->info().opsets.find("");
    if (it == graph_->info().opsets.end()) {
      error("the model imports no opset of the default ONNX domain");
      return false;
    }
    opset_ = it->second;
    return true;
  }

  // Runs ONNX's shape inference (with data propagation) on a copy of the model whose inputs
  // carry the pinned shapes, and records every fully static type it finds. Rules use these
  // for ops whose result shape depends on input data. Inference failures only mean fewer
  // facts: the import rules validate everything themselves.
  void inferDeclaredTypes() {
    onnx::ModelProto m = copyForShapeInference(model_, kInferDataElements);
    for (onnx::ValueInfoProto &vi : *m.mutable_graph()->mutable_input()) {
      auto pinned = opts_.inputShapes.find(vi.name());
      if (pinned == opts_.inputShapes.end() || !vi.type().has_tensor_type())
        continue;
      auto *shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : pinned->second)
        shape->add_dim()->set_dim_value(d);
    }
    try {
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception &) {
      return;
    }
    auto record = [&](const onnx::ValueInfoProto &vi) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
        return;
      auto dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
      if (!dtype)
        return;
      TensorType t{*dtype, {}};
      for (const auto &d : vi.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value())
          return;
        t.dims.push_back(d.dim_value());
      }
      declared_[vi.name()] = t;
    };
    // Bodies too (If, Loop, Scan): ONNX names are unique across the whole model.
    std::function<void(const onnx::GraphProto &)> walk = [&](const onnx::GraphProto &g) {
      for (const auto &vi : g.value_info())
        record(vi);
      for (const auto &vi : g.output())
        record(vi);
      for (const onnx::NodeProto &n : g.node())
        for (const onnx::AttributeProto &a : n.attribute())
          if (a.has_g())
            walk(a.g());
    };
    walk(m.graph());
  }

  void importInitializers() {
    for (const onnx::TensorProto &t : model_.graph().initializer()) {
      auto decoded = decodeTensor(t, modelDir_, keepAlive_);
      if (!decoded) {
        error("initializer " + decoded.status().message());
        root_.poisoned.insert(t.name());
        continue;
      }
      root_.values[t.name()] = graph_->addConstant(t.name(), decoded->type, decoded->data);
    }
  }

  void importInputs() {
    std::set<std::string> seen;
    for (const onnx::ValueInfoProto &vi : model_.graph().input()) {
      if (root_.values.count(vi.name()) || root_.poisoned.count(vi.name()))
        continue; // an initializer listed as input (IR version < 4): a constant
      seen.insert(vi.name());
      std::string what = "graph input '" + vi.name() + "'";
      if (!vi.type().has_tensor_type()) {
        error(what + " is not a tensor (sequences, maps and optionals are not supported)");
        root_.poisoned.insert(vi.name());
        continue;
      }
      const auto &tt = vi.type().tensor_type();
      auto dtype = dtypeFromOnnx(tt.elem_type());
      if (!dtype) {
        error(what + ": element type " + onnxTypeName(tt.elem_type()) + " is not supported");
        root_.poisoned.insert(vi.name());
        continue;
      }
      Dims dims;
      std::string symbolic;
      if (!tt.has_shape()) {
        symbolic = "its rank is unknown";
      } else {
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
          const auto &d = tt.shape().dim(i);
          dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
          if (!d.has_dim_value() && symbolic.empty())
            symbolic = "dim " + std::to_string(i) + " is symbolic" +
                       (d.has_dim_param() ? " ('" + d.dim_param() + "')" : std::string());
        }
      }
      if (opts_.batchSize > 0) { // --dynamic-batch: the symbolic leading dim is the batch
        if (dims.empty() || dims[0] >= 0 || opts_.inputShapes.count(vi.name())) {
          error(what + ": --dynamic-batch needs a symbolic leading dim (the batch), not " +
                (dims.empty() ? std::string("rank 0 or an unknown rank")
                              : opts_.inputShapes.count(vi.name()) ? "one pinned by --input-shape"
                                                                   : dimsToString(dims)));
          root_.poisoned.insert(vi.name());
          continue;
        }
        dims[0] = opts_.batchSize;
        symbolic.clear();
        for (size_t i = 1; i < dims.size() && symbolic.empty(); ++i)
          if (dims[i] < 0)
            symbolic = "dim " + std::to_string(i) + " is symbolic";
      }
      auto pinned = opts_.inputShapes.find(vi.name());
      if (pinned != opts_.inputShapes.end()) {
        const Dims &p = pinned->second;
        bool fits = !tt.has_shape() || p.size() == dims.size();
        for (size_t i = 0; fits && tt.has_shape() && i < dims.size(); ++i)
          fits = dims[i] < 0 || dims[i] == p[i];
        if (!fits) {
          error(what + ": --input-shape " + dimsToString(p) + " does not fit the model's shape " +
                dimsToString(dims) + " (-1 marks a symbolic dim)");
          root_.poisoned.insert(vi.name());
          continue;
        }
        dims = p;
      } else if (!symbolic.empty()) {
        error(what + ": " + symbolic + "; pin it with --input-shape " + vi.name() + ":" +
              "<d0>x<d1>x...");
        root_.poisoned.insert(vi.name());
        continue;
      }
      TensorType type{*dtype, dims};
      std::string tooLarge = shapeProblem(type);
      if (tooLarge.empty())
        tooLarge = sizeLimitProblem(type, opts_.limits);
      if (!tooLarge.empty()) {
        error(what + " " + toString(type) + ": " + tooLarge);
        root_.poisoned.insert(vi.name());
        continue;
      }
      root_.values[vi.name()] = graph_->addInput(vi.name(), type);
    }
    for (const auto &[name, dims] : opts_.inputShapes)
      if (!seen.count(name)) {
        std::string names;
        for (const std::string &s : seen)
          names += (names.empty() ? "" : ", ") + s;
        error("--input-shape names '" + name + "', but the model's inputs are: " + names);
      }
  }

  // Imports a Constant node directly into an IR constant.
  Status importConstant(const onnx::NodeProto &n, Scope &scope) {
    if (n.attribute_size() != 1)
      return Status::error("needs exactly one value attribute");
    const onnx::AttributeProto &a = n.attribute(0);
    const std::string &out = n.output(0);
    if (a.name() == "value") {
      auto decoded = decodeTensor(a.t(), modelDir_);
      if (!decoded)
        return decoded.takeStatus();
      scope.values[out] = scope.graph->addConstant(out, decoded->type, decoded->data);
    } else if (a.name() == "value_float") {
      float f = a.f();
      scope.values[out] = scope.graph->addConstant(out, {DType::F32, {}}, Buffer::copyOf(&f, 4));
    } else if (a.name() == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      scope.values[out] = scope.graph->addConstant(out, {DType::F32, {static_cast<int64_t>(v.size())}},
                                         Buffer::copyOf(v.data(), v.size() * 4));
    } else if (a.name() == "value_int") {
      int64_t i = a.i();
      scope.values[out] = scope.graph->addConstant(out, {DType::I64, {}}, Buffer::copyOf(&i, 8));
    } else if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      scope.values[out] = scope.graph->addConstant(out, {DType::I64, {static_cast<int64_t>(v.size())}},
                                         Buffer::copyOf(v.data(), v.size() * 8));
    } else {
      return Status::error("attribute '" + a.name() + "' is not supported (string and sparse "
                                                      "constants have no ODLA element type)");
    }
    return Status::ok();
  }

  // A name as seen from `scope`; an outer value is captured (see Scope). nullptr if unknown.
  Value *lookup(Scope &scope, const std::string &name) {
    auto it = scope.values.find(name);
    if (it != scope.values.end())
      return it->second;
    if (!scope.outer)
      return nullptr;
    Value *outer = lookup(*scope.outer, name);
    if (!outer)
      return nullptr;
    Value *local;
    if (outer->isConstant()) {
      local = scope.graph->addConstant(name, outer->type(), outer->data());
      scope.constantOrigin[local] = outer;
    } else {
      local = scope.graph->addInput(name, outer->type());
      scope.captures.push_back(outer);
    }
    scope.values[name] = local;
    return local;
  }

  bool isPoisoned(const Scope &scope, const std::string &name) const {
    if (scope.poisoned.count(name))
      return true;
    return scope.outer && !scope.values.count(name) && isPoisoned(*scope.outer, name);
  }

  static const char *nonTensorKind(const onnx::TypeProto &t) {
    if (t.has_sequence_type())
      return "a sequence";
    if (t.has_optional_type())
      return "an optional";
    if (t.has_map_type())
      return "a map";
    return nullptr;
  }

  Expected<ImportedBody> importBody(const onnx::GraphProto &gp,
                                    const std::vector<TensorType> &inputTypes) override {
    std::string name = gp.name().empty() ? "body" : gp.name();
    std::string where = where_ + "body '" + name + "': ";
    if (static_cast<size_t>(gp.input_size()) != inputTypes.size())
      return Status::error("body '" + name + "' declares " + std::to_string(gp.input_size()) +
                           " inputs; the op binds " + std::to_string(inputTypes.size()));
    auto body = std::make_unique<Graph>(name);
    Scope scope;
    scope.graph = body.get();
    scope.outer = scope_;
    size_t errorsBefore = errors_.messages().size();
    for (int i = 0; i < gp.input_size(); ++i) {
      const onnx::ValueInfoProto &vi = gp.input(i);
      if (const char *kind = nonTensorKind(vi.type()))
        return Status::error("body '" + name + "' input '" + vi.name() + "' is " + kind +
                             "; odlac represents tensors only (no sequences, maps or optionals)");
      scope.values[vi.name()] = body->addInput(vi.name(), inputTypes[i]);
    }
    for (const onnx::TensorProto &t : gp.initializer()) {
      auto decoded = decodeTensor(t, modelDir_);
      if (!decoded)
        error(where + "initializer " + decoded.status().message());
      else
        scope.values[t.name()] = body->addConstant(t.name(), decoded->type, decoded->data);
    }
    Scope *saved = scope_;
    std::string savedWhere = where_;
    scope_ = &scope;
    where_ = where;
    importNodes(gp, scope);
    scope_ = saved;
    where_ = savedWhere;
    for (const onnx::ValueInfoProto &vi : gp.output()) {
      if (const char *kind = nonTensorKind(vi.type())) {
        error(where + "output '" + vi.name() + "' is " + kind +
              "; odlac represents tensors only (no sequences, maps or optionals)");
        continue;
      }
      Value *v = lookup(scope, vi.name());
      if (!v) {
        if (!isPoisoned(scope, vi.name()))
          error(where + "output '" + vi.name() + "' is not produced by any node");
        continue;
      }
      body->addOutput(v);
    }
    if (errors_.messages().size() != errorsBefore)
      return Status::error("body '" + name + "' cannot be imported (see the errors above)");
    // Hoist the body's constants: each becomes a capture of the enclosing graph's constant.
    std::vector<Value *> constants = body->constants();
    for (Value *c : constants) {
      if (c->uses().empty() && !body->isGraphOutput(c))
        continue;
      auto origin = scope.constantOrigin.find(c);
      Value *outer = origin != scope.constantOrigin.end()
                         ? origin->second
                         : scope_->graph->addConstant(c->name(), c->type(), c->data());
      Value *in = body->addInput(c->name() + "/in", c->type());
      scope.captures.push_back(outer);
      for (size_t i = 0; i < body->outputs().size(); ++i)
        if (body->outputs()[i] == c)
          body->setOutput(static_cast<int>(i), in);
      std::vector<Use> uses = c->uses();
      for (const Use &u : uses)
        u.node->setInput(u.operand, in);
    }
    body->eraseUnusedConstants();
    return ImportedBody{std::move(body), std::move(scope.captures)};
  }

  void importNodes(const onnx::GraphProto &graph, Scope &scope) {
    int index = 0;
    for (const onnx::NodeProto &n : graph.node()) {
      std::string label = where_ + nodeLabel(n, index++, opset_);
      auto poison = [&] {
        for (const std::string &o : n.output())
          scope.poisoned.insert(o);
      };
      bool custom = opts_.customOpDomains.count(n.domain()) != 0;
      if (!custom && !n.domain().empty() && n.domain() != "ai.onnx") {
        error(label + ": unsupported: domain '" + n.domain() + "' has no import rules");
        poison();
        continue;
      }
      int earliest = -1;
      const ImportRule *rule = n.op_type() == "Constant" || custom
                                   ? nullptr
                                   : findRule(n.op_type(), opset_, &earliest);
      if (!custom && n.op_type() != "Constant" && !rule) {
        error(label + ": unsupported: op " + n.op_type() +
              (earliest > 0 ? " before opset " + std::to_string(earliest) : std::string()) +
              "; odlac has no import rule for it");
        poison();
        continue;
      }
      // Operands; a node fed by a failed node is skipped silently (its cause is reported).
      std::vector<Value *> inputs;
      bool blocked = false;
      for (const std::string &in : n.input()) {
        if (in.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        Value *v = lookup(scope, in);
        if (!v) {
          if (!isPoisoned(scope, in))
            error(label + ": input '" + in + "' is not produced by any earlier node, "
                                             "initializer or graph input");
          blocked = true;
          continue;
        }
        inputs.push_back(v);
      }
      if (blocked) {
        poison();
        continue;
      }
      Status s;
      if (n.op_type() == "Constant" && !custom) {
        s = importConstant(n, scope);
      } else {
        ImportCtx ctx(*scope.graph, n, opset_, inputs, modelDir_, declared_);
        ctx.setBodyImporter(this);
        s = custom ? importCustomOp(ctx) : rule->custom ? rule->custom(ctx) : importDirect(ctx, *rule);
        for (int i = 0; s.isOk() && i < n.output_size(); ++i) {
          if (n.output(i).empty())
            continue;
          if (!ctx.outputs()[i])
            s = Status::error("output " + std::to_string(i) + " ('" + n.output(i) +
                              "') is not supported");
          else
            scope.values[n.output(i)] = ctx.outputs()[i];
        }
      }
      if (!s.isOk()) {
        for (const std::string &m : s.messages())
          error(label + ": " + m);
        poison();
      }
    }
  }

  void importOutputs() {
    std::set<const Value *> claimed;
    for (const onnx::ValueInfoProto &vi : model_.graph().output()) {
      auto it = root_.values.find(vi.name());
      if (it == root_.values.end()) {
        if (!root_.poisoned.count(vi.name()))
          error("graph output '" + vi.name() + "' is not produced by any node");
        continue;
      }
      Value *v = it->second;
      // Every output gets its own node result, so that it can be bound to its own buffer.
      if (!v->producer() || claimed.count(v)) {
        Value *copy = graph_->addValue(vi.name() + "/copy", v->type());
        graph_->addNode(opNamed("Identity"), vi.name(), {v}, {copy});
        v = copy;
      }
      claimed.insert(v);
      if (vi.type().has_tensor_type()) {
        const auto &tt = vi.type().tensor_type();
        auto dtype = dtypeFromOnnx(tt.elem_type());
        if (tt.elem_type() != 0 && dtype && *dtype != v->dtype())
          error("graph output '" + vi.name() + "' is declared " + dtypeName(*dtype) +
                " but computes " + dtypeName(v->dtype()));
        if (tt.has_shape() && tt.shape().dim_size() > 0) {
          bool fits = tt.shape().dim_size() == v->type().rank();
          for (int i = 0; fits && i < tt.shape().dim_size(); ++i)
            fits = !tt.shape().dim(i).has_dim_value() || tt.shape().dim(i).dim_value() == v->dims()[i];
          if (!fits)
            error("graph output '" + vi.name() + "' is declared with a shape that differs from "
                  "the inferred " + toString(v->type()));
        }
      }
      graph_->addOutput(v);
    }
  }

  const onnx::ModelProto &model_;
  std::shared_ptr<const void> keepAlive_;
  const ImportOptions &opts_;
  std::string modelDir_;
  std::unique_ptr<Graph> graph_;
  int64_t opset_ = 0;
  Scope root_;
  Scope *scope_ = &root_; // the graph being imported
  std::string where_; // prefixes messages about nodes inside bodies ("Loop 'x' body: ")
  ImportCtx::DeclaredTypes declared_;
  Status errors_;
};

// Runs ONNX's checker where libonnx knows the model's opset.
Status checkModel(const onnx::ModelProto &m, const std::string &path) {
  int64_t known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  for (const auto &os : m.opset_import())
    if ((os.domain().empty() || os.domain() == "ai.onnx") && os.version() > known)
      return Status::ok();
  try {
    // The path form re-reads the file so that the checker resolves external data beside the
    // model; a model without external data is checked as already parsed.
    if (usesExternalData(m))
      onnx::checker::check_model(path);
    else
      onnx::checker::check_model(m);
  } catch (const std::exception &e) {
    return Status::error(path + ": the ONNX checker rejects the model: " + e.what());
  }
  return Status::ok();
}

} // namespace

// ONNX opsets before 7 used legacy broadcasting and other semantics that later opsets
// dropped; such models are upgraded with libonnx's version converter (ONNX Runtime refuses
// them, odlac does not).
constexpr int64_t kOldestImportedOpset = 7;

Status upgradeOldOpset(onnx::ModelProto &m, const std::string &path) {
  for (const auto &os : m.opset_import()) {
    if (!(os.domain().empty() || os.domain() == "ai.onnx") || os.version() >= kOldestImportedOpset)
      continue;
    try {
      // The converter's adapters need the shapes that ONNX's shape inference provides.
      onnx::shape_inference::InferShapes(m);
      m = onnx::version_conversion::ConvertVersion(m, kOldestImportedOpset);
    } catch (const std::exception &e) {
      std::string why = e.what();
      return Status::error(path + ": cannot upgrade the model from opset " +
                           std::to_string(os.version()) + " to " +
                           std::to_string(kOldestImportedOpset) + " with libonnx's version "
                           "converter: " + why.substr(why.find_last_of(':') + 1));
    }
    return Status::ok();
  }
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path, const ImportOptions &opts) {
  auto model = parseModel(path);
  if (!model)
    return model.takeStatus();
  std::set<std::string> external;
  if (Status s = checkExternalData(*model, dirOf(path), &external))
    return s;
  if (Status s = checkModel(*model, path))
    return s;
  if (Status s = upgradeOldOpset(*model, path))
    return s;
  // The graph's constants reference the weights inside the parsed model, not copies of them.
  auto owned = std::make_shared<const onnx::ModelProto>(std::move(*model));
  auto graph = Importer(*owned, path, opts, owned).run();
  if (graph)
    (*graph)->info().externalDataFiles.assign(external.begin(), external.end());
  return graph;
}

Status parseInputShape(const std::string &spec, ImportOptions &opts) {
  size_t colon = spec.rfind(':');
  std::string bad = "--input-shape '" + spec + "': expected name:d0xd1x... (e.g. input:1x3x224x224)";
  if (colon == std::string::npos || colon == 0)
    return Status::error(bad);
  Dims dims;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t x = rest.find('x', pos);
    std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 12)
      return Status::error(bad);
    dims.push_back(std::stoll(part));
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  opts.inputShapes[spec.substr(0, colon)] = dims;
  return Status::ok();
}

} // namespace odlac
