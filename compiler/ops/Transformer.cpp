// Transformer building blocks: layer normalization (imported from ONNX's LayerNormalization
// and recognized from PyTorch's decomposed form) and scaled dot-product attention (recognized
// from MatMul, scale, mask, Softmax, MatMul). Neither is in ODLA 0.5: they lower to the
// odla_ExtLayerNorm and odla_ExtAttention extensions (odla_ext_transformer.h) when the
// backend has them, and to the same computation in core ODLA calls when it does not.
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

// ---- LayerNorm ---------------------------------------------------------------------------

// Scale or bias: the input's element type and the normalized dims (the input's from `axis`).
Status checkNormParam(InferCtx &c, int operand, const char *what, const Dims &normDims) {
  if (!c.hasInput(operand))
    return Status::ok();
  const TensorType &t = c.in(operand);
  if (t.dtype != c.in(0).dtype || t.dims != normDims)
    return c.fail(std::string(what) + " must be " + dtypeName(c.in(0).dtype) +
                  dimsToString(normDims) + " (the normalized dims of input " + toString(c.in(0)) +
                  "), got " + toString(t));
  return Status::ok();
}

Status inferLayerNorm(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  int64_t rank = c.in(0).rank(), axis = c.i("axis");
  if (axis < 0 || axis >= rank)
    return c.fail("axis " + str(axis) + " out of range for input " + toString(c.in(0)));
  if (!(c.f("epsilon") >= 0))
    return c.fail("epsilon " + std::to_string(c.f("epsilon")) + " must be >= 0");
  Dims normDims(x.begin() + axis, x.end());
  if (Status s = checkNormParam(c, 1, "scale", normDims))
    return s;
  if (Status s = checkNormParam(c, 2, "bias", normDims))
    return s;
  c.setOut(0, c.in(0));
  return Status::ok();
}

// Core form: InstanceNormalization of the input viewed as [1, rows, D] normalizes each row
// on its own; then Mul by scale and Add bias, which broadcast over the rows.
void lowerLayerNorm(LowerCtx &c) {
  const Node &n = c.node();
  auto axis = static_cast<size_t>(n.i("axis"));
  auto epsilon = static_cast<float>(n.f("epsilon"));
  if (c.hasExtension("ExtLayerNorm")) {
    c.setOut(0, c.sink().ExtLayerNorm(c.in(0), static_cast<odla_int32>(axis), epsilon, c.in(1),
                                      c.in(2), c.outId(0)));
    return;
  }
  lower::OdlaSink &s = c.sink();
  const Dims &dims = n.input(0)->dims();
  const std::string out = c.outId(0).name;
  int64_t cols = 1;
  for (size_t d = axis; d < dims.size(); ++d)
    cols *= dims[d];
  Dims view{1, cols ? n.input(0)->type().numElements() / cols : 0, cols};
  bool reshape = dims != view, scale = n.input(1), bias = n.input(2);
  lower::Val v = c.in(0);
  if (reshape)
    v = s.Reshape(v, shapeArg(view), {out + "/rows"});
  v = s.InstanceNormalization(v, ODLA_CHANNELS_FIRST, epsilon, lower::Val{}, lower::Val{}, 1.0f,
                              0.0f, {reshape || scale || bias ? out + "/normalized_rows" : out});
  if (reshape)
    v = s.Reshape(v, c.outShape(0), {scale || bias ? out + "/normalized" : out});
  if (scale)
    v = s.Mul(v, c.in(1), {bias ? out + "/scaled" : out});
  if (bias)
    v = s.Add(v, c.in(2), {out});
  c.setOut(0, v);
}

// ---- Attention ---------------------------------------------------------------------------

constexpr DTypeMask kAttentionTypes = maskOf(DType::F32) | maskOf(DType::F64);

