/* ops_elementwise.c: unary elementwise ops of the reference backend: math, activations,
 * predicates, Clamp, Not, ExtBitwiseNot and value copies (Cast is in ops_unary_cast.c).
 * Rsqrt is 1 / sqrt(x) in the compute type (rsqrt(0) = +inf, negative x gives NaN).
 *
 * Element types (what each builder accepts):
 *   - float math and activations: float32, float64, float16, bfloat16. float16 and bfloat16
 *     compute in float32 and round the result to nearest even.
 *   - Abs, Sign, Erf, Shrink, Clamp: every numeric type; Neg and Relu: floats and signed
 *     integers. Integer Abs and Neg wrap around for the most negative value (as two's
 *     complement and numpy do); integer Erf computes in float64 and truncates toward zero
 *     (ONNX's reference implementation); integer Shrink is described at odla_Shrink.
 *   - IsNaN, IsInf: floats, result bool. Not: bool. ExtBitwiseNot: integers.
 *
 * NaN inputs propagate through the math and through Relu, LeakyRelu, Elu, Selu, Celu,
 * HardSigmoid, Clamp and Sign; ThresholdedRelu and Shrink map NaN to 0 (their conditions are
 * false for NaN, as in ONNX's reference implementation). */
#include "ref.h"
#include "ref_types.h"
#include "ref_vmath.h"
#include "threads.h"

#include <math.h>
#include <string.h>

/* Type-generic math, as <tgmath.h> would give it (which newlib cannot: it names long double
 * complex functions newlib lacks): fn's float form in a float kernel, its double form in a
 * double one, of the kernel's compute type ref_c (the test is a constant the compiler folds). */
#define REF_TG(fn, v)                                                                              \
  ((ref_c)(sizeof(ref_c) == sizeof(float) ? fn##f((float)(v)) : fn((double)(v))))

/* ---- Kernel generators ------------------------------------------------------------- */

typedef struct ref_unary_params ref_unary_params;
typedef void (*ref_unary_fn)(const void *x, void *y, int64_t n, const ref_unary_params *p);

struct ref_unary_params {
  int64_t n;
  ref_unary_fn fn;
  size_t x_size, y_size; /* element bytes of the operand and the result */
  /* The op's float parameters: LeakyRelu, Elu, Celu, ThresholdedRelu: alpha. Selu: alpha,
   * gamma (beta). HardSigmoid: alpha, beta. Shrink: bias (alpha), lambd (beta). Clamp on
   * floats: lo (alpha), hi (beta). */
  float alpha, beta;
  int64_t lo_s, hi_s;         /* Clamp on signed integers: the bounds in the element type's range */
  uint64_t lo_u, hi_u;        /* Clamp on unsigned integers */
  int detect_pos, detect_neg; /* IsInf */
};

/* ref_<name>_<SFX>: y[i] = EXPR for v = x[i] in the compute type C (floats: alpha and beta
 * converted to C). */
#define REF_UNARY_FN_F(name, SFX, S, C, EXPR)                                                      \
  REF_HOT static void ref_##name##_##SFX(const void *vx, void *vy, int64_t n,                      \
                                         const ref_unary_params *p) {                              \
    const S *x = (const S *)vx;                                                                    \
    S *y = (S *)vy;                                                                                \
    typedef C ref_c; /* REF_TG's type */                                                           \
    const C alpha = (C)p->alpha, beta = (C)p->beta;                                                \
    int64_t i;                                                                                     \
    (void)alpha;                                                                                   \
    (void)sizeof(ref_c);                                                                           \
    (void)beta;                                                                                    \
    for (i = 0; i < n; ++i) {                                                                      \
      const C v = REF_LOAD_##SFX(x, i);                                                            \
      REF_STORE_##SFX(y, i, EXPR);                                                                 \
    }                                                                                              \
  }

/* The integer form: lo and hi are Clamp's bounds (p->lo_s/hi_s for signed types, SGN = s;
 * p->lo_u/hi_u for unsigned ones, SGN = u), already within the type's range. */
#define REF_UNARY_FN_I(name, SFX, C, SGN, EXPR)                                                    \
  static void ref_##name##_##SFX(const void *vx, void *vy, int64_t n, const ref_unary_params *p) { \
    const C *x = (const C *)vx;                                                                    \
    C *y = (C *)vy;                                                                                \
    const C lo = (C)p->lo_##SGN, hi = (C)p->hi_##SGN;                                              \
    int64_t i;                                                                                     \
    (void)lo;                                                                                      \
    (void)hi;                                                                                      \
    for (i = 0; i < n; ++i) {                                                                      \
      const C v = x[i];                                                                            \
      y[i] = (C)(EXPR);                                                                            \
    }                                                                                              \
  }

