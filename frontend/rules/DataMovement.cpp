// Import rules for ONNX ops that move data: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Slice, Pad, Tile, Expand, DepthToSpace, SpaceToDepth, Compress,
// ReverseSequence and BitCast. The generators (Shape, Size, Range, ConstantOfShape, EyeLike,
// Trilu) are in ShapeGenerators.cpp.
//
// Parameters that shape the result (shapes, axes, pads, repeats, starts...) are read at
// compile time when they are constants or computed only from constants. When they are tensors
// known only at run time, the result shape comes from the model's declared shapes
// (ctx.declaredType): shape-only ops (Reshape, Squeeze, Unsqueeze, Expand, Split) then lower
// statically to that shape, and ops whose data placement depends on the parameters (Slice, Pad,
// Tile, Compress) use an op that reads them at run time and checks them against the planned shape.
#include "Rules.h"

#include "evaluate/Evaluate.h"
#include "ir/Limits.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

namespace odlac {

namespace {

// odla_Concat joins at most this many inputs (ODLA_MAX_OUTPUTS).
constexpr size_t kMaxConcatInputs = 64;

// The static result shape the model declares for output `i`, for an op whose result shape
// depends on a parameter that is known only at run time.
Expected<Dims> plannedDims(const ImportCtx &ctx, int i, const char *param, int input) {
  if (auto d = ctx.declaredDims(i))
    return *d;
  return ctx.fail(std::string(param) + " (input " + str(input) + ", '" + ctx.input(input)->name() +
                  "') is known only at run time and the model declares no " +
                  "static shape for output '" + ctx.outputName(i) +
                  "'; pin the inputs it depends on with --input-shape or make it a constant");
}

// plannedDims for an int64 parameter (shape, axes, repeats): its values are not read, so its
// type is checked here.
Expected<Dims> plannedInt64Dims(const ImportCtx &ctx, int i, const char *param, int input) {
  if (ctx.input(input)->dtype() != DType::I64)
    return ctx.fail(std::string(param) + " (input " + str(input) + ", '" +
                    ctx.input(input)->name() + "') must be int64, got " +
                    toString(ctx.input(input)->type()));
  return plannedDims(ctx, i, param, input);
}

// A copy of `x` named after the ONNX output: for decompositions that end up with no work.
Expected<Value *> passThrough(ImportCtx &ctx, Value *x) { return ctx.emit("Identity", {x}); }

// ---- Reshape family ------------------------------------------------------------------------

// Resolves ONNX Reshape's 0 (copy the input dim, unless allowzero) and -1 (infer).
Expected<Dims> resolveReshape(const ImportCtx &ctx, const Value *x, Dims shape, bool allowZero) {
  int64_t inferAt = -1;
  CheckedInt known = 1;
  bool hasZero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x->dims().size())
        return ctx.fail("shape " + dimsToString(shape) + " copies dim " + str(i) +
                        " (0), which input " + toString(x->type()) + " lacks");
      shape[i] = x->dims()[i];
    }
    hasZero |= shape[i] == 0;
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
  if (!known.valid())
    return ctx.fail("shape " + dimsToString(shape) + " has more than 2^63 elements");
  if (inferAt >= 0) {
    if (allowZero && hasZero)
      return ctx.fail("shape " + dimsToString(shape) + " has both -1 and 0 with allowzero=1");
    if (known.value() == 0 || x->type().numElements() % known.value() != 0)
      return ctx.fail("cannot infer the -1 in " + dimsToString(shape) + " for input " +
                      toString(x->type()));
    shape[inferAt] = x->type().numElements() / known.value();
  }
  return shape;
}

// BitCast-26: `to` names an ONNX element type of the input's width (the IR op checks it).
Status importBitCast(ImportCtx &ctx) {
  int64_t onnxType = ctx.attrInt("to", 0);
  auto to = dtypeFromOnnx(static_cast<int>(onnxType));
  if (!to)
    return ctx.fail(std::string("to=") + onnxTypeName(static_cast<int>(onnxType)) +
                    " is not supported (odlac has no such tensors)");
  return finish(ctx, ctx.emit("BitCast", {ctx.input(0)}, {{"to", std::string(dtypeName(*to))}}));
}

