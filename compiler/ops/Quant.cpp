// Quantization ops: Quantize and Dequantize (linear, per tensor or per axis), the
// integer-only quantized products QLinearConv and QLinearMatMul (odla_ext_quant.h): 8-bit
// operands, int32 accumulation, fixed-point requantization (ops/Requantize.h) and the fused
// activation's clamp, and the integer-only elementwise QLinearAdd and QLinearMul. ONNX's
// QLinearConv and QLinearMatMul with constant scales import to them, and so do QDQ models
// (passes/FoldQuantizeDequantize.cpp); the other integer products (MatMulInteger, ConvInteger, and
// the quantized-linear ones with computed scales) are decomposed by the frontend into exact float
// products (frontend/rules/Quant.cpp).
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"
#include "ops/Requantize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace odlac {
namespace {

// Element types the reference backend quantizes to and dequantizes from: the integers of the
// core ODLA ops, and the low-precision types but f8e8m0 (the extension ops).
constexpr DTypeMask kQuantTypes = maskOf(DType::I8) | maskOf(DType::U8) | maskOf(DType::I16) |
                                  maskOf(DType::U16) | maskOf(DType::I32) | maskOf(DType::U32) |
                                  (kLowPrecisionTypes & ~maskOf(DType::F8E8M0));
constexpr DTypeMask kQuantizeInputs = kFloatTypes | maskOf(DType::I32) | maskOf(DType::U32) |
                                      maskOf(DType::I8) | maskOf(DType::U8) | maskOf(DType::I16) |
                                      maskOf(DType::U16);

// The result type named by the "to" attribute (an IR type name such as "u8").
Expected<DType> targetType(const InferCtx &c, DTypeMask allowed) {
  const std::string &to = c.node().s("to");
  auto t = dtypeFromName(to);
  if (!t || !(allowed & maskOf(*t)))
    return c.fail("attribute to='" + to + "' is not a supported result type");
  return *t;
}

// scale and zero_point each hold one element (per tensor) or dims[axis] elements along `axis`
// (per axis), or with block_size > 0 have x's shape but ceil(dims[axis] / block_size) along
// axis (blocked); a zero point, when present, has the result's (Quantize) or input's
// (Dequantize) element type.
Status checkQuantParams(InferCtx &c, DType zeroPointType) {
  const TensorType &x = c.in(0);
  int64_t axis = c.i("axis"), block = c.i("block_size");
  if (block < 0)
    return c.fail("block_size " + str(block) + " is negative");
  for (int i = 1; i <= 2; ++i) {
    if (!c.hasInput(i))
      continue;
    const TensorType &p = c.in(i);
    const char *what = i == 1 ? "scale" : "zero point";
    if (block > 0) {
      if (axis < 0 || axis >= x.rank())
        return c.fail("blocked " + std::string(what) + " needs axis in [0, " + str(x.rank()) +
                      "), got " + str(axis));
      Dims want = x.dims;
      want[axis] = (want[axis] + block - 1) / block;
      if (p.dims != want)
        return c.fail(std::string("blocked ") + what + " " + toString(p) + " must be " +
                      dimsToString(want) + " (input " + toString(x) + ", blocks of " + str(block) +
                      " along axis " + str(axis) + ")");
      continue;
    }
    if (p.numElements() == 1)
      continue;
    if (axis < 0 || axis >= x.rank())
      return c.fail(std::string("per-axis ") + what + " " + toString(p) + " needs axis in [0, " +
                    str(x.rank()) + "), got " + str(axis));
    if (p.rank() != 1 || p.dims[0] != x.dims[axis])
      return c.fail(std::string(what) + " " + toString(p) + " must hold 1 element or " +
                    str(x.dims[axis]) + " (input " + toString(x) + " along axis " + str(axis) +
                    ")");
  }
  if (c.hasInput(2) && c.in(2).dtype != zeroPointType)
    return c.fail("zero point element type " + std::string(dtypeName(c.in(2).dtype)) +
                  " differs from " + dtypeName(zeroPointType));
  return Status::ok();
}

Status inferQuantize(InferCtx &c) {
  auto to = targetType(c, kQuantTypes);
  if (!to)
    return to.takeStatus();
  if (Status s = checkQuantParams(c, *to))
    return s;
  c.setOut(0, TensorType{*to, c.in(0).dims});
  return Status::ok();
}

Status inferDequantize(InferCtx &c) {
  auto to = targetType(c, kFloatTypes);
  if (!to)
    return to.takeStatus();
  if (Status s = checkQuantParams(c, c.in(0).dtype))
    return s;
  c.setOut(0, TensorType{*to, c.in(0).dims});
  return Status::ok();
}

// The core ops take the core integers per tensor or per axis; blocks and the low-precision types
// need the extensions.
bool needsExtension(const Node &n, DType quantized) {
  return n.i("block_size") > 0 || isExtensionType(quantized);
}

void lowerQuantize(LowerCtx &c) {
  const Node &n = c.node();
  auto axis = static_cast<odla_int32>(n.i("axis"));
  DType to = n.output(0)->dtype();
  if (needsExtension(n, to))
    c.setOut(0, c.sink().ExtQuantize(c.in(0), c.in(1), c.in(2), axis,
                                     static_cast<odla_int32>(n.i("block_size")), odlaType(to),
                                     {n.i("saturate") != 0}, c.outId(0)));
  else
    c.setOut(0, c.sink().Quantize(c.in(0), c.in(1), c.in(2), axis, odlaType(to), c.outId(0)));
}

void lowerDequantize(LowerCtx &c) {
  const Node &n = c.node();
  auto axis = static_cast<odla_int32>(n.i("axis"));
  odla_element_type to = odlaType(n.output(0)->dtype());
  if (needsExtension(n, n.input(0)->dtype()))
    c.setOut(0, c.sink().ExtDequantize(c.in(0), c.in(1), c.in(2), axis,
                                       static_cast<odla_int32>(n.i("block_size")), to, c.outId(0)));
  else
    c.setOut(0, c.sink().Dequantize(c.in(0), c.in(1), c.in(2), axis, to, c.outId(0)));
}

// block_size: blocked parameters (0: per tensor or per axis); saturate: Quantize to the 8-bit
// floats (odla_ExtCast's).
const std::vector<AttrDef> kQuantAttrs = {{"axis", AttrKind::Int, AttrValue(int64_t{0})},
                                          {"to", AttrKind::String, std::nullopt},
                                          {"block_size", AttrKind::Int, AttrValue(int64_t{0})},
                                          {"saturate", AttrKind::Int, AttrValue(int64_t{1})}};

// ---- QLinearConv, QLinearMatMul ------------------------------------------------------------

constexpr DTypeMask k8Bit = maskOf(DType::U8) | maskOf(DType::I8);
constexpr DTypeMask kI32 = maskOf(DType::I32);

// Operand indices shared by both products.
enum QOperand { kX, kW, kBias, kXZero, kWZero, kMultiplier, kShift, kYZero };

// Operand `i` holds one element, or (`perChannel`) one element or `channels`.
Status checkParamShape(InferCtx &c, int i, const char *what, bool perChannel, int64_t channels) {
  const TensorType &t = c.in(i);
  if (t.numElements() == 1 && t.rank() <= 1)
    return Status::ok();
  if (perChannel && t.dims == Dims{channels})
    return Status::ok();
  return c.fail(std::string(what) + " " + toString(t) + " must hold one element" +
                (perChannel ? " or one per output channel (" + str(channels) + ")" : ""));
}

// The parameters both products check: zero points, bias, multiplier and shift (within the
// ranges of odla_ext_quant.h when constant), the clamp, and the accumulator's int32 bound for
// `terms` terms per output. Returns the result's element type.
Expected<DType> checkQuantProduct(InferCtx &c, int64_t channels, int64_t terms) {
  // Without multiplier, shift and output zero point the result is the int32 sum (MatMulInteger,
  // ConvInteger), which takes no clamp.
  bool raw = !c.hasInput(kMultiplier) && !c.hasInput(kShift) && !c.hasInput(kYZero);
  if (!raw && (!c.hasInput(kMultiplier) || !c.hasInput(kShift) || !c.hasInput(kYZero)))
    return c.fail("multiplier, shift and output zero point come together, or none of them (an "
                  "int32 result)");
  if (raw && (c.i("output_min") != INT32_MIN || c.i("output_max") != INT32_MAX))
    return c.fail("an int32 result takes no clamp: output_min and output_max must be int32's "
                  "limits, got [" +
                  str(c.i("output_min")) + ", " + str(c.i("output_max")) + "]");
  DType x = c.in(kX).dtype, w = c.in(kW).dtype, y = raw ? DType::I32 : c.in(kYZero).dtype;
  if (c.hasInput(kXZero)) {
    if (Status s = checkParamShape(c, kXZero, "input zero point", false, channels))
      return s;
    if (c.in(kXZero).dtype != x)
      return c.fail("input zero point element type " + std::string(dtypeName(c.in(kXZero).dtype)) +
                    " differs from the input's, " + dtypeName(x));
  }
  if (c.hasInput(kWZero)) {
    if (Status s = checkParamShape(c, kWZero, "kernel zero point", true, channels))
      return s;
    if (c.in(kWZero).dtype != w)
      return c.fail("kernel zero point element type " + std::string(dtypeName(c.in(kWZero).dtype)) +
                    " differs from the kernel's, " + dtypeName(w));
  }
  if (!raw)
    if (Status s = checkParamShape(c, kYZero, "output zero point", false, channels))
      return s;
  double maxBias = 0;
  if (c.hasInput(kBias)) {
    if (c.in(kBias).dims != Dims{channels})
      return c.fail("bias must be i32[" + str(channels) + "], got " + toString(c.in(kBias)));
    if (const Value *b = c.inValue(kBias); b->isConstant())
      for (int64_t k = 0; k < channels; ++k)
        maxBias = std::max(maxBias, std::fabs(static_cast<double>(b->data()->as<int32_t>()[k])));
    else
      maxBias = 2147483648.0;
  }
  if (!accumulatorFits(terms, maxBias))
    return c.fail("the int32 accumulator may overflow: " + str(terms) +
                  " products of 8-bit operands per output plus a bias up to " +
                  str(static_cast<int64_t>(maxBias)) + " exceed 2^31 - 1");
  if (raw)
    return y;
  for (int i : {kMultiplier, kShift}) {
    const char *what = i == kMultiplier ? "multiplier" : "shift";
    if (Status s = checkParamShape(c, i, what, true, channels))
      return s;
    const Value *v = c.inValue(i);
    if (!v->isConstant())
      continue;
    int64_t lo = i == kMultiplier ? 0 : 1, hi = i == kMultiplier ? INT32_MAX : 62;
    for (int64_t k = 0; k < v->type().numElements(); ++k)
      if (int32_t e = v->data()->as<int32_t>()[k]; e < lo || e > hi)
        return c.fail(std::string(what) + "[" + str(k) + "] = " + str(e) + " is outside [" +
                      str(lo) + ", " + str(hi) + "]");
  }
  if (c.in(kMultiplier).dims != c.in(kShift).dims)
    return c.fail("multiplier " + toString(c.in(kMultiplier)) + " and shift " +
                  toString(c.in(kShift)) + " must have one shape");
  int64_t lo = c.i("output_min"), hi = c.i("output_max");
  if (lo > hi || lo < quantMin(y) || hi > quantMax(y))
    return c.fail("clamp [" + str(lo) + ", " + str(hi) + "] is not a range within " + dtypeName(y) +
                  "'s [" + str(quantMin(y)) + ", " + str(quantMax(y)) + "]");
  return y;
}

Status inferQLinearConv(InferCtx &c) {
  auto out = convolutionDims(c, kX, kW);
  if (!out)
    return out.takeStatus();
  const Dims w = kernelAsOis(c.in(kW).dims, isChannelsLast(c.node()));
  int64_t terms = 1;
  for (size_t d = 1; d < w.size(); ++d)
    terms *= w[d];
  auto y = checkQuantProduct(c, w[0], terms);
  if (!y)
    return y.takeStatus();
  c.setOut(0, TensorType{*y, *out});
  return Status::ok();
}

Status inferQLinearMatMul(InferCtx &c) {
  const Dims &a = c.in(kX).dims, &b = c.in(kW).dims;
  if (a.size() < 2 || b.size() < 2)
    return c.fail("operands " + dimsToString(a) + " and " + dimsToString(b) +
                  " must have rank >= 2");
  if (a.back() != b[b.size() - 2])
    return c.fail("inner dimensions differ: " + dimsToString(a) + " x " + dimsToString(b));
  auto dims = broadcastDims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!dims)
    return c.fail("batch dimensions of " + dimsToString(a) + " and " + dimsToString(b) +
                  " do not broadcast");
  auto y = checkQuantProduct(c, b.back(), a.back());
  if (!y)
    return y.takeStatus();
  dims->push_back(a[a.size() - 2]);
  dims->push_back(b.back());
  c.setOut(0, TensorType{*y, *dims});
  return Status::ok();
}

