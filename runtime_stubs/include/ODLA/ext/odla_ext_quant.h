/* odla_ext_quant.h: odlac's extension ops of the quant family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_QUANT_H_
#define _ODLA_EXT_QUANT_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_QUANT_H_ */
