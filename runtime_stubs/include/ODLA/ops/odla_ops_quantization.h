// ODLA 0.5 quantization ops, and the per-value quantization table entry.

#ifndef _ODLA_OPERATOR_OPS_QUANTIZATION_H_
#define _ODLA_OPERATOR_OPS_QUANTIZATION_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// One entry of a quantization table: scale, offset and observed range of the
// value named value_id (ch_idx: the channel the entry applies to). With weight
// quantization, generated code emits an extern const array of these and an
// extern const int holding its size.
typedef struct {
  odla_value_id value_id;
  int ch_idx;
  odla_float32 scale;
  odla_float32 offset;
  odla_float32 min;
  odla_float32 max;
} odla_value_quant_info;

// scale and zero_point are values (scalars, or one entry per slice along axis
// for per-axis quantization); target_data_type is the result element type.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Dequantize(odla_value input, odla_value scale,
                                                                odla_value zero_point,
                                                                odla_int32 axis,
                                                                odla_element_type target_data_type,
                                                                const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Quantize(odla_value input, odla_value scale,
                                                              odla_value zero_point,
                                                              odla_int32 axis,
                                                              odla_element_type target_data_type,
                                                              const odla_value_id value_id);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_QUANTIZATION_H_