void lowerQLinearConv(LowerCtx &c) {
  const Node &n = c.node();
  const auto &pads = n.ints("pads");
  size_t half = pads.size() / 2;
  bool last = isChannelsLast(n);
  c.setOut(0, c.sink().ExtQLinearConv(
                  c.in(kX), c.in(kXZero), last ? ODLA_CHANNELS_LAST : ODLA_CHANNELS_FIRST,
                  static_cast<odla_uint32>(n.i("group")), c.in(kW), c.in(kWZero),
                  last ? ODLA_SIO : ODLA_OIS, u32s(n.ints("strides")), u32s(n.ints("dilations")),
                  u32s({pads.begin(), pads.begin() + half}),
                  u32s({pads.begin() + half, pads.end()}), c.in(kBias), c.in(kMultiplier),
                  c.in(kShift), c.in(kYZero), static_cast<odla_int32>(n.i("output_min")),
                  static_cast<odla_int32>(n.i("output_max")), c.outShape(0), c.outId(0)));
}

void lowerQLinearMatMul(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().ExtQLinearMatMul(
                  c.in(kX), c.in(kXZero), c.in(kW), c.in(kWZero), c.in(kBias), c.in(kMultiplier),
                  c.in(kShift), c.in(kYZero), static_cast<odla_int32>(n.i("output_min")),
                  static_cast<odla_int32>(n.i("output_max")), c.outShape(0), c.outId(0)));
}

