/* odla_ext_fused.h: fused ops that odlac's optimizer forms (beyond ODLA 0.5): a convolution or
 * matrix product followed by a residual addition and an activation, computed while the
 * product's result is still in cache. Included by odla_ext.h. A backend without them gets
 * the same computation as separate core ODLA calls. */
#ifndef _ODLA_EXT_FUSED_H_
#define _ODLA_EXT_FUSED_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>
#include <ODLA/ops/odla_ops_nn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The activation applied last: y = act(product + residual). alpha and beta are its
 * parameters: LeakyRelu slope (alpha), Clamp bounds [alpha, beta]. */
typedef enum {
  ODLA_EXT_FUSED_NONE,
  ODLA_EXT_FUSED_RELU,
  ODLA_EXT_FUSED_CLAMP,
  ODLA_EXT_FUSED_SIGMOID,
  ODLA_EXT_FUSED_TANH,
  ODLA_EXT_FUSED_LEAKY_RELU,
  ODLA_EXT_FUSED_HARD_SWISH, /* x * clamp(x / 6 + 1/2, 0, 1) */
  ODLA_EXT_FUSED_SWISH,      /* x * sigmoid(x) */
  ODLA_EXT_FUSED_GELU,       /* x * (1 + erf(x / sqrt(2))) / 2 */
} odla_ext_fused_activation;

/* odla_Conv's computation, then + residual (optional, same shape as the result), then the
 * activation. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtConv(
    odla_value input, odla_memory_layout input_layout, odla_uint32 group, odla_value kernel,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value residual, odla_ext_fused_activation activation, odla_float32 alpha,
    odla_float32 beta, odla_value_shape output_dims, const odla_value_id value_id);

/* odla_Gemm's computation (C optional), then + residual (optional), then the activation. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtGemm(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
             odla_float32 alpha, odla_float32 beta, odla_value C, odla_value residual,
             odla_ext_fused_activation activation, odla_float32 act_alpha, odla_float32 act_beta,
             odla_value_shape output_dims, const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_FUSED_H_ */
