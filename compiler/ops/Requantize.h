// The integer-only requantization of odla_ext_quant.h's quantized products (QLinearConv,
// QLinearMatMul): the real factor input_scale * kernel_scale / output_scale as a 31-bit
// multiplier and a right shift, and the clamp a fused activation becomes. Shared by the
// frontend (QLinearConv, QLinearMatMul) and the QDQ folding pass, which both start from float
// scales.
#pragma once

#include "ir/DType.h"
#include "ir/Graph.h"
#include "support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace odlac {

struct FixedPoint {
  int32_t multiplier; // in [2^30, 2^31), or 0 for a zero factor
  int32_t shift;      // in [1, 62]: the factor is multiplier / 2^shift
};

// `factor` (finite, >= 0) as multiplier / 2^shift with a 31-bit multiplier, rounded to nearest.
// Factors below 2^-32 round to zero (no 8-bit result can then differ from the zero point);
// factors of 2^30 or more, which no sensible model has, are refused: the message names them.
Expected<FixedPoint> fixedPoint(double factor);

// The per-channel requantization of a product: multiplier[c] / 2^shift[c] =
// inputScale * kernelScale[c] / outputScale. `kernelScale` holds one scale (per tensor) or one
// per output channel. `what` names the product in messages.
struct Requantization {
  std::vector<int32_t> multiplier, shift;
};
Expected<Requantization> requantization(double inputScale, const std::vector<double> &kernelScale,
                                        double outputScale, const std::string &what);

// The quantized range [lo, hi] of an 8-bit type `t` (uint8, int8).
int32_t quantMin(DType t);
int32_t quantMax(DType t);

// Whether a product of `terms` terms per output, each (x - zero point) * (w - zero point) of
// 8-bit operands, plus a bias of magnitude up to `maxBias`, fits int32 whatever the operands.
bool accumulatorFits(int64_t terms, double maxBias);

// The elements of `v` as doubles when it is a constant of a float type (float32, float64,
// float16, bfloat16): the scales the requantization starts from. nullopt otherwise.
std::optional<std::vector<double>> constantFloats(const Value &v);

} // namespace odlac
