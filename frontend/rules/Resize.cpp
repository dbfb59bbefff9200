// Import rules for ONNX Resize (opsets 10 to 19) and Upsample (opsets 7 and 9), which become
// the IR op Resize (compiler/ops/Resize.cpp).
// Resize-18's axes attribute is expanded here: roi, scales and sizes become vectors over every
// axis (runtime ones through a ScatterElements into the identity's values).
//
// The result shape must be static: it comes from sizes or scales known at compile time, or,
// when they are computed at run time, from the shape the model declares for the
// result (the kernel then checks the runtime values against it). Scales stay an operand
// whenever they differ from out / in, since they change the coordinate mapping (4 -> 2 with
// scale 0.6 maps x to x / 0.6, not x / 0.5).
#include "Rules.h"

#include "evaluate/Evaluate.h"

#include <algorithm>
#include <cmath>

namespace odlac {

double indexingElementAt(DType t, const void *data, size_t i); // Indexing.cpp

namespace {

// A float vector operand known at compile time, as doubles.
Expected<std::vector<double>> constFloats(ImportCtx &ctx, int i, const char *what) {
  auto data = ctx.constData(i, what);
  if (!data)
    return data.takeStatus();
  const Value *v = ctx.input(i);
  std::vector<double> out(static_cast<size_t>(v->type().numElements()));
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = indexingElementAt(v->dtype(), (*data)->data, k);
  return out;
}

struct ResizeSpec {
  std::string mode, coordinateMode, nearestMode, aspectPolicy = "stretch";
  double cubicCoeffA = -0.75, extrapolationValue = 0;
  int64_t excludeOutside = 0, antialias = 0;
  std::vector<int64_t> axes; // the axes roi, scales and sizes name (empty: all)
  Value *roi = nullptr, *scales = nullptr, *sizes = nullptr; // runtime operands
  Dims shape;
};

Status emitResize(ImportCtx &ctx, ResizeSpec &r) {
  std::vector<Value *> operands{ctx.input(0), r.roi, r.scales, r.sizes};
  while (!operands.back())
    operands.pop_back();
  auto out = ctx.emit("Resize", operands,
                      {{"shape", r.shape},
                       {"mode", r.mode},
                       {"coordinate_transformation_mode", r.coordinateMode},
                       {"nearest_mode", r.nearestMode},
                       {"cubic_coeff_a", r.cubicCoeffA},
                       {"exclude_outside", r.excludeOutside},
                       {"extrapolation_value", r.extrapolationValue},
                       {"antialias", r.antialias},
                       {"keep_aspect_ratio_policy", r.aspectPolicy},
                       {"aspect_axes", r.axes}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// The result shape from the model's declared shapes, for scales or sizes computed at run time.
Status declaredShape(ImportCtx &ctx, const char *what, const Value *v, ResizeSpec &r) {
  const TensorType &x = ctx.input(0)->type();
  auto t = ctx.declaredType(0);
  if (!t)
    return ctx.fail(std::string(what) + " (input '" + v->name() +
                    "') is computed at run time and the model declares no static shape "
                    "for output '" +
                    ctx.outputName(0) + "'");
  if (t->rank() != x.rank())
    return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + toString(*t) +
                    " for input " + toString(x));
  r.shape = t->dims;
  return Status::ok();
}

// The values of a vector over `r.axes` (`perAxis` entries each: roi has 2) spread over every
// axis of a rank-`rank` input, the other entries taken from `identity` (rank * perAxis).
template <class T>
Expected<std::vector<T>> spreadAxes(ImportCtx &ctx, const ResizeSpec &r, const std::vector<T> &v,
                                    std::vector<T> identity, int64_t rank, int perAxis,
                                    const char *what) {
  if (r.axes.empty())
    return v;
  size_t n = r.axes.size();
  if (v.size() != n * perAxis)
    return ctx.fail(std::string(what) + " has " + str(v.size()) + " entries for axes " +
                    dimsToString(r.axes) + " (needs " + str(n * perAxis) + ")");
  for (int k = 0; k < perAxis; ++k)
    for (size_t i = 0; i < n; ++i)
      identity[k * rank + r.axes[i]] = v[k * n + i];
  return identity;
}

// The same for a vector operand known only at run time: ScatterElements of it into a constant
// holding `identity` (cast to the operand's element type).
Expected<Value *> spreadAxesAtRunTime(ImportCtx &ctx, const ResizeSpec &r, Value *v,
                                      const std::vector<double> &identity, int perAxis,
                                      const char *what) {
  if (r.axes.empty())
    return v;
  int64_t rank = static_cast<int64_t>(identity.size()) / perAxis,
          n = static_cast<int64_t>(r.axes.size());
  if (v->dims() != Dims{n * perAxis})
    return ctx.fail(std::string(what) + " " + toString(v->type()) + " needs " + str(n * perAxis) +
                    " entries for axes " + dimsToString(r.axes));
  std::vector<int64_t> at;
  for (int k = 0; k < perAxis; ++k)
    for (int64_t a : r.axes)
      at.push_back(k * rank + a);
  Value *base = ctx.constant(ctx.tempName(std::string(what) + "_identity"),
                             {DType::F64, {rank * perAxis}}, identity.data());
  auto typed = ctx.emit("Cast", {base}, {{"to", std::string(dtypeName(v->dtype()))}},
                        ctx.tempName(std::string(what) + "_identity_t"));
  if (!typed)
    return typed;
  Value *indices = ctx.constant(ctx.tempName(std::string(what) + "_axes"),
                                {DType::I64, {n * perAxis}}, at.data());
  return ctx.emit("ScatterElements", {*typed, indices, v},
                  {{"axis", int64_t{0}}, {"reduction", std::string("none")}},
                  ctx.tempName(std::string(what) + "_all_axes"));
}

// keep_aspect_ratio_policy with sizes known at compile time: one scale for the resized axes,
// the smallest (not_larger) or largest (not_smaller) size / in; each of their extents is that
// scale times the input's, rounded half up. An empty resized axis has no scale; the extents
// are bounded (as constScales's) before they become integers.
Expected<Dims> aspectShape(const ImportCtx &ctx, const ResizeSpec &r, const Dims &in,
                           const std::vector<int64_t> &sizes) {
  std::vector<bool> resized(in.size(), r.axes.empty());
  for (int64_t a : r.axes)
    resized[a] = true;
  double scale = -1;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!resized[d])
      continue;
    if (in[d] < 1 || sizes[d] < 0)
      return ctx.fail("keep_aspect_ratio_policy=" + r.aspectPolicy + ": axis " + str(d) +
                      " of input " + dimsToString(in) + " and size " + str(sizes[d]) +
                      " give no scale (the axis must not be empty, the size not negative)");
    double s = static_cast<double>(sizes[d]) / static_cast<double>(in[d]);
    if (scale < 0 || (r.aspectPolicy == "not_larger" ? s < scale : s > scale))
      scale = s;
  }
  Dims out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!resized[d])
      continue;
    double extent = std::floor(scale * static_cast<double>(in[d]) + 0.5);
    if (!(extent < 1e15))
      return ctx.fail("keep_aspect_ratio_policy=" + r.aspectPolicy + ": sizes " +
                      dimsToString(sizes) + " scale axis " + str(d) + " of input " +
                      dimsToString(in) + " beyond 10^15");
    out[d] = static_cast<int64_t>(extent);
  }
  return out;
}

