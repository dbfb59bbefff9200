/* odla_ext_nn.h: odlac's extension ops of the nn family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them.
 *
 * ODLA 0.5's odla_MaxPool and odla_AveragePool have no dilations, odla_MaxPool no argmax
 * output, and ODLA has no Lp pooling;
 * none of them decomposes into core ODLA ops (pooling windows cannot be dilated, and
 * odla_Pad pads with zeros, not -infinity). Arguments follow odla_MaxPool: CHANNELS_FIRST
 * data, one entry per spatial axis in the arrays, output_dims as the caller inferred it
 * (undefined: floor rounding; given: it may name the ceil-rounded extents instead). */
#ifndef _ODLA_EXT_NN_H_
#define _ODLA_EXT_NN_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>
#include <ODLA/ops/odla_ops_nn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* odla_MaxPool with dilations: output cell o of an axis takes the max of
 * input[o * stride - padding_front + k * dilation] for k in [0, window). NULL dilations
 * mean 1. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtMaxPool(
    odla_value input, odla_memory_layout input_layout, const odla_uint32 *window_dims,
    const odla_uint32 *strides, const odla_uint32 *dilations, const odla_uint32 *paddings_front,
    const odla_uint32 *paddings_back, odla_value_shape output_dims, const odla_value_id value_id);

/* Where odla_ExtMaxPool with the same arguments finds each maximum (ONNX MaxPool's Indices):
 * an ODLA_INT64 tensor of the output's shape holding flat positions in the input tensor, batch
 * and channel included, padding not. With column_major the spatial axes count in reverse
 * order (ONNX storage_order = 1). Ties keep the first position in row-major order. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtMaxPoolIndices(
    odla_value input, odla_memory_layout input_layout, const odla_uint32 *window_dims,
    const odla_uint32 *strides, const odla_uint32 *dilations, const odla_uint32 *paddings_front,
    const odla_uint32 *paddings_back, odla_bool column_major, odla_value_shape output_dims,
    const odla_value_id value_id);

/* odla_AveragePool with dilations (windows as odla_ExtMaxPool's). With padding_included the
 * divisor counts the window's taps inside the padded input, else those inside the input. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtAveragePool(
    odla_value input, odla_memory_layout input_layout, const odla_uint32 *window_dims,
    const odla_uint32 *strides, const odla_uint32 *dilations, const odla_uint32 *paddings_front,
    const odla_uint32 *paddings_back, odla_bool padding_included, odla_value_shape output_dims,
    const odla_value_id value_id);

/* Lp pooling: (sum over the window of |x|^p)^(1/p), p > 0, windows as odla_ExtMaxPool's;
 * padded cells add nothing. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtLpPool(
    odla_value input, odla_memory_layout input_layout, odla_float32 p,
    const odla_uint32 *window_dims, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
    odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX Col2Im: rearranges the columns of input [N, C * prod(block), L] into an image
 * [N, C, image...] of output_dims (1 to 3 image axes), summing where blocks overlap (the
 * inverse of im2col). image_shape and block_shape are int64 vectors, one entry per image axis,
 * read when the computation runs: image_shape must equal output_dims' image axes and L the
 * number of block positions, else execution fails with ODLA_INVALID_PARAM. Arrays have one
 * entry per image axis; NULL means dilation and stride 1, no padding. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtCol2Im(
    odla_value input, odla_value image_shape, odla_value block_shape, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, const odla_uint32 *strides,
    odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX DeformConv (opset 19): odla_Conv's windows (channels first, OIHW kernel, groups, strides,
 * dilations, paddings; one entry per spatial axis, 1 to 3 of them; NULL means 1 or 0) over input
 * [N, C, D1, ..., Dr], where tap t of the window at output position o of channel c reads the input
 * at its Conv position plus offset[n, (g * K + t) * r + a, o] along axis a (g = c / (C /
 * offset_group), K the kernel's taps in row-major order), interpolated linearly along every axis
 * with zeros outside the input, and is scaled by mask[n, g * K + t, o] when mask is not NULL.
 * bias [M] is optional. All operands share a float type; computed in double. The result is
 * output_dims [N, M, O1, ..., Or]: offset's dims after the channels must equal O. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtDeformConv(
    odla_value input, odla_value kernel, odla_value offset, odla_value bias, odla_value mask,
    odla_uint32 group, odla_uint32 offset_group, const odla_uint32 *strides,
    const odla_uint32 *dilations, const odla_uint32 *paddings_front,
    const odla_uint32 *paddings_back, odla_value_shape output_dims, const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_NN_H_ */
