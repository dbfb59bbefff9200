/* test_profiler.c: a backend's device profiler (ODLA 0.5's odla_profiler.h) read through
 * odla_ext_profiler.h, through the ODLA headers only. The graph is Conv -> Relu -> Reshape ->
 * Gemm with known FLOPs (conv_gemm_graph.h); the checks: each node's call count equals the
 * executions run while the profiler was on (none after it stopped, 8 threads x 5 executions in one
 * session), node times are positive and add up to no more than the executions' wall time,
 * FLOPs, result ids, and the JSON the trace writes. */
#define _POSIX_C_SOURCE 200809L
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "conv_gemm_graph.h"

enum { kThreads = 8, kRunsPerThread = 5 };

static odla_computation comp;

static odla_status run_once(void) {
  float out[10];
  odla_context ctx;
  odla_status s = odla_CreateContext(&ctx);
  if (s != ODLA_SUCCESS)
    return s;
  if ((s = odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx)) == ODLA_SUCCESS &&
      (s = odla_BindToOutputById((const odla_value_id) "out", out, ctx)) == ODLA_SUCCESS)
    s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL);
  odla_DestroyContext(ctx);
  return s;
}

static void *thread_main(void *arg) {
  int i;
  (void)arg;
  for (i = 0; i < kRunsPerThread; ++i)
    if (run_once() != ODLA_SUCCESS)
      return (void *)1;
  return NULL;
}

static unsigned long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Whether `op` is `builder`, or `builder` run by an engine: "Conv(dnnl)". */
static int op_is(const char *op, const char *builder) {
  size_t n = strlen(builder);
  return strncmp(op, builder, n) == 0 && (op[n] == '\0' || op[n] == '(');
}

/* The entry whose results include `id`, or -1. */
static int find_entry(odla_device_trace t, const char *id, odla_ext_trace_entry *e) {
  odla_int32 n = 0, i, k;
  odla_ExtGetDeviceTraceNumEntries(t, &n);
  for (i = 0; i < n; ++i) {
    odla_ExtGetDeviceTraceEntry(t, i, e);
    for (k = 0; k < e->num_results; ++k)
      if (strcmp((const char *)e->result_ids[k], id) == 0)
        return i;
  }
  return -1;
}

/* Checks that every entry ran `calls` times and that the nodes of the graph are there. */
static void check_trace(odla_device_trace t, unsigned long long calls, unsigned long long wall_ns) {
  odla_int32 n = 0, i;
  odla_ext_trace_entry e;
  unsigned long long total = 0;
  CHECK(odla_ExtGetDeviceTraceNumEntries(t, &n) == ODLA_SUCCESS && n >= 3,
        "entries: %d, want Conv, Relu, Gemm at least", (int)n);
  for (i = 0; i < n; ++i) {
    CHECK(odla_ExtGetDeviceTraceEntry(t, i, &e) == ODLA_SUCCESS, "entry %d", (int)i);
    CHECK(e.calls == calls, "entry %d (%s): %llu calls, want %llu", (int)i, e.op,
          (unsigned long long)e.calls, calls);
    CHECK(e.total_ns > 0 && e.min_ns > 0 && e.min_ns * e.calls <= e.total_ns,
          "entry %d (%s): total %llu ns, fastest %llu ns", (int)i, e.op,
          (unsigned long long)e.total_ns, (unsigned long long)e.min_ns);
    CHECK(e.computation == comp && e.node >= 0, "entry %d: computation and node", (int)i);
    total += e.total_ns;
  }
  if (wall_ns)
    CHECK(total <= wall_ns, "node times %llu ns exceed the executions' %llu ns", total, wall_ns);
  CHECK(find_entry(t, "y", &e) >= 0 && op_is(e.op, "Conv") && e.flops == 7776,
        "Conv: op %s, flops %llu, want 7776", e.op, (unsigned long long)e.flops);
  CHECK(find_entry(t, "r", &e) >= 0 && op_is(e.op, "Relu") && e.flops == 0, "Relu");
  CHECK(find_entry(t, "out", &e) >= 0 && op_is(e.op, "Gemm") && e.flops == 2880,
        "Gemm: op %s, flops %llu, want 2880", e.op, (unsigned long long)e.flops);
  CHECK(odla_ExtGetDeviceTraceEntry(t, n, &e) == ODLA_INVALID_PARAM, "entry past the end");
}

