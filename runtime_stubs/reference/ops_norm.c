/* ops_norm.c: normalization ops of the reference backend: instance and group normalization,
 * Lp normalization and local response normalization (LRN). Every float type: float32,
 * float64, and float16/bfloat16 computed in float. Channels-first ([N, C, S...]) and
 * channels-last ([N, S..., C]) data; statistics (means, variances, norms) accumulate in
 * double, so that a long reduction loses nothing to rounding. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

/* Element (n, c, s) of a channels-first or channels-last tensor lies at
 * n * c * s + c_index * c_stride + s_index * s_stride. */
typedef struct {
  int64_t n, c, s;
  int64_t c_stride, s_stride;
} ref_channels;

/* Fills `g` from a shape of rank >= min_rank; 0 (after reporting) when the layout or rank
 * does not fit. */
static int ref_channel_geometry(const char *op, const odla_value_shape *x,
                                odla_memory_layout layout, int min_rank, ref_channels *g) {
  int i, channel_axis;
  char s1[128];
  if (layout != ODLA_CHANNELS_FIRST && layout != ODLA_CHANNELS_LAST) {
    ref_fail(ODLA_UNSUPPORTED_OP, op, "layout %d is not supported (channels-first or -last)",
             (int)layout);
    return 0;
  }
  if (x->size < min_rank) {
    ref_fail(ODLA_INVALID_PARAM, op, "input %s needs rank >= %d (N, C, ...)",
             ref_shape_str(x, s1, sizeof s1), min_rank);
    return 0;
  }
  channel_axis = layout == ODLA_CHANNELS_FIRST ? 1 : x->size - 1;
  g->n = x->dims[0];
  g->c = x->dims[channel_axis];
  g->s = 1;
  for (i = 1; i < x->size; ++i)
    if (i != channel_axis)
      g->s *= x->dims[i];
  g->c_stride = layout == ODLA_CHANNELS_FIRST ? g->s : 1;
  g->s_stride = layout == ODLA_CHANNELS_FIRST ? 1 : g->c;
  return 1;
}

static int ref_is_float_type(odla_element_type t) {
  return t == ODLA_FLOAT32 || t == ODLA_FLOAT64 || t == ODLA_FLOAT16 || t == ODLA_BFLOAT16;
}

/* Checks that `v` (when present) has the input's element type and one of the allowed element
 * counts; `what` names it in the message. */
static int ref_check_param(const char *op, const char *what, odla_value v, odla_element_type t,
                           int64_t count_a, int64_t count_b) {
  int64_t n;
  char s1[128];
  if (!v)
    return 1;
  if (!ref_check_operands(op, 1, &v))
    return 0;
  if (v->type.element_type != t) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "%s is %s, the input %s", what,
             ref_type_name(v->type.element_type), ref_type_name(t));
    return 0;
  }
  n = ref_count(&v->type.shape);
  if (n != count_a && n != count_b) {
    if (count_a == count_b)
      ref_fail(ODLA_INVALID_PARAM, op, "%s %s must have %lld elements", what,
               ref_shape_str(&v->type.shape, s1, sizeof s1), (long long)count_a);
    else
      ref_fail(ODLA_INVALID_PARAM, op, "%s %s must have %lld or %lld elements", what,
               ref_shape_str(&v->type.shape, s1, sizeof s1), (long long)count_a,
               (long long)count_b);
    return 0;
  }
  return 1;
}

/* ---- Group and instance normalization ----------------------------------------------- */

typedef struct {
  ref_channels g;
  int64_t groups;
  int per_group; /* scale and offset hold one element per group rather than per channel */
  double epsilon;
  float scalar_scale, scalar_offset;
} ref_groupnorm_params;

/* Per (n, group): mean and variance over the group's channels and spatial elements (two
 * passes), then y = (x - mean) / sqrt(var + epsilon) * scale[c] + offset[c]. */
