// Neural-network ops: convolution, pooling, batch normalization, and matrix products.
// Tensors are channels-first (NCHW) with OIHW kernels until layout assignment exists.
#include "lower/Lowering.h"
#include "ops/Families.h"
#include "ops/InferUtil.h"

namespace odlac {
namespace {

constexpr DTypeMask kF32 = maskOf(DType::F32);

std::string str(int64_t v) { return std::to_string(v); }

// Checks the per-spatial-axis attribute lists of a sliding-window op and computes its output
// spatial dims. `kernel` holds the window extents.
Status windowDims(InferCtx &c, const Dims &x, const Dims &kernel, bool ceilMode, Dims &out) {
  size_t spatial = x.size() - 2;
  const auto &strides = c.ints("strides");
  const auto &pads = c.ints("pads");
  std::vector<int64_t> dilations(spatial, 1);
  if (c.node().hasAttr("dilations"))
    dilations = c.ints("dilations");
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return c.fail("input " + dimsToString(x) + " has " + str(spatial) +
                  " spatial axes; kernel, strides and dilations need that many entries and pads "
                  "twice as many (got " +
                  str(kernel.size()) + ", " + str(strides.size()) + ", " + str(dilations.size()) +
                  ", " + str(pads.size()) + ")");
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + spatial] < 0)
      return c.fail("spatial axis " + str(i) + ": kernel " + str(kernel[i]) + ", stride " +
                    str(strides[i]) + ", dilation " + str(dilations[i]) + " must be >= 1 and pads " +
                    str(pads[i]) + ", " + str(pads[i + spatial]) + " >= 0");
    int64_t o = windowOutput(x[i + 2], kernel[i], strides[i], dilations[i], pads[i],
                             pads[i + spatial], ceilMode);
    if (o < 1)
      return c.fail("spatial axis " + str(i) + ": window of " + str(kernel[i]) + " (dilation " +
                    str(dilations[i]) + ") does not fit input extent " + str(x[i + 2]) +
                    " with pads " + str(pads[i]) + "+" + str(pads[i + spatial]));
    out.push_back(o);
  }
  return Status::ok();
}

