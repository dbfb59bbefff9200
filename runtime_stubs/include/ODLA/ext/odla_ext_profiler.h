/* odla_ext_profiler.h: reading ODLA 0.5 device traces (beyond ODLA 0.5). Included by
 * odla_ext.h.
 *
 * ODLA 0.5 can start and stop a device's profiler and retrieve its trace
 * (odla_profiler.h), but gives no way to read what a trace holds. A trace here is a list of
 * entries, one per node of a profiled computation (the backend's nodes, in execution order:
 * a fused op is one node, a layout conversion a backend inserts is a node of its own),
 * accumulated over every execution that ran while the device's profiler was on. Entry
 * strings belong to the trace and stay valid until odla_ReleaseDeviceTrace. */
#ifndef _ODLA_EXT_PROFILER_H_
#define _ODLA_EXT_PROFILER_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_compute.h>
#include <ODLA/odla_profiler.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* odla_SetDeviceTraceItem item: a label (the variadic value is one const odla_char *,
 * copied) that odla_ExtWriteDeviceTrace writes with the trace. */
#define ODLA_EXT_TRACE_ITEM_LABEL ((odla_device_trace_item)1)

/* One node's figures. */
typedef struct {
  /* The op: the ODLA builder that made the node, without "odla_" ("Conv", "ExtConv"), followed
   * by the engine that runs it in parentheses when that is not the reference kernel
   * ("Conv(dnnl)", "Reorder(dnnl)"). */
  const odla_char *op;
  odla_int32 num_results;
  const odla_value_id *result_ids; /* the node's results, num_results of them */
  /* The computation (NULL once it is destroyed) and the node's index in its execution
   * order. */
  odla_computation computation;
  odla_int32 node;
  odla_uint64 calls;    /* how many times the node ran */
  odla_uint64 total_ns; /* time in the node over all calls, in nanoseconds */
  odla_uint64 min_ns;   /* the fastest call */
  odla_uint64 flops;    /* floating-point operations of one call; 0 where not known */
} odla_ext_trace_entry;

/* The number of entries in a trace. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ExtGetDeviceTraceNumEntries(odla_device_trace device_trace, odla_int32 *num_entries);
/* Entry `index` (0 <= index < the number of entries). */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetDeviceTraceEntry(
    odla_device_trace device_trace, odla_int32 index, odla_ext_trace_entry *entry);
/* Writes the trace as JSON to `path`: {"label": ..., "entries": [{"op", "results", "node",
 * "calls", "total_ns", "min_ns", "flops"}, ...]}. ODLA_FILE_NOT_EXIST when the file cannot
 * be written. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ExtWriteDeviceTrace(odla_device_trace device_trace, const odla_char *path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_PROFILER_H_ */
