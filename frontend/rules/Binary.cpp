// Import rules for broadcasting binary and variadic ONNX ops: arithmetic (and later logic,
// comparisons, Min/Max/Sum/Mean).
#include "Rules.h"

namespace odlac {
namespace {

// Legacy (opset < 7) broadcasting: with broadcast=1, B's dims align with A's starting at
// `axis` (default: aligned to the right, which is numpy's rule). Reshaping B to A's rank
// with ones elsewhere turns it into numpy broadcasting.
Status importLegacyBinary(ImportCtx &ctx) {
  const char *irOp = ctx.proto().op_type().c_str();
  Value *a = ctx.input(0), *b = ctx.input(1);
  if (ctx.attrInt("broadcast", 0) != 0 && ctx.hasAttr("axis")) {
    auto axis = normalizeAxis(ctx.attrInt("axis", 0), a->type().rank(), "axis");
    if (!axis)
      return axis.takeStatus();
    if (*axis + b->type().rank() > a->type().rank())
      return ctx.fail("B " + dimsToString(b->dims()) + " does not fit A " +
                      dimsToString(a->dims()) + " at axis " + std::to_string(*axis));
    Dims dims(a->type().rank(), 1);
    for (int i = 0; i < b->type().rank(); ++i)
      dims[*axis + i] = b->dims()[i];
    auto r = ctx.reshape(b, dims);
    if (!r)
      return r.takeStatus();
    b = *r;
  } else if (ctx.attrInt("broadcast", 0) == 0 && a->dims() != b->dims()) {
    return ctx.fail("shapes " + dimsToString(a->dims()) + " and " + dimsToString(b->dims()) +
                    " differ and broadcast=0");
  }
  auto out = ctx.emit(irOp, {a, b});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"Add", 1, nullptr, {}, importLegacyBinary},
    {"Add", 7, "Add", {}, nullptr},
    {"Sub", 1, nullptr, {}, importLegacyBinary},
    {"Sub", 7, "Sub", {}, nullptr},
    {"Mul", 1, nullptr, {}, importLegacyBinary},
    {"Mul", 7, "Mul", {}, nullptr},
    {"Div", 1, nullptr, {}, importLegacyBinary},
    {"Div", 7, "Div", {}, nullptr},
};

} // namespace

const std::vector<ImportRule> &binaryRules() { return kRules; }

} // namespace odlac
