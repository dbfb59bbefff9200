/* ops_reduce.c: reductions over a set of axes in the reference backend: odla_ReduceSum, Mean,
 * Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare, and the extension
 * odla_ExtReduceDynamic (any of them over axes known only at run time), for every numeric
 * element type.
 *
 * Semantics (ODLA 0.5 leaves them open; odlac relies on these):
 * - `axes` lists the reduced axes, each in [0, rank), without duplicates, in any order. An
 *   empty list reduces nothing: each output element is the op applied to one input element
 *   (ReduceL1 gives |x|, ReduceSumSquare x*x). ONNX's "no axes means all axes" is resolved by
 *   the importer. keep_dims keeps reduced axes as extent 1.
 * - A reduction over zero elements gives the op's identity: 0 for sums, 1 for products;
 *   -inf for max and +inf for min (integers: the type's minimum and maximum); ReduceMean gives
 *   NaN (integers: 0); ReduceLogSum and ReduceLogSumExp give -inf.
 * - float16 and bfloat16 compute in float32, float32 in float32 (32 partial sums along a
 *   contiguous reduced run), float64 in float64. ReduceMax/ReduceMin propagate NaN.
 *   ReduceLogSumExp subtracts the per-output maximum before exponentiating.
 * - Integers are exact: sums, products and sums of squares wrap modulo 2^bits (numpy's
 *   arithmetic in the input type); ReduceMean divides the exact sum, truncating toward zero;
 *   ReduceL2, ReduceLogSum and ReduceLogSumExp compute in float64 and convert back truncating
 *   toward zero (saturating).
 * - epsilon (ReduceL1, ReduceL2): L1 = sum |x| + epsilon, L2 = sqrt(sum x^2 + epsilon); odlac
 *   passes 0, as ONNX has no epsilon.
 *
 * Kernel: one pass over the input in memory order. The iteration space drops extent-1 axes
 * and merges neighbouring axes that are both reduced or both kept, so a global average pool
 * over [N,C,H,W] is N*C contiguous runs of H*W, and a reduction over a leading axis adds
 * contiguous rows elementwise. Accumulators live in the output (float32, float64) or in the
 * node's scratch, and a final pass applies mean/sqrt/log and converts to the output type. */
#include "autodiff.h"
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

/* ---- Iteration plan ------------------------------------------------------------------ */

typedef struct {
  int rank; /* merged axes, >= 1 */
  int64_t dims[ODLA_MAX_DIMENSION];
  int64_t out_strides[ODLA_MAX_DIMENSION]; /* 0 along reduced axes */
  int64_t in_count, out_count, per_output;
} ref_reduce_plan;

/* Builds the plan for `in` with the axes flagged in `reduced`, and the result shape. */
static void ref_reduce_plan_make(const odla_value_shape *in, const int *reduced, int keep_dims,
                                 ref_reduce_plan *p, odla_value_shape *out) {
  int64_t ostr[ODLA_MAX_DIMENSION], stride = 1;
  int i, r = 0;
  memset(p, 0, sizeof *p);
  p->in_count = p->per_output = 1;
  for (i = in->size - 1; i >= 0; --i) {
    ostr[i] = reduced[i] ? 0 : stride;
    if (reduced[i])
      p->per_output *= in->dims[i];
    else
      stride *= in->dims[i];
    p->in_count *= in->dims[i];
  }
  p->out_count = stride;
  out->size = 0;
  for (i = 0; i < in->size; ++i)
    if (!reduced[i] || keep_dims)
      out->dims[out->size++] = reduced[i] ? 1 : in->dims[i];
  for (i = 0; i < in->size; ++i) {
    if (in->dims[i] == 1)
      continue;
    if (r > 0 && (ostr[i] == 0) == (p->out_strides[r - 1] == 0)) {
      p->dims[r - 1] *= in->dims[i];
      p->out_strides[r - 1] = ostr[i];
      continue;
    }
    p->dims[r] = in->dims[i];
    p->out_strides[r] = ostr[i];
    ++r;
  }
  if (r == 0) { /* one element */
    p->dims[0] = 1;
    p->out_strides[0] = 1;
    r = 1;
  }
  p->rank = r;
}

/* ---- Accumulation kernels ------------------------------------------------------------ */

/* How elements combine: after an optional map (|x|, x*x, exp(x - max)). */
typedef enum {
  REF_RK_SUM,
  REF_RK_ABS,
  REF_RK_SQ,
  REF_RK_PROD,
  REF_RK_MAX,
  REF_RK_MIN,
  REF_RK_EXP, /* sum of exp(x - m), m the output's maximum from a first pass */
  REF_RK_COUNT
} ref_reduce_kind;

