/* odla_ext_unary.h: odlac's extension ops of the unary family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_UNARY_H_
#define _ODLA_EXT_UNARY_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How conversions to ODLA_EXT_FLOAT8E8M0, a power of two, round (ONNX Cast's round_mode): up,
 * away from zero; down, toward zero; nearest, halfway cases away from zero. */
#define ODLA_EXT_ROUND_UP 0
#define ODLA_EXT_ROUND_DOWN 1
#define ODLA_EXT_ROUND_NEAREST 2

/* odla_Cast with ONNX Cast's saturate (opset 19) and round_mode (opset 24), which apply to
 * conversions to the 8-bit floats (odla_ext_types.h) only. With saturate, a value beyond the
 * target's largest finite one, an infinity included, becomes that one with its sign; without,
 * it becomes infinity (FLOAT8E5M2) or NaN. odla_Cast behaves as saturate with
 * ODLA_EXT_ROUND_UP. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtCast(odla_value input,
                                                             odla_element_type target_type,
                                                             odla_bool saturate,
                                                             odla_int32 round_mode,
                                                             const odla_value_id value_id);

/* The bitwise complement of an integer tensor (ODLA 0.5's odla_Not is logical). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitwiseNot(odla_value input,
                                                                   const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_UNARY_H_ */
