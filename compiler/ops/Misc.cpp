// Ops that fit no other family: signal windows and transforms, detection (NMS, RoiAlign),
// sampling, and text features. Rows whose ODLA 0.5 function fits lower to it (NMS,
// MaxRoiPool, TfIdfVectorize); the others lower to the misc extensions (odla_ext_misc.h).
//
// Several of these ONNX ops have result shapes that depend on the values of scalar operands
// (a window's size, STFT's frame step, the number of boxes NMS keeps). Their rows carry the
// result shape as attributes (fixed at import from constants or ONNX's shape facts) and keep
// the scalar operands, which the kernels read at run time and check against that shape.
#include "lower/Lowering.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

int indexIn(const std::vector<std::string> &names, const std::string &name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<int>(i);
  return -1;
}

Status checkName(InferCtx &c, const char *attr, const std::vector<std::string> &names) {
  if (indexIn(names, c.node().s(attr)) >= 0)
    return Status::ok();
  std::string all;
  for (const std::string &n : names)
    all += (all.empty() ? "" : ", ") + n;
  return c.fail(std::string(attr) + " '" + c.node().s(attr) + "' is not one of " + all);
}

// A scalar operand (one element, any rank), when present.
Status checkScalar(InferCtx &c, int i, const char *what) {
  if (c.hasInput(i) && c.in(i).numElements() != 1)
    return c.fail(std::string(what) + " " + toString(c.in(i)) + " must hold one element");
  return Status::ok();
}

Status checkPositive(InferCtx &c, const char *attr) {
  if (c.i(attr) < 1)
    return c.fail(std::string(attr) + " " + str(c.i(attr)) + " must be at least 1");
  return Status::ok();
}

// The element type named by attribute `to`.
Expected<DType> resultType(InferCtx &c) {
  auto t = dtypeFromName(c.node().s("to"));
  if (!t || *t == DType::Bool)
    return c.fail("to '" + c.node().s("to") + "' is not a numeric element type");
  return *t;
}

lower::VType vtypeOf(const Value &v) { return {odlaType(v.dtype()), shapeArg(v.dims())}; }

odla_int32 i32(int64_t v) { return static_cast<odla_int32>(v); }

// ---- Detection ---------------------------------------------------------------------------

// boxes [batches, boxes, 4] and scores [batches, classes, boxes]; the result is [count, 3].
Status inferBoxesAndScores(InferCtx &c) {
  const Dims &b = c.in(0).dims, &s = c.in(1).dims;
  if (b.size() != 3 || b[2] != 4 || s.size() != 3 || s[0] != b[0] || s[2] != b[1])
    return c.fail("boxes " + toString(c.in(0)) + " must be [batches, boxes, 4] and scores " +
                  toString(c.in(1)) + " [batches, classes, boxes]");
  // At most every box of every class of every batch; each dim is below 2^48, their product
  // may not be.
  int64_t count = c.i("count");
  auto most = (CheckedInt(b[0]) * s[1] * b[1]).get().value_or(INT64_MAX);
  if (count < 0 || count > most)
    return c.fail("count " + str(count) + " must be in [0, " + str(most) +
                  "] (batches x classes x boxes)");
  c.setOut(0, TensorType{DType::I64, {count, 3}});
  return Status::ok();
}

Status inferNMS(InferCtx &c) {
  int64_t maxOut = c.i("max_output_boxes_per_class");
  if (maxOut < 0 || maxOut > UINT32_MAX)
    return c.fail("max_output_boxes_per_class " + str(maxOut) + " must be in [0, 2^32)");
  return inferBoxesAndScores(c);
}

Status inferNonMaxSuppression(InferCtx &c) {
  if (c.i("center_point_box") != 0 && c.i("center_point_box") != 1)
    return c.fail("center_point_box " + str(c.i("center_point_box")) + " must be 0 or 1");
  for (auto [i, what] : {std::pair{2, "max_output_boxes_per_class"}, std::pair{3, "iou_threshold"},
                         std::pair{4, "score_threshold"}})
    if (Status s = checkScalar(c, i, what))
      return s;
  return inferBoxesAndScores(c);
}

