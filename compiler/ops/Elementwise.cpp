// Elementwise unary ops: math, activations, predicates, Clamp, Cast, Not, BitwiseNot and
// Identity. Each lowers to the one ODLA call of the same name (BitwiseNot: odla_ExtBitwiseNot); the
// reference backend's builders (runtime_stubs/reference/ops_elementwise.c, ops_unary_cast.c) define
// their semantics.
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

namespace odlac {
namespace {

constexpr DTypeMask kSigned = kFloatTypes | kSignedIntTypes;
constexpr DTypeMask kBool = maskOf(DType::Bool);

Status inferUnary(InferCtx &c) {
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferPredicate(InferCtx &c) {
  c.setOut(0, TensorType{DType::Bool, c.in(0).dims});
  return Status::ok();
}

// odla_Clamp takes float32 bounds: each must be NaN-free and exactly a float32 (or an
// infinity, meaning no bound), so that the ODLA call computes what the IR says. min > max
// is valid: every element becomes max (numpy.clip, ONNX Clip).
Status inferClamp(InferCtx &c) {
  for (const char *bound : {"min", "max"}) {
    double v = c.f(bound);
    if (std::isnan(v))
      return c.fail(std::string(bound) + " is NaN");
    if (static_cast<double>(static_cast<float>(v)) != v && !std::isinf(v)) {
      return c.fail(fmt::format(
          "{} {:.17g} is not exactly representable as float32 (odla_Clamp's bound type)", bound,
          v));
    }
  }
  return inferUnary(c);
}

Status inferCelu(InferCtx &c) {
  if (c.f("alpha") == 0)
    return c.fail("alpha must not be 0");
  return inferUnary(c);
}

// Cast's round modes for f8e8m0, in the order of the ODLA_EXT_ROUND_* codes.
const std::vector<std::string> kRoundModes = {"up", "down", "nearest"};

int roundModeCode(const std::string &mode) {
  for (size_t i = 0; i < kRoundModes.size(); ++i)
    if (kRoundModes[i] == mode)
      return static_cast<int>(i);
  return -1;
}

Status inferCast(InferCtx &c) {
  auto to = dtypeFromName(c.node().s("to"));
  if (!to)
    return c.fail("unknown target element type '" + c.node().s("to") + "'");
  if (roundModeCode(c.node().s("round_mode")) < 0)
    return c.fail("round_mode '" + c.node().s("round_mode") + "' is not one of up, down, nearest");
  c.setOut(0, TensorType{*to, c.in(0).dims});
  return Status::ok();
}

// odla_Cast saturates and rounds up; other settings need the extension where they matter
// (saturate: the 8-bit floats; round_mode: f8e8m0).
void lowerCast(LowerCtx &c) {
  const Node &n = c.node();
  DType to = n.output(0)->dtype();
  bool saturate = n.i("saturate") != 0;
  int round = roundModeCode(n.s("round_mode"));
  bool f8 = (maskOf(to) & (kFloat8Types | maskOf(DType::F8E8M0))) != 0;
  if ((f8 && !saturate) || (to == DType::F8E8M0 && round != ODLA_EXT_ROUND_UP))
    c.setOut(0, c.sink().ExtCast(c.in(0), odlaType(to), {saturate}, round, c.outId(0)));
  else
    c.setOut(0, c.sink().Cast(c.in(0), odlaType(to), c.outId(0)));
}

float attrF(const LowerCtx &c, const char *name) { return static_cast<float>(c.node().f(name)); }

// One row of a unary op on operand `x` of the given element types.
OpDef unary(const char *name, DTypeMask types, LowerFn lower, std::vector<AttrDef> attrs = {},
            InferFn infer = inferUnary) {
  return {name,
          {{"x", OperandDef::Required, types}},
          1,
          std::move(attrs),
          FusionClass::Elementwise,
          kLayoutAgnostic,
          infer,
          lower};
}

AttrDef floatAttr(const char *name, double dflt) {
  return {name, AttrKind::Float, AttrValue(dflt)};
}

#define UNARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.outId(0))); }
#define ACTIVATION1(Name, a)                                                                       \
  [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), attrF(c, a), c.outId(0))); }
#define ACTIVATION2(Name, a, b)                                                                    \
  [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), attrF(c, a), attrF(c, b), c.outId(0))); }

} // namespace

