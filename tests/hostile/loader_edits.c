/* loader_edits.c: random structural edits of stored executables, loaded and run by a
 * libodla_reference built with AddressSanitizer and UndefinedBehaviorSanitizer (the
 * hostile.loader_edits test builds both with clang-14; loader_edits.py drives it).
 *
 * Usage: loader_edits --seed S --edits N [--keep DIR] [--new-calls] FILE.odlx...
 *        (--new-calls: only edits that append calls, which reach every builder)
 *        loader_edits --run FILE.odlx   (loads and runs one file as it is: a kept edit)
 *
 * Each file is first loaded and run unedited (it must succeed). Then each edit takes one file,
 * changes it field by field the way an attacker who knows the format would (the fields are
 * found by walking the call log with the library's own ref_call_table and its argument kinds:
 * call indices, value indices, counts, string and array lengths, ranks, dims, element types,
 * scalar arguments, constants' data offsets and sizes; or deletes, duplicates or swaps whole
 * calls; or appends calls of any builder of the table with well-formed arguments of its
 * kinds: existing values, small and extreme shapes, types, scalars and arrays), lays the file
 * out again with a valid checksum, and loads it from memory and runs
 * it in a forked child. The child must exit normally: refused with a status and a logged
 * message, or loaded and run (with any status). A signal, a sanitizer report (exit 86), a
 * leak, or a refusal without a message is a failure; the edit is described and, with --keep,
 * written to DIR. A child still running after 5 s is counted as slow (an edit may ask for a
 * long computation, which no loader can refuse), not as a failure. Every 8th child exits
 * through LeakSanitizer's check (a leak fails the edit); the others skip it, for speed. The child
 * does not run a loaded executable whose memory exceeds 64 MiB (counted apart). Prints counts per
 * outcome; exits 1 when any edit failed. */
#define _POSIX_C_SOURCE 200809L
#include "calls.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SANITIZER_EXIT 86
#define RUN_LIMIT (64u << 20)
#define CHILD_SECONDS 5
#define LEAK_CHECK_EVERY 8 /* edits; LeakSanitizer costs 20 ms per check */

/* ---- The application's custom op (the custom-op model's AffineTile) ---------------------- */

/* Checks everything it reads, as an application's shape function must for any attributes:
 * `repeat` (an INT attribute) copies of a 2-D float input, and a count per row. */
static odla_status tile_shape(const odla_ext_custom_call *call, odla_value_type *out) {
  odla_int64 r = 0;
  int i;
  for (i = 0; i < call->num_attrs; ++i)
    if (call->attrs[i].kind == ODLA_EXT_ATTR_INT && strcmp(call->attrs[i].name, "repeat") == 0)
      r = *(const odla_int64 *)call->attrs[i].data;
  if (call->num_inputs != 1 || call->num_outputs != 2 || r < 1 || r > 16 ||
      call->input_types[0].shape.size != 2 || call->input_types[0].shape.dims[1] > (1 << 20))
    return ODLA_INVALID_PARAM;
  out[0] = call->input_types[0];
  out[0].shape.dims[1] *= r;
  out[1].element_type = ODLA_INT64;
  out[1].shape.size = 1;
  out[1].shape.dims[0] = call->input_types[0].shape.dims[0];
  return ODLA_SUCCESS;
}

/* Writes every element of its outputs from the types it is given. */
static odla_status tile_kernel(const odla_ext_custom_call *call, const odla_void *const *in,
                               odla_void *const *out) {
  odla_int64 i, n0 = 1, n1 = 1;
  int d;
  (void)in;
  for (d = 0; d < call->output_types[0].shape.size; ++d)
    n0 *= call->output_types[0].shape.dims[d];
  for (d = 0; d < call->output_types[1].shape.size; ++d)
    n1 *= call->output_types[1].shape.dims[d];
  for (i = 0; i < n0; ++i)
    ((float *)out[0])[i] = 1.0f;
  for (i = 0; i < n1; ++i)
    ((odla_int64 *)out[1])[i] = 1;
  return ODLA_SUCCESS;
}

/* ---- The fields of a stored executable ------------------------------------------------ */