// Scales known at compile time: the result shape, and whether the kernel needs the scales
// (they differ from out / in, or tf_crop_and_resize maps coordinates with them). Each axis
// becomes floor(in * scale), tf_crop_and_resize's too: ONNX's shape inference, its reference
// implementation and ONNX Runtime all ignore the crop box there, where the text of the spec
// says floor(in * (roi_end - roi_start) * scale) (onnx/onnx#5783); a model's declared shapes
// follow the former.
Status constScales(ImportCtx &ctx, const std::vector<double> &scales, ResizeSpec &r, bool &needed) {
  const TensorType &x = ctx.input(0)->type();
  if (static_cast<int64_t>(scales.size()) != x.rank())
    return ctx.fail("scales has " + str(scales.size()) + " entries for input " + toString(x));
  needed = r.coordinateMode == "tf_crop_and_resize";
  r.shape.clear();
  for (int64_t d = 0; d < x.rank(); ++d) {
    double s = scales[d];
    if (!(s > 0) || !(s * x.dims[d] < 1e15))
      return ctx.fail("scale " + std::to_string(s) + " of axis " + str(d) + " must be positive");
    r.shape.push_back(static_cast<int64_t>(std::floor(x.dims[d] * s)));
    needed |= x.dims[d] == 0 || s != static_cast<double>(r.shape[d]) / x.dims[d];
  }
  return Status::ok();
}

