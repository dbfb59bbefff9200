/* runtime_profiler.c: the device profiler of the reference backend (ODLA 0.5's
 * odla_profiler.h) and the trace readers of odla_ext_profiler.h.
 *
 * There is one device, the host CPU, so one profiler: a NULL device and every allocated
 * device handle name it. While it runs, every execution in compile or load mode that starts
 * (ref_profile_begin) times each of its nodes with the monotonic clock (ref_profile_run) and
 * adds the time to the node's entry: op, results, calls, total and fastest time, FLOPs. An
 * If or Loop node's time includes the nodes of the region it runs, which have entries of
 * their own. Executions that do not run under the profiler pay one branch per node.
 *
 * Entries live in one session, keyed by (computation, node index) through an open-addressing
 * hash table; they keep copies of the op name and result ids, so they outlive their
 * computation (odla_DestroyComputation detaches them: ref_profile_forget). One mutex guards
 * the session: contexts may execute at once (runtime_async.c), each node's record takes it
 * once. odla_StopDeviceProfiler waits for the profiled executions still in flight;
 * odla_AsyncStopDeviceProfiler does not (they finish their records before
 * odla_RetrieveDeviceTrace, which waits for them, reads the session). A started session
 * drops the previous one's entries; odla_StartDeviceProfiler first waits for executions of
 * the previous session still in flight, odla_AsyncStartDeviceProfiler does not, and their
 * remaining nodes count in the new session. A trace (odla_device_trace) is a copy of the
 * session's entries when it was retrieved. */
#define _POSIX_C_SOURCE 200809L

#include "json_string.h"
#include "ref.h"
#include "threads.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  odla_ext_trace_entry e; /* op and result_ids point into `strings` */
  char *strings;
} ref_trace_entry;

struct _odla_device_trace {
  ref_trace_entry *entries;
  int num, cap;
  char *label;
};

static struct {
  ref_mutex mu;
  ref_cond idle; /* signalled when in_flight drops to 0 */
  int running;
  int in_flight;
  struct _odla_device_trace trace;
  int *slots; /* entry index + 1, 0 for an empty slot; cap_slots is a power of two */
  int cap_slots;
} ref_prof = {REF_MUTEX_INITIALIZER, REF_COND_INITIALIZER, 0, 0, {NULL, 0, 0, NULL}, NULL, 0};

/* The monotonic clock, where the C library has one; else C's processor clock (bare-metal
 * newlib declares no clock_gettime). */
static uint64_t ref_now_ns(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#else
  return (uint64_t)((double)clock() * (1e9 / CLOCKS_PER_SEC));
#endif
}

static void ref_trace_clear(struct _odla_device_trace *t) {
  int i;
  for (i = 0; i < t->num; ++i)
    ref_free(t->entries[i].strings);
  t->num = 0;
}

static size_t ref_slot_of(odla_computation comp, int node, int cap) {
  uintptr_t h = (uintptr_t)comp / 64 * 2654435761u + (uintptr_t)node * 40503u;
  return (size_t)(h ^ (h >> 15)) & (size_t)(cap - 1);
}

/* Rebuilds the hash table with at least twice as many slots as entries, plus one. */
static int ref_rehash(void) {
  int cap = 256, i;
  int *slots;
  while (cap < 2 * (ref_prof.trace.num + 1))
    cap *= 2;
  slots = (int *)ref_calloc((size_t)cap, sizeof *slots);
  if (!slots)
    return 0;
  for (i = 0; i < ref_prof.trace.num; ++i) {
    const odla_ext_trace_entry *e = &ref_prof.trace.entries[i].e;
    size_t k;
    if (!e->computation)
      continue; /* detached: never looked up again */
    for (k = ref_slot_of(e->computation, e->node, cap); slots[k]; k = (k + 1) & (size_t)(cap - 1))
      ;
    slots[k] = i + 1;
  }
  ref_free(ref_prof.slots);
  ref_prof.slots = slots;
  ref_prof.cap_slots = cap;
  return 1;
}

/* A new entry for node `index` of `comp` (under the mutex); NULL when out of memory. */
/* Copies `s` with its NUL to `p`; returns where the NUL is. */
static char *ref_append(char *p, const char *s) {
  size_t n = strlen(s);
  memcpy(p, s, n + 1);
  return p + n;
}

