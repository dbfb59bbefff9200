// ODLA 0.5 basic ops: creating arguments, constants, values and variables.
//
// Like every op builder, these take no computation handle: they add to the
// calling thread's current computation (see odla_compute.h). value_id names
// the new value; generated code passes the tensor name as a C string cast to
// odla_value_id.

#ifndef _ODLA_OPERATOR_OPS_BASIC_H_
#define _ODLA_OPERATOR_OPS_BASIC_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// A graph input, bound per execution with odla_BindToArgument(ById).
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_CreateArgument(const odla_value_type value_type, const odla_value_id value_id);

// A value with storage but no data yet; interpret mode fills it with
// odla_SetValueData.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_CreateValue(const odla_value_type value_type,
                                                                 const odla_value_id value_id);

// A constant whose data is read from data_ptr (element type and shape from
// value_type, densely packed).
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_CreateConstant(
    const odla_value_type value_type, const odla_void *data_ptr, const odla_value_id value_id);

// Copies of an existing value, under a new id.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_CloneValue(const odla_value src_value,
                                                                const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_CloneValueById(const odla_value_id src_value_id, const odla_value_id value_id);

// A trainable variable (training mode).
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_CreateVariable(const odla_value_type value_type, const odla_value_id value_id);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_BASIC_H_
