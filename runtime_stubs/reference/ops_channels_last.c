/* ops_channels_last.c: convolution and max/average pooling on channels-last data
 * ([N, spatial..., C], ODLA_CHANNELS_LAST) in the reference backend, float32, 1 to 3 spatial
 * axes. odlac's layout assignment produces them for backends whose manifest prefers
 * channels_last; the reference backend implements them so that this layout is checked
 * numerically against the channels-first kernels.
 *
 * Convolution (kernel ODLA_SIO: [spatial..., C / group, M]): per image and group, an im2col
 * matrix with one row per output pixel and columns (kd, kh, kw, ci), times the kernel viewed
 * as the matrix [kernel volume * C / group, M], written straight into the [pixels, M] output
 * with ldc = M. The im2col matrix is built a block of output pixels at a time (at most
 * REF_CL_COL_FLOATS floats), so the scratch stays small whatever the image size. A 1x1 convolution
 * with stride 1 and no padding uses the input itself as the im2col matrix. Depthwise convolutions
 * (one input and one output channel per group) run a direct loop whose innermost axis is the
 * channel, contiguous in this layout.
 *
 * Pooling: for each output pixel, the window's input pixels are combined channel by channel
 * (contiguous rows of C). Rounding, NaN and padding rules are those of ops_pool.c. */
#include "ops_channels_last.h"

#include <string.h>

odla_value_shape ref_cl_as_channels_first(const odla_value_shape *s) {
  odla_value_shape v = ref_shape_copy(s);
  int i;
  if (s->size < 3)
    return v;
  v.dims[1] = s->dims[s->size - 1];
  for (i = 2; i < s->size; ++i)
    v.dims[i] = s->dims[i - 1];
  return v;
}

void ref_cl_out_dims(const ref_window *w, int rank, odla_value_shape *out) {
  int i;
  for (i = 1; i + 1 < rank; ++i)
    out->dims[i] = w->out[REF_SPATIAL - (rank - 1 - i)];
}

/* ---- Convolution ------------------------------------------------------------------------- */

/* The most floats of im2col matrix a convolution node builds at once (512 KiB). */
#define REF_CL_COL_FLOATS 131072

typedef struct {
  ref_window w;
  int64_t n, c, m, group;
  int64_t kvol;  /* columns of the im2col matrix: kernel volume * C / group */
  int64_t rows;  /* output pixels per im2col block */
  int pointwise; /* 1x1, stride 1, no padding: the input is its own im2col matrix */
  int depthwise; /* C / group == M / group == 1: the direct per-channel loop */
  size_t col_at, pack_at, bytes;
} ref_conv_cl_params;

/* Rows [first, last) of the im2col matrix of one group of one image: row = output pixel,
 * columns (kd, kh, kw, ci); `x` points at the group's first channel. */
static void ref_conv_cl_im2col(const ref_conv_cl_params *p, const float *x, int64_t first,
                               int64_t last, float *col) {
  const ref_window *w = &p->w;
  const int64_t cpg = p->c / p->group;
  int64_t pix, kd, kh, kw;
  for (pix = first; pix < last; ++pix) {
    const int64_t ow = pix % w->out[2], oh = pix / w->out[2] % w->out[1];
    const int64_t od = pix / (w->out[2] * w->out[1]);
    for (kd = 0; kd < w->k[0]; ++kd) {
      const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
      for (kh = 0; kh < w->k[1]; ++kh) {
        const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
        for (kw = 0; kw < w->k[2]; ++kw, col += cpg) {
          const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];
          if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 || iw >= w->in[2])
            memset(col, 0, (size_t)cpg * sizeof *col);
          else
            memcpy(col, x + ((id * w->in[1] + ih) * w->in[2] + iw) * p->c,
                   (size_t)cpg * sizeof *col);
        }
      }
    }
  }
}