Status inferConv(InferCtx &c) {
  const Dims &x = c.in(0).dims, &w = c.in(1).dims;
  if (x.size() < 3 || w.size() != x.size())
    return c.fail("input " + dimsToString(x) + " and kernel " + dimsToString(w) +
                  " must have the same rank, at least 3 (N, C, spatial...)");
  if (c.in(1).dtype != c.in(0).dtype)
    return c.fail("kernel element type differs from the input's");
  int64_t group = c.i("group");
  if (group < 1 || x[1] != w[1] * group || w[0] % group != 0)
    return c.fail("input channels " + str(x[1]) + " must equal kernel dim 1 (" + str(w[1]) +
                  ") times group " + str(group) + ", and kernel dim 0 (" + str(w[0]) +
                  ") must be a multiple of group");
  if (c.hasInput(2) && (c.in(2).dims != Dims{w[0]} || c.in(2).dtype != c.in(0).dtype))
    return c.fail("bias must be " + std::string(dtypeName(c.in(0).dtype)) + "[" + str(w[0]) +
                  "], got " + toString(c.in(2)));
  Dims out{x[0], w[0]};
  if (Status s = windowDims(c, x, Dims(w.begin() + 2, w.end()), false, out))
    return s;
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferPool(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (x.size() < 3)
    return c.fail("input " + dimsToString(x) + " must have rank >= 3 (N, C, spatial...)");
  Dims out{x[0], x[1]};
  if (Status s = windowDims(c, x, c.ints("kernel_shape"), c.i("ceil_mode") != 0, out))
    return s;
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferBatchNorm(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (x.size() < 2)
    return c.fail("input " + dimsToString(x) + " must have rank >= 2 (N, C, ...)");
  for (int i = 1; i <= 4; ++i)
    if (c.in(i).dims != Dims{x[1]} || c.in(i).dtype != c.in(0).dtype)
      return c.fail("scale, bias, mean and var must be " + std::string(dtypeName(c.in(0).dtype)) +
                    "[" + str(x[1]) + "]; operand " + str(i) + " is " + toString(c.in(i)));
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferGemm(InferCtx &c) {
  const Dims &a = c.in(0).dims, &b = c.in(1).dims;
  if (a.size() != 2 || b.size() != 2)
    return c.fail("A " + dimsToString(a) + " and B " + dimsToString(b) + " must be matrices");
  if (c.in(1).dtype != c.in(0).dtype)
    return c.fail("A and B element types differ");
  bool ta = c.i("transA") != 0, tb = c.i("transB") != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb)
    return c.fail("inner dimensions differ: " + str(k) + " vs " + str(kb) + " (A " +
                  dimsToString(a) + (ta ? " transposed" : "") + ", B " + dimsToString(b) +
                  (tb ? " transposed" : "") + ")");
  if (c.hasInput(2)) {
    auto bc = broadcastDims(c.in(2).dims, {m, n});
    if (!bc || *bc != Dims{m, n} || c.in(2).dtype != c.in(0).dtype)
      return c.fail("C " + toString(c.in(2)) + " must broadcast to [" + str(m) + "," + str(n) + "]");
  }
  c.setOut(0, TensorType{c.in(0).dtype, {m, n}});
  return Status::ok();
}

Status inferMatMul(InferCtx &c) {
  const Dims &a = c.in(0).dims, &b = c.in(1).dims;
  if (a.size() < 2 || b.size() < 2)
    return c.fail("operands " + dimsToString(a) + " and " + dimsToString(b) + " must have rank >= 2");
  if (c.in(1).dtype != c.in(0).dtype)
    return c.fail("operand element types differ");
  if (a.back() != b[b.size() - 2])
    return c.fail("inner dimensions differ: " + dimsToString(a) + " x " + dimsToString(b));
  auto batch = broadcastDims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch)
    return c.fail("batch dimensions of " + dimsToString(a) + " and " + dimsToString(b) +
                  " do not broadcast");
  batch->push_back(a[a.size() - 2]);
  batch->push_back(b.back());
  c.setOut(0, TensorType{c.in(0).dtype, *batch});
  return Status::ok();
}

// Splits ONNX-style pads [b1, b2, ..., e1, e2, ...] into ODLA's front and back arrays.
std::pair<lower::U32s, lower::U32s> splitPads(const std::vector<int64_t> &pads) {
  size_t half = pads.size() / 2;
  return {u32s({pads.begin(), pads.begin() + half}), u32s({pads.begin() + half, pads.end()})};
}

void lowerConv(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().Conv(c.in(0), ODLA_CHANNELS_FIRST, static_cast<odla_uint32>(n.i("group")),
                            c.in(1), ODLA_OIS, u32s(n.ints("strides")), u32s(n.ints("dilations")),
                            front, back, c.in(2), c.outShape(0), c.outId(0)));
}

void lowerMaxPool(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().MaxPool(c.in(0), ODLA_CHANNELS_FIRST, u32s(n.ints("kernel_shape")),
                               u32s(n.ints("strides")), front, back, c.outShape(0), c.outId(0)));
}

void lowerAveragePool(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().AveragePool(c.in(0), ODLA_CHANNELS_FIRST, u32s(n.ints("kernel_shape")),
                                   u32s(n.ints("strides")), front, back,
                                   {n.i("count_include_pad") != 0}, c.outShape(0), c.outId(0)));
}

void lowerBatchNorm(LowerCtx &c) {
  c.setOut(0, c.sink().BatchNormalization(c.in(0), ODLA_CHANNELS_FIRST, c.in(3), c.in(4),
                                          static_cast<float>(c.node().f("epsilon")), c.in(1),
                                          c.in(2), 1.0f, 0.0f, c.outId(0)));
}

