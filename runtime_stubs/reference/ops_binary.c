/* ops_binary.c: broadcasting arithmetic of the reference backend (Add, Sub, Mul, Div, Pow, Mod,
 * Max, Min, SquaredDifference, Shift, PRelu and the variadic Mean), and the broadcasting
 * machinery that the binary family's kernel files share (ops_binary.h).
 *
 * Semantics, as odlac relies on them:
 * - Operands broadcast numpy-style (right-aligned, extents equal or 1) and share one element
 *   type, except odla_Pow's exponent. odla_PRelu's slope broadcasts to the input
 *   (unidirectionally): the result has the input's shape.
 * - Every numeric type. float16 and bfloat16 compute in float, rounding once per result.
 * - Integers wrap (two's complement) on overflow. Division truncates toward zero. Integer
 *   division or remainder by zero does not trap: x / 0 == 0 and x % 0 == 0; INT_MIN / -1
 *   wraps to INT_MIN.
 * - Max and Min propagate NaN (numpy's maximum and minimum, which ONNX's reference uses).
 * Each builder's comment gives the rest. */
#include "ops_binary.h"
#include "ref_types.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Broadcasting ------------------------------------------------------------------- */

int ref_bcast_shape(int num, const odla_value_shape *const *shapes, odla_value_shape *out) {
  int rank = 0, i, k;
  for (k = 0; k < num; ++k)
    if (shapes[k]->size > rank)
      rank = shapes[k]->size;
  out->size = rank;
  for (i = 0; i < rank; ++i) {
    int64_t d = 1;
    for (k = 0; k < num; ++k) {
      int skip = rank - shapes[k]->size;
      int64_t dk = i < skip ? 1 : shapes[k]->dims[i - skip];
      if (dk == 1)
        continue;
      if (d != 1 && d != dk)
        return 0;
      d = dk;
    }
    out->dims[i] = d;
  }
  return 1;
}

void ref_bcast_init(ref_bcast *bc, int num, const odla_value_shape *const *shapes,
                    const odla_value_shape *out) {
  int64_t s[REF_BCAST_MAX_OPERANDS][ODLA_MAX_DIMENSION];
  int rank = out->size, i, k, r = 0;
  bc->num_operands = num;
  for (k = 0; k < num; ++k) {
    int skip = rank - shapes[k]->size;
    int64_t stride = 1;
    for (i = rank - 1; i >= 0; --i) {
      int64_t d = i < skip ? 1 : shapes[k]->dims[i - skip];
      s[k][i] = d == 1 ? 0 : stride;
      stride *= d;
    }
  }
  /* Drop axes of extent 1; merge axis i into the one before it when every operand steps
   * through both as one. */
  for (i = 0; i < rank; ++i) {
    int merge = r > 0;
    if (out->dims[i] == 1)
      continue;
    for (k = 0; merge && k < num; ++k)
      merge = s[k][i] * out->dims[i] == bc->strides[k][r - 1];
    if (merge) {
      bc->dims[r - 1] *= out->dims[i];
      for (k = 0; k < num; ++k)
        bc->strides[k][r - 1] = s[k][i];
      continue;
    }
    bc->dims[r] = out->dims[i];
    for (k = 0; k < num; ++k)
      bc->strides[k][r] = s[k][i];
    ++r;
  }
  if (r == 0) { /* one element */
    bc->dims[0] = 1;
    for (k = 0; k < num; ++k)
      bc->strides[k][0] = 1;
    r = 1;
  }
  bc->rank = r;
}

