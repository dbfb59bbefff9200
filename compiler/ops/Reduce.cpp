// Reductions over a set of axes, and the normalizations along an axis (softmax family).
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// axes are normalized at import: non-negative, strictly increasing, non-empty.
Status inferReduce(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  const auto &axes = c.ints("axes");
  if (axes.empty())
    return c.fail("needs at least one axis");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= c.in(0).rank() || (i > 0 && axes[i] <= axes[i - 1]))
      return c.fail("axes must be distinct, sorted and in [0, " + std::to_string(x.size()) + ")");
  bool keep = c.i("keepdims") != 0;
  Dims out;
  for (int64_t d = 0, k = 0; d < c.in(0).rank(); ++d) {
    bool reduced = k < static_cast<int64_t>(axes.size()) && axes[k] == d;
    k += reduced;
    if (!reduced)
      out.push_back(x[d]);
    else if (keep)
      out.push_back(1);
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferSoftmax(InferCtx &c) {
  int64_t axis = c.i("axis");
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  c.setOut(0, c.in(0));
  return Status::ok();
}

const std::vector<OpDef> kOps = {
    {"Softmax", {{"x", OperandDef::Required, maskOf(DType::F32)}}, 1,
     {{"axis", AttrKind::Int, std::nullopt}}, FusionClass::Opaque, kTraitNone, inferSoftmax,
     [](LowerCtx &c) {
       c.setOut(0, c.sink().Softmax(c.in(0), static_cast<odla_int32>(c.node().i("axis")), c.outId(0)));
     }},
    {"ReduceMean", {{"x", OperandDef::Required, maskOf(DType::F32)}}, 1,
     {{"axes", AttrKind::Ints, std::nullopt}, {"keepdims", AttrKind::Int, AttrValue(int64_t{1})}},
     FusionClass::Reduction, kTraitNone, inferReduce,
     [](LowerCtx &c) {
       const auto &axes = c.node().ints("axes");
       c.setOut(0, c.sink().ReduceMean(c.in(0), axes.size(), u32s(axes),
                                       {c.node().i("keepdims") != 0}, c.outShape(0), c.outId(0)));
     }},
};

} // namespace

const std::vector<OpDef> &reduceOps() { return kOps; }

} // namespace odlac
