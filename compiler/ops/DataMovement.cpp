// Data movement: ops that reshape, permute, join or pad tensors without arithmetic.
// They accept every element type, since they only move bytes.
#include "lower/Lowering.h"
#include "ops/Families.h"

#include <algorithm>

namespace odlac {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status inferReshape(InferCtx &c) {
  const auto &shape = c.ints("shape");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return c.fail("target shape " + dimsToString(shape) + " must be fully resolved");
    count *= d;
  }
  if (count != c.in(0).numElements())
    return c.fail("cannot reshape " + dimsToString(c.in(0).dims) + " (" +
                  str(c.in(0).numElements()) + " elements) to " + dimsToString(shape) + " (" +
                  str(count) + " elements)");
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

Status inferTranspose(InferCtx &c) {
  const auto &perm = c.ints("perm");
  const Dims &x = c.in(0).dims;
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != x.size())
      return c.fail("perm " + dimsToString(perm) + " is not a permutation of the " +
                    str(x.size()) + " axes");
  Dims out;
  for (int64_t p : perm)
    out.push_back(x[p]);
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferConcat(InferCtx &c) {
  int64_t axis = c.i("axis");
  Dims out = c.in(0).dims;
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  for (int i = 1; i < c.numInputs(); ++i) {
    const TensorType &t = c.in(i);
    bool fits = t.dtype == c.in(0).dtype && t.rank() == c.in(0).rank();
    for (int d = 0; fits && d < t.rank(); ++d)
      fits = d == axis || t.dims[d] == out[d];
    if (!fits)
      return c.fail("operand " + str(i) + " " + toString(t) + " does not match operand 0 " +
                    toString(c.in(0)) + " outside axis " + str(axis));
    out[axis] += t.dims[axis];
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferPad(InferCtx &c) {
  const auto &pads = c.ints("pads");
  const Dims &x = c.in(0).dims;
  if (pads.size() != 2 * x.size())
    return c.fail("pads needs " + str(2 * x.size()) + " entries for rank " + str(x.size()) +
                  ", got " + str(pads.size()));
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (pads[i] < 0 || pads[i + x.size()] < 0)
      return c.fail("pads must be non-negative, got " + dimsToString(pads));
    out[i] += pads[i] + pads[i + x.size()];
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

void lowerPad(LowerCtx &c) {
  const auto &pads = c.node().ints("pads");
  size_t half = pads.size() / 2;
  c.setOut(0, c.sink().Pad(c.in(0), u32s({pads.begin(), pads.begin() + half}),
                           u32s({pads.begin() + half, pads.end()}), c.outShape(0), c.outId(0)));
}

const std::vector<OpDef> kOps = {
    {"Reshape", {{"x"}}, 1, {{"shape", AttrKind::Ints, std::nullopt}}, FusionClass::Injective,
     kShapeOnly, inferReshape,
     [](LowerCtx &c) { c.setOut(0, c.sink().Reshape(c.in(0), c.outShape(0), c.outId(0))); }},
    {"Transpose", {{"x"}}, 1, {{"perm", AttrKind::Ints, std::nullopt}}, FusionClass::Injective,
     kShapeOnly, inferTranspose,
     [](LowerCtx &c) {
       c.setOut(0, c.sink().Transpose(c.in(0), shapeArg(c.node().ints("perm")), c.outShape(0),
                                      c.outId(0)));
     }},
    {"Concat", {{"inputs", OperandDef::Variadic}}, 1, {{"axis", AttrKind::Int, std::nullopt}},
     FusionClass::Injective, kShapeOnly, inferConcat,
     [](LowerCtx &c) {
       c.setOut(0, c.sink().Concat(c.ins(), static_cast<odla_int32>(c.node().i("axis")),
                                   c.outShape(0), c.outId(0)));
     }},
    {"Pad", {{"x"}}, 1, {{"pads", AttrKind::Ints, std::nullopt}}, FusionClass::Injective,
     kShapeOnly, inferPad, lowerPad},
};

} // namespace

const std::vector<OpDef> &dataMovementOps() { return kOps; }

} // namespace odlac
