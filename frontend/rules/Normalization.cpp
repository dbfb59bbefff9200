// Import rules for normalization ops: instance, layer, Lp and mean-variance normalization,
// LRN, and the loss functions. Layer normalization becomes the IR's LayerNorm (an extension
// op with a core decomposition). ODLA 0.5 has no mean-variance normalization or softmax cross
// entropy: they are decomposed here, the first around InstanceNormalization over a
// [1, rows, row length] view of the input.
#include "Rules.h"

#include "ir/Limits.h"

#include <cstdint>
#include <initializer_list>
#include <limits>

namespace odlac {
namespace {

int64_t product(Dims::const_iterator begin, Dims::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it)
    n *= *it;
  return n;
}

// Normalizes a list of axes of a rank-`rank` tensor; an error names `what` and the repeat.
Expected<std::vector<int64_t>> normalizeAxes(ImportCtx &ctx, const std::vector<int64_t> &axes,
                                             int64_t rank, const char *what) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank, what);
    if (!axis)
      return axis.takeStatus();
    if (seen[*axis])
      return ctx.fail(std::string(what) + " " + dimsToString(axes) + " repeat axis " + str(*axis));
    seen[*axis] = true;
    out.push_back(*axis);
  }
  return out;
}

// Rules read their required operands' types; ONNX's checker ensures they are given, but it
// does not run on opsets newer than libonnx knows.
Status requireInputs(ImportCtx &ctx, std::initializer_list<const char *> names) {
  int i = 0;
  for (const char *name : names) {
    if (!ctx.hasInput(i))
      return ctx.fail("required input " + str(i) + " (" + name + ") is missing");
    ++i;
  }
  return Status::ok();
}