const std::vector<std::string> kRoiModes = {"avg", "max"}; // ODLA_EXT_ROI_*

// X [N, C, H, W] and rois [R, columns] of one type; the result is [R, C, out_h, out_w].
Status inferRegions(InferCtx &c, int64_t columns, int64_t outH, int64_t outW) {
  const TensorType &x = c.in(0), &r = c.in(1);
  if (x.rank() != 4 || r.rank() != 2 || r.dims[1] != columns || r.dtype != x.dtype)
    return c.fail("X " + toString(x) + " must be [N, C, H, W] and rois " + toString(r) + " [R, " +
                  str(columns) + "] of X's element type");
  if (outH < 1 || outW < 1 || outH > INT32_MAX || outW > INT32_MAX)
    return c.fail("output size " + str(outH) + "x" + str(outW) +
                  " must be at least 1x1, each below 2^31");
  c.setOut(0, TensorType{x.dtype, {r.dims[0], x.dims[1], outH, outW}});
  return Status::ok();
}

Status inferRoiAlign(InferCtx &c) {
  if (Status s = checkName(c, "mode", kRoiModes))
    return s;
  if (Status s = inferRegions(c, 4, c.i("output_height"), c.i("output_width")))
    return s;
  if (c.i("sampling_ratio") < 0 || c.i("sampling_ratio") > INT32_MAX)
    return c.fail("sampling_ratio " + str(c.i("sampling_ratio")) +
                  " must be in [0, 2^31) (0: adaptive)");
  if (c.in(2).dims != Dims{c.in(1).dims[0]})
    return c.fail("batch_indices " + toString(c.in(2)) +
                  " must be a vector of one entry per "
                  "row of rois " +
                  toString(c.in(1)));
  return Status::ok();
}

Status inferMaxRoiPool(InferCtx &c) {
  const auto &shape = c.ints("pooled_shape");
  if (shape.size() != 2)
    return c.fail("pooled_shape must have 2 entries, got " + str(shape.size()));
  return inferRegions(c, 5, shape[0], shape[1]);
}

// ---- Sampling ----------------------------------------------------------------------------

const std::vector<std::string> kGridModes = {"bilinear", "nearest", "bicubic"}; // ODLA_EXT_GRID_*
const std::vector<std::string> kGridPaddings = {"zeros", "border", "reflection"};

Status inferGridSample(InferCtx &c) {
  if (Status s = checkName(c, "mode", kGridModes))
    return s;
  if (Status s = checkName(c, "padding_mode", kGridPaddings))
    return s;
  // r sampled axes, r from 1 to 3 (the reference kernel's REF_GRID_MAX_SPATIAL).
  const TensorType &x = c.in(0), &g = c.in(1);
  int64_t r = static_cast<int64_t>(x.rank()) - 2;
  if (r < 1 || r > 3 || g.rank() != x.rank() || g.dims[0] != x.dims[0] || g.dims.back() != r)
    return c.fail("X " + toString(x) + " must be [N, C, D1, ..., Dr] with r from 1 to 3 and grid " +
                  toString(g) + " [N, O1, ..., Or, r]");
  Dims out = {x.dims[0], x.dims[1]};
  for (int64_t k = 0; k < r; ++k) {
    if (x.dims[2 + k] < 1)
      return c.fail("X " + toString(x) + " has no elements to sample");
    out.push_back(g.dims[1 + k]);
  }
  c.setOut(0, TensorType{x.dtype, out});
  return Status::ok();
}

