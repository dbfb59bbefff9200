/* ops_nn.c: the sliding-window geometry that convolution (ops_conv.c) and pooling
 * (ops_pool.c) share, and batch normalization, in the reference backend. */
#include "ops_nn.h"

#include <math.h>
#include <string.h>

int64_t ref_window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                       int ceil_mode) {
  int64_t padded = in + pb + pe, room, out;
  /* The span (k - 1) * d + 1 is formed only once it is known to fit the padded input: k and d
   * may each be as large as their types allow. */
  if (padded < 1 || k - 1 > (padded - 1) / d)
    return 0;
  room = padded - ((k - 1) * d + 1);
  out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb)
    --out;
  return out;
}

int ref_window_result(const char *op, const odla_value_shape *x, int64_t channels,
                      odla_element_type type, const ref_window *w, const odla_value_shape *given,
                      odla_value_type *out) {
  char s1[128], s2[128];
  int i;
  out->element_type = type;
  out->shape.size = x->size;
  out->shape.dims[0] = x->dims[0];
  out->shape.dims[1] = channels;
  for (i = 2; i < x->size; ++i)
    out->shape.dims[i] = w->out[REF_SPATIAL - (x->size - i)];
  if (ref_shape_conflicts(given, &out->shape))
    ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
             ref_shape_str(given, s1, sizeof s1), ref_shape_str(&out->shape, s2, sizeof s2));
  else if (ref_result_fits(op, out)) /* the builders' scratch sizes multiply its dims */
    return 1;
  return 0;
}

int64_t ref_window_padded_taps(const ref_window *w, int i, int64_t start) {
  int64_t lo = -w->pad[i], hi = w->in[i] + w->pad_end[i], d = w->dil[i];
  int64_t first = start < lo ? (lo - start + d - 1) / d : 0, last = w->k[i] - 1;
  if (start + last * d >= hi)
    last = hi - 1 < start ? -1 : (hi - 1 - start) / d;
  return last >= first ? last - first + 1 : 0;
}

int ref_make_window(const char *op, const odla_value_shape *x, const int64_t *kernel,
                    const odla_uint32 *strides, const odla_uint32 *dilations,
                    const odla_uint32 *pad_front, const odla_uint32 *pad_back,
                    const odla_value_shape *given, ref_window *w) {
  int spatial = x->size - 2, i, ceil_ok = 1, floor_ok = 1;
  int64_t floor_out[REF_SPATIAL], ceil_out[REF_SPATIAL], cells = 1;
  char s1[128];
  if (spatial < 1 || spatial > REF_SPATIAL) {
    ref_fail(ODLA_UNSUPPORTED_OP, op, "input %s: 1 to 3 spatial axes are supported",
             ref_shape_str(x, s1, sizeof s1));
    return 0;
  }
  if (given && given->size >= 0 && given->size != x->size) {
    ref_fail(ODLA_INVALID_PARAM, op, "output_dims has rank %d, the input %d", given->size, x->size);
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
      ref_fail(ODLA_INVALID_PARAM, op,
               "spatial axis %d: kernel %lld, stride %lld and dilation %lld must be >= 1", j,
               (long long)w->k[i], (long long)w->stride[i], (long long)w->dil[i]);
      return 0;
    }
    floor_out[i] =
        ref_window_out(w->in[i], w->k[i], w->stride[i], w->dil[i], w->pad[i], w->pad_end[i], 0);
    ceil_out[i] =
        ref_window_out(w->in[i], w->k[i], w->stride[i], w->dil[i], w->pad[i], w->pad_end[i], 1);
    if (floor_out[i] < 1) {
      ref_fail(ODLA_INVALID_PARAM, op,
               "spatial axis %d: a window of %lld (dilation %lld) does not fit the input extent "
               "%lld with pads %lld+%lld",
               j, (long long)w->k[i], (long long)w->dil[i], (long long)w->in[i],
               (long long)w->pad[i], (long long)w->pad_end[i]);
      return 0;
    }
    if (j >= 0 && given && given->size == x->size) {
      floor_ok &= given->dims[2 + j] == floor_out[i];
      ceil_ok &= given->dims[2 + j] == ceil_out[i];
    }
  }
  if (given && given->size >= 0 && !floor_ok && !ceil_ok) {
    ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s match neither floor nor ceil rounding",
             ref_shape_str(given, s1, sizeof s1));
    return 0;
  }
  for (i = 0; i < REF_SPATIAL; ++i)
    w->out[i] = given && given->size >= 0 && !floor_ok ? ceil_out[i] : floor_out[i];
  for (i = 0; i < REF_SPATIAL; ++i) {
    /* Each extent is below 2^49 (the input's plus 32-bit pads); their product may not be. */
    if (w->out[i] > (int64_t)REF_MAX_VALUE_BYTES / cells) {
      ref_fail(ODLA_INVALID_PARAM, op,
               "the output extents %lldx%lldx%lld of input %s exceed 2^48 positions",
               (long long)w->out[0], (long long)w->out[1], (long long)w->out[2],
               ref_shape_str(x, s1, sizeof s1));
      return 0;
    }
    cells *= w->out[i];
  }
  return 1;
}