/* Depthwise: y[pixel, c] += x[window pixel, c] * k[window cell, c]. */
static void ref_conv_cl_depthwise(const ref_conv_cl_params *p, const float *x, const float *k,
                                  float *y) {
  const ref_window *w = &p->w;
  const int64_t ch = p->c;
  int64_t od, oh, ow, kd, kh, kw, c;
  for (od = 0; od < w->out[0]; ++od)
    for (oh = 0; oh < w->out[1]; ++oh)
      for (ow = 0; ow < w->out[2]; ++ow) {
        float *yp = y + ((od * w->out[1] + oh) * w->out[2] + ow) * ch;
        for (kd = 0; kd < w->k[0]; ++kd) {
          const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
          if (id < 0 || id >= w->in[0])
            continue;
          for (kh = 0; kh < w->k[1]; ++kh) {
            const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
            if (ih < 0 || ih >= w->in[1])
              continue;
            for (kw = 0; kw < w->k[2]; ++kw) {
              const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];
              const float *xp = x + ((id * w->in[1] + ih) * w->in[2] + iw) * ch;
              const float *kp = k + ((kd * w->k[1] + kh) * w->k[2] + kw) * ch;
              if (iw < 0 || iw >= w->in[2])
                continue;
              for (c = 0; c < ch; ++c)
                yp[c] += xp[c] * kp[c];
            }
          }
        }
      }
}

static odla_status ref_conv_cl_run(const ref_node *node, const ref_io *io) {
  const ref_conv_cl_params *p = (const ref_conv_cl_params *)node->params;
  const float *x = (const float *)io->in[0], *k = (const float *)io->in[1];
  const float *bias = (const float *)io->in[2];
  float *y = (float *)io->out[0];
  unsigned char *scratch = (unsigned char *)io->scratch;
  float *col = (float *)ref_scratch_at(scratch, p->col_at),
        *pack = (float *)ref_scratch_at(scratch, p->pack_at);
  const int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  const int64_t cpg = p->c / p->group, mpg = p->m / p->group;
  int64_t n, g, o, j, r;
  for (n = 0; n < p->n; ++n) {
    const float *xn = x + n * ipix * p->c;
    float *yn = y + n * opix * p->m;
    for (o = 0; o < opix; ++o)
      for (j = 0; j < p->m; ++j)
        yn[o * p->m + j] = bias ? bias[j] : 0.0f;
    if (p->depthwise) {
      ref_conv_cl_depthwise(p, xn, k, yn);
      continue;
    }
    for (g = 0; g < p->group; ++g) {
      if (p->pointwise) {
        ref_sgemm_mt(io, 0, 0, opix, mpg, p->kvol, 1.0f, xn + g * cpg, p->c, NULL, k + g * mpg,
                     p->m, 1.0f, NULL, yn + g * mpg, p->m, pack);
        continue;
      }
      for (o = 0; o < opix; o += p->rows) {
        r = opix - o < p->rows ? opix - o : p->rows;
        ref_conv_cl_im2col(p, xn + g * cpg, o, o + r, col);
        ref_sgemm_mt(io, 0, 0, r, mpg, p->kvol, 1.0f, col, p->kvol, NULL, k + g * mpg, p->m, 1.0f,
                     NULL, yn + o * p->m + g * mpg, p->m, pack);
      }
    }
  }
  return ODLA_SUCCESS;
}