// theta [N, r, r + 1] (r = 2 or 3) and size [r + 2]; `dims` holds D1, ..., Dr (from size when
// it is known at compile time, else from the model's declared result: the kernel checks size
// against them at run time).
Status inferAffineGrid(InferCtx &c) {
  const TensorType &theta = c.in(0), &size = c.in(1);
  const auto &dims = c.ints("dims");
  int64_t r = theta.rank() == 3 ? theta.dims[1] : 0;
  if ((r != 2 && r != 3) || theta.dims[2] != r + 1)
    return c.fail("theta " + toString(theta) + " must be [N, 2, 3] or [N, 3, 4]");
  if (size.rank() != 1 || size.dims[0] != r + 2)
    return c.fail("size " + toString(size) + " must hold " + str(r + 2) + " values for theta " +
                  toString(theta));
  if (static_cast<int64_t>(dims.size()) != r)
    return c.fail("dims " + dimsToString(dims) + " must have " + str(r) + " entries");
  Dims out = {theta.dims[0]};
  for (int64_t d : dims) {
    if (d < 0)
      return c.fail("dims " + dimsToString(dims) + " has a negative entry");
    out.push_back(d);
  }
  out.push_back(r);
  c.setOut(0, TensorType{theta.dtype, out});
  return Status::ok();
}

// ---- Signal processing -------------------------------------------------------------------

const std::vector<std::string> kWindows = {"hann", "hamming", "blackman"}; // ODLA_EXT_WINDOW_*

Status inferWindow(InferCtx &c) {
  if (Status s = checkName(c, "window", kWindows))
    return s;
  if (Status s = checkScalar(c, 0, "size"))
    return s;
  if (c.i("length") < 0)
    return c.fail("length " + str(c.i("length")) + " must not be negative");
  auto t = resultType(c);
  if (!t)
    return t.takeStatus();
  c.setOut(0, TensorType{*t, {c.i("length")}});
  return Status::ok();
}

// x [..., n, ..., 1 or 2]: the result has `bins` entries along axis and a last dim of 2, or of
// 1 for the inverse of a one-sided spectrum (real).
Status inferDFT(InferCtx &c) {
  const TensorType &x = c.in(0);
  int64_t axis = c.i("axis"), bins = c.i("bins");
  if (x.rank() < 2 || (x.dims.back() != 1 && x.dims.back() != 2))
    return c.fail("input " + toString(x) + " must have a last dim of 1 (real) or 2 (complex)");
  if (axis < 0 || axis >= x.rank() - 1)
    return c.fail("axis " + str(axis) + " must be a signal axis of " + toString(x) +
                  " (not the last)");
  if (bins < 1)
    return c.fail("bins " + str(bins) + " must be at least 1");
  if (Status s = checkScalar(c, 1, "dft_length"))
    return s;
  if (Status s = checkScalar(c, 2, "axis"))
    return s;
  Dims out = x.dims;
  out[axis] = bins;
  out.back() = c.i("inverse") != 0 && c.i("onesided") != 0 ? 1 : 2;
  c.setOut(0, TensorType{x.dtype, out});
  return Status::ok();
}

Status inferSTFT(InferCtx &c) {
  const TensorType &x = c.in(0);
  if (x.rank() != 3 || (x.dims[2] != 1 && x.dims[2] != 2))
    return c.fail("signal " + toString(x) + " must be [batch, length, 1 or 2]");
  if (c.hasInput(2) && (c.in(2).rank() != 1 || c.in(2).dtype != x.dtype))
    return c.fail("window " + toString(c.in(2)) + " must be a vector of the signal's type");
  if (!c.hasInput(2) && !c.hasInput(3))
    return c.fail("needs a window or a frame_length");
  for (auto [i, what] : {std::pair{1, "frame_step"}, std::pair{3, "frame_length"}})
    if (Status s = checkScalar(c, i, what))
      return s;
  if (Status s = checkPositive(c, "frames"))
    return s;
  if (Status s = checkPositive(c, "bins"))
    return s;
  c.setOut(0, TensorType{x.dtype, {x.dims[0], c.i("frames"), c.i("bins"), 2}});
  return Status::ok();
}

