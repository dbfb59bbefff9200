// ODLA 0.5 operators: umbrella header that includes every ops/ header.

#ifndef _ODLA_OPS_H_
#define _ODLA_OPS_H_

#include <ODLA/ops/odla_ops_basic.h>
#include <ODLA/ops/odla_ops_control_flow.h>
#include <ODLA/ops/odla_ops_custom.h>
#include <ODLA/ops/odla_ops_math.h>
#include <ODLA/ops/odla_ops_nn.h>
#include <ODLA/ops/odla_ops_process.h>
#include <ODLA/ops/odla_ops_quantization.h>
#include <ODLA/ops/odla_ops_training.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPS_H_
