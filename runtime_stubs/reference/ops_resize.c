/* ops_resize.c: resizing in the reference backend: odla_Resize, odla_ResizeDynamic and the
 * extension odla_ExtResize, which has every parameter of ONNX Resize (odla_ext_indexing.h).
 * All three build the same node; the core ops fix the parameters their enums leave open:
 *
 *   - the coordinate modes are ONNX's: ODLA_HALF_PIXEL is half_pixel, ODLA_ALIGN_CORNERS
 *     align_corners, ODLA_ASSYMMETRIC asymmetric, and ODLA_HALF_PIXEL_TF is
 *     tf_half_pixel_for_nn, x / scale + 0.5 / scale, for every interpolation;
 *   - ODLA_NEAREST rounds down (floor) with ODLA_ASSYMMETRIC and ODLA_HALF_PIXEL_TF, the
 *     conventions of the frameworks these modes come from (PyTorch's and TensorFlow's
 *     nearest, ONNX Upsample), and rounds halves down with ODLA_HALF_PIXEL and
 *     ODLA_ALIGN_CORNERS (ONNX Resize's default round_prefer_floor);
 *   - ODLA_CUBIC uses the coefficient -0.75 (ONNX's and PyTorch's default), samples outside
 *     the input repeat the edge element.
 *
 * The kernel first computes, per axis and result coordinate, the input positions and weights
 * it reads (a table in the node's scratch memory), then sums the weighted products over the
 * axes that interpolate; axes whose coordinates map to themselves take one tap. */
#include "ref.h"
#include "ref_types.h"

#include <limits.h>
#include <math.h>
#include <string.h>

typedef struct {
  int rank, interp, coord, nearest, exclude_outside, antialias, policy;
  unsigned aspect_mask;
  double cubic_a, extrapolation;
  odla_element_type type, roi_type, scales_type, sizes_type;
  size_t elem;
  int64_t in_dims[ODLA_MAX_DIMENSION], out_dims[ODLA_MAX_DIMENSION];
  int max_taps[ODLA_MAX_DIMENSION]; /* the table's room per result coordinate, per axis */
} ref_resize_params;

/* The per-axis table in scratch: taps input positions and weights for every result
 * coordinate, and whether the coordinate falls outside the input (tf_crop_and_resize). */
typedef struct {
  int taps;
  const int64_t *pos;
  const double *weight;
  const unsigned char *outside;
} ref_resize_axis;

static size_t ref_resize_table_bytes(int64_t out, int taps) {
  return (size_t)out * ((size_t)taps * (sizeof(int64_t) + sizeof(double)) + sizeof(int64_t));
}

/* The filter's reach in input elements at scale 1: linear 1, cubic 2. */
static double ref_resize_reach(int interp) { return interp == ODLA_CUBIC ? 2.0 : 1.0; }

/* Antialiasing stretches the linear and cubic filters when an axis shrinks. */
static int ref_resize_antialiased(const ref_resize_params *p, double scale) {
  return p->antialias && p->interp != ODLA_NEAREST && scale < 1;
}

/* The first tap of a stretched filter, relative to the element left of the coordinate (ONNX's
 * reference: floor(-reach / scale) + 1); the filter has 2 - 2 * first taps. */
static int64_t ref_resize_first_tap(int interp, double scale) {
  return (int64_t)floor(-ref_resize_reach(interp) / scale) + 1;
}

/* The filter's taps at `scale`, in a double: a scale read at run time may be so small that
 * the count is beyond any integer (it is then refused against the planned max_taps). */
static double ref_resize_tap_count(const ref_resize_params *p, double scale) {
  if (ref_resize_antialiased(p, scale))
    return 2 - 2 * (floor(-ref_resize_reach(p->interp) / scale) + 1);
  return p->interp == ODLA_LINEAR ? 2 : p->interp == ODLA_CUBIC ? 4 : 1;
}

/* The same for a scale whose count is known to fit (at most max_taps). */
static int ref_resize_taps(const ref_resize_params *p, double scale) {
  return (int)ref_resize_tap_count(p, scale);
}

