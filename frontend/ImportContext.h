// What an import rule sees while turning one ONNX node into IR: the node's operands and
// attributes (with ONNX defaults), the ability to emit IR nodes (each is verified and its
// type inferred on the spot), and error reporting that names the rule broken.
#pragma once

#include "Aggregate.h"
#include "ir/Graph.h"
#include "support/Status.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace odlac {

// A body (a graph-valued attribute such as Loop's `body`) imported as an IR subgraph. Its
// inputs are the ONNX body's formal inputs, then one per outer value the body reads
// (constants included: bodies hold none), bound to `captures` (values of the importing
// graph) in order.
struct ImportedBody {
  std::unique_ptr<Graph> graph;
  std::vector<Value *> captures;
};

// Imports bodies with ONNX's scoping rules (implemented by the importer).
class BodyImporter {
public:
  virtual ~BodyImporter() = default;
  // `inputTypes`: the types of the body's formal inputs, which the op defines.
  virtual Expected<ImportedBody> importBody(const onnx::GraphProto &body,
                                            const std::vector<TensorType> &inputTypes) = 0;
  // Imports the body's nodes into the importing graph itself, its formal inputs bound to
  // `formals` (a body unrolled or selected at import: SequenceMap, a Loop or If over
  // sequences); returns its outputs. `label` prefixes messages about its nodes.
  virtual Expected<std::vector<Operand>> inlineBody(const onnx::GraphProto &body,
                                                    const std::vector<Operand> &formals,
                                                    const std::string &label) = 0;
  // Whether the body's nodes (nested bodies included) read a sequence or an optional of the
  // importing graph's scopes.
  virtual bool readsAggregates(const onnx::GraphProto &body) = 0;
};

class ImportCtx {
public:
  // The static types the model declares for its values (value_info, graph outputs), by name;
  // and the dims of values that reach a declared value only through ops whose result has their
  // shape (Cast, Sqrt, ...): the model pins those dims too, though not their element type.
  struct DeclaredTypes {
    std::map<std::string, TensorType> types;
    std::map<std::string, Dims> pinned;
  };

  ImportCtx(Graph &g, const onnx::NodeProto &node, int64_t opset, std::vector<Value *> inputs,
            std::string modelDir, const DeclaredTypes &declared)
      : g_(g), node_(node), opset_(opset), inputs_(std::move(inputs)),
        modelDir_(std::move(modelDir)), outputs_(node.output_size(), nullptr), declared_(declared),
        read_(node.attribute_size(), false), aggregates_(inputs_.size()),
        aggregateOutputs_(node.output_size()) {}

  Graph &graph() { return g_; }
  // --dim (ImportOptions::keepComputed): whether a shape generator's result `name` is left to
  // the generated code although import could compute it.
  void setKeepComputed(const std::set<std::string> *names) { keepComputed_ = names; }
  bool keepComputed(const std::string &name) const {
    return keepComputed_ && keepComputed_->count(name);
  }
  const onnx::NodeProto &proto() const { return node_; }
  int64_t opset() const { return opset_; }
  const std::string &modelDir() const { return modelDir_; }

  // Operands. An empty ONNX input name is an absent optional operand.
  int numInputs() const { return static_cast<int>(inputs_.size()); }
  bool hasInput(int i) const { return i < numInputs() && inputs_[i] != nullptr; }
  Value *input(int i) const { return hasInput(i) ? inputs_[i] : nullptr; }
  // Operands that are sequences or optionals (Aggregate.h): only rows with takesAggregates
  // see them; for them hasInput() is false. nullptr for a tensor or an absent operand.
  void setAggregateInput(int i, const Aggregate *a) { aggregates_[i] = a; }
  const Aggregate *aggregate(int i) const { return i < numInputs() ? aggregates_[i] : nullptr; }
  // Operand i whatever its kind.
  Operand operand(int i) const;
  // The data of an operand that is a constant or computed only from constants (evaluated on
  // the reference backend); an error naming `what` otherwise.
  Expected<std::shared_ptr<const Buffer>> constData(int i, const char *what) const;
  // The values of a constant integer operand (axes, shapes, pads).
  Expected<std::vector<int64_t>> constInts(int i, const char *what) const;
  Expected<double> constScalar(int i, const char *what) const;
  // The static type the model declares for output i (value_info, graph outputs), if any: for
  // ops whose result shape depends on input data.
  std::optional<TensorType> declaredType(int i) const;
  // The static dims the model declares or pins (DeclaredTypes) for output i, if any.
  std::optional<Dims> declaredDims(int i) const;

  // Imports the graph attribute `attr` as a body; the importer reports the body's own
  // errors, the returned error says which body failed.
  void setBodyImporter(BodyImporter *b) { bodies_ = b; }
  Expected<ImportedBody> importBody(const char *attr, const std::vector<TensorType> &inputTypes);
  // Whether the graph attribute `attr` reads an outer sequence or optional
  // (BodyImporter::readsAggregates).
  bool bodyReadsAggregates(const char *attr);
  // Inlines the graph attribute `attr` (BodyImporter::inlineBody).
  Expected<std::vector<Operand>> inlineBody(const char *attr, const std::vector<Operand> &formals,
                                            const std::string &label);

