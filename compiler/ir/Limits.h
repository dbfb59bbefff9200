// The sizes odlac accepts, in one place (docs/cli.md "Limits" gives the same table to users):
// what the IR can represent on any target, the per-target limit that --target and
// --size-limit set, and how much odlac computes at compile time for one value.
//
// Two tiers:
//   1. Representable (shapeProblem): rank, dims and counts every stage may compute with in
//      int64 without overflow. Checked wherever a type is made from untrusted numbers (graph
//      inputs, initializers, every inferred result in verifyAndInfer, the text IR), so every
//      type a Value holds satisfies it.
//   2. Per target (SizeLimits): the most bytes of one tensor, and of the weights plus the
//      activation arena together. Checked on the whole graph after import and again, with
//      the arena, before any file is written.
#pragma once

#include "ir/Type.h"
#include "support/Status.h"

#include <cstdint>
#include <string>

namespace odlac {

class Graph;

// The most axes a tensor may have: odla_value_shape holds ODLA_MAX_DIMENSION (10) dims, and
// every ODLA call takes its shapes in one.
constexpr int kMaxRank = 10;

// The most elements, and the most bytes, of any tensor on any target: 2^48, the virtual
// address space of x86-64 and AArch64, the largest of any target odlac generates code for.
// Anything larger cannot be held by any machine the code runs on. It also keeps sizes far
// below 2^63: any product of one tensor's dims (strides, rows, columns) and the sum of a few
// sizes fit int64, and so does a dim times an element's bytes.
constexpr int64_t kMaxElements = int64_t{1} << 48;
constexpr int64_t kMaxTensorBytes = kMaxElements;

// The most bytes odlac computes at compile time for one value: operands that must be known
// then (shapes, axes, pads; evaluated on the reference backend) and constants that import
// rules generate (Range, Trilu masks, constant padding). It bounds odlac's own memory, not
// the model's: a model needing more there is refused rather than exhausting the machine that
// compiles it.
constexpr int64_t kMaxCompileTimeBytes = int64_t{1} << 30;

// The most iterations of a Loop odlac runs at compile time (when a rule needs a value the
// loop computes, or constant folding meets one): a longer loop, or one whose trip count is
// known only at run time, is left for run time, so that compiling always ends.
constexpr int64_t kMaxCompileTimeIterations = int64_t{1} << 16;

// Limits on what inlining ONNX local functions (frontend/Functions.h) may build from a small
// file: calls nest at most this deep (a function that calls itself, directly or through
// others, is refused), and the graphs hold at most this many nodes in all once every call is
// expanded.
constexpr int kMaxFunctionDepth = 64;
constexpr int64_t kMaxInlinedNodes = int64_t{1} << 20;

// Why a tensor of type `t` cannot exist in the IR: rank above kMaxRank, a negative dim, more
// than kMaxElements elements or kMaxTensorBytes bytes, or nonzero dims whose product exceeds
// kMaxElements (an empty tensor too: kernels compute strides from its other dims). Empty when
// it can.
std::string shapeProblem(const TensorType &t);

// "4398046511104 bytes (4 TiB)": a byte count for messages, with its binary magnitude.
std::string bytesText(uint64_t bytes);

// The per-target limit (tier 2).
struct SizeLimits {
  // The most bytes of one tensor (input, output, weight or intermediate), and of the weights
  // plus the activation arena together.
  int64_t maxBytes;
  int pointerBits; // the target's: 32 or 64
  bool fromFlag;   // set by --size-limit rather than the target's default

  // The defaults for a target whose pointers have `pointerBits` bits.
  static SizeLimits forPointerBits(int pointerBits);
  // The most --size-limit may be on such a target: 2^31 - 1 on 32-bit targets (a tensor is
  // one C object, at most PTRDIFF_MAX bytes, and the generated size macros and ODLA's
  // odla_size_t are 32 bits there), kMaxTensorBytes on 64-bit ones.
  static int64_t hardMax(int pointerBits);
  // "the size limit of N bytes (1 TiB) for 64-bit targets; raise it with --size-limit (at
  // most ...)", for the end of a refusal.
  std::string describe() const;
};

// Why `t` (already representable) exceeds `limits`; empty when it does not.
std::string sizeLimitProblem(const TensorType &t, const SizeLimits &limits);

// Every value of `g` and its bodies against `limits`: one message per value too large,
// naming it and the node that computes it.
Status checkSizeLimits(const Graph &g, const SizeLimits &limits);

} // namespace odlac
