/* ops_pool.c: pooling in the reference backend: odla_MaxPool and odla_AveragePool of ODLA
 * 0.5, and the extensions odla_ExtMaxPool and odla_ExtAveragePool (dilations),
 * odla_ExtMaxPoolIndices (the argmax positions) and odla_ExtLpPool. Channels-first data, 1 to 3
 * spatial axes. Max pooling takes every numeric type, the others the float types (float16/bfloat16
 * computed in float).
 *
 * Semantics worth knowing:
 * - Rounding: ODLA's pooling builders have no ceil-mode flag; output_dims says which rounding
 *   is meant (see ref_make_window).
 * - Max: a NaN in the window gives NaN; ties keep the first position in row-major order (the
 *   row-wise kernel's: the first column's, which differs only between 0.0 and -0.0). A
 *   window that covers only padding gives 0 (index -1).
 * - Average: the divisor counts the window's cells inside the input, or with
 *   padding_included the cells inside the padded input (windows that stick out past the end
 *   padding in ceil mode are clipped there, as in ONNX Runtime and PyTorch); a dilated window
 *   counts its taps only.
 * - Indices: flat positions in the input tensor (batch and channel included, padding not):
 *   row-major, or with column_major the spatial axes in reverse order (ONNX storage_order). */
#include "autodiff.h"
#include "ops_channels_last.h"
#include "ops_nn.h"
#include "threads.h"

#include <math.h>
#include <string.h>

typedef struct ref_pool_params ref_pool_params;
/* A kernel of one pooling op and element type, over planes [lo, hi) of N * C. */
typedef void (*ref_pool_planes_fn)(const ref_node *node, const ref_io *io, int64_t lo, int64_t hi);

struct ref_pool_params {
  ref_pool_planes_fn planes_fn;
  ref_window w;
  int64_t planes;   /* N * C */
  int include_pad;  /* AveragePool */
  int column_major; /* MaxPoolIndices */
  double p;         /* LpPool */
  int rows;         /* MaxPool by rows (ref_maxpool_rows_part) */
};

/* The window loops shared by all pooling kernels, over planes [lo, hi): for output cell
 * (pl, od, oh, ow), BODY
 * runs for each input cell v at flat position `at` inside the input; INIT before and STORE
 * after, with the output cell's flat index `o` and its window's starts d0, h0, w0. */
