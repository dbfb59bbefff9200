/* profiler.c: libodla_profiler, an ODLA interposer that records per-op time and value ranges
 * for any ODLA backend.
 *
 * The library exports the whole ODLA API (the ODLA 0.5 headers and odla_ext.h). On first use
 * it loads the backend named by ODLA_PROFILER_BACKEND (a shared library path, opened with
 * RTLD_DEEPBIND so that the backend's calls to its own functions stay inside it) and
 * forwards every call to it: prof_forward.c, generated from the headers by gen_forwarders.py,
 * forwards all functions but the ones defined here. At exit it writes a JSON report to
 * ODLA_PROFILER_OUTPUT (default odla_profile.json):
 *   {"backend", "timing", "ranges", "computations": [{"index", "executions", "execution_ns",
 *     "nodes": [{"op", "results", "node", "calls", "total_ns", "min_ns", "flops"}...],
 *     "values": [{"id", "kind", "type", "shape", "min", "max", "executions"}...]}...]}
 *
 * Per-op time: the backend's device profiler (odla_StartDeviceProfiler on the default device,
 * read through odla_ext_profiler.h) runs from the first call to exit; a computation's entries
 * are read when it is destroyed, or at exit. A backend without those functions gets
 * whole-execution times only ("timing": "execution", with a warning on stderr).
 *
 * Value ranges (ODLA_PROFILER_RANGES=1; off by default): every op result built outside
 * control-flow regions is marked as an output before the computation is compiled, and bound
 * to a buffer of the profiler's at each synchronous execution, which then records min and
 * max over all executions of that result, of the arguments and of the caller's outputs.
 * Marking every result as an output keeps the backend from fusing ops or computing in place,
 * so times taken with ranges on are not the model's: take times and ranges in two runs.
 * Asynchronous executions are timed but give no ranges. */
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#include "profiler.h"
#include "json_string.h"
#include "prof_forward.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char *op;
  char **results;
  int num_results, node;
  unsigned long long calls, total_ns, min_ns, flops;
} prof_node;

enum { PROF_ARGUMENT, PROF_RESULT };

typedef struct {
  char *id;
  odla_value value;
  odla_value_type type;
  int kind;
  int user_output; /* the caller marked it as an output */
  int extra;       /* the profiler marked it as an output (ranges) */
  double min, max;
  unsigned long long executions; /* executions that gave its range */
} prof_value;

typedef struct prof_comp {
  odla_computation comp; /* NULL once destroyed */
  odla_executable exec;
  int index;
  int depth; /* control-flow regions open while building */
  int marked;
  prof_value *values;
  int num_values, cap_values;
  unsigned long long executions, execution_ns;
  prof_node *nodes;
  int num_nodes;
  struct prof_comp *next;
} prof_comp;

typedef struct prof_ctx {
  odla_context ctx;
  char **ids; /* the caller's bindings: value id -> buffer */
  void **data;
  int num, cap;
  void **extra; /* the profiler's output buffers, one per value of `for_comp` */
  prof_comp *for_comp;
  struct prof_ctx *next;
} prof_ctx;

static struct {
  pthread_once_t once;
  pthread_mutex_t mu;
  void *lib;
  const char *backend;
  const char *output;
  int ranges;
  int device_trace; /* per-op time from the backend's device profiler */
  prof_comp *comps, **last;
  int num_comps;
  prof_ctx *ctxs;
} prof = {
    PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, 0, 0, NULL, NULL, 0, NULL};

static __thread prof_comp *prof_current; /* the thread's current computation */

static unsigned long long prof_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static char *prof_strdup(const char *s) {
  char *d = (char *)malloc(strlen(s) + 1);
  if (d)
    strcpy(d, s);
  return d;
}

static void prof_write_report(void);

