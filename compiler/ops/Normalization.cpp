// Normalization ops: instance, Lp and local response normalization, and the negative
// log-likelihood loss. Layer normalization, mean-variance normalization and softmax cross
// entropy have no ODLA 0.5 function: their import rules decompose them into these ops and
// core arithmetic (frontend/rules/Normalization.cpp). Tensors are channels-first.
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <cstdint>
#include <limits>

namespace odlac {
namespace {

// Scale and bias (when present): the input's element type and one element per channel.
Status checkPerChannel(InferCtx &c, int operand, const char *what, int64_t channels) {
  if (!c.hasInput(operand))
    return Status::ok();
  const TensorType &t = c.in(operand);
  if (t.dtype != c.in(0).dtype || t.dims != Dims{channels})
    return c.fail(std::string(what) + " must be " + dtypeName(c.in(0).dtype) + "[" + str(channels) +
                  "] (one per channel of input " + toString(c.in(0)) + "), got " + toString(t));
  return Status::ok();
}

Status inferInstanceNorm(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (x.size() < 3)
    return c.fail("input " + dimsToString(x) + " must have rank >= 3 (N, C, D1, ...)");
  if (Status s = checkPerChannel(c, 1, "scale", x[1]))
    return s;
  if (Status s = checkPerChannel(c, 2, "bias", x[1]))
    return s;
  if (!(c.f("epsilon") >= 0))
    return c.fail("epsilon " + std::to_string(c.f("epsilon")) + " must be >= 0");
  c.setOut(0, c.in(0));
  return Status::ok();
}

void lowerInstanceNorm(LowerCtx &c) {
  c.setOut(0, c.sink().InstanceNormalization(c.in(0), ODLA_CHANNELS_FIRST,
                                             static_cast<float>(c.node().f("epsilon")), c.in(1),
                                             c.in(2), 1.0f, 0.0f, c.outId(0)));
}

Status inferLrn(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (x.size() < 2)
    return c.fail("input " + dimsToString(x) + " must have rank >= 2 (N, C, ...)");
  if (c.i("size") < 1 || c.i("size") > std::numeric_limits<int32_t>::max())
    return c.fail("size " + str(c.i("size")) + " must be in [1, 2^31)");
  c.setOut(0, c.in(0));
  return Status::ok();
}

void lowerLrn(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().LRN(c.in(0), ODLA_CHANNELS_FIRST, static_cast<odla_int32>(n.i("size")),
                           static_cast<float>(n.f("alpha")), static_cast<float>(n.f("beta")),
                           static_cast<float>(n.f("bias")), c.outId(0)));
}

// axes are normalized at import: non-negative, strictly increasing, non-empty.
Status inferLpNorm(InferCtx &c) {
  const auto &axes = c.ints("axes");
  int64_t rank = c.in(0).rank();
  if (axes.empty())
    return c.fail("needs at least one axis");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= rank || (i > 0 && axes[i] <= axes[i - 1]))
      return c.fail("axes " + dimsToString(axes) + " must be distinct, sorted and in [0, " +
                    str(rank) + ")");
  if (c.i("p") < 1 || c.i("p") > std::numeric_limits<int32_t>::max())
    return c.fail("p " + str(c.i("p")) + " must be in [1, 2^31)");
  if (!(c.f("epsilon") >= 0))
    return c.fail("epsilon " + std::to_string(c.f("epsilon")) + " must be >= 0");
  c.setOut(0, c.in(0));
  return Status::ok();
}

void lowerLpNorm(LowerCtx &c) {
  const Node &n = c.node();
  const auto &axes = n.ints("axes");
  c.setOut(0, c.sink().LpNormalize(c.in(0), static_cast<odla_int32>(n.i("p")), ODLA_CHANNELS_FIRST,
                                   axes.size(), i32s(axes), static_cast<float>(n.f("epsilon")),
                                   lower::Val{}, c.outId(0)));
}

// The reduction attribute as ODLA's enum; nullopt for an unknown name.
std::optional<odla_reduction_mode> reductionMode(const std::string &name) {
  if (name == "none")
    return ODLA_REDUCE_NONE;
  if (name == "mean")
    return ODLA_REDUCE_MEAN;
  if (name == "sum")
    return ODLA_REDUCE_SUM;
  return std::nullopt;
}

