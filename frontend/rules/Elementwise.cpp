// Import rules for unary elementwise ONNX ops: math, activations, predicates, Not, Clip,
// Cast/CastLike and Dropout, and the gated activation SwiGLU. Most map 1:1 onto the
// IR op of the same name; HardSwish, Clip, Cast, CastLike, Dropout and SwiGLU are functions.
#include "Rules.h"

#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace odlac {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Constant scalars of any element type, read exactly ----------------------------------

float halfToFloat(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float mag = exp == 0x1f ? (mant ? std::numeric_limits<float>::quiet_NaN()
                                  : std::numeric_limits<float>::infinity())
              : exp == 0  ? std::ldexp(static_cast<float>(mant), -24)
                          : std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The shortest decimal that reads back as v, for messages.
std::string shortest(double v) {
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    text = fmt::format("{:.{}g}", v, precision);
    if (std::strtod(text.c_str(), nullptr) == v)
      break;
  }
  return text;
}

// One element of a numeric or bool constant: floats as double, integers exactly.
struct Scalar {
  enum Kind { Float, Signed, Unsigned } kind;
  double f = 0;
  int64_t s = 0;
  uint64_t u = 0;
  bool nonzero() const { return kind == Float ? f != 0 : (kind == Signed ? s != 0 : u != 0); }
  std::string str() const {
    return kind == Float ? shortest(f) : kind == Signed ? std::to_string(s) : std::to_string(u);
  }
};

Expected<Scalar> constScalarOf(ImportCtx &ctx, int i, const char *what) {
  auto data = ctx.constData(i, what);
  if (!data)
    return data.takeStatus();
  const Value *v = ctx.input(i);
  if (v->type().numElements() != 1)
    return ctx.fail(std::string(what) + " must hold one element, got " + toString(v->type()));
  const Buffer &b = **data;
  Scalar r{Scalar::Float};
  auto sgn = [&](int64_t x) { r.kind = Scalar::Signed, r.s = x; };
  auto uns = [&](uint64_t x) { r.kind = Scalar::Unsigned, r.u = x; };
  switch (v->dtype()) {
  case DType::F32:
    r.f = *b.as<float>();
    break;
  case DType::F64:
    r.f = *b.as<double>();
    break;
  case DType::F16:
    r.f = halfToFloat(*b.as<uint16_t>());
    break;
  case DType::BF16:
    r.f = bf16ToFloat(*b.as<uint16_t>());
    break;
  case DType::I8:
    sgn(*b.as<int8_t>());
    break;
  case DType::I16:
    sgn(*b.as<int16_t>());
    break;
  case DType::I32:
    sgn(*b.as<int32_t>());
    break;
  case DType::I64:
    sgn(*b.as<int64_t>());
    break;
  case DType::U8:
  case DType::Bool:
    uns(*b.as<uint8_t>());
    break;
  case DType::U16:
    uns(*b.as<uint16_t>());
    break;
  case DType::U32:
    uns(*b.as<uint32_t>());
    break;
  case DType::U64:
    uns(*b.as<uint64_t>());
    break;
  default:
    return ctx.fail(std::string(what) + " of element type " + dtypeName(v->dtype()) +
                    " is not supported");
  }
  return r;
}

// ---- HardSwish ------------------------------------------------------------------------------

// ODLA 0.5 has no HardSwish: x * HardSigmoid(x; alpha = 1/6, beta = 0.5), as ONNX defines it.
Status importHardSwish(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto hs =
      ctx.emit("HardSigmoid", {x}, {{"alpha", static_cast<double>(1.0f / 6.0f)}, {"beta", 0.5}},
               ctx.tempName("hard_sigmoid"));
  if (!hs)
    return hs.takeStatus();
  return finish(ctx, 0, ctx.emit("Mul", {x, *hs}));
}

// ---- Mish, Swish, Gelu ------------------------------------------------------------------------