Status inferMelWeightMatrix(InferCtx &c) {
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                         "upper_edge_hertz"};
  for (int i = 0; i < 5; ++i)
    if (Status s = checkScalar(c, i, names[i]))
      return s;
  if (Status s = checkPositive(c, "bins"))
    return s;
  if (c.i("mel_bins") < 0)
    return c.fail("mel_bins " + str(c.i("mel_bins")) + " must not be negative");
  auto t = resultType(c);
  if (!t)
    return t.takeStatus();
  c.setOut(0, TensorType{*t, {c.i("bins"), c.i("mel_bins")}});
  return Status::ok();
}

// ---- Text --------------------------------------------------------------------------------

const std::vector<std::string> kTfIdfModes = {"TF", "IDF", "TFIDF"}; // odla_tf_idf_mode

Status inferTfIdf(InferCtx &c) {
  if (Status s = checkName(c, "mode", kTfIdfModes))
    return s;
  const TensorType &x = c.in(0);
  if (x.rank() < 1 || x.rank() > 2)
    return c.fail("input " + toString(x) + " must be [len] or [rows, len]");
  for (int i = 1; i < 5; ++i)
    if (c.hasInput(i) && c.in(i).rank() != 1)
      return c.fail("operand " + str(i) + " " + toString(c.in(i)) + " must be a vector");
  int64_t lo = c.i("min_gram_length"), hi = c.i("max_gram_length"), skip = c.i("max_skip_count");
  if (lo < 1 || hi < lo || hi > INT32_MAX || skip < 0 || skip > INT32_MAX)
    return c.fail("min_gram_length " + str(lo) + ", max_gram_length " + str(hi) +
                  " and max_skip_count " + str(skip) + " must satisfy 1 <= min <= max, skip >= 0");
  if (c.i("width") < 0)
    return c.fail("width " + str(c.i("width")) + " must not be negative");
  Dims out = x.rank() == 2 ? Dims{x.dims[0], c.i("width")} : Dims{c.i("width")};
  c.setOut(0, TensorType{DType::F32, out});
  return Status::ok();
}

constexpr DTypeMask kF32 = maskOf(DType::F32);
constexpr DTypeMask kI64 = maskOf(DType::I64);
constexpr OperandDef::Kind kOpt = OperandDef::Optional;
constexpr OperandDef::Kind kReq = OperandDef::Required;

} // namespace

namespace ops {

// NMS with its parameters fixed at import and corner boxes: ODLA's odla_NMS. Rows after
// the kept boxes hold -1 (see runtime_stubs/reference/ops_misc.c).
const OpDef NMS = {
    "NMS",
    {{"boxes", kReq, kFloatTypes}, {"scores", kReq, kFloatTypes}},
    1,
    {{"max_output_boxes_per_class", AttrKind::Int, std::nullopt},
     {"iou_threshold", AttrKind::Float, std::nullopt},
     {"score_threshold", AttrKind::Float, std::nullopt},
     {"count", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferNMS,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().NMS(c.in(0), c.in(1),
                               static_cast<odla_uint32>(n.i("max_output_boxes_per_class")),
                               static_cast<float>(n.f("iou_threshold")),
                               static_cast<float>(n.f("score_threshold")), vtypeOf(*n.output(0)),
                               c.outId(0)));
    }};
// ONNX NonMaxSuppression with its scalar operands read at run time.
const OpDef NonMaxSuppression = {
    "NonMaxSuppression",
    {{"boxes", kReq, kFloatTypes},
     {"scores", kReq, kFloatTypes},
     {"max_output_boxes_per_class", kOpt, kIntTypes},
     {"iou_threshold", kOpt, kFloatTypes},
     {"score_threshold", kOpt, kFloatTypes}},
    1,
    {{"center_point_box", AttrKind::Int, AttrValue(int64_t{0})},
     {"count", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferNonMaxSuppression,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().ExtNonMaxSuppression(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4),
                                                i32(n.i("center_point_box")), vtypeOf(*n.output(0)),
                                                c.outId(0)));
    }};