// ---- QLinearAdd, QLinearMul ----------------------------------------------------------------

enum QBinaryOperand { kA, kB, kAZero, kBZero, kYZeroBinary };

// The zero point at `i`, when present: a constant scalar of `of`'s element type (the backends
// read it as they build the node).
Status checkBinaryZeroPoint(InferCtx &c, int i, const char *what, int of) {
  if (!c.hasInput(i))
    return Status::ok();
  const TensorType &z = c.in(i);
  if (z.numElements() != 1 || z.dtype != c.in(of).dtype || !c.inValue(i)->isConstant())
    return c.fail(std::string(what) + " " + toString(z) + " must be a constant scalar of " +
                  dtypeName(c.in(of).dtype));
  return Status::ok();
}

// odla_ext_quant.h's rules: multipliers in [0, 2^31), shift in [1, 62], the clamp within the
// output zero point's type; the operands broadcast.
Status inferQLinearBinary(InferCtx &c) {
  if (Status s = checkBinaryZeroPoint(c, kAZero, "a zero point", kA))
    return s;
  if (Status s = checkBinaryZeroPoint(c, kBZero, "b zero point", kB))
    return s;
  const TensorType &yz = c.in(kYZeroBinary);
  if (yz.numElements() != 1 || !c.inValue(kYZeroBinary)->isConstant())
    return c.fail("output zero point " + toString(yz) + " must be a constant scalar");
  bool add = c.node().is(ops::QLinearAdd);
  for (const char *m : add ? std::vector<const char *>{"a_multiplier", "b_multiplier"}
                           : std::vector<const char *>{"multiplier"})
    if (c.i(m) < 0 || c.i(m) > INT32_MAX)
      return c.fail(std::string(m) + " " + str(c.i(m)) + " is outside [0, 2^31)");
  if (c.i("shift") < 1 || c.i("shift") > 62)
    return c.fail("shift " + str(c.i("shift")) + " is outside [1, 62]");
  int64_t lo = c.i("output_min"), hi = c.i("output_max");
  if (lo > hi || lo < quantMin(yz.dtype) || hi > quantMax(yz.dtype))
    return c.fail("clamp [" + str(lo) + ", " + str(hi) + "] is not a range within " +
                  dtypeName(yz.dtype) + "'s [" + str(quantMin(yz.dtype)) + ", " +
                  str(quantMax(yz.dtype)) + "]");
  auto dims = broadcastDims(c.in(kA).dims, c.in(kB).dims);
  if (!dims)
    return c.fail("operands " + toString(c.in(kA)) + " and " + toString(c.in(kB)) +
                  " do not broadcast");
  c.setOut(0, TensorType{yz.dtype, *dims});
  return Status::ok();
}