static void prof_load(void) {
  const char *ranges = getenv("ODLA_PROFILER_RANGES");
  prof.last = &prof.comps;
  prof.output = getenv("ODLA_PROFILER_OUTPUT");
  if (!prof.output || !*prof.output)
    prof.output = "odla_profile.json";
  prof.ranges = ranges && strcmp(ranges, "0") != 0 && *ranges;
  prof.backend = getenv("ODLA_PROFILER_BACKEND");
  if (!prof.backend || !*prof.backend) {
    fprintf(stderr, "odla_profiler: set ODLA_PROFILER_BACKEND to the ODLA backend to profile "
                    "(a shared library, e.g. /usr/lib/libodla_reference.so)\n");
    return;
  }
  prof.lib = dlopen(prof.backend, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!prof.lib) {
    fprintf(stderr, "odla_profiler: cannot load the backend: %s\n", dlerror());
    return;
  }
  prof_load_symbols(prof.lib);
  prof.device_trace = prof_real_odla_StartDeviceProfiler && prof_real_odla_StopDeviceProfiler &&
                      prof_real_odla_RetrieveDeviceTrace && prof_real_odla_ReleaseDeviceTrace &&
                      prof_real_odla_ExtGetDeviceTraceNumEntries &&
                      prof_real_odla_ExtGetDeviceTraceEntry &&
                      prof_real_odla_StartDeviceProfiler(NULL) == ODLA_SUCCESS;
  if (!prof.device_trace)
    fprintf(stderr,
            "odla_profiler: warning: %s has no device profiler (odla_StartDeviceProfiler "
            "and the odla_ext_profiler.h readers): recording whole-execution times "
            "only\n",
            prof.backend);
  atexit(prof_write_report); /* registered after the backend loaded: runs before its handlers */
}

int prof_loaded(void) {
  pthread_once(&prof.once, prof_load);
  return prof.lib != NULL;
}

int prof_missing(const char *fn) {
  fprintf(stderr, "odla_profiler: the backend %s has no %s\n", prof.backend, fn);
  return 0;
}

/* ---- computations, values and contexts (under prof.mu unless said otherwise) ------------ */

static prof_comp *prof_find(odla_computation comp, odla_executable exec) {
  prof_comp *c;
  for (c = prof.comps; c; c = c->next)
    if ((comp && c->comp == comp) || (exec && c->exec == exec))
      return c;
  return NULL;
}

static prof_ctx *prof_ctx_of(odla_context ctx, int make) {
  prof_ctx *c;
  for (c = prof.ctxs; c; c = c->next)
    if (c->ctx == ctx)
      return c;
  if (!make || !(c = (prof_ctx *)calloc(1, sizeof *c)))
    return NULL;
  c->ctx = ctx;
  c->next = prof.ctxs;
  prof.ctxs = c;
  return c;
}

static void prof_add_value(prof_comp *c, odla_value v, int kind) {
  odla_value_id id = NULL;
  prof_value *pv;
  if (c->num_values == c->cap_values) {
    int cap = c->cap_values ? 2 * c->cap_values : 64;
    prof_value *vs = (prof_value *)realloc(c->values, (size_t)cap * sizeof *vs);
    if (!vs)
      return;
    c->values = vs;
    c->cap_values = cap;
  }
  pv = &c->values[c->num_values];
  memset(pv, 0, sizeof *pv);
  if (prof_real_odla_GetValueId(v, &id) != ODLA_SUCCESS || !id ||
      prof_real_odla_GetValueType(v, &pv->type) != ODLA_SUCCESS ||
      !(pv->id = prof_strdup((const char *)id)))
    return;
  pv->value = v;
  pv->kind = kind;
  ++c->num_values;
}

void prof_note_value(const char *fn, odla_value v) {
  prof_comp *c = prof_current;
  int arg = strcmp(fn, "odla_CreateArgument") == 0;
  if (!v || !c || c->depth > 0 || (!arg && strncmp(fn, "odla_Create", 11) == 0))
    return; /* constants and other non-op values have no range to record */
  pthread_mutex_lock(&prof.mu);
  prof_add_value(c, v, arg ? PROF_ARGUMENT : PROF_RESULT);
  pthread_mutex_unlock(&prof.mu);
}

void prof_note_values(const char *fn, odla_values vs) {
  odla_size_t i;
  for (i = 0; i < vs.size && i < ODLA_MAX_OUTPUTS; ++i)
    prof_note_value(fn, vs.values[i]);
}

static prof_value *prof_value_by_id(prof_comp *c, const char *id) {
  int i;
  for (i = 0; c && i < c->num_values; ++i)
    if (strcmp(c->values[i].id, id) == 0)
      return &c->values[i];
  return NULL;
}

