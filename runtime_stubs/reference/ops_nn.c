/* ops_nn.c: convolution, pooling and batch normalization in the reference backend (float32,
 * channels-first data, OIS kernels). Spatial ops handle 1 to 3 spatial axes by treating
 * missing leading axes as extent 1. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define REF_SPATIAL 3

/* Sliding-window geometry shared by convolution and pooling, padded to 3 spatial axes. */
typedef struct {
  int64_t in[REF_SPATIAL], k[REF_SPATIAL], out[REF_SPATIAL];
  int64_t stride[REF_SPATIAL], dil[REF_SPATIAL], pad[REF_SPATIAL], pad_end[REF_SPATIAL];
} ref_window;

static int64_t ref_window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                              int ceil_mode) {
  int64_t span = (k - 1) * d + 1, room = in + pb + pe - span, out;
  if (room < 0)
    return 0;
  out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb)
    --out;
  return out;
}

/* Fills `w` from ODLA's per-spatial-axis arrays (NULL dilations mean 1). The output extents
 * are floor-mode unless `given` names the ceil-mode ones. Returns 0 and reports on error. */
static int ref_make_window(const char *op, const odla_value_shape *x, const int64_t *kernel,
                           const odla_uint32 *strides, const odla_uint32 *dilations,
                           const odla_uint32 *pad_front, const odla_uint32 *pad_back,
                           const odla_value_shape *given, ref_window *w) {
  int spatial = x->size - 2, i, ceil_ok = 1, floor_ok = 1;
  int64_t floor_out[REF_SPATIAL], ceil_out[REF_SPATIAL];
  if (spatial < 1 || spatial > REF_SPATIAL) {
    ref_fail(ODLA_UNSUPPORTED_OP, op, "input rank %d: 1 to 3 spatial axes are supported", x->size);
    return 0;
  }
  for (i = 0; i < REF_SPATIAL; ++i) {
    int j = i - (REF_SPATIAL - spatial); /* index into the op's arrays, < 0 for padding axes */
    w->in[i] = j < 0 ? 1 : x->dims[2 + j];
    w->k[i] = j < 0 ? 1 : kernel[j];
    w->stride[i] = j < 0 || !strides ? 1 : strides[j];
    w->dil[i] = j < 0 || !dilations ? 1 : dilations[j];
    w->pad[i] = j < 0 || !pad_front ? 0 : pad_front[j];
    w->pad_end[i] = j < 0 || !pad_back ? 0 : pad_back[j];
    if (w->k[i] < 1 || w->stride[i] < 1 || w->dil[i] < 1) {
      ref_fail(ODLA_INVALID_PARAM, op, "kernel, strides and dilations must be >= 1");
      return 0;
    }
    floor_out[i] = ref_window_out(w->in[i], w->k[i], w->stride[i], w->dil[i], w->pad[i],
                                  w->pad_end[i], 0);
    ceil_out[i] = ref_window_out(w->in[i], w->k[i], w->stride[i], w->dil[i], w->pad[i],
                                 w->pad_end[i], 1);
    if (floor_out[i] < 1) {
      ref_fail(ODLA_INVALID_PARAM, op, "spatial axis %d: the window does not fit the input", j);
      return 0;
    }
    if (j >= 0 && given && given->size == x->size) {
      floor_ok &= given->dims[2 + j] == floor_out[i];
      ceil_ok &= given->dims[2 + j] == ceil_out[i];
    }
  }
  if (given && given->size >= 0 && given->size != x->size) {
    ref_fail(ODLA_INVALID_PARAM, op, "output_dims has rank %d, the input %d", given->size, x->size);
    return 0;
  }
  if (given && given->size >= 0 && !floor_ok && !ceil_ok) {
    ref_fail(ODLA_INVALID_PARAM, op, "output_dims match neither floor nor ceil rounding");
    return 0;
  }
  for (i = 0; i < REF_SPATIAL; ++i)
    w->out[i] = given && given->size >= 0 && !floor_ok ? ceil_out[i] : floor_out[i];
  return 1;
}