/* A float predicate: bool y[i] = EXPR. */
#define REF_PREDICATE_FN(name, SFX, S, C, EXPR)                                                    \
  static void ref_##name##_##SFX(const void *vx, void *vy, int64_t n, const ref_unary_params *p) { \
    const S *x = (const S *)vx;                                                                    \
    uint8_t *y = (uint8_t *)vy;                                                                    \
    typedef C ref_c; /* REF_TG's type */                                                           \
    int64_t i;                                                                                     \
    (void)p;                                                                                       \
    (void)sizeof(ref_c);                                                                           \
    for (i = 0; i < n; ++i) {                                                                      \
      const C v = REF_LOAD_##SFX(x, i);                                                            \
      y[i] = (uint8_t)((EXPR) != 0);                                                               \
    }                                                                                              \
  }

#define REF_FLOAT_FNS(GEN, name, EXPR)                                                             \
  GEN(name, f32, float, float, EXPR)                                                               \
  GEN(name, f64, double, double, EXPR)                                                             \
  GEN(name, f16, uint16_t, float, EXPR)                                                            \
  GEN(name, bf16, uint16_t, float, EXPR)
#define REF_SIGNED_INT_FNS(name, EXPR)                                                             \
  REF_UNARY_FN_I(name, i8, int8_t, s, EXPR)                                                        \
  REF_UNARY_FN_I(name, i16, int16_t, s, EXPR)                                                      \
  REF_UNARY_FN_I(name, i32, int32_t, s, EXPR)                                                      \
  REF_UNARY_FN_I(name, i64, int64_t, s, EXPR)
#define REF_UNSIGNED_INT_FNS(name, EXPR)                                                           \
  REF_UNARY_FN_I(name, u8, uint8_t, u, EXPR)                                                       \
  REF_UNARY_FN_I(name, u16, uint16_t, u, EXPR)                                                     \
  REF_UNARY_FN_I(name, u32, uint32_t, u, EXPR)                                                     \
  REF_UNARY_FN_I(name, u64, uint64_t, u, EXPR)

#define REF_PICK_FLOAT(name)                                                                       \
  case ODLA_FLOAT32:                                                                               \
    return ref_##name##_f32;                                                                       \
  case ODLA_FLOAT64:                                                                               \
    return ref_##name##_f64;                                                                       \
  case ODLA_FLOAT16:                                                                               \
    return ref_##name##_f16;                                                                       \
  case ODLA_BFLOAT16:                                                                              \
    return ref_##name##_bf16;
#define REF_PICK_SIGNED_INT(name)                                                                  \
  case ODLA_INT8:                                                                                  \
    return ref_##name##_i8;                                                                        \
  case ODLA_INT16:                                                                                 \
    return ref_##name##_i16;                                                                       \
  case ODLA_INT32:                                                                                 \
    return ref_##name##_i32;                                                                       \
  case ODLA_INT64:                                                                                 \
    return ref_##name##_i64;
#define REF_PICK_UNSIGNED_INT(name)                                                                \
  case ODLA_UINT8:                                                                                 \
    return ref_##name##_u8;                                                                        \
  case ODLA_UINT16:                                                                                \
    return ref_##name##_u16;                                                                       \
  case ODLA_UINT32:                                                                                \
    return ref_##name##_u32;                                                                       \
  case ODLA_UINT64:                                                                                \
    return ref_##name##_u64;