#define REF_POOL_LOOP(S, SFX, INIT, BODY, STORE)                                                   \
  const ref_pool_params *p = (const ref_pool_params *)node->params;                                \
  const ref_window *w = &p->w;                                                                     \
  const S *x = (const S *)io->in[0];                                                               \
  int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w), pl, od, oh, ow;           \
  for (pl = lo; pl < hi; ++pl)                                                                     \
    for (od = 0; od < w->out[0]; ++od)                                                             \
      for (oh = 0; oh < w->out[1]; ++oh)                                                           \
        for (ow = 0; ow < w->out[2]; ++ow) {                                                       \
          const int64_t d0 = od * w->stride[0] - w->pad[0], h0 = oh * w->stride[1] - w->pad[1];    \
          const int64_t w0 = ow * w->stride[2] - w->pad[2];                                        \
          const int64_t o = pl * opix + (od * w->out[1] + oh) * w->out[2] + ow;                    \
          int64_t kd, kh, kw;                                                                      \
          INIT;                                                                                    \
          for (kd = 0; kd < w->k[0]; ++kd) {                                                       \
            const int64_t id = d0 + kd * w->dil[0];                                                \
            if (id < 0 || id >= w->in[0])                                                          \
              continue;                                                                            \
            for (kh = 0; kh < w->k[1]; ++kh) {                                                     \
              const int64_t ih = h0 + kh * w->dil[1];                                              \
              if (ih < 0 || ih >= w->in[1])                                                        \
                continue;                                                                          \
              for (kw = 0; kw < w->k[2]; ++kw) {                                                   \
                const int64_t iw = w0 + kw * w->dil[2];                                            \
                const int64_t at = pl * ipix + (id * w->in[1] + ih) * w->in[2] + iw;               \
                if (iw < 0 || iw >= w->in[2])                                                      \
                  continue;                                                                        \
                BODY;                                                                              \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
          STORE;                                                                                   \
        }

/* The position MaxPoolIndices reports for flat input position `at` (storage order applied). */
static int64_t ref_pool_index(const ref_pool_params *p, int64_t at) {
  const ref_window *w = &p->w;
  int64_t ipix = ref_window_in_count(w), pl = at / ipix, r = at % ipix;
  int64_t iw = r % w->in[2], ih = r / w->in[2] % w->in[1], id = r / (w->in[2] * w->in[1]);
  /* Column-major reverses the real spatial axes only; padding axes have extent 1. */
  if (p->column_major)
    r = (iw * w->in[1] + ih) * w->in[0] + id;
  return pl * ipix + r;
}

static int ref_pool_nan(double v) { return v != v; }

/* Max pooling of one type: values into out[0] (MaxPool) or positions (MaxPoolIndices). */
#define REF_DEFINE_MAXPOOL(E, S, C, SFX)                                                           \
  static void ref_maxpool_run_##SFX(const ref_node *node, const ref_io *io, int64_t lo,            \
                                    int64_t hi) {                                                  \
    S *y = (S *)io->out[0];                                                                        \
    REF_POOL_LOOP(                                                                                 \
        S, SFX, C best = (C)0;                                                                     \
        int first = 1,                                                                             \
        {                                                                                          \
          const C v = REF_LOAD_##SFX(x, at);                                                       \
          if (first || v > best || (ref_pool_nan((double)v) && !ref_pool_nan((double)best))) {     \
            best = v;                                                                              \
            first = 0;                                                                             \
          }                                                                                        \
        },                                                                                         \
        REF_STORE_##SFX(y, o, best))                                                               \
  }                                                                                                \
  static void ref_maxpool_indices_run_##SFX(const ref_node *node, const ref_io *io, int64_t lo,    \
                                            int64_t hi) {                                          \
    int64_t *y = (int64_t *)io->out[0];                                                            \
    REF_POOL_LOOP(                                                                                 \
        S, SFX, C best = (C)0;                                                                     \
        int64_t arg = -1,                                                                          \
        {                                                                                          \
          const C v = REF_LOAD_##SFX(x, at);                                                       \
          if (arg < 0 || v > best || (ref_pool_nan((double)v) && !ref_pool_nan((double)best))) {   \
            best = v;                                                                              \
            arg = at;                                                                              \
          }                                                                                        \
        },                                                                                         \
        y[o] = arg < 0 ? -1 : ref_pool_index(p, arg))                                              \
  }
REF_FOR_NUMERIC_TYPES(REF_DEFINE_MAXPOOL)
#undef REF_DEFINE_MAXPOOL

#define REF_DEFINE_AVGPOOL(E, S, C, SFX)                                                           \
  static void ref_avgpool_run_##SFX(const ref_node *node, const ref_io *io, int64_t lo,            \
                                    int64_t hi) {                                                  \
    S *y = (S *)io->out[0];                                                                        \
    REF_POOL_LOOP(                                                                                 \
        S, SFX, C sum = (C)0; int64_t count = 0,                                                   \
                              {                                                                    \
                                sum += REF_LOAD_##SFX(x, at);                                      \
                                ++count;                                                           \
                              },                                                                   \
                              {                                                                    \
                                if (p->include_pad)                                                \
                                  count = ref_window_padded_taps(w, 0, d0) *                       \
                                          ref_window_padded_taps(w, 1, h0) *                       \
                                          ref_window_padded_taps(w, 2, w0);                        \
                                REF_STORE_##SFX(y, o, count > 0 ? sum / (C)count : (C)0);          \
                              })                                                                   \
  }                                                                                                \
  static void ref_lppool_run_##SFX(const ref_node *node, const ref_io *io, int64_t lo,             \
                                   int64_t hi) {                                                   \
    S *y = (S *)io->out[0];                                                                        \
    REF_POOL_LOOP(                                                                                 \
        S, SFX, double sum = 0.0,                                                                  \
        {                                                                                          \
          const double v = fabs((double)REF_LOAD_##SFX(x, at));                                    \
          sum += p->p == 1.0 ? v : p->p == 2.0 ? v * v : pow(v, p->p);                             \
        },                                                                                         \
        REF_STORE_##SFX(y, o,                                                                      \
                        p->p == 1.0   ? sum                                                        \
                        : p->p == 2.0 ? sqrt(sum)                                                  \
                                      : pow(sum, 1.0 / p->p)))                                     \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_AVGPOOL)