static int64_t ref_window_in_count(const ref_window *w) { return w->in[0] * w->in[1] * w->in[2]; }
static int64_t ref_window_out_count(const ref_window *w) {
  return w->out[0] * w->out[1] * w->out[2];
}

/* ---- Convolution ------------------------------------------------------------------- */

typedef struct {
  ref_window w;
  int64_t n, c, m, group;
  int64_t kvol;      /* (c / group) * kernel volume: rows of the im2col matrix */
  int pointwise;     /* 1x1 kernel, stride 1, no padding: the input is already im2col */
} ref_conv_params;

/* Writes the im2col matrix of one group of one image: row (ci, kd, kh, kw), column =
 * output pixel. */
static void ref_im2col(const ref_conv_params *p, const float *x, float *col) {
  const ref_window *w = &p->w;
  int64_t cpg = p->c / p->group, ci, kd, kh, kw, od, oh, ow;
  for (ci = 0; ci < cpg; ++ci)
    for (kd = 0; kd < w->k[0]; ++kd)
      for (kh = 0; kh < w->k[1]; ++kh)
        for (kw = 0; kw < w->k[2]; ++kw)
          for (od = 0; od < w->out[0]; ++od) {
            int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
            for (oh = 0; oh < w->out[1]; ++oh) {
              int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
              if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1]) {
                memset(col, 0, (size_t)w->out[2] * sizeof *col);
                col += w->out[2];
                continue;
              }
              {
                const float *row = x + ((ci * w->in[0] + id) * w->in[1] + ih) * w->in[2];
                int64_t iw0 = -w->pad[2] + kw * w->dil[2], s = w->stride[2];
                for (ow = 0; ow < w->out[2]; ++ow) {
                  int64_t iw = iw0 + ow * s;
                  col[ow] = iw >= 0 && iw < w->in[2] ? row[iw] : 0.0f;
                }
                col += w->out[2];
              }
            }
          }
}

static odla_status ref_conv_run(const ref_node *node, const ref_io *io) {
  const ref_conv_params *p = (const ref_conv_params *)node->params;
  const float *x = (const float *)io->in[0], *wt = (const float *)io->in[1];
  const float *bias = (const float *)io->in[2];
  float *y = (float *)io->out[0];
  int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  int64_t cpg = p->c / p->group, mpg = p->m / p->group, n, g, i, o;
  float *col = (float *)io->scratch;
  float *pack = col + (p->pointwise ? 0 : p->kvol * opix);
  for (n = 0; n < p->n; ++n) {
    float *yn = y + n * p->m * opix;
    for (i = 0; i < p->m; ++i)
      for (o = 0; o < opix; ++o)
        yn[i * opix + o] = bias ? bias[i] : 0.0f;
    for (g = 0; g < p->group; ++g) {
      const float *xg = x + (n * p->c + g * cpg) * ipix;
      const float *b = xg;
      if (!p->pointwise) {
        ref_im2col(p, xg, col);
        b = col;
      }
      ref_sgemm(0, 0, mpg, opix, p->kvol, 1.0f, wt + g * mpg * p->kvol, p->kvol, b, opix, 1.0f,
                yn + g * mpg * opix, opix, pack);
    }
  }
  return ODLA_SUCCESS;
}

