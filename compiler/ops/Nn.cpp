// Neural-network ops: convolution, pooling, batch normalization, matrix products, einsum
// and determinants. Tensors are channels-first (NCHW) with OIHW kernels (IOHW for
// ConvTranspose); Conv, MaxPool and AveragePool also take channels-last data (NHWC, HWIO
// kernels) through their layout attribute, which AssignLayout sets.
#include "ir/Limits.h"
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

#include <algorithm>
#include <climits>
#include <map>

namespace odlac {
namespace {

constexpr DTypeMask kFloat = kFloatTypes;
// Matrix products take every float and integer type (ONNX's Gemm and MatMul allow 32- and
// 64-bit integers; the reference backend computes all widths).
constexpr DTypeMask kMatrix = kFloatTypes | kIntTypes;

// The per-spatial-axis list `name`, or `spatial` ones when it is absent or empty.
std::vector<int64_t> onesOr(const InferCtx &c, const char *name, size_t spatial) {
  if (c.node().hasAttr(name) && !c.ints(name).empty())
    return c.ints(name);
  return std::vector<int64_t>(spatial, 1);
}

// Checks the per-spatial-axis attribute lists of a sliding-window op and computes its output
// spatial dims. `kernel` holds the window extents.
Status windowDims(InferCtx &c, const Dims &x, const Dims &kernel, bool ceilMode, Dims &out) {
  size_t spatial = x.size() - 2;
  const auto &strides = c.ints("strides");
  const auto &pads = c.ints("pads");
  std::vector<int64_t> dilations = onesOr(c, "dilations", spatial);
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return c.fail("input " + dimsToString(x) + " has " + str(spatial) +
                  " spatial axes; kernel, strides and dilations need that many entries and pads "
                  "twice as many (got " +
                  str(kernel.size()) + ", " + str(strides.size()) + ", " + str(dilations.size()) +
                  ", " + str(pads.size()) + ")");
  if (spatial > 3)
    return c.fail("input " + dimsToString(x) + " has " + str(spatial) +
                  " spatial axes; 1 to 3 are supported");
  for (size_t i = 0; i < spatial; ++i) {
    if (Status s = checkWindowAxis(c, i, spatial, kernel[i], strides[i], dilations[i], pads[i],
                                   pads[i + spatial]))
      return s;
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

Status sameType(InferCtx &c, int i, const char *what) {
  if (c.hasInput(i) && c.in(i).dtype != c.in(0).dtype)
    return c.fail(std::string(what) + " is " + dtypeName(c.in(i).dtype) + ", the input " +
                  dtypeName(c.in(0).dtype));
  return Status::ok();
}

Status inferConv(InferCtx &c) {
  if (Status s = checkLayout(c))
    return s;
  bool last = isChannelsLast(c.node());
  const Dims x = dataAsChannelsFirst(c.in(0).dims, last), w = kernelAsOis(c.in(1).dims, last);
  if (x.size() < 3 || w.size() != x.size())
    return c.fail("input " + dimsToString(x) + " and kernel " + dimsToString(w) +
                  " must have the same rank, at least 3 (N, C, spatial...)");
  if (Status s = sameType(c, 1, "kernel"))
    return s;
  if (Status s = sameType(c, 2, "bias"))
    return s;
  int64_t group = c.i("group");
  if (Status s = checkConvChannels(c, x, w, group))
    return s;
  if (c.hasInput(2) && c.in(2).dims != Dims{w[0]})
    return c.fail("bias must be [" + str(w[0]) + "], got " + toString(c.in(2)));
  Dims out{x[0], w[0]};
  if (Status s = windowDims(c, x, Dims(w.begin() + 2, w.end()), false, out))
    return s;
  c.setOut(0, TensorType{c.in(0).dtype, dataFromChannelsFirst(out, last)});
  return Status::ok();
}

// DeformConv: Conv's windows over x [N, C, D1, ..., Dr] (r from 1 to 3), each tap moved by
// offset [N, offset_group * K * r, O1, ..., Or] (K = the kernel's taps; per group, tap and axis)
// and scaled by mask [N, offset_group * K, O1, ..., Or] when given.
Status inferDeformConv(InferCtx &c) {
  const Dims &x = c.in(0).dims, &w = c.in(1).dims;
  if (x.size() < 3 || w.size() != x.size())
    return c.fail("input " + dimsToString(x) + " and kernel " + dimsToString(w) +
                  " must have the same rank, at least 3 (N, C, spatial...)");
  for (int i = 1; i < 5; ++i)
    if (Status s = sameType(c, i, i == 1 ? "kernel" : i == 2 ? "offset" : i == 3 ? "bias" : "mask"))
      return s;
  int64_t group = c.i("group"), offsetGroup = c.i("offset_group");
  if (Status s = checkConvChannels(c, x, w, group))
    return s;
  if (offsetGroup < 1 || x[1] % offsetGroup != 0)
    return c.fail("offset_group " + str(offsetGroup) + " must be at least 1 and divide the " +
                  str(x[1]) + " input channels");
  if (c.hasInput(3) && c.in(3).dims != Dims{w[0]})
    return c.fail("bias must be [" + str(w[0]) + "], got " + toString(c.in(3)));
  Dims out{x[0], w[0]};
  if (Status s = windowDims(c, x, Dims(w.begin() + 2, w.end()), false, out))
    return s;
  int64_t taps = 1, spatial = static_cast<int64_t>(x.size()) - 2;
  for (size_t i = 2; i < w.size(); ++i)
    taps *= w[i]; // the kernel dims are below 2^31 (windowDims) and the kernel exists
  Dims offset{x[0], offsetGroup * taps * spatial}, mask{x[0], offsetGroup * taps};
  offset.insert(offset.end(), out.begin() + 2, out.end());
  mask.insert(mask.end(), out.begin() + 2, out.end());
  if (c.in(2).dims != offset)
    return c.fail("offset must be " + dimsToString(offset) + " (offset_group " + str(offsetGroup) +
                  " x " + str(taps) + " taps x " + str(spatial) + " axes), got " +
                  toString(c.in(2)));
  if (c.hasInput(4) && c.in(4).dims != mask)
    return c.fail("mask must be " + dimsToString(mask) + ", got " + toString(c.in(4)));
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

// Output extent along each axis: (in - 1) * stride + (k - 1) * dilation + 1 - pads +
// output_padding, where output_padding also carries an ONNX output_shape larger than that.
Status inferConvTranspose(InferCtx &c) {
  const Dims &x = c.in(0).dims, &w = c.in(1).dims;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size())
    return c.fail("input " + dimsToString(x) + " and kernel " + dimsToString(w) +
                  " must have the same rank, 3 to 5 (N, C, 1 to 3 spatial axes)");
  if (Status s = sameType(c, 1, "kernel"))
    return s;
  if (Status s = sameType(c, 2, "bias"))
    return s;
  int64_t group = c.i("group");
  if (Status s = checkGroup(c, group))
    return s;
  if (w[0] != x[1] || x[1] % group != 0)
    return c.fail("kernel dim 0 (" + str(w[0]) + ") must equal the input channels " + str(x[1]) +
                  ", a multiple of group " + str(group));
  auto outChannels = (CheckedInt(w[1]) * group).get();
  if (!outChannels || *outChannels > kMaxElements)
    return c.fail("kernel dim 1 (" + str(w[1]) + ") times group " + str(group) +
                  " exceeds 2^48 output channels");
  int64_t m = *outChannels;
  if (c.hasInput(2) && c.in(2).dims != Dims{m})
    return c.fail("bias must be [" + str(m) + "], got " + toString(c.in(2)));
  size_t spatial = x.size() - 2;
  const auto &strides = c.ints("strides"), &pads = c.ints("pads"),
             &extra = c.ints("output_padding");
  std::vector<int64_t> dilations = onesOr(c, "dilations", spatial);
  if (strides.size() != spatial || dilations.size() != spatial || extra.size() != spatial ||
      pads.size() != 2 * spatial)
    return c.fail("input " + dimsToString(x) + " has " + str(spatial) +
                  " spatial axes; strides, dilations and output_padding need that many entries "
                  "and pads twice as many");
  Dims out{x[0], m};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t k = w[i + 2];
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + spatial] < 0 ||
        extra[i] < 0 ||
        std::max({strides[i], dilations[i], pads[i], pads[i + spatial]}) > INT32_MAX)
      return c.fail("spatial axis " + str(i) + ": stride " + str(strides[i]) + " and dilation " +
                    str(dilations[i]) + " must be >= 1, pads " + str(pads[i]) + ", " +
                    str(pads[i + spatial]) + " and output_padding " + str(extra[i]) + " >= 0");
    CheckedInt full = (CheckedInt(x[i + 2]) - 1) * strides[i] + (CheckedInt(k) - 1) * dilations[i] +
                      1 - pads[i] - pads[i + spatial];
    CheckedInt o = full + extra[i];
    if (!o.valid())
      return c.fail("spatial axis " + str(i) + ": input extent " + str(x[i + 2]) + ", kernel " +
                    str(k) + ", stride " + str(strides[i]) + " and output_padding " +
                    str(extra[i]) + " give an extent beyond 2^63");
    if (o.value() < 1 || full.value() < 1)
      return c.fail("spatial axis " + str(i) + ": input extent " + str(x[i + 2]) + ", kernel " +
                    str(k) + ", stride " + str(strides[i]) + " and pads " + str(pads[i]) + "+" +
                    str(pads[i + spatial]) + " leave no output");
    out.push_back(o.value());
  }
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

// Output dims of a pooling op, in its own layout; every pooling op has kernel_shape, strides,
// pads and dilations.
Status poolDims(InferCtx &c, Dims &out) {
  if (Status s = checkLayout(c))
    return s;
  bool last = isChannelsLast(c.node());
  const Dims x = dataAsChannelsFirst(c.in(0).dims, last);
  if (x.size() < 3)
    return c.fail("input " + dimsToString(x) + " must have rank >= 3 (N, C, spatial...)");
  out = {x[0], x[1]};
  bool ceilMode = c.node().op().findAttr("ceil_mode") && c.i("ceil_mode") != 0;
  if (Status s = windowDims(c, x, c.ints("kernel_shape"), ceilMode, out))
    return s;
  out = dataFromChannelsFirst(out, last);
  return Status::ok();
}

Status inferPool(InferCtx &c) {
  Dims out;
  if (Status s = poolDims(c, out))
    return s;
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferMaxPoolIndices(InferCtx &c) {
  if (c.i("storage_order") != 0 && c.i("storage_order") != 1)
    return c.fail("storage_order " + str(c.i("storage_order")) + " must be 0 or 1");
  Dims out;
  if (Status s = poolDims(c, out))
    return s;
  c.setOut(0, TensorType{DType::I64, out});
  return Status::ok();
}

Status inferLpPool(InferCtx &c) {
  if (!(c.f("p") > 0))
    return c.fail("p = " + std::to_string(c.f("p")) + " must be > 0");
  return inferPool(c);
}

// Channels are axis 1, or the last axis in the channels-last layout (assign-layout).
Status inferBatchNorm(InferCtx &c) {
  if (Status s = checkLayout(c))
    return s;
  const Dims &x = c.in(0).dims;
  if (x.size() < 2)
    return c.fail("input " + dimsToString(x) + " must have rank >= 2 (N, C, ...)");
  int64_t channels = isChannelsLast(c.node()) ? x.back() : x[1];
  for (int i = 1; i <= 4; ++i)
    if (c.in(i).dims != Dims{channels})
      return c.fail("scale, bias, mean and var must be [" + str(channels) + "]; operand " + str(i) +
                    " is " + toString(c.in(i)));
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferGemm(InferCtx &c) {
  const Dims &a = c.in(0).dims, &b = c.in(1).dims;
  if (a.size() != 2 || b.size() != 2)
    return c.fail("A " + dimsToString(a) + " and B " + dimsToString(b) + " must be matrices");
  if (Status s = sameType(c, 1, "B"))
    return s;
  if (Status s = sameType(c, 2, "C"))
    return s;
  bool ta = c.i("transA") != 0, tb = c.i("transB") != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (k != kb)
    return c.fail("inner dimensions differ: " + str(k) + " vs " + str(kb) + " (A " +
                  dimsToString(a) + (ta ? " transposed" : "") + ", B " + dimsToString(b) +
                  (tb ? " transposed" : "") + ")");
  if (c.hasInput(2)) {
    auto bc = broadcastDims(c.in(2).dims, {m, n});
    if (!bc || *bc != Dims{m, n})
      return c.fail("C " + toString(c.in(2)) + " must broadcast to [" + str(m) + "," + str(n) +
                    "]");
  }
  c.setOut(0, TensorType{c.in(0).dtype, {m, n}});
  return Status::ok();
}

Status inferMatMul(InferCtx &c) {
  const Dims &a = c.in(0).dims, &b = c.in(1).dims;
  if (a.size() < 2 || b.size() < 2)
    return c.fail("operands " + dimsToString(a) + " and " + dimsToString(b) +
                  " must have rank >= 2");
  if (Status s = sameType(c, 1, "the second operand"))
    return s;
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

// The reference backend's limit (REF_EINSUM_MAX_OPERANDS).
constexpr int kEinsumMaxOperands = 8;

// Einsum's equation, numpy's rules (see odla_Einsum in the reference backend): the output
// dims, or an error. Labels: the letter itself, or '.' + index for the "..." axes.
Status inferEinsum(InferCtx &c) {
  std::string eq;
  for (char ch : c.node().s("equation"))
    if (ch != ' ' && ch != '\t')
      eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (c.numInputs() > kEinsumMaxOperands)
    return c.fail("takes at most " + str(kEinsumMaxOperands) + " operands, got " +
                  str(c.numInputs()));
  if (static_cast<int>(terms.size()) != c.numInputs())
    return c.fail("equation '" + eq + "' has " + str(terms.size()) + " input terms for " +
                  str(c.numInputs()) + " operands");
  auto isLetter = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); };
  // Splits a term into letters and the "..." position; false when malformed.
  auto parse = [&](const std::string &t, std::string &letters, int &ellipsisAt) {
    ellipsisAt = -1;
    for (size_t i = 0; i < t.size();) {
      if (t.compare(i, 3, "...") == 0 && ellipsisAt < 0) {
        ellipsisAt = static_cast<int>(letters.size());
        i += 3;
      } else if (isLetter(t[i])) {
        letters += t[i++];
      } else {
        return false;
      }
    }
    return true;
  };
  std::map<char, int64_t> extent, uses;
  Dims ellipsis; // broadcast "..." dims, right-aligned
  for (size_t k = 0; k < terms.size(); ++k) {
    if (Status s = sameType(c, static_cast<int>(k), ("operand " + str(k)).c_str()))
      return s;
    std::string letters;
    int at;
    const Dims &d = c.in(static_cast<int>(k)).dims;
    if (!parse(terms[k], letters, at))
      return c.fail("equation '" + eq + "': term '" + terms[k] + "' is malformed");
    int64_t ell = static_cast<int64_t>(d.size()) - static_cast<int64_t>(letters.size());
    if (ell < 0 || (at < 0 && ell != 0))
      return c.fail("equation '" + eq + "': term '" + terms[k] + "' does not fit operand " +
                    str(k) + " of shape " + dimsToString(d));
    Dims mine(d.begin() + std::max(at, 0), d.begin() + std::max(at, 0) + (at < 0 ? 0 : ell));
    auto bc = broadcastDims(ellipsis, mine);
    if (!bc)
      return c.fail("equation '" + eq + "': the '...' axes " + dimsToString(ellipsis) + " and " +
                    dimsToString(mine) + " do not broadcast");
    ellipsis = *bc;
    for (size_t i = 0; i < letters.size(); ++i) {
      int64_t dim = d[i < static_cast<size_t>(std::max(at, 0)) || at < 0 ? i : i + ell];
      auto it = extent.find(letters[i]);
      if (it != extent.end() && it->second != dim)
        return c.fail("equation '" + eq + "': letter '" + std::string(1, letters[i]) +
                      "' has extent " + str(it->second) + " and " + str(dim));
      extent[letters[i]] = dim;
      ++uses[letters[i]];
    }
  }
  Dims out;
  if (arrow == std::string::npos) {
    out = ellipsis;
    for (const auto &[letter, n] : uses) // std::map: ASCII order, A-Z before a-z
      if (n == 1)
        out.push_back(extent[letter]);
  } else {
    std::string letters;
    int at;
    if (!parse(eq.substr(arrow + 2), letters, at))
      return c.fail("equation '" + eq + "': the output term is malformed");
    if (!ellipsis.empty() && at < 0)
      return c.fail("equation '" + eq +
                    "': the operands have '...' axes but the output term has no '...'");
    for (size_t i = 0; i <= letters.size(); ++i) {
      if (static_cast<int>(i) == at)
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      if (i == letters.size())
        break;
      if (!extent.count(letters[i]) || letters.find(letters[i]) != i)
        return c.fail("equation '" + eq + "': output letter '" + std::string(1, letters[i]) +
                      "' is " + (extent.count(letters[i]) ? "repeated" : "in no input term"));
      out.push_back(extent[letters[i]]);
    }
  }
  if (out.size() > ODLA_MAX_DIMENSION)
    return c.fail("equation '" + eq + "': the output has " + str(out.size()) + " axes");
  c.setOut(0, TensorType{c.in(0).dtype, out});
  return Status::ok();
}

Status inferDet(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    return c.fail("input " + dimsToString(x) + " must be [..., n, n]");
  c.setOut(0, TensorType{c.in(0).dtype, Dims(x.begin(), x.end() - 2)});
  return Status::ok();
}

// Splits ONNX-style pads [b1, b2, ..., e1, e2, ...] into ODLA's front and back arrays.
std::pair<lower::U32s, lower::U32s> splitPads(const std::vector<int64_t> &pads) {
  size_t half = pads.size() / 2;
  return {u32s({pads.begin(), pads.begin() + half}), u32s({pads.begin() + half, pads.end()})};
}

bool allOnes(const std::vector<int64_t> &v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

// The ODLA layouts of a spatial op's data and kernel (see kLayoutAttr).
odla_memory_layout dataLayout(const Node &n) {
  return isChannelsLast(n) ? ODLA_CHANNELS_LAST : ODLA_CHANNELS_FIRST;
}
odla_memory_layout kernelLayout(const Node &n) { return isChannelsLast(n) ? ODLA_SIO : ODLA_OIS; }

void lowerConv(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().Conv(c.in(0), dataLayout(n), static_cast<odla_uint32>(n.i("group")), c.in(1),
                            kernelLayout(n), u32s(n.ints("strides")), u32s(n.ints("dilations")),
                            front, back, c.in(2), c.outShape(0), c.outId(0)));
}

// output_padding reaches odla_DeConv through the output dims.
void lowerConvTranspose(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().DeConv(c.in(0), ODLA_CHANNELS_FIRST, static_cast<odla_uint32>(n.i("group")),
                              c.in(1), ODLA_IOS, u32s(n.ints("strides")), u32s(n.ints("dilations")),
                              front, back, c.in(2), c.outShape(0), c.outId(0)));
}

void lowerDeformConv(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().ExtDeformConv(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4),
                                     static_cast<odla_uint32>(n.i("group")),
                                     static_cast<odla_uint32>(n.i("offset_group")),
                                     u32s(n.ints("strides")), u32s(n.ints("dilations")), front,
                                     back, c.outShape(0), c.outId(0)));
}

