// Import rules for neural-network ONNX ops: Conv, ConvTranspose, pooling (Max, Average, Lp and
// their Global forms), BatchNormalization, Gemm, MatMul, Einsum and Det. auto_pad and
// ConvTranspose's output_shape are resolved into explicit pads here, so IR ops only know
// explicit pads.
#include "Rules.h"

#include "ir/Limits.h"
#include "ops/InferUtil.h"

#include <algorithm>

namespace odlac {
namespace {

using Ints = std::vector<int64_t>;

Status bind(ImportCtx &ctx, Expected<Value *> out, int result = 0) {
  if (!out)
    return out.takeStatus();
  ctx.setOutput(result, *out);
  return Status::ok();
}

Status checkSpatialList(ImportCtx &ctx, const char *name, const Ints &v, size_t spatial) {
  if (v.size() != spatial)
    return ctx.fail(std::string(name) + " has " + str(v.size()) + " entries; the input has " +
                    str(spatial) + " spatial axes");
  return Status::ok();
}

// The per-spatial-axis attribute `name` (default: `dflt` on every axis), checked for length
// and for entries in [dflt, 2^31): strides, dilations and kernels are at least 1, paddings
// at least 0, and ODLA takes them all as 32-bit values (the bound also keeps the window
// arithmetic below from overflowing). The rules compute with them before the op's inference
// sees them, so they check them here, in the inference's words.
Expected<Ints> spatialAttr(ImportCtx &ctx, const char *name, size_t spatial, int64_t dflt) {
  Ints v = ctx.attrInts(name, Ints(spatial, dflt));
  if (Status s = checkSpatialList(ctx, name, v, spatial))
    return s;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string problem = windowEntryProblem(name, i, v[i], dflt);
    if (!problem.empty())
      return ctx.fail(problem);
  }
  return v;
}

// Resolves auto_pad/pads for a sliding window over the spatial dims of `x`.
Expected<Ints> resolvePads(ImportCtx &ctx, const Dims &x, const Dims &kernel, const Ints &strides,
                           const Ints &dilations) {
  size_t spatial = kernel.size();
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    Ints pads = ctx.attrInts("pads", Ints(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
      return ctx.fail("pads " + dimsToString(pads) + " has " + str(pads.size()) + " entries; " +
                      str(2 * spatial) + " expected (begin and end of each spatial axis)");
    return pads;
  }
  if (ctx.hasAttr("pads"))
    return ctx.fail("pads and auto_pad=" + autoPad + " cannot both be given");
  Ints pads(2 * spatial, 0);
  if (autoPad == "VALID")
    return pads;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.fail("auto_pad='" + autoPad +
                    "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  for (size_t i = 0; i < spatial; ++i) {
    // Strides and dilations are in [1, 2^31) (spatialAttr), the kernel is checked likewise
    // here, before the op's inference does; dims are below 2^48.
    std::string problem = windowEntryProblem("kernel_shape", i, kernel[i], 1);
    if (!problem.empty())
      return ctx.fail(problem);
    int64_t in = x[i + 2], s = strides[i];
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>((out - 1) * s + (kernel[i] - 1) * dilations[i] + 1 - in, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + spatial] = total - pads[i];
  }
  return pads;
}

Status importConv(ImportCtx &ctx) {
  auto attrs = convAttrs(ctx, ctx.input(0), ctx.input(1));
  if (!attrs)
    return attrs.takeStatus();
  return bind(ctx, ctx.emit("Conv", {ctx.input(0), ctx.input(1), ctx.input(2)}, *attrs));
}

// DeformConv-19 has Conv's attributes without auto_pad, plus offset_group; the IR op checks
// offset's and mask's shapes against the windows.
Status importDeformConv(ImportCtx &ctx) {
  auto attrs = convAttrs(ctx, ctx.input(0), ctx.input(1));
  if (!attrs)
    return attrs.takeStatus();
  (*attrs)["offset_group"] = ctx.attrInt("offset_group", 1);
  return bind(ctx, ctx.emit("DeformConv",
                            {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                            *attrs));
}

// Pads and output_padding from ONNX's ConvTranspose attributes. With output_shape (or auto_pad
// SAME_*, which asks for input * stride) the total padding is
//   full + output_padding - output_shape, full = stride * (in - 1) + (k - 1) * dilation + 1,
// split as ONNX specifies (SAME_UPPER: the smaller half first; otherwise the larger). An
// output_shape larger than full + output_padding (a negative total, which ONNX Runtime
// accepts) becomes more output_padding.
Status importConvTranspose(ImportCtx &ctx) {
  Value *x = ctx.input(0), *w = ctx.input(1);
  int rank = x->type().rank();
  if (rank < 3 || w->type().rank() != rank)
    return ctx.fail("input " + toString(x->type()) + " and weights " + toString(w->type()) +
                    " must have the same rank >= 3");
  size_t spatial = rank - 2;
  Dims kernel(w->dims().begin() + 2, w->dims().end());
  if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != kernel)
    return ctx.fail("kernel_shape " + dimsToString(ctx.attrInts("kernel_shape")) +
                    " disagrees with the weights' spatial dims " + dimsToString(kernel));
  auto strides = spatialAttr(ctx, "strides", spatial, 1);
  if (!strides)
    return strides.takeStatus();
  auto dilations = spatialAttr(ctx, "dilations", spatial, 1);
  if (!dilations)
    return dilations.takeStatus();
  auto extra = spatialAttr(ctx, "output_padding", spatial, 0);
  if (!extra)
    return extra.takeStatus();
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID")
    return ctx.fail("auto_pad='" + autoPad +
                    "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  if (autoPad != "NOTSET" && ctx.hasAttr("pads"))
    return ctx.fail("pads and auto_pad=" + autoPad + " cannot both be given");
  Ints pads = ctx.attrInts("pads", Ints(2 * spatial, 0));
  if (pads.size() != 2 * spatial)
    return ctx.fail("pads " + dimsToString(pads) + " has " + str(pads.size()) + " entries; " +
                    str(2 * spatial) + " expected");
  Ints outShape;
  if (ctx.hasAttr("output_shape")) {
    outShape = ctx.attrInts("output_shape");
    if (outShape.size() == spatial + 2) // the full shape: keep the spatial dims
      outShape.erase(outShape.begin(), outShape.begin() + 2);
    if (Status s = checkSpatialList(ctx, "output_shape", outShape, spatial))
      return s;
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i)
      outShape.push_back(x->dims()[i + 2] * (*strides)[i]); // below 2^48 * 2^31
  } else if (autoPad == "VALID") {
    pads.assign(2 * spatial, 0);
  }
  if (!outShape.empty()) {
    for (size_t i = 0; i < spatial; ++i) {
      if (outShape[i] < 1 || outShape[i] > kMaxElements)
        return ctx.fail("output_shape " + dimsToString(outShape) + " must be in [1, 2^48]");
      CheckedInt fullExtent = CheckedInt((*strides)[i]) * (x->dims()[i + 2] - 1) +
                              (CheckedInt(kernel[i]) - 1) * (*dilations)[i] + 1;
      if (!fullExtent.valid() || fullExtent.value() > kMaxElements)
        return ctx.fail("spatial axis " + str(i) + ": input extent " + str(x->dims()[i + 2]) +
                        ", stride " + str((*strides)[i]) + ", kernel " + str(kernel[i]) +
                        " and dilation " + str((*dilations)[i]) + " give more than 2^48");
      int64_t full = fullExtent.value(), total = full + (*extra)[i] - outShape[i];
      if (total < 0) {
        pads[i] = pads[i + spatial] = 0;
        (*extra)[i] = outShape[i] - full;
        continue;
      }
      pads[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + spatial] = total - pads[i];
    }
  }
  return bind(ctx, ctx.emit("ConvTranspose", {x, w, ctx.input(2)},
                            {{"group", ctx.attrInt("group", 1)},
                             {"strides", *strides},
                             {"dilations", *dilations},
                             {"pads", pads},
                             {"output_padding", *extra}}));
}

// LpPool-1 had a float p; from opset 2 it is an int.
double lpNorm(const ImportCtx &ctx) {
  const onnx::AttributeProto *p = ctx.findAttr("p");
  return !p ? 2.0 : p->type() == onnx::AttributeProto::FLOAT ? double(p->f()) : double(p->i());
}

// MaxPool, AveragePool and LpPool. MaxPool's optional Indices output becomes a second IR
// node, MaxPoolIndices, over the same window.
Status importPool(ImportCtx &ctx) {
  const std::string &op = ctx.proto().op_type();
  Value *x = ctx.input(0);
  if (x->type().rank() < 3)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 3 (N, C, spatial...)");
  size_t spatial = x->type().rank() - 2;
  auto kernel = ctx.attrInts("kernel_shape");
  if (Status s = checkSpatialList(ctx, "kernel_shape", kernel, spatial))
    return s;
  auto strides = spatialAttr(ctx, "strides", spatial, 1);
  if (!strides)
    return strides.takeStatus();
  auto dilations = spatialAttr(ctx, "dilations", spatial, 1);
  if (!dilations)
    return dilations.takeStatus();
  auto pads = resolvePads(ctx, x->dims(), kernel, *strides, *dilations);
  if (!pads)
    return pads.takeStatus();
  int64_t ceilMode = ctx.attrInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return ctx.fail("ceil_mode=" + str(ceilMode) + " is not 0 or 1");
  AttrMap attrs{{"kernel_shape", kernel},
                {"strides", *strides},
                {"pads", *pads},
                {"ceil_mode", ceilMode},
                {"dilations", *dilations}};
  if (op == "LpPool") {
    attrs["p"] = lpNorm(ctx);
    return bind(ctx, ctx.emit("LpPool", {x}, attrs));
  }
  if (op == "AveragePool") {
    attrs["count_include_pad"] = ctx.attrInt("count_include_pad", 0);
    return bind(ctx, ctx.emit("AveragePool", {x}, attrs));
  }
  int64_t storageOrder = ctx.attrInt("storage_order", 0); // of the Indices output only
  if (ctx.wantsOutput(0))
    if (Status s = bind(ctx, ctx.emit("MaxPool", {x}, attrs)))
      return s;
  if (!ctx.wantsOutput(1))
    return Status::ok();
  attrs["storage_order"] = storageOrder;
  return bind(ctx, ctx.emit("MaxPoolIndices", {x}, attrs, ctx.outputName(1)), 1);
}

// GlobalMaxPool, GlobalAveragePool and GlobalLpPool: the pooling op with one window covering
// all spatial axes.
Status importGlobalPool(ImportCtx &ctx) {
  const std::string &op = ctx.proto().op_type();
  Value *x = ctx.input(0);
  int rank = x->type().rank();
  if (rank < 3)
    return ctx.fail("input " + toString(x->type()) + " must have rank >= 3 (N, C, spatial...)");
  size_t spatial = rank - 2;
  for (int d = 2; d < rank; ++d)
    if (x->dims()[d] == 0)
      return ctx.fail("input " + toString(x->type()) + " has an empty spatial axis (dim " + str(d) +
                      " is 0): a global pool has no element to reduce there");
  AttrMap attrs{{"kernel_shape", Ints(x->dims().begin() + 2, x->dims().end())},
                {"strides", Ints(spatial, 1)},
                {"pads", Ints(2 * spatial, 0)}};
  if (op == "GlobalLpPool") {
    attrs["p"] = lpNorm(ctx);
    return bind(ctx, ctx.emit("LpPool", {x}, attrs));
  }
  return bind(ctx, ctx.emit(op == "GlobalMaxPool" ? "MaxPool" : "AveragePool", {x}, attrs));
}

// BatchNormalization-14's training mode: the statistics of the batch (mean and population
// variance over every axis but 1) normalize x, and outputs 1 and 2 are the running statistics
// input * momentum + batch * (1 - momentum), as ONNX's reference computes them.
Status importBatchNormTraining(ImportCtx &ctx, double momentum) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  if (rank < 2)
    return ctx.fail("X " + toString(x->type()) + " must have rank >= 2 (N, C, ...)");
  Ints axes{0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  AttrMap reduce{{"axes", axes}, {"keepdims", int64_t{1}}};
  auto mean = ctx.emit("ReduceMean", {x}, reduce, ctx.tempName("batch_mean"));
  if (!mean)
    return mean.takeStatus();
  auto centered = ctx.emit("Sub", {x, *mean}, {}, ctx.tempName("centered"));
  if (!centered)
    return centered.takeStatus();
  auto square = ctx.emit("Mul", {*centered, *centered}, {}, ctx.tempName("centered_square"));
  if (!square)
    return square.takeStatus();
  auto var = ctx.emit("ReduceMean", {*square}, reduce, ctx.tempName("batch_var"));
  if (!var)
    return var.takeStatus();
  Dims channels{x->dims()[1]};
  auto meanC = ctx.reshape(*mean, channels, ctx.tempName("batch_mean_c"));
  if (!meanC)
    return meanC.takeStatus();
  auto varC = ctx.reshape(*var, channels, ctx.tempName("batch_var_c"));
  if (!varC)
    return varC.takeStatus();
  if (Status s =
          bind(ctx, ctx.emit("BatchNormalization", {x, ctx.input(1), ctx.input(2), *meanC, *varC},
                             {{"epsilon", ctx.attrFloat("epsilon", 1e-5)}})))
    return s;
  for (int i = 1; i < 3; ++i) {
    if (!ctx.wantsOutput(i))
      continue;
    Value *running = ctx.input(2 + i), *batch = i == 1 ? *meanC : *varC;
    DType t = running->dtype();
    auto keep = filledBytes(t, momentum, 1), take = filledBytes(t, 1 - momentum, 1);
    auto old =
        ctx.emit("Mul", {running, ctx.constant(ctx.tempName("momentum"), {t, {}}, keep.data())}, {},
                 ctx.tempName("running_kept"));
    if (!old)
      return old.takeStatus();
    auto add = ctx.emit(
        "Mul", {batch, ctx.constant(ctx.tempName("one_minus_momentum"), {t, {}}, take.data())}, {},
        ctx.tempName("running_added"));
    if (!add)
      return add.takeStatus();
    if (Status s = bind(ctx, ctx.emit("Add", {*old, *add}, {}, ctx.outputName(i)), i))
      return s;
  }
  return Status::ok();
}

Status importBatchNorm(ImportCtx &ctx) {
  if (ctx.opset() < 9 && ctx.attrInt("spatial", 1) == 0)
    return ctx.fail("spatial=0 (per-activation statistics) is not supported");
  double momentum = ctx.attrFloat("momentum", 0.9); // inference does not use it
  if (ctx.attrInt("training_mode", 0) != 0)
    return importBatchNormTraining(ctx, momentum);
  // Before opset 14 the running statistics were outputs of training graphs only; odlac
  // compiles those graphs' inference form.
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.wantsOutput(i))
      return ctx.fail("output " + str(i) + " (running statistics) exists only in training mode");
  return bind(ctx, ctx.emit("BatchNormalization",
                            {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                            {{"epsilon", ctx.attrFloat("epsilon", 1e-5)}}));
}

Status importGemm(ImportCtx &ctx) {
  return bind(ctx, ctx.emit("Gemm", {ctx.input(0), ctx.input(1), ctx.input(2)},
                            {{"transA", ctx.attrInt("transA", 0)},
                             {"transB", ctx.attrInt("transB", 0)},
                             {"alpha", ctx.attrFloat("alpha", 1.0)},
                             {"beta", ctx.attrFloat("beta", 1.0)}}));
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
  if (!vecA && !vecB)
    return bind(ctx, ctx.emit("MatMul", {a, b}));
  auto prod = ctx.emit("MatMul", {a, b}, {}, ctx.tempName("matmul"));
  if (!prod)
    return prod.takeStatus();
  Dims dims = (*prod)->dims();
  if (vecB)
    dims.pop_back();
  if (vecA)
    dims.erase(dims.end() - (vecB ? 1 : 2));
  return bind(ctx, ctx.reshape(*prod, dims, ctx.outputName(0)));
}

// Col2Im-18. The result [N, C, image...] comes from image_shape and block_shape when they are
// known at compile time, else from the shape ONNX's shape facts give; the kernel reads both
// when it runs and checks them against that shape.
Status importCol2Im(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (x->type().rank() != 3)
    return ctx.fail("input " + toString(x->type()) + " must be [N, C * block size, L]");
  int64_t spatial = ctx.input(1)->type().numElements();
  if (spatial < 1 || spatial > 3 || ctx.input(2)->type().numElements() != spatial)
    return ctx.fail("image_shape " + toString(ctx.input(1)->type()) + " and block_shape " +
                    toString(ctx.input(2)->type()) + " must hold 1 to 3 entries, as many each");
  Dims shape;
  if (auto t = ctx.declaredType(0)) {
    shape = t->dims;
  } else {
    auto image = ctx.constInts(1, "image_shape");
    if (!image)
      return image.takeStatus();
    auto block = ctx.constInts(2, "block_shape");
    if (!block)
      return block.takeStatus();
    // The block volume divides the columns' channel dim (below 2^48), so the product is
    // checked as it grows.
    CheckedInt kvol = 1;
    for (int64_t b : *block) {
      kvol *= b;
      if (b < 1 || !kvol.valid() || kvol.value() > x->dims()[1])
        break;
    }
    if (!kvol.valid() || kvol.value() < 1 || x->dims()[1] % kvol.value() != 0)
      return ctx.fail("block_shape " + dimsToString(*block) +
                      " must be positive and its volume divide the input's dim 1 (" +
                      str(x->dims()[1]) + ")");
    shape = {x->dims()[0], x->dims()[1] / kvol.value()};
    shape.insert(shape.end(), image->begin(), image->end());
  }
  auto dilations = spatialAttr(ctx, "dilations", spatial, 1);
  if (!dilations)
    return dilations.takeStatus();
  auto strides = spatialAttr(ctx, "strides", spatial, 1);
  if (!strides)
    return strides.takeStatus();
  Ints pads = ctx.attrInts("pads", Ints(2 * spatial, 0));
  return bind(
      ctx,
      ctx.emit(
          "Col2Im", {x, ctx.input(1), ctx.input(2)},
          {{"shape", shape}, {"dilations", *dilations}, {"pads", pads}, {"strides", *strides}}));
}

const std::vector<ImportRule> kRules = {
    {"Conv", 1, nullptr,
     reads({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}), importConv},
    {"DeformConv", 19, nullptr,
     reads({"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"}),
     importDeformConv},
    {"ConvTranspose", 1, nullptr,
     reads({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape",
            "pads", "strides"}),
     importConvTranspose},
    {"MaxPool", 1, nullptr,
     reads({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
            "strides"}),
     importPool},
    {"AveragePool", 1, nullptr,
     reads({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads",
            "strides"}),
     importPool},
    {"LpPool", 1, nullptr,
     reads({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "p", "pads", "strides"}),
     importPool},
    {"GlobalMaxPool", 1, nullptr, {}, importGlobalPool},
    {"GlobalAveragePool", 1, nullptr, {}, importGlobalPool},
    {"GlobalLpPool", 1, nullptr, reads({"p"}), importGlobalPool},
    {"BatchNormalization", 1, nullptr, reads({"epsilon", "momentum", "spatial", "training_mode"}),
     importBatchNorm},
    {"Gemm", 1, nullptr, reads({"alpha", "beta", "transA", "transB"}), importGemm},
    {"MatMul", 1, nullptr, {}, importMatMul},
    {"Einsum", 12, "Einsum", {{"equation", "equation", std::nullopt}}, nullptr},
    {"Det", 11, "Det", {}, nullptr},
    {"Col2Im", 18, nullptr, reads({"dilations", "pads", "strides"}), importCol2Im},
};

} // namespace

Expected<AttrMap> convAttrs(ImportCtx &ctx, const Value *x, const Value *w) {
  if (x->type().rank() < 3 || w->type().rank() != x->type().rank())
    return ctx.fail("input " + toString(x->type()) + " and weights " + toString(w->type()) +
                    " must have the same rank >= 3");
  size_t spatial = x->type().rank() - 2;
  Dims kernel(w->dims().begin() + 2, w->dims().end());
  if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != kernel)
    return ctx.fail("kernel_shape " + dimsToString(ctx.attrInts("kernel_shape")) +
                    " disagrees with the weights' spatial dims " + dimsToString(kernel));
  auto strides = spatialAttr(ctx, "strides", spatial, 1);
  if (!strides)
    return strides.takeStatus();
  auto dilations = spatialAttr(ctx, "dilations", spatial, 1);
  if (!dilations)
    return dilations.takeStatus();
  auto pads = resolvePads(ctx, x->dims(), kernel, *strides, *dilations);
  if (!pads)
    return pads.takeStatus();
  return AttrMap{{"group", ctx.attrInt("group", 1)},
                 {"strides", *strides},
                 {"dilations", *dilations},
                 {"pads", *pads}};
}

const std::vector<ImportRule> &nnRules() { return kRules; }

} // namespace odlac