#undef REF_DEFINE_AVGPOOL

/* float32 AveragePool whose window is the whole input plane without padding (ONNX's
 * GlobalAveragePool): sixteen running sums a plane, added pairwise at the end, where
 * REF_POOL_LOOP's one sum is a chain of dependent additions, one a few cycles (EfficientNet-B0's
 * squeeze-and-excitation pools took 1.1 ms of its 20). */
enum { REF_POOL_LANES = 16 };
REF_HOT static void ref_avgpool_global_f32(const ref_node *node, const ref_io *io, int64_t lo,
                                           int64_t hi) {
  const ref_pool_params *p = (const ref_pool_params *)node->params;
  const int64_t n = ref_window_in_count(&p->w);
  const float *x = (const float *)io->in[0];
  float *y = (float *)io->out[0];
  int64_t pl, i, l;
  for (pl = lo; pl < hi; ++pl) {
    const float *xp = x + pl * n;
    float s[REF_POOL_LANES] = {0};
    for (i = 0; i + REF_POOL_LANES <= n; i += REF_POOL_LANES)
      for (l = 0; l < REF_POOL_LANES; ++l)
        s[l] += xp[i + l];
    for (l = 0; i < n; ++i, ++l)
      s[l] += xp[i];
    for (i = REF_POOL_LANES / 2; i > 0; i /= 2)
      for (l = 0; l < i; ++l)
        s[l] += s[l + i];
    y[pl] = s[0] / (float)n;
  }
}

/* Whether window w covers its whole input, without padding. */
static int ref_pool_is_global(const ref_window *w) {
  int i;
  for (i = 0; i < REF_SPATIAL; ++i)
    if (w->in[i] < 1 || w->k[i] != w->in[i] || w->out[i] != 1 || w->pad[i] || w->pad_end[i] ||
        (w->k[i] > 1 && w->dil[i] != 1))
      return 0;
  return 1;
}

typedef enum { REF_POOL_MAX, REF_POOL_MAX_INDICES, REF_POOL_AVG, REF_POOL_LP } ref_pool_kind;

static ref_pool_planes_fn ref_pool_kernel(ref_pool_kind kind, odla_element_type t) {
  switch (t) {
#define REF_MAX_CASE(E, S, C, SFX)                                                                 \
  case E:                                                                                          \
    return kind == REF_POOL_MAX ? ref_maxpool_run_##SFX : ref_maxpool_indices_run_##SFX;
#define REF_FLOAT_CASE(E, S, C, SFX)                                                               \
  case E:                                                                                          \
    return kind == REF_POOL_MAX           ? ref_maxpool_run_##SFX                                  \
           : kind == REF_POOL_MAX_INDICES ? ref_maxpool_indices_run_##SFX                          \
           : kind == REF_POOL_AVG         ? ref_avgpool_run_##SFX                                  \
                                          : ref_lppool_run_##SFX;
    REF_FOR_FLOAT_TYPES(REF_FLOAT_CASE)
    REF_FOR_INT_TYPES(REF_MAX_CASE)
#undef REF_MAX_CASE
#undef REF_FLOAT_CASE
  default:
    return NULL;
  }
}

/* Outputs times window cells below which a pooling stays on one thread. */
enum { REF_POOL_PARALLEL_MIN = 1 << 16 };

typedef struct {
  const ref_node *node;
  const ref_io *io;
} ref_pool_job;