Status importReshape(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  if (ctx.opset() < 5) { // Reshape-1: the shape is an attribute
    if (!ctx.hasAttr("shape"))
      return ctx.fail("attribute 'shape' is required by Reshape-" + str(ctx.opset()));
    auto resolved = resolveReshape(ctx, x, ctx.attrInts("shape"), false);
    if (!resolved)
      return resolved.takeStatus();
    return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", *resolved}}));
  }
  if (!isConstant(ctx, 1)) {
    // The shape ONNX's inference planned already applied allowzero.
    auto planned = plannedInt64Dims(ctx, 0, "shape", 1);
    if (!planned)
      return planned.takeStatus();
    return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", *planned}}));
  }
  auto shape = ctx.constInts(1, "shape");
  if (!shape)
    return shape.takeStatus();
  auto resolved = resolveReshape(ctx, x, *shape, allowZero);
  if (!resolved)
    return resolved.takeStatus();
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", *resolved}}));
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

// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after; nullopt when
// the input is known only at run time.
Expected<std::optional<std::vector<int64_t>>> readAxes(ImportCtx &ctx) {
  if (ctx.opset() < 13)
    return std::optional<std::vector<int64_t>>(ctx.attrInts("axes"));
  if (!ctx.hasInput(1))
    return std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  if (!isConstant(ctx, 1))
    return std::optional<std::vector<int64_t>>();
  auto axes = ctx.constInts(1, "axes");
  if (!axes)
    return axes.takeStatus();
  return std::optional<std::vector<int64_t>>(*axes);
}

Status importSqueeze(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axes = readAxes(ctx);
  if (!axes)
    return axes.takeStatus();
  if (!*axes) {
    auto planned = plannedInt64Dims(ctx, 0, "axes", 1);
    if (!planned)
      return planned.takeStatus();
    return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", *planned}}));
  }
  std::set<int64_t> drop;
  for (int64_t a : **axes) {
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
    if ((*axes)->empty() ? x->dims()[d] != 1 : !drop.count(d))
      out.push_back(x->dims()[d]);
  return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", out}}));
}

Status importUnsqueeze(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axes = readAxes(ctx);
  if (!axes)
    return axes.takeStatus();
  if (!*axes) {
    auto planned = plannedInt64Dims(ctx, 0, "axes", 1);
    if (!planned)
      return planned.takeStatus();
    return finish(ctx, ctx.emit("Reshape", {x}, {{"shape", *planned}}));
  }
  if ((*axes)->empty())
    return ctx.fail("axes is empty");
  int64_t outRank = x->type().rank() + static_cast<int64_t>((*axes)->size());
  std::set<int64_t> add;
  for (int64_t a : **axes) {
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
  return finish(ctx,
                ctx.emit("Transpose", {ctx.input(0)}, {{"perm", ctx.attrInts("perm", reversed)}}));
}

// ---- Concat and Split ------------------------------------------------------------------

Status importConcat(ImportCtx &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.fail("needs at least one input");
  int64_t rank = ctx.input(0)->type().rank();
  if (!ctx.hasAttr("axis"))
    return ctx.fail("attribute 'axis' is required");
  auto axis = normalizeAxis(ctx.attrInt("axis", 1), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  std::vector<Value *> ins;
  for (int i = 0; i < ctx.numInputs(); ++i)
    ins.push_back(ctx.input(i));
  return finish(ctx, concatValues(ctx, ins, *axis));
}

// A Slice of `x` along one axis (normalized parameters, see the Slice row).
Expected<Value *> sliceAxis(ImportCtx &ctx, Value *x, int64_t axis, int64_t start, int64_t end,
                            int64_t step, const std::string &name) {
  int64_t rank = x->type().rank();
  std::vector<int64_t> starts(rank, 0), ends(x->dims()), steps(rank, 1);
  starts[axis] = start;
  ends[axis] = end;
  steps[axis] = step;
  return ctx.emit("Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}, name);
}

Status importSplit(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto axis = normalizeAxis(ctx.attrInt("axis", 0), x->type().rank(), "axis");
  if (!axis)
    return axis.takeStatus();
  int64_t n = x->dims()[*axis], outputs = ctx.numOutputs();
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13 && ctx.hasAttr("split")) {
    sizes = ctx.attrInts("split");
  } else if (ctx.opset() >= 13 && ctx.hasInput(1) && isConstant(ctx, 1)) {
    auto s = ctx.constInts(1, "split");
    if (!s)
      return s.takeStatus();
    sizes = *s;
  } else if (ctx.opset() >= 13 && ctx.hasInput(1)) {
    // Sizes known only at run time: the model's declared shapes give each output's extent.
    int64_t unknownAt = -1;
    CheckedInt rest = n;
    for (int64_t i = 0; i < outputs; ++i) {
      auto t = ctx.wantsOutput(i) ? ctx.declaredType(i) : std::nullopt;
      if (t && t->rank() == x->type().rank()) {
        sizes.push_back(t->dims[*axis]);
        rest -= t->dims[*axis];
      } else if (unknownAt < 0) {
        unknownAt = i;
        sizes.push_back(0);
      } else {
        return plannedDims(ctx, static_cast<int>(i), "split", 1).takeStatus();
      }
    }
    if (unknownAt >= 0)
      sizes[unknownAt] = rest.get().value_or(-1); // an overflow is no valid size
  } else if (ctx.hasAttr("num_outputs")) {        // opset 18: the last chunk may be smaller
    int64_t k = ctx.attrInt("num_outputs", 0);
    if (k != outputs || k < 1)
      return ctx.fail("num_outputs " + str(k) + " differs from the " + str(outputs) + " outputs");
    int64_t chunk = (n + k - 1) / k;
    for (int64_t i = 0; i < k; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, n - i * chunk)));
  } else {
    if (outputs < 1 || n % outputs != 0)
      return ctx.fail("axis " + str(*axis) + " of " + toString(x->type()) +
                      " does not split into " + str(outputs) + " equal parts");
    sizes.assign(outputs, n / outputs);
  }
  CheckedInt total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return ctx.fail("split " + dimsToString(sizes) + " has a negative size");
    total += s;
  }
  if (static_cast<int64_t>(sizes.size()) != outputs || total.get() != n)
    return ctx.fail("split " + dimsToString(sizes) + " does not divide axis " + str(*axis) + " (" +
                    str(n) + ") into the " + str(outputs) + " outputs");
  int64_t offset = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    int64_t begin = offset;
    offset += sizes[i];
    if (!ctx.wantsOutput(static_cast<int>(i)))
      continue;
    auto part = sliceAxis(ctx, x, *axis, begin, offset, 1, ctx.outputName(static_cast<int>(i)));
    if (!part)
      return part.takeStatus();
    ctx.setOutput(static_cast<int>(i), *part);
  }
  return Status::ok();
}

