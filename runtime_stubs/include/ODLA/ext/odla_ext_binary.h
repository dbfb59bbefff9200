/* odla_ext_binary.h: odlac's extension ops of the binary family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_BINARY_H_
#define _ODLA_EXT_BINARY_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bitwise and, or and xor of two integer tensors of one element type, broadcast
 * numpy-style (ODLA 0.5's odla_And, odla_Or and odla_Xor are logical, on booleans); the
 * result has the operands' type. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitwiseAnd(odla_value lhs, odla_value rhs,
                                                                   const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitwiseOr(odla_value lhs, odla_value rhs,
                                                                  const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitwiseXor(odla_value lhs, odla_value rhs,
                                                                   const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_BINARY_H_ */
