// ODLA 0.5 tasks: a function over values run on a device, synchronously or through an executor.
//
// Generated code may use tasks for split sub-functions (HALO's -fiss-function
// emits odla_RunTaskAsync). Few backends implement these three functions:
// check the backend's capability manifest before relying on them.

#ifndef _ODLA_TASK_H_
#define _ODLA_TASK_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_device.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// A unit of work: func is called with the device and the task's values. func
// returns void here even though HALO's sub-functions return int.
typedef struct {
  void (*func)(odla_device, odla_values inputs, odla_values outputs);
  odla_values inputs;
  odla_values outputs;
} odla_task;

// An executor decides where and when a task runs: it receives the runner to
// call (e.g. odla_RunTask), the device and the task.
typedef odla_status (*odla_async_executor)(odla_status (*)(odla_device, odla_task), odla_device,
                                           odla_task);

// Installs the executor used by odla_RunTaskAsync. Declared without the export
// and calling-convention macros, as in the standard.
extern odla_status odla_SetAsyncExecutor(odla_async_executor executor);

// Runs a task now, or hands it to the installed executor.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_RunTask(odla_device device, odla_task task);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_RunTaskAsync(odla_device device,
                                                                   odla_task task);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_TASK_H_