// ---- Slice ------------------------------------------------------------------------------

struct AxisSlice {
  int64_t start, end, step;
};

// ONNX Slice's rules for one axis of extent n, as numpy applies them (which is what ONNX's
// reference and test data do): negative indices count from the end, then indices are clamped
// to [0, n] for a positive step and to [-1, n - 1] for a negative one.
AxisSlice normalizeSlice(int64_t start, int64_t end, int64_t step, int64_t n) {
  // ONNX clamps a start to [0, n] for a positive step and [0, n - 1] for a negative one, an
  // end to [0, n] and [-1, n - 1]: a start before the axis with a negative step takes element 0.
  int64_t hi = step > 0 ? n : n - 1;
  auto fix = [&](int64_t v, int64_t lo) {
    if (v < 0)
      v = v < -n ? -1 : v + n;
    return std::clamp(v, lo, hi);
  };
  // A step longer than the axis takes at most one element, as one of the axis' length would.
  step = std::clamp(step, -(n + 1), n + 1);
  return {fix(start, 0), fix(end, step > 0 ? 0 : -1), step};
}

// For a slice that walks a tensor (a loop body's starts = f(i), ends = f(i + c), f a chain of
// reshapes, c constant): the width c of each sliced axis; nullopt for any other form.
std::optional<std::vector<int64_t>> constantWidths(const Value *starts, const Value *ends) {
  auto isReshape = [](const Value *v) { return v->producer() && v->producer()->is(ops::Reshape); };
  while (isReshape(starts) && isReshape(ends) &&
         starts->producer()->attrs() == ends->producer()->attrs()) {
    starts = starts->producer()->input(0);
    ends = ends->producer()->input(0);
  }
  const Node *add = ends->producer();
  if (!add || !add->is(ops::Add) || add->numInputs() != 2)
    return std::nullopt;
  const Value *k = add->input(0) == starts   ? add->input(1)
                   : add->input(1) == starts ? add->input(0)
                                             : nullptr;
  if (!k || k->type().numElements() != 1 || !isComputableFromConstants(*k) ||
      (k->dtype() != DType::I64 && k->dtype() != DType::I32))
    return std::nullopt;
  auto data = evaluateValue(*k, kMaxCompileTimeBytes);
  if (!data)
    return std::nullopt;
  int64_t c = k->dtype() == DType::I64 ? *(*data)->as<int64_t>() : *(*data)->as<int32_t>();
  return std::vector<int64_t>(static_cast<size_t>(starts->type().numElements()), c);
}

Status importSlice(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attrInts("starts");
    ends = ctx.attrInts("ends");
    axes = ctx.attrInts("axes");
  } else {
    const char *names[] = {"starts", "ends", "axes", "steps"};
    int dynamic = 0; // the first parameter known only at run time
    for (int i = 1; i <= 4 && !dynamic; ++i)
      if (ctx.hasInput(i) && !isConstant(ctx, i))
        dynamic = i;
    if (dynamic) {
      auto planned = plannedDims(ctx, 0, names[dynamic - 1], dynamic);
      // Without a declared shape (inside a loop body, say), a walk of constant width with
      // constant axes and unit steps still has a static shape (the kernel checks it).
      auto widths = !planned && dynamic <= 2 && ctx.hasInput(2) &&
                            (!ctx.hasInput(3) || isConstant(ctx, 3)) &&
                            (!ctx.hasInput(4) || isConstant(ctx, 4))
                        ? constantWidths(ctx.input(1), ctx.input(2))
                        : std::nullopt;
      if (widths) {
        auto axes = ctx.hasInput(3) ? ctx.constInts(3, "axes")
                                    : Expected<std::vector<int64_t>>(std::vector<int64_t>{});
        auto steps = ctx.hasInput(4) ? ctx.constInts(4, "steps")
                                     : Expected<std::vector<int64_t>>(std::vector<int64_t>{});
        if (axes && !ctx.hasInput(3))
          for (size_t i = 0; i < widths->size(); ++i)
            axes->push_back(static_cast<int64_t>(i));
        bool unit = axes && steps && axes->size() == widths->size();
        for (int64_t st : unit ? *steps : std::vector<int64_t>{})
          unit &= st == 1;
        Dims dims = x->dims();
        for (size_t i = 0; unit && i < widths->size(); ++i) {
          auto a = normalizeAxis((*axes)[i], rank, "axis");
          unit &= a && (*widths)[i] >= 0 && (*widths)[i] <= dims[*a];
          if (unit)
            dims[*a] = (*widths)[i];
        }
        if (unit)
          planned = dims;
      }
      if (!planned)
        return planned.takeStatus();
      return finish(ctx, ctx.emit("SliceDynamic",
                                  {x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                                  {{"shape", *planned}}));
    }
    std::vector<int64_t> *dst[] = {&starts, &ends, &axes, &steps};
    for (int i = 1; i <= 4; ++i) {
      if (!ctx.hasInput(i))
        continue;
      auto v = ctx.constInts(i, names[i - 1]);
      if (!v)
        return v.takeStatus();
      *dst[i - 1] = *v;
    }
  }
  if (axes.empty() && !(ctx.opset() >= 10 && ctx.hasInput(3)))
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty() && !(ctx.opset() >= 10 && ctx.hasInput(4)))
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.fail("starts " + dimsToString(starts) + ", ends " + dimsToString(ends) + ", axes " +
                    dimsToString(axes) + " and steps " + dimsToString(steps) + " differ in length");
  std::vector<int64_t> b(rank, 0), e(x->dims()), s(rank, 1);
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = normalizeAxis(axes[i], rank, "axis");
    if (!a)
      return a.takeStatus();
    if (!seen.insert(*a).second)
      return ctx.fail("axes " + dimsToString(axes) + " repeats axis " + str(*a));
    if (steps[i] == 0)
      return ctx.fail("steps " + dimsToString(steps) + " has a 0");
    AxisSlice n = normalizeSlice(starts[i], ends[i], steps[i], x->dims()[*a]);
    b[*a] = n.start;
    e[*a] = n.end;
    s[*a] = n.step;
  }
  return finish(ctx, ctx.emit("Slice", {x}, {{"starts", b}, {"ends", e}, {"steps", s}}));
}

