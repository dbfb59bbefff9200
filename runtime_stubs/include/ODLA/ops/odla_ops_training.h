// ODLA 0.5 training ops: none are declared in 0.5; the header exists so the set of files matches.

#ifndef _ODLA_OPERATOR_OPS_TRAINING_H_
#define _ODLA_OPERATOR_OPS_TRAINING_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_TRAINING_H_
