// Data movement: ops that reshape, permute, join, split, pad, repeat or select parts of
// tensors without arithmetic, and the generators EyeLike. They accept every element type,
// since they only move bytes.
//
// Ops whose parameters are tensors known only at run time (SliceDynamic, PadDynamic,
// TileDynamic, Compress) still have a static result shape: the import rule takes it from
// ONNX's shape facts and passes it as the "shape" attribute; the kernel checks the run-time
// parameters against it.
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <algorithm>

namespace odlac {
namespace {

// BitCast: the same bits as another element type of the same width (attribute `to`).
Status inferBitCast(InferCtx &c) {
  auto to = dtypeFromName(c.node().s("to"));
  if (!to)
    return c.fail("to='" + c.node().s("to") + "' is not an element type");
  if (dtypeInfo(*to).bits != dtypeInfo(c.in(0).dtype).bits)
    return c.fail(std::string("cannot reinterpret ") + dtypeName(c.in(0).dtype) + " (" +
                  str(dtypeInfo(c.in(0).dtype).bits) + " bits) as " + dtypeName(*to) + " (" +
                  str(dtypeInfo(*to).bits) + " bits)");
  if (dtypeInfo(*to).bits < 8 && *to != c.in(0).dtype)
    return c.fail(std::string("cannot reinterpret ") + dtypeName(c.in(0).dtype) + " as " +
                  dtypeName(*to) + ": sub-byte types only as themselves");
  c.setOut(0, TensorType{*to, c.in(0).dims});
  return Status::ok();
}

Status inferReshape(InferCtx &c) {
  const auto &shape = c.ints("shape");
  for (int64_t d : shape)
    if (d < 0)
      return c.fail("target shape " + dimsToString(shape) + " must be fully resolved");
  auto count = checkedProduct(shape);
  if (count != c.in(0).numElements())
    return c.fail("cannot reshape " + dimsToString(c.in(0).dims) + " (" +
                  str(c.in(0).numElements()) + " elements) to " + dimsToString(shape) + " (" +
                  (count ? str(*count) : std::string("more than 2^63")) + " elements)");
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

Status inferTranspose(InferCtx &c) {
  const auto &perm = c.ints("perm");
  const Dims &x = c.in(0).dims;
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() != x.size())
    return c.fail("perm " + dimsToString(perm) + " is not a permutation of the " + str(x.size()) +
                  " axes");
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return c.fail("perm " + dimsToString(perm) + " is not a permutation of the " + str(x.size()) +
                    " axes");
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
  if (c.numInputs() > ODLA_MAX_OUTPUTS)
    return c.fail("takes at most " + str(ODLA_MAX_OUTPUTS) + " operands, got " +
                  str(c.numInputs()));
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
    if (pads[i] < 0 || pads[i + x.size()] < 0 || pads[i] > UINT32_MAX ||
        pads[i + x.size()] > UINT32_MAX)
      return c.fail("pads must be in [0, 2^32), got " + dimsToString(pads));
    out[i] += pads[i] + pads[i + x.size()]; // dims are below 2^48: no overflow
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

// Numpy's unidirectional broadcast of operand 0 to the "shape" attribute.
Status inferBroadcast(InferCtx &c) {
  const auto &shape = c.ints("shape");
  const Dims &x = c.in(0).dims;
  bool fits = shape.size() >= x.size();
  for (size_t i = 0; fits && i < x.size(); ++i) {
    int64_t n = x[i], o = shape[shape.size() - x.size() + i];
    fits = n == 1 || n == o;
  }
  for (int64_t d : shape)
    fits = fits && d >= 0;
  if (!fits)
    return c.fail("cannot broadcast " + dimsToString(x) + " to " + dimsToString(shape));
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

Status inferTile(InferCtx &c) {
  const auto &repeats = c.ints("repeats");
  const Dims &x = c.in(0).dims;
  if (repeats.size() != x.size())
    return c.fail("repeats " + dimsToString(repeats) + " needs one entry per axis of " +
                  dimsToString(x));
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (repeats[i] < 0 || repeats[i] > UINT32_MAX)
      return c.fail("repeats " + dimsToString(repeats) + " must be in [0, 2^32)");
    auto tiled = (CheckedInt(out[i]) * repeats[i]).get();
    if (!tiled)
      return c.fail("axis " + str(static_cast<int64_t>(i)) + ": extent " + str(x[i]) +
                    " repeated " + str(repeats[i]) + " times overflows int64");
    out[i] = *tiled;
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

// The result shape of an op with run-time parameters: the "shape" attribute, of operand 0's
// rank; `fits(in, out)` says whether one axis' extents can go together.
template <class Fits> Status inferPlanned(InferCtx &c, const char *what, Fits fits) {
  const auto &shape = c.ints("shape");
  const Dims &x = c.in(0).dims;
  bool ok = shape.size() == x.size();
  for (size_t i = 0; ok && i < x.size(); ++i)
    ok = shape[i] >= 0 && fits(x[i], shape[i]);
  if (!ok)
    return c.fail("shape " + dimsToString(shape) + " cannot be " + what + " of " + dimsToString(x));
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

Status inferTileDynamic(InferCtx &c) {
  if (c.in(1).dims != Dims{c.in(0).rank()})
    return c.fail("repeats " + toString(c.in(1)) + " needs one entry per axis of " +
                  toString(c.in(0)));
  return inferPlanned(c, "a tiling", [](int64_t n, int64_t o) { return n ? o % n == 0 : o == 0; });
}

// Slice takes normalized parameters: one entry per axis, indices into the axis (not counted
// from the end) already clamped to [0, n] for a positive step and [-1, n - 1] for a negative
// one, as odla_Slice expects.
Status inferSlice(InferCtx &c) {
  const auto &starts = c.ints("starts"), &ends = c.ints("ends"), &steps = c.ints("steps");
  const Dims &x = c.in(0).dims;
  if (starts.size() != x.size() || ends.size() != x.size() || steps.size() != x.size())
    return c.fail("starts, ends and steps need one entry per axis of " + dimsToString(x));
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t s = steps[i], lo = s > 0 ? 0 : -1, hi = s > 0 ? x[i] : x[i] - 1;
    if (s == 0 || starts[i] < lo || starts[i] > hi || ends[i] < lo || ends[i] > hi ||
        x[i] > INT32_MAX || s < INT32_MIN || s > INT32_MAX)
      return c.fail("axis " + str(i) + " of " + dimsToString(x) + ": start " + str(starts[i]) +
                    ", end " + str(ends[i]) + ", step " + str(s) + " are not normalized");
    int64_t b = starts[i], e = ends[i];
    out[i] = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e - s - 1) / -s : 0);
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

void lowerSlice(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().Slice(c.in(0), i32s(n.ints("starts")), i32s(n.ints("ends")),
                             i32s(n.ints("steps")), c.outShape(0), c.outId(0)));
}

Status inferSliceDynamic(InferCtx &c) {
  int64_t k = c.in(1).numElements();
  for (int i = 1; i < c.numInputs(); ++i)
    if (c.hasInput(i) && (c.in(i).rank() != 1 || c.in(i).dims[0] != k || k > c.in(0).rank()))
      return c.fail("starts, ends, axes and steps must be vectors of the same length, at most "
                    "the rank of " +
                    toString(c.in(0)));
  return inferPlanned(c, "a slice", [](int64_t n, int64_t o) { return o <= n; });
}

int64_t padMode(const std::string &mode) {
  return mode == "reflect" ? ODLA_EXT_PAD_REFLECT
         : mode == "edge"  ? ODLA_EXT_PAD_EDGE
         : mode == "wrap"  ? ODLA_EXT_PAD_WRAP
                           : ODLA_EXT_PAD_CONSTANT;
}

Status inferPadDynamic(InferCtx &c) {
  const std::string &mode = c.node().s("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return c.fail("mode '" + mode + "' is not constant, reflect, edge or wrap");
  if (c.in(0).rank() < 1 || c.in(1).dims != Dims{2 * c.in(0).rank()})
    return c.fail("pads " + toString(c.in(1)) + " needs two entries per axis of " +
                  toString(c.in(0)));
  if (c.hasInput(2) && (c.in(2).dtype != c.in(0).dtype || c.in(2).numElements() != 1))
    return c.fail("value " + toString(c.in(2)) + " must be one element of " +
                  dtypeName(c.in(0).dtype));
  return inferPlanned(c, "a padding", [](int64_t, int64_t) { return true; });
}

Status inferCompress(InferCtx &c) {
  int64_t axis = c.i("axis");
  const Dims &x = c.in(0).dims;
  if (axis < 0 || axis >= c.in(0).rank())
    return c.fail("axis " + str(axis) + " out of range for rank " + str(c.in(0).rank()));
  if (c.in(1).rank() != 1 || c.in(1).dims[0] > x[axis])
    return c.fail("condition " + toString(c.in(1)) + " must be a vector of at most " +
                  str(x[axis]) + " entries");
  const auto &shape = c.ints("shape");
  bool fits = shape.size() == x.size() && shape[axis] >= 0 && shape[axis] <= c.in(1).dims[0];
  for (size_t d = 0; fits && d < x.size(); ++d)
    fits = static_cast<int64_t>(d) == axis || shape[d] == x[d];
  if (!fits)
    return c.fail("shape " + dimsToString(shape) + " cannot be a selection of at most " +
                  str(c.in(1).dims[0]) + " slices of " + dimsToString(x) + " along axis " +
                  str(axis));
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

Status inferEyeLike(InferCtx &c) {
  const auto &shape = c.ints("shape");
  auto dtype = dtypeFromName(c.node().s("dtype"));
  if (!dtype)
    return c.fail("dtype '" + c.node().s("dtype") + "' is not an element type");
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0)
    return c.fail("shape " + dimsToString(shape) + " must be a rank-2 shape");
  if (c.i("k") < -shape[0] || c.i("k") > shape[1])
    return c.fail("k " + str(c.i("k")) + " is outside [" + str(-shape[0]) + ", " + str(shape[1]) +
                  "]");
  c.setOut(0, TensorType{*dtype, shape});
  return Status::ok();
}

void lowerEyeLike(LowerCtx &c) {
  const Value &out = *c.node().output(0);
  c.setOut(0, c.sink().Fill({odlaType(out.dtype()), shapeArg(out.dims())}, ODLA_EyeLike,
                            static_cast<odla_float32>(c.node().i("k")), 0.0f, 0.0f, c.outId(0)));
}

Status inferReverseSequence(InferCtx &c) {
  int64_t batch = c.i("batch_axis"), time = c.i("time_axis");
  const Dims &x = c.in(0).dims;
  if (x.size() < 2)
    return c.fail("input " + toString(c.in(0)) + " must have rank 2 or more");
  if (!((batch == 0 && time == 1) || (batch == 1 && time == 0)))
    return c.fail("batch_axis " + str(batch) + " and time_axis " + str(time) +
                  " must be 0 and 1 in either order");
  if (c.in(1).dims != Dims{x[batch]})
    return c.fail("sequence_lens " + toString(c.in(1)) + " needs one entry per batch entry (" +
                  str(x[batch]) + ")");
  c.setOut(0, c.in(0));
  return Status::ok();
}

} // namespace

namespace ops {

const OpDef BitCast = {
    "BitCast",
    {{"x", OperandDef::Required, kStorageTypes}},
    1,
    {{"to", AttrKind::String, std::nullopt}},
    FusionClass::Opaque,
    kShapeOnly,
    inferBitCast,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtBitCast(c.in(0), odlaType(c.node().output(0)->dtype()), c.outId(0)));
    }};
const OpDef Reshape = {
    "Reshape",
    {{"x", OperandDef::Required, kStorageTypes}},
    1,
    {{"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Injective,
    kShapeOnly | kSelectsElements,
    inferReshape,
    [](LowerCtx &c) { c.setOut(0, c.sink().Reshape(c.in(0), c.outShape(0), c.outId(0))); },
    BatchRule::AlongAxis};
const OpDef Transpose = {"Transpose",
                         {{"x", OperandDef::Required, kStorageTypes}},
                         1,
                         {{"perm", AttrKind::Ints, std::nullopt}},
                         FusionClass::Injective,
                         kShapeOnly | kSelectsElements,
                         inferTranspose,
                         [](LowerCtx &c) {
                           c.setOut(0, c.sink().Transpose(c.in(0), shapeArg(c.node().ints("perm")),
                                                          c.outShape(0), c.outId(0)));
                         },
                         BatchRule::Transpose};
const OpDef Concat = {"Concat",
                      {{"inputs", OperandDef::Variadic, kStorageTypes}},
                      1,
                      {{"axis", AttrKind::Int, std::nullopt}},
                      FusionClass::Injective,
                      kShapeOnly | kSelectsElements,
                      inferConcat,
                      [](LowerCtx &c) {
                        c.setOut(0, c.sink().Concat(c.ins(),
                                                    static_cast<odla_int32>(c.node().i("axis")),
                                                    c.outShape(0), c.outId(0)));
                      },
                      BatchRule::Concat};
// Zero padding; other values and modes are decomposed at import.
const OpDef Pad = {"Pad",
                   {{"x", OperandDef::Required, kStorageTypes}},
                   1,
                   {{"pads", AttrKind::Ints, std::nullopt}},
                   FusionClass::Injective,
                   kShapeOnly,
                   inferPad,
                   lowerPad,
                   BatchRule::Pad};
const OpDef Broadcast = {
    "Broadcast",
    {{"x", OperandDef::Required, kStorageTypes}},
    1,
    {{"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Injective,
    kShapeOnly | kSelectsElements,
    inferBroadcast,
    [](LowerCtx &c) { c.setOut(0, c.sink().Broadcast(c.in(0), c.outShape(0), c.outId(0))); },
    BatchRule::Expand};
const OpDef Tile = {"Tile",
                    {{"x"}},
                    1,
                    {{"repeats", AttrKind::Ints, std::nullopt}},
                    FusionClass::Injective,
                    kShapeOnly | kSelectsElements,
                    inferTile,
                    [](LowerCtx &c) {
                      c.setOut(0, c.sink().Tile(c.in(0), u32s(c.node().ints("repeats")),
                                                c.outShape(0), c.outId(0)));
                    },
                    BatchRule::Tile};
const OpDef TileDynamic = {
    "TileDynamic",
    {{"x"}, {"repeats", OperandDef::Required, kIndexTypes}},
    1,
    {{"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Opaque,
    kShapeOnly,
    inferTileDynamic,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().TileDynamic(c.in(0), c.in(1), c.outShape(0), c.outId(0)));
    }};
const OpDef Slice = {"Slice",
                     {{"x", OperandDef::Required, kStorageTypes}},
                     1,
                     {{"starts", AttrKind::Ints, std::nullopt},
                      {"ends", AttrKind::Ints, std::nullopt},
                      {"steps", AttrKind::Ints, std::nullopt}},
                     FusionClass::Injective,
                     kShapeOnly | kSelectsElements,
                     inferSlice,
                     lowerSlice,
                     BatchRule::Slice};
const OpDef SliceDynamic = {"SliceDynamic",
                            {{"x"},
                             {"starts", OperandDef::Required, kIndexTypes},
                             {"ends", OperandDef::Required, kIndexTypes},
                             {"axes", OperandDef::Optional, kIndexTypes},
                             {"steps", OperandDef::Optional, kIndexTypes}},
                            1,
                            {{"shape", AttrKind::Ints, std::nullopt}},
                            FusionClass::Opaque,
                            kShapeOnly,
                            inferSliceDynamic,
                            [](LowerCtx &c) {
                              c.setOut(0, c.sink().ExtSliceDynamic(c.in(0), c.in(1), c.in(2),
                                                                   c.in(3), c.in(4), c.outShape(0),
                                                                   c.outId(0)));
                            }};
const OpDef PadDynamic = {
    "PadDynamic",
    {{"x"}, {"pads", OperandDef::Required, kIndexTypes}, {"value", OperandDef::Optional}},
    1,
    {{"mode", AttrKind::String, AttrValue(std::string("constant"))},
     {"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Opaque,
    kShapeOnly,
    inferPadDynamic,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtPadDynamic(c.in(0), c.in(1), c.in(2),
                                         static_cast<odla_int32>(padMode(c.node().s("mode"))),
                                         c.outShape(0), c.outId(0)));
    }};
const OpDef Compress = {
    "Compress",
    {{"x"}, {"condition", OperandDef::Required, maskOf(DType::Bool)}},
    1,
    {{"axis", AttrKind::Int, std::nullopt}, {"shape", AttrKind::Ints, std::nullopt}},
    FusionClass::Opaque,
    kShapeOnly,
    inferCompress,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().Compress(c.in(0), c.in(1), static_cast<odla_int32>(c.node().i("axis")),
                                    c.outShape(0), c.outId(0)));
    }};
const OpDef EyeLike = {"EyeLike",
                       {},
                       1,
                       {{"dtype", AttrKind::String, std::nullopt},
                        {"shape", AttrKind::Ints, std::nullopt},
                        {"k", AttrKind::Int, AttrValue(int64_t{0})}},
                       FusionClass::Opaque,
                       kTraitNone,
                       inferEyeLike,
                       lowerEyeLike};
const OpDef ReverseSequence = {
    "ReverseSequence",
    {{"x"}, {"sequence_lens", OperandDef::Required, kIndexTypes}},
    1,
    {{"batch_axis", AttrKind::Int, AttrValue(int64_t{1})},
     {"time_axis", AttrKind::Int, AttrValue(int64_t{0})}},
    FusionClass::Opaque,
    kShapeOnly,
    inferReverseSequence,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtReverseSequence(
                      c.in(0), c.in(1), static_cast<odla_int32>(c.node().i("batch_axis")),
                      static_cast<odla_int32>(c.node().i("time_axis")), c.outId(0)));
    }};

} // namespace ops

} // namespace odlac
