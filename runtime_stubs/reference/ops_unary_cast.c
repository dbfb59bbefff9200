/* ops_unary_cast.c: odla_Cast and odla_ExtCast of the reference backend, between every pair of
 * the element types float32, float64, float16, bfloat16, int8..int64, uint8..uint64, bool and
 * the extension types of odla_ext_types.h.
 *
 * Semantics (ONNX Cast, with its undefined cases defined):
 *   - to a float type: correctly rounded to nearest, ties to even, from every source type
 *     (float64 -> float16 and int64 -> bfloat16 included: no double rounding, see
 *     ref_odd_float_*); out of range gives +-infinity; NaN stays NaN.
 *   - float to integer: truncation toward zero, saturated to the type's range; NaN gives 0.
 *   - integer to integer: the value modulo 2^bits of the target (two's complement wrap, as C
 *     and numpy convert).
 *   - to bool: nonzero (NaN included) is true. bool to a number: 0 or 1.
 *   - the extension types (ONNX's reference, ml_dtypes): from every type through the exact
 *     value (ref_ext_encode: to the 8- and 4-bit floats to nearest, ties to even, saturated or
 *     not as odla_ExtCast says; float to INT4, UINT4, INT2, UINT2 its integral part when in
 *     range, else 0; integer to them wraps); from them exactly.
 *
 * The kernel converts in chunks: each chunk is loaded exactly into float64 (float sources),
 * int64 (signed sources) or uint64 (unsigned and bool sources), then stored into the target
 * type, so there is one simple loop per source type and per (kind, target type). */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

#define REF_CAST_CHUNK 256

typedef enum { REF_KIND_FLOAT, REF_KIND_SIGNED, REF_KIND_UNSIGNED } ref_cast_kind;

typedef struct {
  ref_cast_kind kind;
  union {
    double f[REF_CAST_CHUNK];
    int64_t s[REF_CAST_CHUNK];
    uint64_t u[REF_CAST_CHUNK];
  } v;
} ref_cast_chunk;

/* ---- Rounding to odd ----------------------------------------------------------------- */
/* float16 and bfloat16 are rounded from a float32 that is the exact value rounded to odd
 * (truncated, with the last bit set when anything was cut off). Rounding to odd at 24 bits
 * and then to nearest even at 11 (float16) or 8 (bfloat16) bits gives the correctly rounded
 * result, which rounding to nearest twice does not. */

static float ref_set_odd(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits |= 1;
  memcpy(&f, &bits, 4);
  return f;
}

static float ref_odd_float_f64(double d) {
  float f = (float)d;
  if (d != d || (double)f == d)
    return f; /* NaN, infinities and exact values */
  if (fabs((double)f) > fabs(d))
    f = nextafterf(f, 0.0f); /* truncate toward zero (an overflow to inf becomes FLT_MAX) */
  return ref_set_odd(f);
}

static float ref_odd_float_u64(uint64_t u) {
  int shift = 0;
  uint64_t m = u;
  while (m >> 24) { /* keep the top 24 bits, OR-ing what falls off into the last one */
    m = (m >> 1) | (m & 1);
    ++shift;
  }
  return ldexpf((float)m, shift);
}

static float ref_odd_float_i64(int64_t s) {
  return s < 0 ? -ref_odd_float_u64(0 - (uint64_t)s) : ref_odd_float_u64((uint64_t)s);
}

/* ---- Loading a chunk ----------------------------------------------------------------- */

static void ref_cast_load(odla_element_type t, const void *x, int64_t n, ref_cast_chunk *c) {
  int64_t i;
  c->kind = REF_KIND_UNSIGNED; /* the builder admits no other types */
  if (ref_is_ext_type(t)) {
    c->kind = ref_is_ext_float(t) ? REF_KIND_FLOAT : REF_KIND_SIGNED;
    for (i = 0; i < n; ++i) {
      double v = ref_ext_decode(t, ((const uint8_t *)x)[i]);
      if (c->kind == REF_KIND_FLOAT)
        c->v.f[i] = v;
      else
        c->v.s[i] = (int64_t)v;
    }
    return;
  }
  switch (t) {
#define REF_LOAD_FLOAT(E, S, C, SFX)                                                               \
  case E:                                                                                          \
    c->kind = REF_KIND_FLOAT;                                                                      \
    for (i = 0; i < n; ++i)                                                                        \
      c->v.f[i] = (double)REF_LOAD_##SFX((const S *)x, i);                                         \
    break;
#define REF_LOAD_SIGNED(E, S, C, SFX)                                                              \
  case E:                                                                                          \
    c->kind = REF_KIND_SIGNED;                                                                     \
    for (i = 0; i < n; ++i)                                                                        \
      c->v.s[i] = ((const S *)x)[i];                                                               \
    break;
#define REF_LOAD_UNSIGNED(E, S, C, SFX)                                                            \
  case E:                                                                                          \
    c->kind = REF_KIND_UNSIGNED;                                                                   \
    for (i = 0; i < n; ++i)                                                                        \
      c->v.u[i] = ((const S *)x)[i];                                                               \
    break;
    REF_FOR_FLOAT_TYPES(REF_LOAD_FLOAT)
    REF_FOR_SIGNED_INT_TYPES(REF_LOAD_SIGNED)
    REF_FOR_UNSIGNED_INT_TYPES(REF_LOAD_UNSIGNED)
    REF_FOR_BOOL_TYPE(REF_LOAD_UNSIGNED)
#undef REF_LOAD_FLOAT
#undef REF_LOAD_SIGNED
#undef REF_LOAD_UNSIGNED
  default:
    break;
  }
}

