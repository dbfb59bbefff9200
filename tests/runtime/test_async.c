/* test_async.c: asynchronous execution of an ODLA backend through the ODLA headers only.
 * Eight contexts run one compiled computation at the same time, half through
 * odla_AsyncExecuteComputation and half through odla_AsyncLaunchExecutable; every output must
 * match plain C loops written here and every context's ODLA_ASYNC_CALLBACK_FUNC must fire
 * exactly once, with ODLA_SUCCESS and its own ODLA_ASYNC_CALLBACK_ARG. Then odla_RunTask,
 * odla_RunTaskAsync (on the backend's thread, and through an odla_SetAsyncExecutor executor).
 * The test waits at most 60 s for callbacks: a lost one fails it instead of hanging. */
#define _POSIX_C_SOURCE 200809L
#include <ODLA/odla.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { B = 16, K = 256, N = 128, CONTEXTS = 8 };

#include "check.h"

static float w[K * N], bias[N], x[CONTEXTS][B * K], y[CONTEXTS][B * N];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fired = PTHREAD_COND_INITIALIZER;
static int calls[CONTEXTS], total_calls;
static odla_status statuses[CONTEXTS];

static int on_done(void *arg, odla_status status) {
  int i = (int)(intptr_t)arg;
  pthread_mutex_lock(&lock);
  ++calls[i];
  ++total_calls;
  statuses[i] = status;
  pthread_cond_broadcast(&fired);
  pthread_mutex_unlock(&lock);
  return 0;
}

/* Waits until `*count` reaches `want` or 60 s pass; returns whether it did. */
static int wait_for(const int *count, int want) {
  struct timespec until;
  int ok;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  pthread_mutex_lock(&lock);
  while (*count < want)
    if (pthread_cond_timedwait(&fired, &lock, &until) != 0)
      break;
  ok = *count >= want;
  pthread_mutex_unlock(&lock);
  return ok;
}

static odla_value_type type2(int64_t d0, int64_t d1) {
  odla_value_type t;
  memset(&t, 0, sizeof t);
  t.element_type = ODLA_FLOAT32;
  t.shape.size = 2;
  t.shape.dims[0] = d0;
  t.shape.dims[1] = d1;
  return t;
}

static int task_runs;
static int executor_calls;

static void task_func(odla_device device, odla_values inputs, odla_values outputs) {
  (void)device;
  (void)outputs;
  pthread_mutex_lock(&lock);
  task_runs += (int)inputs.size + 1;
  pthread_cond_broadcast(&fired);
  pthread_mutex_unlock(&lock);
}

static odla_status executor(odla_status (*runner)(odla_device, odla_task), odla_device device,
                            odla_task task) {
  ++executor_calls;
  return runner(device, task);
}