// ---- Pad --------------------------------------------------------------------------------

// Pads `x` along `axis` by `front` and `back` (non-negative) elements in `mode`, with `value`
// (one element's bytes) broadcast in constant mode, by joining pieces with Concat (wrap: one
// Gather).
Expected<Value *> padAxis(ImportCtx &ctx, Value *x, int64_t axis, int64_t front, int64_t back,
                          const std::string &mode, const std::vector<unsigned char> &value,
                          const std::string &name) {
  int64_t n = x->dims()[axis];
  std::string tag = name.empty() ? ctx.outputName(0) : name;
  auto piece = [&](int64_t count, bool atFront) -> Expected<Value *> {
    Dims dims = x->dims();
    dims[axis] = count;
    std::string pieceName = tag + (atFront ? "/front" : "/back");
    if (mode == "constant") { // the value broadcast: constant folding keeps small pieces only
      Value *c = ctx.constant(pieceName + "/value", TensorType{x->dtype(), {}}, value.data());
      return ctx.emit("Broadcast", {c}, {{"shape", dims}}, pieceName);
    }
    if (mode == "edge") {
      auto edge =
          sliceAxis(ctx, x, axis, atFront ? 0 : n - 1, atFront ? 1 : n, 1, pieceName + "/edge");
      if (!edge)
        return edge;
      return ctx.emit("Broadcast", {*edge}, {{"shape", dims}}, pieceName);
    }
    // reflect: x[count], ..., x[1] in front; x[n - 2], ..., x[n - 1 - count] at the back.
    return atFront ? sliceAxis(ctx, x, axis, count, 0, -1, pieceName)
                   : sliceAxis(ctx, x, axis, n - 2, n - 2 - count, -1, pieceName);
  };
  if (mode == "wrap") { // out[i] = x[(i - front) mod n]: any pad, repeating x as needed
    if (n == 0)
      return ctx.fail("wrap padding of axis " + str(axis) + ", which is empty");
    int64_t total = n + front + back;
    if (Status s =
            ctx.checkGenerated({DType::I64, {total}}, "the wrap indices of axis " + str(axis)))
      return s;
    std::vector<int64_t> at(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i)
      at[static_cast<size_t>(i)] = ((i - front) % n + n) % n;
    Value *indices = ctx.constant(tag + "/wrap", {DType::I64, {total}}, at.data());
    return ctx.emit("Gather", {x, indices}, {{"axis", axis}}, name);
  }
  if (mode == "reflect" && (front >= n || back >= n))
    return ctx.fail("reflect pads " + str(front) + " and " + str(back) + " of axis " + str(axis) +
                    " must be smaller than its extent " + str(n));
  if (mode == "edge" && n == 0)
    return ctx.fail("edge padding of axis " + str(axis) + ", which is empty");
  std::vector<Value *> parts;
  if (front > 0) {
    auto p = piece(front, true);
    if (!p)
      return p;
    parts.push_back(*p);
  }
  parts.push_back(x);
  if (back > 0) {
    auto p = piece(back, false);
    if (!p)
      return p;
    parts.push_back(*p);
  }
  return ctx.emit("Concat", parts, {{"axis", axis}}, name);
}