typedef enum {
  F_NUM_CALLS,
  F_CALL,
  F_VALUE,
  F_COUNT,
  F_STRLEN,
  F_RANK,
  F_DIM,
  F_ELEM,
  F_SCALAR4,
  F_SCALAR8,
  F_DATA_OFF,
  F_DATA_BYTES,
  F_FLAGS,
  F_NUM_KINDS
} field_kind;

static const char *const field_names[F_NUM_KINDS] = {
    "call count",  "call index", "value index",    "count",           "string length",
    "rank",        "dim",        "element type",   "4-byte argument", "8-byte argument",
    "data offset", "data size",  "attribute flags"};

typedef struct {
  size_t at; /* offset in the file */
  field_kind kind;
} field;

typedef struct {
  size_t start, end; /* bytes of one call */
} call_span;

typedef struct {
  const char *path;
  unsigned char *bytes;
  size_t len, data, log_end; /* data: the weights offset; log_end: where the calls end */
  field *fields;
  int num_fields, cap_fields;
  call_span *calls;
  int num_calls, max_value;
  int num_values; /* of the unedited file's computation, once loaded */
} stored;

typedef struct {
  const unsigned char *p;
  size_t at, end;
  int bad;
  uint32_t last_ids; /* ids of the call's last odla_value_ids: a CustomOp's result count */
  stored *s;
} walker;

static void add_field(walker *w, size_t at, field_kind kind) {
  stored *s = w->s;
  if (s->num_fields == s->cap_fields) {
    s->cap_fields = s->cap_fields ? 2 * s->cap_fields : 256;
    s->fields = (field *)realloc(s->fields, (size_t)s->cap_fields * sizeof *s->fields);
    if (!s->fields)
      abort();
  }
  s->fields[s->num_fields].at = at;
  s->fields[s->num_fields++].kind = kind;
}

static uint32_t take(walker *w, size_t n, field_kind kind) {
  uint32_t v = 0;
  if (w->bad || n > w->end - w->at) {
    w->bad = 1;
    return 0;
  }
  if (kind != F_NUM_KINDS)
    add_field(w, w->at, kind);
  if (n == 4)
    memcpy(&v, w->p + w->at, 4);
  w->at += n;
  return v;
}

static void walk_str(walker *w, field_kind kind) {
  uint32_t n = take(w, 4, kind);
  if (n != 0xffffffffu)
    take(w, n, F_NUM_KINDS);
}

static void walk_shape(walker *w) {
  int32_t rank = (int32_t)take(w, 4, F_RANK), i;
  for (i = 0; i < rank && !w->bad; ++i)
    take(w, 8, F_DIM);
}

static void walk_kind(walker *w, char k) {
  uint32_t n, i;
  switch (k) {
  case 'v': {
    int32_t v = (int32_t)take(w, 4, F_VALUE);
    if (v > w->s->max_value)
      w->s->max_value = v;
    break;
  }
  case 'V':
    n = take(w, 4, F_COUNT);
    for (i = 0; i < n && !w->bad; ++i)
      walk_kind(w, 'v');
    break;
  case 'i':
  case 'c':
    walk_str(w, F_STRLEN);
    break;
  case 'I':
    n = w->last_ids = take(w, 4, F_COUNT);
    for (i = 0; i < n && !w->bad; ++i)
      walk_str(w, F_STRLEN);
    break;
  case 's':
    walk_shape(w);
    break;
  case 't':
    take(w, 4, F_ELEM);
    walk_shape(w);
    break;
  case '4':
    take(w, 4, F_SCALAR4);
    break;
  case '8':
  case 'z':
    take(w, 8, F_SCALAR8);
    break;
  case 'C':
    break;
  case 'a':
    n = take(w, 4, F_COUNT);
    for (i = 0; n != 0xffffffffu && i < n && !w->bad; ++i)
      take(w, 4, F_SCALAR4);
    break;
  case 'd':
    take(w, 8, F_DATA_OFF);
    take(w, 8, F_DATA_BYTES);
    break;
  case 'P': { /* ops_custom.c's attribute block */
    uint32_t flags = take(w, 4, F_FLAGS), num_attrs;
    if (!(flags & 1))
      break;
    take(w, 4, F_SCALAR4); /* version */
    num_attrs = take(w, 4, F_COUNT);
    for (i = 0; i < num_attrs && !w->bad; ++i) {
      walk_str(w, F_STRLEN);
      take(w, 4, F_SCALAR4); /* kind */
      take(w, 4, F_COUNT);   /* count */
      walk_str(w, F_STRLEN); /* the data, as bytes */
    }
    for (i = 0; flags & 2 && i < w->last_ids && !w->bad; ++i)
      walk_kind(w, 't'); /* one result type per id */
    break;
  }
  default:
    w->bad = 1;
  }
}