odla_value odla_Conv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                     odla_value kernel, odla_memory_layout kernel_layout,
                     const odla_uint32 *strides, const odla_uint32 *dilations,
                     const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                     odla_value bias, odla_value_shape output_dims, const odla_value_id value_id) {
  ref_conv_params p;
  odla_value in[3], v;
  odla_value_type out;
  const odla_value_shape *xs, *ws;
  int64_t kernel_dims[ODLA_MAX_DIMENSION];
  int i;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = kernel;
  in[2] = bias;
  if (!ref_check_operands("Conv", 2, in) || (bias && !ref_check_operands("Conv", 1, &in[2])))
    return NULL;
  if (input_layout != ODLA_CHANNELS_FIRST || kernel_layout != ODLA_OIS)
    return ref_fail(ODLA_UNSUPPORTED_OP, "Conv", "only channels-first data with OIS kernels");
  if (input->type.element_type != ODLA_FLOAT32 || kernel->type.element_type != ODLA_FLOAT32 ||
      (bias && bias->type.element_type != ODLA_FLOAT32))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Conv", "only float32 is supported");
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  memset(&p, 0, sizeof p);
  p.group = group;
  if (xs->size < 3 || ws->size != xs->size || group < 1 || xs->dims[1] != ws->dims[1] * group ||
      ws->dims[0] % group != 0)
    return ref_fail(ODLA_INVALID_PARAM, "Conv", "input %s, kernel %s and group %u do not fit",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group);
  if (bias && (bias->type.shape.size != 1 || bias->type.shape.dims[0] != ws->dims[0]))
    return ref_fail(ODLA_INVALID_PARAM, "Conv", "bias %s must have %lld elements",
                    ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)ws->dims[0]);
  for (i = 2; i < ws->size; ++i)
    kernel_dims[i - 2] = ws->dims[i];
  if (!ref_make_window("Conv", xs, kernel_dims, strides, dilations, paddings_front, paddings_back,
                       &output_dims, &p.w))
    return NULL;
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.m = ws->dims[0];
  p.kvol = p.c / group * p.w.k[0] * p.w.k[1] * p.w.k[2];
  p.pointwise = p.w.k[0] * p.w.k[1] * p.w.k[2] == 1;
  for (i = 0; i < REF_SPATIAL; ++i)
    p.pointwise &= p.w.stride[i] == 1 && p.w.pad[i] == 0 && p.w.pad_end[i] == 0;
  out.element_type = ODLA_FLOAT32;
  out.shape.size = xs->size;
  out.shape.dims[0] = p.n;
  out.shape.dims[1] = p.m;
  for (i = 2; i < xs->size; ++i)
    out.shape.dims[i] = p.w.out[REF_SPATIAL - (xs->size - i)];
  v = ref_add_op("Conv", ref_conv_run, 3, in, out, value_id, &p, sizeof p);
  if (v) {
    int64_t opix = ref_window_out_count(&p.w);
    v->node->scratch_bytes =
        ((p.pointwise ? 0 : (size_t)(p.kvol * opix)) + ref_sgemm_scratch(p.m / group, opix, p.kvol)) *
        sizeof(float);
  }
  return v;
}

/* ---- Pooling ------------------------------------------------------------------------- */

typedef struct {
  ref_window w;
  int64_t planes; /* N * C */
  int include_pad; /* AveragePool: divide by the window size within the padded input */
} ref_pool_params;