  // Outputs the ONNX node asks for (an empty name is an output it does not want).
  int numOutputs() const { return node_.output_size(); }
  bool wantsOutput(int i) const { return i < numOutputs() && !node_.output(i).empty(); }
  const std::string &outputName(int i) const { return node_.output(i); }

  // Attributes, with the ONNX default when absent. Looking an attribute up marks it read
  // (see importNode: an attribute no rule read is an error). An attribute of another kind
  // than the accessor's reads as absent and is reported by attrKindErrors().
  bool hasAttr(const char *name) const { return findAttr(name) != nullptr; }
  int64_t attrInt(const char *name, int64_t dflt) const;
  double attrFloat(const char *name, double dflt) const;
  std::string attrString(const char *name, const std::string &dflt) const;
  std::vector<int64_t> attrInts(const char *name, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attrFloats(const char *name, std::vector<double> dflt = {}) const;
  std::vector<std::string> attrStrings(const char *name) const;
  const onnx::AttributeProto *findAttr(const char *name) const;
  bool attrWasRead(int i) const { return read_[i]; }
  const Status &attrKindErrors() const { return kindErrors_; }

  // Emits an IR node with one result. `outName` names the result; empty means the ONNX
  // node's output `result` (the usual case for the last IR node of a rule).
  Expected<Value *> emit(const char *irOp, std::vector<Value *> operands, AttrMap attrs = {},
                         const std::string &outName = "");
  // Emits an IR node with several results, named after the ONNX node's outputs (a temporary
  // name for an output the node does not want).
  Expected<std::vector<Value *>> emitResults(const char *irOp, std::vector<Value *> operands,
                                             AttrMap attrs, int numResults);
  // Emits a Reshape unless the shape already matches.
  Expected<Value *> reshape(Value *v, const Dims &dims, const std::string &outName = "");
  // Adds an IR constant.
  Value *constant(const std::string &name, TensorType type, const void *data);
  // Checks a constant the rule is about to generate (compute its bytes for) before it
  // allocates them: representable, and within what odlac generates at compile time
  // (ir/Limits.h's kMaxCompileTimeBytes). `what` names it in the error.
  Status checkGenerated(const TensorType &type, const std::string &what) const;
  // Binds ONNX output i to an IR value.
  void setOutput(int i, Value *v) { outputs_[i] = v; }
  const std::vector<Value *> &outputs() const { return outputs_; }
  // Binds ONNX output i to a sequence or optional; or to an Operand of either kind.
  void setOutput(int i, Aggregate a) { aggregateOutputs_[i] = std::move(a); }
  Status setOutput(int i, const Operand &v);
  const std::vector<std::optional<Aggregate>> &aggregateOutputs() const {
    return aggregateOutputs_;
  }

  // An error for this node; the importer adds node name, op type and opset.
  Status fail(const std::string &reason) const { return Status::error(reason); }
  // A value name for an intermediate result of this node.
  std::string tempName(const std::string &suffix) const;

private:
  const std::set<std::string> *keepComputed_ = nullptr;
  Graph &g_;
  const onnx::NodeProto &node_;
  int64_t opset_;
  std::vector<Value *> inputs_;
  std::string modelDir_;
  std::vector<Value *> outputs_;
  const DeclaredTypes &declared_;
  BodyImporter *bodies_ = nullptr;
  mutable std::vector<bool> read_; // per attribute of the node: looked up by the rule
  mutable Status kindErrors_;
  std::vector<const Aggregate *> aggregates_;
  std::vector<std::optional<Aggregate>> aggregateOutputs_;

  // The attribute `name` when it has `kind` (or no kind, as in models before IR version 2).
  const onnx::AttributeProto *findAttrOfKind(const char *name,
                                             onnx::AttributeProto::AttributeType kind) const;
};

// `count` elements of `dtype` equal to `value` (a double, converted as a C cast would, with
// float16/bfloat16 rounded to nearest even and integers saturated at their type's range).
std::vector<unsigned char> filledBytes(DType dtype, double value, int64_t count);

// Axis normalization shared by rules: maps [-rank, rank) to [0, rank).
Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, const char *what);

// A rule's last step: its result `out` as output `i` of the node, or the error that made it.
Status finish(ImportCtx &ctx, int i, Expected<Value *> out);
inline Status finish(ImportCtx &ctx, Expected<Value *> out) {
  return finish(ctx, 0, std::move(out));
}

// Whether operand `i` is present and computable from constants at compile time.
bool isConstant(const ImportCtx &ctx, int i);

// The static type the model declares for output `i` of the node, checked against the rank it
// must have; `why` says what needs it.
Expected<TensorType> declaredOutput(ImportCtx &ctx, int i, int64_t rank, const std::string &why);

} // namespace odlac