const OpDef RoiAlign = {
    "RoiAlign",
    {{"x", kReq, kFloatTypes}, {"rois", kReq, kFloatTypes}, {"batch_indices", kReq, kIndexTypes}},
    1,
    {{"mode", AttrKind::String, AttrValue(std::string("avg"))},
     {"output_height", AttrKind::Int, AttrValue(int64_t{1})},
     {"output_width", AttrKind::Int, AttrValue(int64_t{1})},
     {"sampling_ratio", AttrKind::Int, AttrValue(int64_t{0})},
     {"spatial_scale", AttrKind::Float, AttrValue(1.0)},
     {"half_pixel", AttrKind::Int, AttrValue(int64_t{1})}},
    FusionClass::Opaque,
    kTraitNone,
    inferRoiAlign,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().ExtRoiAlign(c.in(0), c.in(1), c.in(2), indexIn(kRoiModes, n.s("mode")),
                                       i32(n.i("output_height")), i32(n.i("output_width")),
                                       i32(n.i("sampling_ratio")),
                                       static_cast<float>(n.f("spatial_scale")),
                                       {n.i("half_pixel") != 0}, c.outId(0)));
    }};
// ONNX MaxRoiPool: rois are [R, 5] rows (batch index, x1, y1, x2, y2).
const OpDef MaxRoiPool = {
    "MaxRoiPool",
    {{"x", kReq, kFloatTypes}, {"rois", kReq, kFloatTypes}},
    1,
    {{"pooled_shape", AttrKind::Ints, std::nullopt},
     {"spatial_scale", AttrKind::Float, AttrValue(1.0)}},
    FusionClass::Opaque,
    kTraitNone,
    inferMaxRoiPool,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().ROIMaxPool(
                      c.in(0), ODLA_CHANNELS_FIRST, c.in(1), i32(n.ints("pooled_shape")[0]),
                      i32(n.ints("pooled_shape")[1]), static_cast<float>(n.f("spatial_scale")),
                      c.outShape(0), c.outId(0)));
    }};
const OpDef GridSample = {
    "GridSample",
    {{"x", kReq, kAllTypes}, {"grid", kReq, kFloatTypes}},
    1,
    {{"mode", AttrKind::String, AttrValue(std::string("bilinear"))},
     {"padding_mode", AttrKind::String, AttrValue(std::string("zeros"))},
     {"align_corners", AttrKind::Int, AttrValue(int64_t{0})}},
    FusionClass::Opaque,
    kTraitNone,
    inferGridSample,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().ExtGridSample(c.in(0), c.in(1), indexIn(kGridModes, n.s("mode")),
                                         indexIn(kGridPaddings, n.s("padding_mode")),
                                         {n.i("align_corners") != 0}, c.outId(0)));
    }};
const OpDef AffineGrid = {"AffineGrid",
                          {{"theta", kReq, kFloatTypes}, {"size", kReq, kI64}},
                          1,
                          {{"align_corners", AttrKind::Int, AttrValue(int64_t{0})},
                           {"dims", AttrKind::Ints, std::nullopt}},
                          FusionClass::Opaque,
                          kTraitNone,
                          inferAffineGrid,
                          [](LowerCtx &c) {
                            c.setOut(0, c.sink().ExtAffineGrid(c.in(0), c.in(1),
                                                               {c.node().i("align_corners") != 0},
                                                               c.outShape(0), c.outId(0)));
                          }};
// A window of `length` elements; the kernel checks that size equals it.
const OpDef Window = {"Window",
                      {{"size", kReq, kIndexTypes}},
                      1,
                      {{"window", AttrKind::String, std::nullopt},
                       {"periodic", AttrKind::Int, AttrValue(int64_t{1})},
                       {"length", AttrKind::Int, std::nullopt},
                       {"to", AttrKind::String, AttrValue(std::string("f32"))}},
                      FusionClass::Opaque,
                      kTraitNone,
                      inferWindow,
                      [](LowerCtx &c) {
                        const Node &n = c.node();
                        c.setOut(0, c.sink().ExtWindow(c.in(0), indexIn(kWindows, n.s("window")),
                                                       {n.i("periodic") != 0},
                                                       vtypeOf(*n.output(0)), c.outId(0)));
                      }};