/* Defines ref_<name>_for(type): the kernel for an element type, or NULL. One macro per set
 * of element types an op accepts. */
#define REF_UNARY_FLOAT(name, EXPR)                                                                \
  REF_FLOAT_FNS(REF_UNARY_FN_F, name, EXPR)                                                        \
  static ref_unary_fn ref_##name##_for(odla_element_type t) {                                      \
    switch (t) {                                                                                   \
      REF_PICK_FLOAT(name)                                                                         \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }
#define REF_UNARY_SIGNED(name, FEXPR, IEXPR)                                                       \
  REF_FLOAT_FNS(REF_UNARY_FN_F, name, FEXPR)                                                       \
  REF_SIGNED_INT_FNS(name, IEXPR)                                                                  \
  static ref_unary_fn ref_##name##_for(odla_element_type t) {                                      \
    switch (t) {                                                                                   \
      REF_PICK_FLOAT(name)                                                                         \
      REF_PICK_SIGNED_INT(name)                                                                    \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }
#define REF_UNARY_NUMERIC(name, FEXPR, IEXPR, UEXPR)                                               \
  REF_FLOAT_FNS(REF_UNARY_FN_F, name, FEXPR)                                                       \
  REF_SIGNED_INT_FNS(name, IEXPR)                                                                  \
  REF_UNSIGNED_INT_FNS(name, UEXPR)                                                                \
  static ref_unary_fn ref_##name##_for(odla_element_type t) {                                      \
    switch (t) {                                                                                   \
      REF_PICK_FLOAT(name)                                                                         \
      REF_PICK_SIGNED_INT(name)                                                                    \
      REF_PICK_UNSIGNED_INT(name)                                                                  \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }
#define REF_PREDICATE(name, EXPR)                                                                  \
  REF_FLOAT_FNS(REF_PREDICATE_FN, name, EXPR)                                                      \
  static ref_unary_fn ref_##name##_for(odla_element_type t) {                                      \
    switch (t) {                                                                                   \
      REF_PICK_FLOAT(name)                                                                         \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }

#define REF_FLOATS "float32, float64, float16, bfloat16"
#define REF_SIGNED REF_FLOATS ", int8, int16, int32, int64"
#define REF_NUMERIC REF_SIGNED ", uint8, uint16, uint32, uint64"

/* Integer negation through uint64_t, so that the most negative value wraps instead of
 * overflowing (the generators convert the result back to the element type). */
#define REF_INEG(v) (0 - (uint64_t)(v))

/* ---- Math ---------------------------------------------------------------------------- */

REF_UNARY_NUMERIC(abs, REF_TG(fabs, v), v < 0 ? REF_INEG(v) : (uint64_t)v, v)
REF_UNARY_SIGNED(neg, -v, REF_INEG(v))
REF_UNARY_NUMERIC(sign, v > 0 ? 1 : (v < 0 ? -1 : v), (v > 0) - (v < 0), v > 0)
/* Exp and Erf in float32 (and float16, bfloat16) by ref_vmath.h's vectorizable forms. */
#define REF_IS_F32(v) (sizeof(v) == sizeof(float))
REF_UNARY_FLOAT(exp, REF_IS_F32(v) ? ref_expf((float)v) : REF_TG(exp, v))
REF_UNARY_FLOAT(log, REF_TG(log, v))
REF_UNARY_FLOAT(sqrt, REF_TG(sqrt, v))
REF_UNARY_FLOAT(rsqrt, 1 / REF_TG(sqrt, v))
REF_UNARY_FLOAT(reciprocal, 1 / v)
REF_UNARY_FLOAT(floor, REF_TG(floor, v))
REF_UNARY_FLOAT(ceil, REF_TG(ceil, v))
/* Half to even: nearbyint in the default rounding mode (round to nearest, ties to even). */
REF_UNARY_FLOAT(round, REF_TG(nearbyint, v))
REF_UNARY_FLOAT(sin, REF_TG(sin, v))
REF_UNARY_FLOAT(cos, REF_TG(cos, v))
REF_UNARY_FLOAT(tan, REF_TG(tan, v))
REF_UNARY_FLOAT(asin, REF_TG(asin, v))
REF_UNARY_FLOAT(acos, REF_TG(acos, v))
REF_UNARY_FLOAT(atan, REF_TG(atan, v))
REF_UNARY_FLOAT(sinh, REF_TG(sinh, v))
REF_UNARY_FLOAT(cosh, REF_TG(cosh, v))
REF_UNARY_FLOAT(asinh, REF_TG(asinh, v))
REF_UNARY_FLOAT(acosh, REF_TG(acosh, v))
REF_UNARY_FLOAT(atanh, REF_TG(atanh, v))
REF_UNARY_NUMERIC(erf, REF_IS_F32(v) ? ref_erff((float)v) : REF_TG(erf, v), erf((double)v),
                  erf((double)v))
