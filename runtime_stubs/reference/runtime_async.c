/* runtime_async.c: asynchronous execution and tasks of the reference backend.
 *
 * odla_AsyncExecuteComputation and odla_AsyncLaunchExecutable compile the computation (if it
 * is not yet) on the caller's thread (odla_AsyncLaunchExecutable also checks a constants
 * array, whose entries then replace the executable's constants for that run), then run it on
 * a new detached POSIX thread and call the context's ODLA_ASYNC_CALLBACK_FUNC item with
 * ODLA_ASYNC_CALLBACK_ARG and the status, once, from that thread. Several contexts may run
 * one compiled computation at the same time: execution only reads the computation, and each
 * context has its own arena and bindings. A context runs one execution at a time and must
 * outlive it (until its callback).
 * odla_RunTask calls the task's function; odla_RunTaskAsync hands it to the executor set with
 * odla_SetAsyncExecutor, or runs it on a new detached thread. Threads come from libc
 * (glibc has pthreads in libc); a build without them (ODLA_REFERENCE_NO_THREADS) refuses
 * these calls with ODLA_UNSUPPORTED_OP, unless an executor runs the tasks. This file also
 * takes the context items beyond the arena: the callback and ODLA_PROCESSOR_NUM. */
#include "ref.h"
#include "threads.h"

#ifndef ODLA_REFERENCE_NO_THREADS
#include <pthread.h>
#endif
#include <stdlib.h>

odla_status ref_set_context_item(odla_context context, odla_item_type type, odla_item_value value) {
  switch (type) {
  case ODLA_ASYNC_CALLBACK_FUNC:
    /* The item value is the callback itself (odla_compute.h). */
    context->async_callback = (int (*)(void *, odla_status))(uintptr_t)value;
    return ODLA_SUCCESS;
  case ODLA_ASYNC_CALLBACK_ARG:
    context->async_arg = (void *)value;
    return ODLA_SUCCESS;
  case ODLA_PROCESSOR_NUM: /* overrides the computation's (threads.h) */
    return ref_threads_item("SetContextItem", value, &context->threads);
  default:
    ref_report(ODLA_LOG_LEVEL_WARN, "SetContextItem", "item %d does not apply to this backend",
               (int)type);
    return ODLA_UNSUPPORTED_DATATYPE;
  }
}

typedef struct {
  odla_computation comp;
  odla_executable exe; /* launch this instead of comp when set */
  odla_context ctx;
  odla_compute_mode mode;
  odla_device device;
  const void **constants; /* a constants array's data per value (ref_constants_table), or NULL */
} ref_async_job;

#ifndef ODLA_REFERENCE_NO_THREADS
static void *ref_async_main(void *arg) {
  ref_async_job job = *(ref_async_job *)arg;
  odla_status s;
  ref_free(arg);
  job.ctx->constants = job.constants;
  s = job.exe ? odla_LaunchExecutable(job.exe, job.ctx)
              : odla_ExecuteComputation(job.comp, job.ctx, job.mode, job.device);
  job.ctx->constants = NULL;
  ref_free((void *)job.constants);
  if (job.ctx->async_callback)
    job.ctx->async_callback(job.ctx->async_arg, s);
  return NULL;
}
#endif

/* Starts `job` on a detached thread. */
static odla_status ref_start(const ref_async_job *job, const char *func) {
#ifdef ODLA_REFERENCE_NO_THREADS
  (void)job;
  ref_report(ODLA_LOG_LEVEL_ERROR, func,
             "this build of the backend has no threads (ODLA_REFERENCE_THREADS=OFF)");
  return ODLA_UNSUPPORTED_OP;
#else
  pthread_t thread;
  pthread_attr_t attr;
  ref_async_job *copy;
  odla_size_t bytes;
  odla_status s;
  int rc;
  /* Compiling writes the computation: do it here, before threads share it. */
  if ((s = odla_ExtGetArenaBytes(job->exe ? job->exe->comp : job->comp, &bytes)) != ODLA_SUCCESS)
    return s;
  if (!(copy = (ref_async_job *)ref_malloc(sizeof *copy)))
    return ODLA_MEM_ERROR;
  *copy = *job;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  rc = pthread_create(&thread, &attr, ref_async_main, copy);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    ref_free(copy);
    ref_report(ODLA_LOG_LEVEL_ERROR, func, "cannot start a thread (error %d)", rc);
    return ODLA_FAILURE;
  }
  return ODLA_SUCCESS;