namespace ops {

const OpDef Identity = {"Identity",
                        {{"x", OperandDef::Required, kStorageTypes}},
                        1,
                        {},
                        FusionClass::Injective,
                        kLayoutAgnostic | kShapeOnly,
                        inferUnary,
                        [](LowerCtx &c) { c.setOut(0, c.sink().CloneValue(c.in(0), c.outId(0))); },
                        BatchRule::AlongAxis};
// Math.
const OpDef Abs = unary("Abs", kNumericTypes, UNARY(Abs));
const OpDef Neg = unary("Neg", kSigned, UNARY(Neg));
const OpDef Sign = unary("Sign", kNumericTypes, UNARY(Sign));
const OpDef Exp = unary("Exp", kFloatTypes, UNARY(Exp));
const OpDef Log = unary("Log", kFloatTypes, UNARY(Log));
const OpDef Sqrt = unary("Sqrt", kFloatTypes, UNARY(Sqrt));
const OpDef Reciprocal = unary("Reciprocal", kFloatTypes, UNARY(Reciprocal));
const OpDef Floor = unary("Floor", kFloatTypes, UNARY(Floor));
const OpDef Ceil = unary("Ceil", kFloatTypes, UNARY(Ceil));
// half to even
const OpDef Round = unary("Round", kFloatTypes, UNARY(Round));
const OpDef Sin = unary("Sin", kFloatTypes, UNARY(Sin));
const OpDef Cos = unary("Cos", kFloatTypes, UNARY(Cos));
const OpDef Tan = unary("Tan", kFloatTypes, UNARY(Tan));
const OpDef Asin = unary("Asin", kFloatTypes, UNARY(ASin));
const OpDef Acos = unary("Acos", kFloatTypes, UNARY(ACos));
const OpDef Atan = unary("Atan", kFloatTypes, UNARY(ATan));
const OpDef Sinh = unary("Sinh", kFloatTypes, UNARY(Sinh));
const OpDef Cosh = unary("Cosh", kFloatTypes, UNARY(Cosh));
const OpDef Asinh = unary("Asinh", kFloatTypes, UNARY(ASinh));
const OpDef Acosh = unary("Acosh", kFloatTypes, UNARY(ACosh));
const OpDef Atanh = unary("Atanh", kFloatTypes, UNARY(ATanh));
// integers: truncated toward zero
const OpDef Erf = unary("Erf", kNumericTypes, UNARY(Erf));
// Predicates (bool results) and logic.
const OpDef IsNaN = unary("IsNaN", kFloatTypes, UNARY(IsNaN), {}, inferPredicate);
const OpDef IsInf = unary(
    "IsInf", kFloatTypes,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().IsInf(c.in(0), {c.node().i("detect_positive") != 0},
                                 {c.node().i("detect_negative") != 0}, c.outId(0)));
    },
    {{"detect_positive", AttrKind::Int, AttrValue(int64_t{1})},
     {"detect_negative", AttrKind::Int, AttrValue(int64_t{1})}},
    inferPredicate);
const OpDef Not = unary("Not", kBool, UNARY(Not));
const OpDef BitwiseNot = unary("BitwiseNot", kIntTypes, UNARY(ExtBitwiseNot));
// Activations.
const OpDef Relu = unary("Relu", kSigned, UNARY(Relu));
const OpDef Sigmoid = unary("Sigmoid", kFloatTypes, UNARY(Sigmoid));
const OpDef Tanh = unary("Tanh", kFloatTypes, UNARY(Tanh));
const OpDef Softplus = unary("Softplus", kFloatTypes, UNARY(Softplus));
const OpDef Softsign = unary("Softsign", kFloatTypes, UNARY(Softsign));
const OpDef LeakyRelu =
    unary("LeakyRelu", kFloatTypes, ACTIVATION1(LeakyRelu, "alpha"), {floatAttr("alpha", 0.01)});
const OpDef Elu = unary("Elu", kFloatTypes, ACTIVATION1(Elu, "alpha"), {floatAttr("alpha", 1.0)});
const OpDef Selu = unary(
    "Selu", kFloatTypes, ACTIVATION2(Selu, "alpha", "gamma"),
    {floatAttr("alpha", 1.67326319217681884765625), floatAttr("gamma", 1.05070102214813232421875)});
const OpDef Celu =
    unary("Celu", kFloatTypes, ACTIVATION1(Celu, "alpha"), {floatAttr("alpha", 1.0)}, inferCelu);
const OpDef HardSigmoid =
    unary("HardSigmoid", kFloatTypes, ACTIVATION2(HardSigmoid, "alpha", "beta"),
          {floatAttr("alpha", 0.2), floatAttr("beta", 0.5)});
const OpDef ThresholdedRelu =
    unary("ThresholdedRelu", kFloatTypes, ACTIVATION1(ThresholdedRelu, "alpha"),
          {floatAttr("alpha", 1.0)});
const OpDef Shrink = unary("Shrink", kNumericTypes, ACTIVATION2(Shrink, "bias", "lambd"),
                           {floatAttr("bias", 0.0), floatAttr("lambd", 0.5)});
// min(max(x, min), max); integers exact (bounds rounded inward, saturated).
const OpDef Clamp = unary(
    "Clamp", kNumericTypes, ACTIVATION2(Clamp, "min", "max"),
    {{"min", AttrKind::Float, std::nullopt}, {"max", AttrKind::Float, std::nullopt}}, inferClamp);
// Conversion: `to` is an IR element type name (f32, i64, bool...); saturate and round_mode
// as ONNX Cast's (odla_ExtCast).
const OpDef Cast = unary("Cast", kStorageTypes, lowerCast,
                         {{"to", AttrKind::String, std::nullopt},
                          {"saturate", AttrKind::Int, AttrValue(int64_t{1})},
                          {"round_mode", AttrKind::String, AttrValue(std::string("up"))}},
                         inferCast);

} // namespace ops

namespace {

#undef UNARY
#undef ACTIVATION1
#undef ACTIVATION2

} // namespace

} // namespace odlac