// Mish-18: x * tanh(softplus(x)), ONNX's own definition (its function body).
Status importMish(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto sp = ctx.emit("Softplus", {x}, {}, ctx.tempName("softplus"));
  if (!sp)
    return sp.takeStatus();
  auto t = ctx.emit("Tanh", {*sp}, {}, ctx.tempName("tanh"));
  if (!t)
    return t.takeStatus();
  return finish(ctx, 0, ctx.emit("Mul", {x, *t}));
}

// x * sigmoid(alpha * x), as ONNX's Swish-24 function body computes it; the result is named
// `name` (empty: the node's output).
Expected<Value *> emitSwish(ImportCtx &ctx, Value *x, double alpha, const std::string &name) {
  Value *scaled = x;
  if (alpha != 1.0) {
    auto a = ctx.emit("Cast", {ctx.constant(ctx.tempName("alpha"), {DType::F64, {}}, &alpha)},
                      {{"to", std::string(dtypeName(x->dtype()))}}, ctx.tempName("alpha_t"));
    if (!a)
      return a.takeStatus();
    auto m = ctx.emit("Mul", {*a, x}, {}, ctx.tempName("scaled"));
    if (!m)
      return m.takeStatus();
    scaled = *m;
  }
  auto s = ctx.emit("Sigmoid", {scaled}, {}, ctx.tempName("sigmoid"));
  if (!s)
    return s.takeStatus();
  return ctx.emit("Mul", {x, *s}, {}, name);
}

Status importSwish(ImportCtx &ctx) {
  return finish(ctx, 0, emitSwish(ctx, ctx.input(0), ctx.attrFloat("alpha", 1.0), ""));
}

// SwiGLU-28: Swish_alpha(A) * B; A and B have one type and shape (it does not broadcast).
Status importSwiGLU(ImportCtx &ctx) {
  Value *a = ctx.input(0), *b = ctx.input(1);
  if (a->dtype() != b->dtype() || a->dims() != b->dims())
    return ctx.fail("A " + toString(a->type()) + " and B " + toString(b->type()) +
                    " must have one element type and shape: SwiGLU does not broadcast");
  auto gate = emitSwish(ctx, a, ctx.attrFloat("alpha", 1.0), ctx.tempName("gate"));
  if (!gate)
    return gate.takeStatus();
  return finish(ctx, 0, ctx.emit("Mul", {*gate, b}));
}

// Gelu-20: approximate 'none' (erf) or 'tanh'.
Status importGelu(ImportCtx &ctx) {
  std::string approximate = ctx.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.fail("approximate='" + approximate + "' is not one of none, tanh");
  return finish(
      ctx, 0, ctx.emit("Gelu", {ctx.input(0)}, {{"approximate", int64_t{approximate == "tanh"}}}));
}

// ---- Clip ---------------------------------------------------------------------------------

Status emitClamp(ImportCtx &ctx, double lo, double hi) {
  return finish(ctx, 0, ctx.emit("Clamp", {ctx.input(0)}, {{"min", lo}, {"max", hi}}));
}

// Before opset 11, min and max are attributes; their defaults are -FLT_MAX and FLT_MAX.
Status importClip6(ImportCtx &ctx) {
  return emitClamp(ctx, ctx.attrFloat("min", -FLT_MAX), ctx.attrFloat("max", FLT_MAX));
}

// Whether the integer bound b leaves no element of integer type t out: b <= t's minimum for
// a lower bound, b >= t's maximum for an upper one.
bool boundsNothing(const Scalar &b, DType t, bool upper) {
  int bits = static_cast<int>(dtypeBytes(t)) * 8;
  if (dtypeInfo(t).isSigned) {
    int64_t max = static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1), min = -max - 1;
    if (b.kind == Scalar::Signed)
      return upper ? b.s >= max : b.s <= min;
    return upper && b.u >= static_cast<uint64_t>(max);
  }
  uint64_t max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (b.kind == Scalar::Signed)
    return upper ? b.s >= 0 && static_cast<uint64_t>(b.s) >= max : b.s <= 0;
  return upper ? b.u >= max : b.u == 0;
}

