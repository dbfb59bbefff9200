/* calls.c: recording and replaying the calls that build a computation (calls.h explains the
 * design; gen_calls.py generates the per-call code that uses these). */
#include "calls.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Encoding limits: longer strings and arrays are refused when replaying (never recorded by a
 * successful call: ids and names are short, arrays hold a few axes). */
#define REF_CALL_NULL 0xffffffffu
#define REF_CALL_MAX_STRING (1u << 16)
/* Replayed arrays are zero-padded to at least this many elements, so that a builder reading
 * one per axis never reads past the copy. */
#define REF_CALL_ARRAY_PAD (2 * ODLA_MAX_DIMENSION)

/* ---- Recording ---------------------------------------------------------------------- */

void ref_put(ref_writer *w, const void *data, size_t n) {
  if (w->failed)
    return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    unsigned char *p;
    while (cap < w->len + n)
      cap *= 2;
    if (!(p = (unsigned char *)ref_realloc(w->p, cap))) {
      w->failed = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  if (n)
    memcpy(w->p + w->len, data, n);
  w->len += n;
}

static void ref_log_put(ref_rec *r, const void *data, size_t n) { ref_put(&r->log->w, data, n); }

static void ref_log_u32(ref_rec *r, uint32_t v) { ref_log_put(r, &v, sizeof v); }

/* The log of a computation whose log could not be allocated: failed, never written to. */
static ref_call_log ref_no_log = {{NULL, 0, 0, 1}, 0, NULL, NULL, 0, 0, 0, 0};

int ref_rec_begin(ref_rec *r, odla_computation comp, int call, int ok) {
#ifdef ODLA_REFERENCE_NO_CALL_LOG
  (void)r, (void)comp, (void)call, (void)ok;
  return 0;
#else
  if (!ok || !comp || comp->error != ODLA_SUCCESS || comp->interpret)
    return 0;
  if (!comp->calls && !(comp->calls = (ref_call_log *)ref_calloc(1, sizeof *comp->calls)))
    comp->calls = &ref_no_log; /* the computation runs, but cannot be stored */
  if (comp->calls->w.failed)
    return 0;
  r->log = comp->calls;
  ref_log_u32(r, (uint32_t)call);
  return 1;
#endif
}

void ref_rec_end(ref_rec *r) {
  if (!r->log->w.failed)
    ++r->log->num_calls;
}

void ref_rec_value(ref_rec *r, odla_value v) {
  int32_t i = v ? (int32_t)v->index : -1;
  ref_log_put(r, &i, sizeof i);
}

void ref_rec_values(ref_rec *r, const odla_values *v) {
  odla_size_t i;
  ref_log_u32(r, (uint32_t)v->size);
  for (i = 0; i < v->size && i < ODLA_MAX_OUTPUTS; ++i)
    ref_rec_value(r, v->values[i]);
}

void ref_rec_str(ref_rec *r, const char *s) {
  size_t n = s ? strlen(s) : 0;
  ref_log_u32(r, s ? (uint32_t)n : REF_CALL_NULL);
  ref_log_put(r, s, n);
}

void ref_rec_ids(ref_rec *r, const odla_value_ids *ids) {
  odla_size_t i;
  ref_log_u32(r, (uint32_t)ids->size);
  for (i = 0; i < ids->size && i < ODLA_MAX_OUTPUTS; ++i)
    ref_rec_str(r, (const char *)ids->value_ids[i]);
}

void ref_rec_shape(ref_rec *r, const odla_value_shape *s) {
  int32_t rank = s->size < 0 ? -1 : s->size; /* every negative rank means "undefined" */
  ref_log_put(r, &rank, sizeof rank);
  if (rank > 0)
    ref_log_put(r, s->dims, (size_t)rank * sizeof s->dims[0]);
}

void ref_rec_type(ref_rec *r, const odla_value_type *t) {
  ref_log_u32(r, (uint32_t)t->element_type);
  ref_rec_shape(r, &t->shape);
}

void ref_rec_4(ref_rec *r, const void *p) { ref_log_put(r, p, 4); }

void ref_rec_8(ref_rec *r, uint64_t v) { ref_log_put(r, &v, sizeof v); }

void ref_rec_array(ref_rec *r, const void *p, uint64_t n) {
  ref_log_u32(r, p ? (uint32_t)n : REF_CALL_NULL);
  if (p)
    ref_log_put(r, p, (size_t)n * 4);
}

void ref_rec_bytes(ref_rec *r, const void *p, uint32_t n) {
  ref_log_u32(r, p ? n : REF_CALL_NULL);
  if (p)
    ref_log_put(r, p, n);
}

void ref_rec_data(ref_rec *r, const void *p, const odla_value_type *t) {
  ref_call_log *l = r->log;
  uint64_t bytes = (uint64_t)ref_bytes(t);
  l->has_strings |= t->element_type == ODLA_STRING;
  ref_rec_8(r, l->weights_bytes);
  ref_rec_8(r, bytes);
  if (l->w.failed)
    return;
  if (l->num_data == l->cap_data) {
    int cap = l->cap_data ? 2 * l->cap_data : 64;
    const void **d = (const void **)ref_realloc((void *)l->data, (size_t)cap * sizeof *d);
    uint64_t *b = d ? (uint64_t *)ref_realloc(l->data_bytes, (size_t)cap * sizeof *b) : NULL;
    if (d)
      l->data = d;
    if (!d || !b) {
      l->w.failed = 1;
      return;
    }
    l->data_bytes = b;
    l->cap_data = cap;
  }
  l->data[l->num_data] = p;
  l->data_bytes[l->num_data++] = bytes;
  l->weights_bytes += (bytes + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
}

const ref_call_log *ref_call_log_of(odla_computation comp) { return comp->calls; }

void ref_free_call_log(odla_computation comp) {
  if (!comp->calls || comp->calls == &ref_no_log)
    return;
  ref_free(comp->calls->w.p);
  ref_free((void *)comp->calls->data);
  ref_free(comp->calls->data_bytes);
  ref_free(comp->calls);
  comp->calls = NULL;
}

int ref_call_rank(odla_value v) { return v && v->type.shape.size > 0 ? v->type.shape.size : 0; }

int64_t ref_call_length(odla_value v) {
  return ref_call_rank(v) == 1 && v->type.shape.dims[0] > 0 ? v->type.shape.dims[0] : 0;
}

/* ---- Replaying ---------------------------------------------------------------------- */

typedef struct ref_scratch {
  struct ref_scratch *next;
} ref_scratch;

void ref_replay_refuse(ref_replay *r, const char *fmt, ...) {
  va_list ap;
  if (r->bad)
    return;
  r->bad = 1;
  r->status = ODLA_INVALID_PARAM;
  va_start(ap, fmt);
  ref_vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
}

void *ref_replay_alloc(ref_replay *r, size_t n) {
  ref_scratch *s;
  if (r->bad)
    return NULL;
  if (n > ((size_t)-1) / 2 ||
      !(s = (ref_scratch *)ref_calloc(1, sizeof(ref_scratch) + REF_ALIGN + n))) {
    ref_replay_refuse(r, "out of memory");
    r->status = ODLA_MEM_ERROR;
    return NULL;
  }
  s->next = r->scratch;
  r->scratch = s;
  return (unsigned char *)s + REF_ALIGN; /* aligned as malloc's blocks, with room */
}

static void ref_replay_free_scratch(ref_replay *r) {
  while (r->scratch) {
    ref_scratch *next = r->scratch->next;
    ref_free(r->scratch);
    r->scratch = next;
  }
}

/* The next n bytes, or NULL (refused: the log ends) . */
static const unsigned char *ref_take(ref_replay *r, size_t n) {
  const unsigned char *p;
  if (r->bad)
    return NULL;
  if (n > r->len - r->at) {
    ref_replay_refuse(r, "the call log ends inside an argument (at byte %lu of %lu)",
                      (unsigned long)r->at, (unsigned long)r->len);
    return NULL;
  }
  p = r->p + r->at;
  r->at += n;
  return p;
}

static uint32_t ref_take_u32(ref_replay *r) {
  uint32_t v = 0;
  const unsigned char *p = ref_take(r, sizeof v);
  if (p)
    memcpy(&v, p, sizeof v);
  return v;
}

odla_value ref_get_value(ref_replay *r) {
  int32_t i = (int32_t)ref_take_u32(r);
  if (r->bad || i == -1)
    return NULL;
  if (i < 0 || i >= r->comp->num_values) {
    ref_replay_refuse(r, "value index %ld is not one of the %d values built so far", (long)i,
                      r->comp->num_values);
    return NULL;
  }
  return r->comp->values[i];
}

/* The count of an odla_values or odla_value_ids (`what`): at most ODLA_MAX_OUTPUTS. */
static uint32_t ref_take_count(ref_replay *r, const char *what) {
  uint32_t n = ref_take_u32(r);
  if (n > ODLA_MAX_OUTPUTS) {
    ref_replay_refuse(r, "%lu %s; an odla_%s holds at most %d", (unsigned long)n, what, what,
                      ODLA_MAX_OUTPUTS);
    return 0;
  }
  return n;
}

odla_values ref_get_values(ref_replay *r) {
  odla_values v;
  uint32_t n = ref_take_count(r, "values"), i;
  memset(&v, 0, sizeof v);
  for (i = 0; i < n && !r->bad; ++i)
    v.values[i] = ref_get_value(r);
  v.size = r->bad ? 0 : n;
  return v;
}

const char *ref_get_str(ref_replay *r) {
  uint32_t n = ref_take_u32(r);
  const unsigned char *p;
  char *s;
  if (r->bad || n == REF_CALL_NULL)
    return NULL;
  if (n > REF_CALL_MAX_STRING) {
    ref_replay_refuse(r, "a string of %lu bytes (at most %u)", (unsigned long)n,
                      REF_CALL_MAX_STRING);
    return NULL;
  }
  if (!(p = ref_take(r, n)))
    return NULL;
  if (memchr(p, '\0', n)) {
    ref_replay_refuse(r, "a string with a NUL byte inside");
    return NULL;
  }
  if (!(s = (char *)ref_replay_alloc(r, (size_t)n + 1)))
    return NULL;
  memcpy(s, p, n);
  return s;
}

odla_value_ids ref_get_ids(ref_replay *r) {
  odla_value_ids ids;
  uint32_t n = ref_take_count(r, "value_ids"), i;
  memset(&ids, 0, sizeof ids);
  for (i = 0; i < n && !r->bad; ++i)
    ids.value_ids[i] = (odla_value_id)(uintptr_t)ref_get_str(r);
  ids.size = r->bad ? 0 : n;
  return ids;
}

odla_value_shape ref_get_shape(ref_replay *r) {
  odla_value_shape s;
  const unsigned char *p;
  memset(&s, 0, sizeof s);
  s.size = (int32_t)ref_take_u32(r);
  if (r->bad || s.size < -1 || s.size > ODLA_MAX_DIMENSION) {
    ref_replay_refuse(r, "a shape of rank %ld (-1 to %d)", (long)s.size, ODLA_MAX_DIMENSION);
    s.size = 0;
    return s;
  }
  if (s.size > 0 && (p = ref_take(r, (size_t)s.size * sizeof s.dims[0])) != NULL)
    memcpy(s.dims, p, (size_t)s.size * sizeof s.dims[0]);
  return s;
}

odla_value_type ref_get_type(ref_replay *r) {
  odla_value_type t;
  uint32_t e = ref_take_u32(r);
  memset(&t, 0, sizeof t);
  t.element_type = (odla_element_type)e;
  t.shape = ref_get_shape(r);
  return t;
}

void ref_get_4(ref_replay *r, void *p) {
  const unsigned char *q = ref_take(r, 4);
  if (q)
    memcpy(p, q, 4);
  else
    memset(p, 0, 4);
}

uint64_t ref_get_8(ref_replay *r) {
  uint64_t v = 0;
  const unsigned char *p = ref_take(r, sizeof v);
  if (p)
    memcpy(&v, p, sizeof v);
  return v;
}

odla_size_t ref_get_size(ref_replay *r) {
  uint64_t v = ref_get_8(r);
  if (v > (uint64_t)(odla_size_t)-1) {
    ref_replay_refuse(r, "a size of %llu does not fit this machine", (unsigned long long)v);
    return 0;
  }
  return (odla_size_t)v;
}

/* A u32 count of `size`-byte elements, which must be `expected` (or REF_CALL_NULL), and the
 * elements, copied zero-padded to at least `pad` elements. */
static const void *ref_get_block(ref_replay *r, uint64_t expected, size_t size, uint32_t pad,
                                 const char *unit) {
  uint32_t n = ref_take_u32(r);
  const unsigned char *p;
  unsigned char *copy;
  if (r->bad || n == REF_CALL_NULL)
    return NULL;
  if (n != expected) {
    ref_replay_refuse(r, "an array of %lu %s where the call's other arguments make %llu",
                      (unsigned long)n, unit, (unsigned long long)expected);
    return NULL;
  }
  if (!(p = ref_take(r, (size_t)n * size)) ||
      !(copy = (unsigned char *)ref_replay_alloc(r, (size_t)(n > pad ? n : pad) * size)))
    return NULL;
  memcpy(copy, p, (size_t)n * size);
  return copy;
}

const void *ref_get_array(ref_replay *r, uint64_t expected) {
  return ref_get_block(r, expected, 4, REF_CALL_ARRAY_PAD, "elements");
}

const void *ref_get_bytes(ref_replay *r, uint64_t expected) {
  return ref_get_block(r, expected, 1, 8, "bytes");
}

const void *ref_get_data(ref_replay *r, const odla_value_type *t) {
  uint64_t off = ref_get_8(r), bytes = ref_get_8(r), want;
  if (r->bad || !ref_type_bytes(t, &want))
    return NULL;                        /* the builder refuses the type, with its own message */
  if (t->element_type == ODLA_STRING) { /* pointers: no file holds them (odlac never stores one) */
    ref_replay_refuse(r, "a string constant: its elements would be pointers read from the file");
    return NULL;
  }
  if (bytes != want || off % REF_ALIGN != 0 || off > r->weights_len ||
      bytes > r->weights_len - off) {
    ref_replay_refuse(
        r,
        "a constant of %llu bytes at offset %llu of the weights (the type makes %llu; "
        "the weights hold %llu, each constant 64-byte aligned)",
        (unsigned long long)bytes, (unsigned long long)off, (unsigned long long)want,
        (unsigned long long)r->weights_len);
    return NULL;
  }
  return r->weights + off;
}

void ref_replay_where(const ref_replay *r, char *buf, size_t cap) {
  ref_snprintf(buf, cap, "%s: call %lu of %lu (%s)", r->what, (unsigned long)r->call + 1,
               (unsigned long)r->num_calls, ref_call_name[r->call_index]);
}

/* Logs why the replay stops at the current call. */
static void ref_replay_log(const ref_replay *r, const char *why) {
  char where[256];
  ref_replay_where(r, where, sizeof where);
  ref_report(ODLA_LOG_LEVEL_ERROR, r->func, "%s: %s", where, why);
}

odla_status ref_replay_bad(ref_replay *r) {
  ref_replay_free_scratch(r);
  ref_replay_log(r, r->why);
  return r->status;
}

/* After a call: the builder refused it when the computation holds an error (builders record
 * their first error there, with their own logged message). */
odla_status ref_replay_status(ref_replay *r, odla_status s) {
  ref_replay_free_scratch(r);
  if (r->comp->error != ODLA_SUCCESS) /* the builder logged why, naming the call */
    return r->comp->error;
  if (s != ODLA_SUCCESS) {
    char why[64];
    ref_snprintf(why, sizeof why, "refused with status %d", (int)s);
    ref_replay_log(r, why);
  }
  return s;
}

odla_status ref_replay_value(ref_replay *r, odla_value v) {
  return ref_replay_status(r, v ? ODLA_SUCCESS : ODLA_INVALID_PARAM);
}

odla_status ref_replay_values(ref_replay *r, odla_values v) {
  (void)v; /* the computation's error says whether it failed */
  return ref_replay_status(r, ODLA_SUCCESS);
}

odla_status ref_replay_calls(ref_replay *r) {
  uint32_t n = ref_take_u32(r);
  odla_status s;
  r->call = 0;
  r->call_index = 0;
  if (r->bad || n > (r->len - r->at) / 4) {
    ref_report(ODLA_LOG_LEVEL_ERROR, r->func, "%s: corrupt call count (%lu in %lu bytes)", r->what,
               (unsigned long)n, (unsigned long)(r->len - r->at));
    return ODLA_INVALID_PARAM;
  }
  r->num_calls = n;
  for (r->call = 0; r->call < n; ++r->call) {
    uint32_t index = ref_take_u32(r);
    if (r->bad)
      return ref_replay_bad(r);
    if (index >= REF_NUM_CALLS) {
      ref_report(ODLA_LOG_LEVEL_ERROR, r->func,
                 "%s: call %lu of %lu: function index %lu is not in this library's table of %d "
                 "calls",
                 r->what, (unsigned long)r->call + 1, (unsigned long)n, (unsigned long)index,
                 REF_NUM_CALLS);
      return ODLA_INVALID_PARAM;
    }
    r->call_index = (int)index;
    r->comp->replaying = r;
    s = ref_call_table[index].replay(r);
    r->comp->replaying = NULL;
    if (s != ODLA_SUCCESS)
      return s;
  }
  /* The log ends with zeros up to the weights' 64-byte alignment. */
  if (r->len - r->at >= REF_ALIGN ||
      (r->len > r->at &&
       (r->p[r->at] != 0 || memcmp(r->p + r->at, r->p + r->at + 1, r->len - r->at - 1) != 0))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, r->func, "%s: %lu bytes after the last of %lu calls", r->what,
               (unsigned long)(r->len - r->at), (unsigned long)n);
    return ODLA_INVALID_PARAM;
  }
  return ODLA_SUCCESS;
}
