// Loads an ONNX model, validates it, and imports its main graph into IR, reporting every
// problem in one run.
#include "Import.h"

#include "Functions.h"
#include "LibOnnx.h"
#include "Rules.h"
#include "Schema.h"
#include "Structure.h"
#include "Tensor.h"
#include "evaluate/Evaluate.h"
#include "ir/Limits.h"
#include "ops/Ops.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cctype>
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

// Parses a whole serialized ModelProto from `raw` (a file's or a buffer's bytes).
Expected<onnx::ModelProto> parseModel(google::protobuf::io::ZeroCopyInputStream &raw,
                                      const std::string &path) {
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return Status::error(path + ": not a valid ONNX model (protobuf parse failed)");
  return model;
}

Expected<onnx::ModelProto> parseModelFile(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return Status::error(path + ": cannot open the model file");
  google::protobuf::io::FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);
  return parseModel(raw, path);
}

// A declared tensor type as text, like toString(TensorType): "f32[N,3]" (a symbolic dim by
// name, "?" when unnamed or when the element type is not given).
std::string declaredTypeText(const onnx::TypeProto_Tensor &tt) {
  auto dtype = dtypeFromOnnx(tt.elem_type());
  std::string text = tt.elem_type() == 0 ? "?"
                     : dtype             ? dtypeName(*dtype)
                                         : onnxTypeName(tt.elem_type());
  if (!tt.has_shape())
    return text + " of any shape";
  text += "[";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    text += (i ? "," : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                              : d.has_dim_param() ? d.dim_param()
                                                  : std::string("?"));
  }
  return text + "]";
}

// The names visible while importing one graph: the main graph, or a body nested in it.
// ONNX's scoping: a body sees its own names first, then its enclosing graphs' names. An
// outer value a body reads becomes one of its inputs (a capture); an outer constant becomes
// a body constant first (rules can read its data), which is hoisted out again when the body
// is complete, since IR bodies hold no constants.
struct Scope {
  Graph *graph = nullptr;
  Scope *outer = nullptr;
  std::map<std::string, Value *> values;
  std::map<std::string, Aggregate> aggregates; // sequences and optionals (Aggregate.h)
  std::set<std::string> poisoned;
  std::vector<Value *> captures;             // outer values bound to the capture inputs
  std::map<Value *, Value *> constantOrigin; // body constant -> the outer value it copies
  // An inlined body (ImportCtx::inlineBody) imports into its enclosing graph: outer values
  // are used as they are, never captured.
  bool inlined() const { return outer && outer->graph == graph; }
};

// The name of element i of a sequence graph input or output `name`, as the generated code's
// API has it (docs/cli.md, --sequence-length).
std::string elementName(const std::string &name, size_t i) {
  return name + "." + std::to_string(i);
}

// The most elements of an outer value computed from constants that a body sees as a constant
// (Importer::compileTimeData): shapes, axes and indices are this small; larger tensors would
// be computed twice at compile time for nothing, since no rule needs their data.
constexpr int64_t kMaxFoldedCaptureElements = 64;

const char *nonTensorKind(const onnx::TypeProto &t) {
  if (t.has_sequence_type())
    return "a sequence";
  if (t.has_optional_type())
    return "an optional";
  if (t.has_map_type())
    return "a map";
  if (t.has_sparse_tensor_type())
    return "a sparse tensor";
  return nullptr;
}

class Importer : public BodyImporter {
public:
  // The importer owns `m`: initializers take its raw data (each constant then owns its bytes
  // alone, and they are freed when a pass replaces the constant).
  Importer(onnx::ModelProto &m, const std::string &path, const ImportOptions &opts)
      : model_(m), opts_(opts), modelDir_(dirOf(path)) {
    std::string name = m.graph().name().empty() ? "model" : m.graph().name();
    graph_ = std::make_unique<Graph>(name);
    root_.graph = graph_.get();
    ModelInfo &info = graph_->info();
    info.fileName = baseName(path);
    info.producerName = m.producer_name();
    info.producerVersion = m.producer_version();
    info.irVersion = m.ir_version();
  }

  // The graph, with its warnings and notes in info().diagnostics; or every error, followed
  // by those.
  Expected<std::unique_ptr<Graph>> run() {
    readOpsets();
    recordDeclaredTypes();
    importInitializers();
    importInputs();
    importNodes(model_.graph(), root_);
    importOutputs();
    // After every node verified (a failed node's results are already reported): the size
    // limit of the target on every value the rules made.
    if (errors_.isOk())
      errors_.append(checkSizeLimits(*graph_, opts_.limits));
    if (!errors_.isOk()) {
      for (const std::string &d : diagnostics_)
        errors_.append(Status::error(d));
      return errors_;
    }
    graph_->info().diagnostics = diagnostics_;
    return std::move(graph_);
  }

private:
  void error(const std::string &message) { errors_.append(Status::error(message)); }

  // checkVersions has made sure that each domain is there once.
  void readOpsets() {
    for (const auto &os : model_.opset_import())
      graph_->info().opsets[canonicalDomain(os.domain())] = os.version();
  }

  // The model's opset of `domain`; -1 when it imports none.
  int64_t opsetOf(const std::string &domain) const {
    auto it = graph_->info().opsets.find(domain);
    return it == graph_->info().opsets.end() ? -1 : it->second;
  }