void ref_bcast_run(const ref_bcast *bc, ref_row_fn fn, void *y, size_t ey, const void *const *in,
                   const size_t *esize, const void *ctx) {
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, off[REF_BCAST_MAX_OPERANDS] = {0};
  int64_t inner_strides[REF_BCAST_MAX_OPERANDS];
  const void *row[REF_BCAST_MAX_OPERANDS];
  const int64_t inner = bc->dims[bc->rank - 1];
  const int num = bc->num_operands;
  char *py = (char *)y;
  int d, k;
  for (k = 0; k < num; ++k)
    inner_strides[k] = bc->strides[k][bc->rank - 1];
  if (bc->rank <= 2) { /* the common case, without the odometer */
    const int64_t outer = bc->rank == 2 ? bc->dims[0] : 1;
    int64_t o;
    for (o = 0; o < outer; ++o, py += inner * (int64_t)ey) {
      for (k = 0; k < num; ++k)
        row[k] = (const char *)in[k] + o * bc->strides[k][0] * (int64_t)esize[k];
      fn(py, row, inner_strides, inner, ctx);
    }
    return;
  }
  for (;;) {
    for (k = 0; k < num; ++k)
      row[k] = (const char *)in[k] + off[k] * (int64_t)esize[k];
    fn(py, row, inner_strides, inner, ctx);
    py += inner * (int64_t)ey;
    for (d = bc->rank - 2; d >= 0; --d) {
      for (k = 0; k < num; ++k)
        off[k] += bc->strides[k][d];
      if (++idx[d] < bc->dims[d])
        break;
      for (k = 0; k < num; ++k)
        off[k] -= bc->strides[k][d] * bc->dims[d];
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

static odla_status ref_bcast_kernel(const ref_node *node, const ref_io *io) {
  const ref_bcast_params *p = (const ref_bcast_params *)node->params;
  size_t esize[REF_BCAST_MAX_OPERANDS];
  int k;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  for (k = 0; k < p->bc.num_operands; ++k)
    esize[k] = ref_elem_size(p->types[k]);
  ref_bcast_run(&p->bc, p->fn, io->out[0], ref_elem_size(p->out_type), io->in, esize, p);
  return ODLA_SUCCESS;
}

odla_value ref_bcast_node(const char *op, ref_row_fn fn, int num, const odla_value *in,
                          odla_element_type out_type, int unidirectional,
                          const odla_value_shape *output_dims, odla_value_id id) {
  const odla_value_shape *shapes[REF_BCAST_MAX_OPERANDS];
  ref_bcast_params p;
  odla_value_type out;
  odla_value v;
  char names[REF_BCAST_MAX_OPERANDS * (160 + 8)] = "", buf[160];
  int k;
  memset(&p, 0, sizeof p);
  for (k = 0; k < num; ++k) {
    shapes[k] = &in[k]->type.shape;
    p.types[k] = in[k]->type.element_type;
    strcat(names, k == 0 ? "" : (k + 1 == num ? " and " : ", "));
    strcat(names, ref_shape_str(shapes[k], buf, sizeof buf));
  }
  if (!ref_bcast_shape(num, shapes, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "shapes %s do not broadcast", names);
  if (unidirectional && !ref_same_shape(&out.shape, shapes[0]))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "shapes %s: the second does not broadcast to the first (unidirectionally)",
                    names);
  if (output_dims && ref_shape_conflicts(output_dims, &out.shape)) {
    char given[160];
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the broadcast shape %s",
                    ref_shape_str(output_dims, given, sizeof given),
                    ref_shape_str(&out.shape, buf, sizeof buf));
  }
  ref_bcast_init(&p.bc, num, shapes, &out.shape);
  p.fn = fn;
  p.out_type = out_type;
  out.element_type = out_type;
  v = ref_add_op(op, ref_bcast_kernel, num, in, out, id, &p, sizeof p);
  /* The row kernels read element i of every operand before writing y[i]. */
  for (k = 0; v && k < num && v->node->inplace_input < 0; ++k)
    if (ref_count(&in[k]->type.shape) == ref_count(&out.shape) &&
        ref_elem_size(p.types[k]) == ref_elem_size(out_type))
      ref_inplace_of(v, k);
  return v;
}

odla_value ref_binary_build(const char *op, ref_row_fn (*pick)(odla_element_type),
                            const char *supported, int bool_result, int unidirectional,
                            odla_value lhs, odla_value rhs, odla_value_id id) {
  odla_value in[2];
  odla_element_type t;
  ref_row_fn fn;
  in[0] = lhs;
  in[1] = rhs;
  if (!ref_check_operands(op, 2, in))
    return NULL;
  t = lhs->type.element_type;
  if (t != rhs->type.element_type)
    return ref_fail(ODLA_INVALID_PARAM, op, "operand element types differ: %s and %s",
                    ref_type_name(t), ref_type_name(rhs->type.element_type));
  fn = pick(t);
  if (!fn)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported (%s)",
                    ref_type_name(t), supported);
  return ref_bcast_node(op, fn, 2, in, bool_result ? ODLA_BOOL : t, unidirectional, NULL, id);
}

/* ---- Arithmetic kernels ------------------------------------------------------------- */

/* Rows are defined per type with the X-macros of ref_types.h: a callback per op and type
 * class defines ref_<op>_<suffix>, and REF_CASE_<op> maps the ODLA type to it. */
#define REF_ROW(op, E, S, C, SFX, EXPR)                                                            \
  REF_ROW2(ref_##op##_##SFX, S, C, S, REF_LOAD_##SFX, REF_STORE_##SFX, EXPR)
#define REF_PICK(op, FOR_TYPES)                                                                    \
  static ref_row_fn ref_##op##_pick(odla_element_type t) {                                         \
    switch (t) {                                                                                   \
      FOR_TYPES(REF_CASE_##op)                                                                     \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }

/* libm by compute type: float for f32, f16 and bf16, double for f64. */
#define REF_MATH_f32(fn) fn##f
#define REF_MATH_f16(fn) fn##f
#define REF_MATH_bf16(fn) fn##f
#define REF_MATH_f64(fn) fn

/* Integer add, sub and mul go through uint64_t, so that overflow wraps instead of being
 * undefined behaviour; the store truncates to the element type. */
#define REF_WRAP(OP) ((uint64_t)(x)OP(uint64_t)(z))

/* Floored remainder (the divisor's sign), Python's %. */
/* A zero remainder has the divisor's sign (ONNX Mod-28: -0.0 for 4 mod -2 and for 0 mod -3);
 * fmod already gives NaN for an infinite x or a zero z, and x for an infinite z, which the
 * sign correction turns into z where the signs differ. */
static inline float ref_floormodf(float x, float z) {
  float r = fmodf(x, z);
  if (r == 0)
    return copysignf(0.0f, z);
  return (r < 0) != (z < 0) ? r + z : r;
}
static inline double ref_floormod(double x, double z) {
  double r = fmod(x, z);
  if (r == 0)
    return copysign(0.0, z);
  return (r < 0) != (z < 0) ? r + z : r;
}
static inline int64_t ref_ifloormod(int64_t x, int64_t z) {
  int64_t r;
  if (z == 0 || z == -1) /* no trap; x % -1 is 0 and INT64_MIN % -1 would overflow */
    return 0;
  r = x % z;
  return r != 0 && ((r < 0) != (z < 0)) ? r + z : r;
}

/* Exact integer powers, by squaring modulo 2^64 (the store truncates: wrapping). A negative
 * exponent gives the truncated quotient 1 / x^-e: 1 for x == 1, +-1 for x == -1, else 0
 * (also for x == 0, like division by zero). */
static uint64_t ref_ipow_u(uint64_t x, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, x *= x)
    if (e & 1)
      r *= x;
  return r;
}
static uint64_t ref_ipow_s(int64_t x, int64_t e) {
  if (e >= 0)
    return ref_ipow_u((uint64_t)x, (uint64_t)e);
  if (x == 1)
    return 1;
  if (x == -1)
    return (e & 1) ? (uint64_t)-1 : 1;
  return 0;
}

#define REF_CASE(op, E, SFX)                                                                       \
  case E:                                                                                          \
    return ref_##op##_##SFX;

#define REF_ADD_F(E, S, C, SFX) REF_ROW(add, E, S, C, SFX, x + z)
#define REF_ADD_I(E, S, C, SFX) REF_ROW(add, E, S, C, SFX, REF_WRAP(+))
#define REF_CASE_add(E, S, C, SFX) REF_CASE(add, E, SFX)
REF_FOR_FLOAT_TYPES(REF_ADD_F)
REF_FOR_INT_TYPES(REF_ADD_I)
REF_PICK(add, REF_FOR_NUMERIC_TYPES)

#define REF_SUB_F(E, S, C, SFX) REF_ROW(sub, E, S, C, SFX, x - z)
#define REF_SUB_I(E, S, C, SFX) REF_ROW(sub, E, S, C, SFX, REF_WRAP(-))
#define REF_CASE_sub(E, S, C, SFX) REF_CASE(sub, E, SFX)
REF_FOR_FLOAT_TYPES(REF_SUB_F)
REF_FOR_INT_TYPES(REF_SUB_I)
REF_PICK(sub, REF_FOR_NUMERIC_TYPES)

#define REF_MUL_F(E, S, C, SFX) REF_ROW(mul, E, S, C, SFX, x *z)
#define REF_MUL_I(E, S, C, SFX) REF_ROW(mul, E, S, C, SFX, REF_WRAP(*))
#define REF_CASE_mul(E, S, C, SFX) REF_CASE(mul, E, SFX)
REF_FOR_FLOAT_TYPES(REF_MUL_F)
REF_FOR_INT_TYPES(REF_MUL_I)
REF_PICK(mul, REF_FOR_NUMERIC_TYPES)

/* The quotient goes through uint64_t as well: INT_MIN / -1 is computed as 0 - INT_MIN. */
#define REF_DIV_F(E, S, C, SFX) REF_ROW(div, E, S, C, SFX, x / z)
#define REF_DIV_S(E, S, C, SFX)                                                                    \
  REF_ROW(div, E, S, C, SFX, z == 0 ? (uint64_t)0 : (z == -1 ? 0 - (uint64_t)x : (uint64_t)(x / z)))
#define REF_DIV_U(E, S, C, SFX) REF_ROW(div, E, S, C, SFX, z == 0 ? 0 : x / z)
#define REF_CASE_div(E, S, C, SFX) REF_CASE(div, E, SFX)
REF_FOR_FLOAT_TYPES(REF_DIV_F)
REF_FOR_SIGNED_INT_TYPES(REF_DIV_S)
REF_FOR_UNSIGNED_INT_TYPES(REF_DIV_U)
REF_PICK(div, REF_FOR_NUMERIC_TYPES)

/* (x - z)^2; integers square the wrapped difference, modulo 2^width (numpy's
 * square(subtract(x, z)) in the operands' type). */
#define REF_SQDIFF_F(E, S, C, SFX) REF_ROW(sqdiff, E, S, C, SFX, (x - z) * (x - z))
#define REF_SQDIFF_I(E, S, C, SFX) REF_ROW(sqdiff, E, S, C, SFX, REF_WRAP(-) * REF_WRAP(-))
#define REF_CASE_sqdiff(E, S, C, SFX) REF_CASE(sqdiff, E, SFX)
REF_FOR_FLOAT_TYPES(REF_SQDIFF_F)
REF_FOR_INT_TYPES(REF_SQDIFF_I)
REF_PICK(sqdiff, REF_FOR_NUMERIC_TYPES)

#define REF_MAX_F(E, S, C, SFX) REF_ROW(max, E, S, C, SFX, (x != x || x > z) ? x : z)
#define REF_MAX_I(E, S, C, SFX) REF_ROW(max, E, S, C, SFX, x > z ? x : z)
#define REF_CASE_max(E, S, C, SFX) REF_CASE(max, E, SFX)
REF_FOR_FLOAT_TYPES(REF_MAX_F)
REF_FOR_INT_TYPES(REF_MAX_I)
REF_PICK(max, REF_FOR_NUMERIC_TYPES)

#define REF_MIN_F(E, S, C, SFX) REF_ROW(min, E, S, C, SFX, (x != x || x < z) ? x : z)
#define REF_MIN_I(E, S, C, SFX) REF_ROW(min, E, S, C, SFX, x < z ? x : z)
#define REF_CASE_min(E, S, C, SFX) REF_CASE(min, E, SFX)
REF_FOR_FLOAT_TYPES(REF_MIN_F)
REF_FOR_INT_TYPES(REF_MIN_I)
REF_PICK(min, REF_FOR_NUMERIC_TYPES)

/* Remainder with the sign of the dividend (C's fmod and %): truncmod; with the sign of the
 * divisor (Python's %): floormod. Both are x % z for unsigned types. */
#define REF_MOD_F(E, S, C, SFX)                                                                    \
  REF_ROW(truncmod, E, S, C, SFX, REF_MATH_##SFX(fmod)(x, z))                                      \
  REF_ROW(floormod, E, S, C, SFX, REF_MATH_##SFX(ref_floormod)(x, z))
#define REF_MOD_S(E, S, C, SFX)                                                                    \
  REF_ROW(truncmod, E, S, C, SFX, z == 0 || z == -1 ? 0 : x % z)                                   \
  REF_ROW(floormod, E, S, C, SFX, ref_ifloormod(x, z))
#define REF_MOD_U(E, S, C, SFX)                                                                    \
  REF_ROW(truncmod, E, S, C, SFX, z == 0 ? 0 : x % z)                                              \
  REF_ROW(floormod, E, S, C, SFX, z == 0 ? 0 : x % z)
#define REF_CASE_truncmod(E, S, C, SFX) REF_CASE(truncmod, E, SFX)
#define REF_CASE_floormod(E, S, C, SFX) REF_CASE(floormod, E, SFX)
REF_FOR_FLOAT_TYPES(REF_MOD_F)
REF_FOR_SIGNED_INT_TYPES(REF_MOD_S)
REF_FOR_UNSIGNED_INT_TYPES(REF_MOD_U)
REF_PICK(truncmod, REF_FOR_NUMERIC_TYPES)
REF_PICK(floormod, REF_FOR_NUMERIC_TYPES)

#define REF_POW_F(E, S, C, SFX) REF_ROW(pow, E, S, C, SFX, REF_MATH_##SFX(pow)(x, z))
#define REF_POW_S(E, S, C, SFX) REF_ROW(pow, E, S, C, SFX, ref_ipow_s(x, z))
#define REF_POW_U(E, S, C, SFX) REF_ROW(pow, E, S, C, SFX, ref_ipow_u(x, z))
#define REF_CASE_pow(E, S, C, SFX) REF_CASE(pow, E, SFX)
REF_FOR_FLOAT_TYPES(REF_POW_F)
REF_FOR_SIGNED_INT_TYPES(REF_POW_S)
REF_FOR_UNSIGNED_INT_TYPES(REF_POW_U)
REF_PICK(pow, REF_FOR_NUMERIC_TYPES)
/* Pow by a constant exponent of 2 (LayerNorm's variance, unrecognized in a quantized model):
 * x * x, which is what a correctly rounded pow gives, at the speed of a multiplication. The
 * exponent, always 2 here, joins as 0 * z. */
#define REF_SQUARE_F(E, S, C, SFX) REF_ROW(square, E, S, C, SFX, x *x + 0 * z)
#define REF_CASE_square(E, S, C, SFX) REF_CASE(square, E, SFX)
REF_FOR_FLOAT_TYPES(REF_SQUARE_F)
REF_PICK(square, REF_FOR_FLOAT_TYPES)

/* Shifts by the element width or more give 0. Signed types (ONNX BitShift-28): a left shift
 * wraps (bits past the sign bit are dropped); a right shift is arithmetic, written with ~ so
 * that no negative value is shifted (implementation-defined in C); a negative amount or one of
 * the width or more gives what the sign extension alone gives: -1 shifting a negative x
 * right, else 0. */
#define REF_SHIFT_OUT(S, z) ((z) < 0 || (uint64_t)(z) >= 8 * sizeof(S))
#define REF_SHL_U(E, S, C, SFX)                                                                    \
  REF_ROW(shl, E, S, C, SFX, (uint64_t)z >= 8 * sizeof(S) ? 0 : (uint64_t)x << z)
#define REF_SHR_U(E, S, C, SFX)                                                                    \
  REF_ROW(shr, E, S, C, SFX, (uint64_t)z >= 8 * sizeof(S) ? 0 : (uint64_t)x >> z)
#define REF_SHL_S(E, S, C, SFX)                                                                    \
  REF_ROW(shl, E, S, C, SFX, REF_SHIFT_OUT(S, z) ? 0 : (C)((uint64_t)x << z))
#define REF_SHR_S(E, S, C, SFX)                                                                    \
  REF_ROW(shr, E, S, C, SFX, REF_SHIFT_OUT(S, z) ? (x < 0 ? -1 : 0) : (x < 0 ? ~(~x >> z) : x >> z))
#define REF_CASE_shl(E, S, C, SFX) REF_CASE(shl, E, SFX)
#define REF_CASE_shr(E, S, C, SFX) REF_CASE(shr, E, SFX)
REF_FOR_UNSIGNED_INT_TYPES(REF_SHL_U)
REF_FOR_UNSIGNED_INT_TYPES(REF_SHR_U)
REF_FOR_SIGNED_INT_TYPES(REF_SHL_S)
REF_FOR_SIGNED_INT_TYPES(REF_SHR_S)
REF_PICK(shl, REF_FOR_INT_TYPES)
REF_PICK(shr, REF_FOR_INT_TYPES)

/* PRelu: slope * x where x < 0; unsigned inputs are never negative (0 * z keeps z used). */
#define REF_PRELU_F(E, S, C, SFX) REF_ROW(prelu, E, S, C, SFX, x < 0 ? x * z : x)
#define REF_PRELU_S(E, S, C, SFX) REF_ROW(prelu, E, S, C, SFX, x < 0 ? REF_WRAP(*) : (uint64_t)x)
#define REF_PRELU_U(E, S, C, SFX) REF_ROW(prelu, E, S, C, SFX, x + 0 * z)
#define REF_CASE_prelu(E, S, C, SFX) REF_CASE(prelu, E, SFX)
REF_FOR_FLOAT_TYPES(REF_PRELU_F)
REF_FOR_SIGNED_INT_TYPES(REF_PRELU_S)
REF_FOR_UNSIGNED_INT_TYPES(REF_PRELU_U)
REF_PICK(prelu, REF_FOR_NUMERIC_TYPES)

/* Pow with an exponent of another element type: element by element through the generic
 * accessors. A float base (or exponent) computes pow in double and stores it converted to
 * the base's type (integers: truncated toward zero, saturated, NaN to 0); integer base and
 * exponent compute exactly (ref_ipow_*). */
static int ref_is_unsigned(odla_element_type t) {
  return t == ODLA_UINT8 || t == ODLA_UINT16 || t == ODLA_UINT32 || t == ODLA_UINT64;
}

static void ref_store_wrapped(odla_element_type t, void *y, int64_t i, uint64_t v) {
  switch (t) {
  case ODLA_INT8:
    ((int8_t *)y)[i] = (int8_t)v;
    break;
  case ODLA_INT16:
    ((int16_t *)y)[i] = (int16_t)v;
    break;
  case ODLA_INT32:
    ((int32_t *)y)[i] = (int32_t)v;
    break;
  case ODLA_INT64:
    ((int64_t *)y)[i] = (int64_t)v;
    break;
  case ODLA_UINT8:
    ((uint8_t *)y)[i] = (uint8_t)v;
    break;
  case ODLA_UINT16:
    ((uint16_t *)y)[i] = (uint16_t)v;
    break;
  case ODLA_UINT32:
    ((uint32_t *)y)[i] = (uint32_t)v;
    break;
  case ODLA_UINT64:
    ((uint64_t *)y)[i] = v;
    break;
  default:
    break;
  }
}

static void ref_pow_mixed(void *y, const void *const *in, const int64_t *s, int64_t n,
                          const void *ctx) {
  const ref_bcast_params *p = (const ref_bcast_params *)ctx;
  const odla_element_type tb = p->types[0], te = p->types[1];
  int64_t i;
  if (ref_is_float(tb) || ref_is_float(te)) {
    for (i = 0; i < n; ++i)
      ref_set(tb, y, i, pow(ref_get(tb, in[0], i * s[0]), ref_get(te, in[1], i * s[1])));
    return;
  }
  for (i = 0; i < n; ++i) {
    const int64_t x = ref_get_int(tb, in[0], i * s[0]), e = ref_get_int(te, in[1], i * s[1]);
    ref_store_wrapped(
        tb, y, i, ref_is_unsigned(te) ? ref_ipow_u((uint64_t)x, (uint64_t)e) : ref_ipow_s(x, e));
  }
}

/* ---- Mean ------------------------------------------------------------------------------ */

/* Mean sums its inputs in the compute type (into the output for float32 and float64, into
 * float scratch for float16 and bfloat16), then divides by their number once. */
typedef void (*ref_mean_finish_fn)(const void *acc, void *y, int64_t n, int64_t count);

#define REF_MEAN_ROWS(E, S, C, SFX)                                                                \
  static void ref_mean_set_##SFX(void *vy, const void *const *in, const int64_t *s, int64_t n,     \
                                 const void *ctx) {                                                \
    const S *x = (const S *)in[0];                                                                 \
    C *acc = (C *)vy;                                                                              \
    int64_t i;                                                                                     \
    (void)ctx;                                                                                     \
    for (i = 0; i < n; ++i)                                                                        \
      acc[i] = REF_LOAD_##SFX(x, i * s[0]);                                                        \
  }                                                                                                \
  static void ref_mean_add_##SFX(void *vy, const void *const *in, const int64_t *s, int64_t n,     \
                                 const void *ctx) {                                                \
    const S *x = (const S *)in[0];                                                                 \
    C *acc = (C *)vy;                                                                              \
    int64_t i;                                                                                     \
    (void)ctx;                                                                                     \
    if (s[0] == 1)                                                                                 \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] += REF_LOAD_##SFX(x, i);                                                            \
    else                                                                                           \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] += REF_LOAD_##SFX(x, i * s[0]);                                                     \
  }                                                                                                \
  static void ref_mean_finish_##SFX(const void *vacc, void *vy, int64_t n, int64_t count) {        \
    const C *acc = (const C *)vacc;                                                                \
    S *y = (S *)vy;                                                                                \
    int64_t i;                                                                                     \
    for (i = 0; i < n; ++i)                                                                        \
      REF_STORE_##SFX(y, i, acc[i] / (C)count);                                                    \
  }