/* The whole of a small file, or NULL. */
static char *slurp(const char *path) {
  static char buf[1 << 16];
  size_t n;
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

int main(int argc, char **argv) {
  odla_device_trace t = NULL;
  odla_device device = NULL;
  odla_executable exec = NULL;
  odla_ext_trace_entry e;
  pthread_t threads[kThreads];
  char path[512];
  const char *text;
  unsigned long long t0, wall;
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  CHECK(build_conv_gemm(&comp) == ODLA_SUCCESS, "building the graph");
  CHECK(odla_CompileComputation(comp, NULL, &exec) == ODLA_SUCCESS, "compile");

  /* Nothing profiled before a session starts; stopping a stopped profiler fails. */
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  CHECK(odla_StopDeviceProfiler(NULL) != ODLA_SUCCESS, "stop without start");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  CHECK(run_once() == ODLA_SUCCESS, "an execution before profiling");

  /* One session of 3 executions on the default device (an allocated device handle). */
  CHECK(odla_AllocateDevice(NULL, ODLA_DEVICE_DEFAULT, 0, &device) == ODLA_SUCCESS, "device");
  CHECK(odla_StartDeviceProfiler(device) == ODLA_SUCCESS, "start");
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  CHECK(odla_StartDeviceProfiler(NULL) != ODLA_SUCCESS, "starting a running profiler");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  t0 = now_ns();
  for (i = 0; i < 3; ++i)
    CHECK(run_once() == ODLA_SUCCESS, "execution %d", i);
  wall = now_ns() - t0;
  CHECK(odla_StopDeviceProfiler(device) == ODLA_SUCCESS, "stop");
  CHECK(run_once() == ODLA_SUCCESS, "an execution after profiling");
  CHECK(odla_RetrieveDeviceTrace(NULL, &t) == ODLA_SUCCESS && t, "retrieve");
  if (t) {
    check_trace(t, 3, wall);
    CHECK(odla_SetDeviceTraceItem(t, ODLA_EXT_TRACE_ITEM_LABEL, "three runs") == ODLA_SUCCESS,
          "label");
    snprintf(path, sizeof path, "%s/trace.json", argv[1]);
    CHECK(odla_ExtWriteDeviceTrace(t, path) == ODLA_SUCCESS, "write %s", path);
    text = slurp(path);
    CHECK(text && strstr(text, "\"label\": \"three runs\"") &&
              strstr(text, "\"results\": [\"y\"], ") && strstr(text, "\"calls\": 3, ") &&
              strstr(text, "\"flops\": 7776}") && !strstr(text, "\"calls\": 4"),
          "trace JSON:\n%s", text ? text : "(missing)");
    /* Names are any bytes an application gives: the JSON stays valid UTF-8 (invalid bytes as
     * U+FFFD, controls and direction overrides as \\uXXXX; json_string.h). */
    CHECK(odla_SetDeviceTraceItem(t, ODLA_EXT_TRACE_ITEM_LABEL,
                                  "a\xff\xc3(\x01\"\\\xc3\xa9\xe2\x80\xae\xed\xa0\x80\xf0\x9f") ==
              ODLA_SUCCESS,
          "a label of invalid UTF-8");
    CHECK(odla_ExtWriteDeviceTrace(t, path) == ODLA_SUCCESS, "write %s", path);
    text = slurp(path);
    CHECK(text && strstr(text, "\"label\": \"a\\ufffd\\ufffd(\\u0001\\\"\\\\\xc3\xa9\\u202e"
                               "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\""),
          "escaped label in:\n%s", text ? text : "(missing)");
    odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
    CHECK(odla_ExtWriteDeviceTrace(t, "/nonexistent-dir/trace.json") == ODLA_FILE_NOT_EXIST,
          "an unwritable path");
    odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  }

  /* A new session starts from zero; 8 threads run at once, each with its own contexts. */
  CHECK(odla_AsyncStartDeviceProfiler(NULL) == ODLA_SUCCESS, "async start");
  t0 = now_ns();
  for (i = 0; i < kThreads; ++i)
    CHECK(pthread_create(&threads[i], NULL, thread_main, NULL) == 0, "thread %d", i);
  for (i = 0; i < kThreads; ++i) {
    void *r = NULL;
    pthread_join(threads[i], &r);
    CHECK(r == NULL, "thread %d failed", i);
  }
  wall = (now_ns() - t0) * kThreads; /* node times add up over threads */
  CHECK(odla_AsyncStopDeviceProfiler(NULL) == ODLA_SUCCESS, "async stop");
  CHECK(odla_RetrieveDeviceTrace(NULL, &t) == ODLA_SUCCESS, "retrieve into the same trace");
  if (t)
    check_trace(t, kThreads * kRunsPerThread, wall);

  /* Entries outlive their computation, detached from it. */
  CHECK(odla_DestroyExecutable(exec) == ODLA_SUCCESS &&
            odla_DestroyComputation(comp) == ODLA_SUCCESS,
        "destroy");
  CHECK(odla_RetrieveDeviceTrace(NULL, &t) == ODLA_SUCCESS, "retrieve after destroy");
  if (t) {
    CHECK(find_entry(t, "y", &e) >= 0 && e.computation == NULL &&
              e.calls == kThreads * kRunsPerThread,
          "a destroyed computation's entry");
    odla_ReleaseDeviceTrace(t);
  }
  odla_DestroyDevice(device);
  return failures != 0;
}