Status inferNll(InferCtx &c) {
  const TensorType &x = c.in(0), &t = c.in(1);
  Dims expected = x.dims;
  if (x.rank() >= 2)
    expected.erase(expected.begin() + 1);
  if (x.rank() < 2 || t.dims != expected)
    return c.fail("input " + dimsToString(x.dims) +
                  " must have rank >= 2 (N, C, D1, ...) and "
                  "target " +
                  dimsToString(t.dims) + " its shape without axis 1");
  if (c.hasInput(2) && (c.in(2).dtype != x.dtype || c.in(2).dims != Dims{x.dims[1]}))
    return c.fail("weight must be " + std::string(dtypeName(x.dtype)) + "[" + str(x.dims[1]) +
                  "] (one per class), got " + toString(c.in(2)));
  const std::string &reduction = c.node().s("reduction");
  auto mode = reductionMode(reduction);
  if (!mode)
    return c.fail("reduction '" + reduction + "' is not one of none, mean, sum");
  int64_t ignore = c.i("ignore_index");
  if (ignore < std::numeric_limits<int32_t>::min() || ignore > std::numeric_limits<int32_t>::max())
    return c.fail("ignore_index " + str(ignore) + " does not fit in int32");
  c.setOut(0, TensorType{x.dtype, *mode == ODLA_REDUCE_NONE ? t.dims : Dims{}});
  return Status::ok();
}

void lowerNll(LowerCtx &c) {
  const Node &n = c.node();
  auto mode = reductionMode(n.s("reduction"));
  c.setOut(0, c.sink().NegativeLogLikeliHoodLoss(c.in(0), c.in(1),
                                                 static_cast<odla_int32>(n.i("ignore_index")),
                                                 *mode, c.in(2), c.outShape(0), c.outId(0)));
}

} // namespace

namespace ops {

// y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c], statistics per (n, c) over
// the spatial axes; scale and bias are optional (1 and 0).
const OpDef InstanceNormalization = {"InstanceNormalization",
                                     {{"x", OperandDef::Required, kFloatTypes},
                                      {"scale", OperandDef::Optional, kFloatTypes},
                                      {"bias", OperandDef::Optional, kFloatTypes}},
                                     1,
                                     {{"epsilon", AttrKind::Float, AttrValue(1e-5)}},
                                     FusionClass::Opaque,
                                     kTraitNone,
                                     inferInstanceNorm,
                                     lowerInstanceNorm,
                                     BatchRule::RowsOfFirst};
// ONNX's LRN: alpha is divided by size inside.
const OpDef LRN = {"LRN",
                   {{"x", OperandDef::Required, kFloatTypes}},
                   1,
                   {{"size", AttrKind::Int, std::nullopt},
                    {"alpha", AttrKind::Float, AttrValue(1e-4)},
                    {"beta", AttrKind::Float, AttrValue(0.75)},
                    {"bias", AttrKind::Float, AttrValue(1.0)}},
                   FusionClass::Opaque,
                   kTraitNone,
                   inferLrn,
                   lowerLrn,
                   BatchRule::RowsOfFirst};
// y = x / max(||x||_p over axes, epsilon); 0 where the denominator is 0.
const OpDef LpNormalize = {"LpNormalize",
                           {{"x", OperandDef::Required, kFloatTypes}},
                           1,
                           {{"axes", AttrKind::Ints, std::nullopt},
                            {"p", AttrKind::Int, AttrValue(int64_t{2})},
                            {"epsilon", AttrKind::Float, AttrValue(0.0)}},
                           FusionClass::Opaque,
                           kTraitNone,
                           inferLpNorm,
                           lowerLpNorm,
                           BatchRule::RowsOfFirst};
// ONNX's NegativeLogLikelihoodLoss; ignore_index -2^31 (the default) ignores no target
// (ODLA's int32 has no "none").
const OpDef NegativeLogLikelihoodLoss = {
    "NegativeLogLikelihoodLoss",
    {{"input", OperandDef::Required, kFloatTypes},
     {"target", OperandDef::Required, kIndexTypes},
     {"weight", OperandDef::Optional, kFloatTypes}},
    1,
    {{"reduction", AttrKind::String, AttrValue(std::string("mean"))},
     {"ignore_index", AttrKind::Int, AttrValue(int64_t{std::numeric_limits<int32_t>::min()})}},
    FusionClass::Opaque,
    kTraitNone,
    inferNll,
    lowerNll};

} // namespace ops

} // namespace odlac
