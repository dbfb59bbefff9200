// Import rules for reductions and the softmax family. GlobalAveragePool, a reduction in
// IR, is imported with the pooling ops in Nn.cpp.
#include "Rules.h"

namespace odlac {
namespace {

// Opset 13 made Softmax normalize along one axis. Before, it flattened the input to 2-D at
// `axis` and normalized each row: a reshape around a last-axis softmax.
Status importSoftmax(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  bool coerce2d = ctx.opset() < 13;
  auto axis = normalizeAxis(ctx.attrInt("axis", coerce2d ? 1 : -1), rank == 0 ? 1 : rank, "axis");
  if (!axis)
    return axis.takeStatus();
  if (rank == 0)
    return ctx.fail("input must have rank >= 1");
  Expected<Value *> out = Status::error("unset");
  if (!coerce2d || *axis == rank - 1) {
    out = ctx.emit("Softmax", {x}, {{"axis", *axis}});
  } else {
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? rows : cols) *= x->dims()[d];
    auto flat = ctx.reshape(x, {rows, cols}, ctx.tempName("rows"));
    if (!flat)
      return flat.takeStatus();
    auto sm = ctx.emit("Softmax", {*flat}, {{"axis", int64_t{1}}}, ctx.tempName("softmax"));
    if (!sm)
      return sm.takeStatus();
    out = ctx.reshape(*sm, x->dims(), ctx.outputName(0));
  }
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"Softmax", 1, nullptr, {}, importSoftmax},
};

} // namespace

const std::vector<ImportRule> &reduceRules() { return kRules; }

} // namespace odlac
