/* ops_string.c: the string ops of odla_ext_string.h in the reference backend (ExtStringConcat,
 * ExtStringNormalizer, ExtStringSplit, ExtLabelEncoder) and the pool their results' bytes come
 * from.
 *
 * Elements are odla_string pointers to NUL-terminated UTF-8. A kernel writes new strings into
 * the pool of the running context (ref_io.strings), never into the arena: their lengths are
 * known only from the data. Results that are whole operand strings (StringNormalizer without
 * a case change) point at the operand's bytes. */
#include "ops_binary.h"
#include "ref.h"
#include "ref_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The string pool ------------------------------------------------------------------- */

struct ref_string_block {
  ref_string_block *next;
  size_t used, cap;
  /* then cap bytes */
};

enum { REF_STRING_BLOCK = 16384 };

char *ref_string_alloc(ref_string_pool *pool, size_t bytes) {
  ref_string_block *b = pool->head;
  if (!b || b->cap - b->used < bytes) {
    size_t cap = bytes > REF_STRING_BLOCK ? bytes : REF_STRING_BLOCK;
    if (cap > (size_t)-1 - sizeof *b)
      return NULL;
    b = (ref_string_block *)ref_malloc(sizeof *b + cap);
    if (!b)
      return NULL;
    b->next = pool->head;
    b->used = 0;
    b->cap = cap;
    pool->head = b;
  }
  b->used += bytes;
  return (char *)(b + 1) + (b->used - bytes);
}

void ref_string_pool_free(ref_string_pool *pool) {
  while (pool->head) {
    ref_string_block *next = pool->head->next;
    ref_free(pool->head);
    pool->head = next;
  }
}

/* A copy of the n bytes at s, NUL-terminated, in the pool; NULL when out of memory. */
static const char *ref_string_copy(ref_string_pool *pool, const char *s, size_t n) {
  char *d = ref_string_alloc(pool, n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = 0;
  }
  return d;
}

static int ref_is_string(odla_value v) { return v->type.element_type == ODLA_STRING; }

/* ---- ExtStringConcat ------------------------------------------------------------------- */

typedef struct {
  ref_string_pool *pool;
  int failed;
} ref_concat_ctx;

static void ref_concat_row(void *vy, const void *const *in, const int64_t *s, int64_t n,
                           const void *vctx) {
  ref_concat_ctx *ctx = (ref_concat_ctx *)(uintptr_t)vctx;
  const odla_string *a = (const odla_string *)in[0], *b = (const odla_string *)in[1];
  odla_string *y = (odla_string *)vy;
  int64_t i;
  for (i = 0; i < n && !ctx->failed; ++i) {
    const char *x = a[i * s[0]], *z = b[i * s[1]];
    size_t lx = strlen(x), lz = strlen(z);
    char *d = ref_string_alloc(ctx->pool, lx + lz + 1);
    if (!d) {
      ctx->failed = 1;
      return;
    }
    memcpy(d, x, lx);
    memcpy(d + lx, z, lz + 1);
    y[i] = d;
  }
}

static odla_status ref_concat_run(const ref_node *node, const ref_io *io) {
  const ref_bcast *bc = (const ref_bcast *)node->params;
  const size_t esize[2] = {sizeof(odla_string), sizeof(odla_string)};
  ref_concat_ctx ctx;
  ctx.pool = io->strings;
  ctx.failed = 0;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  ref_bcast_run(bc, ref_concat_row, io->out[0], sizeof(odla_string), io->in, esize, &ctx);
  return ctx.failed ? ODLA_MEM_ERROR : ODLA_SUCCESS;
}

odla_value odla_ExtStringConcat(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  odla_value in[2];
  const odla_value_shape *shapes[2];
  odla_value_type out;
  ref_bcast bc;
  char s1[128], s2[128];
  in[0] = lhs;
  in[1] = rhs;
  if (!ref_check_operands("ExtStringConcat", 2, in))
    return NULL;
  if (!ref_is_string(lhs) || !ref_is_string(rhs))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringConcat",
                    "operands must be string tensors, got %s and %s",
                    ref_type_name(lhs->type.element_type), ref_type_name(rhs->type.element_type));
  shapes[0] = &lhs->type.shape;
  shapes[1] = &rhs->type.shape;
  out.element_type = ODLA_STRING;
  if (!ref_bcast_shape(2, shapes, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "ExtStringConcat", "shapes %s and %s do not broadcast",
                    ref_shape_str(shapes[0], s1, sizeof s1),
                    ref_shape_str(shapes[1], s2, sizeof s2));
  memset(&bc, 0, sizeof bc);
  ref_bcast_init(&bc, 2, shapes, &out.shape);
  return ref_add_op("ExtStringConcat", ref_concat_run, 2, in, out, value_id, &bc, sizeof bc);
}

/* ---- Case mapping ---------------------------------------------------------------------- */

/* The case pair of one code point under the "C"/"en_US" rules this backend implements
 * (odla_ext_string.h): upper -> lower when `lower`, else lower -> upper; code points without a
 * same-length pair map to themselves. */
