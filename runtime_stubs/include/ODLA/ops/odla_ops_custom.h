// ODLA 0.5 custom op: a framework-specific op the backend resolves by name.

#ifndef _ODLA_OPERATOR_OPS_CUSTOM_H_
#define _ODLA_OPERATOR_OPS_CUSTOM_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// op_name and function_name select the implementation; the variadic tail holds
// the op's attributes, in an order agreed between the emitter and the backend.
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_CustomOp(odla_values inputs,
                                                               const odla_char *op_name,
                                                               const odla_char *function_name,
                                                               const odla_value_ids ids, ...);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_CUSTOM_H_
