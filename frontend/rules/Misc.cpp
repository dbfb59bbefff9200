// Import rules for ops that fit no other family: signal windows and transforms (HannWindow,
// HammingWindow, BlackmanWindow, DFT, STFT, MelWeightMatrix), detection (NonMaxSuppression,
// RoiAlign, MaxRoiPool), sampling (GridSample, MaxUnpool), text features (TfIdfVectorizer),
// and the precise rejections of what ODLA cannot represent: random draws. (Sequences and
// optionals are resolved at compile time, rules/Sequence.cpp; strings are in rules/Text.cpp.)
//
// Result shapes that depend on the values of scalar operands are fixed at import: from the
// operands when they are known at compile time, otherwise from the shape ONNX's shape
// inference (or the model) declares for the result; the operands stay operands and the
// kernels check at run time that their values imply that shape. Generators whose operands
// are all known at compile time (windows, mel matrices) become constants, computed by the
// reference kernels.
#include "Rules.h"

#include "ir/Limits.h"

#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <algorithm>
#include <cstring>

namespace odlac {

namespace {

// A scalar integer operand known at compile time.
Expected<int64_t> constInt(ImportCtx &ctx, int i, const char *what) {
  auto v = ctx.constInts(i, what);
  if (!v)
    return v.takeStatus();
  if (v->size() != 1)
    return ctx.fail(std::string(what) + " must hold one element, got " +
                    toString(ctx.input(i)->type()));
  return (*v)[0];
}

// An attribute holding an ONNX element type for the result (output_datatype).
Expected<DType> resultDType(ImportCtx &ctx, const char *attr) {
  int64_t onnxType = ctx.attrInt(attr, 1);
  auto t = dtypeFromOnnx(static_cast<int>(onnxType));
  if (!t || *t == DType::Bool)
    return ctx.fail(std::string(attr) + " " + str(onnxType) + " (" +
                    onnxTypeName(static_cast<int>(onnxType)) + ") is not a numeric element type");
  return *t;
}

// Replaces a generator's result by a constant when all its operands are known at compile time.
Expected<Value *> foldWhenKnown(ImportCtx &ctx, Value *out) {
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && !isConstant(ctx, i))
      return out;
  if (out->type().byteSize() > static_cast<uint64_t>(kMaxCompileTimeBytes))
    return out; // too large to hold at compile time: computed when the model runs
  auto data = evaluateValue(*out, kMaxCompileTimeBytes);
  if (!data)
    return data.takeStatus();
  return ctx.graph().replaceWithConstant(out, *data);
}

// ---- Windows, DFT, STFT, MelWeightMatrix ----------------------------------------------------

Status importWindow(ImportCtx &ctx, const char *window) {
  auto to = resultDType(ctx, "output_datatype");
  if (!to)
    return to.takeStatus();
  int64_t length;
  if (isConstant(ctx, 0)) {
    auto n = constInt(ctx, 0, "size");
    if (!n)
      return n.takeStatus();
    length = *n;
    if (length < 0)
      return ctx.fail("size " + str(length) + " must not be negative");
  } else {
    auto t = declaredOutput(ctx, 0, 1, "size is computed at run time");
    if (!t)
      return t.takeStatus();
    length = t->dims[0];
  }
  auto out = ctx.emit("Window", {ctx.input(0)},
                      {{"window", std::string(window)},
                       {"periodic", int64_t{ctx.attrInt("periodic", 1) != 0}},
                       {"length", length},
                       {"to", std::string(dtypeName(*to))}});
  if (!out)
    return out.takeStatus();
  return finish(ctx, foldWhenKnown(ctx, *out));
}

// DFT-17 takes axis as an attribute (default 1); DFT-20 as input 2 (default -2), which may be
// known only at run time: the result shape then comes from the model's declaration, some
// legal axis must give it, and that axis becomes the attribute while the kernel reads input 2
// and checks it. inverse with onesided is numpy's irfft: a one-sided spectrum of n bins in, a
// real signal of dft_length (default 2 (n - 1)) out.
Status importDFT(ImportCtx &ctx) {
  Value *x = ctx.input(0), *axisOperand = nullptr;
  int64_t rank = x->type().rank(), axis = ctx.attrInt("axis", 1);
  bool inverse = ctx.attrInt("inverse", 0) != 0, onesided = ctx.attrInt("onesided", 0) != 0;
  bool irfft = inverse && onesided;
  if (rank < 2)
    return ctx.fail("input " + toString(x->type()) +
                    " must have a signal axis and a last dim of 1 (real) or 2 (complex)");
  std::string range = "[" + str(-rank) + ", -2] or [0, " + str(rank - 2) + "]";
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ctx.hasInput(2) && !isConstant(ctx, 2)) {
      axisOperand = ctx.input(2);
    } else if (ctx.hasInput(2)) {
      auto a = constInt(ctx, 2, "axis");
      if (!a)
        return a.takeStatus();
      axis = *a;
    }
  }
  if (!axisOperand) {
    int64_t given = axis;
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank - 2)
      return ctx.fail("axis " + str(given) + " must be in " + range + " for input " +
                      toString(x->type()));
  }
  // The transform's length along an axis when it is known at compile time.
  std::optional<int64_t> length;
  if (ctx.hasInput(1) && isConstant(ctx, 1)) {
    auto n = constInt(ctx, 1, "dft_length");
    if (!n)
      return n.takeStatus();
    if (*n < 1)
      return ctx.fail("dft_length " + str(*n) + " must be at least 1");
    length = *n;
  }
  auto lengthAlong = [&](int64_t a) -> std::optional<int64_t> {
    if (length || ctx.hasInput(1))
      return length;
    int64_t n = x->dims()[a];
    return irfft ? 2 * (n - 1) : n;
  };
  auto extentOf = [&](int64_t len) { return onesided && !inverse ? len / 2 + 1 : len; };
  // The result of the transform along axis a with `extent` entries there.
  auto resultAlong = [&](int64_t a, int64_t extent) {
    Dims d = x->dims();
    d[a] = extent;
    d.back() = irfft ? 1 : 2;
    return d;
  };
  int64_t bins;
  if (!axisOperand && lengthAlong(axis)) {
    int64_t len = *lengthAlong(axis);
    if (len < 1)
      return ctx.fail("the one-sided spectrum of " + str(x->dims()[axis]) + " bin(s) along axis " +
                      str(axis) + " gives the default dft_length 2 * (bins - 1) = " + str(len) +
                      ", which must be at least 1");
    bins = extentOf(len);
  } else if (!axisOperand) {
    auto t = declaredOutput(ctx, 0, rank, "dft_length is computed at run time");
    if (!t)
      return t.takeStatus();
    bins = t->dims[axis];
  } else {
    auto dims = ctx.declaredDims(0);
    if (!dims)
      return ctx.fail("axis (input 2) is known only at run time, and the model declares no "
                      "static shape for output '" +
                      ctx.outputName(0) + "'");
    // The first legal axis that gives the declared dims, and what the others give instead
    // (with a run-time dft_length, any extent along the axis: "n").
    std::optional<int64_t> fit;
    std::string gives;
    for (int64_t a = 0; a + 1 < rank && !fit; ++a) {
      auto len = lengthAlong(a);
      int64_t declared = a < static_cast<int64_t>(dims->size()) ? (*dims)[a] : 0;
      Dims want = resultAlong(a, len ? extentOf(*len) : declared);
      if (want == *dims && want[a] >= 1 && (!len || *len >= 1)) {
        fit = a;
        continue;
      }
      std::string text = "[";
      for (size_t d = 0; d < want.size(); ++d)
        text += (d ? "," : "") + (!len && d == static_cast<size_t>(a) ? "n" : str(want[d]));
      gives += (a ? ", axis " : "axis ") + str(a) + " gives " +
               (len && *len < 1 ? "a default dft_length of " + str(*len) : text + "]");
    }
    if (!fit)
      return ctx.fail("axis (input 2) is known only at run time, and no axis in " + range +
                      " of input " + toString(x->type()) + " gives the dims " +
                      dimsToString(*dims) + " declared for output '" + ctx.outputName(0) + "' (" +
                      gives + ")");
    axis = *fit;
    bins = (*dims)[axis];
  }
  return finish(ctx, ctx.emit("DFT", {x, ctx.input(1), axisOperand},
                              {{"axis", axis},
                               {"inverse", int64_t{inverse}},
                               {"onesided", int64_t{onesided}},
                               {"bins", bins}}));
}