static unsigned long ref_case_map(unsigned long c, int lower) {
  if (lower) {
    if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
        (c >= 0x391 && c <= 0x3AB && c != 0x3A2) || (c >= 0x410 && c <= 0x42F))
      return c + 0x20;
    if (c >= 0x400 && c <= 0x40F)
      return c + 0x50;
    if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
        c != 0x178 && c != 0x17F) {
      int odd_pairs = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
      return odd_pairs ? (c % 2 == 1 ? c + 1 : c) : (c % 2 == 0 ? c + 1 : c);
    }
    return c;
  }
  if ((c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7) ||
      (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) || (c >= 0x430 && c <= 0x44F))
    return c - 0x20;
  if (c >= 0x450 && c <= 0x45F)
    return c - 0x50;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 &&
      c != 0x178 && c != 0x17F) {
    int odd_pairs = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    return odd_pairs ? (c % 2 == 0 ? c - 1 : c) : (c % 2 == 1 ? c - 1 : c);
  }
  return c;
}

/* Decodes one UTF-8 sequence at s (n bytes left); sets *len. Invalid bytes decode as
 * themselves, one at a time, and are never changed. */
static unsigned long ref_utf8_decode(const unsigned char *s, size_t n, size_t *len) {
  unsigned long c = s[0];
  size_t k, need = c < 0x80             ? 0
                   : (c & 0xE0) == 0xC0 ? 1
                   : (c & 0xF0) == 0xE0 ? 2
                   : (c & 0xF8) == 0xF0 ? 3
                                        : 9;
  *len = 1;
  if (need == 0 || need > 3 || need + 1 > n)
    return need == 0 ? c : 0x110000; /* 0x110000: not a code point, kept as is */
  c &= 0x3F >> need;
  for (k = 1; k <= need; ++k) {
    if ((s[k] & 0xC0) != 0x80)
      return 0x110000;
    c = (c << 6) | (s[k] & 0x3F);
  }
  *len = need + 1;
  return c;
}

/* Writes the case-mapped copy of the n bytes at s into d (n bytes: every mapping keeps the
 * length of the encoding). */
static void ref_case_copy(char *d, const char *s, size_t n, int lower) {
  size_t i = 0, len;
  while (i < n) {
    unsigned long c = ref_utf8_decode((const unsigned char *)s + i, n - i, &len);
    unsigned long m = c == 0x110000 ? c : ref_case_map(c, lower);
    if (m == c || len == 1) {
      if (len == 1 && m != c && m < 0x80)
        d[i] = (char)m;
      else
        memcpy(d + i, s + i, len);
    } else { /* two-byte sequences: Latin-1, Latin Extended-A, Greek, Cyrillic */
      d[i] = (char)(0xC0 | (m >> 6));
      d[i + 1] = (char)(0x80 | (m & 0x3F));
    }
    i += len;
  }
}

/* ---- ExtStringNormalizer --------------------------------------------------------------- */

typedef struct {
  int64_t count, kept; /* input elements; elements the output holds */
  int case_change, case_sensitive;
} ref_normalizer_params;

/* Whether x equals stopword w: bytes, or code point by code point after lowercasing. */
static int ref_is_stopword(const char *x, const char *w, int case_sensitive) {
  size_t nx = strlen(x), nw = strlen(w), i = 0, j = 0, lx, lw;
  if (case_sensitive)
    return strcmp(x, w) == 0;
  while (i < nx && j < nw) {
    unsigned long a = ref_utf8_decode((const unsigned char *)x + i, nx - i, &lx);
    unsigned long b = ref_utf8_decode((const unsigned char *)w + j, nw - j, &lw);
    if (a == 0x110000 || b == 0x110000 ? x[i] != w[j] : ref_case_map(a, 1) != ref_case_map(b, 1))
      return 0;
    i += lx;
    j += lw;
  }
  return i == nx && j == nw;
}

static odla_status ref_normalizer_run(const ref_node *node, const ref_io *io) {
  const ref_normalizer_params *p = (const ref_normalizer_params *)node->params;
  const odla_string *x = (const odla_string *)io->in[0];
  const odla_string *stop = (const odla_string *)io->in[1];
  int64_t num_stop = node->inputs[1] ? ref_count(&node->inputs[1]->type.shape) : 0;
  odla_string *y = (odla_string *)io->out[0];
  int64_t i, k, kept = 0;
  for (i = 0; i < p->count; ++i) {
    int drop = 0;
    for (k = 0; k < num_stop && !drop; ++k)
      drop = ref_is_stopword(x[i], stop[k], p->case_sensitive);
    if (drop)
      continue;
    if (kept == p->kept)
      return ODLA_INVALID_PARAM; /* the data keeps more elements than the result holds */
    if (p->case_change == ODLA_EXT_CASE_NONE) {
      y[kept] = x[i];
    } else {
      size_t n = strlen(x[i]);
      char *d = ref_string_alloc(io->strings, n + 1);
      if (!d)
        return ODLA_MEM_ERROR;
      ref_case_copy(d, x[i], n, p->case_change == ODLA_EXT_CASE_LOWER);
      d[n] = 0;
      y[kept] = d;
    }
    ++kept;
  }
  if (kept == 0 && p->kept == 1) { /* nothing kept: ONNX's result is [""] */
    y[0] = "";
    return ODLA_SUCCESS;
  }
  return kept == p->kept ? ODLA_SUCCESS : ODLA_INVALID_PARAM;
}