/* ---- Storing a chunk ----------------------------------------------------------------- */

/* y[i] = EXPR(v) for v = the chunk's values of each kind. */
#define REF_STORE_KINDS(T, FEXPR, SEXPR, UEXPR)                                                    \
  {                                                                                                \
    T *o = (T *)y;                                                                                 \
    if (c->kind == REF_KIND_FLOAT)                                                                 \
      for (i = 0; i < n; ++i) {                                                                    \
        const double v = c->v.f[i];                                                                \
        o[i] = FEXPR;                                                                              \
      }                                                                                            \
    else if (c->kind == REF_KIND_SIGNED)                                                           \
      for (i = 0; i < n; ++i) {                                                                    \
        const int64_t v = c->v.s[i];                                                               \
        o[i] = SEXPR;                                                                              \
      }                                                                                            \
    else                                                                                           \
      for (i = 0; i < n; ++i) {                                                                    \
        const uint64_t v = c->v.u[i];                                                              \
        o[i] = UEXPR;                                                                              \
      }                                                                                            \
    break;                                                                                         \
  }

/* The extension types: floats through their exact value, integers wrapped. */
static void ref_cast_store_ext(odla_element_type t, uint8_t *y, int64_t n, const ref_cast_chunk *c,
                               int saturate, int round_mode) {
  int64_t i;
  for (i = 0; i < n; ++i) {
    double v = c->kind == REF_KIND_FLOAT    ? c->v.f[i]
               : c->kind == REF_KIND_SIGNED ? (double)c->v.s[i]
                                            : (double)c->v.u[i];
    if (c->kind != REF_KIND_FLOAT && ref_is_ext_int(t))
      y[i] = ref_ext_wrap(t, c->kind == REF_KIND_SIGNED ? c->v.s[i] : (int64_t)c->v.u[i]);
    else
      y[i] = ref_ext_encode(t, v, saturate, round_mode);
  }
}

static void ref_cast_store(odla_element_type t, void *y, int64_t n, const ref_cast_chunk *c) {
  int64_t i;
  switch (t) {
  case ODLA_FLOAT32:
    REF_STORE_KINDS(float, (float)v, (float)v, (float)v)
  case ODLA_FLOAT64:
    REF_STORE_KINDS(double, v, (double)v, (double)v)
  case ODLA_FLOAT16:
    REF_STORE_KINDS(uint16_t, ref_float_to_half(ref_odd_float_f64(v)),
                    ref_float_to_half(ref_odd_float_i64(v)),
                    ref_float_to_half(ref_odd_float_u64(v)))
  case ODLA_BFLOAT16:
    REF_STORE_KINDS(uint16_t, ref_float_to_bf16(ref_odd_float_f64(v)),
                    ref_float_to_bf16(ref_odd_float_i64(v)),
                    ref_float_to_bf16(ref_odd_float_u64(v)))
  case ODLA_BOOL:
    REF_STORE_KINDS(uint8_t, (uint8_t)(v != 0), (uint8_t)(v != 0), (uint8_t)(v != 0))
    /* Floats saturate (top is 2^bits of the positive range, NaN gives 0); integers wrap. */
#define REF_STORE_SIGNED(E, S, C, SFX)                                                             \
  case E: {                                                                                        \
    const double top = ldexp(1.0, 8 * (int)sizeof(S) - 1);                                         \
    const S max = (S)(((uint64_t)1 << (8 * sizeof(S) - 1)) - 1), min = (S)(-max - 1);              \
    REF_STORE_KINDS(S, v != v ? 0 : (v <= -top ? min : (v >= top ? max : (S)v)), (S)v, (S)v)       \
  }
#define REF_STORE_UNSIGNED(E, S, C, SFX)                                                           \
  case E: {                                                                                        \
    const double top = ldexp(1.0, 8 * (int)sizeof(S));                                             \
    const S max = (S) ~(uint64_t)0;                                                                \
    REF_STORE_KINDS(S, v != v || v <= -1 ? 0 : (v >= top ? max : (S)v), (S)v, (S)v)                \
  }
    REF_FOR_SIGNED_INT_TYPES(REF_STORE_SIGNED)
    REF_FOR_UNSIGNED_INT_TYPES(REF_STORE_UNSIGNED)
#undef REF_STORE_SIGNED
#undef REF_STORE_UNSIGNED
  default:
    break;
  }
}