Status importSTFT(ImportCtx &ctx) {
  Value *signal = ctx.input(0), *window = ctx.input(2);
  bool onesided = ctx.attrInt("onesided", 1) != 0;
  if (signal->type().rank() != 3)
    return ctx.fail("signal " + toString(signal->type()) + " must be [batch, length, 1 or 2]");
  if (!window && !ctx.hasInput(3))
    return ctx.fail("neither window nor frame_length is given");
  int64_t length = window ? window->type().numElements() : -1, step = -1;
  if (window && window->type().rank() != 1)
    return ctx.fail("window " + toString(window->type()) + " must be a vector");
  if (isConstant(ctx, 3)) {
    auto n = constInt(ctx, 3, "frame_length");
    if (!n)
      return n.takeStatus();
    if (length >= 0 && *n != length)
      return ctx.fail("frame_length " + str(*n) + " differs from the window's length " +
                      str(length));
    length = *n;
  }
  if (isConstant(ctx, 1)) {
    auto n = constInt(ctx, 1, "frame_step");
    if (!n)
      return n.takeStatus();
    step = *n;
    if (step < 1)
      return ctx.fail("frame_step " + str(step) + " must be at least 1");
  }
  int64_t signalLength = signal->dims()[1];
  if (length == 0 || length > signalLength)
    return ctx.fail("frame length " + str(length) + " must be in [1, " + str(signalLength) +
                    "] (the signal's length)");
  int64_t frames, bins;
  if (length > 0 && step > 0) {
    frames = (signalLength - length) / step + 1;
    bins = onesided ? length / 2 + 1 : length;
  } else {
    auto t = declaredOutput(ctx, 0, 4,
                            std::string(step < 0 ? "frame_step" : "frame_length") +
                                " is computed at run time");
    if (!t)
      return t.takeStatus();
    frames = t->dims[1];
    bins = t->dims[2];
    if (length > 0 && bins != (onesided ? length / 2 + 1 : length))
      return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + toString(*t) +
                      ", which does not fit frames of length " + str(length));
  }
  return finish(ctx,
                ctx.emit("STFT", {signal, ctx.input(1), window, ctx.input(3)},
                         {{"onesided", int64_t{onesided}}, {"frames", frames}, {"bins", bins}}));
}