// Resize-10's nearest rounding was left to runtimes; ONNX Runtime floors on axes that grow and
// rounds up on axes that shrink.
Status legacyNearestMode(ImportCtx &ctx, ResizeSpec &r) {
  const Dims &in = ctx.input(0)->dims();
  bool grows = false, shrinks = false;
  for (size_t d = 0; d < in.size(); ++d) {
    grows |= r.shape[d] > in[d];
    shrinks |= r.shape[d] < in[d];
  }
  if (grows && shrinks)
    return ctx.fail("nearest resizing from " + dimsToString(in) + " to " + dimsToString(r.shape) +
                    " grows some axes and shrinks others; opset 10 does not define how it "
                    "rounds (opset 11 and later have nearest_mode)");
  r.nearestMode = shrinks ? "ceil" : "floor";
  return Status::ok();
}

Status importResize(ImportCtx &ctx) {
  const TensorType &x = ctx.input(0)->type();
  bool v10 = ctx.opset() < 11;
  ResizeSpec r;
  r.mode = ctx.attrString("mode", "nearest");
  if (r.mode != "nearest" && r.mode != "linear" && (v10 || r.mode != "cubic"))
    return ctx.fail("attribute mode='" + r.mode + "' is not supported (nearest, linear" +
                    (v10 ? "" : ", cubic") + ")");
  r.antialias = ctx.attrInt("antialias", 0); // no effect on nearest
  if (r.antialias != 0 && r.antialias != 1)
    return ctx.fail("antialias=" + str(r.antialias) + " is not 0 or 1");
  r.aspectPolicy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
  if (r.aspectPolicy != "stretch" && r.aspectPolicy != "not_larger" &&
      r.aspectPolicy != "not_smaller")
    return ctx.fail("keep_aspect_ratio_policy='" + r.aspectPolicy +
                    "' is not one of stretch, not_larger, not_smaller");
  for (int64_t a : ctx.attrInts("axes")) {
    auto n = normalizeAxis(a, x.rank(), "axis");
    if (!n)
      return n.takeStatus();
    if (std::find(r.axes.begin(), r.axes.end(), *n) != r.axes.end())
      return ctx.fail("axes " + dimsToString(ctx.attrInts("axes")) + " repeat axis " + str(*n));
    r.axes.push_back(*n);
  }
  r.coordinateMode =
      v10 ? "asymmetric" : ctx.attrString("coordinate_transformation_mode", "half_pixel");
  r.nearestMode = ctx.attrString("nearest_mode", "round_prefer_floor");
  r.cubicCoeffA = ctx.attrFloat("cubic_coeff_a", -0.75);
  r.excludeOutside = ctx.attrInt("exclude_outside", 0);
  r.extrapolationValue = ctx.attrFloat("extrapolation_value", 0.0);
  int scalesAt = v10 ? 1 : 2, sizesAt = v10 ? -1 : 3;
  // An empty tensor stands for an absent operand (opset 11 requires roi and scales).
  auto present = [&](int i) {
    return i >= 0 && ctx.hasInput(i) && ctx.input(i)->type().numElements() > 0;
  };
  // What each operand holds on an axis that is not resized.
  std::vector<double> unitScales(x.rank(), 1.0), inDims(x.dims.begin(), x.dims.end());
  std::vector<double> wholeRoi(2 * x.rank(), 0.0);
  std::fill(wholeRoi.begin() + x.rank(), wholeRoi.end(), 1.0);
  bool crop = r.coordinateMode == "tf_crop_and_resize";
  std::vector<double> roi = wholeRoi;
  bool roiKnown = true;
  if (crop) {
    if (!present(1))
      return ctx.fail("coordinate_transformation_mode 'tf_crop_and_resize' needs roi");
    roiKnown = isComputableFromConstants(*ctx.input(1));
    if (roiKnown) {
      auto v = constFloats(ctx, 1, "roi");
      if (!v)
        return v.takeStatus();
      auto all = spreadAxes(ctx, r, *v, wholeRoi, x.rank(), 2, "roi");
      if (!all)
        return all.takeStatus();
      if (all->size() != roi.size())
        return ctx.fail("roi has " + str(all->size()) + " entries for input " + toString(x) +
                        " (needs " + str(roi.size()) + ")");
      roi = *all;
      r.roi = r.axes.empty()
                  ? ctx.input(1)
                  : ctx.constant(ctx.tempName("roi"), {DType::F64, {2 * x.rank()}}, roi.data());
    } else {
      auto all = spreadAxesAtRunTime(ctx, r, ctx.input(1), wholeRoi, 2, "roi");
      if (!all)
        return all.takeStatus();
      r.roi = *all;
    }
  }
  if (present(sizesAt)) {
    if (present(scalesAt))
      return ctx.fail("scales and sizes are both given");
    bool aspect = r.aspectPolicy != "stretch";
    if (isComputableFromConstants(*ctx.input(sizesAt))) {
      auto s = ctx.constInts(sizesAt, "sizes");
      if (!s)
        return s.takeStatus();
      auto all = spreadAxes(ctx, r, *s, std::vector<int64_t>(x.dims), x.rank(), 1, "sizes");
      if (!all)
        return all.takeStatus();
      if (static_cast<int64_t>(all->size()) != x.rank())
        return ctx.fail("sizes has " + str(all->size()) + " entries for input " + toString(x));
      if (aspect) {
        auto shape = aspectShape(ctx, r, x.dims, *all);
        if (!shape)
          return shape.takeStatus();
        r.shape = *shape;
      } else {
        r.shape = *all;
      }
      if (aspect) // the kernel takes its scale from them
        r.sizes = ctx.constant(ctx.tempName("sizes"), {DType::I64, {x.rank()}}, all->data());
    } else {
      auto all = spreadAxesAtRunTime(ctx, r, ctx.input(sizesAt), inDims, 1, "sizes");
      if (!all)
        return all.takeStatus();
      r.sizes = *all;
      if (Status s = declaredShape(ctx, "sizes", r.sizes, r))
        return s;
    }
  } else if (present(scalesAt)) {
    r.aspectPolicy = "stretch"; // it interprets sizes only
    if (isComputableFromConstants(*ctx.input(scalesAt))) {
      auto s = constFloats(ctx, scalesAt, "scales");
      if (!s)
        return s.takeStatus();
      auto all = spreadAxes(ctx, r, *s, unitScales, x.rank(), 1, "scales");
      if (!all)
        return all.takeStatus();
      bool needed = false;
      if (Status st = constScales(ctx, *all, r, needed))
        return st;
      if (needed)
        r.scales = r.axes.empty() ? ctx.input(scalesAt)
                                  : ctx.constant(ctx.tempName("scales"), {DType::F64, {x.rank()}},
                                                 all->data());
    } else {
      auto all = spreadAxesAtRunTime(ctx, r, ctx.input(scalesAt), unitScales, 1, "scales");
      if (!all)
        return all.takeStatus();
      r.scales = *all;
      if (Status s = declaredShape(ctx, "scales", r.scales, r))
        return s;
    }
  } else {
    return ctx.fail(v10 ? "scales is empty" : "needs scales or sizes (both are absent or empty)");
  }
  if (v10 && r.mode == "nearest")
    if (Status s = legacyNearestMode(ctx, r))
      return s;
  return emitResize(ctx, r);
}

