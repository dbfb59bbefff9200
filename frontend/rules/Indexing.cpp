// Import rules for indexing ONNX ops: Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, OneHot, NonZero, TopK and Unique (Resize and Upsample are in
// Resize.cpp and join these rows).
//
// Operands that fix a result shape (OneHot's depth, TopK's K) are read when they are known at
// compile time; otherwise the shape the model declares for the
// result fixes them. NonZero and Unique have data-dependent result shapes: with an input known
// at compile time they become constants; NonZero of a runtime input becomes an extension op
// that checks the declared count when it runs; Unique of a runtime input is rejected.
#include "Rules.h"

#include <cassert>

#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace odlac {

namespace {

float halfToFloat(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v = exp == 0    ? std::ldexp(static_cast<float>(mant), -24)
            : exp == 31 ? (mant ? NAN : INFINITY)
                        : std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

} // namespace

// One element of a constant buffer of any numeric or bool type, as double (exact for every
// value the index-like and scale operands take). Also used by Resize.cpp.
double indexingElementAt(DType t, const void *data, size_t i) {
  switch (t) {
  case DType::F32:
    return static_cast<const float *>(data)[i];
  case DType::F64:
    return static_cast<const double *>(data)[i];
  case DType::F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16: {
    uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(data)[i]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::I8:
    return static_cast<const int8_t *>(data)[i];
  case DType::I16:
    return static_cast<const int16_t *>(data)[i];
  case DType::I32:
    return static_cast<const int32_t *>(data)[i];
  case DType::I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  case DType::U8:
  case DType::Bool:
    return static_cast<const uint8_t *>(data)[i];
  case DType::U16:
    return static_cast<const uint16_t *>(data)[i];
  case DType::U32:
    return static_cast<const uint32_t *>(data)[i];
  case DType::U64:
    return static_cast<double>(static_cast<const uint64_t *>(data)[i]);
  default: // the low-precision types, which no op reads as index or scale (their masks)
    assert(false && "indexingElementAt: a low-precision element type");
    break;
  }
  return 0;
}

namespace {

// Three-way comparison of two elements of one buffer, exact for every type; NaN ranks above
// every number and equals NaN.
int compareElements(DType t, const void *data, size_t i, size_t j) {
  auto cmp = [](auto a, auto b) {
    bool na = a != a, nb = b != b; // NOLINT(misc-redundant-expression): NaN (floats only)
    if (na || nb)
      return na == nb ? 0 : (na ? 1 : -1);
    return a < b ? -1 : (b < a ? 1 : 0);
  };
  switch (t) {
  case DType::I64:
    return cmp(static_cast<const int64_t *>(data)[i], static_cast<const int64_t *>(data)[j]);
  case DType::U64:
    return cmp(static_cast<const uint64_t *>(data)[i], static_cast<const uint64_t *>(data)[j]);
  default:
    return cmp(indexingElementAt(t, data, i), indexingElementAt(t, data, j));
  }
}

// ONNX's axis rules: in [-rank, rank).
Expected<int64_t> axisAttr(ImportCtx &ctx, const char *name, int64_t dflt, int64_t rank) {
  return normalizeAxis(ctx.attrInt(name, dflt), rank, name);
}

Status importGather(ImportCtx &ctx) {
  Value *x = ctx.input(0), *idx = ctx.input(1);
  auto axis = axisAttr(ctx, "axis", 0, x->type().rank());
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

Status importGatherElements(ImportCtx &ctx) {
  auto axis = axisAttr(ctx, "axis", 0, ctx.input(0)->type().rank());
  if (!axis)
    return axis.takeStatus();
  return finish(ctx, ctx.emit("GatherElements", {ctx.input(0), ctx.input(1)}, {{"axis", *axis}}));
}

Status importGatherND(ImportCtx &ctx) {
  return finish(ctx, ctx.emit("GatherND", {ctx.input(0), ctx.input(1)},
                              {{"batch_dims", ctx.attrInt("batch_dims", 0)}}));
}

// The reduction attribute: none, add and mul from opset 16, max and min from opset 18 (the IR
// op rejects other values).
Expected<std::string> scatterReduction(ImportCtx &ctx) {
  std::string r = ctx.attrString("reduction", "none");
  if ((r == "max" || r == "min") && ctx.opset() < 18)
    return ctx.fail("reduction '" + r + "' exists from opset 18; the model has opset " +
                    str(ctx.opset()));
  return r;
}

// Scatter (opsets 9 and 10) is ScatterElements without reduction.
Status importScatterElements(ImportCtx &ctx) {
  auto axis = axisAttr(ctx, "axis", 0, ctx.input(0)->type().rank());
  if (!axis)
    return axis.takeStatus();
  auto reduction = scatterReduction(ctx);
  if (!reduction)
    return reduction.takeStatus();
  return finish(ctx, ctx.emit("ScatterElements", {ctx.input(0), ctx.input(1), ctx.input(2)},
                              {{"axis", *axis}, {"reduction", *reduction}}));
}

Status importScatterND(ImportCtx &ctx) {
  auto reduction = scatterReduction(ctx);
  if (!reduction)
    return reduction.takeStatus();
  return finish(ctx, ctx.emit("ScatterND", {ctx.input(0), ctx.input(1), ctx.input(2)},
                              {{"reduction", *reduction}}));
}

// A scalar operand of any numeric type known at compile time, truncated toward zero (ONNX
// casts OneHot's depth and TopK's K to int64).
Expected<int64_t> constIntScalar(ImportCtx &ctx, int i, const char *what) {
  auto data = ctx.constData(i, what);
  if (!data)
    return data.takeStatus();
  const Value *v = ctx.input(i);
  if (v->type().numElements() != 1)
    return ctx.fail(std::string(what) + " must hold one element, got " + toString(v->type()));
  if (v->dtype() == DType::I64)
    return *(*data)->as<int64_t>();
  double d = indexingElementAt(v->dtype(), (*data)->data, 0);
  if (!(std::fabs(d) < 9.2e18))
    return ctx.fail(std::string(what) + " " + std::to_string(d) + " is not a valid integer");
  return static_cast<int64_t>(d);
}

// OneHot: opset 9 leaves an index outside [0, depth) all off; odla_OneHot implements opset 11,
// which counts negative indices from the end of depth, as ONNX Runtime does for both opsets.
Status importOneHot(ImportCtx &ctx) {
  Value *indices = ctx.input(0), *values = ctx.input(2);
  int64_t rank = indices->type().rank() + 1;
  auto axis = axisAttr(ctx, "axis", -1, rank);
  if (!axis)
    return axis.takeStatus();
  int64_t depth;
  if (isComputableFromConstants(*ctx.input(1))) {
    auto d = constIntScalar(ctx, 1, "depth");
    if (!d)
      return d.takeStatus();
    depth = *d;
  } else {
    auto t = declaredOutput(ctx, 0, rank, "depth is computed at run time");
    if (!t)
      return t.takeStatus();
    depth = t->dims[*axis];
  }
  if (depth < 1 || depth > INT32_MAX)
    return ctx.fail("depth " + str(depth) + " must be in [1, 2^31)");
  return finish(ctx, ctx.emit("OneHot", {indices, values}, {{"depth", depth}, {"axis", *axis}}));
}

// Whether element i of a constant is non-zero (NaN is, -0.0 is not).
bool nonZeroAt(DType t, const void *data, size_t i) {
  double v = indexingElementAt(t, data, i);
  return v != 0 || v != v;
}

Status importNonZero(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  if (!isComputableFromConstants(*x)) {
    auto t = declaredOutput(ctx, 0, 2,
                            "the number of non-zero elements of input '" + x->name() +
                                "' is known only at run time");
    if (!t)
      return t.takeStatus();
    if (t->dims[0] != rank)
      return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + toString(*t) +
                      ", but input " + toString(x->type()) + " has rank " + str(rank));
    return finish(ctx, ctx.emit("NonZero", {x}, {{"count", t->dims[1]}}));
  }
  auto data = ctx.constData(0, "input");
  if (!data)
    return data.takeStatus();
  int64_t n = x->type().numElements(), count = 0;
  for (int64_t i = 0; i < n; ++i)
    count += nonZeroAt(x->dtype(), (*data)->data, static_cast<size_t>(i));
  if (Status s = ctx.checkGenerated({DType::I64, {rank, count}}, "the coordinates"))
    return s;
  count = 0;
  std::vector<int64_t> coords; // row-major element order, then transposed
  std::vector<int64_t> c(static_cast<size_t>(rank), 0);
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(rank));
  for (int64_t i = 0; i < n; ++i) {
    if (nonZeroAt(x->dtype(), (*data)->data, static_cast<size_t>(i))) {
      for (int64_t d = 0; d < rank; ++d)
        rows[d].push_back(c[d]);
      ++count;
    }
    for (int64_t d = rank - 1; d >= 0 && ++c[d] == x->dims()[d]; --d)
      c[d] = 0;
  }
  for (const auto &r : rows)
    coords.insert(coords.end(), r.begin(), r.end());
  ctx.setOutput(
      0, ctx.constant(ctx.outputName(0), TensorType{DType::I64, {rank, count}}, coords.data()));
  return Status::ok();
}

// TopK: K is an attribute before opset 10, an input after; largest and sorted exist from
// opset 11. Results are always sorted (ONNX leaves the order open when sorted = 0).
Status importTopK(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  auto axis = axisAttr(ctx, "axis", -1, rank);
  if (!axis)
    return axis.takeStatus();
  int64_t k;
  if (ctx.opset() < 10) {
    k = ctx.attrInt("k", -1);
  } else if (isComputableFromConstants(*ctx.input(1))) {
    auto v = ctx.constInts(1, "K");
    if (!v)
      return v.takeStatus();
    if (v->size() != 1)
      return ctx.fail("K must hold one element, got " + toString(ctx.input(1)->type()));
    k = (*v)[0];
  } else {
    auto t = declaredOutput(ctx, 0, rank, "K is computed at run time");
    if (!t)
      return t.takeStatus();
    k = t->dims[*axis];
  }
  auto outs = ctx.emitResults("TopK", {x},
                              {{"k", k},
                               {"axis", *axis},
                               {"largest", ctx.attrInt("largest", 1)},
                               {"sorted", ctx.attrInt("sorted", 1)}},
                              2);
  if (!outs)
    return outs.takeStatus();
  ctx.setOutput(0, (*outs)[0]);
  ctx.setOutput(1, (*outs)[1]);
  return Status::ok();
}

// Unique of an input known at compile time: numpy.unique's results (sorted), or the unique
// slices in order of first occurrence (sorted = 0).
Status importUnique(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (!isComputableFromConstants(*x))
    return ctx.fail("the shapes of Unique's results depend on the values of input '" + x->name() +
                    "', which is known only at run time; only an input known at "
                    "compile time is supported");
  auto data = ctx.constData(0, "input");
  if (!data)
    return data.takeStatus();
  const TensorType &t = x->type();
  bool hasAxis = ctx.hasAttr("axis");
  int64_t axis = 0, outer = 1, n = t.numElements(), inner = 1;
  if (hasAxis) {
    auto a = axisAttr(ctx, "axis", 0, t.rank());
    if (!a)
      return a.takeStatus();
    axis = *a;
    n = t.dims[axis];
    for (int64_t d = 0; d < axis; ++d)
      outer *= t.dims[d];
    for (int64_t d = axis + 1; d < t.rank(); ++d)
      inner *= t.dims[d];
  }
  const void *xd = (*data)->data;
  auto at = [&](int64_t slice, int64_t o, int64_t i) {
    return static_cast<size_t>((o * n + slice) * inner + i);
  };
  auto compareSlices = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (int r = compareElements(t.dtype, xd, at(a, o, i), at(b, o, i)))
          return r;
    return 0;
  };
  // Sort slice positions (stably: equal slices keep their order), then group equal ones.
  if (Status s = ctx.checkGenerated({DType::I64, {n}}, "the slice indices"))
    return s;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compareSlices(a, b) < 0; });
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(n));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compareSlices(order[i - 1], order[i]) != 0) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[i]] = static_cast<int64_t>(first.size()) - 1;
  }
  if (ctx.attrInt("sorted", 1) == 0) { // renumber the groups by first occurrence
    std::vector<int64_t> byFirst(first.size());
    std::iota(byFirst.begin(), byFirst.end(), 0);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    std::vector<int64_t> rank(first.size()), f2(first.size()), c2(first.size());
    for (size_t g = 0; g < byFirst.size(); ++g) {
      rank[byFirst[g]] = static_cast<int64_t>(g);
      f2[g] = first[byFirst[g]];
      c2[g] = counts[byFirst[g]];
    }
    for (int64_t &v : inverse)
      v = rank[v];
    first = f2;
    counts = c2;
  }
  int64_t u = static_cast<int64_t>(first.size());
  Dims yDims = hasAxis ? t.dims : Dims{u};
  if (hasAxis)
    yDims[axis] = u;
  size_t elem = dtypeBytes(t.dtype);
  std::vector<unsigned char> y(static_cast<size_t>(outer * u * inner) * elem);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < u; ++s)
      std::memcpy(&y[static_cast<size_t>((o * u + s) * inner) * elem],
                  static_cast<const unsigned char *>(xd) + at(first[s], o, 0) * elem,
                  static_cast<size_t>(inner) * elem);
  const std::vector<int64_t> *results[] = {nullptr, &first, &inverse, &counts};
  for (int i = 0; i < ctx.numOutputs() && i < 4; ++i) {
    if (!ctx.wantsOutput(i))
      continue;
    if (i == 0)
      ctx.setOutput(0, ctx.constant(ctx.outputName(0), TensorType{t.dtype, yDims}, y.data()));
    else
      ctx.setOutput(i,
                    ctx.constant(ctx.outputName(i),
                                 TensorType{DType::I64, {static_cast<int64_t>(results[i]->size())}},
                                 results[i]->data()));
  }
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"Gather", 1, nullptr, reads({"axis"}), importGather},
    {"GatherElements", 11, nullptr, reads({"axis"}), importGatherElements},
    {"GatherND", 11, nullptr, reads({"batch_dims"}), importGatherND},
    {"Scatter", 9, nullptr, reads({"axis"}), importScatterElements},
    {"ScatterElements", 11, nullptr, reads({"axis", "reduction"}), importScatterElements},
    {"ScatterND", 11, nullptr, reads({"reduction"}), importScatterND},
    {"OneHot", 9, nullptr, reads({"axis"}), importOneHot},
    {"NonZero", 9, nullptr, {}, importNonZero},
    {"TopK", 1, nullptr, reads({"axis", "k", "largest", "sorted"}), importTopK},
    {"Unique", 11, nullptr, reads({"axis", "sorted"}), importUnique},
};

} // namespace

const std::vector<ImportRule> &indexingRules() { return kRules; }

} // namespace odlac
