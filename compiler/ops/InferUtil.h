// Shape rules shared by several op rows' inference functions.
#pragma once

#include "ir/Type.h"
#include "support/Status.h"

#include <string>

#include <optional>
#include <string>

namespace odlac {

// Numpy-style multidirectional broadcast; nullopt when the dims are incompatible.
std::optional<Dims> broadcastDims(const Dims &a, const Dims &b);

// Output extent of a sliding window (conv, pooling) along one axis; <= 0 when the window does
// not fit. ceilMode follows PyTorch/ONNX: the last window must start inside the input or the
// leading padding.
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                     int64_t padEnd, bool ceilMode);

class InferCtx;

// Result type of a convolution node whose operands are (x, w, optional bias) and whose
// attributes are group, strides, dilations and pads (Conv and the fused convolution).
Status inferConvolution(InferCtx &c);

} // namespace odlac
