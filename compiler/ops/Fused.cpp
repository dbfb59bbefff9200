// Ops that the optimizer forms: Gelu, recognized from its decomposed form, and the fused
// ops of FuseActivations: a convolution or matrix product, then an optional residual
// addition, then an activation. The fused ops lower to the odla_ExtConv and odla_ExtGemm
// extensions when the backend has them, and to the same computation as separate core ODLA
// calls when it does not.
#include "lower/Lowering.h"
#include "ops/Activation.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

odla_ext_fused_activation fusedEnum(const ActivationDef &a) {
  return static_cast<odla_ext_fused_activation>(a.fused);
}

// Checks the epilogue operands and attributes shared by both fused ops; residual is the
// operand at `residualIndex`.
Status checkEpilogue(InferCtx &c, int residualIndex) {
  if (!findActivation(c.node().s("activation")))
    return c.fail("unknown activation '" + c.node().s("activation") + "'");
  const TensorType &out = c.node().output(0)->type();
  if (c.hasInput(residualIndex) && c.in(residualIndex) != out)
    return c.fail("residual " + toString(c.in(residualIndex)) + " must match the result " +
                  toString(out));
  return Status::ok();
}

Status inferFusedConv(InferCtx &c) {
  if (Status s = inferConvolution(c))
    return s;
  return checkEpilogue(c, 3);
}

Status inferFusedGemm(InferCtx &c) {
  const Dims &a = c.in(0).dims, &b = c.in(1).dims;
  if (a.size() != 2 || b.size() != 2 || c.in(0).dtype != c.in(1).dtype)
    return c.fail("A and B must be matrices of one element type");
  bool ta = c.i("transA") != 0, tb = c.i("transB") != 0;
  int64_t k = ta ? a[0] : a[1];
  if ((tb ? b[1] : b[0]) != k)
    return c.fail("inner dimensions differ");
  c.setOut(0, TensorType{c.in(0).dtype, {ta ? a[1] : a[0], tb ? b[0] : b[1]}});
  return checkEpilogue(c, 3);
}

// The epilogue as core ODLA calls: + residual, then the activation; the last call carries
// the node's own id.
lower::Val coreEpilogue(LowerCtx &c, lower::Val v, int residualIndex, float alpha, float beta) {
  lower::OdlaSink &s = c.sink();
  const std::string out = c.outId(0).name;
  const ActivationDef &act = activationOf(c.node());
  if (!c.in(residualIndex).isNull())
    v = s.Add(v, c.in(residualIndex), {act.decompose ? out + "/sum" : out});
  return act.decompose ? act.decompose(s, v, alpha, beta, out) : v;
}

// The product's own id when an epilogue follows it.
lower::Id productId(LowerCtx &c) {
  const Node &n = c.node();
  bool epilogue = activationOf(n).id != Activation::None || n.input(3);
  return {epilogue ? c.outId(0).name + "/product" : c.outId(0).name};
}

void lowerFusedConv(LowerCtx &c) {
  const Node &n = c.node();
  const auto &pads = n.ints("pads");
  size_t half = pads.size() / 2;
  lower::U32s front = u32s({pads.begin(), pads.begin() + half});
  lower::U32s back = u32s({pads.begin() + half, pads.end()});
  float alpha = static_cast<float>(n.f("alpha")), beta = static_cast<float>(n.f("beta"));
  auto group = static_cast<odla_uint32>(n.i("group"));
  odla_memory_layout data = isChannelsLast(n) ? ODLA_CHANNELS_LAST : ODLA_CHANNELS_FIRST;
  odla_memory_layout kernel = isChannelsLast(n) ? ODLA_SIO : ODLA_OIS;
  if (c.hasExtension("ExtConv")) {
    c.setOut(0,
             c.sink().ExtConv(c.in(0), data, group, c.in(1), kernel, u32s(n.ints("strides")),
                              u32s(n.ints("dilations")), front, back, c.in(2), c.in(3),
                              fusedEnum(activationOf(n)), alpha, beta, c.outShape(0), c.outId(0)));
    return;
  }
  lower::Val v =
      c.sink().Conv(c.in(0), data, group, c.in(1), kernel, u32s(n.ints("strides")),
                    u32s(n.ints("dilations")), front, back, c.in(2), c.outShape(0), productId(c));
  c.setOut(0, coreEpilogue(c, v, 3, alpha, beta));
}