/* What the final pass applies to each accumulator. */
typedef enum {
  REF_RF_NONE,
  REF_RF_MEAN,
  REF_RF_ADD_EPS,
  REF_RF_SQRT,    /* sqrt(acc + epsilon) */
  REF_RF_LOG,     /* log(acc) */
  REF_RF_LOG_MAX, /* log(acc) + m */
} ref_reduce_final;

/* Accumulator representation: float, double, or 64-bit integer bits (int64 for signed
 * max/min, uint64 wrapping arithmetic otherwise). */
typedef enum { REF_ACC_F32, REF_ACC_F64, REF_ACC_BITS } ref_acc_class;

typedef void (*ref_walk_fn)(const ref_reduce_plan *p, const void *x, void *acc, const void *aux);
typedef void (*ref_init_fn)(void *acc, int64_t n);

typedef struct {
  ref_walk_fn walk;
  ref_init_fn init;
  ref_acc_class acc;
} ref_reduce_impl;

/* Partial accumulators along a contiguous reduced run. GCC vectorizes 8 lanes of additions
 * and products as straight-line code, but max/min (a compare and select that must keep NaN)
 * only as a loop, which needs a trip count it does not unroll first. */
#define REF_LANES_ADD 8
#define REF_LANES_SELECT 32

/* Defines ref_rw_<NAME> (the walk) and ref_ri_<NAME> (filling accumulators with IDENT).
 * S: storage type, SFX: load suffix, A: accumulator type, PRE(c, m): the mapped element as A,
 * COMB(a, v): combine, AUX(aux, i): the per-output shift m (REF_RK_EXP only), LANES: partial
 * accumulators. */