/* float32 and 8-bit max pooling with a window of one depth cell (1-D and 2-D windows, and 3-D
 * ones of depth 1, at depth od * stride - pad), which ResNet-50's stem runs on 64 planes of
 * 112 x 112: per output row, the maximum over the window's rows column by column (into
 * scratch, a row's width), then over the window's columns, in loops the compiler vectorizes: k_h +
 * k_w comparisons an output where REF_POOL_LOOP makes k_h * k_w, each with its index arithmetic
 * (int8: 5.7 ms to 1.8 ms). GT(a, b): whether a replaces b, for floats also when a is NaN (a NaN in
 * the window gives NaN). Of equal values the one of the first column with the maximum is kept (0.0
 * or -0.0). */
#define REF_MAXPOOL_GT_INT(a, b) ((a) > (b))
#define REF_MAXPOOL_GT_FLOAT(a, b) ((a) > (b) || (a) != (a))
#define REF_DEFINE_MAXPOOL_ROWS(S, SFX, GT)                                                        \
  REF_HOT static void ref_maxpool_rows_##SFX(const ref_pool_params *p, const S *x, S *y,           \
                                             int64_t lo, int64_t hi, S *rmax) {                    \
    const ref_window *w = &p->w;                                                                   \
    const int64_t iw_n = w->in[2], ow_n = w->out[2], sw = w->stride[2], dw = w->dil[2];            \
    const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);                   \
    int64_t pl, od, oh, ow, kh, kw, i;                                                             \
    for (pl = lo; pl < hi; ++pl)                                                                   \
      for (od = 0; od < w->out[0]; ++od) {                                                         \
        const int64_t id = od * w->stride[0] - w->pad[0]; /* the window's one depth cell */        \
        for (oh = 0; oh < w->out[1]; ++oh) {                                                       \
          S *yr = y + pl * opix + (od * w->out[1] + oh) * ow_n;                                    \
          int rows = 0;                                                                            \
          for (kh = 0; kh < w->k[1]; ++kh) {                                                       \
            const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];                     \
            const S *xr;                                                                           \
            if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1])                              \
              continue;                                                                            \
            xr = x + pl * ipix + (id * w->in[1] + ih) * iw_n;                                      \
            if (rows++ == 0)                                                                       \
              memcpy(rmax, xr, (size_t)iw_n * sizeof *rmax);                                       \
            else                                                                                   \
              for (i = 0; i < iw_n; ++i)                                                           \
                rmax[i] = GT(xr[i], rmax[i]) ? xr[i] : rmax[i];                                    \
          }                                                                                        \
          for (ow = 0; ow < ow_n; ++ow) {                                                          \
            const int64_t w0 = ow * sw - w->pad[2];                                                \
            S best = 0;                                                                            \
            int any = 0;                                                                           \
            for (kw = 0; kw < w->k[2] && rows > 0; ++kw) {                                         \
              const int64_t iw = w0 + kw * dw;                                                     \
              if (iw >= 0 && iw < iw_n && (!any || GT(rmax[iw], best))) {                          \
                best = rmax[iw];                                                                   \
                any = 1;                                                                           \
              }                                                                                    \
            }                                                                                      \
            yr[ow] = best; /* 0 for a window of padding only */                                    \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
  }
REF_DEFINE_MAXPOOL_ROWS(uint8_t, u8, REF_MAXPOOL_GT_INT)
REF_DEFINE_MAXPOOL_ROWS(int8_t, i8, REF_MAXPOOL_GT_INT)
REF_DEFINE_MAXPOOL_ROWS(float, f32, REF_MAXPOOL_GT_FLOAT)
#undef REF_DEFINE_MAXPOOL_ROWS

static void ref_maxpool_rows_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_pool_job *job = (const ref_pool_job *)arg;
  const ref_pool_params *p = (const ref_pool_params *)job->node->params;
  int64_t lo, hi;
  ref_split(p->planes, 1, index, parts, &lo, &hi);
  switch (job->node->inputs[0]->type.element_type) {
  case ODLA_UINT8:
    ref_maxpool_rows_u8(p, (const uint8_t *)job->io->in[0], (uint8_t *)job->io->out[0], lo, hi,
                        (uint8_t *)scratch);
    break;
  case ODLA_INT8:
    ref_maxpool_rows_i8(p, (const int8_t *)job->io->in[0], (int8_t *)job->io->out[0], lo, hi,
                        (int8_t *)scratch);
    break;
  default: /* float32 */
    ref_maxpool_rows_f32(p, (const float *)job->io->in[0], (float *)job->io->out[0], lo, hi,
                         (float *)scratch);
  }
}