#define REF_POOL_LOOP(BODY_INIT, BODY_ACC, BODY_STORE)                                          \
  const ref_pool_params *p = (const ref_pool_params *)node->params;                              \
  const ref_window *w = &p->w;                                                                  \
  const float *x = (const float *)io->in[0];                                                    \
  float *y = (float *)io->out[0];                                                               \
  int64_t ipix = ref_window_in_count(w), pl, od, oh, ow, kd, kh, kw;                            \
  for (pl = 0; pl < p->planes; ++pl, x += ipix)                                                 \
    for (od = 0; od < w->out[0]; ++od)                                                          \
      for (oh = 0; oh < w->out[1]; ++oh)                                                        \
        for (ow = 0; ow < w->out[2]; ++ow) {                                                    \
          int64_t d0 = od * w->stride[0] - w->pad[0], h0 = oh * w->stride[1] - w->pad[1];       \
          int64_t w0 = ow * w->stride[2] - w->pad[2], valid = 0, span = 1;                      \
          BODY_INIT;                                                                            \
          for (kd = 0; kd < w->k[0]; ++kd) {                                                    \
            int64_t id = d0 + kd;                                                               \
            if (id < 0 || id >= w->in[0])                                                       \
              continue;                                                                         \
            for (kh = 0; kh < w->k[1]; ++kh) {                                                  \
              int64_t ih = h0 + kh;                                                             \
              if (ih < 0 || ih >= w->in[1])                                                     \
                continue;                                                                       \
              for (kw = 0; kw < w->k[2]; ++kw) {                                                \
                int64_t iw = w0 + kw;                                                           \
                if (iw < 0 || iw >= w->in[2])                                                   \
                  continue;                                                                     \
                {                                                                               \
                  const float v = x[(id * w->in[1] + ih) * w->in[2] + iw];                      \
                  ++valid;                                                                      \
                  BODY_ACC;                                                                     \
                }                                                                               \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
          (void)span;                                                                           \
          BODY_STORE;                                                                           \
        }                                                                                       \
  return ODLA_SUCCESS;

static odla_status ref_maxpool_run(const ref_node *node, const ref_io *io) {
  REF_POOL_LOOP(float best = -HUGE_VALF, best = v > best ? v : best, *y++ = best)
}

/* The extent of a window along one axis clipped to the padded input [-pb, in + pe). */
static int64_t ref_padded_span(int64_t start, int64_t k, int64_t in, int64_t pb, int64_t pe) {
  int64_t lo = start < -pb ? -pb : start, hi = start + k > in + pe ? in + pe : start + k;
  return hi > lo ? hi - lo : 0;
}

static odla_status ref_avgpool_run(const ref_node *node, const ref_io *io) {
  REF_POOL_LOOP(
      float sum = 0.0f;
      if (p->include_pad) span = ref_padded_span(d0, w->k[0], w->in[0], w->pad[0], w->pad_end[0]) *
                                 ref_padded_span(h0, w->k[1], w->in[1], w->pad[1], w->pad_end[1]) *
                                 ref_padded_span(w0, w->k[2], w->in[2], w->pad[2], w->pad_end[2]),
      sum += v, *y++ = (p->include_pad ? span : valid) > 0 ? sum / (float)(p->include_pad ? span : valid) : 0.0f)
}

static odla_value ref_pool(const char *op, ref_kernel run, odla_value input,
                           odla_memory_layout layout, const odla_uint32 *window_dims,
                           const odla_uint32 *strides, const odla_uint32 *pad_front,
                           const odla_uint32 *pad_back, int include_pad,
                           const odla_value_shape *output_dims, odla_value_id id) {
  ref_pool_params p;
  odla_value_type out;
  int64_t kernel[ODLA_MAX_DIMENSION];
  int i;
  if (!ref_check_operands(op, 1, &input))
    return NULL;
  if (layout != ODLA_CHANNELS_FIRST)
    return ref_fail(ODLA_UNSUPPORTED_OP, op, "only channels-first data is supported");
  if (input->type.element_type != ODLA_FLOAT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "only float32 is supported");
  if (!window_dims)
    return ref_fail(ODLA_INVALID_PARAM, op, "window_dims is NULL");
  memset(&p, 0, sizeof p);
  for (i = 0; i + 2 < input->type.shape.size; ++i)
    kernel[i] = window_dims[i];
  if (!ref_make_window(op, &input->type.shape, kernel, strides, NULL, pad_front, pad_back,
                       output_dims, &p.w))
    return NULL;
  p.planes = input->type.shape.dims[0] * input->type.shape.dims[1];
  p.include_pad = include_pad;
  out = input->type;
  for (i = 2; i < out.shape.size; ++i)
    out.shape.dims[i] = p.w.out[REF_SPATIAL - (out.shape.size - i)];
  return ref_add_op(op, run, 1, &input, out, id, &p, sizeof p);
}

odla_value odla_MaxPool(odla_value input, odla_memory_layout input_layout,
                        const odla_uint32 *window_dims, const odla_uint32 *strides,
                        const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                        odla_value_shape output_dims, const odla_value_id value_id) {
  return ref_pool("MaxPool", ref_maxpool_run, input, input_layout, window_dims, strides,
                  paddings_front, paddings_back, 0, &output_dims, value_id);
}

odla_value odla_AveragePool(odla_value input, odla_memory_layout input_layout,
                            const odla_uint32 *window_dims, const odla_uint32 *strides,
                            const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                            odla_bool padding_included, odla_value_shape output_dims,
                            const odla_value_id value_id) {
  return ref_pool("AveragePool", ref_avgpool_run, input, input_layout, window_dims, strides,
                  paddings_front, paddings_back, padding_included != 0, &output_dims, value_id);
}

/* ---- Batch normalization ------------------------------------------------------------- */

typedef struct {
  int64_t outer, channels, inner;
  float epsilon, scalar_scale, scalar_offset;
} ref_bn_params;

static odla_status ref_bn_run(const ref_node *node, const ref_io *io) {
  const ref_bn_params *p = (const ref_bn_params *)node->params;
  const float *x = (const float *)io->in[0], *mean = (const float *)io->in[1];
  const float *var = (const float *)io->in[2], *scale = (const float *)io->in[3];
  const float *offset = (const float *)io->in[4];
  float *y = (float *)io->out[0];
  int64_t o, c, i;
  for (o = 0; o < p->outer; ++o)
    for (c = 0; c < p->channels; ++c) {
      const float a = (scale ? scale[c] : p->scalar_scale) / sqrtf(var[c] + p->epsilon);
      const float b = (offset ? offset[c] : p->scalar_offset) - mean[c] * a;
      const float *xr = x + (o * p->channels + c) * p->inner;
      float *yr = y + (o * p->channels + c) * p->inner;
      for (i = 0; i < p->inner; ++i)
        yr[i] = xr[i] * a + b;
    }
  return ODLA_SUCCESS;
}

odla_value odla_BatchNormalization(odla_value input, odla_memory_layout input_layout,
                                   odla_value mean, odla_value var, odla_float32 epsilon,
                                   odla_value scale, odla_value offset, odla_float32 scalar_scale,
                                   odla_float32 scalar_offset, const odla_value_id value_id) {
  ref_bn_params p;
  odla_value in[5];
  const odla_value_shape *xs;
  int i, channel_axis;
  in[0] = input;
  in[1] = mean;
  in[2] = var;
  in[3] = scale;
  in[4] = offset;
  if (!ref_check_operands("BatchNormalization", 3, in) ||
      (scale && !ref_check_operands("BatchNormalization", 1, &in[3])) ||
      (offset && !ref_check_operands("BatchNormalization", 1, &in[4])))
    return NULL;
  for (i = 0; i < 5; ++i)
    if (in[i] && in[i]->type.element_type != ODLA_FLOAT32)
      return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "BatchNormalization", "only float32 is supported");
  xs = &input->type.shape;
  if (xs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, "BatchNormalization", "input needs rank >= 2");
  channel_axis = input_layout == ODLA_CHANNELS_LAST ? xs->size - 1 : 1;
  p.channels = xs->dims[channel_axis];
  p.outer = 1;
  p.inner = 1;
  for (i = 0; i < xs->size; ++i) {
    if (i < channel_axis)
      p.outer *= xs->dims[i];
    else if (i > channel_axis)
      p.inner *= xs->dims[i];
  }
  for (i = 1; i < 5; ++i)
    if (in[i] && ref_count(&in[i]->type.shape) != p.channels)
      return ref_fail(ODLA_INVALID_PARAM, "BatchNormalization",
                      "operand %d must have one element per channel (%lld)", i,
                      (long long)p.channels);
  p.epsilon = epsilon;
  p.scalar_scale = scalar_scale;
  p.scalar_offset = scalar_offset;
  return ref_add_op("BatchNormalization", ref_bn_run, 5, in, input->type, value_id, &p, sizeof p);
}