static size_t prof_elem_bytes(odla_element_type t) {
  switch (t) {
  case ODLA_INT8:
  case ODLA_UINT8:
  case ODLA_QINT8:
  case ODLA_QUINT8:
  case ODLA_BOOL:
    return 1;
  case ODLA_INT16:
  case ODLA_UINT16:
  case ODLA_QINT16:
  case ODLA_QUINT16:
  case ODLA_FLOAT16:
  case ODLA_BFLOAT16:
    return 2;
  case ODLA_INT32:
  case ODLA_UINT32:
  case ODLA_QINT32:
  case ODLA_QUINT32:
  case ODLA_FLOAT32:
    return 4;
  case ODLA_INT64:
  case ODLA_UINT64:
  case ODLA_QINT64:
  case ODLA_QUINT64:
  case ODLA_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

static size_t prof_count(const odla_value_type *t) {
  size_t n = 1;
  int i;
  for (i = 0; i < t->shape.size; ++i)
    n *= t->shape.dims[i] > 0 ? (size_t)t->shape.dims[i] : 0;
  return n;
}

static const char *prof_type_name(odla_element_type t) {
  static const char *const names[] = {
      "int8",    "int16",    "int32",   "int64",   "uint8",  "uint16",  "uint32",  "uint64",
      "qint8",   "qint16",   "qint32",  "qint64",  "quint8", "quint16", "quint32", "quint64",
      "float16", "bfloat16", "float32", "float64", "bool",   "string"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* Element i of `data` (type t) as a double; returns 0 for types without a range here. */
static int prof_load_elem(odla_element_type t, const void *data, size_t i, double *x) {
  switch (t) {
  case ODLA_FLOAT32:
    *x = ((const float *)data)[i];
    return 1;
  case ODLA_FLOAT64:
    *x = ((const double *)data)[i];
    return 1;
  case ODLA_INT8:
  case ODLA_QINT8:
    *x = ((const int8_t *)data)[i];
    return 1;
  case ODLA_UINT8:
  case ODLA_QUINT8:
  case ODLA_BOOL:
    *x = ((const uint8_t *)data)[i];
    return 1;
  case ODLA_INT16:
  case ODLA_QINT16:
    *x = ((const int16_t *)data)[i];
    return 1;
  case ODLA_UINT16:
  case ODLA_QUINT16:
    *x = ((const uint16_t *)data)[i];
    return 1;
  case ODLA_INT32:
  case ODLA_QINT32:
    *x = ((const int32_t *)data)[i];
    return 1;
  case ODLA_UINT32:
  case ODLA_QUINT32:
    *x = ((const uint32_t *)data)[i];
    return 1;
  case ODLA_INT64:
  case ODLA_QINT64:
    *x = (double)((const int64_t *)data)[i];
    return 1;
  case ODLA_UINT64:
  case ODLA_QUINT64:
    *x = (double)((const uint64_t *)data)[i];
    return 1;
  default:
    return 0;
  }
}

/* Adds the finite elements of `data` to v's range. */
static void prof_range(prof_value *v, const void *data) {
  size_t i, n = prof_count(&v->type);
  double x;
  int any = 0;
  for (i = 0; i < n && prof_load_elem(v->type.element_type, data, i, &x); ++i) {
    if (!isfinite(x))
      continue;
    if ((!v->executions && !any) || x < v->min)
      v->min = x;
    if ((!v->executions && !any) || x > v->max)
      v->max = x;
    any = 1;
  }
  v->executions += any;
}

/* Binds the profiler's buffers for the values it marked as outputs of c (ranges mode). */
static odla_status prof_bind_extra(prof_comp *c, odla_context ctx) {
  prof_ctx *pc = prof_ctx_of(ctx, 1);
  int i;
  if (!pc)
    return ODLA_MEM_ERROR;
  if (pc->for_comp != c) {
    for (i = 0; pc->for_comp && i < pc->for_comp->num_values; ++i)
      free(pc->extra[i]);
    free(pc->extra);
    pc->for_comp = NULL;
    if (!(pc->extra = (void **)calloc((size_t)c->num_values + 1, sizeof(void *))))
      return ODLA_MEM_ERROR;
    pc->for_comp = c;
    for (i = 0; i < c->num_values; ++i)
      if (c->values[i].extra) {
        size_t bytes =
            prof_count(&c->values[i].type) * prof_elem_bytes(c->values[i].type.element_type);
        if (!(pc->extra[i] = malloc(bytes ? bytes : 1)))
          return ODLA_MEM_ERROR;
      }
  }
  for (i = 0; i < c->num_values; ++i)
    if (c->values[i].extra) {
      odla_status s = prof_real_odla_BindToOutput(c->values[i].value, pc->extra[i], ctx);
      if (s != ODLA_SUCCESS)
        return s;
    }
  return ODLA_SUCCESS;
}

/* Records one synchronous execution of c on ctx that took `ns`. */
static void prof_after(prof_comp *c, odla_context ctx, odla_status s, unsigned long long ns) {
  prof_ctx *pc = prof_ctx_of(ctx, 0);
  int i, k;
  ++c->executions;
  c->execution_ns += ns;
  if (!prof.ranges || s != ODLA_SUCCESS || !pc)
    return;
  for (i = 0; i < c->num_values; ++i) {
    prof_value *v = &c->values[i];
    const void *data = NULL;
    if (v->extra && pc->for_comp == c)
      data = pc->extra[i];
    for (k = 0; !data && k < pc->num; ++k)
      if (strcmp(pc->ids[k], v->id) == 0)
        data = pc->data[k];
    if (data)
      prof_range(v, data);
  }
}

/* Copies c's entries from the backend's device trace (under prof.mu). */
static void prof_snapshot(prof_comp *c) {
  odla_device_trace t = NULL;
  odla_int32 n = 0, i;
  if (!prof.device_trace || !c->comp ||
      prof_real_odla_RetrieveDeviceTrace(NULL, &t) != ODLA_SUCCESS || !t)
    return;
  prof_real_odla_ExtGetDeviceTraceNumEntries(t, &n);
  for (i = 0; i < n; ++i) {
    odla_ext_trace_entry e;
    prof_node *nd, *ns;
    int k;
    if (prof_real_odla_ExtGetDeviceTraceEntry(t, i, &e) != ODLA_SUCCESS || e.computation != c->comp)
      continue;
    if (!(ns = (prof_node *)realloc(c->nodes, (size_t)(c->num_nodes + 1) * sizeof *ns)))
      break;
    c->nodes = ns;
    nd = &c->nodes[c->num_nodes++];
    nd->op = prof_strdup(e.op);
    nd->results = (char **)calloc((size_t)e.num_results + 1, sizeof(char *));
    nd->num_results = nd->results ? e.num_results : 0;
    for (k = 0; k < nd->num_results; ++k)
      nd->results[k] = prof_strdup((const char *)e.result_ids[k]);
    nd->node = e.node;
    nd->calls = e.calls;
    nd->total_ns = e.total_ns;
    nd->min_ns = e.min_ns;
    nd->flops = e.flops;
  }
  prof_real_odla_ReleaseDeviceTrace(t);
}

/* ---- the report ------------------------------------------------------------------------ */

static void prof_write_comp(FILE *f, const prof_comp *c) {
  int i, k;
  fprintf(f, "  {\"index\": %d, \"executions\": %llu, \"execution_ns\": %llu,\n   \"nodes\": [",
          c->index, c->executions, c->execution_ns);
  for (i = 0; i < c->num_nodes; ++i) {
    const prof_node *n = &c->nodes[i];
    fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
    odla_json_string(f, n->op);
    fprintf(f, ", \"results\": [");
    for (k = 0; k < n->num_results; ++k) {
      fprintf(f, k ? ", " : "");
      odla_json_string(f, n->results[k]);
    }
    fprintf(f,
            "], \"node\": %d, \"calls\": %llu, \"total_ns\": %llu, \"min_ns\": %llu, "
            "\"flops\": %llu}",
            n->node, n->calls, n->total_ns, n->min_ns, n->flops);
  }
  fprintf(f, "],\n   \"values\": [");
  for (i = 0; i < c->num_values; ++i) {
    const prof_value *v = &c->values[i];
    fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
    odla_json_string(f, v->id);
    fprintf(f, ", \"kind\": \"%s\", \"type\": \"%s\", \"shape\": [",
            v->kind == PROF_ARGUMENT ? "argument"
            : v->user_output         ? "output"
                                     : "result",
            prof_type_name(v->type.element_type));
    for (k = 0; k < v->type.shape.size; ++k)
      fprintf(f, "%s%lld", k ? ", " : "", (long long)v->type.shape.dims[k]);
    if (v->executions)
      fprintf(f, "], \"min\": %.17g, \"max\": %.17g, \"executions\": %llu}", v->min, v->max,
              v->executions);
    else
      fprintf(f, "], \"min\": null, \"max\": null, \"executions\": 0}");
  }
  fprintf(f, "]}");
}

static void prof_write_report(void) {
  prof_comp *c;
  FILE *f;
  int bad;
  pthread_mutex_lock(&prof.mu);
  if (prof.device_trace) {
    prof_real_odla_StopDeviceProfiler(NULL);
    for (c = prof.comps; c; c = c->next)
      prof_snapshot(c);
  }
  if (!(f = fopen(prof.output, "w"))) {
    fprintf(stderr, "odla_profiler: cannot write %s\n", prof.output);
    pthread_mutex_unlock(&prof.mu);
    return;
  }
  fprintf(f, "{\"backend\": ");
  odla_json_string(f, prof.backend);
  fprintf(f, ",\n \"timing\": \"%s\",\n \"ranges\": %s,\n \"computations\": [\n",
          prof.device_trace ? "device_profiler" : "execution", prof.ranges ? "true" : "false");
  for (c = prof.comps; c; c = c->next) {
    prof_write_comp(f, c);
    fprintf(f, c->next ? ",\n" : "\n");
  }
  fprintf(f, " ]}\n");
  bad = ferror(f);
  if (fclose(f) != 0 || bad)
    fprintf(stderr, "odla_profiler: writing %s failed\n", prof.output);
  pthread_mutex_unlock(&prof.mu);
}

/* ---- intercepted functions -------------------------------------------------------------- */

PROF_EXPORT odla_status odla_CreateComputation(odla_computation *computation) {
  odla_status s;
  prof_comp *c;
  if (!PROF_READY(odla_CreateComputation))
    return ODLA_UNSUPPORTED_OP;
  if ((s = prof_real_odla_CreateComputation(computation)) != ODLA_SUCCESS)
    return s;
  if (!(c = (prof_comp *)calloc(1, sizeof *c)))
    return ODLA_SUCCESS; /* profiled without ranges */
  pthread_mutex_lock(&prof.mu);
  c->comp = *computation;
  c->index = prof.num_comps++;
  *prof.last = c;
  prof.last = &c->next;
  pthread_mutex_unlock(&prof.mu);
  prof_current = c;
  return ODLA_SUCCESS;
}

PROF_EXPORT odla_status odla_DestroyComputation(odla_computation computation) {
  prof_comp *c;
  if (!PROF_READY(odla_DestroyComputation))
    return ODLA_UNSUPPORTED_OP;
  pthread_mutex_lock(&prof.mu);
  if (computation && (c = prof_find(computation, NULL))) {
    prof_snapshot(c);
    c->comp = NULL;
    c->exec = NULL;
    if (prof_current == c)
      prof_current = NULL;
  }
  pthread_mutex_unlock(&prof.mu);
  return prof_real_odla_DestroyComputation(computation);
}

/* Ranges mode: marks every recorded op result as an output, once, before compiling. */
static odla_status prof_mark(odla_computation computation) {
  prof_comp *c;
  odla_status s = ODLA_SUCCESS;
  int i;
  pthread_mutex_lock(&prof.mu);
  c = prof_find(computation, NULL);
  if (c && prof.ranges && !c->marked) {
    c->marked = 1;
    for (i = 0; i < c->num_values && s == ODLA_SUCCESS; ++i)
      if (c->values[i].kind == PROF_RESULT && !c->values[i].user_output) {
        c->values[i].extra = 1;
        s = prof_real_odla_SetValueAsOutput(c->values[i].value);
      }
  }
  pthread_mutex_unlock(&prof.mu);
  return s;
}

PROF_EXPORT odla_status odla_CompileComputation(const odla_computation computation,
                                                const odla_device device,
                                                odla_executable *executable) {
  odla_status s;
  prof_comp *c;
  if (!PROF_READY(odla_CompileComputation))
    return ODLA_UNSUPPORTED_OP;
  if ((s = prof_mark(computation)) != ODLA_SUCCESS)
    return s;
  s = prof_real_odla_CompileComputation(computation, device, executable);
  pthread_mutex_lock(&prof.mu);
  if (s == ODLA_SUCCESS && executable && (c = prof_find(computation, NULL)))
    c->exec = *executable;
  pthread_mutex_unlock(&prof.mu);
  return s;
}

PROF_EXPORT odla_status odla_DestroyExecutable(odla_executable executable) {
  prof_comp *c;
  if (!PROF_READY(odla_DestroyExecutable))
    return ODLA_UNSUPPORTED_OP;
  pthread_mutex_lock(&prof.mu);
  if (executable && (c = prof_find(NULL, executable)))
    c->exec = NULL;
  pthread_mutex_unlock(&prof.mu);
  return prof_real_odla_DestroyExecutable(executable);
}

/* Runs one synchronous execution of (computation or executable) on ctx through `run`. */
static odla_status prof_execute(odla_computation comp, odla_executable exec, odla_context ctx,
                                odla_status (*run)(void *), void *arg) {
  prof_comp *c;
  odla_status s = ODLA_SUCCESS;
  unsigned long long t0;
  if (comp && (s = prof_mark(comp)) != ODLA_SUCCESS)
    return s;
  pthread_mutex_lock(&prof.mu);
  c = prof_find(comp, exec);
  if (c && prof.ranges && ctx)
    s = prof_bind_extra(c, ctx);
  pthread_mutex_unlock(&prof.mu);
  if (s != ODLA_SUCCESS)
    return s;
  t0 = prof_now_ns();
  s = run(arg);
  t0 = prof_now_ns() - t0;
  pthread_mutex_lock(&prof.mu);
  if (c)
    prof_after(c, ctx, s, t0);
  pthread_mutex_unlock(&prof.mu);
  return s;
}

typedef struct {
  odla_computation comp;
  odla_executable exec;
  odla_context ctx;
  odla_compute_mode mode;
  odla_device device;
} prof_call;

static odla_status prof_run_execute(void *p) {
  prof_call *a = (prof_call *)p;
  return prof_real_odla_ExecuteComputation(a->comp, a->ctx, a->mode, a->device);
}

static odla_status prof_run_launch(void *p) {
  prof_call *a = (prof_call *)p;
  return prof_real_odla_LaunchExecutable(a->exec, a->ctx);
}

PROF_EXPORT odla_status odla_ExecuteComputation(const odla_computation computation,
                                                const odla_context context,
                                                const odla_compute_mode mode, odla_device device) {
  prof_call a;
  if (!PROF_READY(odla_ExecuteComputation))
    return ODLA_UNSUPPORTED_OP;
  a.comp = computation;
  a.exec = NULL;
  a.ctx = context;
  a.mode = mode;
  a.device = device;
  return prof_execute(computation, NULL, context, prof_run_execute, &a);
}

PROF_EXPORT odla_status odla_LaunchExecutable(odla_executable executable, odla_context context) {
  prof_call a;
  if (!PROF_READY(odla_LaunchExecutable))
    return ODLA_UNSUPPORTED_OP;
  memset(&a, 0, sizeof a);
  a.exec = executable;
  a.ctx = context;
  return prof_execute(NULL, executable, context, prof_run_launch, &a);
}

/* Asynchronous executions: counted by the device profiler, without ranges. */
PROF_EXPORT odla_status odla_AsyncExecuteComputation(const odla_computation computation,
                                                     const odla_context context,
                                                     const odla_compute_mode mode,
                                                     odla_device device) {
  odla_status s;
  if (!PROF_READY(odla_AsyncExecuteComputation))
    return ODLA_UNSUPPORTED_OP;
  if ((s = prof_mark(computation)) != ODLA_SUCCESS)
    return s;
  return prof_real_odla_AsyncExecuteComputation(computation, context, mode, device);
}

/* Remembers a caller's binding of `id` to `data` in ctx. */
static void prof_remember(odla_context ctx, const char *id, void *data) {
  prof_ctx *pc;
  int k;
  if (!id || !ctx)
    return;
  pthread_mutex_lock(&prof.mu);
  if ((pc = prof_ctx_of(ctx, 1))) {
    for (k = 0; k < pc->num && strcmp(pc->ids[k], id) != 0; ++k)
      ;
    if (k == pc->num && pc->num == pc->cap) {
      int cap = pc->cap ? 2 * pc->cap : 16;
      char **ids = (char **)realloc(pc->ids, (size_t)cap * sizeof *ids);
      void **data_list = ids ? (void **)realloc(pc->data, (size_t)cap * sizeof(void *)) : NULL;
      if (ids)
        pc->ids = ids;
      if (data_list) {
        pc->data = data_list;
        pc->cap = cap;
      }
    }
    if (k < pc->num)
      pc->data[k] = data;
    else if (k < pc->cap && (pc->ids[k] = prof_strdup(id))) {
      pc->data[k] = data;
      ++pc->num;
    }
  }
  pthread_mutex_unlock(&prof.mu);
}

static const char *prof_id_of(odla_value v) {
  odla_value_id id = NULL;
  return v && prof_real_odla_GetValueId && prof_real_odla_GetValueId(v, &id) == ODLA_SUCCESS
             ? (const char *)id
             : NULL;
}

PROF_EXPORT odla_status odla_BindToArgument(odla_value value, const odla_void *data_ptr,
                                            odla_context context) {
  odla_status s;
  if (!PROF_READY(odla_BindToArgument))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BindToArgument(value, data_ptr, context);
  if (s == ODLA_SUCCESS)
    prof_remember(context, prof_id_of(value), (void *)(uintptr_t)data_ptr);
  return s;
}

PROF_EXPORT odla_status odla_BindToArgumentById(const odla_value_id value_id,
                                                const odla_void *data_ptr, odla_context context) {
  odla_status s;
  if (!PROF_READY(odla_BindToArgumentById))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BindToArgumentById(value_id, data_ptr, context);
  if (s == ODLA_SUCCESS)
    prof_remember(context, (const char *)value_id, (void *)(uintptr_t)data_ptr);
  return s;
}

PROF_EXPORT odla_status odla_BindToOutput(odla_value value, odla_void *data_ptr,
                                          odla_context context) {
  odla_status s;
  if (!PROF_READY(odla_BindToOutput))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BindToOutput(value, data_ptr, context);
  if (s == ODLA_SUCCESS)
    prof_remember(context, prof_id_of(value), data_ptr);
  return s;
}

PROF_EXPORT odla_status odla_BindToOutputById(const odla_value_id value_id, odla_void *data_ptr,
                                              odla_context context) {
  odla_status s;
  if (!PROF_READY(odla_BindToOutputById))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BindToOutputById(value_id, data_ptr, context);
  if (s == ODLA_SUCCESS)
    prof_remember(context, (const char *)value_id, data_ptr);
  return s;
}

PROF_EXPORT odla_status odla_DestroyContext(odla_context context) {
  prof_ctx **p, *pc;
  int i;
  if (!PROF_READY(odla_DestroyContext))
    return ODLA_UNSUPPORTED_OP;
  pthread_mutex_lock(&prof.mu);
  for (p = &prof.ctxs; *p && (*p)->ctx != context; p = &(*p)->next)
    ;
  if ((pc = *p)) {
    *p = pc->next;
    for (i = 0; i < pc->num; ++i)
      free(pc->ids[i]);
    for (i = 0; pc->for_comp && i < pc->for_comp->num_values; ++i)
      free(pc->extra[i]);
    free(pc->ids);
    free(pc->data);
    free(pc->extra);
    free(pc);
  }
  pthread_mutex_unlock(&prof.mu);
  return prof_real_odla_DestroyContext(context);
}

/* Marks the caller's own outputs, which keep their kind "output" in the report. */
static void prof_user_output(const char *id) {
  prof_value *v;
  if (!id || !prof_current)
    return;
  pthread_mutex_lock(&prof.mu);
  if ((v = prof_value_by_id(prof_current, id)))
    v->user_output = 1;
  pthread_mutex_unlock(&prof.mu);
}

PROF_EXPORT odla_status odla_SetValueAsOutput(odla_value value) {
  odla_status s;
  if (!PROF_READY(odla_SetValueAsOutput))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_SetValueAsOutput(value);
  if (s == ODLA_SUCCESS && prof_current && prof_current->depth == 0)
    prof_user_output(prof_id_of(value));
  return s;
}

PROF_EXPORT odla_status odla_SetValueAsOutputById(const odla_value_id value_id) {
  odla_status s;
  if (!PROF_READY(odla_SetValueAsOutputById))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_SetValueAsOutputById(value_id);
  if (s == ODLA_SUCCESS && prof_current && prof_current->depth == 0)
    prof_user_output((const char *)value_id);
  return s;
}

PROF_EXPORT odla_status odla_SetValuesAsOutput(odla_values values) {
  odla_status s;
  odla_size_t i;
  if (!PROF_READY(odla_SetValuesAsOutput))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_SetValuesAsOutput(values);
  for (i = 0; s == ODLA_SUCCESS && prof_current && prof_current->depth == 0 && i < values.size &&
              i < ODLA_MAX_OUTPUTS;
       ++i)
    prof_user_output(prof_id_of(values.values[i]));
  return s;
}

/* Control-flow regions: values built inside them are not recorded (marking one as an output
 * there would make it a branch result). */
PROF_EXPORT odla_status odla_BeginIf(odla_value condition, odla_value_id value_id) {
  odla_status s;
  if (!PROF_READY(odla_BeginIf))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BeginIf(condition, value_id);
  if (s == ODLA_SUCCESS && prof_current)
    ++prof_current->depth;
  return s;
}

PROF_EXPORT odla_values odla_EndIf(odla_value_ids value_ids) {
  odla_values r;
  if (!PROF_READY(odla_EndIf)) {
    memset(&r, 0, sizeof r);
    return r;
  }
  r = prof_real_odla_EndIf(value_ids);
  if (prof_current && prof_current->depth > 0)
    --prof_current->depth;
  prof_note_values("odla_EndIf", r);
  return r;
}

PROF_EXPORT odla_status odla_BeginLoop(odla_value trip_count, odla_value_id value_id) {
  odla_status s;
  if (!PROF_READY(odla_BeginLoop))
    return ODLA_UNSUPPORTED_OP;
  s = prof_real_odla_BeginLoop(trip_count, value_id);
  if (s == ODLA_SUCCESS && prof_current)
    ++prof_current->depth;
  return s;
}

PROF_EXPORT odla_values odla_EndLoop(odla_value condition, odla_values output_values,
                                     const odla_loop_output_mode *flags, odla_value_ids value_ids) {
  odla_values r;
  if (!PROF_READY(odla_EndLoop)) {
    memset(&r, 0, sizeof r);
    return r;
  }
  r = prof_real_odla_EndLoop(condition, output_values, flags, value_ids);
  if (prof_current && prof_current->depth > 0)
    --prof_current->depth;
  prof_note_values("odla_EndLoop", r);
  return r;
}

/* Variadic functions: C cannot forward a variadic tail, so these forward the one pointer
 * their tails hold in this project (odla_ext_custom.h's odla_ext_custom_params, the
 * odla_ext_profiler.h trace items, and device config items, which take one pointer). */
PROF_EXPORT odla_values odla_CustomOp(odla_values inputs, const odla_char *op_name,
                                      const odla_char *function_name, const odla_value_ids ids,
                                      ...) {
  odla_values r;
  va_list ap;
  void *arg;
  if (!PROF_READY(odla_CustomOp)) {
    memset(&r, 0, sizeof r);
    return r;
  }
  va_start(ap, ids);
  arg = va_arg(ap, void *);
  va_end(ap);
  r = prof_real_odla_CustomOp(inputs, op_name, function_name, ids, arg);
  prof_note_values("odla_CustomOp", r);
  return r;
}

PROF_EXPORT odla_status odla_SetDeviceTraceItem(odla_device_trace device_trace,
                                                odla_device_trace_item device_trace_item, ...) {
  va_list ap;
  void *arg;
  if (!PROF_READY(odla_SetDeviceTraceItem))
    return ODLA_UNSUPPORTED_OP;
  va_start(ap, device_trace_item);
  arg = va_arg(ap, void *);
  va_end(ap);
  return prof_real_odla_SetDeviceTraceItem(device_trace, device_trace_item, arg);
}

PROF_EXPORT odla_status odla_SetDeviceConfigItem(odla_device_config device_config,
                                                 odla_device_config_item device_config_item, ...) {
  va_list ap;
  void *arg;
  if (!PROF_READY(odla_SetDeviceConfigItem))
    return ODLA_UNSUPPORTED_OP;
  va_start(ap, device_config_item);
  arg = va_arg(ap, void *);
  va_end(ap);
  return prof_real_odla_SetDeviceConfigItem(device_config, device_config_item, arg);
}