Status importMelWeightMatrix(ImportCtx &ctx) {
  auto to = resultDType(ctx, "output_datatype");
  if (!to)
    return to.takeStatus();
  int64_t bins, melBins;
  if (isConstant(ctx, 0) && isConstant(ctx, 1)) {
    auto mel = constInt(ctx, 0, "num_mel_bins");
    if (!mel)
      return mel.takeStatus();
    auto length = constInt(ctx, 1, "dft_length");
    if (!length)
      return length.takeStatus();
    if (*mel < 0 || *length < 1)
      return ctx.fail("num_mel_bins " + str(*mel) + " must not be negative and dft_length " +
                      str(*length) + " must be at least 1");
    melBins = *mel;
    bins = *length / 2 + 1;
  } else {
    auto t = declaredOutput(ctx, 0, 2, "num_mel_bins or dft_length is computed at run time");
    if (!t)
      return t.takeStatus();
    bins = t->dims[0];
    melBins = t->dims[1];
  }
  std::vector<Value *> operands;
  for (int i = 0; i < 5; ++i)
    operands.push_back(ctx.input(i));
  auto out = ctx.emit("MelWeightMatrix", operands,
                      {{"bins", bins}, {"mel_bins", melBins}, {"to", std::string(dtypeName(*to))}});
  if (!out)
    return out.takeStatus();
  return finish(ctx, foldWhenKnown(ctx, *out));
}