void lowerGemm(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().Gemm(c.in(0), {n.i("transA") != 0}, c.in(1), {n.i("transB") != 0},
                            static_cast<float>(n.f("alpha")), static_cast<float>(n.f("beta")),
                            c.in(2), c.outShape(0), c.outId(0)));
}

// Plain matrices go to odla_Gemm, which every backend has; anything batched to BatchMatMul.
void lowerMatMul(LowerCtx &c) {
  const Node &n = c.node();
  if (n.input(0)->type().rank() == 2 && n.input(1)->type().rank() == 2)
    c.setOut(0, c.sink().Gemm(c.in(0), {false}, c.in(1), {false}, 1.0f, 0.0f, lower::Val{},
                              c.outShape(0), c.outId(0)));
  else
    c.setOut(0, c.sink().BatchMatMul(c.in(0), {false}, c.in(1), {false}, c.outShape(0), c.outId(0)));
}

using Ints = std::vector<int64_t>;
const AttrDef kStrides{"strides", AttrKind::Ints, std::nullopt};
const AttrDef kPads{"pads", AttrKind::Ints, std::nullopt};

const std::vector<OpDef> kOps = {
    {"Conv",
     {{"x", OperandDef::Required, kF32}, {"w", OperandDef::Required, kF32},
      {"b", OperandDef::Optional, kF32}},
     1,
     {{"group", AttrKind::Int, AttrValue(int64_t{1})},
      kStrides,
      {"dilations", AttrKind::Ints, std::nullopt},
      kPads},
     FusionClass::OutElementwiseFusable, kTraitNone, inferConv, lowerConv},
    {"MaxPool", {{"x", OperandDef::Required, kF32}}, 1,
     {{"kernel_shape", AttrKind::Ints, std::nullopt}, kStrides, kPads,
      {"ceil_mode", AttrKind::Int, AttrValue(int64_t{0})}},
     FusionClass::OutElementwiseFusable, kTraitNone, inferPool, lowerMaxPool},
    {"AveragePool", {{"x", OperandDef::Required, kF32}}, 1,
     {{"kernel_shape", AttrKind::Ints, std::nullopt}, kStrides, kPads,
      {"ceil_mode", AttrKind::Int, AttrValue(int64_t{0})},
      {"count_include_pad", AttrKind::Int, AttrValue(int64_t{0})}},
     FusionClass::OutElementwiseFusable, kTraitNone, inferPool, lowerAveragePool},
    {"BatchNormalization",
     {{"x", OperandDef::Required, kF32}, {"scale", OperandDef::Required, kF32},
      {"bias", OperandDef::Required, kF32}, {"mean", OperandDef::Required, kF32},
      {"var", OperandDef::Required, kF32}},
     1, {{"epsilon", AttrKind::Float, AttrValue(1e-5)}}, FusionClass::Broadcast, kTraitNone,
     inferBatchNorm, lowerBatchNorm},
    {"Gemm",
     {{"a", OperandDef::Required, kF32}, {"b", OperandDef::Required, kF32},
      {"c", OperandDef::Optional, kF32}},
     1,
     {{"transA", AttrKind::Int, AttrValue(int64_t{0})},
      {"transB", AttrKind::Int, AttrValue(int64_t{0})},
      {"alpha", AttrKind::Float, AttrValue(1.0)},
      {"beta", AttrKind::Float, AttrValue(1.0)}},
     FusionClass::OutElementwiseFusable, kTraitNone, inferGemm, lowerGemm},
    {"MatMul", {{"a", OperandDef::Required, kF32}, {"b", OperandDef::Required, kF32}}, 1, {},
     FusionClass::OutElementwiseFusable, kTraitNone, inferMatMul, lowerMatMul},
};

} // namespace

const std::vector<OpDef> &nnOps() { return kOps; }

} // namespace odlac