#define REF_RW(NAME, S, SFX, A, IDENT, PRE, COMB, AUX, LANES)                                      \
  static void ref_ri_##NAME(void *vacc, int64_t n) {                                               \
    A *acc = (A *)vacc;                                                                            \
    int64_t i;                                                                                     \
    for (i = 0; i < n; ++i)                                                                        \
      acc[i] = IDENT;                                                                              \
  }                                                                                                \
  static void ref_rw_##NAME(const ref_reduce_plan *p, const void *vx, void *vacc,                  \
                            const void *vaux) {                                                    \
    const S *x = (const S *)vx;                                                                    \
    A *acc = (A *)vacc;                                                                            \
    const A *aux = (const A *)vaux;                                                                \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, o = 0, i, j;                                            \
    const int64_t n = p->dims[p->rank - 1];                                                        \
    const int inner_reduced = p->out_strides[p->rank - 1] == 0;                                    \
    int d;                                                                                         \
    (void)aux;                                                                                     \
    for (;;) {                                                                                     \
      if (inner_reduced) { /* a contiguous run into one output: partial accumulators */            \
        const A m = AUX(aux, o);                                                                   \
        A part[LANES], r = acc[o];                                                                 \
        int64_t w;                                                                                 \
        (void)m;                                                                                   \
        i = 0;                                                                                     \
        if (n >= LANES) {                                                                          \
          for (j = 0; j < LANES; ++j)                                                              \
            part[j] = PRE(REF_LOAD_##SFX(x, j), m);                                                \
          for (i = LANES; i + LANES <= n; i += LANES)                                              \
            for (j = 0; j < LANES; ++j) {                                                          \
              const A v = PRE(REF_LOAD_##SFX(x, i + j), m);                                        \
              part[j] = COMB(part[j], v);                                                          \
            }                                                                                      \
          for (w = LANES / 2; w > 0; w /= 2) /* pairwise */                                        \
            for (j = 0; j < w; ++j)                                                                \
              part[j] = COMB(part[j], part[j + w]);                                                \
          r = COMB(r, part[0]);                                                                    \
        }                                                                                          \
        for (; i < n; ++i) {                                                                       \
          const A v = PRE(REF_LOAD_##SFX(x, i), m);                                                \
          r = COMB(r, v);                                                                          \
        }                                                                                          \
        acc[o] = r;                                                                                \
      } else { /* a contiguous run into as many outputs: elementwise */                            \
        A *y = acc + o;                                                                            \
        for (i = 0; i < n; ++i) {                                                                  \
          const A m = AUX(aux + o, i);                                                             \
          const A v = PRE(REF_LOAD_##SFX(x, i), m);                                                \
          (void)m;                                                                                 \
          y[i] = COMB(y[i], v);                                                                    \
        }                                                                                          \
      }                                                                                            \
      x += n;                                                                                      \
      for (d = p->rank - 2; d >= 0; --d) {                                                         \
        o += p->out_strides[d];                                                                    \
        if (++idx[d] < p->dims[d])                                                                 \
          break;                                                                                   \
        o -= p->out_strides[d] * p->dims[d];                                                       \
        idx[d] = 0;                                                                                \
      }                                                                                            \
      if (d < 0)                                                                                   \
        return;                                                                                    \
    }                                                                                              \
  }

#define REF_PRE_ID(c, m) (c)
#define REF_PRE_SQ(c, m) ((c) * (c))
#define REF_PRE_ABS_F32(c, m) fabsf(c)
#define REF_PRE_ABS_F64(c, m) fabs(c)
#define REF_PRE_EXP_F32(c, m) expf((c) - (m))
#define REF_PRE_EXP_F64(c, m) exp((double)(c) - (m))
#define REF_PRE_U64(c, m) ((uint64_t)(c))
#define REF_PRE_SQ_U64(c, m) ((uint64_t)(c) * (uint64_t)(c))
#define REF_PRE_ABS_S(c, m) ((c) < 0 ? (uint64_t)0 - (uint64_t)(c) : (uint64_t)(c))
#define REF_PRE_I64(c, m) ((int64_t)(c))
#define REF_ADD(a, v) ((a) + (v))
#define REF_MUL(a, v) ((a) * (v))
#define REF_MAX_F(a, v) (((v) > (a) || (v) != (v)) ? (v) : (a))
#define REF_MIN_F(a, v) (((v) < (a) || (v) != (v)) ? (v) : (a))
#define REF_MAX_I(a, v) ((v) > (a) ? (v) : (a))
#define REF_MIN_I(a, v) ((v) < (a) ? (v) : (a))
#define REF_AUX_NONE(aux, i) 0
#define REF_AUX_AT(aux, i) ((aux)[i])

/* Float types: A is the compute type (float for float16/bfloat16). */
#define REF_RW_FLOAT(SFX, S, A, ABS, EXPM, INF)                                                    \
  REF_RW(sum_##SFX, S, SFX, A, (A)0, REF_PRE_ID, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)             \
  REF_RW(abs_##SFX, S, SFX, A, (A)0, ABS, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)                    \
  REF_RW(sq_##SFX, S, SFX, A, (A)0, REF_PRE_SQ, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)              \
  REF_RW(prod_##SFX, S, SFX, A, (A)1, REF_PRE_ID, REF_MUL, REF_AUX_NONE, REF_LANES_ADD)            \
  REF_RW(max_##SFX, S, SFX, A, -(INF), REF_PRE_ID, REF_MAX_F, REF_AUX_NONE, REF_LANES_SELECT)      \
  REF_RW(min_##SFX, S, SFX, A, (INF), REF_PRE_ID, REF_MIN_F, REF_AUX_NONE, REF_LANES_SELECT)       \
  REF_RW(exp_##SFX, S, SFX, A, (A)0, EXPM, REF_ADD, REF_AUX_AT, REF_LANES_ADD)

/* Integer types: exact uint64 arithmetic, int64/uint64 max and min, float64 for exp. */
#define REF_RW_INT(SFX, S, ABS, MM, MMPRE, LO, HI)                                                 \
  REF_RW(sum_##SFX, S, SFX, uint64_t, 0, REF_PRE_U64, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)        \
  REF_RW(abs_##SFX, S, SFX, uint64_t, 0, ABS, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)                \
  REF_RW(sq_##SFX, S, SFX, uint64_t, 0, REF_PRE_SQ_U64, REF_ADD, REF_AUX_NONE, REF_LANES_ADD)      \
  REF_RW(prod_##SFX, S, SFX, uint64_t, 1, REF_PRE_U64, REF_MUL, REF_AUX_NONE, REF_LANES_ADD)       \
  REF_RW(max_##SFX, S, SFX, MM, LO, MMPRE, REF_MAX_I, REF_AUX_NONE, REF_LANES_SELECT)              \
  REF_RW(min_##SFX, S, SFX, MM, HI, MMPRE, REF_MIN_I, REF_AUX_NONE, REF_LANES_SELECT)              \
  REF_RW(exp_##SFX, S, SFX, double, 0.0, REF_PRE_EXP_F64, REF_ADD, REF_AUX_AT, REF_LANES_ADD)

REF_RW_FLOAT(f32, float, float, REF_PRE_ABS_F32, REF_PRE_EXP_F32, HUGE_VALF)
REF_RW_FLOAT(f16, uint16_t, float, REF_PRE_ABS_F32, REF_PRE_EXP_F32, HUGE_VALF)
REF_RW_FLOAT(bf16, uint16_t, float, REF_PRE_ABS_F32, REF_PRE_EXP_F32, HUGE_VALF)
REF_RW_FLOAT(f64, double, double, REF_PRE_ABS_F64, REF_PRE_EXP_F64, HUGE_VAL)
REF_RW_INT(i8, int8_t, REF_PRE_ABS_S, int64_t, REF_PRE_I64, INT8_MIN, INT8_MAX)
REF_RW_INT(i16, int16_t, REF_PRE_ABS_S, int64_t, REF_PRE_I64, INT16_MIN, INT16_MAX)
REF_RW_INT(i32, int32_t, REF_PRE_ABS_S, int64_t, REF_PRE_I64, INT32_MIN, INT32_MAX)
REF_RW_INT(i64, int64_t, REF_PRE_ABS_S, int64_t, REF_PRE_I64, INT64_MIN, INT64_MAX)
REF_RW_INT(u8, uint8_t, REF_PRE_U64, uint64_t, REF_PRE_U64, 0, UINT8_MAX)
REF_RW_INT(u16, uint16_t, REF_PRE_U64, uint64_t, REF_PRE_U64, 0, UINT16_MAX)
REF_RW_INT(u32, uint32_t, REF_PRE_U64, uint64_t, REF_PRE_U64, 0, UINT32_MAX)
REF_RW_INT(u64, uint64_t, REF_PRE_U64, uint64_t, REF_PRE_U64, 0, UINT64_MAX)

/* The kernels of one type, in ref_reduce_kind order. */
#define REF_IMPLS(SFX, ACC, EXPACC)                                                                \
  static const ref_reduce_impl ref_impls_##SFX[REF_RK_COUNT] = {                                   \
      {ref_rw_sum_##SFX, ref_ri_sum_##SFX, ACC},   {ref_rw_abs_##SFX, ref_ri_abs_##SFX, ACC},      \
      {ref_rw_sq_##SFX, ref_ri_sq_##SFX, ACC},     {ref_rw_prod_##SFX, ref_ri_prod_##SFX, ACC},    \
      {ref_rw_max_##SFX, ref_ri_max_##SFX, ACC},   {ref_rw_min_##SFX, ref_ri_min_##SFX, ACC},      \
      {ref_rw_exp_##SFX, ref_ri_exp_##SFX, EXPACC}};
REF_IF_f32(REF_IMPLS(f32, REF_ACC_F32, REF_ACC_F32))
    REF_IF_f16(REF_IMPLS(f16, REF_ACC_F32, REF_ACC_F32))
        REF_IF_bf16(REF_IMPLS(bf16, REF_ACC_F32, REF_ACC_F32))
            REF_IF_f64(REF_IMPLS(f64, REF_ACC_F64, REF_ACC_F64))
                REF_IF_i8(REF_IMPLS(i8, REF_ACC_BITS, REF_ACC_F64))
                    REF_IF_i16(REF_IMPLS(i16, REF_ACC_BITS, REF_ACC_F64))
                        REF_IF_i32(REF_IMPLS(i32, REF_ACC_BITS, REF_ACC_F64))
                            REF_IF_i64(REF_IMPLS(i64, REF_ACC_BITS, REF_ACC_F64))
                                REF_IF_u8(REF_IMPLS(u8, REF_ACC_BITS, REF_ACC_F64))
                                    REF_IF_u16(REF_IMPLS(u16, REF_ACC_BITS, REF_ACC_F64))
                                        REF_IF_u32(REF_IMPLS(u32, REF_ACC_BITS, REF_ACC_F64))
                                            REF_IF_u64(REF_IMPLS(u64, REF_ACC_BITS, REF_ACC_F64))

    /* The kernels for element type t, or NULL when t is not numeric. */
    static const ref_reduce_impl *ref_reduce_impls(odla_element_type t) {
  switch (t) {
#define REF_IMPLS_CASE(E, S, C, SFX)                                                               \
  case E:                                                                                          \
    return ref_impls_##SFX;
    REF_FOR_NUMERIC_TYPES(REF_IMPLS_CASE)
#undef REF_IMPLS_CASE
  default:
    return NULL;
  }
}

static int ref_is_signed_int(odla_element_type t) {
  return t == ODLA_INT8 || t == ODLA_INT16 || t == ODLA_INT32 || t == ODLA_INT64;
}

/* ---- Final pass ---------------------------------------------------------------------- */

typedef struct {
  odla_element_type type;
  ref_reduce_kind kind;
  ref_reduce_final final;
  float epsilon;
} ref_reduce_op;

/* Stores the low bits of integer accumulators (exact modular results). */
static void ref_store_bits(odla_element_type t, const uint64_t *acc, void *y, int64_t n) {
  int64_t i;
  (void)acc, (void)y, (void)n, (void)i; /* unused where ODLA_REFERENCE_ONLY_TYPES leaves no
                                         integer type */
  switch (t) {
#define REF_BITS_CASE(E, S, C, SFX)                                                                \
  case E:                                                                                          \
    for (i = 0; i < n; ++i)                                                                        \
      ((S *)y)[i] = (S)acc[i];                                                                     \
    break;
    REF_FOR_INT_TYPES(REF_BITS_CASE)
#undef REF_BITS_CASE
  default:
    break;
  }
}

#define REF_FINISH_FLOAT(NAME, A, SQRT, LOG)                                                       \
  static void NAME(const ref_reduce_op *op, int64_t count, A *acc, const A *aux, int64_t n) {      \
    const A eps = (A)op->epsilon;                                                                  \
    int64_t i;                                                                                     \
    switch (op->final) {                                                                           \
    case REF_RF_NONE:                                                                              \
      break;                                                                                       \
    case REF_RF_MEAN:                                                                              \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] = acc[i] / (A)count;                                                                \
      break;                                                                                       \
    case REF_RF_ADD_EPS:                                                                           \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] += eps;                                                                             \
      break;                                                                                       \
    case REF_RF_SQRT:                                                                              \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] = SQRT(acc[i] + eps);                                                               \
      break;                                                                                       \
    case REF_RF_LOG:                                                                               \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] = LOG(acc[i]);                                                                      \
      break;                                                                                       \
    case REF_RF_LOG_MAX:                                                                           \
      for (i = 0; i < n; ++i)                                                                      \
        acc[i] = LOG(acc[i]) + aux[i];                                                             \
      break;                                                                                       \
    }                                                                                              \
  }
REF_FINISH_FLOAT(ref_finish_f32, float, sqrtf, logf)
REF_FINISH_FLOAT(ref_finish_f64, double, sqrt, log)

/* Integer accumulators (bits) to the output: exact where the result is an integer. */
static void ref_finish_bits(const ref_reduce_op *op, int64_t count, uint64_t *acc, void *y,
                            int64_t n) {
  /* Sums of signed values are signed; sums of |x| and x*x are read as unsigned. */
  const int is_signed = ref_is_signed_int(op->type) && op->kind == REF_RK_SUM;
  int64_t i;
  if (op->final == REF_RF_MEAN) {
    for (i = 0; i < n; ++i)
      acc[i] = count == 0  ? 0
               : is_signed ? (uint64_t)((int64_t)acc[i] / count)
                           : acc[i] / (uint64_t)count;
  }
  if (op->final == REF_RF_NONE || op->final == REF_RF_MEAN ||
      (op->final == REF_RF_ADD_EPS && op->epsilon == 0.0f)) {
    ref_store_bits(op->type, acc, y, n);
    return;
  }
  for (i = 0; i < n; ++i) {
    double v = is_signed ? (double)(int64_t)acc[i] : (double)acc[i];
    switch (op->final) {
    case REF_RF_ADD_EPS:
      v += op->epsilon;
      break;
    case REF_RF_SQRT:
      v = sqrt(v + op->epsilon);
      break;
    case REF_RF_LOG:
      v = log(v);
      break;
    default:
      break;
    }
    ref_set(op->type, y, i, v);
  }
}

/* Stores float accumulators into a float16, bfloat16 or float32 output. */
static void ref_store_f32(odla_element_type t, const float *acc, void *y, int64_t n) {
  int64_t i;
  if (t == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      REF_STORE_f16((uint16_t *)y, i, acc[i]);
  else if (t == ODLA_BFLOAT16)
    for (i = 0; i < n; ++i)
      REF_STORE_bf16((uint16_t *)y, i, acc[i]);
  else if (acc != y)
    memcpy(y, acc, (size_t)n * sizeof *acc);
}

/* Whether the accumulators of (t, kind) can live in the output buffer itself. */
static int ref_acc_in_output(odla_element_type t) { return t == ODLA_FLOAT32 || t == ODLA_FLOAT64; }

static size_t ref_round_up(size_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* Scratch bytes for an op over `out_count` outputs. */
static size_t ref_reduce_scratch(const ref_reduce_op *op, int64_t out_count) {
  size_t slots = ref_round_up((size_t)out_count * 8);
  return (ref_acc_in_output(op->type) ? 0 : slots) + (op->kind == REF_RK_EXP ? slots : 0);
}

/* Runs a whole reduction: x -> y, with scratch of ref_reduce_scratch bytes. */
static void ref_reduce_exec(const ref_reduce_op *op, const ref_reduce_plan *p, const void *x,
                            void *y, unsigned char *scratch) {
  const ref_reduce_impl *impls = ref_reduce_impls(op->type), *impl = &impls[op->kind];
  const int64_t n = p->out_count;
  void *acc = ref_acc_in_output(op->type) ? y : (void *)scratch;
  void *aux = NULL;
  int64_t i;
  if (n == 0)
    return;
  if (op->kind == REF_RK_EXP) {
    /* First pass: the maximum of each output's elements, as the exp pass's shift. A
     * non-finite maximum (all -inf, an inf, NaN) shifts by 0, which gives the unshifted
     * (and here exact) result. */
    const ref_reduce_impl *mx = &impls[REF_RK_MAX];
    aux = scratch + (ref_acc_in_output(op->type) ? 0 : ref_round_up((size_t)n * 8));
    mx->init(aux, n);
    if (p->in_count > 0)
      mx->walk(p, x, aux, NULL);
    if (mx->acc == REF_ACC_BITS) { /* integers: to double, in place */
      int is_signed = ref_is_signed_int(op->type);
      for (i = 0; i < n; ++i) {
        uint64_t bits;
        double d;
        memcpy(&bits, (char *)aux + i * 8, 8);
        d = is_signed ? (double)(int64_t)bits : (double)bits;
        memcpy((char *)aux + i * 8, &d, 8);
      }
    } else if (mx->acc == REF_ACC_F32) {
      float *m = (float *)aux;
      for (i = 0; i < n; ++i)
        if (!(m[i] - m[i] == 0.0f))
          m[i] = 0.0f;
    } else {
      double *m = (double *)aux;
      for (i = 0; i < n; ++i)
        if (!(m[i] - m[i] == 0.0))
          m[i] = 0.0;
    }
  }
  impl->init(acc, n);
  if (p->in_count > 0)
    impl->walk(p, x, acc, aux);
  switch (impl->acc) {
  case REF_ACC_F32:
    ref_finish_f32(op, p->per_output, (float *)acc, (const float *)aux, n);
    ref_store_f32(op->type, (const float *)acc, y, n);
    break;
  case REF_ACC_F64:
    ref_finish_f64(op, p->per_output, (double *)acc, (const double *)aux, n);
    if (op->type != ODLA_FLOAT64)
      for (i = 0; i < n; ++i)
        ref_set(op->type, y, i, ((const double *)acc)[i]);
    break;
  case REF_ACC_BITS:
    ref_finish_bits(op, p->per_output, (uint64_t *)acc, y, n);
    break;
  }
}

/* ---- Builders ------------------------------------------------------------------------ */

typedef struct {
  ref_reduce_op op;
  ref_reduce_plan plan;
} ref_reduce_params;

static odla_status ref_reduce_run(const ref_node *node, const ref_io *io) {
  const ref_reduce_params *p = (const ref_reduce_params *)node->params;
  ref_reduce_exec(&p->op, &p->plan, io->in[0], io->out[0], (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

static odla_value ref_reduce(const char *name, ref_reduce_kind kind, ref_reduce_final final,
                             odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                             odla_bool keep_dims, odla_float32 epsilon,
                             odla_value_shape output_dims, const odla_value_id value_id) {
  ref_reduce_params p;
  odla_value_type out;
  odla_value v;
  int reduced[ODLA_MAX_DIMENSION] = {0};
  size_t k;
  char s1[128], s2[128];
  if (!ref_check_operands(name, 1, &input))
    return NULL;
  if (!ref_reduce_impls(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name, "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  if (num_of_axes > 0 && !axes)
    return ref_fail(ODLA_INVALID_PARAM, name, "axes is NULL but num_of_axes is %u",
                    (unsigned)num_of_axes);
  for (k = 0; k < num_of_axes; ++k) {
    if (axes[k] >= (odla_uint32)input->type.shape.size)
      return ref_fail(ODLA_INVALID_PARAM, name, "axis %u out of range for rank %d", axes[k],
                      input->type.shape.size);
    if (reduced[axes[k]])
      return ref_fail(ODLA_INVALID_PARAM, name, "axis %u is listed twice", axes[k]);
    reduced[axes[k]] = 1;
  }
  memset(&p, 0, sizeof p);
  p.op.type = input->type.element_type;
  p.op.kind = kind;
  p.op.final = final;
  p.op.epsilon = epsilon;
  out.element_type = input->type.element_type;
  ref_reduce_plan_make(&input->type.shape, reduced, keep_dims != 0, &p.plan, &out.shape);
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, name, "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  v = ref_add_op(name, ref_reduce_run, 1, &input, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = ref_reduce_scratch(&p.op, p.plan.out_count);
  return v;
}

odla_value odla_ReduceSum(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                          odla_bool keep_dims, odla_value_shape output_dims,
                          const odla_value_id value_id) {
  return ref_reduce("ReduceSum", REF_RK_SUM, REF_RF_NONE, input, num_of_axes, axes, keep_dims, 0.0f,
                    output_dims, value_id);
}

odla_value odla_ReduceMean(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                           odla_bool keep_dims, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  return ref_reduce("ReduceMean", REF_RK_SUM, REF_RF_MEAN, input, num_of_axes, axes, keep_dims,
                    0.0f, output_dims, value_id);
}

odla_value odla_ReduceMax(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                          odla_bool keep_dims, odla_value_shape output_dims,
                          const odla_value_id value_id) {
  return ref_reduce("ReduceMax", REF_RK_MAX, REF_RF_NONE, input, num_of_axes, axes, keep_dims, 0.0f,
                    output_dims, value_id);
}

odla_value odla_ReduceMin(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                          odla_bool keep_dims, odla_value_shape output_dims,
                          const odla_value_id value_id) {
  return ref_reduce("ReduceMin", REF_RK_MIN, REF_RF_NONE, input, num_of_axes, axes, keep_dims, 0.0f,
                    output_dims, value_id);
}

odla_value odla_ReduceProd(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                           odla_bool keep_dims, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  return ref_reduce("ReduceProd", REF_RK_PROD, REF_RF_NONE, input, num_of_axes, axes, keep_dims,
                    0.0f, output_dims, value_id);
}

odla_value odla_ReduceL1(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                         odla_bool keep_dims, odla_float32 epsilon, odla_value_shape output_dims,
                         const odla_value_id value_id) {
  return ref_reduce("ReduceL1", REF_RK_ABS, REF_RF_ADD_EPS, input, num_of_axes, axes, keep_dims,
                    epsilon, output_dims, value_id);
}

odla_value odla_ReduceL2(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                         odla_bool keep_dims, odla_float32 epsilon, odla_value_shape output_dims,
                         const odla_value_id value_id) {
  return ref_reduce("ReduceL2", REF_RK_SQ, REF_RF_SQRT, input, num_of_axes, axes, keep_dims,
                    epsilon, output_dims, value_id);
}

odla_value odla_ReduceLogSum(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                             odla_bool keep_dims, odla_value_shape output_dims,
                             const odla_value_id value_id) {
  return ref_reduce("ReduceLogSum", REF_RK_SUM, REF_RF_LOG, input, num_of_axes, axes, keep_dims,
                    0.0f, output_dims, value_id);
}

odla_value odla_ReduceLogSumExp(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                                odla_bool keep_dims, odla_value_shape output_dims,
                                const odla_value_id value_id) {
  return ref_reduce("ReduceLogSumExp", REF_RK_EXP, REF_RF_LOG_MAX, input, num_of_axes, axes,
                    keep_dims, 0.0f, output_dims, value_id);
}

odla_value odla_ReduceSumSquare(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                                odla_bool keep_dims, odla_value_shape output_dims,
                                const odla_value_id value_id) {
  return ref_reduce("ReduceSumSquare", REF_RK_SQ, REF_RF_NONE, input, num_of_axes, axes, keep_dims,
                    0.0f, output_dims, value_id);
}

/* ---- odla_ExtReduceDynamic ----------------------------------------------------------- */

typedef struct {
  ref_reduce_op op;
  int keep_dims, noop_with_empty_axes;
} ref_reduce_dyn_params;

/* The axes are read at run time; a value that does not give the declared output shape is a
 * data error (ODLA_INVALID_PARAM), reported by odla_ExecuteComputation. */
static odla_status ref_reduce_dyn_run(const ref_node *node, const ref_io *io) {
  const ref_reduce_dyn_params *p = (const ref_reduce_dyn_params *)node->params;
  const odla_value input = node->inputs[0], axes = node->inputs[1];
  const odla_value_shape *in = &input->type.shape;
  int64_t n = ref_count(&axes->type.shape), k;
  int reduced[ODLA_MAX_DIMENSION] = {0}, d;
  ref_reduce_plan plan;
  odla_value_shape out;
  for (k = 0; k < n; ++k) {
    int64_t a = ref_get_int(axes->type.element_type, io->in[1], k);
    if (a < -in->size || a >= in->size)
      return ODLA_INVALID_PARAM;
    a = a < 0 ? a + in->size : a;
    if (reduced[a])
      return ODLA_INVALID_PARAM;
    reduced[a] = 1;
  }
  /* No axes reduce every one, or with noop_with_empty_axes none: each element alone then
   * takes the reduction's other steps (ReduceL2 gives |x|, ReduceSumSquare x * x). */
  if (n == 0 && !p->noop_with_empty_axes)
    for (d = 0; d < in->size; ++d)
      reduced[d] = 1;
  ref_reduce_plan_make(in, reduced, p->keep_dims, &plan, &out);
  if (!ref_same_shape(&out, &node->outputs[0]->type.shape))
    return ODLA_INVALID_PARAM;
  ref_reduce_exec(&p->op, &plan, io->in[0], io->out[0], (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

/* ODLA_EXT_REDUCE_* in order: the odla_Reduce* functions' accumulation and final step. */
static const struct {
  ref_reduce_kind kind;
  ref_reduce_final final;
} ref_reduce_dyn_ops[] = {
    {REF_RK_SUM, REF_RF_NONE}, {REF_RK_SUM, REF_RF_MEAN},  {REF_RK_MAX, REF_RF_NONE},
    {REF_RK_MIN, REF_RF_NONE}, {REF_RK_PROD, REF_RF_NONE}, {REF_RK_ABS, REF_RF_ADD_EPS},
    {REF_RK_SQ, REF_RF_SQRT},  {REF_RK_SUM, REF_RF_LOG},   {REF_RK_EXP, REF_RF_LOG_MAX},
    {REF_RK_SQ, REF_RF_NONE},
};

odla_value odla_ExtReduceDynamic(odla_value input, odla_value axes, odla_int32 reduction,
                                 odla_bool keep_dims, odla_bool noop_with_empty_axes,
                                 odla_value_shape output_dims, const odla_value_id value_id) {
  const char *name = "ExtReduceDynamic";
  ref_reduce_dyn_params p;
  odla_value ins[2];
  odla_value_type out;
  odla_value v;
  int d, rank;
  char s1[128], s2[128];
  ins[0] = input;
  ins[1] = axes;
  if (!ref_check_operands(name, 2, ins))
    return NULL;
  if (reduction < 0 ||
      reduction >= (odla_int32)(sizeof ref_reduce_dyn_ops / sizeof ref_reduce_dyn_ops[0]))
    return ref_fail(ODLA_INVALID_PARAM, name, "reduction %d is not one of ODLA_EXT_REDUCE_*",
                    (int)reduction);
  if (!ref_reduce_impls(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name, "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  if ((axes->type.element_type != ODLA_INT64 && axes->type.element_type != ODLA_INT32) ||
      axes->type.shape.size > 1)
    return ref_fail(ODLA_INVALID_PARAM, name, "axes must be a 1-D int32 or int64 tensor, got %s %s",
                    ref_type_name(axes->type.element_type),
                    ref_shape_str(&axes->type.shape, s1, sizeof s1));
  rank = input->type.shape.size;
  if (output_dims.size < 0)
    return ref_fail(ODLA_INVALID_PARAM, name, "output_dims must be given");
  if (keep_dims ? output_dims.size != rank : output_dims.size > rank)
    return ref_fail(ODLA_INVALID_PARAM, name, "output_dims %s cannot reduce %s with keep_dims=%d",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&input->type.shape, s2, sizeof s2), keep_dims != 0);
  for (d = 0; keep_dims && d < rank; ++d)
    if (output_dims.dims[d] != 1 && output_dims.dims[d] != input->type.shape.dims[d])
      return ref_fail(ODLA_INVALID_PARAM, name, "output_dims %s cannot reduce %s",
                      ref_shape_str(&output_dims, s1, sizeof s1),
                      ref_shape_str(&input->type.shape, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.op.type = input->type.element_type;
  p.op.kind = ref_reduce_dyn_ops[reduction].kind;
  p.op.final = ref_reduce_dyn_ops[reduction].final;
  p.keep_dims = keep_dims != 0;
  p.noop_with_empty_axes = noop_with_empty_axes != 0;
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  v = ref_add_op(name, ref_reduce_dyn_run, 2, ins, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = ref_reduce_scratch(&p.op, ref_count(&output_dims));
  return v;
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_reduce_describe(const ref_node *node, int *rank, int64_t *dims, int64_t *out_strides,
                        double *scale) {
  const ref_reduce_params *p = (const ref_reduce_params *)node->params;
  int i;
  if (node->run != ref_reduce_run || p->op.kind != REF_RK_SUM ||
      (p->op.final != REF_RF_NONE && p->op.final != REF_RF_MEAN))
    return 0;
  *rank = p->plan.rank;
  for (i = 0; i < p->plan.rank; ++i) {
    dims[i] = p->plan.dims[i];
    out_strides[i] = p->plan.out_strides[i];
  }
  *scale = p->op.final == REF_RF_MEAN ? 1.0 / (double)p->plan.per_output : 1.0;
  return 1;
}