void lowerQLinearAdd(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().ExtQLinearAdd(
                  c.in(kA), c.in(kAZero), static_cast<odla_int32>(n.i("a_multiplier")), c.in(kB),
                  c.in(kBZero), static_cast<odla_int32>(n.i("b_multiplier")),
                  static_cast<odla_int32>(n.i("shift")), c.in(kYZeroBinary),
                  static_cast<odla_int32>(n.i("output_min")),
                  static_cast<odla_int32>(n.i("output_max")), c.outShape(0), c.outId(0)));
}

void lowerQLinearMul(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().ExtQLinearMul(
                  c.in(kA), c.in(kAZero), c.in(kB), c.in(kBZero),
                  static_cast<odla_int32>(n.i("multiplier")), static_cast<odla_int32>(n.i("shift")),
                  c.in(kYZeroBinary), static_cast<odla_int32>(n.i("output_min")),
                  static_cast<odla_int32>(n.i("output_max")), c.outShape(0), c.outId(0)));
}

const std::vector<OperandDef> kQuantBinaryOperands = {
    {"a", OperandDef::Required, k8Bit},
    {"b", OperandDef::Required, k8Bit},
    {"a_zero_point", OperandDef::Optional, k8Bit},
    {"b_zero_point", OperandDef::Optional, k8Bit},
    {"y_zero_point", OperandDef::Required, k8Bit}};