odla_value ref_conv_channels_last(odla_value input, odla_uint32 group, odla_value kernel,
                                  odla_memory_layout kernel_layout, const odla_uint32 *strides,
                                  const odla_uint32 *dilations, const odla_uint32 *pad_front,
                                  const odla_uint32 *pad_back, odla_value bias,
                                  odla_value_shape output_dims, odla_value_id id) {
  ref_conv_cl_params p;
  odla_value in[3], v;
  odla_value_type out;
  odla_value_shape cf;
  const odla_value_shape *xs, *ws;
  int64_t kernel_dims[REF_SPATIAL], opix;
  int i, r;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = kernel;
  in[2] = bias;
  if (!ref_check_operands("Conv", 2, in) || (bias && !ref_check_operands("Conv", 1, &in[2])))
    return NULL;
  if (kernel_layout != ODLA_SIO)
    return ref_fail(ODLA_UNSUPPORTED_OP, "Conv",
                    "channels-last data needs an SIO kernel [spatial..., C / group, M]");
  for (i = 0; i < 3; ++i)
    if (in[i] && in[i]->type.element_type != ODLA_FLOAT32)
      return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Conv",
                      "channels-last convolution computes float32; operand %d is %s", i,
                      ref_type_name(in[i]->type.element_type));
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  r = xs->size;
  if (r < 3 || r > 2 + REF_SPATIAL || ws->size != r || group < 1 ||
      !ref_product_is(ws->dims[r - 2], group, xs->dims[r - 1]) || ws->dims[r - 1] % group != 0)
    return ref_fail(ODLA_INVALID_PARAM, "Conv",
                    "channels-last input %s, SIO kernel %s and group %u do not fit: input "
                    "channels (last dim) must be kernel dim %d times group, kernel dim %d a "
                    "multiple of group; 1 to 3 spatial axes",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group,
                    r - 2, r - 1);
  memset(&p, 0, sizeof p);
  p.group = group;
  p.n = xs->dims[0];
  p.c = xs->dims[r - 1];
  p.m = ws->dims[r - 1];
  if (bias && (bias->type.shape.size != 1 || bias->type.shape.dims[0] != p.m))
    return ref_fail(ODLA_INVALID_PARAM, "Conv", "bias %s must have %lld elements",
                    ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)p.m);
  for (i = 0; i < r - 2; ++i)
    kernel_dims[i] = ws->dims[i];
  cf = ref_cl_as_channels_first(xs);
  if (!ref_make_window("Conv", &cf, kernel_dims, strides, dilations, pad_front, pad_back, NULL,
                       &p.w))
    return NULL;
  p.kvol = p.c / group * ref_window_k_count(&p.w);
  p.depthwise = p.c == group && p.m == group;
  p.pointwise = ref_window_k_count(&p.w) == 1;
  for (i = 0; i < REF_SPATIAL; ++i)
    p.pointwise &= p.w.stride[i] == 1 && p.w.pad[i] == 0 && p.w.pad_end[i] == 0;
  out.element_type = ODLA_FLOAT32;
  out.shape = ref_shape_copy(xs);
  out.shape.dims[r - 1] = p.m;
  ref_cl_out_dims(&p.w, r, &out.shape);
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Conv", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  opix = ref_window_out_count(&p.w);
  p.rows = p.pointwise ? opix : REF_CL_COL_FLOATS / p.kvol;
  p.rows = p.rows < 1 ? 1 : p.rows > opix ? opix : p.rows;
  p.col_at = 0;
  p.pack_at =
      p.pointwise || p.depthwise ? 0 : ref_nn_align((size_t)(p.rows * p.kvol) * sizeof(float));
  p.bytes = p.depthwise ? 0
                        : p.pack_at + ref_nn_align(ref_sgemm_scratch(p.rows, p.m / group, p.kvol) *
                                                   sizeof(float));
  v = ref_add_op("Conv", ref_conv_cl_run, 3, in, out, id, &p, sizeof p);
  if (v) {
    v->node->scratch_bytes = p.bytes;
    v->node->flops = ref_mul_sat(2 * p.n * p.m * opix, p.kvol); /* a multiply-add per tap */
  }
  return v;
}

/* ---- Pooling ----------------------------------------------------------------------------- */

typedef struct {
  ref_window w;
  int64_t n, c;
  int is_max, include_pad;
} ref_pool_cl_params;

