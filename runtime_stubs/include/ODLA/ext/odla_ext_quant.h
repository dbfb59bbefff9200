/* odla_ext_quant.h: odlac's extension ops of the quant family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_QUANT_H_
#define _ODLA_EXT_QUANT_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>
#include <ODLA/ops/odla_ops_nn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* odla_Quantize and odla_Dequantize with what ONNX QuantizeLinear and DequantizeLinear add
 * from opset 19 on:
 *   - blocked parameters: with block_size > 0, scale and zero_point have input's rank and
 *     shape except along axis, where their extent is ceil(dims[axis] / block_size); each entry
 *     covers block_size consecutive elements along axis. 0: per tensor or per axis, as the core
 *     ops.
 *   - the quantized types of odla_ext_types.h besides the core ops' integers (not FLOAT8E8M0):
 *     the 4- and 2-bit integers round and saturate as the others; quantizing to the 8-bit floats
 *     converts x / scale as odla_ExtCast does with `saturate` (zero_point is not added, as in
 *     ONNX's reference), to FLOAT4E2M1 x / scale + zero_point, saturated. Dequantizing them
 *     reads their value; a zero_point of a float type is not subtracted.
 * Dequantize's target_data_type is a float type (float32, float16, bfloat16, float64). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtQuantize(odla_value input, odla_value scale, odla_value zero_point, odla_int32 axis,
                 odla_int32 block_size, odla_element_type target_data_type, odla_bool saturate,
                 const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtDequantize(
    odla_value input, odla_value scale, odla_value zero_point, odla_int32 axis,
    odla_int32 block_size, odla_element_type target_data_type, const odla_value_id value_id);

/* ---- Integer-only quantized products ------------------------------------------------------
 * The convolution and matrix product of quantized operands, computed in integers as gemmlowp
 * and TFLite's integer-only scheme do, with exact rounding:
 *   acc = bias[c] + sum (input - input_zero_point) * (kernel - kernel_zero_point[c])  (int32)
 *   y   = clamp(round_half_to_even(acc * multiplier[c] / 2^shift[c]) + output_zero_point,
 *               output_min, output_max)
 * where c is the output channel (the convolution's output feature, the product's column).
 * The real requantization factor input_scale * kernel_scale[c] / output_scale is
 * multiplier[c] / 2^shift[c]: multiplier in [0, 2^31), shift in [1, 62], so that
 * acc * multiplier is exact in 64 bits. output_min and output_max (within the output type's
 * range) are the fused activation's clamp in the quantized domain (Relu: the output zero point
 * and the type's maximum).
 *   - input and kernel: uint8 or int8; input_zero_point a scalar of input's type;
 *     kernel_zero_point a scalar or one entry per output channel, of kernel's type; both may
 *     be NULL (zero).
 *   - bias: int32, one entry per output channel, or NULL.
 *   - multiplier, shift: int32, a scalar or one entry per output channel.
 *   - output_zero_point: a scalar uint8 or int8; the result has its element type.
 * Without requantization (multiplier, shift and output_zero_point all NULL) the result is acc
 * itself, int32 (ONNX's MatMulInteger and ConvInteger); output_min and output_max are then not
 * read.
 * The caller guarantees that acc fits in int32 (odlac checks the sum's bound). */

/* odla_Conv's geometry over quantized operands (input_layout and kernel_layout as odla_Conv's;
 * the kernel's output channels are its first (ODLA_OIS) or last (ODLA_SIO) axis). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtQLinearConv(
    odla_value input, odla_value input_zero_point, odla_memory_layout input_layout,
    odla_uint32 group, odla_value kernel, odla_value kernel_zero_point,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value multiplier, odla_value shift, odla_value output_zero_point, odla_int32 output_min,
    odla_int32 output_max, odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX MatMul's product over quantized operands: input [..., M, K] times kernel [..., K, N],
 * the batch axes broadcast; the output channel is the column (N). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtQLinearMatMul(
    odla_value input, odla_value input_zero_point, odla_value kernel, odla_value kernel_zero_point,
    odla_value bias, odla_value multiplier, odla_value shift, odla_value output_zero_point,
    odla_int32 output_min, odla_int32 output_max, odla_value_shape output_dims,
    const odla_value_id value_id);

/* ---- Integer-only quantized Add and Mul ----------------------------------------------------
 * The elementwise sum and product of quantized operands (ONNX Runtime's QLinearAdd and
 * QLinearMul, a QDQ model's DequantizeLinear -> Add | Mul -> QuantizeLinear), computed in
 * integers with one exact rounding:
 *   Add: y = clamp(round_half_to_even(((a - a_zero_point) * a_multiplier +
 *                                      (b - b_zero_point) * b_multiplier) / 2^shift)
 *                  + output_zero_point, output_min, output_max)
 *   Mul: y = clamp(round_half_to_even((a - a_zero_point) * (b - b_zero_point) * multiplier /
 *                                     2^shift) + output_zero_point, output_min, output_max)
 * The real factors are a_multiplier / 2^shift = a_scale / output_scale and b_multiplier /
 * 2^shift = b_scale / output_scale (Add), multiplier / 2^shift = a_scale * b_scale /
 * output_scale (Mul): multipliers in [0, 2^31), shift in [1, 62]. a and b are uint8 or int8
 * (each its own), broadcast numpy-style; a_zero_point and b_zero_point constant scalars of
 * their operand's type, or NULL (zero); output_zero_point a constant scalar uint8 or int8,
 * whose type the result has; output_min and output_max the fused activation's clamp, as for
 * the products. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtQLinearAdd(odla_value a, odla_value a_zero_point, odla_int32 a_multiplier, odla_value b,
                   odla_value b_zero_point, odla_int32 b_multiplier, odla_int32 shift,
                   odla_value output_zero_point, odla_int32 output_min, odla_int32 output_max,
                   odla_value_shape output_dims, const odla_value_id value_id);

extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtQLinearMul(
    odla_value a, odla_value a_zero_point, odla_value b, odla_value b_zero_point,
    odla_int32 multiplier, odla_int32 shift, odla_value output_zero_point, odla_int32 output_min,
    odla_int32 output_max, odla_value_shape output_dims, const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_QUANT_H_ */