  // Records every fully static type the model declares for a value (value_info and graph
  // outputs, bodies included). Rules use these for ops whose result shape depends on data
  // known only at run time. They are the model's own facts, not libonnx's shape inference:
  // importing folds what ONNX's data propagation would compute (Shape chains become constants
  // once the inputs are pinned), and over the conformance suite and every test here no rule
  // used a fact that inference added to the model's own (measured when this replaced it);
  // inference also crashed on crafted models, and it knows no opset after libonnx's (17).
  void recordDeclaredTypes() {
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
      declared_.types[vi.name()] = t;
    };
    // Bodies too (If, Loop, Scan): checkStructure has made node outputs unique across scopes.
    std::function<void(const onnx::GraphProto &)> walk = [&](const onnx::GraphProto &g) {
      for (const auto &vi : g.value_info())
        record(vi);
      for (const auto &vi : g.output())
        record(vi);
      for (const onnx::NodeProto &n : g.node())
        for (const onnx::AttributeProto &a : n.attribute()) {
          if (a.has_g())
            walk(a.g());
          for (const onnx::GraphProto &body : a.graphs())
            walk(body);
        }
    };
    walk(model_.graph());
    pinShapes(model_.graph());
  }

  // Whether ONNX node `n`'s output 0 always has input 0's shape: its row is an elementwise IR
  // op or says so (ImportRule::keepsShape).
  bool keepsShape(const onnx::NodeProto &n) const {
    const ImportRule *rule = findRule(n.domain(), n.op_type(), opsetOf(n.domain()));
    if (!rule || n.input_size() < 1 || n.input(0).empty() || n.output_size() < 1)
      return false;
    const OpDef *op = rule->irOp ? findOp(rule->irOp) : nullptr;
    return rule->keepsShape || (op && op->fusion == FusionClass::Elementwise);
  }

  // Pins the dims of values whose only route to a declared shape is a chain of keepsShape
  // nodes, walking each graph backwards (nodes are in topological order: checkStructure): the
  // input of such a node has the shape its output is declared or pinned with.
  void pinShapes(const onnx::GraphProto &g) {
    for (int i = g.node_size() - 1; i >= 0; --i) {
      const onnx::NodeProto &n = g.node(i);
      for (const onnx::AttributeProto &a : n.attribute()) {
        if (a.has_g())
          pinShapes(a.g());
        for (const onnx::GraphProto &body : a.graphs())
          pinShapes(body);
      }
      if (!keepsShape(n) || declared_.types.count(n.input(0)) || declared_.pinned.count(n.input(0)))
        continue;
      if (auto t = declared_.types.find(n.output(0)); t != declared_.types.end())
        declared_.pinned[n.input(0)] = t->second.dims;
      else if (auto d = declared_.pinned.find(n.output(0)); d != declared_.pinned.end())
        declared_.pinned[n.input(0)] = d->second;
    }
  }

  void importInitializers() {
    for (onnx::TensorProto &t : *model_.mutable_graph()->mutable_initializer()) {
      auto decoded = takeTensor(t, modelDir_);
      if (!decoded) {
        error("initializer " + decoded.status().message());
        root_.poisoned.insert(t.name());
        continue;
      }
      root_.values[t.name()] = graph_->addConstant(t.name(), decoded->type, decoded->data);
    }
  }

  // A graph input with an initializer of the same name: in ONNX the initializer is the
  // input's default value, which a runtime may let the caller override (and IR versions
  // before 4 must list every initializer among the inputs this way). odlac compiles ahead of
  // time with the weights in the code, so such an input is a constant, not an input of the
  // generated code; the declared type must agree with the initializer's.
  void importDefaultedInput(const onnx::ValueInfoProto &vi, const Value *init,
                            std::vector<std::string> &defaulted) {
    std::string what = "graph input '" + vi.name() + "'";
    const onnx::TypeProto &t = vi.type();
    std::string mismatch;
    if (const char *kind = nonTensorKind(t)) {
      mismatch = kind;
    } else if (t.has_tensor_type()) {
      const auto &tt = t.tensor_type();
      auto dtype = dtypeFromOnnx(tt.elem_type());
      bool fits = tt.elem_type() == 0 || (dtype && *dtype == init->dtype());
      if (tt.has_shape()) {
        fits = fits && tt.shape().dim_size() == init->type().rank();
        for (int i = 0; fits && i < tt.shape().dim_size(); ++i)
          fits = !tt.shape().dim(i).has_dim_value() ||
                 tt.shape().dim(i).dim_value() == init->dims()[static_cast<size_t>(i)];
      }
      if (!fits)
        mismatch = declaredTypeText(tt);
    }
    if (!mismatch.empty()) {
      error(what + " is declared " + mismatch + ", but the initializer of the same name is " +
            toString(init->type()));
      return;
    }
    defaulted.push_back(vi.name());
  }

  // The notes for inputs that are constants (importDefaultedInput).
  void noteDefaultedInputs(const std::vector<std::string> &defaulted) {
    if (defaulted.empty())
      return;
    bool one = defaulted.size() == 1;
    if (model_.ir_version() < 4) {
      diagnostics_.push_back(
          "note: the model (IR version " + std::to_string(model_.ir_version()) + ") lists its " +
          (one ? std::string("initializer") : std::to_string(defaulted.size()) + " initializers") +
          " among its graph inputs, as IR versions before 4 must; odlac compiles " +
          (one ? "it as a constant" : "them as constants"));
      return;
    }
    constexpr size_t kNamed = 5;
    std::string names;
    for (size_t i = 0; i < defaulted.size() && i < kNamed; ++i)
      names += (i ? ", '" : "'") + defaulted[i] + "'";
    if (defaulted.size() > kNamed)
      names += " and " + std::to_string(defaulted.size() - kNamed) + " more";
    diagnostics_.push_back(
        "warning: graph input" + std::string(one ? " " : "s ") + names +
        (one ? " has an initializer" : " have initializers") +
        " of the same name, in ONNX a default value that the caller may "
        "override; odlac compiles " +
        (one ? "it as a constant, not an input" : "them as constants, not inputs") +
        " of the generated code");
  }

  // A graph input that is a tensor (a whole input, or one element of a sequence or optional
  // input: `name` is then the element's, see elementName); nullptr when it was refused
  // (reported).
  Value *importTensorInput(const std::string &name, const onnx::TypeProto &type) {
    std::string what = "graph input '" + name + "'";
    if (!type.has_tensor_type()) {
      error(what + (type.value_case() == onnx::TypeProto::VALUE_NOT_SET
                        ? std::string(" has no type")
                        : std::string(" is ") +
                              (nonTensorKind(type) ? nonTensorKind(type) : "not a tensor") +
                              " (graph inputs are tensors, sequences of tensors and optionals "
                              "of either)"));
      return nullptr;
    }
    const auto &tt = type.tensor_type();
    auto dtype = dtypeFromOnnx(tt.elem_type());
    if (!dtype) {
      error(what + ": element type " + onnxTypeName(tt.elem_type()) + " is not supported");
      return nullptr;
    }
    Dims dims;
    std::vector<std::string> params; // each dim's dim_param ("" when it has none)
    std::vector<bool> open;          // symbolic: resolved by --dim below
    if (!tt.has_shape() && (opts_.batchSize > 0 || !opts_.inputShapes.count(name))) {
      error(what + ": its rank is unknown; pin its shape with --input-shape " + name +
            ":<d0>x<d1>x...");
      return nullptr;
    }
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto &d = tt.shape().dim(i);
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      params.push_back(d.has_dim_value() ? std::string() : d.dim_param());
      open.push_back(!d.has_dim_value());
    }
    if (opts_.batchSize > 0) { // --dynamic-batch: the symbolic leading dim is the batch
      if (dims.empty() || dims[0] >= 0 || opts_.inputShapes.count(name)) {
        error(what + ": --dynamic-batch needs a symbolic leading dim (the batch), not " +
              (dims.empty()                    ? std::string("rank 0")
               : opts_.inputShapes.count(name) ? "one pinned by --input-shape"
                                               : dimsToString(dims)));
        return nullptr;
      }
      dims[0] = opts_.batchSize;
      open[0] = false;
    }
    auto pinned = opts_.inputShapes.find(name);
    if (pinned != opts_.inputShapes.end()) {
      const InputShape &p = pinned->second;
      if (tt.has_shape() && p.dims.size() != dims.size()) {
        error(what + ": --input-shape gives " + std::to_string(p.dims.size()) +
              " dims, the model's shape " + dimsToString(dims) + " has " +
              std::to_string(dims.size()) + " (-1 marks a symbolic dim)");
        return nullptr;
      }
      if (!tt.has_shape()) { // an unknown rank: the pinned shape says it
        dims.assign(p.dims.size(), -1);
        params.assign(p.dims.size(), std::string());
        open.assign(p.dims.size(), true);
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        std::string dim = "dim " + std::to_string(i);
        if (!p.names[i].empty() || p.dims[i] < 0) {
          if (!open[i]) {
            error(what + ": --input-shape makes " + dim + " symbolic ('" +
                  (p.names[i].empty() ? "?" : p.names[i]) + "'), but the model fixes it at " +
                  std::to_string(dims[i]));
            return nullptr;
          }
          if (!p.names[i].empty())
            params[i] = p.names[i];
          else if (params[i].empty()) {
            error(what + ": --input-shape keeps " + dim +
                  " symbolic ('?'), but the model gives it no name; name it, as in " + name +
                  ":Tx..., and give its range with --dim T=MAX");
            return nullptr;
          }
          continue; // resolved by --dim below
        }
        if (!open[i] && dims[i] != p.dims[i]) {
          error(what + ": --input-shape " + dimsToString(p.dims) +
                " does not fit the model's shape " + dimsToString(dims) +
                " (-1 marks a symbolic dim)");
          return nullptr;
        }
        dims[i] = p.dims[i];
        params[i].clear();
        open[i] = false;
      }
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!open[i])
        continue;
      auto bound = params[i].empty() ? opts_.dimValues.end() : opts_.dimValues.find(params[i]);
      if (bound == opts_.dimValues.end()) {
        std::string dim = "dim " + std::to_string(i) + " is symbolic";
        std::string range =
            opts_.batchSize > 0 ? std::string()
            : params[i].empty()
                ? ", or name it (" + name + ":Tx...) and give its range with --dim T=MAX"
                : ", or give its range with --dim " + params[i] + "=MAX";
        error(what + ": " + dim + (params[i].empty() ? std::string() : " ('" + params[i] + "')") +
              "; pin it with --input-shape " + name + ":<d0>x<d1>x..." + range);
        return nullptr;
      }
      dims[i] = bound->second;
      graph_->info().symbolicDims.insert(params[i]);
    }
    TensorType t{*dtype, dims};
    std::string tooLarge = shapeProblem(t);
    if (tooLarge.empty())
      tooLarge = sizeLimitProblem(t, opts_.limits);
    if (!tooLarge.empty()) {
      error(what + " " + toString(t) + ": " + tooLarge);
      return nullptr;
    }
    return graph_->addInput(name, t);
  }

  // A graph input of any kind odlac takes: a tensor; a sequence of tensors, flattened into
  // --sequence-length inputs named elementName(name, i); an optional of either, imported as
  // what it holds unless --optional-absent names it. Absent (Operand::absent) when refused
  // (reported).
  Operand importInputValue(const std::string &name, const onnx::TypeProto &type,
                           std::set<std::string> &seen, bool inOptional) {
    std::string what = "graph input '" + name + "'";
    Operand v;
    if (type.has_optional_type() && !inOptional) {
      const onnx::TypeProto &inner = type.optional_type().elem_type();
      if (opts_.absentOptionals.count(name)) {
        v.aggregate = Aggregate::optional(false, inner.has_sequence_type());
        return v;
      }
      Operand held = importInputValue(name, inner, seen, true);
      if (!held.absent())
        v.aggregate = Aggregate::optional(true, held.aggregate.has_value(),
                                          held.aggregate ? held.aggregate->elements
                                                         : std::vector<Value *>{held.tensor});
      return v;
    }
    if (type.has_sequence_type()) {
      const onnx::TypeProto &elem = type.sequence_type().elem_type();
      if (!elem.has_tensor_type()) {
        error(what + " is a sequence of " + (nonTensorKind(elem) ? nonTensorKind(elem) : "?") +
              " values; odlac takes sequences of tensors only");
        return v;
      }
      auto length = opts_.sequenceLengths.find(name);
      if (length == opts_.sequenceLengths.end()) {
        error(what +
              " is a sequence, whose length the model's type does not give: odlac needs "
              "it at compile time; give it with --sequence-length " +
              name + "=N (its elements become the inputs " + elementName(name, 0) + ", " +
              elementName(name, 1) + "... of the generated code)");
        return v;
      }
      std::vector<Value *> elements;
      bool refused = false;
      for (int64_t i = 0; i < length->second; ++i) {
        std::string element = elementName(name, static_cast<size_t>(i));
        seen.insert(element);
        Value *e = importTensorInput(element, elem);
        refused |= !e;
        elements.push_back(e);
      }
      if (!refused)
        v.aggregate = Aggregate::sequence(elements, dtypeFromOnnx(elem.tensor_type().elem_type()));
      return v;
    }
    seen.insert(name);
    v.tensor = importTensorInput(name, type);
    return v;
  }

  // --sequence-length and --optional-absent name inputs of those kinds.
  void checkStructureOptions() {
    auto kindOf = [&](const std::string &name) -> const onnx::TypeProto * {
      for (const onnx::ValueInfoProto &vi : model_.graph().input())
        if (vi.name() == name)
          return &vi.type();
      return nullptr;
    };
    for (const auto &[name, length] : opts_.sequenceLengths) {
      const onnx::TypeProto *t = kindOf(name);
      bool sequence =
          t && (t->has_sequence_type() ||
                (t->has_optional_type() && t->optional_type().elem_type().has_sequence_type()));
      if (!sequence)
        error("--sequence-length names '" + name +
              "', which is not a graph input of a sequence "
              "type (or an optional sequence)");
    }
    for (const std::string &name : opts_.absentOptionals) {
      const onnx::TypeProto *t = kindOf(name);
      if (!t || !t->has_optional_type())
        error("--optional-absent names '" + name +
              "', which is not a graph input of an optional "
              "type");
    }
  }

  void importInputs() {
    std::set<std::string> seen;
    std::vector<std::string> defaulted;
    for (const onnx::ValueInfoProto &vi : model_.graph().input()) {
      if (root_.poisoned.count(vi.name()))
        continue; // an initializer that failed to decode (reported)
      if (auto init = root_.values.find(vi.name()); init != root_.values.end()) {
        importDefaultedInput(vi, init->second, defaulted);
        continue;
      }
      Operand v = importInputValue(vi.name(), vi.type(), seen, false);
      if (v.absent())
        root_.poisoned.insert(vi.name());
      else
        bind(root_, vi.name(), v);
    }
    noteDefaultedInputs(defaulted);
    checkStructureOptions();
    for (const auto &[name, shape] : opts_.inputShapes)
      if (std::find(defaulted.begin(), defaulted.end(), name) != defaulted.end()) {
        error("--input-shape names '" + name + "', which has an initializer of the same name: " +
              "odlac compiles it as a constant, not an input");
      } else if (!seen.count(name)) {
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
      scope.values[out] =
          scope.graph->addConstant(out, {DType::F32, {static_cast<int64_t>(v.size())}},
                                   Buffer::copyOf(v.data(), v.size() * 4));
    } else if (a.name() == "value_int") {
      int64_t i = a.i();
      scope.values[out] = scope.graph->addConstant(out, {DType::I64, {}}, Buffer::copyOf(&i, 8));
    } else if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      scope.values[out] =
          scope.graph->addConstant(out, {DType::I64, {static_cast<int64_t>(v.size())}},
                                   Buffer::copyOf(v.data(), v.size() * 8));
    } else if (a.name() == "value_string" || a.name() == "value_strings") {
      bool one = a.name() == "value_string";
      std::vector<std::string> v =
          one ? std::vector<std::string>{a.s()}
              : std::vector<std::string>(a.strings().begin(), a.strings().end());
      for (const std::string &s : v)
        if (s.find('\0') != std::string::npos)
          return Status::error("attribute '" + a.name() +
                               "' holds a NUL byte (odlac's strings are NUL-terminated)");
      TensorType type{DType::Str, one ? Dims{} : Dims{static_cast<int64_t>(v.size())}};
      scope.values[out] = scope.graph->addConstant(out, type, Buffer::ofStrings(std::move(v)));
    } else {
      return Status::error("attribute '" + a.name() +
                           "' is not supported (sparse constants "
                           "have no ODLA counterpart)");
    }
    return Status::ok();
  }

  // The data a body sees for an outer value at compile time: a constant's, or that of a small
  // integer tensor computed from constants alone (a shape assembled from Shape outputs, an axis,
  // an index), which rules inside the body need as the outer graph's rules would get it
  // (ImportCtx::constData). nullptr otherwise: the value is captured and known at run time.
  static std::shared_ptr<const Buffer> compileTimeData(const Value &outer) {
    if (outer.isConstant())
      return outer.data();
    if (!isInteger(outer.dtype()) || outer.type().numElements() > kMaxFoldedCaptureElements ||
        !isComputableFromConstants(outer))
      return nullptr;
    auto data = evaluateValue(outer, kMaxCompileTimeBytes);
    return data ? *data : nullptr;
  }

  // A name as seen from `scope`; an outer value is captured (see Scope), or seen as a constant
  // when its data is known at compile time (then the hoisting in importBody binds the outer
  // value itself). nullptr if unknown.
  Value *lookup(Scope &scope, const std::string &name) {
    auto it = scope.values.find(name);
    if (it != scope.values.end())
      return it->second;
    if (!scope.outer)
      return nullptr;
    Value *outer = lookup(*scope.outer, name);
    if (!outer || scope.inlined())
      return outer;
    return capture(scope, outer, name);
  }

  // An outer value as seen inside the body of `scope`: a body constant copying it, or a
  // capture input.
  Value *capture(Scope &scope, Value *outer, const std::string &name) {
    Value *local;
    if (std::shared_ptr<const Buffer> data = compileTimeData(*outer)) {
      local = scope.graph->addConstant(name, outer->type(), std::move(data));
      scope.constantOrigin[local] = outer;
    } else {
      local = scope.graph->addInput(name, outer->type());
      scope.captures.push_back(outer);
    }
    scope.values[name] = local;
    return local;
  }

  // A sequence or optional as seen from `scope`; the elements of an outer one are captured
  // one by one. nullptr if `name` is not one.
  const Aggregate *lookupAggregate(Scope &scope, const std::string &name) {
    auto it = scope.aggregates.find(name);
    if (it != scope.aggregates.end())
      return &it->second;
    if (!scope.outer || scope.values.count(name))
      return nullptr;
    const Aggregate *outer = lookupAggregate(*scope.outer, name);
    if (!outer || scope.inlined())
      return outer;
    Aggregate local = *outer;
    for (size_t i = 0; i < local.elements.size(); ++i)
      local.elements[i] = capture(scope, local.elements[i], elementName(name, i));
    return &(scope.aggregates[name] = std::move(local));
  }

  // A name as seen from `scope`, whatever its kind; absent (Operand::absent) if unknown.
  Operand lookupOperand(Scope &scope, const std::string &name) {
    Operand o;
    o.tensor = lookup(scope, name);
    if (!o.tensor)
      if (const Aggregate *a = lookupAggregate(scope, name))
        o.aggregate = *a;
    return o;
  }

  // Binds `name` in `scope` to a tensor or an aggregate.
  static void bind(Scope &scope, const std::string &name, const Operand &v) {
    if (v.aggregate)
      scope.aggregates[name] = *v.aggregate;
    else
      scope.values[name] = v.tensor;
  }

  bool isPoisoned(const Scope &scope, const std::string &name) const {
    if (scope.poisoned.count(name))
      return true;
    return scope.outer && !scope.values.count(name) && isPoisoned(*scope.outer, name);
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
      const char *kind = nonTensorKind(vi.type());
      if (kind || scope.aggregates.count(vi.name())) {
        error(where + "output '" + vi.name() + "' is " + (kind ? kind : "a sequence or optional") +
              ", which cannot cross the boundary of a body that runs at run time (odlac "
              "resolves sequences and optionals at compile time; ODLA values are tensors only)");
        continue;
      }
      Value *v = lookup(scope, vi.name());
      if (!v) { // defined (checkStructure), so its producer failed
        assert(isPoisoned(scope, vi.name()));
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

  Expected<std::vector<Operand>> inlineBody(const onnx::GraphProto &gp,
                                            const std::vector<Operand> &formals,
                                            const std::string &label) override {
    std::string name = gp.name().empty() ? "body" : gp.name();
    if (static_cast<size_t>(gp.input_size()) != formals.size())
      return Status::error("body '" + name + "' declares " + std::to_string(gp.input_size()) +
                           " inputs; the op binds " + std::to_string(formals.size()));
    Scope scope;
    scope.graph = scope_->graph;
    scope.outer = scope_;
    for (int i = 0; i < gp.input_size(); ++i)
      bind(scope, gp.input(i).name(), formals[static_cast<size_t>(i)]);
    size_t errorsBefore = errors_.messages().size();
    for (const onnx::TensorProto &t : gp.initializer()) {
      auto decoded = decodeTensor(t, modelDir_);
      if (!decoded)
        error(where_ + label + "initializer " + decoded.status().message());
      else
        scope.values[t.name()] = scope.graph->addConstant(t.name(), decoded->type, decoded->data);
    }
    Scope *saved = scope_;
    std::string savedWhere = where_;
    scope_ = &scope;
    where_ = savedWhere + label;
    importNodes(gp, scope);
    scope_ = saved;
    where_ = savedWhere;
    if (errors_.messages().size() != errorsBefore)
      return Status::error("body '" + name + "' cannot be imported (see the errors above)");
    std::vector<Operand> outs;
    for (const onnx::ValueInfoProto &vi : gp.output()) {
      Operand v = lookupOperand(scope, vi.name());
      if (v.absent())
        return Status::error("body '" + name + "' output '" + vi.name() + "' has no value");
      outs.push_back(std::move(v));
    }
    return outs;
  }

  bool readsAggregates(const onnx::GraphProto &gp) override {
    for (const onnx::NodeProto &n : gp.node()) {
      for (const std::string &in : n.input())
        for (const Scope *s = scope_; !in.empty() && s; s = s->outer)
          if (s->aggregates.count(in))
            return true;
      for (const onnx::AttributeProto &a : n.attribute()) {
        if (a.has_g() && readsAggregates(a.g()))
          return true;
        for (const onnx::GraphProto &b : a.graphs())
          if (readsAggregates(b))
            return true;
      }
    }
    return false;
  }

  void importNodes(const onnx::GraphProto &graph, Scope &scope) {
    int index = 0;
    for (const onnx::NodeProto &n : graph.node()) {
      const std::string domain = canonicalDomain(n.domain());
      const int64_t opset = opsetOf(domain);
      std::string label = where_ + nodeLabel(n, index++, opset);
      auto poison = [&] {
        for (const std::string &o : n.output())
          scope.poisoned.insert(o);
      };
      bool custom = opts_.customOpDomains.count(n.domain()) != 0;
      bool constant = domain.empty() && n.op_type() == "Constant";
      if (!custom && !constant && !hasRulesForDomain(domain)) {
        error(label + ": unsupported: domain '" + n.domain() + "' has no import rules");
        poison();
        continue;
      }
      if (!custom && opset < 0) {
        error(
            label + ": the model imports no opset of " +
            (domain.empty() ? std::string("the default ONNX domain") : "domain '" + domain + "'"));
        poison();
        continue;
      }
      if (Status s = checkNode(n, opset)) {
        for (const std::string &m : s.messages())
          error(label + ": " + m);
        poison();
        continue;
      }
      int earliest = -1;
      const ImportRule *rule =
          constant || custom ? nullptr : findRule(domain, n.op_type(), opset, &earliest);
      if (!custom && !constant && !rule) {
        error(label + ": unsupported: op " + n.op_type() +
              (earliest > 0 ? " before opset " + std::to_string(earliest) : std::string()) +
              "; odlac has no import rule for it");
        poison();
        continue;
      }
      // An op odlac rejects is named whatever its operands are (every unsupported node in one
      // run); the reason does not depend on them.
      if (rule && rule->unsupported) {
        error(label + ": unsupported: " + rule->unsupported);
        poison();
        continue;
      }
      // Operands; a node fed by a failed node is skipped silently (its cause is reported).
      std::vector<Value *> inputs;
      std::vector<const Aggregate *> aggregates;
      bool blocked = false;
      std::string notTensor; // the first sequence or optional operand, for a row without them
      for (const std::string &in : n.input()) {
        aggregates.push_back(nullptr);
        if (in.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        Value *v = lookup(scope, in);
        if (!v)
          aggregates.back() = lookupAggregate(scope, in);
        if (!v && !aggregates.back()) {  // checkStructure found every input defined: this
          assert(isPoisoned(scope, in)); // one's producer failed
          blocked = true;
          continue;
        }
        if (aggregates.back() && notTensor.empty() && !(rule && rule->takesAggregates))
          notTensor = "operand " + std::to_string(inputs.size()) + " ('" + in + "') is " +
                      aggregates.back()->describe() + ", and " + n.op_type() +
                      " takes tensors there (odlac resolves sequences and optionals at compile "
                      "time, with the ops that make and read them; ODLA values are tensors only)";
        inputs.push_back(v);
      }
      if (blocked) {
        poison();
        continue;
      }
      if (!notTensor.empty()) {
        error(label + ": " + notTensor);
        poison();
        continue;
      }
      Status s;
      if (constant && !custom) {
        s = importConstant(n, scope);
      } else {
        ImportCtx ctx(*scope.graph, n, opset, inputs, modelDir_, declared_);
        ctx.setKeepComputed(&opts_.keepComputed);
        ctx.setBodyImporter(this);
        for (size_t i = 0; i < aggregates.size(); ++i)
          ctx.setAggregateInput(static_cast<int>(i), aggregates[i]);
        s = custom ? importCustomOp(ctx) : importNode(ctx, *rule);
        for (int i = 0; s.isOk() && i < n.output_size(); ++i) {
          if (n.output(i).empty())
            continue;
          if (ctx.outputs()[i])
            scope.values[n.output(i)] = ctx.outputs()[i];
          else if (ctx.aggregateOutputs()[i])
            scope.aggregates[n.output(i)] = *ctx.aggregateOutputs()[i];
          else
            s = Status::error("output " + std::to_string(i) + " ('" + n.output(i) +
                              "') is not supported");
        }
      }
      if (!s.isOk()) {
        for (const std::string &m : s.messages())
          error(label + ": " + m);
        poison();
      }
    }
  }

  // A graph output that is a sequence or an optional: one output of the generated code per
  // element, named as the inputs are (importInputValue); an absent optional has none.
  void importAggregateOutput(const onnx::ValueInfoProto &vi, const Aggregate &a,
                             std::set<const Value *> &claimed) {
    std::string what = "graph output '" + vi.name() + "'";
    const onnx::TypeProto &t = vi.type();
    if (t.has_tensor_type()) {
      error(what + " is declared a tensor but computes " + a.describe());
      return;
    }
    if (t.has_sequence_type() && !a.isSequence()) {
      error(what + " is declared a sequence but computes " + a.describe());
      return;
    }
    bool one = !a.isSequence() && !a.ofSequence; // an optional tensor: the output itself
    for (size_t i = 0; i < a.elements.size(); ++i) {
      std::string name = one ? vi.name() : elementName(vi.name(), i);
      Value *copy = graph_->addValue(name, a.elements[i]->type());
      graph_->addNode(ops::Identity, name, {a.elements[i]}, {copy});
      claimed.insert(copy);
      graph_->addOutput(copy);
    }
  }

  void importOutputs() {
    std::set<const Value *> claimed;
    for (const onnx::ValueInfoProto &vi : model_.graph().output()) {
      if (auto a = root_.aggregates.find(vi.name()); a != root_.aggregates.end()) {
        importAggregateOutput(vi, a->second, claimed);
        continue;
      }
      auto it = root_.values.find(vi.name());
      if (it == root_.values.end()) { // defined (checkStructure), so its producer failed
        assert(root_.poisoned.count(vi.name()));
        continue;
      }
      Value *v = it->second;
      if (vi.type().has_sequence_type()) {
        error("graph output '" + vi.name() + "' is declared a sequence but computes a tensor");
        continue;
      }
      // Every output gets its own node result, so that it can be bound to its own buffer.
      if (!v->producer() || claimed.count(v)) {
        Value *copy = graph_->addValue(vi.name() + "/copy", v->type());
        graph_->addNode(ops::Identity, vi.name(), {v}, {copy});
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
            fits =
                !tt.shape().dim(i).has_dim_value() || tt.shape().dim(i).dim_value() == v->dims()[i];
          if (!fits)
            error("graph output '" + vi.name() +
                  "' is declared with a shape that differs from "
                  "the inferred " +
                  toString(v->type()));
        }
      }
      graph_->addOutput(v);
    }
  }

  onnx::ModelProto &model_;
  const ImportOptions &opts_;
  std::string modelDir_;
  std::unique_ptr<Graph> graph_;
  Scope root_;
  Scope *scope_ = &root_; // the graph being imported
  std::string where_;     // prefixes messages about nodes inside bodies ("Loop 'x' body: ")
  ImportCtx::DeclaredTypes declared_;
  Status errors_;
  std::vector<std::string> diagnostics_; // warnings and notes ("warning: ...", "note: ...")
};

// ONNX opsets before 7 used legacy broadcasting and other semantics that later opsets
// dropped; such models are upgraded with libonnx's version converter (ONNX Runtime refuses
// them, odlac does not). When the converter fails (an exception, a crash, an invalid result),
// odlac imports the model at its own opset with the rules it has for it, which report what
// they cannot import. Running out of time is an error instead: how long the converter takes
// depends on the machine's load, and the same model and flags must always give the same
// output.
constexpr int64_t kOldestUpgradedOpset = 7;

int64_t defaultOpset(const onnx::ModelProto &m) {
  for (const auto &os : m.opset_import())
    if (canonicalDomain(os.domain()).empty())
      return os.version();
  return -1; // models of other domains only (ai.onnx.preview.training's optimizers)
}

// odlac's own validation of the model as a whole, before anything else reads it.
Status validateModel(const onnx::ModelProto &m) {
  if (Status s = checkVersions(m))
    return s;
  return checkStructure(m.graph(), defaultOpset(m));
}

// A model of an opset before 7, upgraded to 7 by libonnx when it can; else as it is, with a
// warning saying why.
Expected<onnx::ModelProto> upgradeOldOpset(onnx::ModelProto m, const ImportOptions &opts,
                                           const ChildLimits &limits,
                                           std::vector<std::string> &diagnostics) {
  int64_t opset = defaultOpset(m);
  if (opset < 0 || opset >= kOldestUpgradedOpset)
    return m;
  std::string what = libonnxName() + "'s version converter did not upgrade the model from opset " +
                     std::to_string(opset) + " to " + std::to_string(kOldestUpgradedOpset);
  std::string why = "--libonnx-timeout is 0";
  if (opts.libonnxSeconds > 0) {
    bool timedOut = false;
    auto upgraded = upgradeWithLibonnx(m, kOldestUpgradedOpset, limits, &timedOut);
    if (timedOut)
      return Status::error(what + " within --libonnx-timeout " + std::to_string(limits.seconds) +
                           " s; give it more time, or 0 to import the model at opset " +
                           std::to_string(opset) + " with odlac's own rules");
    Status invalid = upgraded ? validateModel(*upgraded) : upgraded.status();
    if (invalid.isOk())
      return std::move(*upgraded);
    why = upgraded ? "its result is invalid: " + invalid.messages()[0] : invalid.message();
  }
  diagnostics.push_back("warning: " + what + " (" + why + "); odlac imports it at opset " +
                        std::to_string(opset) + " with its own rules");
  return m;
}

} // namespace

