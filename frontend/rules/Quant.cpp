// Import rules for quantization ONNX ops: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, and the integer and quantized-linear products MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv.
//
// QLinearConv and QLinearMatMul with constant scales, x and y quantized per tensor, become the
// IR's integer-only products (compiler/ops/Quant.cpp): int32 accumulation and fixed-point
// requantization, exact; MatMulInteger and ConvInteger with per-tensor (or per-output-channel
// weight) zero points the same products without requantization, their result the int32 sum.
// The other products are computed exactly in floats: both operands are
// dequantized with scale 1 (x - zero point, exact integers) into float32 when every partial
// sum stays below 2^24 (the bound below), otherwise into float64 (exact up to 2^53),
// multiplied with the float MatMul or Conv the ONNX MatMul/Conv rules import, and cast to
// int32 (MatMulInteger, ConvInteger); the quantized-linear ops with computed (or per-row)
// scales requantize as onnxruntime does: float32(acc) * float32(a_scale * b_scale / y_scale),
// rounded half to even, plus the output zero point, saturated.
#include "Rules.h"

#include "ops/OpDef.h"
#include "ops/Ops.h"
#include "ops/Requantize.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace odlac {
namespace {

Value *scalarF32(ImportCtx &ctx, const std::string &name, float v) {
  return ctx.constant(ctx.tempName(name), TensorType{DType::F32, {}}, &v);
}

// Whether a scale or zero point quantizes per tensor (one element).
bool perTensor(const Value *v) { return !v || v->type().numElements() == 1; }
bool oneElement(const Value *v) { return v && v->type().numElements() == 1; }

// The axis attribute for a Quantize/Dequantize whose parameters are per axis along `axis` of
// a rank-`rank` tensor, or 0 when they are per tensor (the axis is then irrelevant).
Expected<int64_t> paramAxis(const Value *scale, const Value *zeroPoint, int64_t axis,
                            int64_t rank) {
  if (perTensor(scale) && perTensor(zeroPoint))
    return int64_t{0};
  return normalizeAxis(axis, rank, "axis");
}

// Quantize and Dequantize's attributes (compiler/ops/Quant.cpp).
AttrMap quantAttrs(int64_t axis, DType to, int64_t block, int64_t saturate) {
  return {{"axis", axis},
          {"to", std::string(dtypeName(to))},
          {"block_size", block},
          {"saturate", saturate}};
}

Expected<Value *> emitQuantize(ImportCtx &ctx, Value *x, Value *scale, Value *zeroPoint,
                               int64_t axis, DType to, const std::string &name) {
  return ctx.emit("Quantize", {x, scale, zeroPoint}, quantAttrs(axis, to, 0, 1), name);
}

Expected<Value *> emitDequantize(ImportCtx &ctx, Value *x, Value *scale, Value *zeroPoint,
                                 int64_t axis, DType to, const std::string &name) {
  return ctx.emit("Dequantize", {x, scale, zeroPoint}, quantAttrs(axis, to, 0, 1), name);
}

// ---- QuantizeLinear, DequantizeLinear ----------------------------------------------------

Status checkAxisParams(ImportCtx &ctx, const Value *x, const Value *scale, const Value *zeroPoint) {
  if (ctx.opset() >= 13)
    return Status::ok();
  for (const Value *p : {scale, zeroPoint})
    if (!perTensor(p))
      return ctx.fail("per-axis " + std::string(p == scale ? "scale " : "zero point ") +
                      toString(p->type()) +
                      " needs opset 13; before, scale and zero point are "
                      "scalars (input " +
                      toString(x->type()) + ")");
  return Status::ok();
}

// The element types QuantizeLinear quantizes to (its T3 at opset 25) and DequantizeLinear reads
// (T1, int32 too).
constexpr DTypeMask kQuantized = maskOf(DType::U8) | maskOf(DType::I8) | maskOf(DType::U16) |
                                 maskOf(DType::I16) | kFloat8Types | kNarrowIntTypes |
                                 maskOf(DType::F4E2M1);
// The float types of scales and of DequantizeLinear's result.
constexpr DTypeMask kScaleTypes = maskOf(DType::F32) | maskOf(DType::F16) | maskOf(DType::BF16);

std::string typeList(DTypeMask mask) {
  std::string names;
  for (int t = 0; t < kNumDTypes; ++t)
    if (mask & maskOf(static_cast<DType>(t)))
      names += (names.empty() ? "" : ", ") + std::string(dtypeName(static_cast<DType>(t)));
  return names;
}

Status checkType(ImportCtx &ctx, const char *what, DType t, DTypeMask allowed) {
  if (!(allowed & maskOf(t)))
    return ctx.fail(std::string(what) + " element type " + dtypeName(t) + " is not supported (" +
                    typeList(allowed) + ")");
  return Status::ok();
}

// The element type an attribute names (0: none given).
Expected<std::optional<DType>> typeAttr(ImportCtx &ctx, const char *name) {
  int64_t t = ctx.attrInt(name, 0);
  if (t == 0)
    return std::optional<DType>();
  auto named = dtypeFromOnnx(static_cast<int>(t));
  if (!named)
    return ctx.fail(std::string(name) + "=" + str(t) + " (" + onnxTypeName(static_cast<int>(t)) +
                    ") is not supported");
  return std::optional<DType>(*named);
}

// block_size (opset 21: blocked parameters along axis, or 0) and output_dtype (opset 21 for
// QuantizeLinear, 23 for DequantizeLinear; none when not given).
Expected<std::pair<int64_t, std::optional<DType>>> blockAndOutputType(ImportCtx &ctx) {
  int64_t block = ctx.attrInt("block_size", 0);
  if (block < 0)
    return ctx.fail("block_size " + str(block) + " is negative");
  auto named = typeAttr(ctx, "output_dtype");
  if (!named)
    return named.takeStatus();
  return std::make_pair(block, *named);
}

// The axis attribute of parameters: normalized where they are per axis or blocked.
Expected<int64_t> quantAxis(ImportCtx &ctx, const Value *x, const Value *scale, const Value *zp,
                            int64_t block) {
  if (block > 0)
    return normalizeAxis(ctx.attrInt("axis", 1), x->type().rank(), "axis");
  return paramAxis(scale, zp, ctx.attrInt("axis", 1), x->type().rank());
}

// QuantizeLinear: the result type is the zero point's, else output_dtype (opset 21), else
// uint8; saturate (opset 19) applies to the 8-bit floats; precision (opset 23) must be
// float32 when given, the precision of odlac's division.
Status importQuantizeLinear(ImportCtx &ctx) {
  Value *x = ctx.input(0), *scale = ctx.input(1), *zp = ctx.input(2);
  if (Status s = checkAxisParams(ctx, x, scale, zp))
    return s;
  int64_t saturate = ctx.attrInt("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return ctx.fail("saturate=" + str(saturate) + " is not 0 or 1");
  auto precision = typeAttr(ctx, "precision");
  if (!precision)
    return precision.takeStatus();
  if (*precision && **precision != DType::F32)
    return ctx.fail(std::string("precision ") + dtypeName(**precision) +
                    " is not supported; only float32");
  auto attrs = blockAndOutputType(ctx);
  if (!attrs)
    return attrs.takeStatus();
  auto [block, named] = *attrs;
  DType to = zp ? zp->dtype() : named ? *named : DType::U8;
  if (zp && named && *named != to)
    return ctx.fail(std::string("output_dtype ") + dtypeName(*named) +
                    " differs from y_zero_point's " + dtypeName(to));
  for (Status s : {checkType(ctx, "input", x->dtype(), kScaleTypes | maskOf(DType::I32)),
                   checkType(ctx, "y_scale", scale->dtype(), kScaleTypes),
                   checkType(ctx, "result", to, kQuantized)})
    if (s)
      return s;
  auto axis = quantAxis(ctx, x, scale, zp, block);
  if (!axis)
    return axis.takeStatus();
  return finish(ctx, 0,
                ctx.emit("Quantize", {x, scale, zp}, quantAttrs(*axis, to, block, saturate)));
}

// DequantizeLinear: the result type is output_dtype (opset 23), else the scale's.
Status importDequantizeLinear(ImportCtx &ctx) {
  Value *x = ctx.input(0), *scale = ctx.input(1), *zp = ctx.input(2);
  if (Status s = checkAxisParams(ctx, x, scale, zp))
    return s;
  auto attrs = blockAndOutputType(ctx);
  if (!attrs)
    return attrs.takeStatus();
  auto [block, named] = *attrs;
  DType to = named ? *named : scale->dtype();
  for (Status s : {checkType(ctx, "input", x->dtype(), kQuantized | maskOf(DType::I32)),
                   checkType(ctx, "x_scale", scale->dtype(), kScaleTypes),
                   checkType(ctx, "result", to, kScaleTypes)})
    if (s)
      return s;
  auto axis = quantAxis(ctx, x, scale, zp, block);
  if (!axis)
    return axis.takeStatus();
  return finish(ctx, 0, ctx.emit("Dequantize", {x, scale, zp}, quantAttrs(*axis, to, block, 1)));
}

// ---- Reuse of other families' ONNX rules -------------------------------------------------

// Imports a synthetic ONNX node `onnxOp` over IR values through that op's own import rule (at
// this node's opset), copying the attributes named in `attrs` from this node. Returns the
// node's only result. Lets the integer products share MatMul's and Conv's attribute handling.
Expected<Value *> importAs(ImportCtx &ctx, const char *onnxOp, const std::vector<Value *> &ins,
                           const std::vector<AttrRule> &attrs, const std::string &outName,
                           const std::vector<onnx::AttributeProto> &extraAttrs = {},
                           int64_t opset = -1) {
  static const ImportCtx::DeclaredTypes kNoDeclared;
  if (opset < 0)
    opset = ctx.opset();
  const ImportRule *rule = findRule("", onnxOp, opset);
  if (!rule)
    return ctx.fail(std::string("is computed with ONNX ") + onnxOp +
                    ", which odlac cannot import at opset " + str(opset));
  onnx::NodeProto node;
  node.set_op_type(onnxOp);
  node.set_name(ctx.proto().name());
  for (const Value *v : ins)
    node.add_input(v ? v->name() : "");
  node.add_output(outName);
  for (const AttrRule &a : attrs)
    if (const onnx::AttributeProto *p = ctx.findAttr(a.onnxName))
      *node.add_attribute() = *p;
  for (const onnx::AttributeProto &a : extraAttrs)
    *node.add_attribute() = a;
  ImportCtx sub(ctx.graph(), node, opset, ins, ctx.modelDir(), kNoDeclared);
  if (Status s = importNode(sub, *rule))
    return s;
  if (!sub.outputs()[0])
    return ctx.fail(std::string("internal: the ") + onnxOp + " rule bound no result");
  return sub.outputs()[0];
}

// ---- Integer products -------------------------------------------------------------------

// Largest |x - zero_point| of an 8-bit operand.
constexpr double kMaxOperand = 255.0;
// float32 holds every integer up to 2^24 exactly.
constexpr double kExactF32 = 16777216.0;

Status check8Bit(ImportCtx &ctx, const Value *v, const char *what) {
  if (v->dtype() != DType::U8 && v->dtype() != DType::I8)
    return ctx.fail(std::string(what) + " element type " + dtypeName(v->dtype()) +
                    " is not supported (uint8, int8)");
  return Status::ok();
}

// The largest |bias| a QLinearConv bias can contribute: its data when constant, else any int32.
double maxAbsBias(ImportCtx &ctx, int i) {
  if (!ctx.hasInput(i))
    return 0.0;
  auto data = ctx.constData(i, "B");
  if (!data)
    return 2147483648.0;
  const Value *b = ctx.input(i);
  double m = 0;
  for (int64_t k = 0; k < b->type().numElements(); ++k)
    m = std::max(m, std::fabs(static_cast<double>((*data)->as<int32_t>()[k])));
  return m;
}

// The float type in which a product with `terms` terms per output stays exact.
DType accumulatorType(int64_t terms, double maxBias) {
  return static_cast<double>(terms) * kMaxOperand * kMaxOperand + maxBias <= kExactF32 ? DType::F32
                                                                                       : DType::F64;
}

// A zero point's axis: per tensor (one element) or along `axis` of the operand.
Expected<int64_t> zeroPointAxis(ImportCtx &ctx, const Value *x, const Value *zp, int64_t axis,
                                const char *what, const char *meaning) {
  if (perTensor(zp))
    return int64_t{0};
  if (axis < 0 || zp->type().rank() != 1 || zp->dims()[0] != x->dims()[axis])
    return ctx.fail(std::string(what) + " " + toString(zp->type()) + " must be a scalar or hold " +
                    std::string(meaning) + " of " + toString(x->type()) +
                    (axis >= 0 ? " (" + str(x->dims()[axis]) + ")" : std::string()));
  return axis;
}

// (x - zero point) as exact integers in `acc`, zero point per tensor or along `axis`.
Expected<Value *> centered(ImportCtx &ctx, Value *x, Value *zp, int64_t axis, const char *what,
                           const char *meaning, DType acc, Value *one) {
  auto a = zeroPointAxis(ctx, x, zp, axis, what, meaning);
  if (!a)
    return a.takeStatus();
  if (zp && zp->dtype() != x->dtype())
    return ctx.fail(std::string(what) + " element type " + dtypeName(zp->dtype()) +
                    " differs from its operand's, " + dtypeName(x->dtype()));
  return emitDequantize(ctx, x, one, zp, *a, acc, ctx.tempName(x->name() + "_int"));
}

Expected<Value *> emitCast(ImportCtx &ctx, Value *x, DType to, const std::string &name) {
  return ctx.emit("Cast", {x}, {{"to", std::string(dtypeName(to))}}, name);
}

// An accumulator (exact integers in float32 or float64) as float32, rounded as onnxruntime
// converts its int32 accumulators.
Expected<Value *> accumulatorAsF32(ImportCtx &ctx, Value *acc) {
  if (acc->dtype() == DType::F32)
    return acc;
  return emitCast(ctx, acc, DType::F32, ctx.tempName("acc_f32"));
}

// A zero point the integer products take (ops/Quant.cpp): absent, one element, or (`perChannel`)
// one per output channel, of its operand's element type.
bool integerZeroPoint(const Value *zp, const Value *x, bool perChannel, int64_t channels) {
  return !zp || (zp->dtype() == x->dtype() &&
                 (oneElement(zp) || (perChannel && zp->dims() == Dims{channels})));
}

// MatMulInteger and ConvInteger as the IR's integer product `op` without requantization (its
// result the int32 sum), when the zero points are ones it takes and the sum fits int32;
// nullptr otherwise (the exact float form then computes it).
Expected<Value *> integerSum(ImportCtx &ctx, const OpDef &op, Value *x, Value *w, Value *xZero,
                             Value *wZero, int64_t channels, int64_t terms, AttrMap attrs) {
  if (!integerZeroPoint(xZero, x, false, channels) || !integerZeroPoint(wZero, w, true, channels) ||
      !accumulatorFits(terms, 0.0))
    return nullptr;
  attrs["output_min"] = int64_t{INT32_MIN};
  attrs["output_max"] = int64_t{INT32_MAX};
  return ctx.emit(op.name, {x, w, nullptr, xZero, wZero, nullptr, nullptr, nullptr},
                  std::move(attrs));
}

Status importMatMulInteger(ImportCtx &ctx) {
  Value *a = ctx.input(0), *b = ctx.input(1);
  if (Status s = check8Bit(ctx, a, "A"))
    return s;
  if (Status s = check8Bit(ctx, b, "B"))
    return s;
  int64_t ra = a->type().rank(), rb = b->type().rank();
  if (ra < 1 || rb < 1)
    return ctx.fail("A " + toString(a->type()) + " and B " + toString(b->type()) +
                    " must have rank >= 1");
  if (ra >= 2 && rb >= 2) {
    auto integer = integerSum(ctx, ops::QLinearMatMul, a, b, ctx.input(2), ctx.input(3),
                              b->dims().back(), a->dims().back(), {});
    if (!integer || *integer)
      return finish(ctx, 0, std::move(integer));
  }
  DType acc = accumulatorType(a->dims().back(), 0.0);
  Value *one = scalarF32(ctx, "one", 1.0f);
  auto af = centered(ctx, a, ctx.input(2), ra >= 2 ? ra - 2 : -1, "a_zero_point",
                     "one entry per row", acc, one);
  if (!af)
    return af.takeStatus();
  auto bf = centered(ctx, b, ctx.input(3), rb >= 2 ? rb - 1 : -1, "b_zero_point",
                     "one entry per column", acc, one);
  if (!bf)
    return bf.takeStatus();
  auto prod = importAs(ctx, "MatMul", {*af, *bf}, {}, ctx.tempName("matmul"));
  if (!prod)
    return prod.takeStatus();
  return finish(ctx, 0, emitCast(ctx, *prod, DType::I32, ctx.outputName(0)));
}

// The attributes ConvInteger and QLinearConv pass on to Conv's rule.
const std::vector<AttrRule> kConvAttrs =
    reads({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});

// Terms per output of a convolution with weights w [M, C/group, k...].
int64_t convTerms(const Value *w) {
  int64_t n = 1;
  for (size_t d = 1; d < w->dims().size(); ++d)
    n *= w->dims()[d];
  return n;
}

Status importConvInteger(ImportCtx &ctx) {
  Value *x = ctx.input(0), *w = ctx.input(1);
  if (Status s = check8Bit(ctx, x, "x"))
    return s;
  if (Status s = check8Bit(ctx, w, "w"))
    return s;
  if (w->type().rank() < 3)
    return ctx.fail("w " + toString(w->type()) + " must have rank >= 3");
  auto attrs = convAttrs(ctx, x, w);
  if (!attrs)
    return attrs.takeStatus();
  auto integer = integerSum(ctx, ops::QLinearConv, x, w, ctx.input(2), ctx.input(3), w->dims()[0],
                            convTerms(w), *attrs);
  if (!integer || *integer)
    return finish(ctx, 0, std::move(integer));
  DType acc = accumulatorType(convTerms(w), 0.0);
  Value *one = scalarF32(ctx, "one", 1.0f);
  auto xf = centered(ctx, x, ctx.input(2), -1, "x_zero_point", "one element", acc, one);
  if (!xf)
    return xf.takeStatus();
  auto wf =
      centered(ctx, w, ctx.input(3), 0, "w_zero_point", "one entry per output channel", acc, one);
  if (!wf)
    return wf.takeStatus();
  auto conv = importAs(ctx, "Conv", {*xf, *wf}, kConvAttrs, ctx.tempName("conv"));
  if (!conv)
    return conv.takeStatus();
  return finish(ctx, 0, emitCast(ctx, *conv, DType::I32, ctx.outputName(0)));
}

// A per-tensor scale of element type `type` as a scalar, or a per-slice one reshaped to
// broadcast along `axis` of a rank-`rank` result.
Expected<Value *> broadcastable(ImportCtx &ctx, Value *scale, int64_t axis, int64_t rank,
                                const char *what, const char *meaning, int64_t extent,
                                DType type = DType::F32) {
  if (scale->dtype() != type)
    return ctx.fail(std::string(what) + " must be " + dtypeName(type) + ", got " +
                    toString(scale->type()));
  if (perTensor(scale))
    return scale->type().rank() == 0
               ? Expected<Value *>(scale)
               : ctx.reshape(scale, {}, ctx.tempName(std::string(what) + "_scalar"));
  if (axis < 0 || scale->type().rank() != 1 || scale->dims()[0] != extent)
    return ctx.fail(std::string(what) + " " + toString(scale->type()) +
                    " must be a scalar or hold " + meaning + " (" + str(extent) + ")");
  Dims dims(static_cast<size_t>(rank - axis), 1);
  dims[0] = extent;
  return ctx.reshape(scale, dims, ctx.tempName(std::string(what) + "_bcast"));
}

// y = saturate(round(float32(acc) * (s1 * s2 / s3)) + zero point), the requantization both
// quantized-linear ops end with; zero point per tensor or along `zpAxis`.
Status requantize(ImportCtx &ctx, Value *acc, Value *s1, Value *s2, Value *s3, Value *zp,
                  int64_t zpAxis, const char *zpMeaning, Value *one) {
  if (!zp)
    return ctx.fail("y_zero_point is required");
  if (Status s = check8Bit(ctx, zp, "y_zero_point"))
    return s;
  auto accF = accumulatorAsF32(ctx, acc);
  if (!accF)
    return accF.takeStatus();
  auto s12 = ctx.emit("Mul", {s1, s2}, {}, ctx.tempName("scale_product"));
  if (!s12)
    return s12.takeStatus();
  auto m = ctx.emit("Div", {*s12, s3}, {}, ctx.tempName("multiplier"));
  if (m && (*m)->dtype() != DType::F32) // float16 scales: the multiplier rounded as ONNX has it
    m = emitCast(ctx, *m, DType::F32, ctx.tempName("multiplier_f32"));
  if (!m)
    return m.takeStatus();
  auto real = ctx.emit("Mul", {*accF, *m}, {}, ctx.tempName("scaled"));
  if (!real)
    return real.takeStatus();
  auto axis = zeroPointAxis(ctx, *real, zp, zpAxis, "y_zero_point", zpMeaning);
  if (!axis)
    return axis.takeStatus();
  return finish(ctx, 0, emitQuantize(ctx, *real, one, zp, *axis, zp->dtype(), ctx.outputName(0)));
}

// The operands of a quantized-linear product, ONNX's order.
struct QLinearOperands {
  Value *x, *xScale, *xZero, *w, *wScale, *wZero, *yScale, *yZero, *bias;
};

// The product as the IR's integer-only op `op` when its scales are constants (x's and y's per
// tensor, w's per tensor or one per output channel) and so are the zero points' shapes, and the
// int32 accumulator of `terms` terms per output cannot overflow; nullptr otherwise (the exact
// float form then computes it, and reports what is wrong with its operands).
Expected<Value *> integerProduct(ImportCtx &ctx, const OpDef &op, const QLinearOperands &q,
                                 int64_t channels, int64_t terms, AttrMap attrs) {
  auto xs = constantFloats(*q.xScale), ws = constantFloats(*q.wScale),
       ys = constantFloats(*q.yScale);
  if (!xs || !ws || !ys || xs->size() != 1 || ys->size() != 1 ||
      (ws->size() != 1 && q.wScale->dims() != Dims{channels}))
    return nullptr;
  if (!oneElement(q.xZero) || !oneElement(q.yZero) ||
      (q.wZero && !oneElement(q.wZero) && q.wZero->dims() != Dims{channels}))
    return nullptr;
  if (q.yZero->dtype() != DType::U8 && q.yZero->dtype() != DType::I8)
    return nullptr;
  if (!accumulatorFits(terms, maxAbsBias(ctx, 8)))
    return nullptr;
  auto r = requantization((*xs)[0], *ws, (*ys)[0], ctx.proto().name());
  if (!r)
    return nullptr;
  Dims paramDims = ws->size() == 1 ? Dims{} : Dims{channels};
  Value *multiplier = ctx.constant(ctx.tempName("multiplier"), TensorType{DType::I32, paramDims},
                                   r->multiplier.data());
  Value *shift =
      ctx.constant(ctx.tempName("shift"), TensorType{DType::I32, paramDims}, r->shift.data());
  attrs["output_min"] = int64_t{quantMin(q.yZero->dtype())};
  attrs["output_max"] = int64_t{quantMax(q.yZero->dtype())};
  return ctx.emit(op.name, {q.x, q.w, q.bias, q.xZero, q.wZero, multiplier, shift, q.yZero},
                  std::move(attrs));
}

Status importQLinearMatMul(ImportCtx &ctx) {
  Value *a = ctx.input(0), *b = ctx.input(3);
  if (Status s = check8Bit(ctx, a, "a"))
    return s;
  if (Status s = check8Bit(ctx, b, "b"))
    return s;
  int64_t ra = a->type().rank(), rb = b->type().rank();
  if (ra < 2 || rb < 2)
    return ctx.fail("a " + toString(a->type()) + " and b " + toString(b->type()) +
                    " must have rank >= 2");
  QLinearOperands q{
      a,      ctx.input(1), ctx.input(2), b, ctx.input(4), ctx.input(5), ctx.input(6), ctx.input(7),
      nullptr};
  auto integer = integerProduct(ctx, ops::QLinearMatMul, q, b->dims().back(), a->dims().back(), {});
  if (!integer || *integer)
    return finish(ctx, 0, std::move(integer));
  DType acc = accumulatorType(a->dims().back(), 0.0);
  Value *one = scalarF32(ctx, "one", 1.0f);
  auto af = centered(ctx, a, ctx.input(2), ra - 2, "a_zero_point", "one entry per row", acc, one);
  if (!af)
    return af.takeStatus();
  auto bf =
      centered(ctx, b, ctx.input(5), rb - 1, "b_zero_point", "one entry per column", acc, one);
  if (!bf)
    return bf.takeStatus();
  auto prod = importAs(ctx, "MatMul", {*af, *bf}, {}, ctx.tempName("matmul"));
  if (!prod)
    return prod.takeStatus();
  // QLinearMatMul-21's scales share one type, float32, float16 or bfloat16; the multiplier
  // a_scale * b_scale / y_scale is computed in it (ONNX's reference does).
  int64_t ry = (*prod)->type().rank(), rows = a->dims()[ra - 2], cols = b->dims().back();
  DType st = ctx.input(1)->dtype();
  if (st != DType::F32 && st != DType::F16 && st != DType::BF16)
    return ctx.fail("a_scale must be float32, float16 or bfloat16, got " +
                    toString(ctx.input(1)->type()));
  auto as = broadcastable(ctx, ctx.input(1), ry - 2, ry, "a_scale", "one entry per row", rows, st);
  if (!as)
    return as.takeStatus();
  auto bs =
      broadcastable(ctx, ctx.input(4), ry - 1, ry, "b_scale", "one entry per column", cols, st);
  if (!bs)
    return bs.takeStatus();
  auto ys = broadcastable(ctx, ctx.input(6), ry - 2, ry, "y_scale", "one entry per row", rows, st);
  if (!ys)
    return ys.takeStatus();
  return requantize(ctx, *prod, *as, *bs, *ys, ctx.input(7), ry - 2, "one entry per row", one);
}

Status importQLinearConv(ImportCtx &ctx) {
  Value *x = ctx.input(0), *w = ctx.input(3);
  if (Status s = check8Bit(ctx, x, "x"))
    return s;
  if (Status s = check8Bit(ctx, w, "w"))
    return s;
  if (w->type().rank() < 3)
    return ctx.fail("w " + toString(w->type()) + " must have rank >= 3");
  if (ctx.hasInput(8) && ctx.input(8)->dtype() != DType::I32)
    return ctx.fail("B must be int32, got " + toString(ctx.input(8)->type()));
  auto attrs = convAttrs(ctx, x, w);
  if (!attrs)
    return attrs.takeStatus();
  QLinearOperands q{x,
                    ctx.input(1),
                    ctx.input(2),
                    w,
                    ctx.input(4),
                    ctx.input(5),
                    ctx.input(6),
                    ctx.input(7),
                    ctx.input(8)};
  auto integer = integerProduct(ctx, ops::QLinearConv, q, w->dims()[0], convTerms(w), *attrs);
  if (!integer || *integer)
    return finish(ctx, 0, std::move(integer));
  DType acc = accumulatorType(convTerms(w), maxAbsBias(ctx, 8));
  Value *one = scalarF32(ctx, "one", 1.0f);
  auto xf = centered(ctx, x, ctx.input(2), -1, "x_zero_point", "one element", acc, one);
  if (!xf)
    return xf.takeStatus();
  auto wf =
      centered(ctx, w, ctx.input(5), 0, "w_zero_point", "one entry per output channel", acc, one);
  if (!wf)
    return wf.takeStatus();
  std::vector<Value *> convIns{*xf, *wf};
  if (ctx.hasInput(8)) {
    auto bias = emitDequantize(ctx, ctx.input(8), one, nullptr, 0, acc, ctx.tempName("bias"));
    if (!bias)
      return bias.takeStatus();
    convIns.push_back(*bias);
  }
  auto conv = importAs(ctx, "Conv", convIns, kConvAttrs, ctx.tempName("conv"));
  if (!conv)
    return conv.takeStatus();
  int64_t ry = (*conv)->type().rank(), channels = w->dims()[0];
  auto xs = broadcastable(ctx, ctx.input(1), -1, ry, "x_scale", "one element", 1);
  if (!xs)
    return xs.takeStatus();
  auto ws =
      broadcastable(ctx, ctx.input(4), 1, ry, "w_scale", "one entry per output channel", channels);
  if (!ws)
    return ws.takeStatus();
  auto ys = broadcastable(ctx, ctx.input(6), -1, ry, "y_scale", "one element", 1);
  if (!ys)
    return ys.takeStatus();
  return requantize(ctx, *conv, *xs, *ws, *ys, ctx.input(7), -1, "one element", one);
}

// ---- DynamicQuantizeLinear ---------------------------------------------------------------

// scale = (max(x, 0) - min(x, 0)) / 255, zero point = saturate(round(-min(x, 0) / scale)),
// y = saturate(round(x / scale) + zero point), all uint8, as the ONNX function body says.
Status importDynamicQuantizeLinear(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (x->dtype() != DType::F32)
    return ctx.fail("input element type " + std::string(dtypeName(x->dtype())) +
                    " is not supported (float32)");
  if (x->type().numElements() == 0)
    return ctx.fail("input " + toString(x->type()) + " is empty; its range is undefined");
  onnx::AttributeProto noKeepDims;
  noKeepDims.set_name("keepdims");
  noKeepDims.set_type(onnx::AttributeProto::INT);
  noKeepDims.set_i(0);
  const double inf = std::numeric_limits<double>::infinity();
  auto lo = importAs(ctx, "ReduceMin", {x}, {}, ctx.tempName("min"), {noKeepDims});
  if (!lo)
    return lo.takeStatus();
  auto hi = importAs(ctx, "ReduceMax", {x}, {}, ctx.tempName("max"), {noKeepDims});
  if (!hi)
    return hi.takeStatus();
  auto loAdj = ctx.emit("Clamp", {*lo}, {{"min", -inf}, {"max", 0.0}}, ctx.tempName("min_adj"));
  if (!loAdj)
    return loAdj.takeStatus();
  auto hiAdj = ctx.emit("Clamp", {*hi}, {{"min", 0.0}, {"max", inf}}, ctx.tempName("max_adj"));
  if (!hiAdj)
    return hiAdj.takeStatus();
  auto range = ctx.emit("Sub", {*hiAdj, *loAdj}, {}, ctx.tempName("range"));
  if (!range)
    return range.takeStatus();
  auto scale = ctx.emit("Div", {*range, scalarF32(ctx, "qmax", 255.0f)}, {},
                        ctx.wantsOutput(1) ? ctx.outputName(1) : ctx.tempName("scale"));
  if (!scale)
    return scale.takeStatus();
  auto negMin =
      ctx.emit("Sub", {scalarF32(ctx, "zero", 0.0f), *loAdj}, {}, ctx.tempName("neg_min"));
  if (!negMin)
    return negMin.takeStatus();
  auto zp = emitQuantize(ctx, *negMin, *scale, nullptr, 0, DType::U8,
                         ctx.wantsOutput(2) ? ctx.outputName(2) : ctx.tempName("zero_point"));
  if (!zp)
    return zp.takeStatus();
  auto y = emitQuantize(ctx, x, *scale, *zp, 0, DType::U8,
                        ctx.wantsOutput(0) ? ctx.outputName(0) : ctx.tempName("y"));
  if (!y)
    return y.takeStatus();
  ctx.setOutput(0, *y);
  ctx.setOutput(1, *scale);
  ctx.setOutput(2, *zp);
  return Status::ok();
}

// ---- ONNX Runtime's QOperator ops (domain com.microsoft) --------------------------------
//
// quantize_static's QOperator format writes these contrib ops. Each is, as ONNX Runtime
// defines it, its float op (imported by the default domain's rule at the model's opset)
// between DequantizeLinear of its operands and QuantizeLinear of its result; zero points are
// optional (uint8 0). fold-quantize-dequantize then runs what folds on the integers: QGemm as
// an integer-only product, a QLinearConcat of equal quantizations as a Concat of 8-bit data.

int64_t defaultOpset(ImportCtx &ctx) {
  auto it = ctx.graph().info().opsets.find("");
  return it == ctx.graph().info().opsets.end() ? 1 : it->second;
}

// DequantizeLinear of operands (x, scale, zero point) at `i`, per tensor or along `axis`.
Expected<Value *> dequantizeOperand(ImportCtx &ctx, int i, int64_t axis = 1) {
  Value *x = ctx.input(i), *scale = ctx.input(i + 1), *zp = ctx.input(i + 2);
  if (!x || !scale)
    return ctx.fail("operand " + str(i) + " and its scale (" + str(i + 1) + ") are required");
  if (Status s = check8Bit(ctx, x, "quantized operand"))
    return s;
  if (zp && zp->dtype() != x->dtype())
    return ctx.fail("zero point element type " + std::string(dtypeName(zp->dtype())) +
                    " differs from its operand's, " + dtypeName(x->dtype()));
  if (Status s = checkType(ctx, "scale", scale->dtype(), maskOf(DType::F32)))
    return s;
  auto a = paramAxis(scale, zp, axis, x->type().rank());
  if (!a)
    return a.takeStatus();
  return emitDequantize(ctx, x, scale, zp, *a, DType::F32, ctx.tempName(x->name() + "_real"));
}

// QuantizeLinear of `real` to the result's scale and zero point at `i` (uint8 without one).
Status quantizeResult(ImportCtx &ctx, Expected<Value *> real, int i) {
  if (!real)
    return real.takeStatus();
  Value *scale = ctx.input(i), *zp = ctx.input(i + 1);
  if (!scale || !perTensor(scale) || (zp && !perTensor(zp)))
    return ctx.fail("the result's scale and zero point must be scalars");
  if (zp && zp->dtype() != DType::U8 && zp->dtype() != DType::I8)
    return ctx.fail("the result's zero point must be uint8 or int8, got " + toString(zp->type()));
  return finish(ctx, 0, emitQuantize(ctx, *real, scale, zp, 0, zp ? zp->dtype() : DType::U8, ""));
}

// QLinearLeakyRelu, QLinearSigmoid, QLinearSoftmax, QLinearAveragePool,
// QLinearGlobalAveragePool: (x, x_scale, x_zero_point, y_scale, y_zero_point).
template <const char *kOp> Status importQLinearUnary(ImportCtx &ctx) {
  if (ctx.attrInt("channels_last", 0) != 0)
    return ctx.fail("channels_last=1 (NHWC data) is not supported");
  auto x = dequantizeOperand(ctx, 0);
  if (!x)
    return x.takeStatus();
  std::vector<AttrRule> pass = reads({"alpha", "axis", "auto_pad", "ceil_mode", "count_include_pad",
                                      "kernel_shape", "pads", "strides"});
  // QLinearSoftmax's `opset`: the ONNX Softmax whose semantics it has (before 13: over the
  // flattened trailing axes).
  int64_t opset = ctx.hasAttr("opset") ? ctx.attrInt("opset", 13) : defaultOpset(ctx);
  return quantizeResult(ctx, importAs(ctx, kOp, {*x}, pass, ctx.tempName("real"), {}, opset), 3);
}

// QLinearAdd, QLinearMul: (a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale,
// c_zero_point), broadcasting.
template <const char *kOp> Status importQLinearBinary(ImportCtx &ctx) {
  auto a = dequantizeOperand(ctx, 0);
  if (!a)
    return a.takeStatus();
  auto b = dequantizeOperand(ctx, 3);
  if (!b)
    return b.takeStatus();
  return quantizeResult(
      ctx, importAs(ctx, kOp, {*a, *b}, {}, ctx.tempName("real"), {}, defaultOpset(ctx)), 6);
}

// QLinearConcat: (y_scale, y_zero_point, then x, x_scale, x_zero_point for each part).
Status importQLinearConcat(ImportCtx &ctx) {
  if (ctx.numInputs() < 5 || (ctx.numInputs() - 2) % 3 != 0)
    return ctx.fail("takes y_scale, y_zero_point and triples (x, scale, zero point), got " +
                    str(ctx.numInputs()) + " operands");
  std::vector<Value *> parts;
  for (int i = 2; i < ctx.numInputs(); i += 3) {
    auto x = dequantizeOperand(ctx, i);
    if (!x)
      return x.takeStatus();
    parts.push_back(*x);
  }
  return quantizeResult(
      ctx,
      importAs(ctx, "Concat", parts, reads({"axis"}), ctx.tempName("real"), {}, defaultOpset(ctx)),
      0);
}

// QGemm: (A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point): C an
// int32 bias at scale a_scale * b_scale; without y_scale the result is the float Gemm's.
Status importQGemm(ImportCtx &ctx) {
  auto a = dequantizeOperand(ctx, 0);
  if (!a)
    return a.takeStatus();
  bool transB = ctx.attrInt("transB", 0) != 0;
  auto b = dequantizeOperand(ctx, 3, transB ? 0 : 1); // per column of the product
  if (!b)
    return b.takeStatus();
  std::vector<Value *> ins = {*a, *b};
  if (ctx.hasInput(6)) {
    Value *c = ctx.input(6);
    if (c->dtype() != DType::I32)
      return ctx.fail("C must be int32, got " + toString(c->type()));
    auto as = constantFloats(*ctx.input(1)), bs = constantFloats(*ctx.input(4));
    Expected<Value *> scale = nullptr;
    if (as && bs && as->size() == 1) {
      std::vector<float> product;
      for (double v : *bs)
        product.push_back(static_cast<float>((*as)[0] * v));
      scale = ctx.constant(ctx.tempName("bias_scale"), TensorType{DType::F32, ctx.input(4)->dims()},
                           product.data());
    } else {
      scale = ctx.emit("Mul", {ctx.input(1), ctx.input(4)}, {}, ctx.tempName("bias_scale"));
    }
    if (!scale)
      return scale.takeStatus();
    auto axis = paramAxis(*scale, nullptr, 0, c->type().rank());
    if (!axis)
      return axis.takeStatus();
    auto bias = emitDequantize(ctx, c, *scale, nullptr, *axis, DType::F32, ctx.tempName("bias"));
    if (!bias)
      return bias.takeStatus();
    ins.push_back(*bias);
  }
  auto real =
      importAs(ctx, "Gemm", ins, reads({"alpha", "transA", "transB"}),
               ctx.hasInput(7) ? ctx.tempName("real") : ctx.outputName(0), {}, defaultOpset(ctx));
  if (!ctx.hasInput(7))
    return finish(ctx, 0, std::move(real));
  return quantizeResult(ctx, std::move(real), 7);
}

constexpr char kLeakyRelu[] = "LeakyRelu", kSigmoid[] = "Sigmoid", kSoftmax[] = "Softmax",
               kAveragePool[] = "AveragePool", kGlobalAveragePool[] = "GlobalAveragePool",
               kAdd[] = "Add", kMul[] = "Mul";

ImportRule contrib(ImportRule r) {
  r.domain = "com.microsoft";
  return r;
}

const std::vector<ImportRule> kRules = {
    {"QuantizeLinear", 10, nullptr, {}, importQuantizeLinear},
    {"QuantizeLinear", 13, nullptr,
     reads({"axis", "block_size", "output_dtype", "precision", "saturate"}), importQuantizeLinear},
    {"DequantizeLinear", 10, nullptr, {}, importDequantizeLinear},
    {"DequantizeLinear", 13, nullptr, reads({"axis", "block_size", "output_dtype"}),
     importDequantizeLinear},
    {"DynamicQuantizeLinear", 11, nullptr, {}, importDynamicQuantizeLinear},
    {"MatMulInteger", 10, nullptr, {}, importMatMulInteger},
    {"ConvInteger", 10, nullptr, kConvAttrs, importConvInteger},
    {"QLinearMatMul", 10, nullptr, {}, importQLinearMatMul},
    {"QLinearConv", 10, nullptr, kConvAttrs, importQLinearConv},
    contrib({"QLinearAdd", 1, nullptr, {}, importQLinearBinary<kAdd>}),
    contrib({"QLinearMul", 1, nullptr, {}, importQLinearBinary<kMul>}),
    contrib({"QLinearLeakyRelu", 1, nullptr, reads({"alpha"}), importQLinearUnary<kLeakyRelu>}),
    contrib({"QLinearSigmoid", 1, nullptr, {}, importQLinearUnary<kSigmoid>}),
    contrib({"QLinearSoftmax", 1, nullptr, reads({"axis", "opset"}), importQLinearUnary<kSoftmax>}),
    contrib({"QLinearAveragePool", 1, nullptr,
             reads({"auto_pad", "ceil_mode", "channels_last", "count_include_pad", "kernel_shape",
                    "pads", "strides"}),
             importQLinearUnary<kAveragePool>}),
    contrib({"QLinearGlobalAveragePool", 1, nullptr, reads({"channels_last"}),
             importQLinearUnary<kGlobalAveragePool>}),
    contrib({"QLinearConcat", 1, nullptr, reads({"axis"}), importQLinearConcat}),
    contrib({"QGemm", 1, nullptr, reads({"alpha", "transA", "transB"}), importQGemm}),
};

} // namespace

const std::vector<ImportRule> &quantRules() { return kRules; }

} // namespace odlac