REF_PREDICATE(isnan, v != v)
REF_PREDICATE(isinf, isinf(v) && (v > 0 ? p->detect_pos : p->detect_neg))

/* ---- Activations ----------------------------------------------------------------------- */

REF_UNARY_SIGNED(relu, v < 0 ? 0 : v, v < 0 ? 0 : v)
REF_UNARY_FLOAT(leaky_relu, v < 0 ? alpha * v : v)
REF_UNARY_FLOAT(elu, v < 0 ? alpha * REF_TG(expm1, v) : v)
REF_UNARY_FLOAT(selu, v > 0 ? beta * v : beta * alpha * REF_TG(expm1, v))
REF_UNARY_FLOAT(celu, v > 0 ? v : alpha * REF_TG(expm1, v / alpha))
REF_UNARY_FLOAT(sigmoid, v >= 0 ? 1 / (1 + REF_TG(exp, -v)) : REF_TG(exp, v) / (1 + REF_TG(exp, v)))
#define REF_HARD_SIGMOID(t) ((t) < 0 ? 0 : ((t) > 1 ? 1 : (t)))
REF_UNARY_FLOAT(hard_sigmoid, REF_HARD_SIGMOID(alpha *v + beta))
REF_UNARY_FLOAT(softplus,
                v > 0 ? v + REF_TG(log1p, REF_TG(exp, -v)) : REF_TG(log1p, REF_TG(exp, v)))
REF_UNARY_FLOAT(softsign, v / (1 + REF_TG(fabs, v)))
REF_UNARY_FLOAT(tanh, REF_TG(tanh, v))
REF_UNARY_FLOAT(thresholded_relu, v > alpha ? v : 0)
REF_UNARY_FLOAT(shrink, v < -beta ? v + alpha : (v > beta ? v - alpha : 0))
/* Integer Shrink with bias 0 is exact: x or 0. */
REF_SIGNED_INT_FNS(shrink0, (double)v<-(double)p->beta || (double)v>(double) p->beta ? v : 0)
REF_UNSIGNED_INT_FNS(shrink0, (double)v > (double)p->beta ? v : 0)

/* Integer Shrink with a nonzero bias computes in float64 (as ONNX's reference implementation
 * does) and converts back truncating toward zero, saturated to the type's range; NaN (from a
 * NaN bias or lambd) becomes 0, as in every conversion of ref_types.h. */
