// Import rules for neural-network ONNX ops: Conv, pooling, BatchNormalization, Gemm, MatMul. auto_pad is resolved into explicit pads here, so IR ops only know explicit pads.
#include "Rules.h"

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Resolves auto_pad/pads for a sliding window over the spatial dims of `x`.
Expected<std::vector<int64_t>> resolvePads(ImportCtx &ctx, const Dims &x, const Dims &kernel,
                                           const std::vector<int64_t> &strides,
                                           const std::vector<int64_t> &dilations) {
  size_t spatial = kernel.size();
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return ctx.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (ctx.hasAttr("pads"))
    return ctx.fail("pads and auto_pad=" + autoPad + " cannot both be given");
  std::vector<int64_t> pads(2 * spatial, 0);
  if (autoPad == "VALID")
    return pads;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.fail("auto_pad='" + autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  for (size_t i = 0; i < spatial; ++i) {
    int64_t in = x[i + 2], s = strides[i];
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>((out - 1) * s + (kernel[i] - 1) * dilations[i] + 1 - in, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + spatial] = total - pads[i];
  }
  return pads;
}

Status checkSpatialList(ImportCtx &ctx, const char *name, const std::vector<int64_t> &v,
                        size_t spatial) {
  if (v.size() != spatial)
    return ctx.fail(std::string(name) + " has " + str(v.size()) + " entries; the input has " +
                    str(spatial) + " spatial axes");
  return Status::ok();
}

Status importConv(ImportCtx &ctx) {
  Value *x = ctx.input(0), *w = ctx.input(1);
  if (x->type().rank() < 3 || w->type().rank() != x->type().rank())
    return ctx.fail("input " + toString(x->type()) + " and weights " + toString(w->type()) +
                    " must have the same rank >= 3");
  size_t spatial = x->type().rank() - 2;
  Dims kernel(w->dims().begin() + 2, w->dims().end());
  if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != kernel)
    return ctx.fail("kernel_shape " + dimsToString(ctx.attrInts("kernel_shape")) +
                    " disagrees with the weights' spatial dims " + dimsToString(kernel));
  auto strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  auto dilations = ctx.attrInts("dilations", std::vector<int64_t>(spatial, 1));
  if (Status s = checkSpatialList(ctx, "strides", strides, spatial))
    return s;
  if (Status s = checkSpatialList(ctx, "dilations", dilations, spatial))
    return s;
  auto pads = resolvePads(ctx, x->dims(), kernel, strides, dilations);
  if (!pads)
    return pads.takeStatus();
  auto out = ctx.emit("Conv", {x, w, ctx.input(2)},
                      {{"group", ctx.attrInt("group", 1)},
                       {"strides", strides},
                       {"dilations", dilations},
                       {"pads", *pads}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importPool(ImportCtx &ctx) {
  bool isMax = ctx.proto().op_type() == "MaxPool";
  Value *x = ctx.input(0);
  if (x->type().rank() < 3)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 3 (N, C, spatial...)");
  size_t spatial = x->type().rank() - 2;
  auto kernel = ctx.attrInts("kernel_shape");
  if (Status s = checkSpatialList(ctx, "kernel_shape", kernel, spatial))
    return s;
  auto strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  if (Status s = checkSpatialList(ctx, "strides", strides, spatial))
    return s;
  auto dilations = ctx.attrInts("dilations", std::vector<int64_t>(spatial, 1));
  for (int64_t d : dilations)
    if (d != 1)
      return ctx.fail("dilations " + dimsToString(dilations) + " are not supported (only 1)");
  if (isMax && ctx.attrInt("storage_order", 0) != 0 && ctx.wantsOutput(1))
    return ctx.fail("storage_order=1 is not supported");
  if (isMax && ctx.wantsOutput(1))
    return ctx.fail("the Indices output is not supported");
  auto pads = resolvePads(ctx, x->dims(), kernel, strides, dilations);
  if (!pads)
    return pads.takeStatus();
  AttrMap attrs{{"kernel_shape", kernel},
                {"strides", strides},
                {"pads", *pads},
                {"ceil_mode", ctx.attrInt("ceil_mode", 0)}};
  if (!isMax)
    attrs["count_include_pad"] = ctx.attrInt("count_include_pad", 0);
  auto out = ctx.emit(isMax ? "MaxPool" : "AveragePool", {x}, attrs);
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importGlobalAveragePool(ImportCtx &ctx) {
  int64_t rank = ctx.input(0)->type().rank();
  if (rank < 3)
    return ctx.fail("input " + toString(ctx.input(0)->type()) + " must have rank >= 3");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  auto out = ctx.emit("ReduceMean", {ctx.input(0)}, {{"axes", axes}, {"keepdims", int64_t{1}}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importBatchNorm(ImportCtx &ctx) {
  if (ctx.opset() < 7 && ctx.attrInt("is_test", 0) == 0)
    return ctx.fail("is_test=0 (training mode) is not supported");
  if (ctx.opset() < 9 && ctx.attrInt("spatial", 1) == 0)
    return ctx.fail("spatial=0 (per-activation statistics) is not supported");
  if (ctx.attrInt("training_mode", 0) != 0)
    return ctx.fail("training_mode=1 is not supported; odlac compiles for inference");
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.wantsOutput(i))
      return ctx.fail("output " + str(i) + " (running statistics) exists only in training mode");
  auto out = ctx.emit("BatchNormalization",
                      {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                      {{"epsilon", ctx.attrFloat("epsilon", 1e-5)}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importGemm(ImportCtx &ctx) {
  if (ctx.opset() < 7 && ctx.hasInput(2) && ctx.attrInt("broadcast", 0) == 0) {
    const Dims &c = ctx.input(2)->dims();
    int64_t m = ctx.input(0)->dims()[ctx.attrInt("transA", 0) ? 1 : 0];
    int64_t n = ctx.input(1)->dims()[ctx.attrInt("transB", 0) ? 0 : 1];
    if (c != Dims{m, n})
      return ctx.fail("C " + dimsToString(c) + " must be [" + str(m) + "," + str(n) +
                      "] when broadcast=0");
  }
  auto out = ctx.emit("Gemm", {ctx.input(0), ctx.input(1), ctx.input(2)},
                      {{"transA", ctx.attrInt("transA", 0)},
                       {"transB", ctx.attrInt("transB", 0)},
                       {"alpha", ctx.attrFloat("alpha", 1.0)},
                       {"beta", ctx.attrFloat("beta", 1.0)}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// numpy.matmul: a 1-D operand is promoted to a matrix and the added axis removed after.
Status importMatMul(ImportCtx &ctx) {
  Value *a = ctx.input(0), *b = ctx.input(1);
  if (a->type().rank() == 0 || b->type().rank() == 0)
    return ctx.fail("operands must have rank >= 1");
  bool vecA = a->type().rank() == 1, vecB = b->type().rank() == 1;
  if (vecA) {
    auto r = ctx.reshape(a, {1, a->dims()[0]}, ctx.tempName("a2d"));
    if (!r)
      return r.takeStatus();
    a = *r;
  }
  if (vecB) {
    auto r = ctx.reshape(b, {b->dims()[0], 1}, ctx.tempName("b2d"));
    if (!r)
      return r.takeStatus();
    b = *r;
  }
  if (!vecA && !vecB) {
    auto out = ctx.emit("MatMul", {a, b});
    if (!out)
      return out.takeStatus();
    ctx.setOutput(0, *out);
    return Status::ok();
  }
  auto prod = ctx.emit("MatMul", {a, b}, {}, ctx.tempName("matmul"));
  if (!prod)
    return prod.takeStatus();
  Dims dims = (*prod)->dims();
  if (vecB)
    dims.pop_back();
  if (vecA)
    dims.erase(dims.end() - (vecB ? 1 : 2));
  auto out = ctx.reshape(*prod, dims, ctx.outputName(0));
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"Conv", 1, nullptr, {}, importConv},
    {"MaxPool", 1, nullptr, {}, importPool},
    {"AveragePool", 1, nullptr, {}, importPool},
    {"GlobalAveragePool", 1, nullptr, {}, importGlobalAveragePool},
    {"BatchNormalization", 1, nullptr, {}, importBatchNorm},
    {"Gemm", 1, nullptr, {}, importGemm},
    {"MatMul", 1, nullptr, {}, importMatMul},
};

} // namespace

const std::vector<ImportRule> &nnRules() { return kRules; }

} // namespace odlac