// Pad-18's pads for only the axes of `axes` (2 k entries: the k begins, then the k ends),
// spread over all `rank` axes at run time: rows [begins; ends] scattered into a [2, rank]
// zero matrix at columns `axes` (ScatterElements takes the negative axes ONNX allows and fails
// the run on an axis out of range; ONNX leaves a repeated axis undefined: the last wins).
Expected<Value *> spreadPads(ImportCtx &ctx, Value *pads, Value *axes, int64_t rank) {
  int64_t k = axes->type().numElements();
  if (axes->type().rank() != 1 || (axes->dtype() != DType::I64 && axes->dtype() != DType::I32))
    return ctx.fail("axes " + toString(axes->type()) + " must be an int32 or int64 vector");
  if (k > rank)
    return ctx.fail("axes " + toString(axes->type()) + " names more axes than the rank " +
                    str(rank) + " of the data");
  if (pads->dtype() != DType::I64 || pads->type().dims != Dims{2 * k})
    return ctx.fail("pads " + toString(pads->type()) +
                    " must be int64 with two entries per "
                    "axis of axes " +
                    toString(axes->type()));
  auto row = ctx.reshape(axes, {1, k});
  if (!row)
    return row;
  auto columns = ctx.emit("Concat", {*row, *row}, {{"axis", int64_t{0}}}, ctx.tempName("columns"));
  if (!columns)
    return columns;
  auto updates = ctx.reshape(pads, {2, k});
  if (!updates)
    return updates;
  std::vector<int64_t> zeros(static_cast<size_t>(2 * rank), 0);
  Value *none = ctx.constant(ctx.tempName("no_pads"), {DType::I64, {2, rank}}, zeros.data());
  auto full = ctx.emit("ScatterElements", {none, *columns, *updates}, {{"axis", int64_t{1}}},
                       ctx.tempName("full_pads"));
  if (!full)
    return full;
  return ctx.reshape(*full, {2 * rank});
}

