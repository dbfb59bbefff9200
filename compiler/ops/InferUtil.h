// Shape rules shared by several op rows' inference functions.
#pragma once

#include "ir/Graph.h"
#include "ir/Type.h"
#include "support/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace odlac {

// Numpy-style multidirectional broadcast; nullopt when the dims are incompatible.
std::optional<Dims> broadcastDims(const Dims &a, const Dims &b);

// Output extent of a sliding window (conv, pooling) along one axis; <= 0 when the window does
// not fit. ceilMode follows PyTorch/ONNX: the last window must start inside the input or the
// leading padding.
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                     int64_t padEnd, bool ceilMode);

class InferCtx;

// What is wrong with entry `index` of a sliding window's attribute `name` (kernel_shape,
// strides, dilations, pads...), which must be at least `least` and below 2^31: "attribute
// strides[1] is 0; strides must be positive"; empty when nothing is. Import rules that compute
// with the attribute before the op's inference does share the words.
std::string windowEntryProblem(const char *name, size_t index, int64_t value, int64_t least);

// The parameters of spatial axis `axis` (of `spatial`) of a sliding window: kernel, stride and
// dilation >= 1, pads >= 0, all below 2^31 (ODLA takes them as odla_uint32; the bound also
// keeps windowOutput's arithmetic far from overflow). The message names the attribute entry.
Status checkWindowAxis(InferCtx &c, size_t axis, size_t spatial, int64_t kernel, int64_t stride,
                       int64_t dilation, int64_t padBegin, int64_t padEnd);
// A convolution's group: in [1, 2^31) (an odla_uint32, and a divisor of the channels).
Status checkGroup(InferCtx &c, int64_t group);
// Checks a convolution's group and channels: data x [N, C, ...] and kernel w [M, C / group, ...]
// (both channels first), M a multiple of group.
Status checkConvChannels(InferCtx &c, const Dims &x, const Dims &w, int64_t group);

// The result dims of a convolution of operand `xIndex` by kernel `wIndex` in the node's layout,
// checking the group, strides, dilations and pads attributes (Conv, FusedConv, QLinearConv).
Expected<Dims> convolutionDims(InferCtx &c, int xIndex, int wIndex);
// Result type of a convolution node whose operands are (x, w, optional bias) and whose
// attributes are group, strides, dilations and pads (Conv and the fused convolution).
Status inferConvolution(InferCtx &c);

// Data layout of spatial ops (Conv, FusedConv, MaxPool, AveragePool), their `layout`
// attribute: "channels_first" means data [N, C, spatial...] and kernels [M, C / group,
// spatial...] (ODLA's OIS); "channels_last" means data [N, spatial..., C] and kernels
// [spatial..., C / group, M] (ODLA's SIO). AssignLayout switches it; inference reasons in
// channels-first terms through the conversions below.
extern const char *const kLayoutAttr;
bool isChannelsLast(const Node &n);
// Checks the attribute's value, when the node has one.
Status checkLayout(InferCtx &c);
// Permutations (Transpose perms) of a rank-`rank` tensor: data to channels-last
// [0, 2, ..., r-1, 1], data back to channels-first [0, r-1, 1, ..., r-2], and OIS kernels
// to SIO [2, ..., r-1, 1, 0].
std::vector<int64_t> toChannelsLastPerm(size_t rank);
std::vector<int64_t> toChannelsFirstPerm(size_t rank);
std::vector<int64_t> kernelToSioPerm(size_t rank);
// dims permuted by `perm`: result[i] = dims[perm[i]].
Dims permuteDims(const Dims &dims, const std::vector<int64_t> &perm);
// The channels-first view of a spatial op's data or kernel dims, and back.
Dims dataAsChannelsFirst(const Dims &d, bool channelsLast);
Dims dataFromChannelsFirst(const Dims &d, bool channelsLast);
Dims kernelAsOis(const Dims &w, bool channelsLast);

} // namespace odlac