static double ref_shrink_in_f64(double v, const ref_unary_params *p) {
  const double bias = p->alpha, lambd = p->beta;
  return v < -lambd ? v + bias : (v > lambd ? v - bias : 0);
}
static int64_t ref_saturate_s(double v, int bits) {
  const double top = ldexp(1.0, bits - 1);
  const int64_t max = (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
  return v != v ? 0 : v >= top ? max : (v <= -top ? -max - 1 : (int64_t)v);
}
static uint64_t ref_saturate_u(double v, int bits) {
  const double top = ldexp(1.0, bits);
  return v >= top ? (bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1)
                  : (v <= 0 || v != v ? 0 : (uint64_t)v);
}
#define REF_SHRINK_INT(SGN) ref_saturate_##SGN(ref_shrink_in_f64((double)v, p), 8 * (int)sizeof v)
REF_SIGNED_INT_FNS(shrink_int, REF_SHRINK_INT(s))
REF_UNSIGNED_INT_FNS(shrink_int, REF_SHRINK_INT(u))

static ref_unary_fn ref_shrink_int_for(odla_element_type t, float bias) {
  if (bias == 0) {
    switch (t) {
      REF_PICK_SIGNED_INT(shrink0)
      REF_PICK_UNSIGNED_INT(shrink0)
    default:
      return NULL;
    }
  }
  switch (t) {
    REF_PICK_SIGNED_INT(shrink_int)
    REF_PICK_UNSIGNED_INT(shrink_int)
  default:
    return NULL;
  }
}

/* y = min(max(x, lo), hi): NaN stays NaN, and lo > hi gives hi everywhere (numpy.clip). */
REF_UNARY_NUMERIC(clamp, (v < alpha ? alpha : v) > beta ? beta : (v < alpha ? alpha : v),
                  (v < lo ? lo : v) > hi ? hi : (v < lo ? lo : v),
                  (v < lo ? lo : v) > hi ? hi : (v < lo ? lo : v))

static void ref_not_bool(const void *vx, void *vy, int64_t n, const ref_unary_params *p) {
  const uint8_t *x = (const uint8_t *)vx;
  uint8_t *y = (uint8_t *)vy;
  int64_t i;
  (void)p;
  for (i = 0; i < n; ++i)
    y[i] = (uint8_t)!x[i];
}

/* ---- Builders -------------------------------------------------------------------------- */

/* Every kernel here reads x[i] before it writes y[i], so the result may take its operand's
 * buffer (the planner does so when the sizes match and the operand dies here). */
static odla_value ref_inplace(odla_value y) {
  if (y)
    y->node->inplace_input = 0;
  return y;
}

/* Tensors of at least this many elements are split over the context's threads. */
enum { REF_UNARY_PARALLEL_MIN = 1 << 15 };

typedef struct {
  const ref_unary_params *p;
  const ref_io *io;
} ref_unary_job;

static void ref_unary_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_unary_job *job = (const ref_unary_job *)arg;
  const ref_unary_params *p = job->p;
  int64_t lo, hi;
  (void)scratch;
  ref_split(p->n, 64, index, parts, &lo, &hi);
  if (hi > lo)
    p->fn((const unsigned char *)job->io->in[0] + lo * p->x_size,
          (unsigned char *)job->io->out[0] + lo * p->y_size, hi - lo, p);
}