static odla_ext_trace_entry *ref_new_entry(odla_computation comp, int index) {
  struct _odla_device_trace *t = &ref_prof.trace;
  const ref_node *n = comp->nodes[index];
  ref_trace_entry *te;
  size_t bytes = strlen(n->op) + 1 + (n->engine ? strlen(n->engine) + 2 : 0), off;
  const char **ids;
  char *p;
  int k;
  if (t->num == t->cap) {
    int cap = t->cap ? 2 * t->cap : 256;
    ref_trace_entry *es = (ref_trace_entry *)ref_realloc(t->entries, (size_t)cap * sizeof *es);
    if (!es)
      return NULL;
    t->entries = es;
    t->cap = cap;
  }
  for (k = 0; k < n->num_outputs; ++k)
    bytes += strlen(n->outputs[k]->id) + 1;
  off = (bytes + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
  p = (char *)ref_malloc(off + (size_t)n->num_outputs * sizeof(char *) + 1);
  if (!p)
    return NULL;
  te = &t->entries[t->num];
  memset(te, 0, sizeof *te);
  te->strings = p;
  ids = (const char **)(void *)(p + off);
  te->e.op = p;
  p = ref_append(p, n->op);
  if (n->engine) {
    p = ref_append(ref_append(ref_append(p, "("), n->engine), ")");
  }
  ++p;
  for (k = 0; k < n->num_outputs; ++k) {
    ids[k] = p;
    p = ref_append(p, n->outputs[k]->id) + 1;
  }
  te->e.num_results = n->num_outputs;
  te->e.result_ids = (const odla_value_id *)(void *)ids;
  te->e.computation = comp;
  te->e.node = index;
  te->e.flops = n->flops > 0 ? (odla_uint64)n->flops : 0;
  return &t->entries[t->num++].e;
}

/* The entry of node `index` of `comp`, made on first use (under the mutex). */
static odla_ext_trace_entry *ref_entry(odla_computation comp, int index) {
  size_t k;
  odla_ext_trace_entry *e;
  if (2 * (ref_prof.trace.num + 1) > ref_prof.cap_slots && !ref_rehash())
    return NULL;
  for (k = ref_slot_of(comp, index, ref_prof.cap_slots); ref_prof.slots[k];
       k = (k + 1) & (size_t)(ref_prof.cap_slots - 1)) {
    e = &ref_prof.trace.entries[ref_prof.slots[k] - 1].e;
    if (e->computation == comp && e->node == index)
      return e;
  }
  e = ref_new_entry(comp, index);
  if (e)
    ref_prof.slots[k] = ref_prof.trace.num;
  return e;
}

int ref_profile_begin(void) {
  int on;
#if defined(__ATOMIC_ACQUIRE)
  if (!__atomic_load_n(&ref_prof.running, __ATOMIC_ACQUIRE))
    return 0; /* the common case, without the lock */
#endif
  ref_mutex_lock(&ref_prof.mu);
  on = ref_prof.running;
  ref_prof.in_flight += on;
  ref_mutex_unlock(&ref_prof.mu);
  return on;
}

void ref_profile_end(void) {
  ref_mutex_lock(&ref_prof.mu);
  if (--ref_prof.in_flight == 0)
    ref_cond_broadcast(&ref_prof.idle);
  ref_mutex_unlock(&ref_prof.mu);
}

odla_status ref_profile_run(const ref_exec *x, int index, const ref_io *io) {
  const ref_node *n = x->comp->nodes[index];
  uint64_t t0 = ref_now_ns(), ns;
  odla_status s = ref_node_run(n, io);
  odla_ext_trace_entry *e;
  ns = ref_now_ns() - t0;
  ref_mutex_lock(&ref_prof.mu);
  e = ref_entry(x->comp, index);
  if (e) {
    if (e->calls == 0 || ns < e->min_ns)
      e->min_ns = ns;
    ++e->calls;
    e->total_ns += ns;
  }
  ref_mutex_unlock(&ref_prof.mu);
  return s;
}

void ref_profile_forget(odla_computation comp) {
  int i;
  ref_mutex_lock(&ref_prof.mu);
  for (i = 0; i < ref_prof.trace.num; ++i)
    if (ref_prof.trace.entries[i].e.computation == comp)
      ref_prof.trace.entries[i].e.computation = NULL;
  /* Drop the detached entries from the table; the next record rebuilds it. */
  ref_free(ref_prof.slots);
  ref_prof.slots = NULL;
  ref_prof.cap_slots = 0;
  ref_mutex_unlock(&ref_prof.mu);
}

/* ---- odla_profiler.h ------------------------------------------------------------------ */

odla_status odla_CreateDeviceTrace(odla_device_trace *device_trace) {
  if (!device_trace)
    return ODLA_INVALID_PARAM;
  *device_trace = (odla_device_trace)ref_calloc(1, sizeof **device_trace);
  return *device_trace ? ODLA_SUCCESS : ODLA_MEM_ERROR;
}

odla_status odla_SetDeviceTraceItem(odla_device_trace device_trace,
                                    odla_device_trace_item device_trace_item, ...) {
  va_list ap;
  const char *label;
  char *copy;
  if (!device_trace)
    return ODLA_INVALID_PARAM;
  if (device_trace_item != ODLA_EXT_TRACE_ITEM_LABEL) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetDeviceTraceItem",
               "unknown item %p: this backend knows ODLA_EXT_TRACE_ITEM_LABEL only",
               (void *)device_trace_item);
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  va_start(ap, device_trace_item);
  label = va_arg(ap, const char *);
  va_end(ap);
  if (!label)
    return ODLA_INVALID_PARAM;
  if (!(copy = (char *)ref_malloc(strlen(label) + 1)))
    return ODLA_MEM_ERROR;
  strcpy(copy, label);
  ref_free(device_trace->label);
  device_trace->label = copy;
  return ODLA_SUCCESS;
}