#endif
}

odla_status odla_AsyncExecuteComputation(const odla_computation computation,
                                         const odla_context context, const odla_compute_mode mode,
                                         odla_device device) {
  ref_async_job job;
  if (!computation || !context)
    return ODLA_INVALID_PARAM;
  job.comp = computation;
  job.exe = NULL;
  job.ctx = context;
  job.mode = mode;
  job.device = device;
  job.constants = NULL;
  return ref_start(&job, "AsyncExecuteComputation");
}

odla_status odla_AsyncLaunchExecutable(const odla_executable executable,
                                       const odla_constants_array constants_array,
                                       const odla_context context, const odla_compute_mode mode,
                                       odla_device device) {
  ref_async_job job;
  odla_status s;
  if (!executable || !context)
    return ODLA_INVALID_PARAM;
  job.comp = NULL;
  job.exe = executable;
  job.ctx = context;
  job.mode = mode;
  job.device = device;
  job.constants = NULL;
  /* The array's entries replace the executable's constants of the same ids for this run
   * (executable_io.c checks them against the executable now, on the caller's thread). */
  if (constants_array &&
      (s = ref_constants_table(executable->comp, constants_array, &job.constants)) != ODLA_SUCCESS)
    return s;
  if ((s = ref_start(&job, "AsyncLaunchExecutable")) != ODLA_SUCCESS)
    ref_free((void *)job.constants);
  return s;
}

/* ---- Tasks -------------------------------------------------------------------------- */

static odla_async_executor ref_executor;

odla_status odla_SetAsyncExecutor(odla_async_executor executor) {
  ref_executor = executor;
  return ODLA_SUCCESS;
}

odla_status odla_RunTask(odla_device device, odla_task task) {
  if (!task.func)
    return ODLA_INVALID_PARAM;
  task.func(device, task.inputs, task.outputs);
  return ODLA_SUCCESS;
}

typedef struct {
  odla_device device;
  odla_task task;
} ref_task_job;

#ifndef ODLA_REFERENCE_NO_THREADS
static void *ref_task_main(void *arg) {
  ref_task_job job = *(ref_task_job *)arg;
  ref_free(arg);
  odla_RunTask(job.device, job.task);
  return NULL;
}
#endif

odla_status odla_RunTaskAsync(odla_device device, odla_task task) {
#ifdef ODLA_REFERENCE_NO_THREADS
  if (!task.func)
    return ODLA_INVALID_PARAM;
  if (ref_executor)
    return ref_executor(odla_RunTask, device, task);
  ref_report(ODLA_LOG_LEVEL_ERROR, "RunTaskAsync",
             "this build of the backend has no threads (ODLA_REFERENCE_THREADS=OFF): set an "
             "executor with odla_SetAsyncExecutor");
  return ODLA_UNSUPPORTED_OP;
#else
  pthread_t thread;
  pthread_attr_t attr;
  ref_task_job *job;
  int rc;
  if (!task.func)
    return ODLA_INVALID_PARAM;
  if (ref_executor)
    return ref_executor(odla_RunTask, device, task);
  if (!(job = (ref_task_job *)ref_malloc(sizeof *job)))
    return ODLA_MEM_ERROR;
  job->device = device;
  job->task = task;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  rc = pthread_create(&thread, &attr, ref_task_main, job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    ref_free(job);
    ref_report(ODLA_LOG_LEVEL_ERROR, "RunTaskAsync", "cannot start a thread (error %d)", rc);
    return ODLA_FAILURE;
  }
  return ODLA_SUCCESS;
#endif
}