// The float32 bound of odla_Clamp that computes exactly what ONNX's bound b does on elements
// of type t: +-inf when b leaves no integer element out, b itself when it is a float32 (or an
// infinity), nullopt when no float32 does (an integer beyond 2^24 or a float64 that is not a
// float32).
std::optional<double> clampBound(const Scalar &b, DType t, bool upper) {
  if (b.kind == Scalar::Float)
    return static_cast<double>(static_cast<float>(b.f)) == b.f || std::isinf(b.f)
               ? std::optional<double>(b.f)
               : std::nullopt;
  if (isInteger(t) && boundsNothing(b, t, upper))
    return upper ? kInf : -kInf;
  float f = b.kind == Scalar::Signed ? static_cast<float>(b.s) : static_cast<float>(b.u);
  double fd = static_cast<double>(f);
  bool exact = b.kind == Scalar::Signed
                   ? fd >= -9223372036854775808.0 && fd < 9223372036854775808.0 &&
                         static_cast<int64_t>(f) == b.s
                   : fd < 18446744073709551616.0 && static_cast<uint64_t>(f) == b.u;
  return exact ? std::optional<double>(fd) : std::nullopt;
}

// Clip with bounds odla_Clamp cannot take (not constant, or no float32 gives the exact
// result): min(max(x, min), max) with the broadcasting Max and Min ops.
Status importClipMinMax(ImportCtx &ctx, const std::string &why) {
  if (!findOp("Max") || !findOp("Min"))
    return ctx.fail(why + "; odla_Clamp takes constant float32 bounds");
  Value *y = ctx.input(0);
  if (ctx.hasInput(1)) {
    auto m = ctx.emit("Max", {y, ctx.input(1)}, {}, ctx.hasInput(2) ? ctx.tempName("max") : "");
    if (!m)
      return m.takeStatus();
    y = *m;
  }
  if (ctx.hasInput(2)) {
    auto m = ctx.emit("Min", {y, ctx.input(2)});
    if (!m)
      return m.takeStatus();
    y = *m;
  }
  ctx.setOutput(0, y);
  return Status::ok();
}

// Opset 11 moved min and max to optional inputs (absent: no bound). Constant bounds that a
// float32 represents become odla_Clamp; others take Max and Min.
Status importClip11(ImportCtx &ctx) {
  DType t = ctx.input(0)->dtype();
  double bounds[2] = {-kInf, kInf};
  const char *names[2] = {"min", "max"};
  for (int k = 0; k < 2; ++k) {
    if (!ctx.hasInput(k + 1))
      continue;
    const Value *v = ctx.input(k + 1);
    if (v->type().numElements() != 1)
      return ctx.fail(std::string(names[k]) + " must hold one element, got " + toString(v->type()));
    if (!isComputableFromConstants(*v))
      return importClipMinMax(ctx, std::string(names[k]) + " (input " + std::to_string(k + 1) +
                                       ", '" + v->name() + "') is not a compile-time constant");
    auto s = constScalarOf(ctx, k + 1, names[k]);
    if (!s)
      return s.takeStatus();
    if (s->kind == Scalar::Float && std::isnan(s->f))
      return ctx.fail(std::string(names[k]) + " is NaN");
    auto b = clampBound(*s, t, k == 1);
    if (!b)
      return importClipMinMax(ctx, std::string(names[k]) + " " + s->str() + " of a " +
                                       dtypeName(t) + " input is not exactly a float32");
    bounds[k] = *b;
  }
  return emitClamp(ctx, bounds[0], bounds[1]);
}

// ---- Cast, CastLike -----------------------------------------------------------------------

