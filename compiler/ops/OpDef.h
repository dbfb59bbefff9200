// The op table's row type (DESIGN §3): everything every stage needs to know about one IR op.
// Each row is a named object (ops::Conv) in its family's file (Elementwise.cpp, Nn.cpp, ...),
// declared and listed in registry order in ops/Ops.h. Passes ask rows about properties, or
// compare a node's row with a handle (n->is(ops::Conv)), never op names.
#pragma once

#include "ir/Attr.h"
#include "ir/DType.h"
#include "ir/Graph.h"
#include "support/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace odlac {

class InferCtx;
class LowerCtx;

// How an op combines with neighbours in fusion (TVM's OpPatternKind, by another name).
enum class FusionClass {
  Elementwise,           // out[i] = f(in[i])
  Broadcast,             // elementwise after broadcasting inputs
  Injective,             // each output element is one input element (reshape, transpose)
  Reduction,             // reduces over axes
  OutElementwiseFusable, // complex op whose output can absorb elementwise ops (conv, gemm)
  Opaque,                // anything else
};

enum OpTrait : unsigned {
  kTraitNone = 0,
  kCommutative = 1u << 0,    // f(a, b) == f(b, a)
  kLayoutAgnostic = 1u << 1, // result layout follows the input's, any layout works
  kShapeOnly = 1u << 2,      // moves or reinterprets data without arithmetic
  // Computed by code outside odlac (a custom op's kernel, in the application): never
  // evaluated at compile time, merged with an equal node or removed when unused.
  kExternal = 1u << 3,
  // Takes attributes beyond its row's (a custom op's own); its inference checks them.
  kOpenAttributes = 1u << 4,
  // Each result element is one of the operands' elements, chosen by position or as the
  // largest (no padding constant, no arithmetic): the op commutes with any increasing
  // elementwise map, such as a quantization, and so computes on quantized data as is.
  kSelectsElements = 1u << 5,
};

struct OperandDef {
  const char *name;
  enum Kind { Required, Optional, Variadic } kind = Required;
  DTypeMask types = kAllTypes; // element types the op accepts on this operand
};

struct AttrDef {
  const char *name;
  AttrKind kind;
  std::optional<AttrValue> defaultValue; // none: the attribute is required
};

// How a --dynamic-batch build checks that the op keeps the rows of the batch apart; each
// rule is a function of passes/BatchRows.cpp, which says what it requires. None: elementwise
// and broadcasting ops are checked by their operands' broadcast, any other op is refused.
enum class BatchRule {
  None,
  RowsOfFirst,    // the first operand carries the rows, nothing else may
  AlongAxis,      // rows kept unless the op works along axis 0
  Reduce,         // reductions: not over axis 0
  Gemm,           // row i of A (not transposed) times B
  MatMul,         // rows of A, B shared
  Transpose,      // axis 0 stays first
  Concat,         // not along axis 0
  Slice,          // axis 0 not sliced
  Pad,            // axis 0 not padded
  Tile,           // axis 0 not repeated
  Expand,         // no leading axes added
  GatherElements, // not along axis 0
  FusedConv,      // a convolution's rows, and a residual's
};

// How the compile report counts the op's arithmetic (codegen/Report.cpp). ByFusionClass: one
// operation per element produced (per element read, for reductions; none for data movement).
// Conv and MatrixProduct: exactly; Fused*: that plus one per element for the residual
// addition and one for the activation.
enum class FlopRule { ByFusionClass, Conv, MatrixProduct, FusedConv, FusedGemm };

using InferFn = Status (*)(InferCtx &);
using LowerFn = void (*)(LowerCtx &);

struct OpDef {
  const char *name;
  std::vector<OperandDef> operands;
  int numResults;
  std::vector<AttrDef> attrs;
  FusionClass fusion;
  unsigned traits;
  InferFn infer; // checks operands and attributes, sets result types
  LowerFn lower; // emits the ODLA calls for one node through an OdlaSink
  BatchRule batch = BatchRule::None;
  FlopRule flops = FlopRule::ByFusionClass;

  bool has(OpTrait t) const { return (traits & t) != 0; }
  const AttrDef *findAttr(const std::string &attrName) const;
};

// The registry of every IR op, in family order.
const std::vector<const OpDef *> &allOps();
// By name, for the import rules and the text IR; code that names one op uses ops/Ops.h.
const OpDef *findOp(const std::string &name);

// Context for shape and type inference of one node.
class InferCtx {
public:
  InferCtx(Node &node) : node_(node) {}
  const Node &node() const { return node_; }
  int numInputs() const { return node_.numInputs(); }
  bool hasInput(int i) const { return node_.input(i) != nullptr; }
  const TensorType &in(int i) const { return node_.input(i)->type(); }
  const Value *inValue(int i) const { return node_.input(i); }
  int64_t i(const std::string &a) const { return node_.i(a); }
  double f(const std::string &a) const { return node_.f(a); }
  const std::vector<int64_t> &ints(const std::string &a) const { return node_.ints(a); }
  void setOut(int i, TensorType t) { node_.output(i)->setType(std::move(t)); }

  // An error naming the op and the rule it breaks; the caller adds the node's name.
  Status fail(const std::string &message) const;

private:
  Node &node_;
};

// Verifies a node against its row (operand count, element types, attributes present and of
// the right kind), fills attribute defaults, then runs the row's inference.
Status verifyAndInfer(Node &node);

} // namespace odlac
