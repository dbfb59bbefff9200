// ODLA 0.5: umbrella header; include this to get the whole core API.
//
// The core API is exactly the ODLA 0.5 interface listed in
// tests/odla_api/API-0.5.md, and generated code for the core profile uses
// nothing else. odlac's extensions are declared in a separate header, which
// this one does not include.

#ifndef _ODLA_H_
#define _ODLA_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_compute.h>
#include <ODLA/odla_device.h>
#include <ODLA/odla_log.h>
#include <ODLA/odla_memory.h>
#include <ODLA/odla_ops.h>
#include <ODLA/odla_profiler.h>
#include <ODLA/odla_task.h>
#include <ODLA/odla_value.h>
#include <ODLA/odla_version.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_H_
