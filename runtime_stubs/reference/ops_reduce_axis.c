/* ops_reduce_axis.c: ops along one axis in the reference backend: odla_Softmax,
 * odla_LogSoftmax and odla_Hardmax (float types), odla_ArgMax and odla_ArgMin, odla_CumSum
 * and odla_ExtCumProd (numeric types).
 *
 * Semantics (ODLA 0.5 leaves them open; odlac relies on these):
 * - axis may be negative (counted from the end). Softmax-family ops normalize along that one
 *   axis (ONNX opset 13 semantics; the importer reshapes for older opsets).
 * - Softmax and LogSoftmax subtract the maximum along the axis first, so large inputs do not
 *   overflow; float16 and bfloat16 compute in float32. Hardmax puts 1 at the first maximum
 *   along the axis and 0 elsewhere.
 * - ArgMax/ArgMin: the index of the first extreme value, or the last one with
 *   return_last_index; a NaN counts as the extreme (numpy's rule). The result type is
 *   output_value_type's element type, int64 or int32; its shape, when given, must match.
 * - CumSum: `axis` is a 0-D or one-element int32/int64 tensor read at run time (a constant is
 *   also checked when the graph is built); an axis out of range fails execution with
 *   ODLA_INVALID_PARAM. exclusion leaves out each element itself (the first sum is 0);
 *   reverse sums from the end. Integers wrap modulo 2^bits; float16 and bfloat16 accumulate in
 *   float32. */
#include "autodiff.h"
#include "ref.h"
#include "ref_types.h"
#include "ref_vmath.h"
#include "threads.h"

#include <math.h>
#include <string.h>

/* outer x axis x inner decomposition of a shape around `axis`. */
static void ref_split_at(const odla_value_shape *s, int axis, int64_t *outer, int64_t *len,
                         int64_t *inner) {
  int i;
  *outer = *inner = 1;
  *len = s->dims[axis];
  for (i = 0; i < s->size; ++i) {
    if (i < axis)
      *outer *= s->dims[i];
    else if (i > axis)
      *inner *= s->dims[i];
  }
}

/* ---- Softmax, LogSoftmax, Hardmax ------------------------------------------------------ */

typedef enum { REF_SM_SOFTMAX, REF_SM_LOG, REF_SM_HARD } ref_sm_mode;

typedef struct {
  int64_t outer, axis, inner;
  odla_element_type type;
  ref_sm_mode mode;
} ref_softmax_params;

#define REF_MAX_NAN(a, v) (((v) > (a) || (v) != (v)) ? (v) : (a))
/* Whether v is the maximum m (NaN matches NaN). */
#define REF_IS_MAX(v, m) ((v) == (m) || ((v) != (v) && (m) != (m)))

/* One [len x inner] block, x -> y (which may be the same buffer). m and s are `inner`
 * elements of scratch when inner > 1. */