/* Finds the fields of s (its bytes already read); returns 0 when it cannot walk them. */
static int walk(stored *s) {
  walker w;
  uint32_t n, c;
  uint64_t data;
  memcpy(&data, s->bytes + 48, 8);
  s->data = (size_t)data;
  memset(&w, 0, sizeof w);
  w.p = s->bytes;
  w.at = 64;
  w.end = s->data;
  w.s = s;
  n = take(&w, 4, F_NUM_CALLS);
  s->calls = (call_span *)calloc(n + 1, sizeof *s->calls);
  for (c = 0; c < n && !w.bad; ++c) {
    uint32_t index;
    const char *k;
    s->calls[c].start = w.at;
    index = take(&w, 4, F_CALL);
    if (index >= REF_NUM_CALLS)
      return 0;
    for (k = ref_call_table[index].kinds; *k && !w.bad; ++k)
      walk_kind(&w, *k);
    s->calls[c].end = w.at;
    s->num_calls = (int)c + 1;
  }
  s->log_end = w.at;
  return !w.bad;
}

/* ---- Edits ---------------------------------------------------------------------------- */

static uint64_t rng_state;
static int only_new_calls;

static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t pick(const uint64_t *choices, int n) { return choices[rnd() % (uint64_t)n]; }

/* A new value for a field holding `old`, of the kind's interesting values. */
static uint64_t new_value(const stored *s, field_kind kind, uint64_t old) {
  const uint64_t wl = s->len - s->data;
  switch (kind) {
  case F_VALUE: {
    const uint64_t c[] = {(uint64_t)-2,
                          (uint64_t)-1,
                          old + 1,
                          old - 1,
                          (uint64_t)s->max_value + 1,
                          rnd() % (uint64_t)(s->max_value + 3),
                          0x80000000u,
                          0x7fffffffu,
                          0};
    return pick(c, 9);
  }
  case F_CALL: {
    const uint64_t c[] = {rnd() % REF_NUM_CALLS,       rnd() % REF_NUM_CALLS, REF_NUM_CALLS,
                          REF_NUM_CALLS + rnd() % 100, 0xffffffffu,           old ^ 1};
    return pick(c, 6);
  }
  case F_NUM_CALLS:
  case F_COUNT:
  case F_STRLEN:
  case F_RANK: {
    const uint64_t c[] = {0,  1,           old + 1,     old - 1,      old * 2,       10, 11, 64,
                          65, 0xffffffffu, 0x7fffffffu, (uint64_t)-2, rnd() & 0xffff};
    return pick(c, 13);
  }
  case F_DIM: {
    const uint64_t c[] = {0,
                          1,
                          (uint64_t)-1,
                          2,
                          old + 1,
                          old * 2,
                          old * 1000,
                          1ull << 31,
                          1ull << 40,
                          0x7fffffffffffffffull,
                          0x8000000000000000ull,
                          rnd()};
    return pick(c, 12);
  }
  case F_ELEM:
    return rnd() % 4 ? rnd() % 24 : rnd();
  case F_DATA_OFF: {
    const uint64_t c[] = {old + 64, old - 64, 0, wl, wl + 64, (uint64_t)-64, old + 1, rnd()};
    return pick(c, 8);
  }
  case F_DATA_BYTES: {
    const uint64_t c[] = {old + 1, old - 1, 0, old * 2, wl, (uint64_t)-1, old + 64};
    return pick(c, 7);
  }
  case F_FLAGS:
    return rnd() % 8;
  default: { /* scalars: small, extreme, float specials, a flipped bit */
    const uint64_t c[] = {0,
                          1,
                          2,
                          3,
                          4,
                          (uint64_t)-1,
                          0x7fffffff,
                          0x80000000u,
                          0x7fc00000u,
                          0x7f800000u,
                          0xff800000u,
                          0x7149f2ca,
                          old ^ (1ull << (rnd() % 32)),
                          rnd() % 17,
                          rnd()};
    return pick(c, 15);
  }
  }
}