REF_FOR_FLOAT_TYPES(REF_MEAN_ROWS)

typedef struct {
  ref_row_fn set, add;
  ref_mean_finish_fn finish;
  size_t acc_size; /* bytes of one accumulator element */
  int in_scratch;  /* accumulate in scratch (float16, bfloat16) rather than the output */
} ref_mean_params;

static odla_status ref_mean_run(const ref_node *node, const ref_io *io) {
  const ref_mean_params *p = (const ref_mean_params *)node->params;
  const odla_value_shape *out = &node->outputs[0]->type.shape;
  const int64_t n = ref_count(out);
  void *acc = p->in_scratch ? io->scratch : io->out[0];
  int k;
  if (n == 0)
    return ODLA_SUCCESS;
  for (k = 0; k < node->num_inputs; ++k) {
    const odla_value_shape *shape = &node->inputs[k]->type.shape;
    const size_t esize = ref_elem_size(node->inputs[k]->type.element_type);
    ref_bcast bc;
    ref_bcast_init(&bc, 1, &shape, out);
    ref_bcast_run(&bc, k == 0 ? p->set : p->add, acc, p->acc_size, &io->in[k], &esize, p);
  }
  p->finish(acc, io->out[0], n, node->num_inputs);
  return ODLA_SUCCESS;
}

