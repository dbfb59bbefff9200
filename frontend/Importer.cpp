// Loads an ONNX model, validates it, and imports its main graph into IR, reporting every
// problem in one run.
#include "Import.h"

#include "Rules.h"
#include "Tensor.h"
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

class Importer {
public:
  Importer(const onnx::ModelProto &m, const std::string &path, const ImportOptions &opts)
      : model_(m), opts_(opts), modelDir_(dirOf(path)) {
    std::string name = m.graph().name().empty() ? "model" : m.graph().name();
    graph_ = std::make_unique<Graph>(name);
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
    importNodes();
    importOutputs();
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
    onnx::ModelProto m = model_;
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
    for (const auto &vi : m.graph().value_info())
      record(vi);
    for (const auto &vi : m.graph().output())
      record(vi);
  }

  void importInitializers() {
    for (const onnx::TensorProto &t : model_.graph().initializer()) {
      auto decoded = decodeTensor(t, modelDir_);
      if (!decoded) {
        error("initializer " + decoded.status().message());
        poisoned_.insert(t.name());
        continue;
      }
      values_[t.name()] = graph_->addConstant(t.name(), decoded->type, decoded->data);
    }
  }

  void importInputs() {
    std::set<std::string> seen;
    for (const onnx::ValueInfoProto &vi : model_.graph().input()) {
      if (values_.count(vi.name()) || poisoned_.count(vi.name()))
        continue; // an initializer listed as input (IR version < 4): a constant
      seen.insert(vi.name());
      std::string what = "graph input '" + vi.name() + "'";
      if (!vi.type().has_tensor_type()) {
        error(what + " is not a tensor (sequences, maps and optionals are not supported)");
        poisoned_.insert(vi.name());
        continue;
      }
      const auto &tt = vi.type().tensor_type();
      auto dtype = dtypeFromOnnx(tt.elem_type());
      if (!dtype) {
        error(what + ": element type " + onnxTypeName(tt.elem_type()) + " is not supported");
        poisoned_.insert(vi.name());
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
      auto pinned = opts_.inputShapes.find(vi.name());
      if (pinned != opts_.inputShapes.end()) {
        const Dims &p = pinned->second;
        bool fits = !tt.has_shape() || p.size() == dims.size();
        for (size_t i = 0; fits && tt.has_shape() && i < dims.size(); ++i)
          fits = dims[i] < 0 || dims[i] == p[i];
        if (!fits) {
          error(what + ": --input-shape " + dimsToString(p) + " does not fit the model's shape " +
                dimsToString(dims) + " (-1 marks a symbolic dim)");
          poisoned_.insert(vi.name());
          continue;
        }
        dims = p;
      } else if (!symbolic.empty()) {
        error(what + ": " + symbolic + "; pin it with --input-shape " + vi.name() + ":" +
              "<d0>x<d1>x...");
        poisoned_.insert(vi.name());
        continue;
      }
      values_[vi.name()] = graph_->addInput(vi.name(), TensorType{*dtype, dims});
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
  Status importConstant(const onnx::NodeProto &n) {
    if (n.attribute_size() != 1)
      return Status::error("needs exactly one value attribute");
    const onnx::AttributeProto &a = n.attribute(0);
    const std::string &out = n.output(0);
    if (a.name() == "value") {
      auto decoded = decodeTensor(a.t(), modelDir_);
      if (!decoded)
        return decoded.takeStatus();
      values_[out] = graph_->addConstant(out, decoded->type, decoded->data);
    } else if (a.name() == "value_float") {
      float f = a.f();
      values_[out] = graph_->addConstant(out, {DType::F32, {}}, Buffer::copyOf(&f, 4));
    } else if (a.name() == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      values_[out] = graph_->addConstant(out, {DType::F32, {static_cast<int64_t>(v.size())}},
                                         Buffer::copyOf(v.data(), v.size() * 4));
    } else if (a.name() == "value_int") {
      int64_t i = a.i();
      values_[out] = graph_->addConstant(out, {DType::I64, {}}, Buffer::copyOf(&i, 8));
    } else if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      values_[out] = graph_->addConstant(out, {DType::I64, {static_cast<int64_t>(v.size())}},
                                         Buffer::copyOf(v.data(), v.size() * 8));
    } else {
      return Status::error("attribute '" + a.name() + "' is not supported (string and sparse "
                                                      "constants have no ODLA element type)");
    }
    return Status::ok();
  }

  void importNodes() {
    int index = 0;
    for (const onnx::NodeProto &n : model_.graph().node()) {
      std::string label = nodeLabel(n, index++, opset_);
      auto poison = [&] {
        for (const std::string &o : n.output())
          poisoned_.insert(o);
      };
      if (!n.domain().empty() && n.domain() != "ai.onnx") {
        error(label + ": unsupported: domain '" + n.domain() + "' has no import rules");
        poison();
        continue;
      }
      int earliest = -1;
      const ImportRule *rule = n.op_type() == "Constant" ? nullptr
                                                         : findRule(n.op_type(), opset_, &earliest);
      if (n.op_type() != "Constant" && !rule) {
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
        auto it = values_.find(in);
        if (it == values_.end()) {
          if (!poisoned_.count(in))
            error(label + ": input '" + in + "' is not produced by any earlier node, "
                                             "initializer or graph input");
          blocked = true;
          continue;
        }
        inputs.push_back(it->second);
      }
      if (blocked) {
        poison();
        continue;
      }
      Status s;
      if (n.op_type() == "Constant") {
        s = importConstant(n);
      } else {
        ImportCtx ctx(*graph_, n, opset_, inputs, modelDir_, declared_);
        s = rule->custom ? rule->custom(ctx) : importDirect(ctx, *rule);
        for (int i = 0; s.isOk() && i < n.output_size(); ++i) {
          if (n.output(i).empty())
            continue;
          if (!ctx.outputs()[i])
            s = Status::error("output " + std::to_string(i) + " ('" + n.output(i) +
                              "') is not supported");
          else
            values_[n.output(i)] = ctx.outputs()[i];
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
      auto it = values_.find(vi.name());
      if (it == values_.end()) {
        if (!poisoned_.count(vi.name()))
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
  const ImportOptions &opts_;
  std::string modelDir_;
  std::unique_ptr<Graph> graph_;
  int64_t opset_ = 0;
  std::map<std::string, Value *> values_;
  std::set<std::string> poisoned_;
  ImportCtx::DeclaredTypes declared_;
  Status errors_;
};

// Runs ONNX's checker where libonnx knows the model's opset.
Status checkModel(const onnx::ModelProto &m, const std::string &path) {
  int64_t known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  for (const auto &os : m.opset_import())
    if ((os.domain().empty() || os.domain() == "ai.onnx") && os.version() > known)
      return Status::ok();
  (void)m;
  try {
    // The path form lets the checker resolve external data beside the model.
    onnx::checker::check_model(path);
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
  if (Status s = checkExternalData(*model, dirOf(path)))
    return s;
  if (Status s = checkModel(*model, path))
    return s;
  if (Status s = upgradeOldOpset(*model, path))
    return s;
  return Importer(*model, path, opts).run();
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
