/* odla_ext_normalization.h: odlac's extension ops of the normalization family (beyond ODLA 0.5).
 * Included by odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_NORMALIZATION_H_
#define _ODLA_EXT_NORMALIZATION_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_NORMALIZATION_H_ */