/* ---- Builders ------------------------------------------------------------------------ */

odla_value odla_Add(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Add", ref_add_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}
odla_value odla_Sub(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Sub", ref_sub_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}
odla_value odla_Mul(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Mul", ref_mul_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}
odla_value odla_Div(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Div", ref_div_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}
/* (lhs - rhs)^2, broadcasting; integers wrap (see REF_SQDIFF_I). */
odla_value odla_SquaredDifference(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("SquaredDifference", ref_sqdiff_pick, "numeric types", 0, 0, lhs, rhs,
                          value_id);
}
/* NaN in either operand gives NaN. */
odla_value odla_Max(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Max", ref_max_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}
odla_value odla_Min(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Min", ref_min_pick, "numeric types", 0, 0, lhs, rhs, value_id);
}

/* fmod != 0: the remainder has the dividend's sign (C's fmod and %); fmod == 0: the
 * divisor's sign (floored, Python's %), for floats too. Unsigned types: both are x % z.
 * A zero integer divisor gives 0; a zero float divisor gives NaN. */
odla_value odla_Mod(odla_value lhs, odla_value rhs, odla_int64 fmod, const odla_value_id value_id) {
  return ref_binary_build("Mod", fmod ? ref_truncmod_pick : ref_floormod_pick, "numeric types", 0,
                          0, lhs, rhs, value_id);
}

/* Integer types; shift_amount has the input's type and broadcasts with it (REF_SHL_S and
 * REF_SHR_S say what signed types and out-of-range amounts give). */
odla_value odla_Shift(odla_value input, odla_value shift_amount, odla_bool is_left_shift,
                      const odla_value_id value_id) {
  return ref_binary_build("Shift", is_left_shift ? ref_shl_pick : ref_shr_pick, "integer types", 0,
                          0, input, shift_amount, value_id);
}

/* The slope broadcasts to the input (unidirectionally); y = x < 0 ? slope * x : x. */
odla_value odla_PRelu(odla_value input, odla_value slope, const odla_value_id value_id) {
  return ref_binary_build("PRelu", ref_prelu_pick, "numeric types", 0, 1, input, slope, value_id);
}

/* The exponent may have another numeric type than the base; the result has the base's type.
 * Same types: float types use libm's pow (in float for float16 and bfloat16); integers are
 * exact and wrap, and a negative integer exponent gives the truncated 1 / x^-e (0 for
 * |x| > 1 and x == 0). Mixed types: see ref_pow_mixed. */
odla_value odla_Pow(odla_value base, odla_value exponent, const odla_value_id value_id) {
  odla_value in[2];
  odla_element_type tb, te;
  in[0] = base;
  in[1] = exponent;
  if (!ref_check_operands("Pow", 2, in))
    return NULL;
  tb = base->type.element_type;
  te = exponent->type.element_type;
  if (tb == te && ref_is_float(tb) && exponent->kind == REF_CONSTANT &&
      ref_count(&exponent->type.shape) == 1 && ref_get(te, exponent->data, 0) == 2.0)
    return ref_binary_build("Pow", ref_square_pick, "float types", 0, 0, base, exponent, value_id);
  if (tb == te)
    return ref_binary_build("Pow", ref_pow_pick, "numeric types", 0, 0, base, exponent, value_id);
  if (!ref_is_float(tb) && !ref_is_int(tb))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Pow",
                    "base element type %s is not supported (numeric types)", ref_type_name(tb));
  if (!ref_is_float(te) && !ref_is_int(te))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Pow",
                    "exponent element type %s is not supported (numeric types)", ref_type_name(te));
  return ref_bcast_node("Pow", ref_pow_mixed, 2, in, tb, 0, NULL, value_id);
}

/* The average of 1 to ODLA_MAX_OUTPUTS inputs of one float type, broadcast together
 * numpy-style. */
odla_value odla_Mean(odla_values inputs, const odla_value_id value_id) {
  const odla_value_shape *shapes[ODLA_MAX_OUTPUTS];
  ref_mean_params p;
  odla_value_type out;
  odla_value v;
  odla_element_type t;
  size_t k;
  if (inputs.size < 1 || inputs.size > ODLA_MAX_OUTPUTS)
    return ref_fail(ODLA_INVALID_PARAM, "Mean", "takes 1 to %d inputs, got %lu", ODLA_MAX_OUTPUTS,
                    (unsigned long)inputs.size);
  if (!ref_check_operands("Mean", (int)inputs.size, inputs.values))
    return NULL;
  t = inputs.values[0]->type.element_type;
  for (k = 0; k < inputs.size; ++k) {
    if (inputs.values[k]->type.element_type != t)
      return ref_fail(ODLA_INVALID_PARAM, "Mean", "input %lu has element type %s, input 0 %s",
                      (unsigned long)k, ref_type_name(inputs.values[k]->type.element_type),
                      ref_type_name(t));
    shapes[k] = &inputs.values[k]->type.shape;
  }
  memset(&p, 0, sizeof p);
  switch (t) {
#define REF_MEAN_CASE(E, S, C, SFX)                                                                \
  case E:                                                                                          \
    p.set = ref_mean_set_##SFX;                                                                    \
    p.add = ref_mean_add_##SFX;                                                                    \
    p.finish = ref_mean_finish_##SFX;                                                              \
    p.acc_size = sizeof(C);                                                                        \
    p.in_scratch = sizeof(C) != sizeof(S);                                                         \
    break;
    REF_FOR_FLOAT_TYPES(REF_MEAN_CASE)
#undef REF_MEAN_CASE
  default:
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Mean",
                    "element type %s is not supported (float types)", ref_type_name(t));
  }
  if (!ref_bcast_shape((int)inputs.size, shapes, &out.shape)) {
    char names[1024] = "", buf[160];
    for (k = 0; k < inputs.size && strlen(names) + 170 < sizeof names; ++k) {
      strcat(names, k == 0 ? "" : " ");
      strcat(names, ref_shape_str(shapes[k], buf, sizeof buf));
    }
    return ref_fail(ODLA_INVALID_PARAM, "Mean", "shapes %s do not broadcast", names);
  }
  out.element_type = t;
  v = ref_add_op("Mean", ref_mean_run, (int)inputs.size, inputs.values, out, value_id, &p,
                 sizeof p);
  if (v && p.in_scratch)
    v->node->scratch_bytes = (size_t)ref_count(&out.shape) * p.acc_size;
  return v;
}
