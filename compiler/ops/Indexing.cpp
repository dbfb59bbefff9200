// Indexing: ops that select elements by index tensors (gather, scatter, one-hot, top-k...).
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status inferGather(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  int64_t axis = c.i("axis");
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  Dims out(x.begin(), x.begin() + axis);
  out.insert(out.end(), c.in(1).dims.begin(), c.in(1).dims.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

const std::vector<OpDef> kOps = {
    {"Gather", {{"x"}, {"indices", OperandDef::Required, kIndexTypes}}, 1,
     {{"axis", AttrKind::Int, AttrValue(int64_t{0})}}, FusionClass::Injective, kShapeOnly,
     inferGather,
     [](LowerCtx &c) {
       c.setOut(0, c.sink().Gather(c.in(0), c.in(1), static_cast<odla_int32>(c.node().i("axis")),
                                   c.outShape(0), c.outId(0)));
     }},
};

} // namespace

const std::vector<OpDef> &indexingOps() { return kOps; }

} // namespace odlac