Status importPad(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  std::string mode = ctx.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ctx.fail("attribute mode='" + mode +
                    "' is not a padding mode (constant, reflect, "
                    "edge, wrap)");
  if (mode == "wrap" && ctx.opset() < 19)
    return ctx.fail("attribute mode='wrap' is defined from Pad-19; this node is Pad-" +
                    str(ctx.opset()));
  std::vector<int64_t> pads;
  std::vector<unsigned char> value(dtypeBytes(x->dtype()), 0);
  if (ctx.opset() < 11) {
    if (x->dtype() != DType::F16 && x->dtype() != DType::F32 && x->dtype() != DType::F64)
      return ctx.fail(std::string("Pad before opset 11 takes float16, float and double, not ") +
                      dtypeName(x->dtype()));
    pads = ctx.attrInts("pads");
    value = filledBytes(x->dtype(), ctx.attrFloat("value", 0.0), 1);
  } else {
    std::vector<int64_t> axes;
    bool dynamic = !isConstant(ctx, 1) || (ctx.hasInput(2) && !isConstant(ctx, 2)) ||
                   (ctx.hasInput(3) && !isConstant(ctx, 3));
    if (ctx.hasInput(3) && isConstant(ctx, 3)) {
      auto a = ctx.constInts(3, "axes");
      if (!a)
        return a.takeStatus();
      axes = *a;
    }
    if (dynamic) {
      bool allAxes = axes.empty() || static_cast<int64_t>(axes.size()) == rank;
      for (size_t i = 0; allAxes && i < axes.size(); ++i)
        allAxes = axes[i] == static_cast<int64_t>(i) || axes[i] == static_cast<int64_t>(i) - rank;
      Value *pads = ctx.input(1);
      if (ctx.hasInput(3) && !(isConstant(ctx, 3) && allAxes)) {
        auto spread = spreadPads(ctx, pads, ctx.input(3), rank);
        if (!spread)
          return spread.takeStatus();
        pads = *spread;
      }
      const char *param = !isConstant(ctx, 1)   ? "pads"
                          : !isConstant(ctx, 3) ? "axes"
                                                : "constant_value";
      auto planned = plannedDims(ctx, 0, param,
                                 !isConstant(ctx, 1)   ? 1
                                 : !isConstant(ctx, 3) ? 3
                                                       : 2);
      if (!planned)
        return planned.takeStatus();
      Value *v = ctx.input(2);
      if (v && v->type().numElements() != 1)
        return ctx.fail("constant_value " + toString(v->type()) + " must hold one element");
      if (v && v->type().rank() != 0) {
        auto r = ctx.reshape(v, {});
        if (!r)
          return r.takeStatus();
        v = *r;
      }
      return finish(ctx, ctx.emit("PadDynamic", {x, pads, mode == "constant" ? v : nullptr},
                                  {{"mode", mode}, {"shape", *planned}}));
    }
    auto p = ctx.constInts(1, "pads");
    if (!p)
      return p.takeStatus();
    pads = *p;
    if (!axes.empty()) { // opset 18: pads cover only these axes
      if (pads.size() != 2 * axes.size())
        return ctx.fail("pads " + dimsToString(pads) + " needs two entries per axis of " +
                        dimsToString(axes));
      std::vector<int64_t> full(2 * rank, 0);
      std::set<int64_t> seen;
      for (size_t i = 0; i < axes.size(); ++i) {
        auto a = normalizeAxis(axes[i], rank, "axis");
        if (!a)
          return a.takeStatus();
        if (!seen.insert(*a).second)
          return ctx.fail("axes " + dimsToString(axes) + " repeats axis " + str(*a));
        full[*a] = pads[i];
        full[*a + rank] = pads[i + axes.size()];
      }
      pads = full;
    }
    if (ctx.hasInput(2)) {
      auto c = ctx.constData(2, "constant_value");
      if (!c)
        return c.takeStatus();
      const Value *cv = ctx.input(2);
      if (cv->dtype() != x->dtype() || cv->type().numElements() != 1)
        return ctx.fail("constant_value " + toString(cv->type()) + " must be one element of " +
                        dtypeName(x->dtype()));
      value.assign((*c)->as<unsigned char>(), (*c)->as<unsigned char>() + value.size());
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return ctx.fail("pads " + dimsToString(pads) + " needs " + str(2 * rank) +
                    " entries for input " + toString(x->type()));
  // Any pad beyond the largest dim leaves a result too large or removes everything; bounding
  // them keeps the arithmetic below (extent + front + back) far from overflow.
  for (int64_t p : pads)
    if (p < -kMaxElements || p > kMaxElements)
      return ctx.fail("pads " + dimsToString(pads) + " has an entry beyond +-2^48");
  // Negative pads remove elements: slice them off first.
  std::vector<int64_t> starts(rank, 0), ends(x->dims()), steps(rank, 1);
  bool crop = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (pads[d] < 0)
      starts[d] = std::min(-pads[d], x->dims()[d]);
    if (pads[d + rank] < 0)
      ends[d] = std::max(starts[d], x->dims()[d] + pads[d + rank]);
    crop |= pads[d] < 0 || pads[d + rank] < 0;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (x->dims()[d] + pads[d] + pads[d + rank] < 0)
      return ctx.fail("pads " + dimsToString(pads) + " remove more than axis " + str(d) + " of " +
                      toString(x->type()) + " holds");
  std::vector<int64_t> grow(2 * rank);
  for (int64_t i = 0; i < 2 * rank; ++i)
    grow[i] = std::max<int64_t>(0, pads[i]);
  bool growing = std::any_of(grow.begin(), grow.end(), [](int64_t p) { return p > 0; });
  if (crop) {
    auto c = ctx.emit("Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}},
                      growing ? ctx.tempName("crop") : "");
    if (!c || !growing)
      return finish(ctx, c);
    x = *c;
  }
  if (!growing)
    return finish(ctx, passThrough(ctx, x));
  bool zero = std::all_of(value.begin(), value.end(), [](unsigned char b) { return b == 0; });
  if (mode == "constant" && zero)
    return finish(ctx, ctx.emit("Pad", {x}, {{"pads", grow}}));
  int64_t last = rank - 1;
  while (grow[last] == 0 && grow[last + rank] == 0)
    --last;
  for (int64_t d = 0; d <= last; ++d) {
    if (grow[d] == 0 && grow[d + rank] == 0)
      continue;
    auto p = padAxis(ctx, x, d, grow[d], grow[d + rank], mode, value,
                     d == last ? "" : ctx.tempName("pad" + str(d)));
    if (!p)
      return p.takeStatus();
    x = *p;
  }
  ctx.setOutput(0, x);
  return Status::ok();
}

// ---- CenterCropPad -------------------------------------------------------------------------

// CenterCropPad-18: each axis of `axes` (default all) cropped or zero-padded to the target
// extent around its center: a crop starts at (in - target) / 2, a pad puts (target - in) / 2
// in front (ONNX's reference rounds both down). The targets come from the shape input when it
// is known at compile time, else from the result shape ONNX's shape facts give.
Status importCenterCropPad(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  std::vector<int64_t> axes;
  for (int64_t a : ctx.attrInts("axes")) {
    auto n = normalizeAxis(a, rank, "axis");
    if (!n)
      return n.takeStatus();
    if (std::find(axes.begin(), axes.end(), *n) != axes.end())
      return ctx.fail("axes " + dimsToString(ctx.attrInts("axes")) + " repeat axis " + str(*n));
    axes.push_back(*n);
  }
  if (!ctx.hasAttr("axes"))
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  Dims target = x->dims();
  if (isConstant(ctx, 1)) {
    auto shape = ctx.constInts(1, "shape");
    if (!shape)
      return shape.takeStatus();
    if (shape->size() != axes.size())
      return ctx.fail("shape " + dimsToString(*shape) + " needs one entry per axis of " +
                      dimsToString(axes));
    for (size_t i = 0; i < axes.size(); ++i)
      target[axes[i]] = (*shape)[i];
  } else {
    auto planned = plannedInt64Dims(ctx, 0, "shape", 1);
    if (!planned)
      return planned.takeStatus();
    if (static_cast<int64_t>(planned->size()) != rank)
      return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + dimsToString(*planned) +
                      " for input " + toString(x->type()));
    for (int64_t d = 0; d < rank; ++d)
      if ((*planned)[d] != x->dims()[d] && std::find(axes.begin(), axes.end(), d) == axes.end())
        return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + dimsToString(*planned) +
                        ", which changes axis " + str(d) + " outside axes " + dimsToString(axes));
    target = *planned;
  }
  std::vector<int64_t> starts(rank, 0), ends(x->dims()), steps(rank, 1), pads(2 * rank, 0);
  bool crop = false, pad = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = x->dims()[d], t = target[d];
    if (t < 0)
      return ctx.fail("shape " + dimsToString(target) + " has a negative extent");
    if (t < in) {
      starts[d] = (in - t) / 2;
      ends[d] = starts[d] + t;
      crop = true;
    } else if (t > in) {
      pads[d] = (t - in) / 2;
      pads[d + rank] = t - in - pads[d];
      pad = true;
    }
  }
  if (crop) {
    auto c = ctx.emit("Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}},
                      pad ? ctx.tempName("crop") : "");
    if (!c)
      return c.takeStatus();
    x = *c;
  }
  if (pad)
    return finish(ctx, ctx.emit("Pad", {x}, {{"pads", pads}}));
  return finish(ctx, crop ? Expected<Value *>(x) : passThrough(ctx, x));
}

