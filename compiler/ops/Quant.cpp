// Quantization ops: Quantize and Dequantize (linear, per tensor or per axis). The integer and
// quantized-linear products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) have no
// op of their own: the frontend decomposes them into Dequantize to float64 (exact integers),
// a float64 MatMul or Conv, and a requantizing Quantize (frontend/rules/Quant.cpp).
#include "lower/Lowering.h"
#include "ops/Ops.h"

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

} // namespace ops

} // namespace odlac