#undef REF_STORE_KINDS

/* ---- Builder --------------------------------------------------------------------------- */

/* The common float32 <-> float16/bfloat16 conversions, directly (float32 holds every
 * float16 and bfloat16 exactly, so rounding once from float32 is correct). */
static int ref_cast_float32_fast(odla_element_type from, odla_element_type to, const void *x,
                                 void *y, int64_t n) {
  int64_t i;
  if (from == ODLA_FLOAT32 && to == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      REF_STORE_f16((uint16_t *)y, i, ((const float *)x)[i]);
  else if (from == ODLA_FLOAT32 && to == ODLA_BFLOAT16)
    for (i = 0; i < n; ++i)
      REF_STORE_bf16((uint16_t *)y, i, ((const float *)x)[i]);
  else if (from == ODLA_FLOAT16 && to == ODLA_FLOAT32)
    for (i = 0; i < n; ++i)
      ((float *)y)[i] = REF_LOAD_f16((const uint16_t *)x, i);
  else if (from == ODLA_BFLOAT16 && to == ODLA_FLOAT32)
    for (i = 0; i < n; ++i)
      ((float *)y)[i] = REF_LOAD_bf16((const uint16_t *)x, i);
  else
    return 0;
  return 1;
}

/* odla_ExtCast's parameters (odla_Cast: saturate, round up). */
typedef struct {
  int saturate, round_mode;
} ref_cast_params;

static odla_status ref_cast_run(const ref_node *node, const ref_io *io) {
  const ref_cast_params *p = (const ref_cast_params *)node->params;
  odla_element_type from = node->inputs[0]->type.element_type;
  odla_element_type to = node->outputs[0]->type.element_type;
  size_t in_size = ref_elem_size(from), out_size = ref_elem_size(to);
  int64_t n = ref_count(&node->outputs[0]->type.shape), i0;
  ref_cast_chunk chunk;
  if (ref_cast_float32_fast(from, to, io->in[0], io->out[0], n))
    return ODLA_SUCCESS;
  for (i0 = 0; i0 < n; i0 += REF_CAST_CHUNK) {
    int64_t m = n - i0 < REF_CAST_CHUNK ? n - i0 : REF_CAST_CHUNK;
    char *y = (char *)io->out[0] + (size_t)i0 * out_size;
    ref_cast_load(from, (const char *)io->in[0] + (size_t)i0 * in_size, m, &chunk);
    if (ref_is_ext_type(to))
      ref_cast_store_ext(to, (uint8_t *)y, m, &chunk, p->saturate, p->round_mode);
    else
      ref_cast_store(to, y, m, &chunk);
  }
  return ODLA_SUCCESS;
}

static int ref_castable(odla_element_type t) {
  return ref_is_float(t) || ref_is_int(t) || t == ODLA_BOOL || ref_is_ext_type(t);
}

static odla_value ref_cast_build(const char *op, odla_value input, odla_element_type target_type,
                                 const ref_cast_params *p, const odla_value_id value_id) {
  odla_value_type out;
  odla_value y;
  if (!ref_check_operands(op, 1, &input))
    return NULL;
  if (!ref_castable(input->type.element_type) || !ref_castable(target_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "cast from %s to %s is not supported (float, integer, bool and "
                    "odla_ext_types.h types only)",
                    ref_type_name(input->type.element_type), ref_type_name(target_type));
  if (p->round_mode < ODLA_EXT_ROUND_UP || p->round_mode > ODLA_EXT_ROUND_NEAREST)
    return ref_fail(ODLA_INVALID_PARAM, op, "round_mode %d is not one of ODLA_EXT_ROUND_*",
                    p->round_mode);
  out = ref_type_of(input);
  out.element_type = target_type;
  y = ref_add_op(op, ref_cast_run, 1, &input, out, value_id, p, sizeof *p);
  /* Each chunk is read whole before it is written, so a result of the operand's size may
   * take the operand's buffer. */
  if (y)
    y->node->inplace_input = 0;
  return y;
}

odla_value odla_ExtCast(odla_value input, odla_element_type target_type, odla_bool saturate,
                        odla_int32 round_mode, const odla_value_id value_id) {
  ref_cast_params p;
  p.saturate = saturate != 0;
  p.round_mode = round_mode;
  return ref_cast_build("ExtCast", input, target_type, &p, value_id);
}

/* Converts input to target_type (semantics at the top of this file); any pair of float32,
 * float64, float16, bfloat16, the eight integer types and bool. */
odla_value odla_Cast(odla_value input, odla_element_type target_type,
                     const odla_value_id value_id) {
  ref_cast_params p;
  p.saturate = 1;
  p.round_mode = ODLA_EXT_ROUND_UP;
  return ref_cast_build("Cast", input, target_type, &p, value_id);
}