// GridSample-20 names the modes linear and cubic and allows N-D inputs; odlac samples 1-D to
// 3-D inputs (X of rank 3 to 5: the IR op's inference checks the ranks).
Status importGridSample20(ImportCtx &ctx) {
  std::string mode = ctx.attrString("mode", "linear");
  mode = mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.fail("mode '" + ctx.attrString("mode", "linear") +
                    "' is not one of linear, nearest, cubic");
  return finish(ctx, ctx.emit("GridSample", {ctx.input(0), ctx.input(1)},
                              {{"mode", mode},
                               {"padding_mode", ctx.attrString("padding_mode", "zeros")},
                               {"align_corners", ctx.attrInt("align_corners", 0)}}));
}

// AffineGrid-20: the result's dims are size's values, from size when it is known at compile
// time, else from the model's declared result (odla_ExtAffineGrid checks size at run time).
Status importAffineGrid(ImportCtx &ctx) {
  const TensorType &theta = ctx.input(0)->type(), &size = ctx.input(1)->type();
  int64_t r = theta.rank() == 3 ? theta.dims[1] : 0;
  if ((r != 2 && r != 3) || theta.dims[2] != r + 1)
    return ctx.fail("theta " + toString(theta) + " must be [N, 2, 3] or [N, 3, 4]");
  if (size.rank() != 1 || size.dims[0] != r + 2)
    return ctx.fail("size " + toString(size) + " must hold " + str(r + 2) + " values (N, C and " +
                    str(r) + " dims) for theta " + toString(theta));
  Dims out;
  if (isConstant(ctx, 1)) {
    auto v = ctx.constInts(1, "size");
    if (!v)
      return v.takeStatus();
    out = *v;
    out.erase(out.begin() + 1); // C does not shape the grid
  } else {
    auto t = declaredOutput(ctx, 0, r + 2, "size is known only at run time");
    if (!t)
      return t.takeStatus();
    out = Dims(t->dims.begin(), t->dims.end() - 1);
  }
  if (out[0] != theta.dims[0])
    return ctx.fail("size (or the declared result) gives N = " + str(out[0]) + ", but theta is " +
                    toString(theta));
  return finish(ctx, ctx.emit("AffineGrid", {ctx.input(0), ctx.input(1)},
                              {{"align_corners", ctx.attrInt("align_corners", 0)},
                               {"dims", std::vector<int64_t>(out.begin() + 1, out.end())}}));
}

// ---- Detection ----------------------------------------------------------------------------

