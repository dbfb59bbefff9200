// Shape rules shared by several op rows' inference functions.
#include "ops/InferUtil.h"

#include "ops/OpDef.h"

#include <algorithm>

namespace odlac {

std::optional<Dims> broadcastDims(const Dims &a, const Dims &b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                     int64_t padEnd, bool ceilMode) {
  CheckedInt span = (CheckedInt(kernel) - 1) * dilation + 1;
  CheckedInt room = CheckedInt(in) + padBegin + padEnd - span;
  if (!room.valid() || room.value() < 0 || stride < 1)
    return 0;
  CheckedInt out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  CheckedInt lastStart = (out - 1) * stride, limit = CheckedInt(in) + padBegin;
  if (ceilMode && lastStart.valid() && limit.valid() && lastStart.value() >= limit.value())
    out -= 1;
  return out.get().value_or(0);
}

std::string windowEntryProblem(const char *name, size_t index, int64_t value, int64_t least) {
  std::string what = std::string("attribute ") + name + "[" + str(static_cast<int64_t>(index)) +
                     "] is " + str(value) + "; " + name;
  if (value < least)
    return what + (least ? " must be positive" : " must not be negative");
  if (value > INT32_MAX)
    return what + " must be below 2^31";
  return "";
}

Status checkWindowAxis(InferCtx &c, size_t axis, size_t spatial, int64_t kernel, int64_t stride,
                       int64_t dilation, int64_t padBegin, int64_t padEnd) {
  // Each entry that the window arithmetic divides by or sizes with, named as the model has it
  // (the end pad of axis i is pads[i + spatial]).
  struct Entry {
    const char *name;
    size_t index;
    int64_t value, least;
  } entries[] = {{"kernel_shape", axis, kernel, 1},
                 {"strides", axis, stride, 1},
                 {"dilations", axis, dilation, 1},
                 {"pads", axis, padBegin, 0},
                 {"pads", axis + spatial, padEnd, 0}};
  for (const Entry &e : entries) {
    std::string problem = windowEntryProblem(e.name, e.index, e.value, e.least);
    if (!problem.empty())
      return c.fail(problem);
  }
  return Status::ok();
}

Status checkGroup(InferCtx &c, int64_t group) {
  if (group < 1 || group > INT32_MAX)
    return c.fail("group " + str(group) + " must be in [1, 2^31)");
  return Status::ok();
}

Status checkConvChannels(InferCtx &c, const Dims &x, const Dims &w, int64_t group) {
  if (Status s = checkGroup(c, group))
    return s;
  if ((CheckedInt(w[1]) * group).get() != x[1] || w[0] % group != 0)
    return c.fail("input channels " + str(x[1]) + " must equal kernel dim 1 (" + str(w[1]) +
                  ") times group " + str(group) + ", and kernel dim 0 (" + str(w[0]) +
                  ") must be a multiple of group");
  return Status::ok();
}

const char *const kLayoutAttr = "layout";

bool isChannelsLast(const Node &n) {
  return n.hasAttr(kLayoutAttr) && n.s(kLayoutAttr) == "channels_last";
}

Status checkLayout(InferCtx &c) {
  if (!c.node().hasAttr(kLayoutAttr))
    return Status::ok();
  const std::string &l = c.node().s(kLayoutAttr);
  if (l != "channels_first" && l != "channels_last")
    return c.fail("layout '" + l + "' must be channels_first or channels_last");
  return Status::ok();
}

std::vector<int64_t> toChannelsLastPerm(size_t rank) {
  std::vector<int64_t> p{0};
  for (size_t i = 2; i < rank; ++i)
    p.push_back(static_cast<int64_t>(i));
  p.push_back(1);
  return p;
}

std::vector<int64_t> toChannelsFirstPerm(size_t rank) {
  std::vector<int64_t> p{0, static_cast<int64_t>(rank) - 1};
  for (size_t i = 1; i + 1 < rank; ++i)
    p.push_back(static_cast<int64_t>(i));
  return p;
}

std::vector<int64_t> kernelToSioPerm(size_t rank) {
  std::vector<int64_t> p;
  for (size_t i = 2; i < rank; ++i)
    p.push_back(static_cast<int64_t>(i));
  p.push_back(1);
  p.push_back(0);
  return p;
}

Dims permuteDims(const Dims &dims, const std::vector<int64_t> &perm) {
  Dims out;
  for (int64_t p : perm)
    out.push_back(dims[p]);
  return out;
}

Dims dataAsChannelsFirst(const Dims &d, bool channelsLast) {
  return channelsLast && d.size() >= 3 ? permuteDims(d, toChannelsFirstPerm(d.size())) : d;
}

Dims dataFromChannelsFirst(const Dims &d, bool channelsLast) {
  return channelsLast && d.size() >= 3 ? permuteDims(d, toChannelsLastPerm(d.size())) : d;
}

// SIO [s..., I, O] -> OIS [O, I, s...].
Dims kernelAsOis(const Dims &w, bool channelsLast) {
  if (!channelsLast || w.size() < 3)
    return w;
  Dims out{w[w.size() - 1], w[w.size() - 2]};
  out.insert(out.end(), w.begin(), w.end() - 2);
  return out;
}

Expected<Dims> convolutionDims(InferCtx &c, int xIndex, int wIndex) {
  if (Status s = checkLayout(c))
    return s;
  bool last = isChannelsLast(c.node());
  const Dims x = dataAsChannelsFirst(c.in(xIndex).dims, last),
             w = kernelAsOis(c.in(wIndex).dims, last);
  if (x.size() < 3 || w.size() != x.size())
    return c.fail("input " + dimsToString(x) + " and kernel " + dimsToString(w) +
                  " must have the same rank, at least 3 (N, C, spatial...)");
  int64_t group = c.i("group");
  if (Status s = checkConvChannels(c, x, w, group))
    return s;
  size_t spatial = x.size() - 2;
  const auto &strides = c.ints("strides"), &dilations = c.ints("dilations"), &pads = c.ints("pads");
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
    return c.fail("strides and dilations need " + str(spatial) + " entries and pads " +
                  str(2 * spatial));
  Dims out{x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    if (Status s = checkWindowAxis(c, i, spatial, w[i + 2], strides[i], dilations[i], pads[i],
                                   pads[i + spatial]))
      return s;
    int64_t o = windowOutput(x[i + 2], w[i + 2], strides[i], dilations[i], pads[i],
                             pads[i + spatial], false);
    if (o < 1)
      return c.fail("spatial axis " + str(i) + ": the kernel does not fit the input");
    out.push_back(o);
  }
  return dataFromChannelsFirst(out, last);
}

Status inferConvolution(InferCtx &c) {
  if (c.in(1).dtype != c.in(0).dtype)
    return c.fail("kernel element type differs from the input's");
  auto out = convolutionDims(c, 0, 1);
  if (!out)
    return out.takeStatus();
  int64_t m = kernelAsOis(c.in(1).dims, isChannelsLast(c.node()))[0];
  if (c.hasInput(2) && (c.in(2).dims != Dims{m} || c.in(2).dtype != c.in(0).dtype))
    return c.fail("bias must be " + std::string(dtypeName(c.in(0).dtype)) + "[" + str(m) +
                  "], got " + toString(c.in(2)));
  c.setOut(0, TensorType{c.in(0).dtype, *out});
  return Status::ok();
}

} // namespace odlac
