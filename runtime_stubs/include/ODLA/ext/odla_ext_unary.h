/* odla_ext_unary.h: odlac's extension ops of the unary family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_UNARY_H_
#define _ODLA_EXT_UNARY_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bitwise complement of an integer tensor (ODLA 0.5's odla_Not is logical). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitwiseNot(odla_value input,
                                                                   const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_UNARY_H_ */