/* The input coordinate of result coordinate x (ONNX's coordinate_transformation_mode). */
static double ref_resize_coord(int coord, double x, double scale, int64_t in, int64_t out,
                               double start, double end) {
  double length = (double)in * scale;
  switch (coord) {
  case ODLA_EXT_RESIZE_HALF_PIXEL_SYMMETRIC:
    return (double)in / 2 * (1 - (double)out / length) + (x + 0.5) / scale - 0.5;
  case ODLA_EXT_RESIZE_HALF_PIXEL:
    return (x + 0.5) / scale - 0.5;
  case ODLA_EXT_RESIZE_PYTORCH_HALF_PIXEL:
    return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  case ODLA_EXT_RESIZE_ALIGN_CORNERS:
    return length == 1 ? 0.0 : x * (double)(in - 1) / (length - 1);
  case ODLA_EXT_RESIZE_ASYMMETRIC:
    return x / scale;
  case ODLA_EXT_RESIZE_TF_HALF_PIXEL_FOR_NN:
    /* An axis at scale 1 keeps its elements, as in ONNX Runtime: the formula would move
     * each by half an element, onto the next one with ceil rounding. */
    return scale == 1 ? x : (x + 0.5) / scale;
  default: /* tf_crop_and_resize */
    if (length > 1)
      return x * (end - start) * (double)(in - 1) / (length - 1) + start * (double)(in - 1);
    return (end - start) * (double)(in - 1) / 2 + start * (double)(in - 1);
  }
}

static int64_t ref_resize_nearest(double x, int mode) {
  double f = floor(x);
  if (x == f)
    return (int64_t)f;
  switch (mode) {
  case ODLA_EXT_NEAREST_ROUND_PREFER_FLOOR:
    return (int64_t)(x - f <= 0.5 ? f : f + 1);
  case ODLA_EXT_NEAREST_ROUND_PREFER_CEIL:
    return (int64_t)(x - f < 0.5 ? f : f + 1);
  case ODLA_EXT_NEAREST_FLOOR:
    return (int64_t)f;
  default:
    return (int64_t)f + 1;
  }
}

/* Keys' cubic convolution weights of the 4 samples around a coordinate with fraction t (ONNX's
 * reference formulation). */
static void ref_resize_cubic(double t, double a, double *w) {
  double s = t + 1, u = 1 - t, v = 2 - t;
  w[0] = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
  w[3] = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
}

/* The stretched filters of antialiasing at distance t (in input elements times scale). */
static double ref_resize_filter(int interp, double a, double t) {
  t = fabs(t);
  if (interp == ODLA_LINEAR)
    return t < 1 ? 1 - t : 0;
  if (t <= 1)
    return ((a + 2) * t - (a + 3)) * t * t + 1;
  return t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0;
}

/* Fills the table of axis d into `mem`; returns the bytes used. */
static size_t ref_resize_axis_table(const ref_resize_params *p, int d, double scale, double start,
                                    double end, void *mem, ref_resize_axis *ax) {
  int64_t in = p->in_dims[d], out = p->out_dims[d], o, identity = in == out;
  int64_t *pos = (int64_t *)mem;
  int taps = ref_resize_taps(p, scale), k, stretched = ref_resize_antialiased(p, scale);
  double *weight = (double *)(pos + out * taps);
  unsigned char *outside = (unsigned char *)(weight + out * taps);
  for (o = 0; o < out; ++o) {
    double x = ref_resize_coord(p->coord, (double)o, scale, in, out, start, end), f = floor(x), sum;
    int64_t *ps = pos + o * taps;
    double *ws = weight + o * taps;
    identity = identity && x == (double)o && p->coord != ODLA_EXT_RESIZE_TF_CROP_AND_RESIZE;
    outside[o] = p->coord == ODLA_EXT_RESIZE_TF_CROP_AND_RESIZE && (x < 0 || x > in - 1);
    if (stretched) {
      /* ONNX's reference: an integral coordinate is the right end of the element before it. */
      double ratio = x == f ? 1 : x - f;
      int64_t left = (int64_t)f - (x == f), first = ref_resize_first_tap(p->interp, scale);
      for (k = 0, sum = 0; k < taps; ++k) {
        ps[k] = left + first + k;
        ws[k] = ref_resize_filter(p->interp, p->cubic_a, scale * ((double)(first + k) - ratio));
        sum += ws[k];
      }
      for (k = 0; k < taps && sum != 0; ++k)
        ws[k] /= sum;
    } else if (taps == 1) {
      ps[0] = ref_resize_nearest(x, p->nearest);
      ws[0] = 1;
    } else if (taps == 2) {
      ps[0] = (int64_t)f;
      ps[1] = ps[0] + 1;
      ws[0] = 1 - (x - f);
      ws[1] = x - f;
    } else {
      for (k = 0; k < 4; ++k)
        ps[k] = (int64_t)f - 1 + k;
      ref_resize_cubic(x - f, p->cubic_a, ws);
    }
    if (p->exclude_outside && taps > 1) {
      for (k = 0, sum = 0; k < taps; ++k) {
        if (ps[k] < 0 || ps[k] >= in)
          ws[k] = 0;
        sum += ws[k];
      }
      for (k = 0; k < taps && sum != 0; ++k)
        ws[k] /= sum;
    }
    for (k = 0; k < taps; ++k) /* edge samples repeat */
      ps[k] = ps[k] < 0 ? 0 : (ps[k] >= in ? in - 1 : ps[k]);
  }
  ax->taps = taps;
  if (identity) { /* one tap, the coordinate itself */
    for (o = 0; o < out; ++o) {
      pos[o] = o;
      weight[o] = 1;
    }
    ax->taps = 1;
  }
  ax->pos = pos;
  ax->weight = weight;
  ax->outside = outside;
  return ref_resize_table_bytes(out, taps);
}