static void ref_pool_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_pool_job *job = (const ref_pool_job *)arg;
  const ref_pool_params *p = (const ref_pool_params *)job->node->params;
  int64_t lo, hi;
  (void)scratch;
  ref_split(p->planes, 1, index, parts, &lo, &hi);
  p->planes_fn(job->node, job->io, lo, hi);
}

/* Every pooling node: the planes split over the context's threads. */
static odla_status ref_pool_run(const ref_node *node, const ref_io *io) {
  const ref_pool_params *p = (const ref_pool_params *)node->params;
  const int64_t work = p->planes * ref_window_out_count(&p->w) * ref_window_k_count(&p->w);
  int parts = ref_threads_count(ref_io_threads(io));
  ref_pool_job job;
  job.node = node;
  job.io = io;
  if (work < REF_POOL_PARALLEL_MIN)
    parts = 1;
  else if (p->planes < parts)
    parts = (int)p->planes;
  ref_parallel(ref_io_threads(io), parts, p->rows ? ref_maxpool_rows_part : ref_pool_part, &job,
               (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

static odla_value ref_pool(const char *op, ref_pool_kind kind, odla_value input,
                           odla_memory_layout layout, const odla_uint32 *window_dims,
                           const odla_uint32 *strides, const odla_uint32 *dilations,
                           const odla_uint32 *pad_front, const odla_uint32 *pad_back,
                           const ref_pool_params *extra, const odla_value_shape *output_dims,
                           odla_value_id id) {
  ref_pool_params p;
  odla_value_type out;
  ref_pool_planes_fn run;
  int64_t kernel[ODLA_MAX_DIMENSION];
  int i;
  char s1[128], s2[128];
  if (!ref_check_operands(op, 1, &input))
    return NULL;
  if (layout == ODLA_CHANNELS_LAST && (kind == REF_POOL_MAX || kind == REF_POOL_AVG))
    return ref_pool_channels_last(op, kind == REF_POOL_MAX, input, window_dims, strides, dilations,
                                  pad_front, pad_back, extra->include_pad, output_dims,
                                  id); /* NHWC data: ops_channels_last.c */
  if (layout != ODLA_CHANNELS_FIRST)
    return ref_fail(ODLA_UNSUPPORTED_OP, op,
                    "channels-last data is supported by MaxPool and AveragePool only");
  run = ref_pool_kernel(kind, input->type.element_type);
  if (!run ||
      ((kind == REF_POOL_AVG || kind == REF_POOL_LP) && !ref_is_float(input->type.element_type)))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported (%s)",
                    ref_type_name(input->type.element_type),
                    kind == REF_POOL_AVG || kind == REF_POOL_LP ? "float types" : "numeric types");
  if (!window_dims)
    return ref_fail(ODLA_INVALID_PARAM, op, "window_dims is NULL");
  p = *extra;
  p.planes_fn = run;
  for (i = 0; i + 2 < input->type.shape.size && i < ODLA_MAX_DIMENSION; ++i)
    kernel[i] = window_dims[i];
  if (!ref_make_window(op, &input->type.shape, kernel, strides, dilations, pad_front, pad_back,
                       output_dims, &p.w))
    return NULL;
  p.planes = input->type.shape.dims[0] * input->type.shape.dims[1];
  out = ref_type_of(input);
  if (kind == REF_POOL_MAX_INDICES)
    out.element_type = ODLA_INT64;
  for (i = 2; i < out.shape.size; ++i)
    out.shape.dims[i] = p.w.out[REF_SPATIAL - (out.shape.size - i)];
  if (ref_shape_conflicts(output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                    ref_shape_str(output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  {
    const odla_element_type t = input->type.element_type;
    odla_value v;
    /* (not float32 in a least-memory computation: the row of maxima takes arena scratch) */
    p.rows =
        kind == REF_POOL_MAX && p.w.k[0] == 1 &&
        (t == ODLA_UINT8 || t == ODLA_INT8 || (t == ODLA_FLOAT32 && !ref_current()->least_memory));
    if (kind == REF_POOL_AVG && t == ODLA_FLOAT32 && ref_pool_is_global(&p.w))
      p.planes_fn = ref_avgpool_global_f32;
    v = ref_add_op(op, ref_pool_run, 1, &input, out, id, &p, sizeof p);
    if (v && p.rows)
      v->node->scratch_bytes = (size_t)p.w.in[2] * ref_elem_size(t); /* a row's maxima */
    return v;
  }
}

odla_value odla_MaxPool(odla_value input, odla_memory_layout input_layout,
                        const odla_uint32 *window_dims, const odla_uint32 *strides,
                        const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                        odla_value_shape output_dims, const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  return ref_pool("MaxPool", REF_POOL_MAX, input, input_layout, window_dims, strides, NULL,
                  paddings_front, paddings_back, &extra, &output_dims, value_id);
}

odla_value odla_AveragePool(odla_value input, odla_memory_layout input_layout,
                            const odla_uint32 *window_dims, const odla_uint32 *strides,
                            const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                            odla_bool padding_included, odla_value_shape output_dims,
                            const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  extra.include_pad = padding_included != 0;
  return ref_pool("AveragePool", REF_POOL_AVG, input, input_layout, window_dims, strides, NULL,
                  paddings_front, paddings_back, &extra, &output_dims, value_id);
}

odla_value odla_ExtMaxPool(odla_value input, odla_memory_layout input_layout,
                           const odla_uint32 *window_dims, const odla_uint32 *strides,
                           const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                           const odla_uint32 *paddings_back, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  return ref_pool("ExtMaxPool", REF_POOL_MAX, input, input_layout, window_dims, strides, dilations,
                  paddings_front, paddings_back, &extra, &output_dims, value_id);
}

odla_value odla_ExtMaxPoolIndices(odla_value input, odla_memory_layout input_layout,
                                  const odla_uint32 *window_dims, const odla_uint32 *strides,
                                  const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                                  const odla_uint32 *paddings_back, odla_bool column_major,
                                  odla_value_shape output_dims, const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  extra.column_major = column_major != 0;
  return ref_pool("ExtMaxPoolIndices", REF_POOL_MAX_INDICES, input, input_layout, window_dims,
                  strides, dilations, paddings_front, paddings_back, &extra, &output_dims,
                  value_id);
}

odla_value odla_ExtAveragePool(odla_value input, odla_memory_layout input_layout,
                               const odla_uint32 *window_dims, const odla_uint32 *strides,
                               const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                               const odla_uint32 *paddings_back, odla_bool padding_included,
                               odla_value_shape output_dims, const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  extra.include_pad = padding_included != 0;
  return ref_pool("ExtAveragePool", REF_POOL_AVG, input, input_layout, window_dims, strides,
                  dilations, paddings_front, paddings_back, &extra, &output_dims, value_id);
}

odla_value odla_ExtLpPool(odla_value input, odla_memory_layout input_layout, odla_float32 p,
                          const odla_uint32 *window_dims, const odla_uint32 *strides,
                          const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                          const odla_uint32 *paddings_back, odla_value_shape output_dims,
                          const odla_value_id value_id) {
  ref_pool_params extra;
  memset(&extra, 0, sizeof extra);
  if (!(p > 0.0f))
    return ref_fail(ODLA_INVALID_PARAM, "ExtLpPool", "p = %g must be > 0", (double)p);
  extra.p = p;
  return ref_pool("ExtLpPool", REF_POOL_LP, input, input_layout, window_dims, strides, dilations,
                  paddings_front, paddings_back, &extra, &output_dims, value_id);
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_maxpool_describe(const ref_node *node, ref_window *w) {
  if (node->num_inputs != 1 || node->run != ref_pool_run ||
      ((const ref_pool_params *)node->params)->planes_fn !=
          ref_pool_kernel(REF_POOL_MAX, node->inputs[0]->type.element_type))
    return 0;
  *w = ((const ref_pool_params *)node->params)->w;
  return 1;
}