static odla_status ref_unary_run(const ref_node *node, const ref_io *io) {
  const ref_unary_params *p = (const ref_unary_params *)node->params;
  ref_unary_job job;
  job.p = p;
  job.io = io;
  if (p->n > 0)
    ref_parallel(ref_io_threads(io),
                 p->n < REF_UNARY_PARALLEL_MIN ? 1 : ref_threads_count(ref_io_threads(io)),
                 ref_unary_part, &job, (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

/* Appends the node of a unary op on x with kernel `fn` (NULL: x's element type is not one of
 * `types`, which the error lists). The result has x's type, or bool for predicates. */
static odla_value ref_unary_build(const char *op, ref_unary_fn fn, const char *types, odla_value x,
                                  int bool_result, ref_unary_params *p, odla_value_id id) {
  odla_value_type out;
  if (!fn)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported (%s)",
                    ref_type_name(x->type.element_type), types);
  p->fn = fn;
  p->n = ref_count(&x->type.shape);
  out = ref_type_of(x);
  if (bool_result)
    out.element_type = ODLA_BOOL;
  p->x_size = ref_elem_size(x->type.element_type);
  p->y_size = ref_elem_size(out.element_type);
  return ref_inplace(ref_add_op(op, ref_unary_run, 1, &x, out, id, p, sizeof *p));
}

static ref_unary_params ref_params(float alpha, float beta) {
  ref_unary_params p;
  memset(&p, 0, sizeof p);
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

/* Builders of ops without parameters. */
#define REF_UNARY_BUILDER(Op, name, types, bool_result)                                            \
  odla_value odla_##Op(odla_value input, const odla_value_id value_id) {                           \
    ref_unary_params p = ref_params(0, 0);                                                         \
    if (!ref_check_operands(#Op, 1, &input))                                                       \
      return NULL;                                                                                 \
    return ref_unary_build(#Op, ref_##name##_for(input->type.element_type), types, input,          \
                           bool_result, &p, value_id);                                             \
  }

REF_UNARY_BUILDER(Abs, abs, REF_NUMERIC, 0)
REF_UNARY_BUILDER(Neg, neg, REF_SIGNED, 0)
REF_UNARY_BUILDER(Sign, sign, REF_NUMERIC, 0)
REF_UNARY_BUILDER(Exp, exp, REF_FLOATS, 0)
REF_UNARY_BUILDER(Log, log, REF_FLOATS, 0)
REF_UNARY_BUILDER(Sqrt, sqrt, REF_FLOATS, 0)
REF_UNARY_BUILDER(Rsqrt, rsqrt, REF_FLOATS, 0)
REF_UNARY_BUILDER(Reciprocal, reciprocal, REF_FLOATS, 0)
REF_UNARY_BUILDER(Floor, floor, REF_FLOATS, 0)
REF_UNARY_BUILDER(Ceil, ceil, REF_FLOATS, 0)
REF_UNARY_BUILDER(Round, round, REF_FLOATS, 0)
REF_UNARY_BUILDER(Sin, sin, REF_FLOATS, 0)
REF_UNARY_BUILDER(Cos, cos, REF_FLOATS, 0)
REF_UNARY_BUILDER(Tan, tan, REF_FLOATS, 0)
REF_UNARY_BUILDER(ASin, asin, REF_FLOATS, 0)
REF_UNARY_BUILDER(ACos, acos, REF_FLOATS, 0)
REF_UNARY_BUILDER(ATan, atan, REF_FLOATS, 0)
REF_UNARY_BUILDER(Sinh, sinh, REF_FLOATS, 0)
REF_UNARY_BUILDER(Cosh, cosh, REF_FLOATS, 0)
REF_UNARY_BUILDER(ASinh, asinh, REF_FLOATS, 0)
REF_UNARY_BUILDER(ACosh, acosh, REF_FLOATS, 0)
REF_UNARY_BUILDER(ATanh, atanh, REF_FLOATS, 0)
REF_UNARY_BUILDER(Erf, erf, REF_NUMERIC, 0)
REF_UNARY_BUILDER(IsNaN, isnan, REF_FLOATS, 1)
REF_UNARY_BUILDER(Relu, relu, REF_SIGNED, 0)
REF_UNARY_BUILDER(Sigmoid, sigmoid, REF_FLOATS, 0)
REF_UNARY_BUILDER(Softplus, softplus, REF_FLOATS, 0)
REF_UNARY_BUILDER(Softsign, softsign, REF_FLOATS, 0)
REF_UNARY_BUILDER(Tanh, tanh, REF_FLOATS, 0)

#undef REF_UNARY_BUILDER

static ref_unary_fn ref_not_for(odla_element_type t) {
  return t == ODLA_BOOL ? ref_not_bool : NULL;
}

REF_SIGNED_INT_FNS(bitnot, ~v)
REF_UNSIGNED_INT_FNS(bitnot, ~v)
static ref_unary_fn ref_bitnot_for(odla_element_type t) {
  switch (t) {
    REF_PICK_SIGNED_INT(bitnot)
    REF_PICK_UNSIGNED_INT(bitnot)
  default:
    return NULL;
  }
}

odla_value odla_ExtBitwiseNot(odla_value input, const odla_value_id value_id) {
  ref_unary_params p = ref_params(0, 0);
  if (!ref_check_operands("ExtBitwiseNot", 1, &input))
    return NULL;
  return ref_unary_build("ExtBitwiseNot", ref_bitnot_for(input->type.element_type), "integer types",
                         input, 0, &p, value_id);
}

odla_value odla_Not(odla_value input, const odla_value_id value_id) {
  ref_unary_params p = ref_params(0, 0);
  if (!ref_check_operands("Not", 1, &input))
    return NULL;
  return ref_unary_build("Not", ref_not_for(input->type.element_type), "bool", input, 0, &p,
                         value_id);
}

/* detect_pos / detect_neg select which infinities count; with both false nothing does. */
odla_value odla_IsInf(odla_value input, odla_bool detect_pos, odla_bool detect_neg,
                      const odla_value_id value_id) {
  ref_unary_params p = ref_params(0, 0);
  if (!ref_check_operands("IsInf", 1, &input))
    return NULL;
  p.detect_pos = detect_pos != 0;
  p.detect_neg = detect_neg != 0;
  return ref_unary_build("IsInf", ref_isinf_for(input->type.element_type), REF_FLOATS, input, 1, &p,
                         value_id);
}

/* Builders of float activations with parameters. */
static odla_value ref_activation(const char *op, ref_unary_fn (*pick)(odla_element_type),
                                 odla_value x, float alpha, float beta, odla_value_id id) {
  ref_unary_params p = ref_params(alpha, beta);
  if (!ref_check_operands(op, 1, &x))
    return NULL;
  return ref_unary_build(op, pick(x->type.element_type), REF_FLOATS, x, 0, &p, id);
}

odla_value odla_LeakyRelu(odla_value input, odla_float32 alpha, const odla_value_id value_id) {
  return ref_activation("LeakyRelu", ref_leaky_relu_for, input, alpha, 0, value_id);
}
/* x for x >= 0, alpha * (exp(x) - 1) below. */
odla_value odla_Elu(odla_value input, odla_float32 alpha, const odla_value_id value_id) {
  return ref_activation("Elu", ref_elu_for, input, alpha, 0, value_id);
}
/* gamma * x for x > 0, gamma * alpha * (exp(x) - 1) otherwise. */
odla_value odla_Selu(odla_value input, odla_float32 alpha, odla_float32 gamma,
                     const odla_value_id value_id) {
  return ref_activation("Selu", ref_selu_for, input, alpha, gamma, value_id);
}
/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must not be 0. */
odla_value odla_Celu(odla_value input, odla_float32 alpha, const odla_value_id value_id) {
  if (alpha == 0)
    return ref_fail(ODLA_INVALID_PARAM, "Celu", "alpha must not be 0");
  return ref_activation("Celu", ref_celu_for, input, alpha, 0, value_id);
}
/* max(0, min(1, alpha * x + beta)). */
odla_value odla_HardSigmoid(odla_value input, odla_float32 alpha, odla_float32 beta,
                            const odla_value_id value_id) {
  return ref_activation("HardSigmoid", ref_hard_sigmoid_for, input, alpha, beta, value_id);
}
/* x for x > alpha, else 0. */
odla_value odla_ThresholdedRelu(odla_value input, odla_float32 alpha,
                                const odla_value_id value_id) {
  return ref_activation("ThresholdedRelu", ref_thresholded_relu_for, input, alpha, 0, value_id);
}

/* x + bias for x < -lambd, x - bias for x > lambd, else 0 (ONNX Shrink). Every numeric type:
 * integers compare against lambd in float64; with bias 0 the result is exact (x or 0),
 * otherwise x -/+ bias is computed in float64 and converted back truncating toward zero,
 * saturated to the type's range. */
odla_value odla_Shrink(odla_value input, odla_float32 bias, odla_float32 lambd,
                       const odla_value_id value_id) {
  ref_unary_params p = ref_params(bias, lambd);
  ref_unary_fn fn;
  if (!ref_check_operands("Shrink", 1, &input))
    return NULL;
  fn = ref_is_int(input->type.element_type) ? ref_shrink_int_for(input->type.element_type, bias)
                                            : ref_shrink_for(input->type.element_type);
  return ref_unary_build("Shrink", fn, REF_NUMERIC, input, 0, &p, value_id);
}

/* The integer bound of Clamp: lo rounds up and hi rounds down to an integer (so that the
 * result is the integer of [lo, hi] nearest to x), then saturates to [min, max]; -inf and
 * +inf are no bound. */
static void ref_int_bounds(odla_element_type t, double lo, double hi, ref_unary_params *p) {
  int bits = (int)ref_elem_size(t) * 8;
  if (t == ODLA_INT8 || t == ODLA_INT16 || t == ODLA_INT32 || t == ODLA_INT64) {
    double top = ldexp(1.0, bits - 1); /* 2^(bits-1): the first value above max */
    int64_t max = (int64_t)(((uint64_t)1 << (bits - 1)) - 1), min = -max - 1;
    lo = ceil(lo);
    hi = floor(hi);
    p->lo_s = lo <= -top ? min : (lo >= top ? max : (int64_t)lo);
    p->hi_s = hi <= -top ? min : (hi >= top ? max : (int64_t)hi);
  } else {
    double top = ldexp(1.0, bits);
    uint64_t max = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    lo = ceil(lo);
    hi = floor(hi);
    p->lo_u = lo <= 0 ? 0 : (lo >= top ? max : (uint64_t)lo);
    p->hi_u = hi <= 0 ? 0 : (hi >= top ? max : (uint64_t)hi);
  }
}

/* y = min(max(x, lo), hi) on every numeric type. NaN bounds are rejected; lo > hi is
 * allowed and gives hi everywhere (numpy.clip, ONNX Clip). Floats compare in their compute
 * type (float16/bfloat16 in float32, float64 against the float32 bounds widened exactly).
 * Integers are exact for every value, int64 included: the bounds are first converted to
 * the element type by ref_int_bounds (lo rounded up, hi rounded down, saturated). */
odla_value odla_Clamp(odla_value input, odla_float32 lo, odla_float32 hi,
                      const odla_value_id value_id) {
  ref_unary_params p = ref_params(lo, hi);
  if (!ref_check_operands("Clamp", 1, &input))
    return NULL;
  if (lo != lo || hi != hi)
    return ref_fail(ODLA_INVALID_PARAM, "Clamp", "bounds [%g, %g] must not be NaN", (double)lo,
                    (double)hi);
  if (ref_is_int(input->type.element_type))
    ref_int_bounds(input->type.element_type, lo, hi, &p);
  return ref_unary_build("Clamp", ref_clamp_for(input->type.element_type), REF_NUMERIC, input, 0,
                         &p, value_id);
}

/* ---- Copy ---------------------------------------------------------------------------- */

static odla_status ref_copy(const ref_node *node, const ref_io *io) {
  size_t bytes = ref_bytes(&node->outputs[0]->type);
  if (bytes && io->out[0] != io->in[0])
    memcpy(io->out[0], io->in[0], bytes);
  return ODLA_SUCCESS;
}

/* A copy of any element type. */
odla_value odla_CloneValue(const odla_value src_value, const odla_value_id value_id) {
  if (!ref_check_operands("CloneValue", 1, &src_value))
    return NULL;
  return ref_inplace(
      ref_add_op("CloneValue", ref_copy, 1, &src_value, ref_type_of(src_value), value_id, NULL, 0));
}

/* The copy of the value of the current computation whose id is src_value_id. */
odla_value odla_CloneValueById(const odla_value_id src_value_id, const odla_value_id value_id) {
  odla_value src = NULL;
  if (!ref_check_operands("CloneValueById", 0, NULL))
    return NULL;
  if (!src_value_id)
    return ref_fail(ODLA_INVALID_PARAM, "CloneValueById", "src_value_id is NULL");
  if (odla_FindValueById(src_value_id, &src) != ODLA_SUCCESS)
    return ref_fail(ODLA_INVALID_PARAM, "CloneValueById",
                    "no value of the current computation has the id '%s'",
                    (const char *)src_value_id);
  return odla_CloneValue(src, value_id);
}