// ---- Tile and Expand ----------------------------------------------------------------------

Status importTile(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (!isConstant(ctx, 1)) {
    auto planned = plannedInt64Dims(ctx, 0, "repeats", 1);
    if (!planned)
      return planned.takeStatus();
    if (ctx.input(1)->dims() != Dims{x->type().rank()})
      return ctx.fail("repeats " + toString(ctx.input(1)->type()) +
                      " needs one entry per axis of " + toString(x->type()));
    return finish(ctx, ctx.emit("TileDynamic", {x, ctx.input(1)}, {{"shape", *planned}}));
  }
  auto repeats = ctx.constInts(1, "repeats");
  if (!repeats)
    return repeats.takeStatus();
  for (int64_t r : *repeats)
    if (r < 0)
      return ctx.fail("repeats " + dimsToString(*repeats) + " has a negative entry");
  return finish(ctx, ctx.emit("Tile", {x}, {{"repeats", *repeats}}));
}

Status importExpand(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  Dims out;
  if (!isConstant(ctx, 1)) {
    auto planned = plannedInt64Dims(ctx, 0, "shape", 1);
    if (!planned)
      return planned.takeStatus();
    out = *planned;
  } else {
    auto shape = ctx.constInts(1, "shape");
    if (!shape)
      return shape.takeStatus();
    auto dims = broadcastDims(x->dims(), *shape);
    if (!dims)
      return ctx.fail("input " + toString(x->type()) + " does not broadcast with shape " +
                      dimsToString(*shape));
    out = *dims;
  }
  return finish(ctx, ctx.emit("Broadcast", {x}, {{"shape", out}}));
}

// ---- DepthToSpace and SpaceToDepth: Reshape, Transpose, Reshape ---------------------------

Status reshapeTransposeReshape(ImportCtx &ctx, const Dims &split, const std::vector<int64_t> &perm,
                               const Dims &out) {
  auto a = ctx.reshape(ctx.input(0), split, ctx.tempName("split"));
  if (!a)
    return a.takeStatus();
  auto b = ctx.emit("Transpose", {*a}, {{"perm", perm}}, ctx.tempName("permute"));
  if (!b)
    return b.takeStatus();
  return finish(ctx, ctx.emit("Reshape", {*b}, {{"shape", out}}));
}

Status importDepthToSpace(ImportCtx &ctx) {
  const Value *x = ctx.input(0);
  int64_t b = ctx.attrInt("blocksize", 0);
  std::string mode = ctx.attrString("mode", "DCR");
  if (x->type().rank() != 4)
    return ctx.fail("input " + toString(x->type()) + " must have rank 4");
  if (mode != "DCR" && mode != "CRD")
    return ctx.fail("attribute mode='" + mode + "' is not supported (DCR, CRD)");
  int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  if (b < 1 || b > INT32_MAX || c % (b * b) != 0)
    return ctx.fail("blocksize " + str(b) + " does not divide the " + str(c) +
                    " channels into blocksize^2 groups");
  int64_t oc = c / (b * b);
  auto oh = (CheckedInt(h) * b).get(), ow = (CheckedInt(w) * b).get();
  if (!oh || !ow)
    return ctx.fail("blocksize " + str(b) + " times the spatial dims " + dimsToString({h, w}) +
                    " overflows int64");
  Dims out{n, oc, *oh, *ow};
  if (mode == "DCR")
    return reshapeTransposeReshape(ctx, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, out);
  return reshapeTransposeReshape(ctx, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out);
}

// SpaceToDepth's mode (opset 28) orders the output channels by block offset then channel
// (DCR) or by channel then block offset (CRD), as DepthToSpace's inverse.
Status importSpaceToDepth(ImportCtx &ctx) {
  const Value *x = ctx.input(0);
  int64_t b = ctx.attrInt("blocksize", 0);
  std::string mode = ctx.attrString("mode", "DCR");
  if (x->type().rank() != 4)
    return ctx.fail("input " + toString(x->type()) + " must have rank 4");
  if (mode != "DCR" && mode != "CRD")
    return ctx.fail("attribute mode='" + mode + "' is not supported (DCR, CRD)");
  int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  if (b < 1 || b > INT32_MAX || h % b != 0 || w % b != 0)
    return ctx.fail("blocksize " + str(b) + " does not divide the spatial dims " +
                    dimsToString({h, w}));
  if (!(CheckedInt(c) * b * b).valid())
    return ctx.fail("blocksize " + str(b) + " squared times the " + str(c) +
                    " channels overflows int64");
  std::vector<int64_t> perm = mode == "DCR" ? std::vector<int64_t>{0, 3, 5, 1, 2, 4}
                                            : std::vector<int64_t>{0, 1, 3, 5, 2, 4};
  return reshapeTransposeReshape(ctx, {n, c, h / b, b, w / b, b}, perm,
                                 {n, c * b * b, h / b, w / b});
}

