// The size checks of ir/Limits.h.
#include "ir/Limits.h"

#include "ir/Graph.h"
#include "ops/OpDef.h"

#include <ODLA/odla_value.h>

#include <functional>

namespace odlac {

static_assert(kMaxRank == ODLA_MAX_DIMENSION, "kMaxRank is odla_value_shape's capacity");

// The default limit on 64-bit targets: 1 TiB, beyond the memory of any machine the code is
// likely to run on, so that a model asking for more (a corrupt or hostile one, typically) is
// refused when it is compiled instead of failing when it runs.
constexpr int64_t kDefaultLimit64 = int64_t{1} << 40;

std::string bytesText(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string s = std::to_string(bytes) + " bytes";
  int unit = -1;
  uint64_t whole = bytes;
  while (whole >= 1024 && unit < 5) {
    whole /= 1024;
    ++unit;
  }
  if (unit < 0)
    return s;
  uint64_t scale = uint64_t{1} << (10 * (unit + 1));
  bool exact = bytes % scale == 0;
  return s + " (" + (exact ? "" : "about ") + std::to_string(whole) + " " + kUnits[unit] + ")";
}

std::string shapeProblem(const TensorType &t) {
  if (t.rank() > kMaxRank)
    return "rank " + std::to_string(t.rank()) + " exceeds " + std::to_string(kMaxRank) +
           ", the most axes an ODLA value has (ODLA_MAX_DIMENSION)";
  CheckedInt nonZero = 1;
  bool empty = false;
  for (int i = 0; i < t.rank(); ++i) {
    int64_t d = t.dims[i];
    if (d < 0)
      return "dim " + std::to_string(i) + " is negative (" + std::to_string(d) + ")";
    empty |= d == 0;
    if (d != 0)
      nonZero *= d;
    if (!nonZero.valid() || nonZero.value() > kMaxElements)
      return std::string(empty ? "the product of its nonzero dims" : "its element count") +
             " exceeds 2^48 (" + std::to_string(kMaxElements) + ")" +
             (empty ? ", which bounds the strides kernels compute even for an empty tensor"
                    : ", the most elements of any tensor");
  }
  int64_t bytes = empty ? 0 : nonZero.value() * dtypeBytes(t.dtype);
  if (bytes > kMaxTensorBytes)
    return "its " + bytesText(bytes) + " exceed 2^48 bytes, the most of any tensor";
  return "";
}

SizeLimits SizeLimits::forPointerBits(int pointerBits) {
  return {pointerBits == 32 ? hardMax(32) : kDefaultLimit64, pointerBits, false};
}

int64_t SizeLimits::hardMax(int pointerBits) {
  return pointerBits == 32 ? int64_t{INT32_MAX} : kMaxTensorBytes;
}

std::string SizeLimits::describe() const {
  std::string targets = std::to_string(pointerBits) + "-bit targets";
  std::string s = "the size limit of " + bytesText(static_cast<uint64_t>(maxBytes));
  if (fromFlag)
    return s + " set by --size-limit";
  s += " for " + targets;
  if (maxBytes < hardMax(pointerBits))
    return s + "; raise it with --size-limit (at most " +
           bytesText(static_cast<uint64_t>(hardMax(pointerBits))) + " there)";
  return s + ", the most a tensor there can have (a C object's size, PTRDIFF_MAX)";
}

std::string sizeLimitProblem(const TensorType &t, const SizeLimits &limits) {
  uint64_t bytes = t.byteSize();
  if (bytes <= static_cast<uint64_t>(limits.maxBytes))
    return "";
  return "its " + bytesText(bytes) + " exceed " + limits.describe();
}

Status checkSizeLimits(const Graph &g, const SizeLimits &limits) {
  Status all;
  std::function<void(const Graph &, const std::string &)> walk = [&](const Graph &graph,
                                                                     const std::string &where) {
    auto check = [&](const Value *v, const std::string &what) {
      std::string problem = sizeLimitProblem(v->type(), limits);
      if (!problem.empty())
        all.append(Status::error(where + what + " '" + v->name() + "' " + toString(v->type()) +
                                 ": " + problem));
    };
    if (where.empty()) // a body's inputs are values of the graph around it
      for (const Value *in : graph.inputs())
        check(in, "graph input");
    for (const Value *c : graph.constants())
      check(c, "constant");
    for (const Node *n : graph.nodes()) {
      std::string label = "node '" + n->name() + "' (" + n->op().name + ") result";
      for (const Value *out : n->outputs())
        check(out, label);
      for (const auto &[name, body] : n->subgraphs())
        walk(*body, where + "body '" + name + "' of node '" + n->name() + "': ");
    }
  };
  walk(g, "");
  return all;
}

} // namespace odlac