static odla_status ref_pool_cl_run(const ref_node *node, const ref_io *io) {
  const ref_pool_cl_params *p = (const ref_pool_cl_params *)node->params;
  const ref_window *w = &p->w;
  const float *x = (const float *)io->in[0];
  float *y = (float *)io->out[0];
  const int64_t ch = p->c, ipix = ref_window_in_count(w);
  int64_t n, od, oh, ow, kd, kh, kw, c;
  for (n = 0; n < p->n; ++n) {
    const float *xn = x + n * ipix * ch;
    for (od = 0; od < w->out[0]; ++od)
      for (oh = 0; oh < w->out[1]; ++oh)
        for (ow = 0; ow < w->out[2]; ++ow) {
          const int64_t d0 = od * w->stride[0] - w->pad[0], h0 = oh * w->stride[1] - w->pad[1];
          const int64_t w0 = ow * w->stride[2] - w->pad[2];
          float *yp = y + (((n * w->out[0] + od) * w->out[1] + oh) * w->out[2] + ow) * ch;
          int64_t count = 0;
          for (c = 0; c < ch; ++c)
            yp[c] = 0.0f;
          for (kd = 0; kd < w->k[0]; ++kd) {
            const int64_t id = d0 + kd * w->dil[0];
            if (id < 0 || id >= w->in[0])
              continue;
            for (kh = 0; kh < w->k[1]; ++kh) {
              const int64_t ih = h0 + kh * w->dil[1];
              if (ih < 0 || ih >= w->in[1])
                continue;
              for (kw = 0; kw < w->k[2]; ++kw) {
                const int64_t iw = w0 + kw * w->dil[2];
                const float *xp = xn + ((id * w->in[1] + ih) * w->in[2] + iw) * ch;
                if (iw < 0 || iw >= w->in[2])
                  continue;
                if (!p->is_max)
                  for (c = 0; c < ch; ++c)
                    yp[c] += xp[c];
                else if (count == 0)
                  memcpy(yp, xp, (size_t)ch * sizeof *yp);
                else /* a NaN anywhere in the window wins */
                  for (c = 0; c < ch; ++c)
                    yp[c] = xp[c] > yp[c] || xp[c] != xp[c] ? xp[c] : yp[c];
                ++count;
              }
            }
          }
          if (p->is_max)
            continue;
          if (p->include_pad)
            count = ref_window_padded_taps(w, 0, d0) * ref_window_padded_taps(w, 1, h0) *
                    ref_window_padded_taps(w, 2, w0);
          if (count > 0)
            for (c = 0; c < ch; ++c)
              yp[c] /= (float)count;
        }
  }
  return ODLA_SUCCESS;
}

odla_value ref_pool_channels_last(const char *op, int is_max, odla_value input,
                                  const odla_uint32 *window_dims, const odla_uint32 *strides,
                                  const odla_uint32 *dilations, const odla_uint32 *pad_front,
                                  const odla_uint32 *pad_back, int include_pad,
                                  const odla_value_shape *output_dims, odla_value_id id) {
  ref_pool_cl_params p;
  odla_value_type out;
  odla_value_shape cf, given;
  int64_t kernel[REF_SPATIAL];
  int i, r;
  char s1[128], s2[128];
  if (!ref_check_operands(op, 1, &input))
    return NULL;
  if (input->type.element_type != ODLA_FLOAT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "channels-last pooling computes float32; the input is %s",
                    ref_type_name(input->type.element_type));
  if (!window_dims)
    return ref_fail(ODLA_INVALID_PARAM, op, "window_dims is NULL");
  r = input->type.shape.size;
  if (r < 3 || r > 2 + REF_SPATIAL)
    return ref_fail(ODLA_UNSUPPORTED_OP, op, "input %s: 1 to 3 spatial axes are supported",
                    ref_shape_str(&input->type.shape, s1, sizeof s1));
  for (i = 0; i < r - 2; ++i)
    kernel[i] = window_dims[i];
  cf = ref_cl_as_channels_first(&input->type.shape);
  given = output_dims->size == r ? ref_cl_as_channels_first(output_dims) : *output_dims;
  memset(&p, 0, sizeof p);
  if (!ref_make_window(op, &cf, kernel, strides, dilations, pad_front, pad_back, &given, &p.w))
    return NULL;
  p.n = input->type.shape.dims[0];
  p.c = input->type.shape.dims[r - 1];
  p.is_max = is_max;
  p.include_pad = include_pad;
  out = ref_type_of(input);
  ref_cl_out_dims(&p.w, r, &out.shape);
  if (ref_shape_conflicts(output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                    ref_shape_str(output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  return ref_add_op(op, ref_pool_cl_run, 1, &input, out, id, &p, sizeof p);
}