static int field_bytes(field_kind kind) {
  return kind == F_DIM || kind == F_SCALAR8 || kind == F_DATA_OFF || kind == F_DATA_BYTES ? 8 : 4;
}

enum { E_NEW_CALLS, E_FIELDS, E_BYTES, E_CALLS, E_NUM };
static const char *const edit_names[E_NUM] = {"new calls", "fields", "bytes", "whole calls"};

typedef struct {
  unsigned char *p;
  size_t len;
  int kind; /* E_* */
  char what[200];
} edited;

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  size_t i;
  for (i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Lays out header, `log` (log_len bytes: the call count and calls), padding and s's weights,
 * with a valid size, data offset and checksum. */
static void lay_out(const stored *s, const unsigned char *log, size_t log_len, edited *e) {
  size_t data = 64 + (log_len + 63) / 64 * 64, weights = s->len - s->data;
  uint64_t total, sum, d;
  e->len = data + weights;
  e->p = (unsigned char *)calloc(1, e->len + 64);
  if (!e->p)
    abort();
  memcpy(e->p, s->bytes, 64);
  memcpy(e->p + 64, log, log_len);
  memcpy(e->p + data, s->bytes + s->data, weights);
  total = e->len;
  d = data;
  sum = fnv1a(e->p + 64, data - 64);
  memcpy(e->p + 32, &total, 8);
  memcpy(e->p + 40, &sum, 8);
  memcpy(e->p + 48, &d, 8);
}

/* ---- New calls: any builder, with well-formed arguments ----------------------------- */

typedef struct {
  unsigned char *p;
  size_t len;
} sink;

static void emit(sink *k, const void *data, size_t n) {
  memcpy(k->p + k->len, data, n);
  k->len += n;
}

static void emit_u32(sink *k, uint32_t v) { emit(k, &v, 4); }

static void emit_str(sink *k, const char *str) {
  emit_u32(k, (uint32_t)strlen(str));
  emit(k, str, strlen(str));
}

static int32_t small_dim(void) {
  const int32_t c[] = {0, 1, 1, 2, 3, 4, 5, 7, 8, 16};
  return rnd() % 16 ? c[rnd() % 10] : (int32_t)(rnd() % 100000);
}

static void emit_shape(sink *k) {
  int32_t rank = rnd() % 8 ? (int32_t)(rnd() % 5) : (rnd() % 2 ? -1 : 10), i;
  emit_u32(k, (uint32_t)rank);
  for (i = 0; i < rank; ++i) {
    int64_t d = small_dim();
    emit(k, &d, 8);
  }
}

/* One argument of kind `kind` for a new call of s's computation: `fresh` numbers new ids, and
 * `type_at` remembers where the last type is (a constant's data follows its type). */
static void emit_arg(const stored *s, sink *k, char kind, int *fresh, size_t *type_at) {
  uint32_t n, i;
  switch (kind) {
  case 'v': {
    int32_t v = rnd() % 8 ? (int32_t)(rnd() % (uint64_t)s->num_values) : -1;
    emit_u32(k, (uint32_t)v);
    break;
  }
  case 'V':
    n = 1 + (uint32_t)(rnd() % 4);
    emit_u32(k, n);
    for (i = 0; i < n; ++i)
      emit_arg(s, k, 'v', fresh, type_at);
    break;
  case 'i': {
    char id[32];
    snprintf(id, sizeof id, "new%d", (*fresh)++);
    emit_str(k, id);
    break;
  }
  case 'I':
    n = 1 + (uint32_t)(rnd() % 4);
    emit_u32(k, n);
    for (i = 0; i < n; ++i)
      emit_arg(s, k, 'i', fresh, type_at);
    break;
  case 'c': {
    const char *c[] = {"ij,jk->ik",  "i,i->", "bij,bjk->bik", "ii->i",         "ij->ji",
                       "AffineTile", "",      "com.example",  "...i,...i->..."};
    emit_str(k, c[rnd() % 9]);
    break;
  }
  case 's':
    emit_shape(k);
    break;
  case 't':
    *type_at = k->len;
    emit_u32(k, rnd() % 8 ? (uint32_t)(rnd() % 21) : ODLA_FLOAT32);
    emit_shape(k);
    break;
  case '4': {
    const uint32_t c[] = {0,           1,           2,           3,
                          4,           5,           0xffffffffu, 0x3f800000u /* 1.0f */,
                          0xbf800000u, 0x7fc00000u, 0x7f800000u, 0x80000000u,
                          0x7fffffffu, 16,          100};
    emit_u32(k, c[rnd() % 15]);
    break;
  }
  case '8':
  case 'z': {
    const uint64_t c[] = {0, 1, 2, 3, 10, (uint64_t)-1, 1ull << 40, 0x7fffffffffffffffull};
    emit(k, &c[rnd() % 8], 8);
    break;
  }
  case 'a': { /* the replayer checks the length the other arguments make: often it fits */
    n = rnd() % 8 ? (uint32_t)(rnd() % 5) : 0xffffffffu;
    emit_u32(k, n);
    for (i = 0; n != 0xffffffffu && i < n; ++i)
      emit_u32(k, rnd() % 4 ? (uint32_t)(rnd() % 4) : (uint32_t)rnd());
    break;
  }
  case 'd': { /* the data of the type just emitted, at the start of the weights */
    odla_value_type t;
    uint64_t off = 0, bytes = 0;
    const unsigned char *q = k->p + *type_at;
    int32_t rank;
    memset(&t, 0, sizeof t);
    memcpy(&t.element_type, q, 4);
    memcpy(&rank, q + 4, 4);
    t.shape.size = rank;
    if (rank >= 0 && rank <= ODLA_MAX_DIMENSION)
      memcpy(t.shape.dims, q + 8, (size_t)rank * 8);
    if (!ref_type_bytes(&t, &bytes) || bytes > s->len - s->data)
      bytes = 0;
    emit(k, &off, 8);
    emit(k, &bytes, 8);
    break;
  }
  case 'P':
    emit_u32(k, 0);
    break; /* no attribute block */
  default:
    break;
  }
}

/* Appends 1 to 3 calls of random builders to the log (of log_len bytes, room for 16 KiB more). */
static void add_calls(const stored *s, unsigned char *log, size_t *log_len, char *what,
                      size_t cap) {
  sink k;
  uint32_t count, c, n = 1 + (uint32_t)(rnd() % 3);
  int fresh = 0;
  k.p = log;
  k.len = *log_len;
  what[0] = '\0';
  for (c = 0; c < n; ++c) {
    uint32_t index = (uint32_t)(rnd() % REF_NUM_CALLS);
    const char *kind;
    size_t type_at = 0;
    emit_u32(&k, index);
    for (kind = ref_call_table[index].kinds; *kind; ++kind)
      emit_arg(s, &k, *kind, &fresh, &type_at);
    snprintf(what + strlen(what), cap - strlen(what), "%s%s",
             c ? ", " : "new calls: ", ref_call_name[index]);
  }
  memcpy(&count, log, 4);
  count += n;
  memcpy(log, &count, 4);
  *log_len = k.len;
}

static void edit(const stored *s, edited *e) {
  size_t log_len = s->log_end - 64;
  unsigned char *log = (unsigned char *)malloc(2 * log_len + 16384);
  unsigned r = (unsigned)(rnd() % 100);
  if (!log)
    abort();
  memcpy(log, s->bytes + 64, log_len);
  e->kind = r < 30 || only_new_calls     ? E_NEW_CALLS
            : r < 80 || s->num_calls < 2 ? E_FIELDS
            : r < 88                     ? E_BYTES
                                         : E_CALLS;
  if (e->kind == E_NEW_CALLS) {
    add_calls(s, log, &log_len, e->what, sizeof e->what);
  } else if (e->kind == E_FIELDS) { /* one to three fields */
    int k, n = 1 + (int)(rnd() % 3);
    e->what[0] = '\0';
    for (k = 0; k < n; ++k) {
      const field *f = &s->fields[rnd() % (uint64_t)s->num_fields];
      uint64_t old = 0, v;
      int bytes = field_bytes(f->kind);
      memcpy(&old, log + (f->at - 64), (size_t)bytes);
      v = new_value(s, f->kind, old);
      memcpy(log + (f->at - 64), &v, (size_t)bytes);
      snprintf(e->what + strlen(e->what), sizeof e->what - strlen(e->what),
               "%s%s at byte %lu: %llu -> %llu", k ? "; " : "", field_names[f->kind],
               (unsigned long)f->at, (unsigned long long)old, (unsigned long long)v);
    }
  } else if (e->kind == E_BYTES) { /* random bytes of the log */
    size_t at = 4 + rnd() % (log_len - 4);
    log[at] = (unsigned char)rnd();
    snprintf(e->what, sizeof e->what, "byte %lu of the log set", (unsigned long)(at + 64));
  } else { /* whole calls: delete, duplicate, swap with the next */
    int c = (int)(rnd() % (uint64_t)(s->num_calls - 1)), how = (int)(rnd() % 3);
    const call_span *a = &s->calls[c], *b = &s->calls[c + 1];
    size_t as = a->start - 64, ae = a->end - 64, be = b->end - 64;
    if (how == 0) { /* delete call c */
      memmove(log + as, log + ae, log_len - ae);
      log_len -= ae - as;
    } else if (how == 1) { /* call c twice */
      memmove(log + ae + (ae - as), log + ae, log_len - ae);
      memcpy(log + ae, s->bytes + a->start, ae - as);
      log_len += ae - as;
    } else { /* c and c + 1 swapped */
      memcpy(log + as, s->bytes + b->start, be - (ae));
      memcpy(log + as + (be - ae), s->bytes + a->start, ae - as);
    }
    if (how != 2 && rnd() % 2) { /* keep the call count consistent, or not */
      uint32_t n;
      memcpy(&n, log, 4);
      n = how == 0 ? n - 1 : n + 1;
      memcpy(log, &n, 4);
    }
    snprintf(e->what, sizeof e->what, "call %d %s", c + 1,
             how == 0   ? "deleted"
             : how == 1 ? "duplicated"
                        : "swapped with the next");
  }
  lay_out(s, log, log_len, e);
  free(log);
}

/* ---- Loading and running (in the child) ---------------------------------------------- */

static int messages;

static void count_message(const char *file, int line, const char *func, odla_log_level level,
                          const char *msg) {
  (void)file, (void)line, (void)func, (void)level, (void)msg;
  ++messages;
}

/* Fills n bytes of an input of element type t with small valid numbers. */
static void fill(odla_element_type t, unsigned char *p, uint64_t bytes) {
  uint64_t i;
  for (i = 0; i < bytes; ++i)
    p[i] = (unsigned char)(i % 3);
  if (t == ODLA_FLOAT32)
    for (i = 0; i + 4 <= bytes; i += 4) {
      float f = (float)(i % 7) * 0.25f - 0.5f;
      memcpy(p + i, &f, 4);
    }
}

/* Child exit codes: 0 ran, 1 ran with an error status, 2 loaded but too large to run,
 * 3 refused (with a message), 4 refused without any message. */
static int load_and_run(const unsigned char *p, size_t len) {
  odla_resource_location loc;
  odla_executable exe = NULL;
  odla_context ctx = NULL;
  odla_uint32 na = 0, no = 0, i;
  void *bufs[2 * ODLA_MAX_OUTPUTS];
  int nb = 0, rc = 0;
  uint64_t total;
  odla_status s;
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = p;
  loc.size = len;
  messages = 0;
  s = odla_LoadExecutable(loc, NULL, &exe);
  if (s != ODLA_SUCCESS)
    return exe ? 5 : messages ? 3 : 4;
  total = exe->comp->arena_bytes;
  odla_GetNumOfArgsFromExecutable(exe, &na);
  odla_GetNumOfOutputsFromExecutable(exe, &no);
  if (odla_CreateContext(&ctx) != ODLA_SUCCESS)
    abort();
  for (i = 0; i < na + no && rc == 0; ++i) {
    odla_value v = NULL;
    odla_value_type t;
    odla_value_id id;
    uint64_t bytes;
    if ((i < na ? odla_GetArgFromExecutableByIdx(exe, i, &v)
                : odla_GetOutputFromExecutableByIdx(exe, i - na, &v)) != ODLA_SUCCESS ||
        odla_GetValueType(v, &t) != ODLA_SUCCESS || odla_GetValueId(v, &id) != ODLA_SUCCESS ||
        !ref_type_bytes(&t, &bytes))
      abort(); /* a loaded executable's own values must answer */
    total += bytes;
    if (total > RUN_LIMIT || nb == 2 * ODLA_MAX_OUTPUTS) {
      rc = 2;
      break;
    }
    if (!(bufs[nb] = calloc(1, (size_t)bytes + 64)))
      abort();
    if (i < na) {
      fill(t.element_type, (unsigned char *)bufs[nb], bytes);
      odla_BindToArgumentById(id, bufs[nb], ctx);
    } else {
      odla_BindToOutputById(id, bufs[nb], ctx);
    }
    ++nb;
  }
  if (rc == 0)
    rc = odla_LaunchExecutable(exe, ctx) == ODLA_SUCCESS ? 0 : 1;
  odla_DestroyContext(ctx);
  while (nb > 0)
    free(bufs[--nb]);
  odla_DestroyExecutable(exe);
  return rc;
}

/* The values of the computation an unedited file (which loads) builds. */
static int count_values(const stored *s) {
  odla_resource_location loc;
  odla_executable exe = NULL;
  int n;
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = s->bytes;
  loc.size = s->len;
  if (odla_LoadExecutable(loc, NULL, &exe) != ODLA_SUCCESS)
    abort();
  n = exe->comp->num_values;
  odla_DestroyExecutable(exe);
  return n;
}

/* ---- The driver ----------------------------------------------------------------------- */

enum { O_RAN, O_RAN_FAILED, O_TOO_BIG, O_REFUSED, O_SLOW, O_FAILED, O_NUM };
static const char *const outcome_names[O_NUM] = {
    "loaded and ran", "loaded, run failed cleanly", "loaded, too large to run",
    "refused",        "slow (killed after 5 s)",    "FAILED"};

/* Runs one image in a child, checking for leaks at its exit when `leaks`; returns the outcome
 * and describes a failure in `why`. */
static int try_image(const unsigned char *p, size_t len, int leaks, char *why, size_t cap) {
  int status;
  pid_t pid;
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int rc;
    alarm(CHILD_SECONDS);
    rc = load_and_run(p, len);
    if (leaks)
      exit(rc); /* LeakSanitizer checks at exit */
    _exit(rc);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      perror("waitpid");
      exit(2);
    }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return O_SLOW;
  if (WIFSIGNALED(status)) {
    snprintf(why, cap, "killed by signal %d", WTERMSIG(status));
    return O_FAILED;
  }
  switch (WEXITSTATUS(status)) {
  case 0:
    return O_RAN;
  case 1:
    return O_RAN_FAILED;
  case 2:
    return O_TOO_BIG;
  case 3:
    return O_REFUSED;
  case 4:
    snprintf(why, cap, "refused without a logged message");
    return O_FAILED;
  case 5:
    snprintf(why, cap, "refused but returned an executable");
    return O_FAILED;
  case SANITIZER_EXIT:
    snprintf(why, cap, "a sanitizer report (above)");
    return O_FAILED;
  default:
    snprintf(why, cap, "exit status %d", WEXITSTATUS(status));
    return O_FAILED;
  }
}