Status inferAttention(InferCtx &c) {
  const TensorType &q = c.in(0), &k = c.in(1), &v = c.in(2), &scale = c.in(3);
  size_t rank = q.dims.size();
  std::string shapes = "query " + toString(q) + ", key " + toString(k) + ", value " + toString(v);
  if (rank < 2 || k.dims.size() != rank || v.dims.size() != rank)
    return c.fail(shapes + " must have one rank >= 2");
  if (k.dtype != q.dtype || v.dtype != q.dtype)
    return c.fail(shapes + " must have one element type");
  if (!std::equal(q.dims.begin(), q.dims.end() - 2, k.dims.begin()) ||
      !std::equal(q.dims.begin(), q.dims.end() - 2, v.dims.begin()))
    return c.fail(shapes + " must share their leading dims");
  int64_t sq = q.dims[rank - 2], d = q.dims[rank - 1], sk = k.dims[rank - 2];
  if (k.dims[rank - 1] != d || v.dims[rank - 2] != sk)
    return c.fail(shapes + ": key must be [..., Sk, " + str(d) + "] and value [..., Sk, Dv]");
  if (scale.numElements() != 1 || scale.dtype != q.dtype)
    return c.fail("scale " + toString(scale) + " must hold one " + std::string(dtypeName(q.dtype)));
  Dims scores(q.dims.begin(), q.dims.end() - 2);
  scores.push_back(sq);
  scores.push_back(sk);
  if (c.hasInput(4)) {
    const TensorType &m = c.in(4);
    auto b = broadcastDims(m.dims, scores);
    if (m.dtype != q.dtype || !b || *b != scores)
      return c.fail("mask " + toString(m) + " must be " + dtypeName(q.dtype) +
                    " and broadcast onto the scores " + dimsToString(scores));
  }
  Dims out(q.dims.begin(), q.dims.end() - 1);
  out.push_back(v.dims[rank - 1]);
  c.setOut(0, TensorType{q.dtype, out});
  return Status::ok();
}

// Core form: query x key^T, Mul by the scale, Add the mask, Softmax along the last axis, x
// value; the products are odla_Gemm calls for single matrices (a backend may lack
// odla_BatchMatMul: HALO's do) and odla_BatchMatMul otherwise.
void lowerAttention(LowerCtx &c) {
  const Node &n = c.node();
  if (c.hasExtension("ExtAttention")) {
    c.setOut(0, c.sink().ExtAttention(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.outId(0)));
    return;
  }
  lower::OdlaSink &s = c.sink();
  const std::string out = c.outId(0).name;
  const Dims &q = n.input(0)->dims();
  Dims scores(q.begin(), q.end() - 1);
  scores.push_back(n.input(1)->dims()[q.size() - 2]);
  bool plain = q.size() == 2;
  lower::Val v = matMul(s, c.in(0), c.in(1), true, plain, shapeArg(scores), {out + "/scores"});
  v = s.Mul(v, c.in(3), {out + "/scaled"});
  if (n.input(4))
    v = s.Add(v, c.in(4), {out + "/masked"});
  v = s.Softmax(v, static_cast<odla_int32>(q.size() - 1), {out + "/probs"});
  c.setOut(0, matMul(s, v, c.in(2), false, plain, c.outShape(0), c.outId(0)));
}

} // namespace

namespace ops {

// y = (x - mean) / sqrt(var + epsilon) * scale + bias, statistics over the axes from
// `axis` (normalized: 0 <= axis < rank) to the last; scale and bias optional.
const OpDef LayerNorm = {
    "LayerNorm",
    {{"x", OperandDef::Required, kFloatTypes},
     {"scale", OperandDef::Optional, kFloatTypes},
     {"bias", OperandDef::Optional, kFloatTypes}},
    1,
    {{"axis", AttrKind::Int, std::nullopt}, {"epsilon", AttrKind::Float, AttrValue(1e-5)}},
    FusionClass::Opaque,
    kTraitNone,
    inferLayerNorm,
    lowerLayerNorm,
    BatchRule::RowsOfFirst};
// y = Softmax(scale * q x k^T + mask, last axis) x v; q [..., Sq, D], k [..., Sk, D],
// v [..., Sk, Dv]; scale holds one element; mask optional, broadcast onto the scores.
const OpDef Attention = {"Attention",
                         {{"q", OperandDef::Required, kAttentionTypes},
                          {"k", OperandDef::Required, kAttentionTypes},
                          {"v", OperandDef::Required, kAttentionTypes},
                          {"scale", OperandDef::Required, kAttentionTypes},
                          {"mask", OperandDef::Optional, kAttentionTypes}},
                         1,
                         {},
                         FusionClass::Opaque,
                         kTraitNone,
                         inferAttention,
                         lowerAttention};

} // namespace ops

} // namespace odlac