odla_status odla_ReleaseDeviceTrace(odla_device_trace device_trace) {
  if (!device_trace)
    return ODLA_INVALID_PARAM;
  ref_trace_clear(device_trace);
  ref_free(device_trace->entries);
  ref_free(device_trace->label);
  ref_free(device_trace);
  return ODLA_SUCCESS;
}

/* Starts a session; `wait` first waits for the previous session's executions. */
static odla_status ref_start(int wait) {
  ref_mutex_lock(&ref_prof.mu);
  if (ref_prof.running) {
    ref_mutex_unlock(&ref_prof.mu);
    ref_report(ODLA_LOG_LEVEL_ERROR, "StartDeviceProfiler", "the profiler is already running");
    return ODLA_FAILURE;
  }
  while (wait && ref_prof.in_flight > 0)
    ref_cond_wait(&ref_prof.idle, &ref_prof.mu);
  ref_trace_clear(&ref_prof.trace);
  if (ref_prof.cap_slots)
    memset(ref_prof.slots, 0, (size_t)ref_prof.cap_slots * sizeof *ref_prof.slots);
#if defined(__ATOMIC_RELEASE)
  __atomic_store_n(&ref_prof.running, 1, __ATOMIC_RELEASE);
#else
  ref_prof.running = 1;
#endif
  ref_mutex_unlock(&ref_prof.mu);
  return ODLA_SUCCESS;
}

/* Stops the session; `wait` waits for the executions it profiles. */
static odla_status ref_stop(int wait) {
  ref_mutex_lock(&ref_prof.mu);
  if (!ref_prof.running) {
    ref_mutex_unlock(&ref_prof.mu);
    ref_report(ODLA_LOG_LEVEL_ERROR, "StopDeviceProfiler", "the profiler is not running");
    return ODLA_FAILURE;
  }
#if defined(__ATOMIC_RELEASE)
  __atomic_store_n(&ref_prof.running, 0, __ATOMIC_RELEASE);
#else
  ref_prof.running = 0;
#endif
  while (wait && ref_prof.in_flight > 0)
    ref_cond_wait(&ref_prof.idle, &ref_prof.mu);
  ref_mutex_unlock(&ref_prof.mu);
  return ODLA_SUCCESS;
}

odla_status odla_StartDeviceProfiler(odla_device device) {
  (void)device; /* the one device */
  return ref_start(1);
}

odla_status odla_AsyncStartDeviceProfiler(odla_device device) {
  (void)device;
  return ref_start(0);
}

odla_status odla_StopDeviceProfiler(odla_device device) {
  (void)device;
  return ref_stop(1);
}

odla_status odla_AsyncStopDeviceProfiler(odla_device device) {
  (void)device;
  return ref_stop(0);
}

