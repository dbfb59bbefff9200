// Indexing: ops that select or place elements by index tensors: Gather, GatherElements,
// GatherND, ScatterElements, ScatterND, OneHot, TopK and NonZero (Resize has its own file,
// Resize.cpp). Index operands are int32 or int64; a negative index counts from
// the end of its axis, and an index out of range is an execution error of the kernel. Axes
// are normalized (non-negative) at import. ODLA 0.5 has no scatter and no op with a
// data-dependent result shape: those lower to extension ops (odla_ext_indexing.h).
#include "lower/Lowering.h"
#include "ops/Ops.h"

namespace odlac {

namespace {

Status checkAxis(InferCtx &c, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return c.fail("axis " + str(axis) + " out of range for rank " + str(rank));
  return Status::ok();
}

Status inferGather(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  int64_t axis = c.i("axis");
  if (Status s = checkAxis(c, axis, c.in(0).rank()))
    return s;
  Dims out(x.begin(), x.begin() + axis);
  out.insert(out.end(), c.in(1).dims.begin(), c.in(1).dims.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

// GatherElements and ScatterElements: indices have data's rank and fit inside data outside
// the axis.
Status checkElementIndices(InferCtx &c) {
  const Dims &x = c.in(0).dims, &idx = c.in(1).dims;
  if (Status s = checkAxis(c, c.i("axis"), c.in(0).rank()))
    return s;
  bool fits = idx.size() == x.size();
  for (size_t d = 0; fits && d < x.size(); ++d)
    fits = static_cast<int64_t>(d) == c.i("axis") || idx[d] <= x[d];
  if (!fits)
    return c.fail("indices " + dimsToString(idx) + " must have the rank of data " +
                  dimsToString(x) + " and no larger extent outside axis " + str(c.i("axis")));
  return Status::ok();
}

Status inferGatherElements(InferCtx &c) {
  if (Status s = checkElementIndices(c))
    return s;
  c.setOut(0, TensorType{c.in(0).dtype, c.in(1).dims});
  return Status::ok();
}

// GatherND's result dims, also the shape ScatterND's updates must have (batch_dims 0).
Expected<Dims> gatherNdDims(InferCtx &c, int64_t batchDims) {
  const Dims &x = c.in(0).dims, &idx = c.in(1).dims;
  int64_t q = static_cast<int64_t>(idx.size()), r = static_cast<int64_t>(x.size());
  if (q < 1 || batchDims < 0 || batchDims >= std::min(q, r))
    return c.fail("batch_dims " + str(batchDims) + " must be below the ranks of data " +
                  dimsToString(x) + " and indices " + dimsToString(idx));
  int64_t k = idx.back();
  if (k < 1 || k > r - batchDims)
    return c.fail("the last dim of indices " + dimsToString(idx) + " must be in [1, " +
                  str(r - batchDims) + "] for data " + dimsToString(x) + " and batch_dims " +
                  str(batchDims));
  for (int64_t d = 0; d < batchDims; ++d)
    if (idx[d] != x[d])
      return c.fail("batch dim " + str(d) + " differs: data " + dimsToString(x) + ", indices " +
                    dimsToString(idx));
  Dims out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + batchDims + k, x.end());
  return out;
}

Status inferGatherND(InferCtx &c) {
  auto out = gatherNdDims(c, c.i("batch_dims"));
  if (!out)
    return out.takeStatus();
  c.setOut(0, TensorType{c.in(0).dtype, *out});
  return Status::ok();
}

// Scatter reductions, in the order of the ODLA_EXT_SCATTER_* codes.
const char *const kReductions[] = {"none", "add", "mul", "max", "min"};

// The ODLA_EXT_SCATTER_* code of a node's reduction; -1 when it is unknown.
int reductionCode(const Node &n) {
  for (int i = 0; i < 5; ++i)
    if (n.s("reduction") == kReductions[i])
      return i;
  return -1;
}

Status checkReduction(InferCtx &c) {
  if (reductionCode(c.node()) < 0)
    return c.fail("reduction '" + c.node().s("reduction") +
                  "' is not one of none, add, mul, max, min");
  return Status::ok();
}

Status checkUpdates(InferCtx &c, const Dims &expected) {
  if (c.in(2).dtype != c.in(0).dtype || c.in(2).dims != expected)
    return c.fail("updates " + toString(c.in(2)) + " must be " +
                  toString(TensorType{c.in(0).dtype, expected}));
  return Status::ok();
}

Status inferScatterElements(InferCtx &c) {
  if (Status s = checkReduction(c))
    return s;
  if (Status s = checkElementIndices(c))
    return s;
  if (Status s = checkUpdates(c, c.in(1).dims))
    return s;
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferScatterND(InferCtx &c) {
  if (Status s = checkReduction(c))
    return s;
  auto updates = gatherNdDims(c, 0);
  if (!updates)
    return updates.takeStatus();
  if (Status s = checkUpdates(c, *updates))
    return s;
  c.setOut(0, c.in(0));
  return Status::ok();
}

// OneHot: `axis` is where the depth axis sits in the result (normalized at import).
Status inferOneHot(InferCtx &c) {
  int64_t depth = c.i("depth"), axis = c.i("axis"), rank = c.in(0).rank() + 1;
  if (depth < 1 || depth > INT32_MAX)
    return c.fail("depth " + str(depth) + " must be in [1, 2^31)");
  if (Status s = checkAxis(c, axis, rank))
    return s;
  if (c.in(1).numElements() != 2)
    return c.fail("values " + toString(c.in(1)) + " must hold 2 elements (off, on)");
  Dims out = c.in(0).dims;
  out.insert(out.begin() + axis, depth);
  c.setOut(0, TensorType{c.in(1).dtype, out});
  return Status::ok();
}

Status inferTopK(InferCtx &c) {
  int64_t axis = c.i("axis"), k = c.i("k");
  if (Status s = checkAxis(c, axis, c.in(0).rank()))
    return s;
  if (k < 0 || k > c.in(0).dims[axis] || k > UINT32_MAX)
    return c.fail("k " + str(k) + " must be in [0, " + str(c.in(0).dims[axis]) +
                  "] (the extent of axis " + str(axis) + " of " + toString(c.in(0)) +
                  ") and below 2^32");
  Dims out = c.in(0).dims;
  out[axis] = k;
  c.setOut(0, TensorType{c.in(0).dtype, out});
  c.setOut(1, TensorType{DType::I64, out});
  return Status::ok();
}

void lowerTopK(LowerCtx &c) {
  const Node &n = c.node();
  const Value &values = *n.output(0), &indices = *n.output(1);
  auto outs = c.sink().TopK(c.in(0), static_cast<odla_uint32>(n.i("k")), {n.i("largest") != 0},
                            {n.i("sorted") != 0}, static_cast<odla_uint32>(n.i("axis")),
                            {odlaType(values.dtype()), shapeArg(values.dims())},
                            {odlaType(indices.dtype()), shapeArg(indices.dims())},
                            lower::Ids{{values.name(), indices.name()}});
  c.setOut(0, outs.at(0));
  c.setOut(1, outs.at(1));
}

// NonZero with its result count known in advance; execution checks it.
Status inferNonZero(InferCtx &c) {
  int64_t count = c.i("count");
  if (count < 0 || count > c.in(0).numElements())
    return c.fail("count " + str(count) + " must be in [0, " + str(c.in(0).numElements()) +
                  "] for input " + toString(c.in(0)));
  c.setOut(0, TensorType{DType::I64, {c.in(0).rank(), count}});
  return Status::ok();
}

} // namespace

namespace ops {

const OpDef Gather = {"Gather",
                      {{"x"}, {"indices", OperandDef::Required, kIndexTypes}},
                      1,
                      {{"axis", AttrKind::Int, AttrValue(int64_t{0})}},
                      FusionClass::Injective,
                      kShapeOnly,
                      inferGather,
                      [](LowerCtx &c) {
                        c.setOut(0, c.sink().Gather(c.in(0), c.in(1),
                                                    static_cast<odla_int32>(c.node().i("axis")),
                                                    c.outShape(0), c.outId(0)));
                      },
                      BatchRule::AlongAxis};
const OpDef GatherElements = {
    "GatherElements",
    {{"x"}, {"indices", OperandDef::Required, kIndexTypes}},
    1,
    {{"axis", AttrKind::Int, AttrValue(int64_t{0})}},
    FusionClass::Injective,
    kShapeOnly,
    inferGatherElements,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().GatherElements(c.in(0), c.in(1),
                                          static_cast<odla_int32>(c.node().i("axis")),
                                          c.outShape(0), c.outId(0)));
    },
    BatchRule::GatherElements};
const OpDef GatherND = {
    "GatherND",
    {{"x"}, {"indices", OperandDef::Required, kIndexTypes}},
    1,
    {{"batch_dims", AttrKind::Int, AttrValue(int64_t{0})}},
    FusionClass::Injective,
    kShapeOnly,
    inferGatherND,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().GatherND(c.in(0), c.in(1),
                                    static_cast<odla_int32>(c.node().i("batch_dims")),
                                    c.outShape(0), c.outId(0)));
    }};