/* Resizes with the tables: every result element sums weight * input over the taps of all
 * axes. Integer results truncate toward zero and saturate (ref_set). */
static void ref_resize_compute(const ref_resize_params *p, const ref_resize_axis *ax, const void *x,
                               void *y) {
  int64_t stride[ODLA_MAX_DIMENSION], c[ODLA_MAX_DIMENSION] = {0}, total = 1, i, s = 1;
  int active[ODLA_MAX_DIMENSION], k[ODLA_MAX_DIMENSION], na = 0, d, j;
  for (d = p->rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= p->in_dims[d];
    total *= p->out_dims[d];
  }
  for (d = 0; d < p->rank; ++d)
    if (ax[d].taps > 1)
      active[na++] = d;
  for (i = 0; i < total; ++i) {
    int64_t base = 0;
    int outside = 0;
    for (d = 0; d < p->rank; ++d) {
      outside |= ax[d].outside[c[d]];
      if (ax[d].taps == 1)
        base += ax[d].pos[c[d]] * stride[d];
    }
    if (outside) {
      ref_set(p->type, y, i, p->extrapolation);
    } else if (na == 0) {
      memcpy((unsigned char *)y + (size_t)i * p->elem,
             (const unsigned char *)x + (size_t)base * p->elem, p->elem);
    } else {
      double sum = 0;
      for (j = 0; j < na; ++j)
        k[j] = 0;
      for (;;) {
        double w = 1;
        int64_t off = base;
        for (j = 0; j < na; ++j) {
          const ref_resize_axis *a = &ax[active[j]];
          int64_t t = c[active[j]] * a->taps + k[j];
          w *= a->weight[t];
          off += a->pos[t] * stride[active[j]];
        }
        if (p->type == ODLA_FLOAT32)
          sum += w * ((const float *)x)[off];
        else
          sum += w * ref_get(p->type, x, off);
        for (j = na - 1; j >= 0 && ++k[j] == ax[active[j]].taps; --j)
          k[j] = 0;
        if (j < 0)
          break;
      }
      if (p->type == ODLA_FLOAT32)
        ((float *)y)[i] = (float)sum;
      else
        ref_set(p->type, y, i, sum);
    }
    for (d = p->rank - 1; d >= 0 && ++c[d] == p->out_dims[d]; --d)
      c[d] = 0;
  }
}