// Upsample: asymmetric coordinates, nearest rounds down; scales is an attribute in opset 7 and
// an input from opset 9.
Status importUpsample(ImportCtx &ctx) {
  const TensorType &x = ctx.input(0)->type();
  ResizeSpec r;
  r.mode = ctx.attrString("mode", "nearest");
  if (r.mode != "nearest" && r.mode != "linear")
    return ctx.fail("attribute mode='" + r.mode + "' is not supported (nearest, linear)");
  r.coordinateMode = "asymmetric";
  r.nearestMode = "floor";
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    const onnx::AttributeProto *a = ctx.findAttr("scales");
    if (!a)
      return ctx.fail("attribute 'scales' is required");
    scales.assign(a->floats().begin(), a->floats().end());
  } else if (isComputableFromConstants(*ctx.input(1))) {
    auto s = constFloats(ctx, 1, "scales");
    if (!s)
      return s.takeStatus();
    scales = *s;
  } else {
    r.scales = ctx.input(1);
    if (Status s = declaredShape(ctx, "scales", r.scales, r))
      return s;
    return emitResize(ctx, r);
  }
  bool needed = false;
  if (Status s = constScales(ctx, scales, r, needed))
    return s;
  if (needed && ctx.opset() >= 9) {
    r.scales = ctx.input(1);
  } else if (needed) {
    std::vector<float> f(scales.begin(), scales.end());
    r.scales = ctx.constant(ctx.tempName("scales"), TensorType{DType::F32, {x.rank()}}, f.data());
  }
  return emitResize(ctx, r);
}

const std::vector<ImportRule> kRules = {
    {"Resize", 10, nullptr,
     reads({"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
            "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
            "nearest_mode"}),
     importResize},
    {"Upsample", 7, nullptr, reads({"mode", "scales"}), importUpsample},
};

} // namespace

const std::vector<ImportRule> &resizeRules() { return kRules; }

} // namespace odlac