// Reductions apply in row-major order of the indices; with "none" the last update of a
// repeated index wins. bool combines as logic (add: or, mul: and).
const OpDef ScatterElements = {
    "ScatterElements",
    {{"data"}, {"indices", OperandDef::Required, kIndexTypes}, {"updates"}},
    1,
    {{"axis", AttrKind::Int, AttrValue(int64_t{0})},
     {"reduction", AttrKind::String, AttrValue(std::string("none"))}},
    FusionClass::Opaque,
    kTraitNone,
    inferScatterElements,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtScatterElements(c.in(0), c.in(1), c.in(2),
                                              static_cast<odla_int32>(c.node().i("axis")),
                                              reductionCode(c.node()), c.outId(0)));
    }};
const OpDef ScatterND = {"ScatterND",
                         {{"data"}, {"indices", OperandDef::Required, kIndexTypes}, {"updates"}},
                         1,
                         {{"reduction", AttrKind::String, AttrValue(std::string("none"))}},
                         FusionClass::Opaque,
                         kTraitNone,
                         inferScatterND,
                         [](LowerCtx &c) {
                           c.setOut(0, c.sink().ExtScatterND(c.in(0), c.in(1), c.in(2),
                                                             reductionCode(c.node()), c.outId(0)));
                         }};
// indices of any numeric type (floats truncate toward zero); negative ones count from
// the end of depth; one outside [-depth, depth) gives a row of off values.
const OpDef OneHot = {
    "OneHot",
    {{"indices", OperandDef::Required, kNumericTypes}, {"values"}},
    1,
    {{"depth", AttrKind::Int, std::nullopt}, {"axis", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferOneHot,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().OneHot(c.in(0), static_cast<odla_int32>(c.node().i("depth")), c.in(1),
                                  static_cast<odla_int32>(c.node().i("axis")), c.outShape(0),
                                  c.outId(0)));
    }};
// Results: values and int64 positions, sorted best first, ties in order of position.
const OpDef TopK = {"TopK",
                    {{"x", OperandDef::Required, kNumericTypes}},
                    2,
                    {{"k", AttrKind::Int, std::nullopt},
                     {"axis", AttrKind::Int, std::nullopt},
                     {"largest", AttrKind::Int, AttrValue(int64_t{1})},
                     {"sorted", AttrKind::Int, AttrValue(int64_t{1})}},
                    FusionClass::Opaque,
                    kTraitNone,
                    inferTopK,
                    lowerTopK};
const OpDef NonZero = {
    "NonZero",
    {{"x"}},
    1,
    {{"count", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferNonZero,
    [](LowerCtx &c) { c.setOut(0, c.sink().ExtNonZero(c.in(0), c.outShape(0), c.outId(0))); }};

} // namespace ops

} // namespace odlac