// ODLA 0.5's odla_MaxPool has no dilations: dilated windows need the extension. Ceil mode
// reaches both through the output dims.
void lowerMaxPool(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  if (allOnes(n.ints("dilations")))
    c.setOut(0, c.sink().MaxPool(c.in(0), dataLayout(n), u32s(n.ints("kernel_shape")),
                                 u32s(n.ints("strides")), front, back, c.outShape(0), c.outId(0)));
  else
    c.setOut(0, c.sink().ExtMaxPool(c.in(0), dataLayout(n), u32s(n.ints("kernel_shape")),
                                    u32s(n.ints("strides")), u32s(n.ints("dilations")), front, back,
                                    c.outShape(0), c.outId(0)));
}

void lowerMaxPoolIndices(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().ExtMaxPoolIndices(c.in(0), ODLA_CHANNELS_FIRST, u32s(n.ints("kernel_shape")),
                                         u32s(n.ints("strides")), u32s(n.ints("dilations")), front,
                                         back, {n.i("storage_order") != 0}, c.outShape(0),
                                         c.outId(0)));
}

// Dilated windows need the extension, as for MaxPool.
void lowerAveragePool(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  lower::Flag includePad{n.i("count_include_pad") != 0};
  if (allOnes(n.ints("dilations")))
    c.setOut(0, c.sink().AveragePool(c.in(0), dataLayout(n), u32s(n.ints("kernel_shape")),
                                     u32s(n.ints("strides")), front, back, includePad,
                                     c.outShape(0), c.outId(0)));
  else
    c.setOut(0, c.sink().ExtAveragePool(c.in(0), dataLayout(n), u32s(n.ints("kernel_shape")),
                                        u32s(n.ints("strides")), u32s(n.ints("dilations")), front,
                                        back, includePad, c.outShape(0), c.outId(0)));
}

