// Import rules for unary elementwise ONNX ops: activations, Clip, Identity, Dropout.
#include "Rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace odlac {
namespace {

Status emitClamp(ImportCtx &ctx, double lo, double hi) {
  auto out = ctx.emit("Clamp", {ctx.input(0)}, {{"min", lo}, {"max", hi}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importClip6(ImportCtx &ctx) {
  return emitClamp(ctx, ctx.attrFloat("min", -std::numeric_limits<double>::infinity()),
                   ctx.attrFloat("max", std::numeric_limits<double>::infinity()));
}

// Opset 11 moved min and max to optional inputs; odlac needs them constant.
Status importClip11(ImportCtx &ctx) {
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  if (ctx.hasInput(1)) {
    auto v = ctx.constScalar(1, "min");
    if (!v)
      return v.takeStatus();
    lo = *v;
  }
  if (ctx.hasInput(2)) {
    auto v = ctx.constScalar(2, "max");
    if (!v)
      return v.takeStatus();
    hi = *v;
  }
  return emitClamp(ctx, lo, hi);
}

// Dropout is the identity at inference. Its optional mask output is all ones (true).
Status importDropout(ImportCtx &ctx) {
  if (ctx.attrInt("is_test", 1) == 0 && ctx.opset() < 7)
    return ctx.fail("is_test=0 (training mode) is not supported");
  if (ctx.hasInput(2)) {
    auto training = ctx.constScalar(2, "training_mode");
    if (!training)
      return training.takeStatus();
    if (*training != 0)
      return ctx.fail("training_mode=true is not supported; odlac compiles for inference");
  }
  auto out = ctx.emit("Identity", {ctx.input(0)});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  if (ctx.wantsOutput(1)) {
    const TensorType &t = ctx.input(0)->type();
    DType maskType = ctx.opset() >= 10 ? DType::Bool : t.dtype;
    TensorType mt{maskType, t.dims};
    std::vector<unsigned char> ones(mt.byteSize(), 0);
    if (maskType == DType::Bool)
      std::fill(ones.begin(), ones.end(), 1);
    else if (maskType == DType::F32)
      for (size_t i = 0; i < ones.size(); i += 4) {
        float one = 1.0f;
        std::memcpy(&ones[i], &one, 4);
      }
    else
      return ctx.fail("mask output of element type " + std::string(dtypeName(maskType)) +
                      " is not supported");
    Value *c = ctx.constant(ctx.tempName("mask"), mt, ones.data());
    auto mask = ctx.emit("Identity", {c}, {}, ctx.outputName(1));
    if (!mask)
      return mask.takeStatus();
    ctx.setOutput(1, *mask);
  }
  return Status::ok();
}

const AttrRule kConsumedInputs{"consumed_inputs", nullptr, std::nullopt};

const std::vector<ImportRule> kRules = {
    {"Identity", 1, "Identity", {}, nullptr},
    {"Relu", 1, "Relu", {kConsumedInputs}, nullptr},
    {"Relu", 6, "Relu", {}, nullptr},
    {"Sigmoid", 1, "Sigmoid", {kConsumedInputs}, nullptr},
    {"Sigmoid", 6, "Sigmoid", {}, nullptr},
    {"Tanh", 1, "Tanh", {kConsumedInputs}, nullptr},
    {"Tanh", 6, "Tanh", {}, nullptr},
    {"LeakyRelu", 1, "LeakyRelu", {{"alpha", "alpha", 0.01}, kConsumedInputs}, nullptr},
    {"LeakyRelu", 6, "LeakyRelu", {{"alpha", "alpha", 0.01}}, nullptr},
    {"Clip", 1, nullptr, {}, importClip6},
    {"Clip", 11, nullptr, {}, importClip11},
    {"Dropout", 1, nullptr, {}, importDropout},
};

} // namespace

const std::vector<ImportRule> &elementwiseRules() { return kRules; }

} // namespace odlac