// ---- Compress and ReverseSequence ---------------------------------------------------------

Status importCompress(ImportCtx &ctx) {
  Value *x = ctx.input(0), *cond = ctx.input(1);
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    auto a = normalizeAxis(ctx.attrInt("axis", 0), x->type().rank(), "axis");
    if (!a)
      return a.takeStatus();
    axis = *a;
  } else {
    auto flat = ctx.reshape(x, {x->type().numElements()});
    if (!flat)
      return flat.takeStatus();
    x = *flat;
  }
  if (cond->type().rank() != 1 || cond->dims()[0] > x->dims()[axis])
    return ctx.fail("condition " + toString(cond->type()) + " must be a vector of at most " +
                    str(x->dims()[axis]) + " entries (axis " + str(axis) + " of " +
                    toString(x->type()) + ")");
  if (!isConstant(ctx, 1)) {
    auto planned = plannedDims(ctx, 0, "condition", 1);
    if (!planned)
      return planned.takeStatus();
    return finish(ctx, ctx.emit("Compress", {x, cond}, {{"axis", axis}, {"shape", *planned}}));
  }
  // A condition known at compile time selects fixed slices: a Slice when they are
  // contiguous, else a Gather.
  auto data = ctx.constData(1, "condition");
  if (!data)
    return data.takeStatus();
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->dims()[0]; ++i)
    if ((*data)->as<unsigned char>()[i])
      keep.push_back(i);
  if (keep.empty() || keep.back() - keep.front() + 1 == static_cast<int64_t>(keep.size())) {
    int64_t begin = keep.empty() ? 0 : keep.front();
    return finish(ctx,
                  sliceAxis(ctx, x, axis, begin, begin + static_cast<int64_t>(keep.size()), 1, ""));
  }
  Value *indices = ctx.constant(ctx.tempName("indices"),
                                {DType::I64, {static_cast<int64_t>(keep.size())}}, keep.data());
  return finish(ctx, ctx.emit("Gather", {x, indices}, {{"axis", axis}}));
}

Status importReverseSequence(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  return finish(ctx, ctx.emit("ReverseSequence", {x, ctx.input(1)},
                              {{"batch_axis", ctx.attrInt("batch_axis", 1)},
                               {"time_axis", ctx.attrInt("time_axis", 0)}}));
}

const std::vector<ImportRule> kRules = {
    {"BitCast", 26, nullptr, reads({"to"}), importBitCast},
    {"Concat", 1, nullptr, reads({"axis"}), importConcat},
    {"Reshape", 1, nullptr,
     reads({"shape"}, {noEffect("consumed_inputs", "a memory-reuse hint of ONNX's first opsets")}),
     importReshape},
    {"Reshape", 5, nullptr, reads({"allowzero"}), importReshape},
    {"Flatten", 1, nullptr, reads({"axis"}), importFlatten},
    {"Squeeze", 1, nullptr, reads({"axes"}), importSqueeze},
    {"Unsqueeze", 1, nullptr, reads({"axes"}), importUnsqueeze},
    {"Transpose", 1, nullptr, reads({"perm"}), importTranspose},
    {"Split", 1, nullptr, reads({"axis", "split", "num_outputs"}), importSplit},
    {"Slice", 1, nullptr, reads({"starts", "ends", "axes"}), importSlice},
    {"Pad", 1, nullptr, reads({"mode", "pads", "value"}), importPad},
    {"CenterCropPad", 18, nullptr, reads({"axes"}), importCenterCropPad},
    {"Tile", 6, nullptr, {}, importTile},
    {"Expand", 8, nullptr, {}, importExpand},
    {"DepthToSpace", 1, nullptr, reads({"blocksize", "mode"}), importDepthToSpace},
    {"SpaceToDepth", 1, nullptr, reads({"blocksize", "mode"}), importSpaceToDepth},
    {"Compress", 9, nullptr, reads({"axis"}), importCompress},
    {"ReverseSequence", 10, nullptr, reads({"batch_axis", "time_axis"}), importReverseSequence},
};

} // namespace

Expected<Value *> concatValues(ImportCtx &ctx, std::vector<Value *> ins, int64_t axis) {
  // Longer lists are joined in groups first.
  for (int round = 0; ins.size() > kMaxConcatInputs; ++round) {
    std::vector<Value *> joined;
    for (size_t i = 0; i < ins.size(); i += kMaxConcatInputs) {
      std::vector<Value *> group(ins.begin() + i,
                                 ins.begin() + std::min(ins.size(), i + kMaxConcatInputs));
      auto v = ctx.emit("Concat", group, {{"axis", axis}},
                        ctx.tempName("concat" + std::to_string(round) + "_" +
                                     std::to_string(i / kMaxConcatInputs)));
      if (!v)
        return v.takeStatus();
      joined.push_back(*v);
    }
    ins = joined;
  }
  return ctx.emit("Concat", ins, {{"axis", axis}});
}

const std::vector<ImportRule> &dataMovementRules() { return kRules; }

} // namespace odlac
