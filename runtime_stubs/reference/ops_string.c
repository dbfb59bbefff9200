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
    b = (ref_string_block *)malloc(sizeof *b + cap);
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
    free(pool->head);
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
  size_t k, need = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
                                  : (c & 0xF8) == 0xF0 ? 3 : 9;
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
  const odla_value_shape *s = &input->type.shape;
  int rank_ok;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = stopwords;
  if (!ref_check_operands("ExtStringNormalizer", 1, in) ||
      (stopwords && !ref_check_operands("ExtStringNormalizer", 1, &in[1])))
    return NULL;
  if (!ref_is_string(input) || (stopwords && (!ref_is_string(stopwords) ||
                                              stopwords->kind != REF_CONSTANT ||
                                              stopwords->type.shape.size != 1)))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringNormalizer",
                    "input must be a string tensor and stopwords a rank-1 string constant");
  if (locale && locale[0] && strcmp(locale, "en_US") != 0 && strcmp(locale, "C") != 0 &&
      strcmp(locale, "en_US.UTF-8") != 0)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtStringNormalizer",
                    "locale '%.64s' is not supported (en_US, C)", locale);
  if (case_change_action < ODLA_EXT_CASE_NONE || case_change_action > ODLA_EXT_CASE_UPPER)
    return ref_fail(ODLA_INVALID_PARAM, "ExtStringNormalizer", "case_change_action %d is not "
                    "ODLA_EXT_CASE_NONE, _LOWER or _UPPER", (int)case_change_action);
  rank_ok = (s->size == 1 && output_dims.size == 1) ||
            (s->size == 2 && s->dims[0] == 1 && output_dims.size == 2 && output_dims.dims[0] == 1);
  if (!rank_ok || output_dims.dims[output_dims.size - 1] < 1 ||
      output_dims.dims[output_dims.size - 1] > (ref_count(s) > 0 ? ref_count(s) : 1))
    return ref_fail(ODLA_INVALID_PARAM, "ExtStringNormalizer",
                    "input %s must be [C] or [1, C] and output_dims %s of its rank with 1 to C "
                    "elements", ref_shape_str(s, s1, sizeof s1),
                    ref_shape_str(&output_dims, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.count = ref_count(s);
  p.kept = output_dims.dims[output_dims.size - 1];
  p.case_change = case_change_action;
  p.case_sensitive = is_case_sensitive != 0;
  out.element_type = ODLA_STRING;
  out.shape = output_dims;
  return ref_add_op("ExtStringNormalizer", ref_normalizer_run, 2, in, out, value_id, &p,
                    sizeof p);
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
  const odla_value_shape *s = &input->type.shape;
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
  types[1].shape = *s;
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
      default_value->type.element_type != values->type.element_type ||
      keys->type.shape.size != 1 || values->type.shape.size != 1 ||
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
  out.shape = input->type.shape;
  return ref_add_op("ExtLabelEncoder", ref_label_run, 4, in, out, value_id, &p, sizeof p);
}