// NonMaxSuppression keeps a data-dependent number of boxes: the declared result shape fixes
// the rows; rows beyond the kept boxes hold -1 and keeping more fails at run time. With
// corner boxes and parameters known at compile time it is ODLA's odla_NMS.
Status importNonMaxSuppression(ImportCtx &ctx) {
  int64_t centerPointBox = ctx.attrInt("center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1)
    return ctx.fail("center_point_box " + str(centerPointBox) + " must be 0 or 1");
  auto t =
      declaredOutput(ctx, 0, 2, "the number of boxes NonMaxSuppression keeps depends on the data");
  if (!t)
    return t.takeStatus();
  if (t->dims[1] != 3)
    return ctx.fail("output '" + ctx.outputName(0) + "' is declared " + toString(*t) +
                    ", but it must be [count, 3]");
  int64_t count = t->dims[0];
  bool constParams = centerPointBox == 0 && ctx.hasInput(4);
  for (int i = 2; i < 5; ++i)
    constParams = constParams && (!ctx.hasInput(i) || isConstant(ctx, i));
  if (!constParams)
    return finish(ctx,
                  ctx.emit("NonMaxSuppression",
                           {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                           {{"center_point_box", centerPointBox}, {"count", count}}));
  int64_t maxOut = 0;
  double iou = 0;
  if (ctx.hasInput(2)) {
    auto n = constInt(ctx, 2, "max_output_boxes_per_class");
    if (!n)
      return n.takeStatus();
    // Negative keeps nothing; more than the boxes there are keeps them all.
    maxOut = std::clamp<int64_t>(*n, 0, ctx.input(0)->type().numElements());
  }
  if (ctx.hasInput(3)) {
    auto v = ctx.constScalar(3, "iou_threshold");
    if (!v)
      return v.takeStatus();
    iou = *v;
  }
  auto score = ctx.constScalar(4, "score_threshold");
  if (!score)
    return score.takeStatus();
  return finish(ctx, ctx.emit("NMS", {ctx.input(0), ctx.input(1)},
                              {{"max_output_boxes_per_class", maxOut},
                               {"iou_threshold", iou},
                               {"score_threshold", *score},
                               {"count", count}}));
}

// RoiAlign-10 maps region corners without the half-pixel shift; RoiAlign-16 says which with
// coordinate_transformation_mode (default half_pixel).
Status importRoiAlign(ImportCtx &ctx) {
  int64_t halfPixel = 0;
  if (ctx.opset() >= 16) {
    std::string mode = ctx.attrString("coordinate_transformation_mode", "half_pixel");
    if (mode != "half_pixel" && mode != "output_half_pixel")
      return ctx.fail("coordinate_transformation_mode '" + mode +
                      "' is not one of half_pixel, "
                      "output_half_pixel");
    halfPixel = mode == "half_pixel";
  }
  return finish(ctx, ctx.emit("RoiAlign", {ctx.input(0), ctx.input(1), ctx.input(2)},
                              {{"mode", ctx.attrString("mode", "avg")},
                               {"output_height", ctx.attrInt("output_height", 1)},
                               {"output_width", ctx.attrInt("output_width", 1)},
                               {"sampling_ratio", ctx.attrInt("sampling_ratio", 0)},
                               {"spatial_scale", ctx.attrFloat("spatial_scale", 1.0)},
                               {"half_pixel", halfPixel}}));
}

// ---- MaxUnpool ----------------------------------------------------------------------------

// MaxUnpool scatters X into zeros at the flat positions I (indices over the default result
// (in - 1) * stride + kernel - pads per spatial axis, as MaxPool's Indices give them):
// Broadcast of a zero, ScatterElements along the flattened result, Reshape. An output_shape
// (known at compile time, or declared) larger than the default pads the result with zeros at
// the end of each spatial axis, as ONNX's reference does; a smaller one is rejected.
Status importMaxUnpool(ImportCtx &ctx) {
  Value *x = ctx.input(0), *idx = ctx.input(1);
  const Dims &xd = x->dims();
  int64_t rank = x->type().rank(), spatial = rank - 2;
  if (spatial < 1)
    return ctx.fail("X " + toString(x->type()) + " must be [N, C, D1, ...]");
  if (idx->dims() != xd || idx->dtype() != DType::I64)
    return ctx.fail("I " + toString(idx->type()) + " must be int64 of X's shape " +
                    dimsToString(xd));
  auto kernel = ctx.attrInts("kernel_shape");
  auto strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  auto pads = ctx.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return ctx.fail("kernel_shape " + dimsToString(kernel) + ", strides " + dimsToString(strides) +
                    " and pads " + dimsToString(pads) + " must have " + str(spatial) + ", " +
                    str(spatial) + " and " + str(2 * spatial) + " entries");
  Dims inferred = {xd[0], xd[1]};
  for (int64_t d = 0; d < spatial; ++d) {
    auto extent =
        ((CheckedInt(xd[d + 2]) - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial]).get();
    if (!extent)
      return ctx.fail("spatial axis " + str(d) + ": extent " + str(xd[d + 2]) + ", stride " +
                      str(strides[d]) + ", kernel " + str(kernel[d]) + " and pads " + str(pads[d]) +
                      "+" + str(pads[d + spatial]) + " overflow int64");
    inferred.push_back(*extent);
  }
  CheckedInt total = 1;
  for (size_t d = 0; d < inferred.size(); ++d) {
    if (inferred[d] < (d < 2 ? 0 : 1)) // an empty batch or channel axis is fine
      return ctx.fail("the default output shape " + dimsToString(inferred) + " has an empty " +
                      "spatial dim");
    total *= inferred[d];
  }
  if (!total.valid() || total.value() > kMaxElements)
    return ctx.fail("the default output shape " + dimsToString(inferred) +
                    " has more than 2^48 elements");
  Dims out = inferred;
  if (ctx.hasInput(2)) {
    if (isConstant(ctx, 2)) {
      auto shape = ctx.constInts(2, "output_shape");
      if (!shape)
        return shape.takeStatus();
      out = *shape;
    } else {
      auto t = declaredOutput(ctx, 0, rank, "output_shape is computed at run time");
      if (!t)
        return t.takeStatus();
      out = t->dims;
    }
  }
  if (static_cast<int64_t>(out.size()) != rank || out[0] != xd[0] || out[1] != xd[1])
    return ctx.fail("output shape " + dimsToString(out) + " must be [" + str(xd[0]) + ", " +
                    str(xd[1]) + ", ...] with " + str(spatial) + " spatial dims");
  std::vector<int64_t> grow(2 * rank, 0);
  for (int64_t d = 2; d < rank; ++d) {
    if (out[d] < inferred[d])
      return ctx.fail("output_shape " + dimsToString(out) + " is smaller than the default " +
                      dimsToString(inferred) + " at axis " + str(d) +
                      ": the indices would fall outside it");
    grow[rank + d] = out[d] - inferred[d];
  }
  const int64_t zero = 0; // 8 zero bytes: 0 in every element type
  Value *z = ctx.constant(ctx.tempName("zero"), TensorType{x->dtype(), {}}, &zero);
  auto zeros = ctx.emit("Broadcast", {z}, {{"shape", Dims{total.value()}}}, ctx.tempName("zeros"));
  if (!zeros)
    return zeros.takeStatus();
  int64_t count = x->type().numElements();
  auto flatIdx = ctx.reshape(idx, {count}, ctx.tempName("indices"));
  if (!flatIdx)
    return flatIdx.takeStatus();
  auto flatX = ctx.reshape(x, {count}, ctx.tempName("values"));
  if (!flatX)
    return flatX.takeStatus();
  auto scattered = ctx.emit("ScatterElements", {*zeros, *flatIdx, *flatX},
                            {{"axis", int64_t{0}}, {"reduction", std::string("none")}},
                            ctx.tempName("scattered"));
  if (!scattered)
    return scattered.takeStatus();
  if (out == inferred)
    return finish(ctx, ctx.emit("Reshape", {*scattered}, {{"shape", out}}));
  auto unpooled =
      ctx.emit("Reshape", {*scattered}, {{"shape", inferred}}, ctx.tempName("unpooled"));
  if (!unpooled)
    return unpooled.takeStatus();
  return finish(ctx, ctx.emit("Pad", {*unpooled}, {{"pads", grow}}));
}

// ---- TfIdfVectorizer ----------------------------------------------------------------------

Value *int64Vector(ImportCtx &ctx, const std::string &name, const std::vector<int64_t> &v) {
  return ctx.constant(ctx.tempName(name), TensorType{DType::I64, {static_cast<int64_t>(v.size())}},
                      v.data());
}

Status importTfIdfVectorizer(ImportCtx &ctx) {
  if (ctx.hasAttr("pool_strings"))
    return ctx.fail("pool_strings: string n-grams cannot be represented (ODLA has no string "
                    "element type); only pool_int64s is supported");
  auto pool = ctx.attrInts("pool_int64s");
  auto counts = ctx.attrInts("ngram_counts");
  auto indexes = ctx.attrInts("ngram_indexes");
  int64_t poolSize = static_cast<int64_t>(pool.size()), grams = 0;
  for (size_t n = 0; n < counts.size(); ++n) {
    int64_t begin = counts[n], end = n + 1 < counts.size() ? counts[n + 1] : poolSize;
    if (begin < 0 || end < begin || end > poolSize ||
        (end - begin) % static_cast<int64_t>(n + 1) != 0)
      return ctx.fail("ngram_counts " + dimsToString(counts) + " do not split pool_int64s (" +
                      str(poolSize) + " items) into whole " + str(n + 1) + "-grams");
    grams += (end - begin) / static_cast<int64_t>(n + 1);
  }
  if (static_cast<int64_t>(indexes.size()) != grams)
    return ctx.fail("ngram_indexes has " + str(indexes.size()) + " entries for " + str(grams) +
                    " n-grams in the pool");
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0)
      return ctx.fail("ngram_indexes holds the negative index " + str(i));
    width = std::max(width, i + 1);
  }
  std::vector<Value *> operands = {ctx.input(0), int64Vector(ctx, "pool", pool),
                                   int64Vector(ctx, "ngram_counts", counts),
                                   int64Vector(ctx, "ngram_indexes", indexes)};
  if (const auto *w = ctx.findAttr("weights")) {
    std::vector<float> weights(w->floats().begin(), w->floats().end());
    if (weights.size() != indexes.size())
      return ctx.fail("weights has " + str(weights.size()) + " entries, ngram_indexes " +
                      str(indexes.size()));
    operands.push_back(ctx.constant(ctx.tempName("weights"),
                                    TensorType{DType::F32, {static_cast<int64_t>(weights.size())}},
                                    weights.data()));
  }
  return finish(ctx, ctx.emit("TfIdfVectorize", operands,
                              {{"min_gram_length", ctx.attrInt("min_gram_length", 0)},
                               {"max_gram_length", ctx.attrInt("max_gram_length", 0)},
                               {"max_skip_count", ctx.attrInt("max_skip_count", 0)},
                               {"mode", ctx.attrString("mode", "")},
                               {"width", width}}));
}