// Checks, upgrades and imports a parsed model; `path` names it in messages and is where
// its external data lies, which `external` lists. odlac's validation decides, before libonnx
// sees the model; libonnx's checker is advice, reported with the other diagnostics whatever
// the validation found.
static Expected<std::unique_ptr<Graph>> importModel(onnx::ModelProto &model,
                                                    const std::string &path,
                                                    const std::set<std::string> &external,
                                                    const ImportOptions &opts) {
  Status invalid = validateModel(model);
  ChildLimits limits;
  limits.seconds = opts.libonnxSeconds;
  std::vector<std::string> diagnostics;
  if (opts.libonnxSeconds > 0)
    if (auto complaint = libonnxCheckerComplaint(model, path, limits))
      diagnostics.push_back("warning: " + *complaint);
  auto withDiagnostics = [&](Status s) {
    for (const std::string &d : diagnostics)
      s.append(Status::error(d));
    return s;
  };
  if (!invalid.isOk())
    return withDiagnostics(std::move(invalid));
  // A model that libonnx's converter upgrades is kept as it was too: the converter's result can
  // be wrong in ways that only importing shows (libonnx 1.12 makes Reshape-1's shape attribute
  // a rank-0 constant of several values), and then odlac's own rules import the original.
  int64_t opset = defaultOpset(model);
  std::optional<onnx::ModelProto> original;
  if (opset >= 0 && opset < kOldestUpgradedOpset && opts.libonnxSeconds > 0)
    original = model;
  auto current = upgradeOldOpset(std::move(model), opts, limits, diagnostics);
  if (!current)
    return withDiagnostics(current.takeStatus());
  if (defaultOpset(*current) == opset)
    original.reset(); // not upgraded: nothing to fall back to
  auto import = [&](onnx::ModelProto m) -> Expected<std::unique_ptr<Graph>> {
    if (Status s = inlineLocalFunctions(m))
      return Status::error(path + ": " + s.message());
    // The graph's constants take the weights out of the parsed model, not copies of them.
    return Importer(m, path, opts).run();
  };
  auto graph = import(std::move(*current));
  if (!graph && original) {
    diagnostics.push_back(
        "warning: the model " + libonnxName() + "'s version converter upgraded to opset " +
        std::to_string(kOldestUpgradedOpset) + " does not import (" + graph.status().messages()[0] +
        "); odlac imports it at opset " + std::to_string(opset) + " with its own rules");
    graph = import(std::move(*original));
  }
  if (!graph)
    return withDiagnostics(graph.takeStatus());
  ModelInfo &info = (*graph)->info();
  info.externalDataFiles.assign(external.begin(), external.end());
  info.diagnostics.insert(info.diagnostics.end(), diagnostics.begin(), diagnostics.end());
  return graph;
}

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path,
                                                const ImportOptions &opts) {
  auto model = parseModelFile(path);
  if (!model)
    return model.takeStatus();
  std::set<std::string> external;
  if (Status s = checkExternalData(*model, dirOf(path), &external))
    return s;
  return importModel(*model, path, external, opts);
}

