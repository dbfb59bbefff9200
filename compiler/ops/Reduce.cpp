// Reductions over a set of axes, index reductions (ArgMax/ArgMin), the normalizations along an
// axis (softmax family) and the running sum and product (CumSum, CumProd); reductions over
// axes known only at run time (ReduceDynamic).
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <iterator>

namespace odlac {
namespace {

// Reductions: `axes` lists the reduced axes, normalized at import (non-negative, strictly
// increasing). An empty list reduces nothing: the op applies to each element alone (ReduceL1
// gives |x|), which is also how a scalar reduces. ONNX's "no axes means all axes" and
// noop_with_empty_axes are resolved at import.
Status inferReduce(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  const auto &axes = c.ints("axes");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= c.in(0).rank() || (i > 0 && axes[i] <= axes[i - 1]))
      return c.fail("axes must be distinct, sorted and in [0, " + str(c.in(0).rank()) + ")");
  bool keep = c.i("keepdims") != 0;
  Dims out;
  for (int64_t d = 0, k = 0; d < c.in(0).rank(); ++d) {
    bool reduced = k < static_cast<int64_t>(axes.size()) && axes[k] == d;
    k += reduced;
    if (!reduced)
      out.push_back(x[d]);
    else if (keep)
      out.push_back(1);
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

// The reductions ReduceDynamic computes (attribute `reduction`: the IR reduce op it stands
// for), in ODLA_EXT_REDUCE_* order.
const OpDef *const kDynamicReductions[] = {
    &ops::ReduceSum,       &ops::ReduceMean,     &ops::ReduceMax, &ops::ReduceMin,
    &ops::ReduceProd,      &ops::ReduceL1,       &ops::ReduceL2,  &ops::ReduceLogSum,
    &ops::ReduceLogSumExp, &ops::ReduceSumSquare};

int dynamicReductionCode(const std::string &reduction) {
  for (int i = 0; i < static_cast<int>(std::size(kDynamicReductions)); ++i)
    if (reduction == kDynamicReductions[i]->name)
      return i;
  return -1;
}

// A reduction with axes known only at run time: the result shape is the one the model declares
// (attribute `shape`); the backend checks the axes against it when it runs.
Status inferReduceDynamic(InferCtx &c) {
  if (dynamicReductionCode(c.node().s("reduction")) < 0)
    return c.fail("reduction '" + c.node().s("reduction") + "' is not a reduce op");
  const Dims &x = c.in(0).dims;
  const auto &shape = c.ints("shape");
  bool keep = c.i("keepdims") != 0;
  if (c.in(1).rank() > 1)
    return c.fail("axes must be 1-D, got " + toString(c.in(1)));
  bool fits = keep ? shape.size() == x.size() : shape.size() <= x.size();
  for (size_t d = 0; fits && keep && d < x.size(); ++d)
    fits = shape[d] == 1 || shape[d] == x[d];
  if (!fits)
    return c.fail("declared result " + dimsToString(shape) + " is no reduction of " +
                  dimsToString(x) + " with keepdims=" + str(keep));
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

// ArgMax/ArgMin: axis normalized at import; the result holds int64 indices.
Status inferArg(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  int64_t axis = c.i("axis");
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  int64_t others = 1;
  for (int64_t d = 0; d < c.in(0).rank(); ++d)
    others *= d == axis ? 1 : x[d];
  if (x[axis] == 0 && others > 0)
    return c.fail("axis " + str(axis) + " of " + dimsToString(x) +
                  " has extent 0: there is no element to pick");
  Dims out;
  for (int64_t d = 0; d < c.in(0).rank(); ++d)
    if (d != axis)
      out.push_back(x[d]);
    else if (c.i("keepdims") != 0)
      out.push_back(1);
  c.setOut(0, TensorType{DType::I64, out});
  return Status::ok();
}

// Softmax, LogSoftmax, Hardmax: along one axis (opset-13 semantics; older opsets are reshaped
// at import), normalized at import.
Status inferAlongAxis(InferCtx &c) {
  int64_t axis = c.i("axis");
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  c.setOut(0, c.in(0));
  return Status::ok();
}

// CumSum, CumProd: the axis is an operand (ODLA reads it at run time), one integer element.
Status inferCumulative(InferCtx &c) {
  if (c.in(0).rank() == 0)
    return c.fail("input must have rank >= 1");
  if (c.in(1).numElements() != 1 || c.in(1).rank() > 1)
    return c.fail("axis must hold one element, got " + toString(c.in(1)));
  c.setOut(0, c.in(0));
  return Status::ok();
}

// ONNX CumProd-26's element types.
constexpr DTypeMask kCumProdTypes =
    kFloatTypes | maskOf(DType::I32) | maskOf(DType::I64) | maskOf(DType::U32) | maskOf(DType::U64);

const std::vector<AttrDef> kReduceAttrs = {{"axes", AttrKind::Ints, std::nullopt},
                                           {"keepdims", AttrKind::Int, AttrValue(int64_t{1})}};
const std::vector<AttrDef> kNormReduceAttrs = {{"axes", AttrKind::Ints, std::nullopt},
                                               {"keepdims", AttrKind::Int, AttrValue(int64_t{1})},
                                               {"epsilon", AttrKind::Float, AttrValue(0.0)}};
const std::vector<AttrDef> kArgAttrs = {
    {"axis", AttrKind::Int, std::nullopt},
    {"keepdims", AttrKind::Int, AttrValue(int64_t{1})},
    {"select_last_index", AttrKind::Int, AttrValue(int64_t{0})}};
const std::vector<OperandDef> kNumericX = {{"x", OperandDef::Required, kNumericTypes}};
const std::vector<OperandDef> kFloatX = {{"x", OperandDef::Required, kFloatTypes}};

lower::Flag flag(const LowerCtx &c, const char *attr) { return {c.node().i(attr) != 0}; }

#define REDUCE(Name)                                                                               \
  [](LowerCtx &c) {                                                                                \
    const auto &axes = c.node().ints("axes");                                                      \
    c.setOut(0, c.sink().Name(c.in(0), axes.size(), u32s(axes), flag(c, "keepdims"),               \
                              c.outShape(0), c.outId(0)));                                         \
  }
#define NORM_REDUCE(Name)                                                                          \
  [](LowerCtx &c) {                                                                                \
    const auto &axes = c.node().ints("axes");                                                      \
    c.setOut(0, c.sink().Name(c.in(0), axes.size(), u32s(axes), flag(c, "keepdims"),               \
                              static_cast<odla_float32>(c.node().f("epsilon")), c.outShape(0),     \
                              c.outId(0)));                                                        \
  }
#define ALONG_AXIS(Name)                                                                           \
  [](LowerCtx &c) {                                                                                \
    c.setOut(0, c.sink().Name(c.in(0), static_cast<odla_int32>(c.node().i("axis")), c.outId(0)));  \
  }
#define ARG(Name)                                                                                  \
  [](LowerCtx &c) {                                                                                \
    c.setOut(0, c.sink().Name(c.in(0), static_cast<odla_int32>(c.node().i("axis")),                \
                              flag(c, "keepdims"), flag(c, "select_last_index"),                   \
                              lower::VType{odlaType(DType::I64), c.outShape(0)}, c.outId(0)));     \
  }

// CumSum and CumProd: x and a run-time axis, lowered to the ODLA builder `Builder`.
#define CUMULATIVE(Name, types, Builder)                                                           \
  {                                                                                                \
#Name,                                                                                          \
   {{"x", OperandDef::Required, types}, {"axis", OperandDef::Required, kIndexTypes}},              \
   1,                                                                                              \
   {{"exclusive", AttrKind::Int, AttrValue(int64_t{0})},                                           \
    {"reverse", AttrKind::Int, AttrValue(int64_t{0})}},                                            \
   FusionClass::Opaque,                                                                            \
   kTraitNone,                                                                                     \
   inferCumulative,                                                                                \
   [](LowerCtx &c) {                                                                               \
     c.setOut(0, c.sink().Builder(c.in(0), c.in(1), flag(c, "exclusive"), flag(c, "reverse"),      \
                                  c.outId(0)));                                                    \
   }  \
  }

// One row of a reduction over the `axes` attribute.
OpDef reduction(const char *name, const std::vector<AttrDef> &attrs, LowerFn lower) {
  return {name,  kNumericX,        1, attrs, FusionClass::Reduction, kTraitNone, inferReduce,
          lower, BatchRule::Reduce};
}

} // namespace

namespace ops {

const OpDef ReduceSum = reduction("ReduceSum", kReduceAttrs, REDUCE(ReduceSum));
const OpDef ReduceMean = reduction("ReduceMean", kReduceAttrs, REDUCE(ReduceMean));
const OpDef ReduceMax = reduction("ReduceMax", kReduceAttrs, REDUCE(ReduceMax));
const OpDef ReduceMin = reduction("ReduceMin", kReduceAttrs, REDUCE(ReduceMin));
const OpDef ReduceProd = reduction("ReduceProd", kReduceAttrs, REDUCE(ReduceProd));
const OpDef ReduceSumSquare = reduction("ReduceSumSquare", kReduceAttrs, REDUCE(ReduceSumSquare));
const OpDef ReduceLogSum = reduction("ReduceLogSum", kReduceAttrs, REDUCE(ReduceLogSum));
const OpDef ReduceLogSumExp = reduction("ReduceLogSumExp", kReduceAttrs, REDUCE(ReduceLogSumExp));
// epsilon: L1 = sum |x| + epsilon, L2 = sqrt(sum x^2 + epsilon); 0 for ONNX.
const OpDef ReduceL1 = reduction("ReduceL1", kNormReduceAttrs, NORM_REDUCE(ReduceL1));
const OpDef ReduceL2 = reduction("ReduceL2", kNormReduceAttrs, NORM_REDUCE(ReduceL2));
const OpDef ReduceDynamic = {
    "ReduceDynamic",
    {{"x", OperandDef::Required, kNumericTypes}, {"axes", OperandDef::Required, kIndexTypes}},
    1,
    {{"reduction", AttrKind::String, std::nullopt},
     {"keepdims", AttrKind::Int, AttrValue(int64_t{1})},
     {"noop_with_empty_axes", AttrKind::Int, AttrValue(int64_t{0})},
     {"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferReduceDynamic,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtReduceDynamic(c.in(0), c.in(1),
                                            dynamicReductionCode(c.node().s("reduction")),
                                            flag(c, "keepdims"), flag(c, "noop_with_empty_axes"),
                                            c.outShape(0), c.outId(0)));
    }};
const OpDef ArgMax = {
    "ArgMax",   kNumericX, 1,           kArgAttrs,           FusionClass::Reduction,
    kTraitNone, inferArg,  ARG(ArgMax), BatchRule::AlongAxis};
const OpDef ArgMin = {
    "ArgMin",   kNumericX, 1,           kArgAttrs,           FusionClass::Reduction,
    kTraitNone, inferArg,  ARG(ArgMin), BatchRule::AlongAxis};
const OpDef Softmax = {"Softmax",
                       kFloatX,
                       1,
                       {{"axis", AttrKind::Int, std::nullopt}},
                       FusionClass::Opaque,
                       kTraitNone,
                       inferAlongAxis,
                       ALONG_AXIS(Softmax),
                       BatchRule::RowsOfFirst};
const OpDef LogSoftmax = {"LogSoftmax",
                          kFloatX,
                          1,
                          {{"axis", AttrKind::Int, std::nullopt}},
                          FusionClass::Opaque,
                          kTraitNone,
                          inferAlongAxis,
                          ALONG_AXIS(LogSoftmax),
                          BatchRule::RowsOfFirst};
const OpDef Hardmax = {"Hardmax",
                       kFloatX,
                       1,
                       {{"axis", AttrKind::Int, std::nullopt}},
                       FusionClass::Opaque,
                       kTraitNone,
                       inferAlongAxis,
                       ALONG_AXIS(Hardmax),
                       BatchRule::RowsOfFirst};
const OpDef CumSum = CUMULATIVE(CumSum, kNumericTypes, CumSum);
const OpDef CumProd = CUMULATIVE(CumProd, kCumProdTypes, ExtCumProd);

} // namespace ops

namespace {

#undef REDUCE
#undef CUMULATIVE
#undef NORM_REDUCE
#undef ALONG_AXIS
#undef ARG

} // namespace

} // namespace odlac
