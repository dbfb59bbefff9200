// Import rules for ONNX ops that move data: Concat, Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Pad. Shape-changing ops become IR Reshape with a resolved target shape.
#include "Rules.h"

#include <algorithm>
#include <set>

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status finish(ImportCtx &ctx, Expected<Value *> out) {
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importConcat(ImportCtx &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.fail("needs at least one input");
  int64_t rank = ctx.input(0)->type().rank();
  if (!ctx.hasAttr("axis") && ctx.opset() >= 4)
    return ctx.fail("attribute 'axis' is required");
  auto axis = normalizeAxis(ctx.attrInt("axis", 1), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  std::vector<Value *> ins;
  for (int i = 0; i < ctx.numInputs(); ++i)
    ins.push_back(ctx.input(i));
  return finish(ctx, ctx.emit("Concat", ins, {{"axis", *axis}}));
}

Status importReshape(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  std::vector<int64_t> shape;
  if (ctx.opset() < 5) {
    shape = ctx.attrInts("shape");
  } else {
    auto s = ctx.constInts(1, "shape");
    if (!s)
      return s.takeStatus();
    shape = *s;
  }
  bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x->dims().size())
        return ctx.fail("shape " + dimsToString(shape) + " copies dim " + str(i) +
                        " (0), which input " + toString(x->type()) + " lacks");
      shape[i] = x->dims()[i];
    }
    if (shape[i] == -1) {
      if (inferAt >= 0)
        return ctx.fail("shape " + dimsToString(shape) + " has more than one -1");
      inferAt = static_cast<int64_t>(i);
      continue;
    }
    if (shape[i] < 0)
      return ctx.fail("shape " + dimsToString(shape) + " has a negative dim");
    known *= shape[i];
  }
  if (inferAt >= 0) {
    if (known == 0 || x->type().numElements() % known != 0)
      return ctx.fail("cannot infer the -1 in " + dimsToString(shape) + " for input " +
                      toString(x->type()));
    shape[inferAt] = x->type().numElements() / known;
  }
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", shape}}));
}

Status importFlatten(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.fail("axis " + str(axis) + " is out of range [" + str(-rank) + ", " + str(rank) +
                    "]");
  if (axis < 0)
    axis += rank;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? rows : cols) *= x->dims()[d];
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", Dims{rows, cols}}}));
}

// Reads the axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after.
Expected<std::vector<int64_t>> readAxes(ImportCtx &ctx) {
  if (ctx.opset() < 13)
    return ctx.attrInts("axes");
  if (!ctx.hasInput(1))
    return std::vector<int64_t>{};
  return ctx.constInts(1, "axes");
}

Status importSqueeze(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axes = readAxes(ctx);
  if (!axes)
    return axes.takeStatus();
  std::set<int64_t> drop;
  for (int64_t a : *axes) {
    auto n = normalizeAxis(a, x->type().rank(), "axis");
    if (!n)
      return n.takeStatus();
    if (x->dims()[*n] != 1)
      return ctx.fail("cannot squeeze axis " + str(a) + " of " + toString(x->type()) +
                      ": its extent is not 1");
    drop.insert(*n);
  }
  Dims out;
  for (int64_t d = 0; d < x->type().rank(); ++d)
    if (axes->empty() ? x->dims()[d] != 1 : !drop.count(d))
      out.push_back(x->dims()[d]);
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", out}}));
}

Status importUnsqueeze(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axes = readAxes(ctx);
  if (!axes)
    return axes.takeStatus();
  int64_t outRank = x->type().rank() + static_cast<int64_t>(axes->size());
  std::set<int64_t> add;
  for (int64_t a : *axes) {
    auto n = normalizeAxis(a, outRank, "axis");
    if (!n)
      return n.takeStatus();
    if (!add.insert(*n).second)
      return ctx.fail("axis " + str(a) + " is given twice");
  }
  Dims out;
  for (int64_t d = 0, k = 0; d < outRank; ++d)
    out.push_back(add.count(d) ? 1 : x->dims()[k++]);
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", out}}));
}

Status importTranspose(ImportCtx &ctx) {
  int64_t rank = ctx.input(0)->type().rank();
  std::vector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d)
    reversed.push_back(d);
  return finish(ctx, ctx.emit("Transpose", {ctx.input(0)}, {{"perm", ctx.attrInts("perm", reversed)}}));
}

Status importPad(ImportCtx &ctx) {
  std::string mode = ctx.attrString("mode", "constant");
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.attrInts(ctx.opset() < 2 ? "paddings" : "pads");
    value = ctx.attrFloat("value", 0.0);
  } else {
    auto p = ctx.constInts(1, "pads");
    if (!p)
      return p.takeStatus();
    pads = *p;
    if (ctx.hasInput(2)) {
      auto v = ctx.constScalar(2, "constant_value");
      if (!v)
        return v.takeStatus();
      value = *v;
    }
    if (ctx.hasInput(3))
      return ctx.fail("the axes input is not supported");
  }
  if (mode != "constant")
    return ctx.fail("mode='" + mode + "' is not supported (only constant)");
  if (value != 0)
    return ctx.fail("constant value " + std::to_string(value) + " is not supported (only 0)");
  for (int64_t p : pads)
    if (p < 0)
      return ctx.fail("negative pads " + dimsToString(pads) + " (cropping) are not supported");
  return finish(ctx, ctx.emit("Pad", {ctx.input(0)}, {{"pads", pads}}));
}

const std::vector<ImportRule> kRules = {
    {"Concat", 1, nullptr, {}, importConcat},
    {"Reshape", 1, nullptr, {}, importReshape},
    {"Flatten", 1, nullptr, {}, importFlatten},
    {"Squeeze", 1, nullptr, {}, importSqueeze},
    {"Unsqueeze", 1, nullptr, {}, importUnsqueeze},
    {"Transpose", 1, nullptr, {}, importTranspose},
    {"Pad", 1, nullptr, {}, importPad},
};

} // namespace

const std::vector<ImportRule> &dataMovementRules() { return kRules; }

} // namespace odlac