/* Operands: input, roi, scales, sizes (the last three may be NULL). */
static odla_status ref_resize_run(const ref_node *node, const ref_io *io) {
  const ref_resize_params *p = (const ref_resize_params *)node->params;
  ref_resize_axis ax[ODLA_MAX_DIMENSION];
  unsigned char *mem = (unsigned char *)io->scratch;
  double aspect = -1; /* keep_aspect_ratio_policy's one scale, when it applies */
  int d;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  if (io->in[3] && p->policy != ODLA_EXT_RESIZE_STRETCH) {
    /* One scale for the masked axes: the smallest (largest) sizes / in among them. */
    for (d = 0; d < p->rank; ++d)
      if (p->aspect_mask & (1u << d)) {
        double s = (double)ref_get_int(p->sizes_type, io->in[3], d) / (double)p->in_dims[d];
        if (aspect < 0 || (p->policy == ODLA_EXT_RESIZE_NOT_LARGER ? s < aspect : s > aspect))
          aspect = s;
      }
  }
  for (d = 0; d < p->rank; ++d) {
    int64_t in = p->in_dims[d], out = p->out_dims[d];
    double start = 0, end = 1, scale = (double)out / (double)in;
    if (io->in[1]) {
      start = ref_get(p->roi_type, io->in[1], d);
      end = ref_get(p->roi_type, io->in[1], d + p->rank);
    }
    if (io->in[2]) { /* the shape is floor(in * scale), tf_crop_and_resize's too */
      scale = ref_get(p->scales_type, io->in[2], d);
      if (!(scale > 0) || floor((double)in * scale) != (double)out)
        return ODLA_INVALID_PARAM; /* the scales give another shape */
    }
    if (aspect >= 0) {
      int masked = (p->aspect_mask & (1u << d)) != 0;
      scale = masked ? aspect : 1;
      /* Compared as doubles (out < 2^48 is exact): sizes far beyond the planned shape, or an
       * empty axis's infinite or undefined scale, never become an integer. */
      if ((masked ? floor(aspect * (double)in + 0.5) : (double)in) != (double)out)
        return ODLA_INVALID_PARAM; /* the sizes give another shape */
    } else if (io->in[3] && ref_get_int(p->sizes_type, io->in[3], d) != out) {
      return ODLA_INVALID_PARAM; /* the sizes give another shape */
    }
    if (!(ref_resize_tap_count(p, scale) <= p->max_taps[d]))
      return ODLA_INVALID_PARAM; /* scales far below out / in: wider filters than planned */
    mem += ref_resize_axis_table(p, d, scale, start, end, mem, &ax[d]);
  }
  ref_resize_compute(p, ax, io->in[0], io->out[0]);
  return ODLA_SUCCESS;
}

static int ref_resize_vector(const char *op, const char *what, odla_value v, int64_t n,
                             int want_float) {
  char s1[128];
  int ok = want_float ? ref_is_float(v->type.element_type)
                      : v->type.element_type == ODLA_INT32 || v->type.element_type == ODLA_INT64;
  if (!ok) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "%s must be %s, got %s", what,
             want_float ? "a float type" : "int32 or int64", ref_type_name(v->type.element_type));
    return 0;
  }
  if (v->type.shape.size != 1 || v->type.shape.dims[0] != n) {
    ref_fail(ODLA_INVALID_PARAM, op, "%s %s must be a vector of %lld entries", what,
             ref_shape_str(&v->type.shape, s1, sizeof s1), (long long)n);
    return 0;
  }
  return 1;
}

/* The parameters of odla_ExtResize beyond the core ops'. */
typedef struct {
  double cubic_a, extrapolation;
  int exclude_outside, antialias, policy;
  unsigned aspect_mask;
} ref_resize_options;