void lowerFusedGemm(LowerCtx &c) {
  const Node &n = c.node();
  float alpha = static_cast<float>(n.f("alpha")), beta = static_cast<float>(n.f("beta"));
  float actAlpha = static_cast<float>(n.f("act_alpha")),
        actBeta = static_cast<float>(n.f("act_beta"));
  lower::Flag ta{n.i("transA") != 0}, tb{n.i("transB") != 0};
  if (c.hasExtension("ExtGemm")) {
    c.setOut(0, c.sink().ExtGemm(c.in(0), ta, c.in(1), tb, alpha, beta, c.in(2), c.in(3),
                                 fusedEnum(activationOf(n)), actAlpha, actBeta, c.outShape(0),
                                 c.outId(0)));
    return;
  }
  lower::Val v =
      c.sink().Gemm(c.in(0), ta, c.in(1), tb, alpha, beta, c.in(2), c.outShape(0), productId(c));
  c.setOut(0, coreEpilogue(c, v, 3, actAlpha, actBeta));
}

constexpr DTypeMask kFloats = maskOf(DType::F32) | maskOf(DType::F64) | maskOf(DType::F16);

Status inferGelu(InferCtx &c) {
  if (c.i("approximate") != 0 && c.i("approximate") != 1)
    return c.fail("approximate must be 0 (erf) or 1 (tanh)");
  c.setOut(0, c.in(0));
  return Status::ok();
}

} // namespace

namespace ops {

// GELU, ONNX's Gelu (opset 20) or recognized from its decomposed form (RecognizeGelu); a
// core ODLA 0.5 op.
const OpDef Gelu = {"Gelu",
                    {{"x", OperandDef::Required, kFloatTypes}},
                    1,
                    {{"approximate", AttrKind::Int, AttrValue(int64_t{0})}},
                    FusionClass::Elementwise,
                    kLayoutAgnostic,
                    inferGelu,
                    [](LowerCtx &c) {
                      c.setOut(
                          0, c.sink().Gelu(c.in(0), {c.node().i("approximate") != 0}, c.outId(0)));
                    }};
const OpDef FusedConv = {
    "FusedConv",
    {{"x", OperandDef::Required, kFloats},
     {"w", OperandDef::Required, kFloats},
     {"b", OperandDef::Optional, kFloats},
     {"residual", OperandDef::Optional, kFloats}},
    1,
    {{"group", AttrKind::Int, AttrValue(int64_t{1})},
     {"strides", AttrKind::Ints, std::nullopt},
     {"dilations", AttrKind::Ints, std::nullopt},
     {"pads", AttrKind::Ints, std::nullopt},
     {"activation", AttrKind::String, AttrValue(std::string("none"))},
     {"alpha", AttrKind::Float, AttrValue(0.0)},
     {"beta", AttrKind::Float, AttrValue(0.0)},
     {kLayoutAttr, AttrKind::String, AttrValue(std::string("channels_first"))}},
    FusionClass::Opaque,
    kTraitNone,
    inferFusedConv,
    lowerFusedConv,
    BatchRule::FusedConv,
    FlopRule::FusedConv};
const OpDef FusedGemm = {"FusedGemm",
                         {{"a", OperandDef::Required, kFloats},
                          {"b", OperandDef::Required, kFloats},
                          {"c", OperandDef::Optional, kFloats},
                          {"residual", OperandDef::Optional, kFloats}},
                         1,
                         {{"transA", AttrKind::Int, AttrValue(int64_t{0})},
                          {"transB", AttrKind::Int, AttrValue(int64_t{0})},
                          {"alpha", AttrKind::Float, AttrValue(1.0)},
                          {"beta", AttrKind::Float, AttrValue(1.0)},
                          {"activation", AttrKind::String, AttrValue(std::string("none"))},
                          {"act_alpha", AttrKind::Float, AttrValue(0.0)},
                          {"act_beta", AttrKind::Float, AttrValue(0.0)}},
                         FusionClass::Opaque,
                         kTraitNone,
                         inferFusedGemm,
                         lowerFusedGemm,
                         BatchRule::Gemm,
                         FlopRule::FusedGemm};

} // namespace ops

} // namespace odlac