void lowerLpPool(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0,
           c.sink().ExtLpPool(c.in(0), ODLA_CHANNELS_FIRST, static_cast<float>(n.f("p")),
                              u32s(n.ints("kernel_shape")), u32s(n.ints("strides")),
                              u32s(n.ints("dilations")), front, back, c.outShape(0), c.outId(0)));
}

// The result shape is the attribute `shape` ([N, C, image...]); image_shape and block_shape
// stay operands, read when the kernel runs.
Status inferCol2Im(InferCtx &c) {
  const Dims &x = c.in(0).dims, &shape = c.ints("shape");
  size_t spatial = shape.size() < 2 ? 0 : shape.size() - 2;
  if (x.size() != 3 || spatial < 1 || spatial > 3 || shape[0] != x[0] || shape[1] < 1 ||
      x[1] % shape[1] != 0)
    return c.fail("input " + dimsToString(x) + " must be [N, C * block size, L] for a result " +
                  dimsToString(shape) + " [N, C, 1 to 3 image axes]");
  for (int i : {1, 2})
    if (c.in(i).dims != Dims{static_cast<int64_t>(spatial)})
      return c.fail(std::string(i == 1 ? "image_shape " : "block_shape ") + toString(c.in(i)) +
                    " must be a vector of " + str(spatial) + " entries");
  for (const char *a : {"dilations", "strides"})
    if (c.ints(a).size() != spatial)
      return c.fail(std::string(a) + " " + dimsToString(c.ints(a)) + " must have " + str(spatial) +
                    " entries");
  const auto &pads = c.ints("pads");
  if (pads.size() != 2 * spatial)
    return c.fail("pads " + dimsToString(pads) + " must have " + str(2 * spatial) + " entries");
  // The block is read when the kernel runs (a 1 here is always valid); the rest must be what
  // the kernel's odla_uint32 parameters can hold.
  for (size_t i = 0; i < spatial; ++i)
    if (Status s = checkWindowAxis(c, i, spatial, 1, c.ints("strides")[i], c.ints("dilations")[i],
                                   pads[i], pads[i + spatial]))
      return s;
  c.setOut(0, TensorType{c.in(0).dtype, shape});
  return Status::ok();
}

