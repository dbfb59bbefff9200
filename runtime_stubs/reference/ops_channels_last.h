/* ops_channels_last.h: the channels-last (NHWC) paths of convolution and pooling in the
 * reference backend (ops_channels_last.c). odla_Conv and the pooling builders hand a
 * ODLA_CHANNELS_LAST input to these; everything else about the ops (semantics, rounding,
 * errors) is as in ops_conv.c and ops_pool.c. The shape helpers also serve the channels-last
 * odla_ExtQLinearConv (ops_quant_int.c). */
#ifndef ODLA_REFERENCE_OPS_CHANNELS_LAST_H_
#define ODLA_REFERENCE_OPS_CHANNELS_LAST_H_

#include "ops_nn.h"

/* [N, spatial..., C] -> the channels-first view [N, C, spatial...] that ref_make_window
 * reads (shapes of rank < 3 unchanged). */
odla_value_shape ref_cl_as_channels_first(const odla_value_shape *s);
/* Fills the spatial dims of a channels-last `out` (rank `rank`) from a window. */
void ref_cl_out_dims(const ref_window *w, int rank, odla_value_shape *out);

/* odla_Conv with data [N, spatial..., C] and an ODLA_SIO kernel [spatial..., C / group, M];
 * the result is [N, out..., M]. float32. */
odla_value ref_conv_channels_last(odla_value input, odla_uint32 group, odla_value kernel,
                                  odla_memory_layout kernel_layout, const odla_uint32 *strides,
                                  const odla_uint32 *dilations, const odla_uint32 *pad_front,
                                  const odla_uint32 *pad_back, odla_value bias,
                                  odla_value_shape output_dims, odla_value_id id);

/* Max (is_max) or average pooling of data [N, spatial..., C]; NULL dilations mean 1. float32.
 */
odla_value ref_pool_channels_last(const char *op, int is_max, odla_value input,
                                  const odla_uint32 *window_dims, const odla_uint32 *strides,
                                  const odla_uint32 *dilations, const odla_uint32 *pad_front,
                                  const odla_uint32 *pad_back, int include_pad,
                                  const odla_value_shape *output_dims, odla_value_id id);

#endif /* ODLA_REFERENCE_OPS_CHANNELS_LAST_H_ */