static void free_file(stored *s) {
  free(s->bytes);
  free(s->fields);
  free(s->calls);
}

static int read_file(const char *path, stored *s) {
  FILE *f = fopen(path, "rb");
  long n;
  memset(s, 0, sizeof *s);
  s->path = path;
  int ok = f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 64 && fseek(f, 0, SEEK_SET) == 0;
  if (ok) {
    s->len = (size_t)n;
    s->bytes = (unsigned char *)malloc(s->len);
    ok = s->bytes && fread(s->bytes, 1, s->len, f) == s->len;
  }
  if (f)
    fclose(f);
  return ok;
}

int main(int argc, char **argv) {
  long edits = 0, e;
  unsigned long long seed = 0;
  int nfiles = 0, i, failures = 0;
  const char *keep = NULL;
  stored files[32];
  long counts[32][O_NUM], by_kind[E_NUM][O_NUM];
  char why[200];
  memset(counts, 0, sizeof counts);
  memset(by_kind, 0, sizeof by_kind);
  if (!getenv("LOADER_EDITS_CHILD")) { /* the sanitizers read their options at start-up */
    setenv("LOADER_EDITS_CHILD", "1", 1);
    setenv("ASAN_OPTIONS", "exitcode=86:allocator_may_return_null=1:detect_leaks=1", 1);
    setenv("UBSAN_OPTIONS", "exitcode=86:halt_on_error=1:print_stacktrace=1", 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    return 2;
  }
  if (argc == 3 && strcmp(argv[1], "--run") == 0) {
    stored s;
    int rc;
    odla_ExtRegisterCustomOp("AffineTile", tile_kernel, tile_shape, NULL);
    if (!read_file(argv[2], &s))
      return 2;
    rc = load_and_run(s.bytes, s.len);
    printf("loader_edits: %s: child exit status %d\n", argv[2], rc);
    free_file(&s);
    return rc;
  }
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      rng_state = seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--edits") == 0 && i + 1 < argc)
      edits = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--new-calls") == 0)
      only_new_calls = 1;
    else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
      keep = argv[++i];
    else if (nfiles < 32 && read_file(argv[i], &files[nfiles]) && walk(&files[nfiles]))
      ++nfiles;
    else {
      fprintf(stderr, "loader_edits: cannot read or walk '%s'\n", argv[i]);
      while (nfiles >= 0)
        free_file(&files[nfiles--]);
      return 2;
    }
  }
  if (!nfiles || edits <= 0) {
    for (i = 0; i < nfiles; ++i)
      free_file(&files[i]);
    fprintf(stderr, "usage: loader_edits --seed S --edits N [--keep DIR] FILE.odlx...\n");
    return 2;
  }
  odla_SetLogger(count_message);
  if (odla_ExtRegisterCustomOp("AffineTile", tile_kernel, tile_shape, NULL) != ODLA_SUCCESS)
    return 2;
  for (i = 0; i < nfiles && failures == 0; ++i) {
    int o = try_image(files[i].bytes, files[i].len, 1, why, sizeof why);
    if (o == O_RAN)
      files[i].num_values = count_values(&files[i]);
    if (o != O_RAN) {
      fprintf(stderr, "loader_edits: the unedited %s does not load and run (%s)\n", files[i].path,
              o == O_FAILED ? why : outcome_names[o]);
      ++failures;
    }
  }
  if (failures)
    edits = 0;
  for (e = 0; e < edits; ++e) {
    int f = (int)(e % nfiles), o;
    edited ed;
    edit(&files[f], &ed);
    why[0] = '\0';
    o = try_image(ed.p, ed.len, e % LEAK_CHECK_EVERY == 0, why, sizeof why);
    ++counts[f][o];
    ++by_kind[ed.kind][o];
    if (o == O_FAILED) {
      ++failures;
      fprintf(stderr, "FAILED: %s, edit %ld (%s): %s\n", files[f].path, e, ed.what, why);
      if (keep) {
        char path[4096];
        FILE *out;
        snprintf(path, sizeof path, "%s/edit_%ld.odlx", keep, e);
        if ((out = fopen(path, "wb")) != NULL) {
          fwrite(ed.p, 1, ed.len, out);
          fclose(out);
        }
      }
    }
    free(ed.p);
  }
  for (i = 0; i < nfiles; ++i) {
    int o;
    printf("%s: %ld fields, %d calls:", files[i].path, (long)files[i].num_fields,
           files[i].num_calls);
    for (o = 0; o < O_NUM; ++o)
      printf(" %s %ld%s", outcome_names[o], counts[i][o], o + 1 < O_NUM ? "," : "\n");
  }
  for (i = 0; i < E_NUM; ++i)
    printf("edits of %s: %ld loaded and ran, %ld refused, %ld other\n", edit_names[i],
           by_kind[i][O_RAN] + by_kind[i][O_RAN_FAILED], by_kind[i][O_REFUSED],
           by_kind[i][O_TOO_BIG] + by_kind[i][O_SLOW] + by_kind[i][O_FAILED]);
  printf("loader_edits: %ld edits, seed %llu, %d failed\n", edits, seed, failures);
  for (i = 0; i < nfiles; ++i)
    free_file(&files[i]);
  return failures ? 1 : 0;
}