int main(void) {
  odla_computation comp;
  odla_executable exe;
  odla_context ctx[CONTEXTS];
  odla_value_type bt;
  odla_value out;
  odla_task task;
  int i, j, k, c;
  for (k = 0; k < K * N; ++k)
    w[k] = (float)((k * 29) % 17) / 8.0f - 1.0f;
  for (j = 0; j < N; ++j)
    bias[j] = 0.01f * (float)j - 0.5f;
  for (c = 0; c < CONTEXTS; ++c)
    for (k = 0; k < B * K; ++k)
      x[c][k] = (float)(((k + 7 * c) * 31) % 23) / 11.0f - 1.0f;

  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  memset(&bt, 0, sizeof bt);
  bt.element_type = ODLA_FLOAT32;
  bt.shape.size = 1;
  bt.shape.dims[0] = N;
  out = odla_Relu(
      odla_Add(odla_Gemm(odla_CreateArgument(type2(B, K), (const odla_value_id) "x"), 0,
                         odla_CreateConstant(type2(K, N), w, (const odla_value_id) "w"), 0, 1.0f,
                         0.0f, NULL, type2(B, N).shape, (const odla_value_id) "xw"),
               odla_CreateConstant(bt, bias, (const odla_value_id) "b"), (const odla_value_id) "h"),
      (const odla_value_id) "y");
  CHECK(out && odla_SetValueAsOutput(out) == ODLA_SUCCESS, "building the graph");
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "CompileComputation");

  for (c = 0; c < CONTEXTS; ++c) {
    CHECK(odla_CreateContext(&ctx[c]) == ODLA_SUCCESS, "CreateContext");
    odla_SetContextItem(ctx[c], ODLA_ASYNC_CALLBACK_FUNC, (odla_item_value)(uintptr_t)on_done);
    odla_SetContextItem(ctx[c], ODLA_ASYNC_CALLBACK_ARG, (odla_item_value)(intptr_t)c);
    odla_BindToArgumentById((const odla_value_id) "x", x[c], ctx[c]);
    odla_BindToOutputById((const odla_value_id) "y", y[c], ctx[c]);
  }
  for (c = 0; c < CONTEXTS; ++c) {
    odla_status s =
        c % 2 ? odla_AsyncLaunchExecutable(exe, NULL, ctx[c], ODLA_COMPUTE_INFERENCE, NULL)
              : odla_AsyncExecuteComputation(comp, ctx[c], ODLA_COMPUTE_INFERENCE, NULL);
    CHECK(s == ODLA_SUCCESS, "starting context %d: status %d", c, (int)s);
  }
  CHECK(wait_for(&total_calls, CONTEXTS), "only %d of %d callbacks within 60 s", total_calls,
        CONTEXTS);
  {
    struct timespec pause = {0, 100000000}; /* a late second callback would show now */
    nanosleep(&pause, NULL);
  }
  pthread_mutex_lock(&lock);
  for (c = 0; c < CONTEXTS; ++c) {
    CHECK(calls[c] == 1, "context %d: callback fired %d times", c, calls[c]);
    CHECK(statuses[c] == ODLA_SUCCESS, "context %d: status %d", c, (int)statuses[c]);
  }
  pthread_mutex_unlock(&lock);
  for (c = 0; c < CONTEXTS; ++c)
    for (i = 0; i < B; ++i)
      for (j = 0; j < N; ++j) {
        double h = bias[j];
        float want;
        for (k = 0; k < K; ++k)
          h += (double)x[c][i * K + k] * w[k * N + j];
        want = (float)(h > 0 ? h : 0);
        if (fabsf(y[c][i * N + j] - want) > 1e-4f * (1 + fabsf(want))) {
          CHECK(0, "context %d y[%d,%d] = %.7g, plain C says %.7g", c, i, j, y[c][i * N + j], want);
          i = B;
          break;
        }
      }

  /* Tasks. */
  memset(&task, 0, sizeof task);
  task.func = task_func;
  task.inputs.size = 2;
  CHECK(odla_RunTask(NULL, task) == ODLA_SUCCESS && task_runs == 3, "RunTask");
  CHECK(odla_RunTaskAsync(NULL, task) == ODLA_SUCCESS, "RunTaskAsync");
  CHECK(wait_for(&task_runs, 6), "RunTaskAsync's task did not run within 60 s");
  CHECK(odla_SetAsyncExecutor(executor) == ODLA_SUCCESS, "SetAsyncExecutor");
  CHECK(odla_RunTaskAsync(NULL, task) == ODLA_SUCCESS && executor_calls == 1 && task_runs == 9,
        "RunTaskAsync through the executor");
  odla_SetAsyncExecutor(NULL);
  task.func = NULL;
  CHECK(odla_RunTask(NULL, task) == ODLA_INVALID_PARAM, "a task without a function");

  for (c = 0; c < CONTEXTS; ++c)
    odla_DestroyContext(ctx[c]);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  if (failures == 0)
    printf("async: %d concurrent contexts, every callback once, outputs match plain C\n", CONTEXTS);
  return failures ? 1 : 0;
}
