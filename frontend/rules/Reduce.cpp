// Import rules for reductions (ReduceSum ... ReduceSumSquare, ArgMax/ArgMin), the softmax family
// and CumSum. GlobalAveragePool, a reduction in IR, is imported with the pooling ops in Nn.cpp.
#include "Rules.h"

#include <algorithm>

namespace odlac {
namespace {

// A flag attribute: ONNX allows 0 and 1 only.
Expected<int64_t> flagAttr(ImportCtx &ctx, const char *name, int64_t dflt) {
  int64_t v = ctx.attrInt(name, dflt);
  if (v != 0 && v != 1)
    return ctx.fail("attribute " + std::string(name) + "=" + str(v) + " is not supported (0 or 1)");
  return v;
}

// ONNX axes (negative counts from the end, any order) as IR axes: in [0, rank), sorted.
Expected<std::vector<int64_t>> normalizeAxes(ImportCtx &ctx, const std::vector<int64_t> &axes,
                                             int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, rank, "axis");
    if (!n)
      return n.takeStatus();
    if (std::find(out.begin(), out.end(), *n) != out.end())
      return ctx.fail("axes " + dimsToString(axes) + " name axis " + str(*n) + " twice");
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A reduction over no axes (noop_with_empty_axes): each element alone, through the
// reduction's steps other than the accumulation (ONNX: "ReduceLogSum returns the Log of input
// tensor, and ReduceSumSquare returns the Square"): L1 and L2 give |x|, LogSum log x,
// SumSquare x * x, the others (LogSumExp's log(exp x) too) x.
Expected<Value *> reduceNoAxes(ImportCtx &ctx, Value *x) {
  const std::string &op = ctx.proto().op_type();
  if (op == "ReduceL1" || op == "ReduceL2")
    return ctx.emit("Abs", {x});
  if (op == "ReduceLogSum")
    return ctx.emit("Log", {x});
  if (op == "ReduceSumSquare")
    return ctx.emit("Mul", {x, x});
  return ctx.emit("Identity", {x});
}

// Emits the reduction `irOp` of x over ONNX `axes` (empty: every axis, or none at all with
// noop_with_empty_axes).
Status emitReduce(ImportCtx &ctx, const std::vector<int64_t> &onnxAxes, int64_t keepdims,
                  int64_t noop) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  Expected<Value *> out = Status::error("unset");
  if (onnxAxes.empty() && noop) {
    out = reduceNoAxes(ctx, x);
  } else {
    std::vector<int64_t> axes;
    if (onnxAxes.empty()) {
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    } else {
      auto n = normalizeAxes(ctx, onnxAxes, rank);
      if (!n)
        return n.takeStatus();
      axes = *n;
    }
    out = ctx.emit(ctx.proto().op_type().c_str(), {x}, {{"axes", axes}, {"keepdims", keepdims}});
  }
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// Reductions before ReduceSum-13 / opset 18: axes is an attribute; absent or empty means all.
Status importReduceAttrAxes(ImportCtx &ctx) {
  auto keepdims = flagAttr(ctx, "keepdims", 1);
  if (!keepdims)
    return keepdims.takeStatus();
  return emitReduce(ctx, ctx.attrInts("axes"), *keepdims, 0);
}

// ReduceSum from opset 13 (the others from 18): axes is an optional input.
Status importReduceInputAxes(ImportCtx &ctx) {
  auto keepdims = flagAttr(ctx, "keepdims", 1);
  if (!keepdims)
    return keepdims.takeStatus();
  auto noop = flagAttr(ctx, "noop_with_empty_axes", 0);
  if (!noop)
    return noop.takeStatus();
  Value *axes = ctx.input(1);
  // Absent, or statically empty (a [0] input): no data needed.
  if (!axes || axes->type().numElements() == 0)
    return emitReduce(ctx, {}, *keepdims, *noop);
  if (axes->dtype() != DType::I64)
    return ctx.fail(std::string("axes (input 1) must be int64, got ") + dtypeName(axes->dtype()));
  auto known = ctx.constInts(1, "axes");
  if (known)
    return emitReduce(ctx, *known, *keepdims, *noop);
  // Axes known only at run time: an extension op reads them, given the result shape the model
  // declares (or pins through shape-keeping ops such as Cast and Sqrt).
  std::optional<Dims> declared = ctx.declaredDims(0);
  if (!declared)
    return ctx.fail("axes (input 1, '" + axes->name() +
                    "') is known only at run time and the model declares no static "
                    "shape for the result");
  // ReduceMax and ReduceMin of bools (opset 20) are any and all: the same reductions of 0 and 1
  // as uint8 (an empty set gives 0 and 255, false and true as ONNX has them).
  Value *x = ctx.input(0);
  const std::string &op = ctx.proto().op_type();
  bool viaU8 = x->dtype() == DType::Bool && (op == "ReduceMax" || op == "ReduceMin");
  if (viaU8) {
    auto u8 =
        ctx.emit("Cast", {x}, {{"to", std::string(dtypeName(DType::U8))}}, ctx.tempName("as_u8"));
    if (!u8)
      return u8.takeStatus();
    x = *u8;
  }
  auto out = ctx.emit("ReduceDynamic", {x, axes},
                      {{"reduction", op},
                       {"keepdims", *keepdims},
                       {"noop_with_empty_axes", *noop},
                       {"shape", *declared}},
                      viaU8 ? ctx.tempName("reduced_u8") : "");
  if (out && viaU8)
    out = ctx.emit("Cast", {*out}, {{"to", std::string(dtypeName(DType::Bool))}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importArg(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axis = normalizeAxis(ctx.attrInt("axis", 0), x->type().rank(), "axis");
  if (!axis)
    return axis.takeStatus();
  auto keepdims = flagAttr(ctx, "keepdims", 1);
  if (!keepdims)
    return keepdims.takeStatus();
  auto last = flagAttr(ctx, "select_last_index", 0);
  if (!last)
    return last.takeStatus();
  auto out = ctx.emit(ctx.proto().op_type().c_str(), {x},
                      {{"axis", *axis}, {"keepdims", *keepdims}, {"select_last_index", *last}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// Softmax, LogSoftmax, Hardmax. Opset 13 made them act along one axis. Before, they
// flattened the input to 2-D at `axis` and normalized each row: a reshape around a last-axis
// op.
Status importAlongAxis(ImportCtx &ctx) {
  const char *irOp = ctx.proto().op_type().c_str();
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  bool coerce2d = ctx.opset() < 13;
  if (rank == 0)
    return ctx.fail("input must have rank >= 1");
  auto axis = normalizeAxis(ctx.attrInt("axis", coerce2d ? 1 : -1), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  Expected<Value *> out = Status::error("unset");
  if (!coerce2d || *axis == rank - 1) {
    out = ctx.emit(irOp, {x}, {{"axis", *axis}});
  } else {
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? rows : cols) *= x->dims()[d];
    auto flat = ctx.reshape(x, {rows, cols}, ctx.tempName("rows"));
    if (!flat)
      return flat.takeStatus();
    auto y = ctx.emit(irOp, {*flat}, {{"axis", int64_t{1}}}, ctx.tempName("rowwise"));
    if (!y)
      return y.takeStatus();
    out = ctx.reshape(*y, x->dims(), ctx.outputName(0));
  }
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// CumSum and CumProd: the axis stays an operand (ODLA's CumSum and odla_ExtCumProd read it when
// they run); a constant axis is checked here.
constexpr char kCumSum[] = "CumSum", kCumProd[] = "CumProd";

template <const char *IrOp> Status importCumulative(ImportCtx &ctx) {
  Value *x = ctx.input(0), *axis = ctx.input(1);
  auto exclusive = flagAttr(ctx, "exclusive", 0);
  if (!exclusive)
    return exclusive.takeStatus();
  auto reverse = flagAttr(ctx, "reverse", 0);
  if (!reverse)
    return reverse.takeStatus();
  if (axis->type().numElements() != 1 || axis->type().rank() > 1)
    return ctx.fail("axis (input 1) must be a scalar, got " + toString(axis->type()));
  auto known = ctx.constInts(1, "axis");
  if (known) {
    auto a = normalizeAxis((*known)[0], x->type().rank(), "axis");
    if (!a)
      return a.takeStatus();
  }
  auto out = ctx.emit(IrOp, {x, axis}, {{"exclusive", *exclusive}, {"reverse", *reverse}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// Reductions take their axes as an attribute until ReduceSum-13 and the others' opset 18, then
// as an optional input.
#define REDUCE(Op, inputAxesSince)                                                                 \
  {Op, 1, nullptr, reads({"axes", "keepdims"}), importReduceAttrAxes}, {                           \
    Op, inputAxesSince, nullptr, reads({"keepdims", "noop_with_empty_axes"}),                      \
        importReduceInputAxes                                                                      \
  }

const std::vector<ImportRule> kRules = {
    REDUCE("ReduceSum", 13),
    REDUCE("ReduceMean", 18),
    REDUCE("ReduceMax", 18),
    REDUCE("ReduceMin", 18),
    REDUCE("ReduceProd", 18),
    REDUCE("ReduceL1", 18),
    REDUCE("ReduceL2", 18),
    REDUCE("ReduceLogSum", 18),
    REDUCE("ReduceLogSumExp", 18),
    REDUCE("ReduceSumSquare", 18),
    {"ArgMax", 1, nullptr, reads({"axis", "keepdims", "select_last_index"}), importArg},
    {"ArgMin", 1, nullptr, reads({"axis", "keepdims", "select_last_index"}), importArg},
    {"Softmax", 1, nullptr, reads({"axis"}), importAlongAxis},
    {"LogSoftmax", 1, nullptr, reads({"axis"}), importAlongAxis},
    {"Hardmax", 1, nullptr, reads({"axis"}), importAlongAxis},
    {"CumSum", 11, nullptr, reads({"exclusive", "reverse"}), importCumulative<kCumSum>},
    {"CumProd", 26, nullptr, reads({"exclusive", "reverse"}), importCumulative<kCumProd>},
};

#undef REDUCE

} // namespace

const std::vector<ImportRule> &reduceRules() { return kRules; }

} // namespace odlac
