// Resize: the IR op behind ONNX Resize and Upsample, with every parameter of ONNX Resize (opsets
// 10 to 19; import expands the axes attribute to every axis). Its rows join the indexing family
// (Indexing.cpp). The result shape is always static (attribute `shape`); operands carry what the
// kernel must read at run time:
//   - scales: the per-axis scales when they are not out / in (runtime values, or constants
//     such as 0.6 for 4 -> 2 that change the coordinate mapping);
//   - sizes: runtime sizes, which execution checks against `shape`;
//   - roi: the crop boxes of tf_crop_and_resize.
// It lowers to odla_Resize when ODLA's coarse enums say exactly what it does and no operand
// is present, to odla_ResizeDynamic when they do and scales or sizes are, and to the
// extension odla_ExtResize otherwise (see runtime_stubs/reference/ops_resize.c for what the
// core enums stand for).
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <optional>

namespace odlac {
namespace {

// ONNX names, in the order of the ODLA_EXT_RESIZE_* and ODLA_EXT_NEAREST_* codes.
const std::vector<std::string> kCoordinateModes = {
    "half_pixel",           "pytorch_half_pixel", "align_corners",       "asymmetric",
    "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
const std::vector<std::string> kAspectPolicies = {"stretch", "not_larger", "not_smaller"};
const std::vector<std::string> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                                "ceil"};
const std::vector<std::string> kModes = {"nearest", "linear", "cubic"}; // odla_interpolation_mode

int indexIn(const std::vector<std::string> &names, const std::string &name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<int>(i);
  return -1;
}

std::string joined(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

Status checkVector(InferCtx &c, int operand, const char *what, int64_t n) {
  if (c.hasInput(operand) && c.in(operand).dims != Dims{n})
    return c.fail(std::string(what) + " " + toString(c.in(operand)) + " must be a vector of " +
                  str(n) + " entries");
  return Status::ok();
}

Status inferResize(InferCtx &c) {
  const TensorType &x = c.in(0);
  const auto &shape = c.ints("shape");
  const std::string &mode = c.node().s("mode");
  struct Named {
    const char *attr;
    const std::vector<std::string> &names;
  };
  for (const Named &a :
       {Named{"mode", kModes}, Named{"coordinate_transformation_mode", kCoordinateModes},
        Named{"nearest_mode", kNearestModes}, Named{"keep_aspect_ratio_policy", kAspectPolicies}})
    if (indexIn(a.names, c.node().s(a.attr)) < 0)
      return c.fail(std::string(a.attr) + " '" + c.node().s(a.attr) + "' is not one of " +
                    joined(a.names));
  if (mode != "nearest" && x.dtype == DType::Bool)
    return c.fail(mode + " interpolation needs a numeric input, got " + toString(x));
  if (c.node().s("keep_aspect_ratio_policy") != "stretch" && !c.hasInput(3))
    return c.fail("keep_aspect_ratio_policy '" + c.node().s("keep_aspect_ratio_policy") +
                  "' needs sizes");
  for (int64_t a : c.ints("aspect_axes"))
    if (a < 0 || a >= x.rank())
      return c.fail("aspect_axes " + dimsToString(c.ints("aspect_axes")) +
                    " name an axis outside input " + toString(x));
  if (static_cast<int64_t>(shape.size()) != x.rank())
    return c.fail("shape " + dimsToString(shape) + " must have the rank of input " + toString(x));
  for (int d = 0; d < x.rank(); ++d)
    if (shape[d] < 0 || (shape[d] > 0 && x.dims[d] == 0))
      return c.fail("cannot resize " + toString(x) + " to " + dimsToString(shape));
  if (c.hasInput(2) && c.hasInput(3))
    return c.fail("scales and sizes cannot both be given");
  if (Status s = checkVector(c, 1, "roi", 2 * x.rank()))
    return s;
  if (Status s = checkVector(c, 2, "scales", x.rank()))
    return s;
  if (Status s = checkVector(c, 3, "sizes", x.rank()))
    return s;
  c.setOut(0, TensorType{x.dtype, shape});
  return Status::ok();
}

// The core coordinate mode that expresses the node exactly, if there is one. pytorch_half_pixel
// differs from half_pixel only on an axis resized to extent 1.
std::optional<odla_resize_coordinate_mode> coreMode(const Node &n) {
  const std::string &ctm = n.s("coordinate_transformation_mode"), &mode = n.s("mode");
  const Dims &in = n.input(0)->dims(), &out = n.output(0)->dims();
  odla_resize_coordinate_mode m;
  if (n.i("antialias") != 0 || n.s("keep_aspect_ratio_policy") != "stretch")
    return std::nullopt;
  if (ctm == "half_pixel") {
    m = ODLA_HALF_PIXEL;
  } else if (ctm == "pytorch_half_pixel") {
    for (size_t d = 0; d < in.size(); ++d)
      if (out[d] == 1 && in[d] != 1)
        return std::nullopt;
    m = ODLA_HALF_PIXEL;
  } else if (ctm == "align_corners") {
    m = ODLA_ALIGN_CORNERS;
  } else if (ctm == "asymmetric") {
    m = ODLA_ASSYMMETRIC;
  } else if (ctm == "tf_half_pixel_for_nn") {
    m = ODLA_HALF_PIXEL_TF;
  } else {
    return std::nullopt; // tf_crop_and_resize, half_pixel_symmetric
  }
  if (mode == "nearest") {
    bool floors = m == ODLA_ASSYMMETRIC || m == ODLA_HALF_PIXEL_TF;
    return n.s("nearest_mode") == (floors ? "floor" : "round_prefer_floor")
               ? std::optional<odla_resize_coordinate_mode>(m)
               : std::nullopt;
  }
  if (n.i("exclude_outside") != 0 || (mode == "cubic" && n.f("cubic_coeff_a") != -0.75))
    return std::nullopt;
  return m;
}

void lowerResize(LowerCtx &c) {
  const Node &n = c.node();
  auto interpolation = static_cast<odla_interpolation_mode>(indexIn(kModes, n.s("mode")));
  auto core = coreMode(n);
  if (core && !n.input(1) && !n.input(2) && !n.input(3)) {
    const Dims &in = n.input(0)->dims(), &out = n.output(0)->dims();
    odla_uint32 mask = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != out[d])
        mask |= 1u << (in.size() - 1 - d);
    c.setOut(0, c.sink().Resize(c.in(0), interpolation, *core, mask, c.outShape(0), c.outId(0)));
    return;
  }
  if (core && !n.input(1)) {
    c.setOut(0, c.sink().ResizeDynamic(c.in(0), c.in(2), c.in(3), interpolation, *core,
                                       c.outShape(0), c.outId(0)));
    return;
  }
  odla_uint32 aspectMask = 0;
  for (int64_t a : n.ints("aspect_axes"))
    aspectMask |= 1u << a;
  if (n.ints("aspect_axes").empty())
    aspectMask = (1u << n.input(0)->dims().size()) - 1;
  c.setOut(
      0, c.sink().ExtResize(c.in(0), c.in(1), c.in(2), c.in(3), interpolation,
                            indexIn(kCoordinateModes, n.s("coordinate_transformation_mode")),
                            indexIn(kNearestModes, n.s("nearest_mode")),
                            static_cast<float>(n.f("cubic_coeff_a")), {n.i("exclude_outside") != 0},
                            static_cast<float>(n.f("extrapolation_value")), {n.i("antialias") != 0},
                            indexIn(kAspectPolicies, n.s("keep_aspect_ratio_policy")), aspectMask,
                            c.outShape(0), c.outId(0)));
}

} // namespace

namespace ops {

const OpDef Resize = {
    "Resize",
    {{"x"},
     {"roi", OperandDef::Optional, kFloatTypes},
     {"scales", OperandDef::Optional, kFloatTypes},
     {"sizes", OperandDef::Optional, kIndexTypes}},
    1,
    {{"shape", AttrKind::Ints, std::nullopt},
     {"mode", AttrKind::String, AttrValue(std::string("nearest"))},
     {"coordinate_transformation_mode", AttrKind::String, AttrValue(std::string("half_pixel"))},
     {"nearest_mode", AttrKind::String, AttrValue(std::string("round_prefer_floor"))},
     {"cubic_coeff_a", AttrKind::Float, AttrValue(-0.75)},
     {"exclude_outside", AttrKind::Int, AttrValue(int64_t{0})},
     {"extrapolation_value", AttrKind::Float, AttrValue(0.0)},
     // Linear and cubic downsampling stretch the filter by 1 / scale.
     {"antialias", AttrKind::Int, AttrValue(int64_t{0})},
     // With sizes: stretch, or one scale for the aspect axes (empty: all axes).
     {"keep_aspect_ratio_policy", AttrKind::String, AttrValue(std::string("stretch"))},
     {"aspect_axes", AttrKind::Ints, AttrValue(std::vector<int64_t>{})}},
    FusionClass::Opaque,
    kTraitNone,
    inferResize,
    lowerResize,
    BatchRule::RowsOfFirst};

} // namespace ops

} // namespace odlac