void lowerCol2Im(LowerCtx &c) {
  const Node &n = c.node();
  auto [front, back] = splitPads(n.ints("pads"));
  c.setOut(0, c.sink().ExtCol2Im(c.in(0), c.in(1), c.in(2), u32s(n.ints("dilations")), front, back,
                                 u32s(n.ints("strides")), c.outShape(0), c.outId(0)));
}

void lowerBatchNorm(LowerCtx &c) {
  c.setOut(0, c.sink().BatchNormalization(c.in(0), dataLayout(c.node()), c.in(3), c.in(4),
                                          static_cast<float>(c.node().f("epsilon")), c.in(1),
                                          c.in(2), 1.0f, 0.0f, c.outId(0)));
}

void lowerGemm(LowerCtx &c) {
  const Node &n = c.node();
  c.setOut(0, c.sink().Gemm(c.in(0), {n.i("transA") != 0}, c.in(1), {n.i("transB") != 0},
                            static_cast<float>(n.f("alpha")), static_cast<float>(n.f("beta")),
                            c.in(2), c.outShape(0), c.outId(0)));
}

// A product by a matrix ([..., M, K] x [K, N], a Linear layer without bias on a batch of
// sequences) is one Gemm on the rows of A, reshaped: a backend's fast path for matrices (and
// its packed weights) then serves it, and a decoder's one-row steps are one product.
void lowerMatMul(LowerCtx &c) {
  const Node &n = c.node();
  const Dims &a = n.input(0)->dims(), &b = n.input(1)->dims();
  bool plain = a.size() == 2 && b.size() == 2;
  if (a.size() > 2 && b.size() == 2) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < a.size(); ++i)
      rows *= a[i];
    const std::string &out = c.outId(0).name;
    lower::Val flat = c.sink().Reshape(c.in(0), shapeArg({rows, a.back()}), {out + "/rows"});
    lower::Val product = matMul(c.sink(), flat, c.in(1), false, true, shapeArg({rows, b.back()}),
                                {out + "/product"});
    c.setOut(0, c.sink().Reshape(product, c.outShape(0), c.outId(0)));
    return;
  }
  c.setOut(0, matMul(c.sink(), c.in(0), c.in(1), false, plain, c.outShape(0), c.outId(0)));
}