// saturate (opset 19) and round_mode (opset 24) choose how values out of a float8 type's
// range, and values between float8e8m0's powers of two, convert; they have no effect on a cast
// to any other type (ONNX ignores them there too), but their values are still checked.
Status emitCast(ImportCtx &ctx, int onnxType) {
  int64_t saturate = ctx.attrInt("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return ctx.fail("saturate=" + std::to_string(saturate) + " is not 0 or 1");
  std::string roundMode = ctx.attrString("round_mode", "up");
  if (roundMode != "up" && roundMode != "down" && roundMode != "nearest")
    return ctx.fail("round_mode='" + roundMode + "' is not one of up, down, nearest");
  auto to = dtypeFromOnnx(onnxType);
  if (!to)
    return ctx.fail(std::string("cast to ") + onnxTypeName(onnxType) +
                    " is not supported (odlac has no " + onnxTypeName(onnxType) + " tensors)");
  DType from = ctx.input(0)->dtype();
  if ((from == DType::Str) != (*to == DType::Str))
    return ctx.fail(std::string("cast from ") + dtypeName(from) + " to " + dtypeName(*to) +
                    " is not supported (odlac does not format or parse numbers as text)");
  return finish(ctx, 0,
                ctx.emit("Cast", {ctx.input(0)},
                         {{"to", std::string(dtypeName(*to))},
                          {"saturate", saturate},
                          {"round_mode", roundMode}}));
}

Status importCast(ImportCtx &ctx) {
  if (!ctx.hasAttr("to"))
    return ctx.fail("attribute 'to' is required");
  return emitCast(ctx, static_cast<int>(ctx.attrInt("to", 0)));
}

Status importCastLike(ImportCtx &ctx) {
  return emitCast(ctx, dtypeInfo(ctx.input(1)->dtype()).onnxType);
}

// ---- Dropout ------------------------------------------------------------------------------

// The bytes of one element 1 of `dtype` (true for bool).
std::vector<unsigned char> oneOf(DType dtype) {
  std::vector<unsigned char> one(dtypeBytes(dtype), 0);
  auto put = [&](auto v) { std::memcpy(one.data(), &v, sizeof v); };
  switch (dtype) {
  case DType::F32:
    put(1.0f);
    break;
  case DType::F64:
    put(1.0);
    break;
  case DType::F16:
    put(uint16_t{0x3c00});
    break;
  case DType::BF16:
    put(uint16_t{0x3f80});
    break;
  default:
    one[0] = 1;
    break; // integers (little-endian) and bool
  }
  return one;
}

// Dropout at inference is the identity, and its optional mask output is all ones (bool true
// from opset 10, the data's type before). Training mode drops at random, which odlac does not
// compile, unless the ratio is 0.
Status importDropout(ImportCtx &ctx) {
  if (ctx.hasInput(2)) {
    auto training = constScalarOf(ctx, 2, "training_mode");
    if (!training)
      return training.takeStatus();
    if (training->nonzero()) {
      Expected<Scalar> ratio = Scalar{Scalar::Float, 0.5};
      if (ctx.hasInput(1))
        ratio = constScalarOf(ctx, 1, "ratio");
      if (!ratio || ratio->nonzero())
        return ctx.fail("training_mode=true with ratio " + (ratio ? ratio->str() : "unknown") +
                        " is not supported: it drops elements at random; odlac compiles for "
                        "inference");
    }
  }
  if (Status s = finish(ctx, 0, ctx.emit("Identity", {ctx.input(0)})))
    return s;
  if (!ctx.wantsOutput(1))
    return Status::ok();
  // A one broadcast to the input's shape: the mask costs no constant of the input's size.
  const TensorType &t = ctx.input(0)->type();
  DType dtype = ctx.opset() >= 10 ? DType::Bool : t.dtype;
  Value *v = ctx.constant(ctx.tempName("one"), {dtype, {}}, oneOf(dtype).data());
  return finish(ctx, 1, ctx.emit("Broadcast", {v}, {{"shape", t.dims}}, ctx.outputName(1)));
}

// ---- Rows ---------------------------------------------------------------------------------

// Dropout's ratio (an attribute until opset 12, an input after) and seed only matter when it
// drops elements, which odlac does not compile (see importDropout).
const AttrRule kDropoutRatio = noEffect(
    "ratio", "Dropout before opset 12 has no training mode: it is the identity at inference");
const AttrRule kDropoutSeed =
    noEffect("seed", "odlac compiles Dropout only where it draws nothing (inference, or ratio 0)");

const std::vector<ImportRule> kRules = {
    // Math.
    {"Abs", 6, "Abs", {}, nullptr},
    {"Neg", 6, "Neg", {}, nullptr},
    {"Exp", 6, "Exp", {}, nullptr},
    {"Log", 6, "Log", {}, nullptr},
    {"Sqrt", 6, "Sqrt", {}, nullptr},
    {"Reciprocal", 6, "Reciprocal", {}, nullptr},
    {"Floor", 6, "Floor", {}, nullptr},
    {"Ceil", 6, "Ceil", {}, nullptr},
    {"Round", 11, "Round", {}, nullptr},
    {"Sign", 9, "Sign", {}, nullptr},
    {"Sin", 7, "Sin", {}, nullptr},
    {"Cos", 7, "Cos", {}, nullptr},
    {"Tan", 7, "Tan", {}, nullptr},
    {"Asin", 7, "Asin", {}, nullptr},
    {"Acos", 7, "Acos", {}, nullptr},
    {"Atan", 7, "Atan", {}, nullptr},
    {"Sinh", 9, "Sinh", {}, nullptr},
    {"Cosh", 9, "Cosh", {}, nullptr},
    {"Asinh", 9, "Asinh", {}, nullptr},
    {"Acosh", 9, "Acosh", {}, nullptr},
    {"Atanh", 9, "Atanh", {}, nullptr},
    {"Erf", 9, "Erf", {}, nullptr},
    // Predicates and logic.
    {"IsNaN", 9, "IsNaN", {}, nullptr},
    {"IsInf",
     10,
     "IsInf",
     {{"detect_positive", "detect_positive", int64_t{1}},
      {"detect_negative", "detect_negative", int64_t{1}}},
     nullptr},
    {"Not", 1, "Not", {}, nullptr},
    {"BitwiseNot", 18, "BitwiseNot", {}, nullptr},
    // Activations.
    {"Relu", 6, "Relu", {}, nullptr},
    {"Sigmoid", 6, "Sigmoid", {}, nullptr},
    {"Tanh", 6, "Tanh", {}, nullptr},
    {"Softplus", 1, "Softplus", {}, nullptr},
    {"Softsign", 1, "Softsign", {}, nullptr},
    {"LeakyRelu", 6, "LeakyRelu", {{"alpha", "alpha", 0.01}}, nullptr},
    {"Elu", 6, "Elu", {{"alpha", "alpha", 1.0}}, nullptr},
    {"Selu",
     6,
     "Selu",
     {{"alpha", "alpha", 1.67326319217681884765625}, {"gamma", "gamma", 1.05070102214813232421875}},
     nullptr},
    {"Celu", 12, "Celu", {{"alpha", "alpha", 1.0}}, nullptr},
    {"HardSigmoid", 6, "HardSigmoid", {{"alpha", "alpha", 0.2}, {"beta", "beta", 0.5}}, nullptr},
    {"HardSwish", 14, nullptr, {}, importHardSwish},
    {"Mish", 18, nullptr, {}, importMish},
    {"Swish", 24, nullptr, reads({"alpha"}), importSwish},
    {"SwiGLU", 28, nullptr, reads({"alpha"}), importSwiGLU},
    {"Gelu", 20, nullptr, reads({"approximate"}), importGelu},
    {"ThresholdedRelu", 10, "ThresholdedRelu", {{"alpha", "alpha", 1.0}}, nullptr},
    {"Shrink", 9, "Shrink", {{"bias", "bias", 0.0}, {"lambd", "lambd", 0.5}}, nullptr},
    // Clip, conversion, identity-like.
    {"Clip", 6, nullptr, reads({"min", "max"}), importClip6},
    {"Clip", 11, nullptr, {}, importClip11},
    {"Cast", 6, nullptr, reads({"to", "saturate", "round_mode"}), importCast, nullptr, "",
     /*takesAggregates=*/false, /*keepsShape=*/true},
    {"CastLike", 15, nullptr, reads({"saturate", "round_mode"}), importCastLike, nullptr, "",
     /*takesAggregates=*/false, /*keepsShape=*/true},
    {"Dropout", 7, nullptr, {kDropoutRatio}, importDropout},
    {"Dropout", 12, nullptr, {kDropoutSeed}, importDropout},
};

} // namespace

const std::vector<ImportRule> &elementwiseRules() { return kRules; }

} // namespace odlac