// ---- What ODLA cannot represent -------------------------------------------------------------

// Why the ops odlac rejects outright cannot be compiled.
constexpr const char *kRandom =
    "it draws random numbers, which cannot be reproduced: its results could not match the "
    "model's reference outputs (ONNX's come from numpy's generator)";
constexpr const char *kImages =
    "it decodes compressed image bytes (JPEG, PNG, WebP...), which needs image codecs: "
    "ODLA has none and odlac's generated C uses no library beyond its ODLA backend";

const AttrRule kScale{"spatial_scale", "spatial_scale", AttrValue(1.0)};

const std::vector<ImportRule> kRules = {
    {"HannWindow", 17, nullptr, reads({"output_datatype", "periodic"}),
     [](ImportCtx &c) { return importWindow(c, "hann"); }},
    {"HammingWindow", 17, nullptr, reads({"output_datatype", "periodic"}),
     [](ImportCtx &c) { return importWindow(c, "hamming"); }},
    {"BlackmanWindow", 17, nullptr, reads({"output_datatype", "periodic"}),
     [](ImportCtx &c) { return importWindow(c, "blackman"); }},
    {"DFT", 17, nullptr, reads({"axis", "inverse", "onesided"}), importDFT},
    {"STFT", 17, nullptr, reads({"onesided"}), importSTFT},
    {"MelWeightMatrix", 17, nullptr, reads({"output_datatype"}), importMelWeightMatrix},
    {"NonMaxSuppression", 10, nullptr, reads({"center_point_box"}), importNonMaxSuppression},
    {"RoiAlign", 10, nullptr,
     reads({"coordinate_transformation_mode", "mode", "output_height", "output_width",
            "sampling_ratio", "spatial_scale"}),
     importRoiAlign},
    {"MaxRoiPool",
     1,
     "MaxRoiPool",
     {{"pooled_shape", "pooled_shape", std::nullopt}, kScale},
     nullptr},
    {"GridSample",
     16,
     "GridSample",
     {{"mode", "mode", AttrValue(std::string("bilinear"))},
      {"padding_mode", "padding_mode", AttrValue(std::string("zeros"))},
      {"align_corners", "align_corners", AttrValue(int64_t{0})}},
     nullptr},
    {"AffineGrid", 20, nullptr, reads({"align_corners"}), importAffineGrid},
    {"GridSample", 20, nullptr, reads({"align_corners", "mode", "padding_mode"}),
     importGridSample20},
    {"MaxUnpool", 9, nullptr, reads({"kernel_shape", "pads", "strides"}), importMaxUnpool},
    {"TfIdfVectorizer", 9, nullptr,
     reads({"max_gram_length", "max_skip_count", "min_gram_length", "mode", "ngram_counts",
            "ngram_indexes", "pool_int64s", "pool_strings", "weights"}),
     importTfIdfVectorizer},
    rejected("Bernoulli", 15, kRandom),
    rejected("Multinomial", 7, kRandom),
    rejected("RandomNormal", 1, kRandom),
    rejected("RandomNormalLike", 1, kRandom),
    rejected("RandomUniform", 1, kRandom),
    rejected("RandomUniformLike", 1, kRandom),
    rejected("ImageDecoder", 20, kImages),
};

} // namespace

const std::vector<ImportRule> &miscRules() { return kRules; }

} // namespace odlac
