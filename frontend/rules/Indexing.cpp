// Import rules for indexing ONNX ops: Gather (and later GatherElements, GatherND, Scatter*,
// OneHot, TopK...).
#include "Rules.h"

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status finish(ImportCtx &ctx, Expected<Value *> out) {
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importGather(ImportCtx &ctx) {
  Value *x = ctx.input(0), *idx = ctx.input(1);
  auto axis = normalizeAxis(ctx.attrInt("axis", 0), x->type().rank(), "axis");
  if (!axis)
    return axis.takeStatus();
  if (idx->isConstant()) {
    auto values = ctx.constInts(1, "indices");
    if (!values)
      return values.takeStatus();
    int64_t extent = x->dims()[*axis];
    for (int64_t v : *values)
      if (v < -extent || v >= extent)
        return ctx.fail("index " + str(v) + " is out of range [" + str(-extent) + ", " +
                        str(extent) + ") for axis " + str(*axis) + " of " + toString(x->type()));
  }
  return finish(ctx, ctx.emit("Gather", {x, idx}, {{"axis", *axis}}));
}

const std::vector<ImportRule> kRules = {
    {"Gather", 1, nullptr, {}, importGather},
};

} // namespace

const std::vector<ImportRule> &indexingRules() { return kRules; }

} // namespace odlac