static odla_value ref_resize_build(const char *op, odla_value input, odla_value roi,
                                   odla_value scales, odla_value sizes, int interp, int coord,
                                   int nearest, const ref_resize_options *opt,
                                   odla_value_shape output_dims, const odla_value_id value_id) {
  ref_resize_params p;
  odla_value in[4];
  odla_value_type out;
  ref_node *node;
  size_t scratch = 0;
  double taps;
  int d, rank, i;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = roi;
  in[2] = scales;
  in[3] = sizes;
  for (i = 0; i < 4; ++i)
    if ((i == 0 || in[i]) && !ref_check_operands(op, 1, &in[i]))
      return NULL;
  rank = input->type.shape.size;
  if (output_dims.size != rank)
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s must be defined, of rank %d",
                    output_dims.size < 0 ? "[?]" : ref_shape_str(&output_dims, s1, sizeof s1),
                    rank);
  if (interp != ODLA_NEAREST && interp != ODLA_LINEAR && interp != ODLA_CUBIC)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown interpolation %d", interp);
  if (coord < ODLA_EXT_RESIZE_HALF_PIXEL || coord > ODLA_EXT_RESIZE_HALF_PIXEL_SYMMETRIC)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown coordinate mode %d", coord);
  if (nearest < ODLA_EXT_NEAREST_ROUND_PREFER_FLOOR || nearest > ODLA_EXT_NEAREST_CEIL)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown nearest mode %d", nearest);
  if (ref_elem_size(input->type.element_type) == 0 ||
      (interp != ODLA_NEAREST && !ref_is_float(input->type.element_type) &&
       !ref_is_int(input->type.element_type)))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "%s interpolation of %s is not supported",
                    interp == ODLA_LINEAR  ? "linear"
                    : interp == ODLA_CUBIC ? "cubic"
                                           : "nearest",
                    ref_type_name(input->type.element_type));
  if (scales && sizes)
    return ref_fail(ODLA_INVALID_PARAM, op, "give scales or sizes, not both");
  if (opt->policy < ODLA_EXT_RESIZE_STRETCH || opt->policy > ODLA_EXT_RESIZE_NOT_SMALLER ||
      (opt->policy != ODLA_EXT_RESIZE_STRETCH && !sizes))
    return ref_fail(ODLA_INVALID_PARAM, op, "aspect policy %d %s", opt->policy,
                    sizes ? "is unknown" : "needs sizes");
  if ((roi && !ref_resize_vector(op, "roi", roi, 2 * (int64_t)rank, 1)) ||
      (scales && !ref_resize_vector(op, "scales", scales, rank, 1)) ||
      (sizes && !ref_resize_vector(op, "sizes", sizes, rank, 0)))
    return NULL;
  memset(&p, 0, sizeof p);
  p.rank = rank;
  p.interp = interp;
  p.coord = coord;
  p.nearest = nearest;
  p.cubic_a = opt->cubic_a;
  p.exclude_outside = opt->exclude_outside != 0;
  p.antialias = opt->antialias != 0;
  p.policy = opt->policy;
  p.aspect_mask = opt->aspect_mask;
  p.extrapolation = opt->extrapolation;
  for (d = 0; d < rank; ++d) {
    int64_t in = input->type.shape.dims[d], out = output_dims.dims[d];
    if (out < 0 || (out > 0 && in == 0))
      return ref_fail(ODLA_INVALID_PARAM, op, "cannot resize %s to %s",
                      ref_shape_str(&input->type.shape, s1, sizeof s1),
                      ref_shape_str(&output_dims, s2, sizeof s2));
    p.in_dims[d] = in;
    p.out_dims[d] = out;
    /* The smallest scale that still gives `out` (floor(in * s) or floor(in * s + 0.5)) has
     * the widest filter. */
    taps = out > 0 ? ref_resize_tap_count(&p, ((double)out - 0.5) / (double)in) : 1;
    if (taps > INT_MAX) /* antialiasing: about 4 * in / out taps */
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "axis %d: an antialiased filter from %lld to %lld elements needs %.0f "
                      "taps, more than 2^31",
                      d, (long long)in, (long long)out, taps);
    p.max_taps[d] = (int)taps;
    scratch += ref_resize_table_bytes(out, p.max_taps[d]);
  }
  p.type = input->type.element_type;
  p.roi_type = roi ? roi->type.element_type : ODLA_FLOAT32;
  p.scales_type = scales ? scales->type.element_type : ODLA_FLOAT32;
  p.sizes_type = sizes ? sizes->type.element_type : ODLA_INT64;
  p.elem = ref_elem_size(p.type);
  out.element_type = p.type;
  out.shape = output_dims;
  node = ref_add_node(op, ref_resize_run, 4, in, 1, &out, &value_id, &p, sizeof p);
  if (!node)
    return NULL;
  node->scratch_bytes = scratch;
  return node->outputs[0];
}

/* What the core ops leave to the defaults (see the top). */
static const ref_resize_options ref_resize_core = {-0.75, 0.0, 0, 0, ODLA_EXT_RESIZE_STRETCH, 0};

