// ODLA 0.5 profiler: device traces and starting/stopping device profiling.

#ifndef _ODLA_PROFILER_H_
#define _ODLA_PROFILER_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_device.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _odla_device_trace *odla_device_trace;
typedef struct _odla_device_trace_item *odla_device_trace_item;

// Trace objects; the variadic tail of odla_SetDeviceTraceItem holds the item's
// value(s), interpreted according to the item.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_CreateDeviceTrace(odla_device_trace *device_trace);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetDeviceTraceItem(
    odla_device_trace device_trace, odla_device_trace_item device_trace_item, ...);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ReleaseDeviceTrace(odla_device_trace device_trace);

// Profiling sessions on a device; collect the result with
// odla_RetrieveDeviceTrace after stopping.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_StartDeviceProfiler(odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AsyncStartDeviceProfiler(odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_StopDeviceProfiler(odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AsyncStopDeviceProfiler(odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_RetrieveDeviceTrace(odla_device device, odla_device_trace *device_trace);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_PROFILER_H_