// The operands of both products, in QOperand order.
const std::vector<OperandDef> kQuantProductOperands = {
    {"x", OperandDef::Required, k8Bit},
    {"w", OperandDef::Required, k8Bit},
    {"bias", OperandDef::Optional, kI32},
    {"x_zero_point", OperandDef::Optional, k8Bit},
    {"w_zero_point", OperandDef::Optional, k8Bit},
    {"multiplier", OperandDef::Optional, kI32},
    {"shift", OperandDef::Optional, kI32},
    {"y_zero_point", OperandDef::Optional, k8Bit}};
const AttrDef kOutputMin = {"output_min", AttrKind::Int, std::nullopt};
const AttrDef kOutputMax = {"output_max", AttrKind::Int, std::nullopt};

// Quantize: y = saturate(round_half_even(x / scale) + zero_point), zero_point 0 when absent
// (the 8- and 4-bit floats: odla_ext_quant.h). Dequantize: y = (x - zero_point) * scale.
} // namespace

namespace ops {

const OpDef Quantize = {"Quantize",
                        {{"x", OperandDef::Required, kQuantizeInputs},
                         {"scale", OperandDef::Required, kFloatTypes},
                         {"zero_point", OperandDef::Optional, kQuantTypes}},
                        1,
                        kQuantAttrs,
                        FusionClass::Broadcast,
                        kTraitNone,
                        inferQuantize,
                        lowerQuantize};
const OpDef Dequantize = {"Dequantize",
                          {{"x", OperandDef::Required, kQuantTypes},
                           {"scale", OperandDef::Required, kFloatTypes},
                           {"zero_point", OperandDef::Optional, kQuantTypes}},
                          1,
                          kQuantAttrs,
                          FusionClass::Broadcast,
                          kTraitNone,
                          inferDequantize,
                          lowerDequantize};
// y = clamp(requantize(bias + sum (x - x_zero_point) * (w - w_zero_point)) + y_zero_point,
// output_min, output_max), odla_ext_quant.h's rule; Conv's geometry attributes and layout.
// Without multiplier, shift and y_zero_point, y is the int32 sum itself (ConvInteger,
// MatMulInteger) and the clamp int32's limits.
const OpDef QLinearConv = {
    "QLinearConv",
    kQuantProductOperands,
    1,
    {{"group", AttrKind::Int, AttrValue(int64_t{1})},
     {"strides", AttrKind::Ints, std::nullopt},
     {"dilations", AttrKind::Ints, std::nullopt},
     {"pads", AttrKind::Ints, std::nullopt},
     kOutputMin,
     kOutputMax,
     {kLayoutAttr, AttrKind::String, AttrValue(std::string("channels_first"))}},
    FusionClass::Opaque,
    kTraitNone,
    inferQLinearConv,
    lowerQLinearConv,
    BatchRule::RowsOfFirst,
    FlopRule::Conv};
// The same over ONNX MatMul's product: x [..., M, K] times w [..., K, N], per column.
const OpDef QLinearMatMul = {"QLinearMatMul",          kQuantProductOperands, 1,
                             {kOutputMin, kOutputMax}, FusionClass::Opaque,   kTraitNone,
                             inferQLinearMatMul,       lowerQLinearMatMul,    BatchRule::MatMul,
                             FlopRule::MatrixProduct};

// y = clamp(round_half_even(((a - a_zero_point) * a_multiplier + (b - b_zero_point) *
// b_multiplier) / 2^shift) + y_zero_point, output_min, output_max), broadcasting:
// odla_ext_quant.h's integer-only Add (a QDQ Add, ONNX Runtime's QLinearAdd).
const OpDef QLinearAdd = {"QLinearAdd",
                          kQuantBinaryOperands,
                          1,
                          {{"a_multiplier", AttrKind::Int, std::nullopt},
                           {"b_multiplier", AttrKind::Int, std::nullopt},
                           {"shift", AttrKind::Int, std::nullopt},
                           kOutputMin,
                           kOutputMax},
                          FusionClass::Broadcast,
                          kLayoutAgnostic,
                          inferQLinearBinary,
                          lowerQLinearAdd};
// The same with the product: round_half_even((a - a_zero_point) * (b - b_zero_point) *
// multiplier / 2^shift).
const OpDef QLinearMul = {"QLinearMul",
                          kQuantBinaryOperands,
                          1,
                          {{"multiplier", AttrKind::Int, std::nullopt},
                           {"shift", AttrKind::Int, std::nullopt},
                           kOutputMin,
                           kOutputMax},
                          FusionClass::Broadcast,
                          kLayoutAgnostic,
                          inferQLinearBinary,
                          lowerQLinearMul};

} // namespace ops

} // namespace odlac