odla_value odla_ExtStringNormalizer(odla_value input, odla_value stopwords,
                                    odla_int32 case_change_action, odla_bool is_case_sensitive,
                                    const odla_char *locale, odla_value_shape output_dims,
                                    const odla_value_id value_id) {
  odla_value in[2];
  odla_value_type out;
  ref_normalizer_params p;
  const odla_value_shape *s;
  int rank_ok;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = stopwords;
  if (!ref_check_operands("ExtStringNormalizer", 1, in) ||
      (stopwords && !ref_check_operands("ExtStringNormalizer", 1, &in[1])))
    return NULL;
  if (!ref_is_string(input) ||
      (stopwords && (!ref_is_string(stopwords) || stopwords->kind != REF_CONSTANT ||
                     stopwords->type.shape.size != 1)))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringNormalizer",
                    "input must be a string tensor and stopwords a rank-1 string constant");
  s = &input->type.shape;
  if (locale && locale[0] && strcmp(locale, "en_US") != 0 && strcmp(locale, "C") != 0 &&
      strcmp(locale, "en_US.UTF-8") != 0)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringNormalizer",
                    "locale '%.64s' is not supported (en_US, C)", locale);
  if (case_change_action < ODLA_EXT_CASE_NONE || case_change_action > ODLA_EXT_CASE_UPPER)
    return ref_fail(ODLA_INVALID_PARAM, "ExtStringNormalizer",
                    "case_change_action %d is not "
                    "ODLA_EXT_CASE_NONE, _LOWER or _UPPER",
                    (int)case_change_action);
  rank_ok = (s->size == 1 && output_dims.size == 1) ||
            (s->size == 2 && s->dims[0] == 1 && output_dims.size == 2 && output_dims.dims[0] == 1);
  if (!rank_ok || output_dims.dims[output_dims.size - 1] < 1 ||
      output_dims.dims[output_dims.size - 1] > (ref_count(s) > 0 ? ref_count(s) : 1))
    return ref_fail(ODLA_INVALID_PARAM, "ExtStringNormalizer",
                    "input %s must be [C] or [1, C] and output_dims %s of its rank with 1 to C "
                    "elements",
                    ref_shape_str(s, s1, sizeof s1), ref_shape_str(&output_dims, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.count = ref_count(s);
  p.kept = output_dims.dims[output_dims.size - 1];
  p.case_change = case_change_action;
  p.case_sensitive = is_case_sensitive != 0;
  out.element_type = ODLA_STRING;
  out.shape = output_dims;
  return ref_add_op("ExtStringNormalizer", ref_normalizer_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- ExtStringSplit -------------------------------------------------------------------- */

typedef struct {
  int64_t count, width, maxsplit;
  size_t delimiter_len;
  char delimiter[256];
} ref_split_params;

static int ref_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static odla_status ref_split_run(const ref_node *node, const ref_io *io) {
  const ref_split_params *p = (const ref_split_params *)node->params;
  const odla_string *x = (const odla_string *)io->in[0];
  odla_string *y = (odla_string *)io->out[0];
  int64_t *lengths = (int64_t *)io->out[1];
  int64_t i, k;
  for (i = 0; i < p->count; ++i) {
    const char *s = x[i], *end = s + strlen(s);
    odla_string *row = y + i * p->width;
    int64_t parts = 0;
    if (p->delimiter_len == 0) { /* runs of whitespace; none at the ends */
      while (s < end && ref_is_space(*s))
        ++s;
      while (s < end) {
        const char *e = s;
        if (p->maxsplit >= 0 && parts == p->maxsplit) {
          e = end;
          while (e > s && ref_is_space(e[-1]))
            --e;
        } else {
          while (e < end && !ref_is_space(*e))
            ++e;
        }
        if (parts == p->width)
          return ODLA_INVALID_PARAM; /* more parts than the result holds */
        if (!(row[parts++] = ref_string_copy(io->strings, s, (size_t)(e - s))))
          return ODLA_MEM_ERROR;
        s = e;
        while (s < end && ref_is_space(*s))
          ++s;
      }
    } else {
      for (;;) {
        const char *e = NULL;
        if (p->maxsplit < 0 || parts < p->maxsplit) {
          const char *q;
          for (q = s; q + p->delimiter_len <= end; ++q)
            if (memcmp(q, p->delimiter, p->delimiter_len) == 0) {
              e = q;
              break;
            }
        }
        if (parts == p->width)
          return ODLA_INVALID_PARAM;
        if (!(row[parts++] = ref_string_copy(io->strings, s, (size_t)((e ? e : end) - s))))
          return ODLA_MEM_ERROR;
        if (!e)
          break;
        s = e + p->delimiter_len;
      }
    }
    lengths[i] = parts;
    for (k = parts; k < p->width; ++k)
      row[k] = "";
  }
  return ODLA_SUCCESS;
}

odla_values odla_ExtStringSplit(odla_value input, const odla_char *delimiter, odla_int64 maxsplit,
                                odla_value_shape output_dims, const odla_value_ids value_ids) {
  odla_values result;
  odla_value_type types[2];
  ref_split_params p;
  const odla_value_shape *s;
  ref_node *n;
  int d, ok;
  char s1[128], s2[128];
  memset(&result, 0, sizeof result);
  if (!ref_check_operands("ExtStringSplit", 1, &input))
    return result;
  if (!ref_is_string(input)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringSplit", "input must be a string tensor, got %s",
             ref_type_name(input->type.element_type));
    return result;
  }
  s = &input->type.shape;
  ok = output_dims.size == s->size + 1 && s->size < ODLA_MAX_DIMENSION && value_ids.size == 2 &&
       output_dims.dims[s->size] >= 0;
  for (d = 0; ok && d < s->size; ++d)
    ok = output_dims.dims[d] == s->dims[d];
  if (!ok) {
    ref_fail(ODLA_INVALID_PARAM, "ExtStringSplit",
             "output_dims %s must be input's %s plus a width, with two value ids",
             ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(s, s2, sizeof s2));
    return result;
  }
  memset(&p, 0, sizeof p);
  p.delimiter_len = delimiter ? strlen(delimiter) : 0;
  if (p.delimiter_len >= sizeof p.delimiter) {
    ref_fail(ODLA_INVALID_PARAM, "ExtStringSplit", "the delimiter has %lu bytes, at most %lu",
             (unsigned long)p.delimiter_len, (unsigned long)sizeof p.delimiter - 1);
    return result;
  }
  if (p.delimiter_len)
    memcpy(p.delimiter, delimiter, p.delimiter_len);
  p.count = ref_count(s);
  p.width = output_dims.dims[s->size];
  p.maxsplit = maxsplit;
  types[0].element_type = ODLA_STRING;
  types[0].shape = output_dims;
  types[1].element_type = ODLA_INT64;
  types[1].shape = ref_shape_copy(s);
  n = ref_add_node("ExtStringSplit", ref_split_run, 1, &input, 2, types, value_ids.value_ids, &p,
                   sizeof p);
  if (!n)
    return result;
  result.size = 2;
  result.values[0] = n->outputs[0];
  result.values[1] = n->outputs[1];
  return result;
}

/* ---- ExtLabelEncoder ------------------------------------------------------------------- */

typedef struct {
  int64_t count, num_keys;
  odla_element_type key_type;
  size_t value_size;
} ref_label_params;

static int ref_key_equal(odla_element_type t, const void *a, int64_t i, const void *b, int64_t k) {
  if (t == ODLA_STRING)
    return strcmp(((const odla_string *)a)[i], ((const odla_string *)b)[k]) == 0;
  if (ref_is_float(t)) {
    double x = ref_get(t, a, i), z = ref_get(t, b, k);
    return x == z || (x != x && z != z); /* NaN keys match NaN */
  }
  return ref_get_int(t, a, i) == ref_get_int(t, b, k);
}

static odla_status ref_label_run(const ref_node *node, const ref_io *io) {
  const ref_label_params *p = (const ref_label_params *)node->params;
  const unsigned char *values = (const unsigned char *)io->in[2];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t i, k;
  for (i = 0; i < p->count; ++i) {
    const unsigned char *v = (const unsigned char *)io->in[3];
    for (k = 0; k < p->num_keys; ++k)
      if (ref_key_equal(p->key_type, io->in[0], i, io->in[1], k)) {
        v = values + (size_t)k * p->value_size;
        break;
      }
    memcpy(y + (size_t)i * p->value_size, v, p->value_size);
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtLabelEncoder(odla_value input, odla_value keys, odla_value values,
                                odla_value default_value, const odla_value_id value_id) {
  odla_value in[4];
  odla_value_type out;
  ref_label_params p;
  in[0] = input;
  in[1] = keys;
  in[2] = values;
  in[3] = default_value;
  if (!ref_check_operands("ExtLabelEncoder", 4, in))
    return NULL;
  if (keys->type.element_type != input->type.element_type ||
      default_value->type.element_type != values->type.element_type || keys->type.shape.size != 1 ||
      values->type.shape.size != 1 ||
      ref_count(&keys->type.shape) != ref_count(&values->type.shape) ||
      ref_count(&default_value->type.shape) != 1 || ref_elem_size(keys->type.element_type) == 0 ||
      ref_elem_size(values->type.element_type) == 0)
    return ref_fail(ODLA_INVALID_PARAM, "ExtLabelEncoder",
                    "keys (input's type) and values must be rank-1 of one length, "
                    "default_value one element of values' type");
  memset(&p, 0, sizeof p);
  p.count = ref_count(&input->type.shape);
  p.num_keys = ref_count(&keys->type.shape);
  p.key_type = keys->type.element_type;
  p.value_size = ref_elem_size(values->type.element_type);
  out.element_type = values->type.element_type;
  out.shape = ref_type_of(input).shape;
  return ref_add_op("ExtLabelEncoder", ref_label_run, 4, in, out, value_id, &p, sizeof p);
}

/* ---- ExtRegexFullMatch ----------------------------------------------------------------- */

/* The pattern is parsed into a tree (RE2's syntax, the subset odla_ext_string.h lists), the
 * tree compiled into a Thompson NFA program, and each element run through the program as a
 * Pike VM over its code points: time linear in the element's length times the program's, so
 * that no pattern and no string can make matching take exponential time. Full match: the
 * program must reach MATCH exactly at the end of the element. */

enum {
  REF_RX_MAX_NODES = 1024,
  REF_RX_MAX_PROG = 4096,
  REF_RX_MAX_CLASSES = 64,
  REF_RX_MAX_DEPTH = 64,
  REF_RX_MAX_REPEAT = 1000
};

/* Tree nodes and program instructions share the kinds of their leaves. */
enum {
  RX_LIT,
  RX_ANY,
  RX_CLASS,
  RX_BOL,
  RX_EOL,
  RX_WORDB,
  RX_NWORDB,
  RX_EMPTY,
  RX_CAT,
  RX_ALT,
  RX_REP,
  RX_SPLIT,
  RX_JMP,
  RX_MATCH
};

typedef struct {
  int kind;
  int32_t x;       /* LIT: the code point; CLASS: the class */
  int left, right; /* CAT, ALT: the parts; REP: left is the repeated node */
  int min, max;    /* REP: max -1 is unbounded */
} ref_rx_node;

/* A class over code points: ASCII members as a bitmap; every code point above 127 is a member
 * exactly when `high` is set (classes name no non-ASCII member one by one). */
typedef struct {
  uint32_t bits[4];
  int high;
} ref_rx_class;

typedef struct {
  uint8_t kind;
  int32_t x, y; /* LIT: code point; CLASS: class; SPLIT: both targets; JMP: x */
} ref_rx_inst;

typedef struct {
  int num_insts, num_classes;
  ref_rx_class classes[REF_RX_MAX_CLASSES];
  ref_rx_inst prog[REF_RX_MAX_PROG];
} ref_rx_params;

typedef struct {
  const char *start, *p, *end; /* the pattern, and where parsing is */
  ref_rx_node nodes[REF_RX_MAX_NODES];
  int num_nodes, depth;
  ref_rx_params *out;
  char why[160]; /* the first problem */
} ref_rx_parser;

static int ref_rx_fail(ref_rx_parser *r, const char *why) {
  if (!r->why[0])
    ref_snprintf(r->why, sizeof r->why, "%s (before offset %ld)", why, (long)(r->p - r->start));
  return -1;
}

static int ref_rx_node_new(ref_rx_parser *r, int kind, int32_t x, int left, int right) {
  ref_rx_node *n;
  if (left < 0 || right < 0)
    return -1; /* a part failed: its problem is recorded */
  if (r->num_nodes == REF_RX_MAX_NODES)
    return ref_rx_fail(r, "the pattern has too many parts");
  n = &r->nodes[r->num_nodes];
  n->kind = kind;
  n->x = x;
  n->left = left;
  n->right = right;
  n->min = n->max = 0;
  return r->num_nodes++;
}

static int ref_rx_leaf(ref_rx_parser *r, int kind, int32_t x) {
  return ref_rx_node_new(r, kind, x, 0, 0);
}

static int ref_rx_is_word(unsigned long c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* Adds \d \w \s (or their negations, with `negate`) to class c. */
static void ref_rx_add_perl(ref_rx_class *c, char kind, int negate) {
  unsigned long ch;
  for (ch = 0; ch < 128; ++ch) {
    int in = kind == 'd'   ? (ch >= '0' && ch <= '9')
             : kind == 'w' ? ref_rx_is_word(ch)
                           : (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\f' || ch == '\r' ||
                              ch == '\v');
    if (in != negate)
      c->bits[ch / 32] |= 1u << (ch % 32);
  }
  if (negate)
    c->high = 1;
}

static int ref_rx_class_new(ref_rx_parser *r, ref_rx_class **c) {
  if (r->out->num_classes == REF_RX_MAX_CLASSES)
    return ref_rx_fail(r, "the pattern has too many character classes");
  *c = &r->out->classes[r->out->num_classes];
  memset(*c, 0, sizeof **c);
  return r->out->num_classes++;
}

/* The next code point of the pattern (UTF-8). */
static unsigned long ref_rx_next(ref_rx_parser *r) {
  size_t len;
  unsigned long c = ref_utf8_decode((const unsigned char *)r->p, (size_t)(r->end - r->p), &len);
  r->p += len;
  return c;
}

/* An escape after '\': a literal code point (*lit), or a Perl class ('d', 'w', 's', upper case
 * negated) in *perl, or an assertion kind in *assert. Returns 0, or -1 for what RE2 has and
 * odlac does not (or RE2 rejects). */
static int ref_rx_escape(ref_rx_parser *r, unsigned long *lit, char *perl, int *assert_kind) {
  unsigned long c;
  *perl = 0;
  *assert_kind = -1;
  if (r->p == r->end)
    return ref_rx_fail(r, "the pattern ends in a backslash");
  c = ref_rx_next(r);
  switch (c) {
  case 'd':
  case 'D':
  case 'w':
  case 'W':
  case 's':
  case 'S':
    *perl = (char)c;
    return 0;
  case 'b':
    *assert_kind = RX_WORDB;
    return 0;
  case 'B':
    *assert_kind = RX_NWORDB;
    return 0;
  case 'A':
    *assert_kind = RX_BOL;
    return 0;
  case 'z':
    *assert_kind = RX_EOL;
    return 0;
  case 'n':
    *lit = '\n';
    return 0;
  case 't':
    *lit = '\t';
    return 0;
  case 'r':
    *lit = '\r';
    return 0;
  case 'f':
    *lit = '\f';
    return 0;
  case 'v':
    *lit = '\v';
    return 0;
  case 'a':
    *lit = 7;
    return 0;
  default:
    break;
  }
  if (c < 128 && !ref_rx_is_word(c)) { /* escaped punctuation stands for itself */
    *lit = c;
    return 0;
  }
  return ref_rx_fail(r, "this escape (\\p classes, \\x, \\Q, \\C, octal or backreferences) is "
                        "not supported");
}

static int ref_rx_alt(ref_rx_parser *r);

/* [...]: ASCII members, ranges, Perl classes; '^' negates. */
static int ref_rx_bracket(ref_rx_parser *r) {
  ref_rx_class *c;
  int idx = ref_rx_class_new(r, &c), negate = 0, first = 1, k;
  if (idx < 0)
    return -1;
  if (r->p < r->end && *r->p == '^') {
    negate = 1;
    ++r->p;
  }
  for (;;) {
    unsigned long lo, hi;
    char perl = 0;
    int assert_kind;
    if (r->p == r->end)
      return ref_rx_fail(r, "a character class has no closing ']'");
    if (*r->p == ']' && !first) {
      ++r->p;
      break;
    }
    first = 0;
    if (r->p + 1 < r->end && r->p[0] == '[' && r->p[1] == ':')
      return ref_rx_fail(r, "POSIX classes ([:alpha:]) are not supported");
    lo = ref_rx_next(r);
    if (lo == '\\') {
      if (ref_rx_escape(r, &lo, &perl, &assert_kind) != 0)
        return -1;
      if (assert_kind >= 0)
        return ref_rx_fail(r, "an assertion cannot be a class member");
      if (perl) {
        ref_rx_add_perl(c, (char)(perl | 0x20), perl < 'a');
        continue;
      }
    }
    hi = lo;
    if (r->p + 1 < r->end && *r->p == '-' && r->p[1] != ']') {
      ++r->p;
      hi = ref_rx_next(r);
      if (hi == '\\' &&
          (ref_rx_escape(r, &hi, &perl, &assert_kind) != 0 || perl || assert_kind >= 0))
        return ref_rx_fail(r, "a class range must end in a character");
      if (hi < lo)
        return ref_rx_fail(r, "a class range ends before it starts");
    }
    if (hi >= 128)
      return ref_rx_fail(r, "non-ASCII class members are not supported");
    for (; lo <= hi; ++lo)
      c->bits[lo / 32] |= 1u << (lo % 32);
  }
  if (negate) {
    for (k = 0; k < 4; ++k)
      c->bits[k] = ~c->bits[k];
    c->high = !c->high;
  }
  return ref_rx_leaf(r, RX_CLASS, idx);
}

static int ref_rx_atom(ref_rx_parser *r) {
  unsigned long c = ref_rx_next(r);
  if (c == '(') {
    int inner;
    if (r->p < r->end && *r->p == '?') {
      if (r->end - r->p >= 2 && r->p[1] == ':')
        r->p += 2;
      else
        return ref_rx_fail(r, "flags and named groups ((?i), (?P<name>...)) are not supported");
    }
    if (++r->depth > REF_RX_MAX_DEPTH)
      return ref_rx_fail(r, "groups nest too deeply");
    inner = ref_rx_alt(r);
    --r->depth;
    if (inner < 0)
      return -1;
    if (r->p == r->end || *r->p != ')')
      return ref_rx_fail(r, "a group has no closing ')'");
    ++r->p;
    return inner;
  }
  if (c == '[')
    return ref_rx_bracket(r);
  if (c == '.')
    return ref_rx_leaf(r, RX_ANY, 0);
  if (c == '^')
    return ref_rx_leaf(r, RX_BOL, 0);
  if (c == '$')
    return ref_rx_leaf(r, RX_EOL, 0);
  if (c == '*' || c == '+' || c == '?')
    return ref_rx_fail(r, "a repetition operator has nothing to repeat");
  if (c == '\\') {
    char perl;
    int assert_kind;
    ref_rx_class *cls;
    int idx;
    if (ref_rx_escape(r, &c, &perl, &assert_kind) != 0)
      return -1;
    if (assert_kind >= 0)
      return ref_rx_leaf(r, assert_kind, 0);
    if (perl) {
      if ((idx = ref_rx_class_new(r, &cls)) < 0)
        return -1;
      ref_rx_add_perl(cls, (char)(perl | 0x20), perl < 'a');
      return ref_rx_leaf(r, RX_CLASS, idx);
    }
  }
  return ref_rx_leaf(r, RX_LIT, (int32_t)c);
}

/* {n}, {n,} or {n,m} at r->p: sets *min, *max (-1: unbounded); 0 when it is not a repetition
 * (RE2 then reads the brace literally). */
static int ref_rx_braces(ref_rx_parser *r, int *min, int *max) {
  const char *q = r->p + 1;
  long a = 0, b;
  if (q >= r->end || *q < '0' || *q > '9')
    return 0;
  for (; q < r->end && *q >= '0' && *q <= '9' && a <= REF_RX_MAX_REPEAT; ++q)
    a = a * 10 + (*q - '0');
  b = a;
  if (q < r->end && *q == ',') {
    ++q;
    b = -1;
    if (q < r->end && *q >= '0' && *q <= '9')
      for (b = 0; q < r->end && *q >= '0' && *q <= '9' && b <= REF_RX_MAX_REPEAT; ++q)
        b = b * 10 + (*q - '0');
  }
  if (q >= r->end || *q != '}')
    return 0;
  if (a > REF_RX_MAX_REPEAT || b > REF_RX_MAX_REPEAT || (b >= 0 && b < a))
    return ref_rx_fail(r, "a counted repetition is out of order or above 1000");
  r->p = q + 1;
  *min = (int)a;
  *max = (int)b;
  return 1;
}

static int ref_rx_repeat(ref_rx_parser *r) {
  int atom = ref_rx_atom(r), repeated = 0;
  while (atom >= 0 && r->p < r->end) {
    int min, max, n, found;
    char q = *r->p;
    if (q == '*' || q == '+' || q == '?') {
      ++r->p;
      min = q == '+';
      max = q == '?' ? 1 : -1;
    } else if (q == '{') {
      if ((found = ref_rx_braces(r, &min, &max)) <= 0)
        return found < 0 ? -1 : atom;
    } else {
      break;
    }
    if (repeated++) /* a** (a group of one, (a*)*, is fine) */
      return ref_rx_fail(r, "RE2 rejects a repetition of a repetition");
    if (r->p < r->end && *r->p == '?')
      ++r->p; /* lazy: the same set of full matches */
    if (r->p < r->end && *r->p == '+')
      return ref_rx_fail(r, "possessive repetitions are not RE2 syntax");
    n = ref_rx_node_new(r, RX_REP, 0, atom, 0);
    if (n < 0)
      return -1;
    r->nodes[n].min = min;
    r->nodes[n].max = max;
    atom = n;
  }
  return atom;
}

static int ref_rx_concat(ref_rx_parser *r) {
  int left = -2;
  while (r->p < r->end && *r->p != '|' && *r->p != ')') {
    int part = ref_rx_repeat(r);
    if (part < 0)
      return -1;
    left = left == -2 ? part : ref_rx_node_new(r, RX_CAT, 0, left, part);
    if (left < 0)
      return -1;
  }
  return left == -2 ? ref_rx_leaf(r, RX_EMPTY, 0) : left;
}

static int ref_rx_alt(ref_rx_parser *r) {
  int left = ref_rx_concat(r);
  while (left >= 0 && r->p < r->end && *r->p == '|') {
    ++r->p;
    left = ref_rx_node_new(r, RX_ALT, 0, left, ref_rx_concat(r));
  }
  return left;
}

static int ref_rx_emit(ref_rx_parser *r, int kind, int32_t x, int32_t y) {
  ref_rx_params *o = r->out;
  if (o->num_insts == REF_RX_MAX_PROG)
    return ref_rx_fail(r, "the pattern's program is too large (counted repetitions expand)");
  o->prog[o->num_insts].kind = (uint8_t)kind;
  o->prog[o->num_insts].x = x;
  o->prog[o->num_insts].y = y;
  return o->num_insts++;
}

static int ref_rx_compile(ref_rx_parser *r, int node) {
  const ref_rx_node *n = &r->nodes[node];
  int k, split, jmp, start;
  ref_rx_inst *prog = r->out->prog;
  switch (n->kind) {
  case RX_EMPTY:
    return 0;
  case RX_CAT:
    return ref_rx_compile(r, n->left) < 0 ? -1 : ref_rx_compile(r, n->right);
  case RX_ALT:
    if ((split = ref_rx_emit(r, RX_SPLIT, 0, 0)) < 0)
      return -1;
    prog[split].x = split + 1;
    if (ref_rx_compile(r, n->left) < 0 || (jmp = ref_rx_emit(r, RX_JMP, 0, 0)) < 0)
      return -1;
    prog[split].y = jmp + 1;
    if (ref_rx_compile(r, n->right) < 0)
      return -1;
    prog[jmp].x = r->out->num_insts;
    return 0;
  case RX_REP:
    for (k = 0; k < n->min; ++k)
      if (ref_rx_compile(r, n->left) < 0)
        return -1;
    if (n->max < 0) { /* L: SPLIT body, out; body; JMP L */
      if ((split = ref_rx_emit(r, RX_SPLIT, 0, 0)) < 0 || ref_rx_compile(r, n->left) < 0 ||
          (jmp = ref_rx_emit(r, RX_JMP, split, 0)) < 0)
        return -1;
      prog[split].x = split + 1;
      prog[split].y = r->out->num_insts;
      return 0;
    }
    start = r->out->num_insts;
    for (k = n->min; k < n->max; ++k) { /* each optional copy: SPLIT body, (the end) */
      if ((split = ref_rx_emit(r, RX_SPLIT, 0, -1)) < 0 || ref_rx_compile(r, n->left) < 0)
        return -1;
      prog[split].x = split + 1;
    }
    for (k = start; k < r->out->num_insts; ++k)
      if (prog[k].kind == RX_SPLIT && prog[k].y == -1)
        prog[k].y = r->out->num_insts;
    return 0;
  default:
    return ref_rx_emit(r, n->kind, n->x, 0) < 0 ? -1 : 0;
  }
}

/* Adds pc and what it reaches without consuming (JMP, SPLIT, assertions that hold between code
 * points prev and cur; -1 is the edge of the text) to list, each pc once per step (mark). */
static void ref_rx_add(const ref_rx_params *p, int *list, int *count, int *mark, int gen,
                       int *stack, int pc, long prev, long cur) {
  int top = 0;
  stack[top++] = pc;
  while (top > 0) {
    const ref_rx_inst *in;
    pc = stack[--top];
    if (mark[pc] == gen)
      continue;
    mark[pc] = gen;
    in = &p->prog[pc];
    switch (in->kind) {
    case RX_JMP:
      stack[top++] = in->x;
      break;
    case RX_SPLIT:
      stack[top++] = in->y;
      stack[top++] = in->x;
      break;
    case RX_BOL:
      if (prev < 0)
        stack[top++] = pc + 1;
      break;
    case RX_EOL:
      if (cur < 0)
        stack[top++] = pc + 1;
      break;
    case RX_WORDB:
    case RX_NWORDB: {
      int edge = (prev >= 0 && ref_rx_is_word((unsigned long)prev)) !=
                 (cur >= 0 && ref_rx_is_word((unsigned long)cur));
      if (edge == (in->kind == RX_WORDB))
        stack[top++] = pc + 1;
      break;
    }
    default:
      list[(*count)++] = pc;
      break;
    }
  }
}

static int ref_rx_consumes(const ref_rx_params *p, const ref_rx_inst *in, unsigned long c) {
  switch (in->kind) {
  case RX_LIT:
    return c == (unsigned long)in->x;
  case RX_ANY:
    return c != '\n';
  case RX_CLASS: {
    const ref_rx_class *k = &p->classes[in->x];
    return c < 128 ? (int)((k->bits[c / 32] >> (c % 32)) & 1) : k->high;
  }
  default:
    return 0;
  }
}

/* Whether s matches the program as a whole; scratch holds 4 * num_insts ints. */
static int ref_rx_full_match(const ref_rx_params *p, const char *s, int *scratch) {
  int n = p->num_insts, *clist = scratch, *nlist = scratch + n, *mark = scratch + 2 * n;
  int *stack = scratch + 3 * n, nc = 0, gen = 1, i, matched = 0;
  size_t left = strlen(s), len;
  long prev = -1, cur;
  memset(mark, 0, (size_t)n * sizeof *mark);
  cur = left ? (long)ref_utf8_decode((const unsigned char *)s, left, &len) : -1;
  ref_rx_add(p, clist, &nc, mark, gen, stack, 0, prev, cur);
  while (nc > 0) {
    int nn = 0, *t;
    long next;
    if (cur < 0) { /* the end: a thread at MATCH matches */
      for (i = 0; i < nc && !matched; ++i)
        matched = p->prog[clist[i]].kind == RX_MATCH;
      return matched;
    }
    s += len;
    left -= len;
    next = left ? (long)ref_utf8_decode((const unsigned char *)s, left, &len) : -1;
    ++gen;
    for (i = 0; i < nc; ++i)
      if (ref_rx_consumes(p, &p->prog[clist[i]], (unsigned long)cur))
        ref_rx_add(p, nlist, &nn, mark, gen, stack, clist[i] + 1, cur, next);
    prev = cur;
    cur = next;
    t = clist;
    clist = nlist;
    nlist = t;
    nc = nn;
  }
  return 0;
}

static odla_status ref_regex_run(const ref_node *node, const ref_io *io) {
  const ref_rx_params *p = (const ref_rx_params *)node->params;
  const odla_string *x = (const odla_string *)io->in[0];
  uint8_t *y = (uint8_t *)io->out[0];
  int64_t i, n = ref_count(&node->inputs[0]->type.shape);
  for (i = 0; i < n; ++i)
    y[i] = (uint8_t)ref_rx_full_match(p, x[i], (int *)io->scratch);
  return ODLA_SUCCESS;
}

odla_value odla_ExtRegexFullMatch(odla_value input, const odla_char *pattern,
                                  const odla_value_id value_id) {
  ref_rx_parser *r;
  odla_value_type out;
  odla_value v = NULL;
  int root;
  if (!ref_check_operands("ExtRegexFullMatch", 1, &input))
    return NULL;
  if (!ref_is_string(input) || !pattern)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtRegexFullMatch",
                    "input must be a string tensor and pattern a string");
  r = (ref_rx_parser *)ref_calloc(1, sizeof *r);
  if (r)
    r->out = (ref_rx_params *)ref_calloc(1, sizeof *r->out);
  if (!r || !r->out) {
    ref_free(r);
    return ref_fail(ODLA_MEM_ERROR, "ExtRegexFullMatch", "out of memory");
  }
  r->start = r->p = pattern;
  r->end = pattern + strlen(pattern);
  root = ref_rx_alt(r);
  if (root >= 0 && r->p != r->end)
    root = ref_rx_fail(r, "a ')' has no opening '('");
  if (root >= 0 && ref_rx_compile(r, root) == 0 && ref_rx_emit(r, RX_MATCH, 0, 0) >= 0) {
    ref_node *node;
    out.element_type = ODLA_BOOL;
    out.shape = ref_type_of(input).shape;
    node = ref_add_node("ExtRegexFullMatch", ref_regex_run, 1, &input, 1, &out, &value_id, r->out,
                        sizeof *r->out);
    if (node) {
      node->scratch_bytes = (size_t)r->out->num_insts * 4 * sizeof(int);
      v = node->outputs[0];
    }
  } else {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtRegexFullMatch", "pattern '%.64s': %s", pattern,
             r->why);
  }
  ref_free(r->out);
  ref_free(r);
  return v;
}