/* Copies entry `e` into trace `t` (which has room). */
static int ref_copy_entry(struct _odla_device_trace *t, const ref_trace_entry *e) {
  size_t bytes = strlen(e->e.op) + 1, off;
  ref_trace_entry *d = &t->entries[t->num];
  const char **ids;
  char *p;
  int k;
  for (k = 0; k < e->e.num_results; ++k)
    bytes += strlen((const char *)e->e.result_ids[k]) + 1;
  off = (bytes + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
  if (!(p = (char *)ref_malloc(off + (size_t)e->e.num_results * sizeof(char *) + 1)))
    return 0;
  *d = *e;
  d->strings = p;
  ids = (const char **)(void *)(p + off);
  d->e.op = p;
  p = ref_append(p, e->e.op) + 1;
  for (k = 0; k < e->e.num_results; ++k) {
    ids[k] = p;
    p = ref_append(p, (const char *)e->e.result_ids[k]) + 1;
  }
  d->e.result_ids = (const odla_value_id *)(void *)ids;
  ++t->num;
  return 1;
}

odla_status odla_RetrieveDeviceTrace(odla_device device, odla_device_trace *device_trace) {
  struct _odla_device_trace *t;
  odla_status s = ODLA_SUCCESS;
  int i, made = 0;
  (void)device;
  if (!device_trace)
    return ODLA_INVALID_PARAM;
  if (!*device_trace) {
    if ((s = odla_CreateDeviceTrace(device_trace)) != ODLA_SUCCESS)
      return s;
    made = 1;
  }
  t = *device_trace;
  ref_mutex_lock(&ref_prof.mu);
  while (!ref_prof.running && ref_prof.in_flight > 0)
    ref_cond_wait(&ref_prof.idle, &ref_prof.mu);
  ref_trace_clear(t);
  if (t->cap < ref_prof.trace.num) {
    ref_trace_entry *es =
        (ref_trace_entry *)ref_realloc(t->entries, (size_t)ref_prof.trace.num * sizeof *es);
    if (es) {
      t->entries = es;
      t->cap = ref_prof.trace.num;
    }
  }
  if (t->cap < ref_prof.trace.num)
    s = ODLA_MEM_ERROR;
  for (i = 0; s == ODLA_SUCCESS && i < ref_prof.trace.num; ++i)
    if (!ref_copy_entry(t, &ref_prof.trace.entries[i]))
      s = ODLA_MEM_ERROR;
  ref_mutex_unlock(&ref_prof.mu);
  if (s != ODLA_SUCCESS && made) {
    odla_ReleaseDeviceTrace(t);
    *device_trace = NULL;
  }
  return s;
}

/* ---- odla_ext_profiler.h -------------------------------------------------------------- */

odla_status odla_ExtGetDeviceTraceNumEntries(odla_device_trace device_trace,
                                             odla_int32 *num_entries) {
  if (!device_trace || !num_entries)
    return ODLA_INVALID_PARAM;
  *num_entries = device_trace->num;
  return ODLA_SUCCESS;
}

odla_status odla_ExtGetDeviceTraceEntry(odla_device_trace device_trace, odla_int32 index,
                                        odla_ext_trace_entry *entry) {
  if (!device_trace || !entry || index < 0 || index >= device_trace->num)
    return ODLA_INVALID_PARAM;
  *entry = device_trace->entries[index].e;
  return ODLA_SUCCESS;
}

odla_status odla_ExtWriteDeviceTrace(odla_device_trace device_trace, const odla_char *path) {
  FILE *f;
  int i, k, bad;
  if (!device_trace || !path)
    return ODLA_INVALID_PARAM;
  if (!(f = fopen(path, "w"))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExtWriteDeviceTrace", "cannot write '%s'", path);
    return ODLA_FILE_NOT_EXIST;
  }
  fprintf(f, "{\"label\": ");
  odla_json_string(f, device_trace->label ? device_trace->label : "");
  fprintf(f, ",\n \"entries\": [");
  for (i = 0; i < device_trace->num; ++i) {
    const odla_ext_trace_entry *e = &device_trace->entries[i].e;
    fprintf(f, "%s\n  {\"op\": ", i ? "," : "");
    odla_json_string(f, e->op);
    fprintf(f, ", \"results\": [");
    for (k = 0; k < e->num_results; ++k) {
      fprintf(f, k ? ", " : "");
      odla_json_string(f, (const char *)e->result_ids[k]);
    }
    fprintf(f,
            "], \"node\": %d, \"calls\": %llu, \"total_ns\": %llu, \"min_ns\": %llu, "
            "\"flops\": %llu}",
            (int)e->node, (unsigned long long)e->calls, (unsigned long long)e->total_ns,
            (unsigned long long)e->min_ns, (unsigned long long)e->flops);
  }
  fprintf(f, "\n ]}\n");
  bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExtWriteDeviceTrace", "writing '%s' failed", path);
    return ODLA_FILE_NOT_EXIST;
  }
  return ODLA_SUCCESS;
}