#define REF_DEFINE_GROUPNORM(E, S, C, SFX)                                                         \
  static void ref_groupnorm_##SFX(const ref_groupnorm_params *p, const S *x, const S *scale,       \
                                  const S *offset, S *y) {                                         \
    const ref_channels *g = &p->g;                                                                 \
    int64_t cpg = g->c / p->groups, count = cpg * g->s, n, grp, c, s;                              \
    for (n = 0; n < g->n; ++n)                                                                     \
      for (grp = 0; grp < p->groups; ++grp) {                                                      \
        const int64_t base = n * g->c * g->s;                                                      \
        double sum = 0.0, sq = 0.0, mean, inv;                                                     \
        for (c = grp * cpg; c < (grp + 1) * cpg; ++c)                                              \
          for (s = 0; s < g->s; ++s)                                                               \
            sum += REF_LOAD_##SFX(x, base + c * g->c_stride + s * g->s_stride);                    \
        mean = count > 0 ? sum / (double)count : 0.0;                                              \
        for (c = grp * cpg; c < (grp + 1) * cpg; ++c)                                              \
          for (s = 0; s < g->s; ++s) {                                                             \
            const double d = REF_LOAD_##SFX(x, base + c * g->c_stride + s * g->s_stride) - mean;   \
            sq += d * d;                                                                           \
          }                                                                                        \
        inv = 1.0 / sqrt((count > 0 ? sq / (double)count : 0.0) + p->epsilon);                     \
        for (c = grp * cpg; c < (grp + 1) * cpg; ++c) {                                            \
          const int64_t k = p->per_group ? grp : c;                                                \
          const C a = (C)((scale ? (double)REF_LOAD_##SFX(scale, k) : p->scalar_scale) * inv);     \
          const C b = (C)(offset ? (double)REF_LOAD_##SFX(offset, k) : p->scalar_offset);          \
          const C m = (C)mean;                                                                     \
          for (s = 0; s < g->s; ++s) {                                                             \
            const int64_t i = base + c * g->c_stride + s * g->s_stride;                            \
            REF_STORE_##SFX(y, i, (REF_LOAD_##SFX(x, i) - m) * a + b);                             \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_GROUPNORM)
#undef REF_DEFINE_GROUPNORM

static odla_status ref_groupnorm_run(const ref_node *node, const ref_io *io) {
  const ref_groupnorm_params *p = (const ref_groupnorm_params *)node->params;
  switch (node->inputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ref_groupnorm_##SFX(p, (const S *)io->in[0], (const S *)io->in[1], (const S *)io->in[2],       \
                        (S *)io->out[0]);                                                          \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ODLA_SUCCESS;
}

/* Shared by both builders; groups == 0 means one group per channel (instance norm). */
static odla_value ref_groupnorm(const char *op, odla_value input, odla_memory_layout layout,
                                odla_int32 groups, odla_float32 epsilon, odla_value scale,
                                odla_value offset, odla_float32 scalar_scale,
                                odla_float32 scalar_offset, odla_value_id id) {
  ref_groupnorm_params p;
  odla_value in[3];
  odla_element_type t;
  int64_t per_group_count;
  in[0] = input;
  in[1] = scale;
  in[2] = offset;
  if (!ref_check_operands(op, 1, in))
    return NULL;
  t = input->type.element_type;
  if (!ref_is_float_type(t))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "element type %s is not supported (float32, "
                    "float64, float16, bfloat16)",
                    ref_type_name(t));
  memset(&p, 0, sizeof p);
  if (!ref_channel_geometry(op, &input->type.shape, layout, 2, &p.g))
    return NULL;
  p.groups = groups == 0 ? p.g.c : groups;
  if (p.g.c == 0)
    p.groups = 1; /* no channels: nothing to normalize */
  else if (p.g.c % p.groups != 0)
    return ref_fail(ODLA_INVALID_PARAM, op, "groups %d must divide the %lld channels", (int)groups,
                    (long long)p.g.c);
  if (!(epsilon >= 0.0f))
    return ref_fail(ODLA_INVALID_PARAM, op, "epsilon %g must be >= 0", (double)epsilon);
  /* Scale and offset: one element per channel, or (GroupNormalization) one per group. */
  per_group_count = groups == 0 ? p.g.c : p.groups;
  if (!ref_check_param(op, "scale", scale, t, p.g.c, per_group_count) ||
      !ref_check_param(op, "offset", offset, t, p.g.c, per_group_count))
    return NULL;
  p.per_group = (scale && ref_count(&scale->type.shape) != p.g.c) ||
                (offset && ref_count(&offset->type.shape) != p.g.c);
  if (p.per_group && ((scale && ref_count(&scale->type.shape) != per_group_count) ||
                      (offset && ref_count(&offset->type.shape) != per_group_count)))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "scale and offset must both have one element per "
                    "channel or both one per group");
  p.epsilon = epsilon;
  p.scalar_scale = scalar_scale;
  p.scalar_offset = scalar_offset;
  return ref_add_op(op, ref_groupnorm_run, 3, in, ref_type_of(input), id, &p, sizeof p);
}

/* Normalizes each (n, channel) over its spatial elements:
 *   y = (x - mean) / sqrt(var + epsilon) * scale[c] + offset[c]
 * with the biased variance. scale and offset are optional values of the input's type with one
 * element per channel; when NULL, scalar_scale and scalar_offset apply to every channel.
 * Rank >= 2 ([N, C] normalizes single elements: the result is the offset). */
odla_value odla_InstanceNormalization(odla_value input, odla_memory_layout input_layout,
                                      odla_float32 epsilon, odla_value scale, odla_value offset,
                                      odla_float32 scalar_scale, odla_float32 scalar_offset,
                                      const odla_value_id value_id) {
  return ref_groupnorm("InstanceNormalization", input, input_layout, 0, epsilon, scale, offset,
                       scalar_scale, scalar_offset, value_id);
}

/* Normalizes each (n, group of C / groups consecutive channels) over the group's channels and
 * spatial elements, as odla_InstanceNormalization does per channel (groups == C is instance
 * normalization, groups == 1 layer normalization over [C, S...]). scale and offset hold one
 * element per channel (ONNX GroupNormalization-21) or one per group (ONNX-18). */
odla_value odla_GroupNormalization(odla_value input, odla_memory_layout input_layout,
                                   odla_int32 groups, odla_float32 epsilon, odla_value scale,
                                   odla_value offset, odla_float32 scalar_scale,
                                   odla_float32 scalar_offset, const odla_value_id value_id) {
  if (groups < 1)
    return ref_fail(ODLA_INVALID_PARAM, "GroupNormalization", "groups %d must be >= 1",
                    (int)groups);
  return ref_groupnorm("GroupNormalization", input, input_layout, groups, epsilon, scale, offset,
                       scalar_scale, scalar_offset, value_id);
}

/* ---- Local response normalization ----------------------------------------------------- */

typedef struct {
  ref_channels g;
  int64_t size;
  double alpha_over_size, beta, bias;
} ref_lrn_params;

/* Per spatial element, channel c sums the squares of channels
 * [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C). `acc` is scratch
 * of s elements. */
#define REF_DEFINE_LRN(E, S, C, SFX)                                                               \
  static void ref_lrn_##SFX(const ref_lrn_params *p, const S *x, S *y, C *acc) {                   \
    const ref_channels *g = &p->g;                                                                 \
    int64_t n, c, k, s;                                                                            \
    for (n = 0; n < g->n; ++n) {                                                                   \
      const int64_t base = n * g->c * g->s;                                                        \
      for (c = 0; c < g->c; ++c) {                                                                 \
        int64_t lo = c - (p->size - 1) / 2, hi = c + p->size / 2;                                  \
        lo = lo < 0 ? 0 : lo;                                                                      \
        hi = hi > g->c - 1 ? g->c - 1 : hi;                                                        \
        for (s = 0; s < g->s; ++s)                                                                 \
          acc[s] = 0;                                                                              \
        for (k = lo; k <= hi; ++k)                                                                 \
          for (s = 0; s < g->s; ++s) {                                                             \
            const C v = REF_LOAD_##SFX(x, base + k * g->c_stride + s * g->s_stride);               \
            acc[s] += v * v;                                                                       \
          }                                                                                        \
        for (s = 0; s < g->s; ++s) {                                                               \
          const int64_t i = base + c * g->c_stride + s * g->s_stride;                              \
          const C d = (C)(p->bias + p->alpha_over_size * acc[s]);                                  \
          REF_STORE_##SFX(y, i, REF_LOAD_##SFX(x, i) * (C)pow(d, -p->beta));                       \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_LRN)
#undef REF_DEFINE_LRN

static odla_status ref_lrn_run(const ref_node *node, const ref_io *io) {
  const ref_lrn_params *p = (const ref_lrn_params *)node->params;
  switch (node->inputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ref_lrn_##SFX(p, (const S *)io->in[0], (S *)io->out[0], (C *)io->scratch);                     \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ODLA_SUCCESS;
}

/* ONNX's LRN: y = x / (bias + alpha / window_size * square_sum)^beta, square_sum over the
 * window_size channels around each channel (see ref_lrn_<type>). alpha is ONNX's (and
 * oneDNN's): the kernel divides it by window_size. Rank >= 2, channel axis by layout. */
odla_value odla_LRN(odla_value input, odla_memory_layout input_layout, odla_int32 window_size,
                    odla_float32 alpha, odla_float32 beta, odla_float32 bias,
                    const odla_value_id value_id) {
  ref_lrn_params p;
  odla_value v;
  odla_element_type t;
  if (!ref_check_operands("LRN", 1, &input))
    return NULL;
  t = input->type.element_type;
  if (!ref_is_float_type(t))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "LRN",
                    "element type %s is not supported "
                    "(float32, float64, float16, bfloat16)",
                    ref_type_name(t));
  memset(&p, 0, sizeof p);
  if (!ref_channel_geometry("LRN", &input->type.shape, input_layout, 2, &p.g))
    return NULL;
  if (window_size < 1)
    return ref_fail(ODLA_INVALID_PARAM, "LRN", "window_size %d must be >= 1", (int)window_size);
  p.size = window_size;
  p.alpha_over_size = (double)alpha / window_size;
  p.beta = beta;
  p.bias = bias;
  v = ref_add_op("LRN", ref_lrn_run, 1, &input, ref_type_of(input), value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = (size_t)p.g.s * (t == ODLA_FLOAT64 ? sizeof(double) : sizeof(float));
  return v;
}

/* ---- Lp normalization ------------------------------------------------------------------- */

typedef struct {
  int rank;
  int64_t dims[ODLA_MAX_DIMENSION];
  int64_t norm_strides[ODLA_MAX_DIMENSION]; /* into the norms (scratch); 0 along normalized axes */
  int64_t norm_count;
  int p;
  double epsilon;
  int scale_axis; /* the axis a per-channel scale runs along; -1: no scale or a single one */
} ref_lpnorm_params;

/* Walks the input row by row (rows run along the last axis). For each row, `o` is the offset
 * of its first element's norm and `idx` its index. Returns 0 when done. */
static int ref_lpnorm_next_row(const ref_lpnorm_params *p, int64_t *idx, int64_t *o) {
  int d;
  for (d = p->rank - 2; d >= 0; --d) {
    *o += p->norm_strides[d];
    if (++idx[d] < p->dims[d])
      return 1;
    *o -= p->norm_strides[d] * p->dims[d];
    idx[d] = 0;
  }
  return 0;
}

static double ref_lp_term(int p, double v) {
  v = fabs(v);
  return p == 1 ? v : p == 2 ? v * v : pow(v, p);
}

/* Pass 1 sums |x|^p into norm[o]; the norms then become 1 / max(||x||_p, epsilon) (0 where
 * that is 0); pass 2 scales. */
#define REF_DEFINE_LPNORM(E, S, C, SFX)                                                            \
  static void ref_lpnorm_##SFX(const ref_lpnorm_params *p, const S *x, const S *scale, S *y,       \
                               double *norm) {                                                     \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, o = 0, i, inner = p->dims[p->rank - 1];                 \
    int64_t inner_stride = p->norm_strides[p->rank - 1];                                           \
    const S *xr = x;                                                                               \
    S *yr = y;                                                                                     \
    for (i = 0; i < p->norm_count; ++i)                                                            \
      norm[i] = 0.0;                                                                               \
    do {                                                                                           \
      for (i = 0; i < inner; ++i)                                                                  \
        norm[o + i * inner_stride] += ref_lp_term(p->p, REF_LOAD_##SFX(xr, i));                    \
      xr += inner;                                                                                 \
    } while (ref_lpnorm_next_row(p, idx, &o));                                                     \
    for (i = 0; i < p->norm_count; ++i) {                                                          \
      double n = p->p == 1 ? norm[i] : p->p == 2 ? sqrt(norm[i]) : pow(norm[i], 1.0 / p->p);       \
      n = n > p->epsilon ? n : p->epsilon;                                                         \
      norm[i] = n > 0.0 ? 1.0 / n : 0.0;                                                           \
    }                                                                                              \
    o = 0;                                                                                         \
    memset(idx, 0, sizeof idx);                                                                    \
    xr = x;                                                                                        \
    do {                                                                                           \
      const int last = p->scale_axis == p->rank - 1;                                               \
      const C row_scale =                                                                          \
          (C)(!scale || last ? 1.0                                                                 \
                             : REF_LOAD_##SFX(scale, p->scale_axis < 0 ? 0 : idx[p->scale_axis])); \
      for (i = 0; i < inner; ++i) {                                                                \
        const C s = last ? (C)REF_LOAD_##SFX(scale, i) : row_scale;                                \
        REF_STORE_##SFX(yr, i, REF_LOAD_##SFX(xr, i) * (C)norm[o + i * inner_stride] * s);         \
      }                                                                                            \
      xr += inner;                                                                                 \
      yr += inner;                                                                                 \
    } while (ref_lpnorm_next_row(p, idx, &o));                                                     \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_LPNORM)
#undef REF_DEFINE_LPNORM

static odla_status ref_lpnorm_run(const ref_node *node, const ref_io *io) {
  const ref_lpnorm_params *p = (const ref_lpnorm_params *)node->params;
  if (p->norm_count == 0 || p->dims[p->rank - 1] == 0)
    return ODLA_SUCCESS; /* no elements */
  switch (node->inputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ref_lpnorm_##SFX(p, (const S *)io->in[0], (const S *)io->in[1], (S *)io->out[0],               \
                     (double *)io->scratch);                                                       \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ODLA_SUCCESS;
}

/* y = x / max(||x||_p, epsilon) * scale, the norm taken over the axes_size axes in `axes`
 * (negative axes count from the end) for each index of the other axes; where the
 * denominator is 0 (an all-zero slice and epsilon 0) the result is 0, as in ONNX Runtime and
 * PyTorch. p >= 1 (1 and 2 are ONNX LpNormalization's). scale is NULL, a one-element value,
 * or one element per channel along the layout's channel axis (Caffe's Normalize layer). */
odla_value odla_LpNormalize(odla_value input, odla_int32 p, odla_memory_layout input_layout,
                            odla_size_t axes_size, const odla_int32 *axes, odla_float32 epsilon,
                            odla_value scale, const odla_value_id value_id) {
  ref_lpnorm_params prm;
  odla_value in[2], v;
  odla_element_type t;
  int normalized[ODLA_MAX_DIMENSION] = {0};
  int64_t stride = 1;
  size_t k;
  int i;
  in[0] = input;
  in[1] = scale;
  if (!ref_check_operands("LpNormalize", 1, in))
    return NULL;
  t = input->type.element_type;
  if (!ref_is_float_type(t))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "LpNormalize",
                    "element type %s is not supported "
                    "(float32, float64, float16, bfloat16)",
                    ref_type_name(t));
  if (p < 1)
    return ref_fail(ODLA_INVALID_PARAM, "LpNormalize", "p %d must be >= 1", (int)p);
  if (!(epsilon >= 0.0f))
    return ref_fail(ODLA_INVALID_PARAM, "LpNormalize", "epsilon %g must be >= 0", (double)epsilon);
  memset(&prm, 0, sizeof prm);
  prm.rank = input->type.shape.size;
  if (axes_size < 1 || !axes)
    return ref_fail(ODLA_INVALID_PARAM, "LpNormalize", "needs at least one axis");
  for (k = 0; k < axes_size; ++k) {
    int a = axes[k] < 0 ? axes[k] + prm.rank : axes[k];
    if (a < 0 || a >= prm.rank || normalized[a])
      return ref_fail(ODLA_INVALID_PARAM, "LpNormalize",
                      "axis %d is out of range for rank %d or "
                      "repeated",
                      (int)axes[k], prm.rank);
    normalized[a] = 1;
  }
  prm.scale_axis = -1;
  if (scale) {
    int64_t count;
    if (input_layout != ODLA_CHANNELS_FIRST && input_layout != ODLA_CHANNELS_LAST)
      return ref_fail(ODLA_UNSUPPORTED_OP, "LpNormalize",
                      "layout %d is not supported "
                      "(channels-first or -last)",
                      (int)input_layout);
    if (prm.rank < 2)
      return ref_fail(ODLA_INVALID_PARAM, "LpNormalize", "a scale needs an input of rank >= 2");
    i = input_layout == ODLA_CHANNELS_FIRST ? 1 : prm.rank - 1;
    if (!ref_check_param("LpNormalize", "scale", scale, t, 1, input->type.shape.dims[i]))
      return NULL;
    count = ref_count(&scale->type.shape);
    prm.scale_axis = count == 1 ? -1 : i;
  }
  for (i = 0; i < prm.rank; ++i)
    prm.dims[i] = input->type.shape.dims[i];
  for (i = prm.rank - 1; i >= 0; --i) {
    prm.norm_strides[i] = normalized[i] ? 0 : stride;
    stride *= normalized[i] ? 1 : prm.dims[i];
  }
  prm.norm_count = stride;
  for (i = 0; i < prm.rank; ++i)
    if (prm.dims[i] == 0)
      prm.norm_count = 0;
  prm.p = p;
  prm.epsilon = epsilon;
  v = ref_add_op("LpNormalize", ref_lpnorm_run, 2, in, ref_type_of(input), value_id, &prm,
                 sizeof prm);
  if (v)
    v->node->scratch_bytes = (size_t)prm.norm_count * sizeof(double);
  return v;
}