/* The coordinate mode and nearest rounding the core enums stand for (see the top). */
static int ref_resize_core_modes(const char *op, odla_resize_coordinate_mode mode, int *coord,
                                 int *nearest) {
  switch (mode) {
  case ODLA_ASSYMMETRIC:
    *coord = ODLA_EXT_RESIZE_ASYMMETRIC;
    *nearest = ODLA_EXT_NEAREST_FLOOR;
    return 1;
  case ODLA_HALF_PIXEL:
    *coord = ODLA_EXT_RESIZE_HALF_PIXEL;
    *nearest = ODLA_EXT_NEAREST_ROUND_PREFER_FLOOR;
    return 1;
  case ODLA_HALF_PIXEL_TF:
    *coord = ODLA_EXT_RESIZE_TF_HALF_PIXEL_FOR_NN;
    *nearest = ODLA_EXT_NEAREST_FLOOR;
    return 1;
  case ODLA_ALIGN_CORNERS:
    *coord = ODLA_EXT_RESIZE_ALIGN_CORNERS;
    *nearest = ODLA_EXT_NEAREST_ROUND_PREFER_FLOOR;
    return 1;
  default:
    ref_fail(ODLA_INVALID_PARAM, op, "unknown coordinate mode %d", (int)mode);
    return 0;
  }
}

/* Resizes the axes in axes_mask (bit 0: the innermost axis) to output_dims, which must be
 * defined; the other axes keep their extent. Each axis' scale is out / in. */
odla_value odla_Resize(odla_value input, odla_interpolation_mode interpolation,
                       odla_resize_coordinate_mode mode, odla_uint32 axes_mask,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  int coord, nearest, d, rank;
  char s1[128], s2[128];
  if (!ref_check_operands("Resize", 1, &input) ||
      !ref_resize_core_modes("Resize", mode, &coord, &nearest))
    return NULL;
  rank = input->type.shape.size;
  for (d = 0; d < rank && output_dims.size == rank; ++d)
    if (!(axes_mask & (1u << (rank - 1 - d))) && output_dims.dims[d] != input->type.shape.dims[d])
      return ref_fail(ODLA_INVALID_PARAM, "Resize",
                      "axis %d of %s is not in axes_mask 0x%x but output_dims are %s", d,
                      ref_shape_str(&input->type.shape, s1, sizeof s1), axes_mask,
                      ref_shape_str(&output_dims, s2, sizeof s2));
  return ref_resize_build("Resize", input, NULL, NULL, NULL, interpolation, coord, nearest,
                          &ref_resize_core, output_dims, value_id);
}

/* Resizes to output_dims (which must be defined) with scales (a float vector, one entry per
 * axis) or sizes (an int32 or int64 vector) read at run time, exactly one of them given:
 * execution fails when they describe another shape (floor(in * scale) for scales). */
odla_value odla_ResizeDynamic(odla_value input, odla_value scales, odla_value sizes,
                              odla_interpolation_mode interpolation,
                              odla_resize_coordinate_mode mode, odla_value_shape output_dims,
                              const odla_value_id value_id) {
  int coord, nearest;
  if (!scales && !sizes)
    return ref_fail(ODLA_INVALID_PARAM, "ResizeDynamic", "needs scales or sizes");
  if (!ref_resize_core_modes("ResizeDynamic", mode, &coord, &nearest))
    return NULL;
  return ref_resize_build("ResizeDynamic", input, NULL, scales, sizes, interpolation, coord,
                          nearest, &ref_resize_core, output_dims, value_id);
}

odla_value odla_ExtResize(odla_value input, odla_value roi, odla_value scales, odla_value sizes,
                          odla_interpolation_mode interpolation, odla_int32 coordinate_mode,
                          odla_int32 nearest_mode, odla_float32 cubic_coeff_a,
                          odla_bool exclude_outside, odla_float32 extrapolation_value,
                          odla_bool antialias, odla_int32 aspect_policy,
                          odla_uint32 aspect_axes_mask, odla_value_shape output_dims,
                          const odla_value_id value_id) {
  ref_resize_options opt;
  opt.cubic_a = cubic_coeff_a;
  opt.extrapolation = extrapolation_value;
  opt.exclude_outside = exclude_outside != 0;
  opt.antialias = antialias != 0;
  opt.policy = aspect_policy;
  opt.aspect_mask = aspect_axes_mask;
  return ref_resize_build("ExtResize", input, roi, scales, sizes, interpolation, coordinate_mode,
                          nearest_mode, &opt, output_dims, value_id);
}
