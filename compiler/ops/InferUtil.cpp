// Shape rules shared by several op rows' inference functions.
#include "ops/InferUtil.h"

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
  int64_t span = (kernel - 1) * dilation + 1;
  int64_t room = in + padBegin + padEnd - span;
  if (room < 0)
    return 0;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

} // namespace odlac