/* ---- Batch normalization ------------------------------------------------------------- */

/* y = x * a[c] + b[c] with a = scale / sqrt(var + epsilon) and b = offset - mean * a, worked
 * out per channel in double when the kernel runs (the statistics may be graph inputs). */
typedef struct {
  int64_t outer, channels, inner;
  double epsilon, scalar_scale, scalar_offset;
  odla_element_type param_types[5]; /* the per-channel operands may be any float type */
} ref_bn_params;

static void ref_bn_coeffs(const ref_bn_params *p, const ref_io *io, int64_t c, double *a,
                          double *b) {
  double mean = ref_get(p->param_types[1], io->in[1], c);
  double var = ref_get(p->param_types[2], io->in[2], c);
  double scale = io->in[3] ? ref_get(p->param_types[3], io->in[3], c) : p->scalar_scale;
  double offset = io->in[4] ? ref_get(p->param_types[4], io->in[4], c) : p->scalar_offset;
  *a = scale / sqrt(var + p->epsilon);
  *b = offset - mean * *a;
}

#define REF_DEFINE_BN(E, S, C, SFX)                                                                \
  static odla_status ref_bn_run_##SFX(const ref_node *node, const ref_io *io) {                    \
    const ref_bn_params *p = (const ref_bn_params *)node->params;                                  \
    const S *x = (const S *)io->in[0];                                                             \
    S *y = (S *)io->out[0];                                                                        \
    int64_t o, c, i;                                                                               \
    for (o = 0; o < p->outer; ++o)                                                                 \
      for (c = 0; c < p->channels; ++c) {                                                          \
        double da, db;                                                                             \
        C a, b;                                                                                    \
        const S *xr = x + (o * p->channels + c) * p->inner;                                        \
        S *yr = y + (o * p->channels + c) * p->inner;                                              \
        ref_bn_coeffs(p, io, c, &da, &db);                                                         \
        a = (C)da;                                                                                 \
        b = (C)db;                                                                                 \
        for (i = 0; i < p->inner; ++i)                                                             \
          REF_STORE_##SFX(yr, i, REF_LOAD_##SFX(xr, i) * a + b);                                   \
      }                                                                                            \
    return ODLA_SUCCESS;                                                                           \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_BN)
#undef REF_DEFINE_BN

/* Channels are axis 1 (CHANNELS_FIRST) or the last axis (CHANNELS_LAST). mean, var and the
 * optional scale and offset hold one element per channel, of any float type (ONNX lets
 * BatchNormalization's statistics differ in type from its data). */
odla_value odla_BatchNormalization(odla_value input, odla_memory_layout input_layout,
                                   odla_value mean, odla_value var, odla_float32 epsilon,
                                   odla_value scale, odla_value offset, odla_float32 scalar_scale,
                                   odla_float32 scalar_offset, const odla_value_id value_id) {
  static const char *const names[5] = {"input", "mean", "var", "scale", "offset"};
  ref_bn_params p;
  ref_kernel run = NULL;
  odla_value in[5];
  const odla_value_shape *xs;
  int i, channel_axis;
  char s1[128];
  in[0] = input;
  in[1] = mean;
  in[2] = var;
  in[3] = scale;
  in[4] = offset;
  if (!ref_check_operands("BatchNormalization", 3, in) ||
      (scale && !ref_check_operands("BatchNormalization", 1, &in[3])) ||
      (offset && !ref_check_operands("BatchNormalization", 1, &in[4])))
    return NULL;
  if (input_layout != ODLA_CHANNELS_FIRST && input_layout != ODLA_CHANNELS_LAST)
    return ref_fail(ODLA_UNSUPPORTED_OP, "BatchNormalization",
                    "input_layout must be CHANNELS_FIRST or CHANNELS_LAST");
  memset(&p, 0, sizeof p);
  for (i = 0; i < 5; ++i) {
    if (!in[i])
      continue;
    if (!ref_is_float(in[i]->type.element_type))
      return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "BatchNormalization",
                      "%s has element type %s; a float type is required", names[i],
                      ref_type_name(in[i]->type.element_type));
    p.param_types[i] = in[i]->type.element_type;
  }
  switch (input->type.element_type) {
#define REF_BN_CASE(E, S, C, SFX)                                                                  \
  case E:                                                                                          \
    run = ref_bn_run_##SFX;                                                                        \
    break;
    REF_FOR_FLOAT_TYPES(REF_BN_CASE)
#undef REF_BN_CASE
  default:
    break;
  }
  xs = &input->type.shape;
  if (xs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, "BatchNormalization", "input %s needs rank >= 2",
                    ref_shape_str(xs, s1, sizeof s1));
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
                      "%s %s must have one element per channel (%lld)", names[i],
                      ref_shape_str(&in[i]->type.shape, s1, sizeof s1), (long long)p.channels);
  p.epsilon = epsilon;
  p.scalar_scale = scalar_scale;
  p.scalar_offset = scalar_offset;
  return ref_add_op("BatchNormalization", run, 5, in, ref_type_of(input), value_id, &p, sizeof p);
}