#define REF_SOFTMAX_BLOCK(SFX, A, EXP, LOG)                                                        \
  REF_HOT static void ref_softmax_block_##SFX(const A *x, A *y, int64_t len, int64_t inner,        \
                                              ref_sm_mode mode, A *m, A *s) {                      \
    int64_t a, i;                                                                                  \
    if (len == 0)                                                                                  \
      return;                                                                                      \
    if (inner == 1) {                                                                              \
      /* Running maxima of w lanes (NaN sticks: REF_MAX_NAN), then eight running sums, so that     \
       * the loops vectorize (a w fixed at compile time gets unrolled into scalar code). */        \
      const int64_t w = len < 16 ? len : 16;                                                       \
      A mx, sum = 0, lane[16];                                                                     \
      int found = 0, j;                                                                            \
      for (a = 0; a < w; ++a)                                                                      \
        lane[a] = x[a];                                                                            \
      for (; a + w <= len; a += w)                                                                 \
        for (i = 0; i < w; ++i)                                                                    \
          lane[i] = REF_MAX_NAN(lane[i], x[a + i]);                                                \
      for (; a < len; ++a)                                                                         \
        lane[0] = REF_MAX_NAN(lane[0], x[a]);                                                      \
      mx = lane[0];                                                                                \
      for (i = 1; i < w; ++i)                                                                      \
        mx = REF_MAX_NAN(mx, lane[i]);                                                             \
      switch (mode) {                                                                              \
      case REF_SM_SOFTMAX:                                                                         \
        for (j = 0; j < 8; ++j)                                                                    \
          lane[j] = 0;                                                                             \
        for (a = 0; a + 8 <= len; a += 8)                                                          \
          for (j = 0; j < 8; ++j) {                                                                \
            const A e = EXP(x[a + j] - mx);                                                        \
            y[a + j] = e;                                                                          \
            lane[j] += e;                                                                          \
          }                                                                                        \
        for (; a < len; ++a) {                                                                     \
          y[a] = EXP(x[a] - mx);                                                                   \
          sum += y[a];                                                                             \
        }                                                                                          \
        for (j = 0; j < 8; ++j)                                                                    \
          sum += lane[j];                                                                          \
        sum = 1 / sum;                                                                             \
        for (a = 0; a < len; ++a)                                                                  \
          y[a] *= sum;                                                                             \
        break;                                                                                     \
      case REF_SM_LOG:                                                                             \
        for (a = 0; a < len; ++a)                                                                  \
          sum += EXP(x[a] - mx);                                                                   \
        sum = mx + LOG(sum);                                                                       \
        for (a = 0; a < len; ++a)                                                                  \
          y[a] = x[a] - sum;                                                                       \
        break;                                                                                     \
      case REF_SM_HARD:                                                                            \
        for (a = 0; a < len; ++a) {                                                                \
          int hit = !found && REF_IS_MAX(x[a], mx);                                                \
          found |= hit;                                                                            \
          y[a] = (A)hit;                                                                           \
        }                                                                                          \
        break;                                                                                     \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    /* Rows of `inner` contiguous elements: every loop below runs along a row. */                  \
    for (i = 0; i < inner; ++i) {                                                                  \
      m[i] = x[i];                                                                                 \
      s[i] = 0;                                                                                    \
    }                                                                                              \
    for (a = 1; a < len; ++a)                                                                      \
      for (i = 0; i < inner; ++i)                                                                  \
        m[i] = REF_MAX_NAN(m[i], x[a * inner + i]);                                                \
    switch (mode) {                                                                                \
    case REF_SM_SOFTMAX:                                                                           \
      for (a = 0; a < len; ++a)                                                                    \
        for (i = 0; i < inner; ++i) {                                                              \
          y[a * inner + i] = EXP(x[a * inner + i] - m[i]);                                         \
          s[i] += y[a * inner + i];                                                                \
        }                                                                                          \
      for (i = 0; i < inner; ++i)                                                                  \
        s[i] = 1 / s[i];                                                                           \
      for (a = 0; a < len; ++a)                                                                    \
        for (i = 0; i < inner; ++i)                                                                \
          y[a * inner + i] *= s[i];                                                                \
      break;                                                                                       \
    case REF_SM_LOG:                                                                               \
      for (a = 0; a < len; ++a)                                                                    \
        for (i = 0; i < inner; ++i)                                                                \
          s[i] += EXP(x[a * inner + i] - m[i]);                                                    \
      for (i = 0; i < inner; ++i)                                                                  \
        s[i] = m[i] + LOG(s[i]);                                                                   \
      for (a = 0; a < len; ++a)                                                                    \
        for (i = 0; i < inner; ++i)                                                                \
          y[a * inner + i] = x[a * inner + i] - s[i];                                              \
      break;                                                                                       \
    case REF_SM_HARD: /* s[i]: whether row i's maximum was already marked */                       \
      for (a = 0; a < len; ++a)                                                                    \
        for (i = 0; i < inner; ++i) {                                                              \
          int hit = s[i] == 0 && REF_IS_MAX(x[a * inner + i], m[i]);                               \
          y[a * inner + i] = (A)hit;                                                               \
          s[i] = hit ? 1 : s[i];                                                                   \
        }                                                                                          \
      break;                                                                                       \
    }                                                                                              \
  }
REF_SOFTMAX_BLOCK(f32, float, ref_expf, logf)
REF_SOFTMAX_BLOCK(f64, double, exp, log)

/* Blocks of at least this many elements in all are split over the context's threads. */
enum { REF_SOFTMAX_PARALLEL_MIN = 1 << 14 };

typedef struct {
  const ref_softmax_params *p;
  const ref_io *io;
} ref_softmax_job;

/* Part `index` of `parts`: whole blocks along `outer`, each with its own scratch. */
static void ref_softmax_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_softmax_job *job = (const ref_softmax_job *)arg;
  const ref_softmax_params *p = job->p;
  const ref_io *io = job->io;
  const int64_t block = p->axis * p->inner;
  int64_t o, k, lo, hi;
  ref_split(p->outer, 1, index, parts, &lo, &hi);
  for (o = lo; o < hi; ++o) {
    const int64_t off = o * block;
    switch (p->type) {
    case ODLA_FLOAT32: {
      float *rows = (float *)scratch;
      ref_softmax_block_f32((const float *)io->in[0] + off, (float *)io->out[0] + off, p->axis,
                            p->inner, p->mode, rows, rows ? rows + p->inner : NULL);
      break;
    }
    case ODLA_FLOAT64: {
      double *rows = (double *)scratch;
      ref_softmax_block_f64((const double *)io->in[0] + off, (double *)io->out[0] + off, p->axis,
                            p->inner, p->mode, rows, rows ? rows + p->inner : NULL);
      break;
    }
    default: { /* float16, bfloat16: through a float32 copy of the block */
      const uint16_t *x = (const uint16_t *)io->in[0] + off;
      uint16_t *y = (uint16_t *)io->out[0] + off;
      float *w = (float *)scratch, *rows = w + block;
      if (p->type == ODLA_FLOAT16)
        for (k = 0; k < block; ++k)
          w[k] = REF_LOAD_f16(x, k);
      else
        for (k = 0; k < block; ++k)
          w[k] = REF_LOAD_bf16(x, k);
      ref_softmax_block_f32(w, w, p->axis, p->inner, p->mode, rows, rows + p->inner);
      if (p->type == ODLA_FLOAT16)
        for (k = 0; k < block; ++k)
          REF_STORE_f16(y, k, w[k]);
      else
        for (k = 0; k < block; ++k)
          REF_STORE_bf16(y, k, w[k]);
      break;
    }
    }
  }
}

static odla_status ref_softmax_run(const ref_node *node, const ref_io *io) {
  const ref_softmax_params *p = (const ref_softmax_params *)node->params;
  ref_threads *pool = ref_io_threads(io);
  int parts = ref_threads_count(pool);
  ref_softmax_job job;
  job.p = p;
  job.io = io;
  if (p->outer * p->axis * p->inner < REF_SOFTMAX_PARALLEL_MIN)
    parts = 1;
  else if (p->outer < parts)
    parts = (int)p->outer;
  ref_parallel(pool, parts, ref_softmax_part, &job, (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

static odla_value ref_softmax(const char *name, ref_sm_mode mode, odla_value input, odla_int32 axis,
                              const odla_value_id value_id) {
  ref_softmax_params p;
  odla_value v;
  odla_element_type t;
  int rank;
  size_t elem;
  if (!ref_check_operands(name, 1, &input))
    return NULL;
  t = input->type.element_type;
  if (t != ODLA_FLOAT32 && t != ODLA_FLOAT64 && t != ODLA_FLOAT16 && t != ODLA_BFLOAT16)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name,
                    "element type %s is not supported (float types only)", ref_type_name(t));
  rank = input->type.shape.size;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ref_fail(ODLA_INVALID_PARAM, name, "axis %d out of range for rank %d", axis, rank);
  memset(&p, 0, sizeof p);
  p.type = t;
  p.mode = mode;
  ref_split_at(&input->type.shape, axis, &p.outer, &p.axis, &p.inner);
  v = ref_add_op(name, ref_softmax_run, 1, &input, ref_type_of(input), value_id, &p, sizeof p);
  if (!v)
    return NULL;
  elem = t == ODLA_FLOAT64 ? sizeof(double) : sizeof(float);
  if (t == ODLA_FLOAT16 || t == ODLA_BFLOAT16)
    v->node->scratch_bytes = (size_t)(p.axis * p.inner + 2 * p.inner) * elem;
  else if (p.inner > 1)
    v->node->scratch_bytes = (size_t)(2 * p.inner) * elem;
  return v;
}

odla_value odla_Softmax(odla_value input, odla_int32 axis, const odla_value_id value_id) {
  return ref_softmax("Softmax", REF_SM_SOFTMAX, input, axis, value_id);
}

odla_value odla_LogSoftmax(odla_value input, odla_int32 axis, const odla_value_id value_id) {
  return ref_softmax("LogSoftmax", REF_SM_LOG, input, axis, value_id);
}

odla_value odla_Hardmax(odla_value input, odla_int32 axis, const odla_value_id value_id) {
  return ref_softmax("Hardmax", REF_SM_HARD, input, axis, value_id);
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------------ */

typedef struct {
  int64_t outer, axis, inner;
  odla_element_type type, index_type;
  int is_max, last;
} ref_arg_params;

#define REF_NAN_F(v) ((v) != (v))
#define REF_NAN_I(v) 0

/* Whether v replaces the current best b: strictly better, or equal with `last`; NaN wins. */
#define REF_ARG_KERNEL(SFX, S, C, ISNAN)                                                           \
  static void ref_arg_##SFX(const ref_arg_params *p, const S *x, int64_t *idx) {                   \
    int64_t o, i, a;                                                                               \
    for (o = 0; o < p->outer; ++o)                                                                 \
      for (i = 0; i < p->inner; ++i) {                                                             \
        const S *xs = x + o * p->axis * p->inner + i;                                              \
        C best = REF_LOAD_##SFX(xs, 0);                                                            \
        int64_t bi = 0;                                                                            \
        for (a = 1; a < p->axis; ++a) {                                                            \
          C v = REF_LOAD_##SFX(xs, a * p->inner);                                                  \
          int take;                                                                                \
          if (ISNAN(best))                                                                         \
            take = p->last && ISNAN(v);                                                            \
          else if (ISNAN(v))                                                                       \
            take = 1;                                                                              \
          else if (p->is_max)                                                                      \
            take = p->last ? v >= best : v > best;                                                 \
          else                                                                                     \
            take = p->last ? v <= best : v < best;                                                 \
          if (take) {                                                                              \
            best = v;                                                                              \
            bi = a;                                                                                \
          }                                                                                        \
        }                                                                                          \
        idx[o * p->inner + i] = bi;                                                                \
      }                                                                                            \
  }
#define REF_ARG_FLOAT(E, S, C, SFX) REF_ARG_KERNEL(SFX, S, C, REF_NAN_F)
#define REF_ARG_INT(E, S, C, SFX) REF_ARG_KERNEL(SFX, S, C, REF_NAN_I)
REF_FOR_FLOAT_TYPES(REF_ARG_FLOAT)
REF_FOR_INT_TYPES(REF_ARG_INT)

static odla_status ref_arg_run(const ref_node *node, const ref_io *io) {
  const ref_arg_params *p = (const ref_arg_params *)node->params;
  int64_t *idx = p->index_type == ODLA_INT64 ? (int64_t *)io->out[0] : (int64_t *)io->scratch;
  int64_t k, n = p->outer * p->inner;
  switch (p->type) {
#define REF_ARG_CASE(E, S, C, SFX)                                                                 \
  case E:                                                                                          \
    ref_arg_##SFX(p, (const S *)io->in[0], idx);                                                   \
    break;
    REF_FOR_NUMERIC_TYPES(REF_ARG_CASE)
#undef REF_ARG_CASE
  default:
    break;
  }
  if (p->index_type == ODLA_INT32)
    for (k = 0; k < n; ++k)
      ((int32_t *)io->out[0])[k] = (int32_t)idx[k];
  return ODLA_SUCCESS;
}

static odla_value ref_arg(const char *name, int is_max, odla_value input, odla_int32 axis,
                          odla_bool keep_dims, odla_bool return_last_index,
                          odla_value_type output_value_type, const odla_value_id value_id) {
  ref_arg_params p;
  odla_value_type out;
  odla_value v;
  int rank, i;
  char s1[128], s2[128];
  if (!ref_check_operands(name, 1, &input))
    return NULL;
  if (!ref_is_float(input->type.element_type) && !ref_is_int(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name, "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  if (output_value_type.element_type != ODLA_INT64 && output_value_type.element_type != ODLA_INT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name,
                    "index type %s is not supported (int64 or int32)",
                    ref_type_name(output_value_type.element_type));
  rank = input->type.shape.size;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ref_fail(ODLA_INVALID_PARAM, name, "axis %d out of range for rank %d", axis, rank);
  memset(&p, 0, sizeof p);
  p.type = input->type.element_type;
  p.index_type = output_value_type.element_type;
  p.is_max = is_max;
  p.last = return_last_index != 0;
  ref_split_at(&input->type.shape, axis, &p.outer, &p.axis, &p.inner);
  if (p.axis == 0 && p.outer * p.inner > 0)
    return ref_fail(ODLA_INVALID_PARAM, name, "axis %d has extent 0: no element to pick", axis);
  out.element_type = output_value_type.element_type;
  out.shape.size = 0;
  for (i = 0; i < rank; ++i)
    if (i != axis || keep_dims)
      out.shape.dims[out.shape.size++] = i == axis ? 1 : input->type.shape.dims[i];
  if (ref_shape_conflicts(&output_value_type.shape, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, name, "output shape %s differs from the computed %s",
                    ref_shape_str(&output_value_type.shape, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  v = ref_add_op(name, ref_arg_run, 1, &input, out, value_id, &p, sizeof p);
  if (v && p.index_type == ODLA_INT32)
    v->node->scratch_bytes = (size_t)(p.outer * p.inner) * sizeof(int64_t);
  return v;
}

odla_value odla_ArgMax(odla_value input, odla_int32 axis, odla_bool keep_dims,
                       odla_bool return_last_index, odla_value_type output_value_type,
                       const odla_value_id value_id) {
  return ref_arg("ArgMax", 1, input, axis, keep_dims, return_last_index, output_value_type,
                 value_id);
}

odla_value odla_ArgMin(odla_value input, odla_int32 axis, odla_bool keep_dims,
                       odla_bool return_last_index, odla_value_type output_value_type,
                       const odla_value_id value_id) {
  return ref_arg("ArgMin", 0, input, axis, keep_dims, return_last_index, output_value_type,
                 value_id);
}

/* ---- CumSum and ExtCumProd ------------------------------------------------------------ */

typedef struct {
  odla_element_type type;
  int exclusive, reverse, product;
} ref_cum_params;

/* Types whose running sums or products live in the output: y[a] = y[a-1] OP x[a or a-1];
 * the exclusive first element is OP's identity. Integer arithmetic wraps (unsigned). */
#define REF_CUM_DIRECT(SFX, S, ADD, MUL)                                                           \
  static inline void ref_cum_##SFX(const ref_cum_params *p, const S *x, S *y, int64_t outer,       \
                                   int64_t len, int64_t inner, float *row) {                       \
    int64_t o, k, i;                                                                               \
    (void)row;                                                                                     \
    for (o = 0; o < outer; ++o)                                                                    \
      for (k = 0; k < len; ++k) {                                                                  \
        const int64_t a = p->reverse ? len - 1 - k : k, prev = p->reverse ? a + 1 : a - 1;         \
        const S *xa = x + (o * len + a) * inner;                                                   \
        S *ya = y + (o * len + a) * inner;                                                         \
        const S *yp, *xs;                                                                          \
        if (k == 0) {                                                                              \
          for (i = 0; i < inner; ++i)                                                              \
            ya[i] = p->exclusive ? (S)p->product : xa[i];                                          \
          continue;                                                                                \
        }                                                                                          \
        yp = y + (o * len + prev) * inner;                                                         \
        xs = p->exclusive ? x + (o * len + prev) * inner : xa;                                     \
        if (p->product)                                                                            \
          for (i = 0; i < inner; ++i)                                                              \
            ya[i] = MUL(S, yp[i], xs[i]);                                                          \
        else                                                                                       \
          for (i = 0; i < inner; ++i)                                                              \
            ya[i] = ADD(S, yp[i], xs[i]);                                                          \
      }                                                                                            \
  }
#define REF_ADD_F(S, a, b) ((a) + (b))
#define REF_MUL_F(S, a, b) ((a) * (b))
#define REF_ADD_WRAP(S, a, b) ((S)((uint64_t)(a) + (uint64_t)(b)))
#define REF_MUL_WRAP(S, a, b) ((S)((uint64_t)(a) * (uint64_t)(b)))

/* float16/bfloat16: running sums or products in a float32 row of `inner` elements. */
#define REF_CUM_ROW(SFX)                                                                           \
  static inline void ref_cum_##SFX(const ref_cum_params *p, const uint16_t *x, uint16_t *y,        \
                                   int64_t outer, int64_t len, int64_t inner, float *row) {        \
    int64_t o, k, i;                                                                               \
    for (o = 0; o < outer; ++o) {                                                                  \
      for (i = 0; i < inner; ++i)                                                                  \
        row[i] = p->product ? 1.0f : 0.0f;                                                         \
      for (k = 0; k < len; ++k) {                                                                  \
        const int64_t a = p->reverse ? len - 1 - k : k;                                            \
        const uint16_t *xa = x + (o * len + a) * inner;                                            \
        uint16_t *ya = y + (o * len + a) * inner;                                                  \
        for (i = 0; i < inner; ++i) {                                                              \
          const float v = REF_LOAD_##SFX(xa, i);                                                   \
          const float next = p->product ? row[i] * v : row[i] + v;                                 \
          REF_STORE_##SFX(ya, i, p->exclusive ? row[i] : next);                                    \
          row[i] = next;                                                                           \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

REF_CUM_DIRECT(f32, float, REF_ADD_F, REF_MUL_F)
REF_CUM_DIRECT(f64, double, REF_ADD_F, REF_MUL_F)
REF_CUM_ROW(f16)
REF_CUM_ROW(bf16)
#define REF_CUM_INT(E, S, C, SFX) REF_CUM_DIRECT(SFX, S, REF_ADD_WRAP, REF_MUL_WRAP)
REF_FOR_INT_TYPES(REF_CUM_INT)

static odla_status ref_cum_run(const ref_node *node, const ref_io *io) {
  const ref_cum_params *p = (const ref_cum_params *)node->params;
  const odla_value_shape *s = &node->inputs[0]->type.shape;
  int64_t axis = ref_get_int(node->inputs[1]->type.element_type, io->in[1], 0);
  int64_t outer, len, inner;
  if (axis < -s->size || axis >= s->size)
    return ODLA_INVALID_PARAM;
  if (axis < 0)
    axis += s->size;
  ref_split_at(s, (int)axis, &outer, &len, &inner);
  switch (p->type) {
#define REF_CUM_CASE(E, S, C, SFX)                                                                 \
  case E:                                                                                          \
    ref_cum_##SFX(p, (const S *)io->in[0], (S *)io->out[0], outer, len, inner,                     \
                  (float *)io->scratch);                                                           \
    break;
    REF_FOR_NUMERIC_TYPES(REF_CUM_CASE)
#undef REF_CUM_CASE
  default:
    break;
  }
  return ODLA_SUCCESS;
}

static odla_value ref_cum(const char *name, int product, odla_value input, odla_value axis,
                          odla_bool exclusion, odla_bool reverse, const odla_value_id value_id) {
  ref_cum_params p;
  odla_value ins[2], v;
  odla_element_type at;
  int rank;
  char s1[128];
  ins[0] = input;
  ins[1] = axis;
  if (!ref_check_operands(name, 2, ins))
    return NULL;
  if (!ref_is_float(input->type.element_type) && !ref_is_int(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, name, "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  rank = input->type.shape.size;
  if (rank == 0)
    return ref_fail(ODLA_INVALID_PARAM, name, "input must have rank >= 1");
  at = axis->type.element_type;
  if ((at != ODLA_INT32 && at != ODLA_INT64) || ref_count(&axis->type.shape) != 1)
    return ref_fail(ODLA_INVALID_PARAM, name, "axis must be one int32 or int64 element, got %s %s",
                    ref_type_name(at), ref_shape_str(&axis->type.shape, s1, sizeof s1));
  if (axis->kind == REF_CONSTANT && axis->data) {
    int64_t a = ref_get_int(at, axis->data, 0);
    if (a < -rank || a >= rank)
      return ref_fail(ODLA_INVALID_PARAM, name, "axis %lld out of range for rank %d", (long long)a,
                      rank);
  }
  memset(&p, 0, sizeof p);
  p.type = input->type.element_type;
  p.exclusive = exclusion != 0;
  p.reverse = reverse != 0;
  p.product = product;
  v = ref_add_op(name, ref_cum_run, 2, ins, ref_type_of(input), value_id, &p, sizeof p);
  if (v && (p.type == ODLA_FLOAT16 || p.type == ODLA_BFLOAT16)) {
    /* The widest row any axis gives: the elements after the first axis. */
    int64_t widest = 1;
    int i;
    for (i = 1; i < rank; ++i)
      widest *= input->type.shape.dims[i];
    v->node->scratch_bytes = (size_t)widest * sizeof(float);
  }
  return v;
}

odla_value odla_CumSum(odla_value input, odla_value axis, odla_bool exclusion, odla_bool reverse,
                       const odla_value_id value_id) {
  return ref_cum("CumSum", 0, input, axis, exclusion, reverse, value_id);
}

odla_value odla_ExtCumProd(odla_value input, odla_value axis, odla_bool exclusion,
                           odla_bool reverse, const odla_value_id value_id) {
  return ref_cum("ExtCumProd", 1, input, axis, exclusion, reverse, value_id);
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_logsoftmax_describe(const ref_node *node, int64_t *outer, int64_t *axis, int64_t *inner) {
  const ref_softmax_params *p = (const ref_softmax_params *)node->params;
  if (node->run != ref_softmax_run || p->mode != REF_SM_LOG)
    return 0;
  *outer = p->outer;
  *axis = p->axis;
  *inner = p->inner;
  return 1;
}