void lowerEinsum(LowerCtx &c) {
  c.setOut(0, c.sink().Einsum(c.ins(), {c.node().s("equation")}, c.outShape(0), c.outId(0)));
}

void lowerDet(LowerCtx &c) { c.setOut(0, c.sink().Det(c.in(0), c.outShape(0), c.outId(0))); }

const AttrDef kStrides{"strides", AttrKind::Ints, std::nullopt};
const AttrDef kPads{"pads", AttrKind::Ints, std::nullopt};
const AttrDef kKernelShape{"kernel_shape", AttrKind::Ints, std::nullopt};
const AttrDef kCeilMode{"ceil_mode", AttrKind::Int, AttrValue(int64_t{0})};
// Empty means 1 along every axis.
const AttrDef kPoolDilations{"dilations", AttrKind::Ints, AttrValue(std::vector<int64_t>{})};
const AttrDef kLayout{kLayoutAttr, AttrKind::String, AttrValue(std::string("channels_first"))};

} // namespace

namespace ops {

const OpDef Conv = {"Conv",
                    {{"x", OperandDef::Required, kFloat},
                     {"w", OperandDef::Required, kFloat},
                     {"b", OperandDef::Optional, kFloat}},
                    1,
                    {{"group", AttrKind::Int, AttrValue(int64_t{1})},
                     kStrides,
                     {"dilations", AttrKind::Ints, std::nullopt},
                     kPads,
                     kLayout},
                    FusionClass::OutElementwiseFusable,
                    kTraitNone,
                    inferConv,
                    lowerConv,
                    BatchRule::RowsOfFirst,
                    FlopRule::Conv};
const OpDef DeformConv = {"DeformConv",
                          {{"x", OperandDef::Required, kFloat},
                           {"w", OperandDef::Required, kFloat},
                           {"offset", OperandDef::Required, kFloat},
                           {"b", OperandDef::Optional, kFloat},
                           {"mask", OperandDef::Optional, kFloat}},
                          1,
                          {{"group", AttrKind::Int, AttrValue(int64_t{1})},
                           {"offset_group", AttrKind::Int, AttrValue(int64_t{1})},
                           kStrides,
                           {"dilations", AttrKind::Ints, std::nullopt},
                           kPads},
                          FusionClass::Opaque,
                          kTraitNone,
                          inferDeformConv,
                          lowerDeformConv};
// Kernel [C, M / group, k...] as ONNX has it. Explicit pads only: import resolves auto_pad
// and output_shape into pads and output_padding.
const OpDef ConvTranspose = {"ConvTranspose",
                             {{"x", OperandDef::Required, kFloat},
                              {"w", OperandDef::Required, kFloat},
                              {"b", OperandDef::Optional, kFloat}},
                             1,
                             {{"group", AttrKind::Int, AttrValue(int64_t{1})},
                              kStrides,
                              {"dilations", AttrKind::Ints, std::nullopt},
                              kPads,
                              {"output_padding", AttrKind::Ints, std::nullopt}},
                             FusionClass::OutElementwiseFusable,
                             kTraitNone,
                             inferConvTranspose,
                             lowerConvTranspose,
                             BatchRule::RowsOfFirst};
const OpDef MaxPool = {"MaxPool",
                       {{"x", OperandDef::Required, kFloat | kIntTypes}},
                       1,
                       {kKernelShape, kStrides, kPads, kCeilMode, kPoolDilations, kLayout},
                       FusionClass::OutElementwiseFusable,
                       kSelectsElements,
                       inferPool,
                       lowerMaxPool,
                       BatchRule::RowsOfFirst};
// The int64 positions MaxPool with the same attributes takes its maxima from (ONNX
// MaxPool's Indices output): flat input positions, column-major spatially with
// storage_order 1.
const OpDef MaxPoolIndices = {"MaxPoolIndices",
                              {{"x", OperandDef::Required, kFloat | kIntTypes}},
                              1,
                              {kKernelShape,
                               kStrides,
                               kPads,
                               kCeilMode,
                               kPoolDilations,
                               {"storage_order", AttrKind::Int, AttrValue(int64_t{0})}},
                              FusionClass::Opaque,
                              kTraitNone,
                              inferMaxPoolIndices,
                              lowerMaxPoolIndices};
const OpDef AveragePool = {"AveragePool",
                           {{"x", OperandDef::Required, kFloat}},
                           1,
                           {kKernelShape,
                            kStrides,
                            kPads,
                            kCeilMode,
                            kPoolDilations,
                            {"count_include_pad", AttrKind::Int, AttrValue(int64_t{0})},
                            kLayout},
                           FusionClass::OutElementwiseFusable,
                           kTraitNone,
                           inferPool,
                           lowerAveragePool,
                           BatchRule::RowsOfFirst};
// (sum over the window of |x|^p)^(1/p).
const OpDef LpPool = {"LpPool",
                      {{"x", OperandDef::Required, kFloat}},
                      1,
                      {kKernelShape,
                       kStrides,
                       kPads,
                       kCeilMode,
                       kPoolDilations,
                       {"p", AttrKind::Float, AttrValue(2.0)}},
                      FusionClass::OutElementwiseFusable,
                      kTraitNone,
                      inferLpPool,
                      lowerLpPool,
                      BatchRule::RowsOfFirst};
// ONNX Col2Im: the columns of x [N, C * prod(block), L] summed back into an image.
const OpDef Col2Im = {"Col2Im",
                      {{"x", OperandDef::Required, kFloat},
                       {"image_shape", OperandDef::Required, maskOf(DType::I64)},
                       {"block_shape", OperandDef::Required, maskOf(DType::I64)}},
                      1,
                      {{"shape", AttrKind::Ints, std::nullopt},
                       {"dilations", AttrKind::Ints, std::nullopt},
                       {"pads", AttrKind::Ints, std::nullopt},
                       {"strides", AttrKind::Ints, std::nullopt}},
                      FusionClass::Opaque,
                      kTraitNone,
                      inferCol2Im,
                      lowerCol2Im};
// The statistics may have another float type than x (ONNX opset 15).
const OpDef BatchNormalization = {"BatchNormalization",
                                  {{"x", OperandDef::Required, kFloat},
                                   {"scale", OperandDef::Required, kFloat},
                                   {"bias", OperandDef::Required, kFloat},
                                   {"mean", OperandDef::Required, kFloat},
                                   {"var", OperandDef::Required, kFloat}},
                                  1,
                                  {{"epsilon", AttrKind::Float, AttrValue(1e-5)}, kLayout},
                                  FusionClass::Broadcast,
                                  kTraitNone,
                                  inferBatchNorm,
                                  lowerBatchNorm};
const OpDef Gemm = {"Gemm",
                    {{"a", OperandDef::Required, kMatrix},
                     {"b", OperandDef::Required, kMatrix},
                     {"c", OperandDef::Optional, kMatrix}},
                    1,
                    {{"transA", AttrKind::Int, AttrValue(int64_t{0})},
                     {"transB", AttrKind::Int, AttrValue(int64_t{0})},
                     {"alpha", AttrKind::Float, AttrValue(1.0)},
                     {"beta", AttrKind::Float, AttrValue(1.0)}},
                    FusionClass::OutElementwiseFusable,
                    kTraitNone,
                    inferGemm,
                    lowerGemm,
                    BatchRule::Gemm,
                    FlopRule::MatrixProduct};
const OpDef MatMul = {"MatMul",
                      {{"a", OperandDef::Required, kMatrix}, {"b", OperandDef::Required, kMatrix}},
                      1,
                      {},
                      FusionClass::OutElementwiseFusable,
                      kTraitNone,
                      inferMatMul,
                      lowerMatMul,
                      BatchRule::MatMul,
                      FlopRule::MatrixProduct};
const OpDef Einsum = {"Einsum",
                      {{"inputs", OperandDef::Variadic, kMatrix}},
                      1,
                      {{"equation", AttrKind::String, std::nullopt}},
                      FusionClass::Opaque,
                      kTraitNone,
                      inferEinsum,
                      lowerEinsum};
const OpDef Det = {"Det",
                   {{"x", OperandDef::Required, kFloat}},
                   1,
                   {},
                   FusionClass::Opaque,
                   kTraitNone,
                   inferDet,
                   lowerDet};

} // namespace ops

} // namespace odlac