// `bins`: the result's extent along axis (the length, or length / 2 + 1 for a one-sided
// forward transform). With the operand `axis` (DFT-20's, known only at run time), the
// attribute is one axis that gives the result shape; the kernel reads the operand.
const OpDef DFT = {
    "DFT",
    {{"x", kReq, kFloatTypes}, {"dft_length", kOpt, kIndexTypes}, {"axis", kOpt, kIndexTypes}},
    1,
    {{"axis", AttrKind::Int, std::nullopt},
     {"inverse", AttrKind::Int, AttrValue(int64_t{0})},
     {"onesided", AttrKind::Int, AttrValue(int64_t{0})},
     {"bins", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferDFT,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0,
               c.sink().ExtDFT(c.in(0), c.in(1), c.in(2), i32(n.i("axis")), {n.i("inverse") != 0},
                               {n.i("onesided") != 0}, c.outShape(0), c.outId(0)));
    }};
const OpDef STFT = {"STFT",
                    {{"signal", kReq, kFloatTypes},
                     {"frame_step", kReq, kIndexTypes},
                     {"window", kOpt, kFloatTypes},
                     {"frame_length", kOpt, kIndexTypes}},
                    1,
                    {{"onesided", AttrKind::Int, AttrValue(int64_t{1})},
                     {"frames", AttrKind::Int, std::nullopt},
                     {"bins", AttrKind::Int, std::nullopt}},
                    FusionClass::Opaque,
                    kTraitNone,
                    inferSTFT,
                    [](LowerCtx &c) {
                      c.setOut(0, c.sink().ExtSTFT(c.in(0), c.in(1), c.in(2), c.in(3),
                                                   {c.node().i("onesided") != 0}, c.outShape(0),
                                                   c.outId(0)));
                    }};
// A [bins, mel_bins] matrix; the kernel checks the operands against it.
const OpDef MelWeightMatrix = {
    "MelWeightMatrix",
    {{"num_mel_bins", kReq, kIntTypes},
     {"dft_length", kReq, kIntTypes},
     {"sample_rate", kReq, kIntTypes},
     {"lower_edge_hertz", kReq, kFloatTypes},
     {"upper_edge_hertz", kReq, kFloatTypes}},
    1,
    {{"bins", AttrKind::Int, std::nullopt},
     {"mel_bins", AttrKind::Int, std::nullopt},
     {"to", AttrKind::String, AttrValue(std::string("f32"))}},
    FusionClass::Opaque,
    kTraitNone,
    inferMelWeightMatrix,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtMelWeightMatrix(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4),
                                              vtypeOf(*c.node().output(0)), c.outId(0)));
    }};
// ODLA's odla_TFIDFVectorize; pool, gram_counts and output_indices are int64 vectors and
// weights an optional float32 vector; `width` is the number of result columns.
const OpDef TfIdfVectorize = {
    "TfIdfVectorize",
    {{"x", kReq, kIndexTypes},
     {"pool", kReq, kI64},
     {"gram_counts", kReq, kI64},
     {"output_indices", kReq, kI64},
     {"weights", kOpt, kF32}},
    1,
    {{"min_gram_length", AttrKind::Int, std::nullopt},
     {"max_gram_length", AttrKind::Int, std::nullopt},
     {"max_skip_count", AttrKind::Int, std::nullopt},
     {"mode", AttrKind::String, std::nullopt},
     {"width", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferTfIdf,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().TFIDFVectorize(
                      c.in(0), i32(n.i("min_gram_length")), i32(n.i("max_gram_length")),
                      i32(n.i("max_skip_count")),
                      static_cast<odla_tf_idf_mode>(indexIn(kTfIdfModes, n.s("mode"))), c.in(1),
                      c.in(2), c.in(3), c.in(4), c.outShape(0), c.outId(0)));
    }};

} // namespace ops

} // namespace odlac