// LpNormalization-1: one axis, p 1 or 2.
Status importLpNormalization(ImportCtx &ctx) {
  if (Status s = requireInputs(ctx, {"input"}))
    return s;
  Value *x = ctx.input(0);
  auto axis = normalizeAxis(ctx.attrInt("axis", -1), x->type().rank(), "axis");
  if (!axis)
    return axis.takeStatus();
  int64_t p = ctx.attrInt("p", 2);
  if (p != 1 && p != 2)
    return ctx.fail("attribute p=" + str(p) + " is not supported (LpNormalization allows 1 or 2)");
  auto out = ctx.emit("LpNormalize", {x},
                      {{"axes", std::vector<int64_t>{*axis}}, {"p", p}, {"epsilon", 0.0}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// InstanceNormalization over the rows of `x` viewed as [1, rows, cols] (no scale and bias):
// every row normalized on its own. The result has `x`'s shape and is named `outName`.
Expected<Value *> normalizeRows(ImportCtx &ctx, Value *x, int64_t rows, int64_t cols,
                                double epsilon, const std::string &outName) {
  Dims view{1, rows, cols};
  if (x->dims() == view)
    return ctx.emit("InstanceNormalization", {x}, {{"epsilon", epsilon}}, outName);
  auto x3 = ctx.reshape(x, view, ctx.tempName("rows"));
  if (!x3)
    return x3.takeStatus();
  auto n3 = ctx.emit("InstanceNormalization", {*x3}, {{"epsilon", epsilon}},
                     ctx.tempName("normalized_rows"));
  if (!n3)
    return n3.takeStatus();
  return ctx.reshape(*n3, x->dims(), outName);
}

// MeanVarianceNormalization-9/13: y = (x - mean) / (sqrt(var) + 1e-9) over `axes`. The axes
// kept are moved to the front (a Transpose, unless only unit axes move), so each index of
// them is one row of InstanceNormalization. Its epsilon 1e-18 inside the square root gives
// the same result wherever the standard deviation exceeds about 1e-6 (and 0 for constant
// rows, as ONNX).
Status importMeanVarianceNormalization(ImportCtx &ctx) {
  if (Status s = requireInputs(ctx, {"X"}))
    return s;
  Value *x = ctx.input(0);
  const Dims &dims = x->dims();
  int64_t rank = x->type().rank();
  auto axes = normalizeAxes(ctx, ctx.attrInts("axes", {0, 2, 3}), rank, "axes");
  if (!axes)
    return axes.takeStatus();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : *axes)
    reduced[a] = true;
  std::vector<int64_t> perm;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d] == (pass == 1))
        perm.push_back(d);
  // Whether the permutation changes the order of the axes that have more than one element.
  bool moves = false;
  for (int64_t i = 0, last = -1; i < rank; ++i)
    if (dims[perm[i]] != 1) {
      moves |= perm[i] < last;
      last = perm[i];
    }
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d)
    (reduced[d] ? cols : rows) *= dims[d];
  constexpr double kEpsilon = 1e-18;
  if (!moves) {
    auto out = normalizeRows(ctx, x, rows, cols, kEpsilon, ctx.outputName(0));
    if (!out)
      return out.takeStatus();
    ctx.setOutput(0, *out);
    return Status::ok();
  }
  auto xt = ctx.emit("Transpose", {x}, {{"perm", perm}}, ctx.tempName("transposed"));
  if (!xt)
    return xt.takeStatus();
  auto nt = normalizeRows(ctx, *xt, rows, cols, kEpsilon, ctx.tempName("normalized"));
  if (!nt)
    return nt.takeStatus();
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  auto out = ctx.emit("Transpose", {*nt}, {{"perm", inverse}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// stash_type: the element type statistics are computed in; odlac's normalizations compute
// them in float32 or wider, ONNX's default.
Status checkStash(ImportCtx &ctx) {
  int64_t stash = ctx.attrInt("stash_type", onnx::TensorProto::FLOAT);
  if (stash != onnx::TensorProto::FLOAT)
    return ctx.fail("attribute stash_type=" + str(stash) + " (" +
                    onnxTypeName(static_cast<int>(stash)) +
                    ") is not supported; only 1 (float32 statistics)");
  return Status::ok();
}

// LayerNormalization's Scale or B: as many elements as the normalized shape (ONNX's function
// flattens it), or one; reshaped to broadcast against the input.
Expected<Value *> layerNormParam(ImportCtx &ctx, Value *v, const char *what, const Dims &normShape,
                                 DType dtype) {
  int64_t count = product(normShape.begin(), normShape.end());
  if (v->dtype() != dtype)
    return ctx.fail(std::string(what) + " is " + dtypeName(v->dtype()) + ", the input " +
                    dtypeName(dtype));
  if (v->type().numElements() == count)
    return ctx.reshape(v, normShape, normShape == v->dims() ? "" : ctx.tempName(what));
  if (v->type().numElements() == 1)
    return ctx.reshape(v, Dims{}, v->type().rank() == 0 ? "" : ctx.tempName(what));
  return ctx.fail(std::string(what) + " " + toString(v->type()) + " must have " + str(count) +
                  " elements (the normalized shape " + dimsToString(normShape) + ") or 1");
}

// LayerNormalization's and RMSNormalization's statistics are computed in float32 (ONNX's
// stash_type 1): x itself, or x cast to float32.
Expected<Value *> stashAsF32(ImportCtx &ctx, Value *x) {
  if (x->dtype() == DType::F32)
    return x;
  return ctx.emit("Cast", {x}, {{"to", std::string(dtypeName(DType::F32))}}, ctx.tempName("stash"));
}

// LayerNormalization-17. Y: the IR's LayerNorm (ops/Transformer.cpp), which PyTorch's
// decomposed form also becomes (RecognizeLayerNorm). Mean and InvStdDev, when asked
// for, are computed apart in float32 (stash_type 1): ReduceMean, and
// 1 / sqrt(ReduceMean((x - mean)^2) + epsilon).
Status importLayerNormalization(ImportCtx &ctx) {
  if (Status s = requireInputs(ctx, {"X", "Scale"}))
    return s;
  Value *x = ctx.input(0);
  const Dims &dims = x->dims();
  int64_t rank = x->type().rank();
  if (rank < 1)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 1");
  auto axis = normalizeAxis(ctx.attrInt("axis", -1), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  if (Status s = checkStash(ctx))
    return s;
  double epsilon = ctx.attrFloat("epsilon", 1e-5);
  Dims normShape(dims.begin() + *axis, dims.end());

  auto scale = layerNormParam(ctx, ctx.input(1), "Scale", normShape, x->dtype());
  if (!scale)
    return scale.takeStatus();
  Value *bias = nullptr;
  if (ctx.hasInput(2)) {
    auto b = layerNormParam(ctx, ctx.input(2), "B", normShape, x->dtype());
    if (!b)
      return b.takeStatus();
    bias = *b;
  }
  // Scale and B with the normalized dims are LayerNorm's own operands; one-element ones are
  // applied after it.
  bool inside = (*scale)->dims() == normShape && (!bias || bias->dims() == normShape);
  AttrMap attrs{{"axis", *axis}, {"epsilon", epsilon}};
  std::vector<Value *> operands{x};
  if (inside)
    operands.push_back(*scale);
  if (inside && bias)
    operands.push_back(bias);
  auto y = ctx.emit("LayerNorm", operands, attrs, inside ? "" : ctx.tempName("normalized"));
  if (y && !inside) {
    y = ctx.emit("Mul", {*y, *scale}, {}, bias ? ctx.tempName("scaled") : "");
    if (y && bias)
      y = ctx.emit("Add", {*y, bias});
  }
  if (!y)
    return y.takeStatus();
  ctx.setOutput(0, *y);
  if (!ctx.wantsOutput(1) && !ctx.wantsOutput(2))
    return Status::ok();

  // Statistics in float32, over the normalized axes, keeping them as unit axes.
  auto stashed = stashAsF32(ctx, x);
  if (!stashed)
    return stashed.takeStatus();
  Value *xs = *stashed;
  std::vector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  AttrMap reduce{{"axes", axes}, {"keepdims", int64_t{1}}};
  auto mean = ctx.emit("ReduceMean", {xs}, reduce,
                       ctx.wantsOutput(1) ? ctx.outputName(1) : ctx.tempName("mean"));
  if (!mean)
    return mean.takeStatus();
  if (ctx.wantsOutput(1))
    ctx.setOutput(1, *mean);
  if (!ctx.wantsOutput(2))
    return Status::ok();
  float eps = static_cast<float>(epsilon);
  Value *epsValue = ctx.constant(ctx.tempName("epsilon"), TensorType{DType::F32, {}}, &eps);
  auto dev = ctx.emit("Sub", {xs, *mean}, {}, ctx.tempName("deviation"));
  if (!dev)
    return dev.takeStatus();
  auto v = ctx.emit("Mul", {*dev, *dev}, {}, ctx.tempName("square"));
  if (v)
    v = ctx.emit("ReduceMean", {*v}, reduce, ctx.tempName("variance"));
  if (v)
    v = ctx.emit("Add", {*v, epsValue}, {}, ctx.tempName("variance_eps"));
  if (v)
    v = ctx.emit("Sqrt", {*v}, {}, ctx.tempName("stddev"));
  if (v)
    v = ctx.emit("Reciprocal", {*v}, {}, ctx.outputName(2));
  if (!v)
    return v.takeStatus();
  ctx.setOutput(2, *v);
  return Status::ok();
}

// GroupNormalization: x [N, C, D...] normalized over each of G groups of C / G channels, each
// group one row of InstanceNormalization over a [1, N * G, (C / G) * D...] view, then
// y = normalized * scale + bias: per group at opset 18 ([G] operands, applied on a
// [N, G, rest] view), per channel from opset 21 ([C]).
Status importGroupNormalization(ImportCtx &ctx) {
  if (Status s = requireInputs(ctx, {"X", "scale", "bias"}))
    return s;
  if (Status s = checkStash(ctx))
    return s;
  Value *x = ctx.input(0);
  const Dims &dims = x->dims();
  if (dims.size() < 2)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 2 (N, C, ...)");
  int64_t groups = ctx.attrInt("num_groups", 0), channels = dims[1];
  if (groups < 1 || channels % groups != 0)
    return ctx.fail("num_groups " + str(groups) + " does not divide the " + str(channels) +
                    " channels of " + toString(x->type()));
  bool perChannel = ctx.opset() >= 21;
  int64_t params = perChannel ? channels : groups;
  for (int i : {1, 2})
    if (ctx.input(i)->type().numElements() != params || ctx.input(i)->dtype() != x->dtype())
      return ctx.fail(std::string(i == 1 ? "scale " : "bias ") + toString(ctx.input(i)->type()) +
                      " must hold " + str(params) + " " + dtypeName(x->dtype()) +
                      " values (one per " + (perChannel ? "channel" : "group") + ")");
  // With no channels any num_groups divides them: the rows are bounded like a dim.
  auto rowCount = (CheckedInt(dims[0]) * groups).get();
  if (!rowCount || *rowCount > kMaxElements)
    return ctx.fail("num_groups " + str(groups) + " times the batch " + str(dims[0]) +
                    " exceeds 2^48 rows");
  int64_t rows = *rowCount, cols = x->type().numElements() / std::max<int64_t>(rows, 1);
  Dims grouped{dims[0], groups, cols}, paramDims(dims.size(), 1);
  paramDims[1] = channels;
  if (!perChannel)
    paramDims = {groups, 1}; // against the [N, G, rest] view
  auto normalized =
      normalizeRows(ctx, x, rows, cols, ctx.attrFloat("epsilon", 1e-5), ctx.tempName("normalized"));
  if (!normalized)
    return normalized.takeStatus();
  Value *y = *normalized;
  if (!perChannel) {
    auto g = ctx.reshape(y, grouped, ctx.tempName("groups"));
    if (!g)
      return g.takeStatus();
    y = *g;
  }
  auto scale = ctx.reshape(ctx.input(1), paramDims, ctx.tempName("scale"));
  if (!scale)
    return scale.takeStatus();
  auto bias = ctx.reshape(ctx.input(2), paramDims, ctx.tempName("bias"));
  if (!bias)
    return bias.takeStatus();
  auto scaled = ctx.emit("Mul", {y, *scale}, {}, ctx.tempName("scaled"));
  if (!scaled)
    return scaled.takeStatus();
  auto out = ctx.emit("Add", {*scaled, *bias}, {}, perChannel ? "" : ctx.tempName("shifted"));
  if (out && !perChannel)
    out = ctx.reshape(*out, dims, ctx.outputName(0));
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// RMSNormalization-23, as ONNX's function body computes it: statistics in float32 (stash_type
// 1), y = Cast(x / sqrt(ReduceMean(x^2 over axis...) + epsilon)) * scale.
Status importRMSNormalization(ImportCtx &ctx) {
  if (Status s = requireInputs(ctx, {"X", "scale"}))
    return s;
  if (Status s = checkStash(ctx))
    return s;
  Value *x = ctx.input(0), *scale = ctx.input(1);
  int64_t rank = x->type().rank();
  if (rank < 1)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 1");
  auto axis = normalizeAxis(ctx.attrInt("axis", -1), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  float eps = static_cast<float>(ctx.attrFloat("epsilon", 1e-5));
  auto stashed = stashAsF32(ctx, x);
  if (!stashed)
    return stashed.takeStatus();
  Value *xs = *stashed;
  std::vector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  auto v = ctx.emit("Mul", {xs, xs}, {}, ctx.tempName("square"));
  if (v)
    v = ctx.emit("ReduceMean", {*v}, {{"axes", axes}, {"keepdims", int64_t{1}}},
                 ctx.tempName("mean_square"));
  if (v)
    v = ctx.emit("Add", {*v, ctx.constant(ctx.tempName("epsilon"), {DType::F32, {}}, &eps)}, {},
                 ctx.tempName("mean_square_eps"));
  if (v)
    v = ctx.emit("Sqrt", {*v}, {}, ctx.tempName("rms"));
  if (v)
    v = ctx.emit("Div", {xs, *v}, {}, ctx.tempName("normalized"));
  if (v && x->dtype() != DType::F32)
    v = ctx.emit("Cast", {*v}, {{"to", std::string(dtypeName(x->dtype()))}},
                 ctx.tempName("normalized_t"));
  if (v)
    v = ctx.emit("Mul", {*v, scale});
  if (!v)
    return v.takeStatus();
  ctx.setOutput(0, *v);
  return Status::ok();
}

// The attributes of the loss ops, checked: reduction and ignore_index (absent: -2^31, which
// ignores no valid target; see the NegativeLogLikelihoodLoss row).
Expected<AttrMap> lossAttrs(ImportCtx &ctx) {
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "mean" && reduction != "sum")
    return ctx.fail("attribute reduction='" + reduction + "' is not supported (none, mean, sum)");
  AttrMap attrs{{"reduction", reduction}};
  if (ctx.hasAttr("ignore_index")) {
    int64_t ignore = ctx.attrInt("ignore_index", 0);
    if (ignore <= std::numeric_limits<int32_t>::min() ||
        ignore > std::numeric_limits<int32_t>::max())
      return ctx.fail("attribute ignore_index=" + str(ignore) +
                      " is not supported: ODLA takes an int32 above -2^31");
    attrs["ignore_index"] = ignore;
  }
  return attrs;
}

// NegativeLogLikelihoodLoss-12/13.
Status importNegativeLogLikelihoodLoss(ImportCtx &ctx) {
  auto attrs = lossAttrs(ctx);
  if (!attrs)
    return attrs.takeStatus();
  auto out =
      ctx.emit("NegativeLogLikelihoodLoss", {ctx.input(0), ctx.input(1), ctx.input(2)}, *attrs);
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// SoftmaxCrossEntropyLoss-12/13: LogSoftmax over the classes (axis 1), which is also the
// optional log_prob output, then NegativeLogLikelihoodLoss.
Status importSoftmaxCrossEntropyLoss(ImportCtx &ctx) {
  auto attrs = lossAttrs(ctx);
  if (!attrs)
    return attrs.takeStatus();
  if (Status s = requireInputs(ctx, {"scores", "labels"}))
    return s;
  Value *scores = ctx.input(0);
  if (scores->type().rank() < 2)
    return ctx.fail("scores " + toString(scores->type()) + " must have rank >= 2 (N, C, ...)");
  auto logProb = ctx.emit("LogSoftmax", {scores}, {{"axis", int64_t{1}}},
                          ctx.wantsOutput(1) ? ctx.outputName(1) : ctx.tempName("log_prob"));
  if (!logProb)
    return logProb.takeStatus();
  if (ctx.wantsOutput(1))
    ctx.setOutput(1, *logProb);
  auto out = ctx.emit("NegativeLogLikelihoodLoss", {*logProb, ctx.input(1), ctx.input(2)}, *attrs);
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"InstanceNormalization", 6, "InstanceNormalization", {{"epsilon", "epsilon", 1e-5}}, nullptr},
    {"LRN",
     1,
     "LRN",
     {{"size", "size", std::nullopt},
      {"alpha", "alpha", 1e-4},
      {"beta", "beta", 0.75},
      {"bias", "bias", 1.0}},
     nullptr},
    {"LpNormalization", 1, nullptr, reads({"axis", "p"}), importLpNormalization},
    {"MeanVarianceNormalization", 9, nullptr, reads({"axes"}), importMeanVarianceNormalization},
    {"LayerNormalization", 17, nullptr, reads({"axis", "epsilon", "stash_type"}),
     importLayerNormalization},
    {"GroupNormalization", 18, nullptr, reads({"epsilon", "num_groups", "stash_type"}),
     importGroupNormalization},
    {"RMSNormalization", 23, nullptr, reads({"axis", "epsilon", "stash_type"}),
     importRMSNormalization},
    {"NegativeLogLikelihoodLoss", 12, nullptr, reads({"ignore_index", "reduction"}),
     importNegativeLogLikelihoodLoss},
    {"SoftmaxCrossEntropyLoss", 12, nullptr, reads({"ignore_index", "reduction"}),
     importSoftmaxCrossEntropyLoss},
};

} // namespace

const std::vector<ImportRule> &normalizationRules() { return kRules; }

} // namespace odlac