Expected<std::unique_ptr<Graph>>
importOnnxBytes(const void *data, size_t size, const std::string &name, const ImportOptions &opts) {
  if (size > static_cast<size_t>(INT_MAX))
    return Status::error(name + ": " + std::to_string(size) +
                         " bytes, more than a model read "
                         "from memory may have (" +
                         std::to_string(INT_MAX) + ")");
  google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
  auto model = parseModel(raw, name);
  if (!model)
    return model.takeStatus();
  if (usesExternalData(*model))
    return Status::error(name + ": the model keeps tensor data in external files, which a "
                                "model read from memory cannot have (import it from its file)");
  return importModel(*model, name, {}, opts);
}

Status parseSequenceLength(const std::string &spec, ImportOptions &opts) {
  size_t eq = spec.rfind('=');
  std::string n = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (eq == std::string::npos || eq == 0 || n.empty() ||
      n.find_first_not_of("0123456789") != std::string::npos || n.size() > 6 ||
      std::stoll(n) > kMaxSequenceLength)
    return Status::error("--sequence-length '" + spec + "': expected NAME=N with N from 0 to " +
                         std::to_string(kMaxSequenceLength) + " (e.g. x=3)");
  opts.sequenceLengths[spec.substr(0, eq)] = std::stoll(n);
  return Status::ok();
}

Status parseInputShape(const std::string &spec, ImportOptions &opts) {
  size_t colon = spec.rfind(':');
  std::string bad = "--input-shape '" + spec +
                    "': expected name:d0xd1x..., each dim a number, the name of a symbolic dim "
                    "(--dim gives its range) or ? for the model's own (e.g. input:1x3x224x224, "
                    "tokens:NxT)";
  if (colon == std::string::npos || colon == 0)
    return Status::error(bad);
  InputShape shape;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t x = rest.find('x', pos);
    std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part == "?" || part == "-1") {
      shape.dims.push_back(-1);
      shape.names.emplace_back();
    } else if (isDimName(part)) {
      shape.dims.push_back(-1);
      shape.names.push_back(part);
    } else if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
               part.size() <= 12) {
      shape.dims.push_back(std::stoll(part));
      shape.names.emplace_back();
    } else {
      return Status::error(bad);
    }
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  opts.inputShapes[spec.substr(0, colon)] = std::move(shape);
  return Status::ok();
}

bool isDimName(const std::string &s) {
  if (s.empty() || s.size() > 64 || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return s.find('x') == std::string::npos;
}

} // namespace odlac
