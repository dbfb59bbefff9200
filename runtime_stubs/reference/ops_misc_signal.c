/* ops_misc_signal.c: sampling and signal-processing extensions of the reference backend:
 * odla_ExtGridSample, odla_ExtAffineGrid, odla_ExtWindow, odla_ExtDFT, odla_ExtSTFT and
 * odla_ExtMelWeightMatrix (odla_ext_misc.h). Everything computes in double.
 *
 * The transforms are direct sums over a table of the L-th roots of unity (index k * n mod L,
 * so every twiddle is exact to the last bit of cos/sin): O(L) per result element, which is
 * what audio front ends with a few hundred bins need; the table lives in the node's scratch. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static odla_value ref_signal_conflict(const char *op, const odla_value_shape *given,
                                      const odla_value_shape *computed) {
  char s1[128], s2[128];
  return ref_fail(ODLA_INVALID_PARAM, op, "output dims %s differ from the computed %s",
                  ref_shape_str(given, s1, sizeof s1), ref_shape_str(computed, s2, sizeof s2));
}

/* Whether v is absent (when optional) or one element of an integer (want_int) or float type. */
static int ref_signal_scalar(const char *op, odla_value v, const char *what, int want_int) {
  char s[128];
  if (!v)
    return 1;
  if (!ref_check_operands(op, 1, &v))
    return 0;
  if (ref_count(&v->type.shape) != 1 ||
      !(want_int ? ref_is_int(v->type.element_type) : ref_is_float(v->type.element_type))) {
    ref_fail(ODLA_INVALID_PARAM, op, "%s must be one element of %s type, got %s %s", what,
             want_int ? "an integer" : "a float", ref_type_name(v->type.element_type),
             ref_shape_str(&v->type.shape, s, sizeof s));
    return 0;
  }
  return 1;
}

/* ---- ExtGridSample ------------------------------------------------------------------------ */

/* Up to REF_GRID_MAX_SPATIAL sampled axes: 1-D signals, 2-D images, 3-D volumes (GridSample-20
 * samples any number of axes; a bicubic volume reads 4^3 = 64 taps per result). */
#define REF_GRID_MAX_SPATIAL 3

typedef struct {
  int64_t n, c, sd;                  /* batch, channels, sampled axes */
  int64_t in[REF_GRID_MAX_SPATIAL];  /* the input's sampled dims, outermost first */
  int64_t out[REF_GRID_MAX_SPATIAL]; /* the result's */
  int mode, padding, align;
  odla_element_type type, grid_type;
} ref_grid_params;

/* Reflects x into [lo, hi] (ONNX Runtime's GsReflect). */
static double ref_grid_reflect(double x, double lo, double hi) {
  double range = hi - lo, d, r;
  int64_t flips;
  if (range <= 0)
    return lo;
  if (x < lo) {
    d = lo - x;
    flips = (int64_t)(d / range);
    r = d - (double)flips * range;
    return flips % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    d = x - hi;
    flips = (int64_t)(d / range);
    r = d - (double)flips * range;
    return flips % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

/* Element `idx` (one index per sampled axis) of one plane, with padding_mode deciding what lies
 * outside. */
static double ref_grid_pixel(const ref_grid_params *p, const void *x, int64_t base,
                             const int64_t *idx) {
  int64_t k, off = 0;
  for (k = 0; k < p->sd; ++k) {
    int64_t i = idx[k], len = p->in[k];
    if (p->padding == ODLA_EXT_GRID_PAD_ZEROS) {
      if (i < 0 || i >= len)
        return 0.0;
    } else {
      if (p->padding == ODLA_EXT_GRID_PAD_REFLECTION) {
        double lo = p->align ? 0.0 : -0.5;
        i = (int64_t)ref_grid_reflect((double)i, lo, (double)(len - 1) - lo);
      }
      i = i < 0 ? 0 : (i >= len ? len - 1 : i);
    }
    off = off * len + i;
  }
  return ref_get(p->type, x, base + off);
}

/* Cubic convolution weights for a point at fraction t past the second of four pixels. */
static void ref_grid_cubic(double t, double *c) {
  const double a = -0.75;
  double x = t + 1;
  c[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  x = t;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  x = 1 - t;
  c[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
  x = 2 - t;
  c[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* The interpolation at pixel coordinates f (one per sampled axis): a separable sum over 1
 * (nearest), 2 (linear) or 4 (cubic) taps per axis. */
static double ref_grid_sample(const ref_grid_params *p, const void *x, int64_t base,
                              const double *f) {
  int64_t first[REF_GRID_MAX_SPATIAL], tap[REF_GRID_MAX_SPATIAL], idx[REF_GRID_MAX_SPATIAL];
  double w[REF_GRID_MAX_SPATIAL][4], sum = 0;
  int taps = p->mode == ODLA_EXT_GRID_NEAREST ? 1 : p->mode == ODLA_EXT_GRID_BILINEAR ? 2 : 4;
  int64_t k;
  for (k = 0; k < p->sd; ++k) {
    double fl = floor(f[k]);
    tap[k] = 0;
    if (p->mode == ODLA_EXT_GRID_NEAREST) {
      first[k] = (int64_t)nearbyint(f[k]);
      w[k][0] = 1;
    } else if (p->mode == ODLA_EXT_GRID_BILINEAR) {
      first[k] = (int64_t)fl;
      w[k][0] = 1 - (f[k] - fl);
      w[k][1] = f[k] - fl;
    } else {
      first[k] = (int64_t)fl - 1;
      ref_grid_cubic(f[k] - fl, w[k]);
    }
  }
  for (;;) { /* every combination of taps, the last axis fastest */
    double weight = 1;
    for (k = 0; k < p->sd; ++k) {
      idx[k] = first[k] + tap[k];
      weight *= w[k][tap[k]];
    }
    sum += weight * ref_grid_pixel(p, x, base, idx);
    for (k = p->sd - 1; k >= 0 && ++tap[k] == taps; --k)
      tap[k] = 0;
    if (k < 0)
      return sum;
  }
}

/* Maps a normalized grid coordinate to a pixel coordinate of an axis of `len` pixels, then
 * applies BORDER or REFLECTION to a coordinate outside the axis' extent [lo, hi] (ONNX's
 * reference): BORDER clamps it to [0, len - 1]. Inside the extent but outside [0, len - 1]
 * (align_corners = 0) the coordinate stays and each tap is clamped (ref_grid_pixel), which
 * differs from clamping the coordinate only for the cubic filter. */
static double ref_grid_coord(const ref_grid_params *p, double g, int64_t len) {
  double v = p->align ? (g + 1) / 2 * (double)(len - 1) : ((g + 1) * (double)len - 1) / 2;
  double lo = p->align ? 0.0 : -0.5, hi = (double)(len - 1) - lo;
  if (p->padding == ODLA_EXT_GRID_PAD_BORDER && (v < lo || v > hi))
    v = v < lo ? 0 : (double)(len - 1);
  else if (p->padding == ODLA_EXT_GRID_PAD_REFLECTION)
    v = ref_grid_reflect(v, lo, hi);
  return v;
}

static odla_status ref_grid_run(const ref_node *node, const ref_io *io) {
  const ref_grid_params *p = (const ref_grid_params *)node->params;
  int64_t in_plane = 1, out_plane = 1, b, o, ch, k;
  for (k = 0; k < p->sd; ++k) {
    in_plane *= p->in[k];
    out_plane *= p->out[k];
  }
  for (b = 0; b < p->n; ++b)
    for (o = 0; o < out_plane; ++o) {
      /* The grid's last axis holds the coordinates innermost axis first: (x, y, z). */
      int64_t g = (b * out_plane + o) * p->sd;
      double f[REF_GRID_MAX_SPATIAL];
      for (k = 0; k < p->sd; ++k)
        f[k] = ref_grid_coord(p, ref_get(p->grid_type, io->in[1], g + p->sd - 1 - k), p->in[k]);
      for (ch = 0; ch < p->c; ++ch)
        ref_set(p->type, io->out[0], (b * p->c + ch) * out_plane + o,
                ref_grid_sample(p, io->in[0], (b * p->c + ch) * in_plane, f));
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtGridSample(odla_value input, odla_value grid, odla_int32 mode,
                              odla_int32 padding_mode, odla_bool align_corners,
                              const odla_value_id value_id) {
  const char *op = "ExtGridSample";
  ref_grid_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *xs, *gs;
  char s1[128], s2[128];
  int64_t k;
  in[0] = input;
  in[1] = grid;
  if (!ref_check_operands(op, 2, in))
    return NULL;
  xs = &input->type.shape;
  gs = &grid->type.shape;
  if (!ref_is_float(input->type.element_type) && !ref_is_int(input->type.element_type) &&
      input->type.element_type != ODLA_BOOL)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "input must be of a numeric or bool type, got "
                    "%s",
                    ref_type_name(input->type.element_type));
  if (!ref_is_float(grid->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "grid must be of a float type, got %s",
                    ref_type_name(grid->type.element_type));
  if (xs->size < 3 || xs->size > 2 + REF_GRID_MAX_SPATIAL || gs->size != xs->size ||
      gs->dims[0] != xs->dims[0] || gs->dims[gs->size - 1] != xs->size - 2)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "input %s must be [N, C, D1, ..., Dr] (r from 1 to %d) and grid %s "
                    "[N, O1, ..., Or, r]",
                    ref_shape_str(xs, s1, sizeof s1), REF_GRID_MAX_SPATIAL,
                    ref_shape_str(gs, s2, sizeof s2));
  if (mode < ODLA_EXT_GRID_BILINEAR || mode > ODLA_EXT_GRID_BICUBIC ||
      padding_mode < ODLA_EXT_GRID_PAD_ZEROS || padding_mode > ODLA_EXT_GRID_PAD_REFLECTION)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown mode %d or padding mode %d", mode,
                    padding_mode);
  memset(&p, 0, sizeof p);
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.sd = xs->size - 2;
  out.element_type = input->type.element_type;
  out.shape.size = xs->size;
  out.shape.dims[0] = p.n;
  out.shape.dims[1] = p.c;
  for (k = 0; k < p.sd; ++k) {
    p.in[k] = xs->dims[2 + k];
    p.out[k] = gs->dims[1 + k];
    out.shape.dims[2 + k] = p.out[k];
    if (p.in[k] < 1)
      return ref_fail(ODLA_INVALID_PARAM, op, "input %s has no elements to sample",
                      ref_shape_str(xs, s1, sizeof s1));
  }
  p.mode = mode;
  p.padding = padding_mode;
  p.align = align_corners != 0;
  p.type = input->type.element_type;
  p.grid_type = grid->type.element_type;
  return ref_add_op(op, ref_grid_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- ExtAffineGrid ------------------------------------------------------------------------ */

typedef struct {
  int64_t n, r;                       /* batch, axes */
  int64_t dims[REF_GRID_MAX_SPATIAL]; /* D1, ..., Dr */
  int align;
  odla_element_type type;
} ref_affine_params;

/* The normalized coordinate of index i of an axis of len points. */
static double ref_affine_coord(int align, int64_t i, int64_t len) {
  if (align)
    return len == 1 ? -1.0 : -1.0 + 2.0 * (double)i / (double)(len - 1);
  return -1.0 + (2.0 * (double)i + 1.0) / (double)len;
}

static odla_status ref_affine_run(const ref_node *node, const ref_io *io) {
  const ref_affine_params *p = (const ref_affine_params *)node->params;
  const odla_value size = node->inputs[1];
  int64_t points = 1, b, o, k, j;
  if (ref_get_int(size->type.element_type, io->in[1], 0) != p->n)
    return ODLA_INVALID_PARAM; /* size differs from the shape the result was built with */
  for (k = 0; k < p->r; ++k) {
    if (ref_get_int(size->type.element_type, io->in[1], 2 + k) != p->dims[k])
      return ODLA_INVALID_PARAM;
    points *= p->dims[k];
  }
  for (b = 0; b < p->n; ++b)
    for (o = 0; o < points; ++o) {
      double h[REF_GRID_MAX_SPATIAL + 1]; /* (x, y[, z], 1) */
      int64_t rest = o;
      for (k = p->r - 1; k >= 0; --k) { /* h[0] belongs to the innermost axis */
        h[p->r - 1 - k] = ref_affine_coord(p->align, rest % p->dims[k], p->dims[k]);
        rest /= p->dims[k];
      }
      h[p->r] = 1.0;
      for (k = 0; k < p->r; ++k) {
        double v = 0;
        for (j = 0; j <= p->r; ++j)
          v += ref_get(p->type, io->in[0], (b * p->r + k) * (p->r + 1) + j) * h[j];
        ref_set(p->type, io->out[0], (b * points + o) * p->r + k, v);
      }
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtAffineGrid(odla_value theta, odla_value size, odla_bool align_corners,
                              odla_value_shape output_dims, const odla_value_id value_id) {
  const char *op = "ExtAffineGrid";
  ref_affine_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *ts;
  char s1[128], s2[128];
  int64_t k;
  in[0] = theta;
  in[1] = size;
  if (!ref_check_operands(op, 2, in))
    return NULL;
  ts = &theta->type.shape;
  if (!ref_is_float(theta->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "theta must be of a float type, got %s",
                    ref_type_name(theta->type.element_type));
  if (ts->size != 3 || (ts->dims[1] != 2 && ts->dims[1] != 3) || ts->dims[2] != ts->dims[1] + 1 ||
      output_dims.size != ts->dims[1] + 2 || output_dims.dims[0] != ts->dims[0] ||
      output_dims.dims[output_dims.size - 1] != ts->dims[1])
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "theta %s must be [N, r, r + 1] (r = 2 or 3) and the result %s "
                    "[N, D1, ..., Dr, r]",
                    ref_shape_str(ts, s1, sizeof s1), ref_shape_str(&output_dims, s2, sizeof s2));
  if (size->type.element_type != ODLA_INT64 || size->type.shape.size != 1 ||
      size->type.shape.dims[0] != output_dims.size)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "size must be an int64 vector of %d elements, got %s %s", (int)output_dims.size,
                    ref_type_name(size->type.element_type),
                    ref_shape_str(&size->type.shape, s1, sizeof s1));
  memset(&p, 0, sizeof p);
  p.n = ts->dims[0];
  p.r = ts->dims[1];
  for (k = 0; k < p.r; ++k) {
    p.dims[k] = output_dims.dims[1 + k];
    if (p.dims[k] < 0)
      return ref_fail(ODLA_INVALID_PARAM, op, "the result %s has a negative dim",
                      ref_shape_str(&output_dims, s1, sizeof s1));
  }
  p.align = align_corners != 0;
  p.type = theta->type.element_type;
  out.element_type = p.type;
  out.shape = output_dims;
  return ref_add_op(op, ref_affine_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- ExtWindow ------------------------------------------------------------------------------ */

typedef struct {
  int64_t n;
  int window, periodic;
  odla_element_type type;
} ref_window_params;

static odla_status ref_window_run(const ref_node *node, const ref_io *io) {
  const ref_window_params *p = (const ref_window_params *)node->params;
  static const double a[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};
  const double *c = a[p->window];
  double len = (double)(p->periodic ? p->n : p->n - 1);
  int64_t i;
  if (ref_get_int(node->inputs[0]->type.element_type, io->in[0], 0) != p->n)
    return ODLA_INVALID_PARAM; /* size differs from the length the result was built with */
  for (i = 0; i < p->n; ++i) {
    double v = 1.0; /* a symmetric window of one element */
    if (len > 0) {
      double t = 2 * M_PI * (double)i / len;
      v = c[0] - c[1] * cos(t) + c[2] * cos(2 * t);
    }
    ref_set(p->type, io->out[0], i, v);
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtWindow(odla_value size, odla_int32 window, odla_bool periodic,
                          odla_value_type output_value_type, const odla_value_id value_id) {
  const char *op = "ExtWindow";
  ref_window_params p;
  char s[128];
  if (!ref_check_operands(op, 1, &size) || !ref_signal_scalar(op, size, "size", 1))
    return NULL;
  if (window < ODLA_EXT_WINDOW_HANN || window > ODLA_EXT_WINDOW_BLACKMAN)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown window %d", window);
  if (output_value_type.shape.size != 1 || output_value_type.shape.dims[0] < 0 ||
      !(ref_is_float(output_value_type.element_type) || ref_is_int(output_value_type.element_type)))
    return ref_fail(ODLA_INVALID_PARAM, op, "the result type must be a numeric vector, got %s %s",
                    ref_type_name(output_value_type.element_type),
                    ref_shape_str(&output_value_type.shape, s, sizeof s));
  memset(&p, 0, sizeof p);
  p.n = output_value_type.shape.dims[0];
  p.window = window;
  p.periodic = periodic != 0;
  p.type = output_value_type.element_type;
  return ref_add_op(op, ref_window_run, 1, &size, output_value_type, value_id, &p, sizeof p);
}

/* ---- Direct DFT of one line ---------------------------------------------------------------- */

/* Fills the table of e^(-2 pi i j / len), j < len: cosines then sines. */
static void ref_roots(int64_t len, double *tab) {
  int64_t j;
  for (j = 0; j < len; ++j) {
    double t = 2 * M_PI * (double)j / (double)len;
    tab[j] = cos(t);
    tab[len + j] = sin(t);
  }
}

/* X[k] for k < bins of the line (re, im) of length len; `sign` -1 forward, +1 inverse. */
static void ref_dft_line(const double *re, const double *im, int64_t len, const double *tab,
                         double sign, int64_t bins, double *out_re, double *out_im) {
  int64_t k, n;
  for (k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    int64_t j = 0; /* k * n mod len */
    for (n = 0; n < len; ++n) {
      double c = tab[j], s = sign * tab[len + j];
      sr += re[n] * c - im[n] * s;
      si += re[n] * s + im[n] * c;
      j += k;
      if (j >= len)
        j %= len;
    }
    out_re[k] = sr;
    out_im[k] = si;
  }
}

/* ---- ExtDFT -----------------------------------------------------------------------------------
 */

/* A run-time axis (axis_value) may be any axis that gives the result shape: the builder checks
 * that one does and sizes the scratch for the longest; the kernel takes the geometry of the
 * axis it reads from the operand and result shapes. */
typedef struct {
  int axis; /* the transform axis, from 0; -1: axis_value's when the kernel runs */
  int comps, inverse, onesided;
  int64_t max_len; /* the longest transform the scratch holds */
  odla_element_type type;
} ref_dft_params;

/* The inverse of a one-sided spectrum (numpy's irfft): a real result of length L. */
static int ref_dft_irfft(const ref_dft_params *p) { return p->inverse && p->onesided; }

/* The length of the transform along an axis of extent n without dft_length. */
static int64_t ref_dft_default_len(const ref_dft_params *p, int64_t n) {
  return ref_dft_irfft(p) ? 2 * (n - 1) : n;
}

/* The result's extent along the axis for a transform of length len. */
static int64_t ref_dft_extent(const ref_dft_params *p, int64_t len) {
  return p->onesided && !p->inverse ? len / 2 + 1 : len;
}

/* The result of a transform of xs along `axis` (from 0) with `extent` entries there, in *out. */
static void ref_dft_result(const ref_dft_params *p, const odla_value_shape *xs, int axis,
                           int64_t extent, odla_value_shape *out) {
  *out = ref_shape_copy(xs);
  out->dims[axis] = extent;
  out->dims[xs->size - 1] = ref_dft_irfft(p) ? 1 : 2;
}

/* Whether the transform along `axis` (from 0) gives `dims`, with a length of dft_length (then
 * any extent of at least 1 along axis fits) or the default. */
static int ref_dft_fits(const ref_dft_params *p, const odla_value_shape *xs, int axis,
                        int has_length, const odla_value_shape *dims) {
  odla_value_shape want;
  int64_t extent = dims->dims[axis];
  if (extent < 1 ||
      (!has_length && ref_dft_extent(p, ref_dft_default_len(p, xs->dims[axis])) != extent))
    return 0;
  ref_dft_result(p, xs, axis, extent, &want);
  return !ref_shape_conflicts(dims, &want);
}

/* Completes the line (re, im) of length len, whose first nb bins hold a one-sided spectrum
 * and the rest zeros, into the Hermitian spectrum numpy's irfft transforms (nb <= len / 2 + 1,
 * so no mirrored bin lands on a given one). Bin 0 and, for an even len, bin len / 2 are their
 * own mirrors: their imaginary parts reach only the imaginary part of the result, which is
 * dropped, so they are ignored as numpy ignores them. */
static void ref_dft_mirror(double *re, double *im, int64_t len, int64_t nb) {
  int64_t k;
  for (k = 1; k < nb && 2 * k != len; ++k) {
    re[len - k] = re[k];
    im[len - k] = -im[k];
  }
}

static odla_status ref_dft_run(const ref_node *node, const ref_io *io) {
  const ref_dft_params *p = (const ref_dft_params *)node->params;
  const odla_value_shape *xs = &node->inputs[0]->type.shape, *ys = &node->outputs[0]->type.shape;
  int irfft = ref_dft_irfft(p), rank = xs->size, axis = p->axis, d;
  double *tab = (double *)io->scratch, *re, *im, *ore, *oim;
  int64_t len, in_len, bins, nb, outer = 1, inner = 1, o, i, n, k;
  if (io->in[2]) {
    int64_t a = ref_get_int(node->inputs[2]->type.element_type, io->in[2], 0);
    if (a < 0)
      a += rank;
    if (a < 0 || a > rank - 2 || !ref_dft_fits(p, xs, (int)a, 1, ys))
      return ODLA_INVALID_PARAM; /* the axis is out of range or gives another result shape */
    axis = (int)a;
  }
  in_len = xs->dims[axis];
  bins = ys->dims[axis];
  len = io->in[1] ? ref_get_int(node->inputs[1]->type.element_type, io->in[1], 0)
                  : ref_dft_default_len(p, in_len);
  if (len < 1 || len > p->max_len || ref_dft_extent(p, len) != bins)
    return ODLA_INVALID_PARAM; /* dft_length differs from the length the result was built for */
  for (d = 0; d < axis; ++d)
    outer *= xs->dims[d];
  for (d = axis + 1; d < rank - 1; ++d)
    inner *= xs->dims[d];
  /* The spectrum's bins an irfft reads; a forward transform reads the signal's first len. */
  nb = irfft ? (in_len < len / 2 + 1 ? in_len : len / 2 + 1) : (in_len < len ? in_len : len);
  re = tab + 2 * len;
  im = re + len;
  ore = im + len;
  oim = ore + bins;
  ref_roots(len, tab);
  for (o = 0; o < outer; ++o)
    for (i = 0; i < inner; ++i) {
      for (n = 0; n < len; ++n) {
        int64_t at = ((o * in_len + n) * inner + i) * p->comps;
        re[n] = n < nb ? ref_get(p->type, io->in[0], at) : 0.0;
        im[n] = n < nb && p->comps == 2 ? ref_get(p->type, io->in[0], at + 1) : 0.0;
      }
      if (irfft)
        ref_dft_mirror(re, im, len, nb);
      ref_dft_line(re, im, len, tab, p->inverse ? 1.0 : -1.0, bins, ore, oim);
      for (k = 0; k < bins; ++k) {
        int64_t at = ((o * bins + k) * inner + i) * (irfft ? 1 : 2);
        double scale = p->inverse ? 1.0 / (double)len : 1.0;
        ref_set(p->type, io->out[0], at, ore[k] * scale);
        if (!irfft) /* an irfft's imaginary parts are 0 up to round-off: the result is real */
          ref_set(p->type, io->out[0], at + 1, oim[k] * scale);
      }
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtDFT(odla_value input, odla_value dft_length, odla_value axis_value,
                       odla_int32 axis, odla_bool inverse, odla_bool onesided,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  const char *op = "ExtDFT";
  ref_dft_params p;
  odla_value in[3];
  odla_value_type out;
  const odla_value_shape *xs;
  char s1[128], s2[128];
  int a, rank, fitting = 0;
  int64_t max_bins = 0;
  in[0] = input;
  in[1] = dft_length;
  in[2] = axis_value;
  if (!ref_check_operands(op, 1, in) || !ref_signal_scalar(op, dft_length, "dft_length", 1) ||
      !ref_signal_scalar(op, axis_value, "axis", 1))
    return NULL;
  xs = &input->type.shape;
  rank = xs->size;
  if (!ref_is_float(input->type.element_type) || rank < 2 ||
      (xs->dims[rank - 1] != 1 && xs->dims[rank - 1] != 2))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "input must be of a float type with a last dim of 1 "
                    "or 2, got %s %s",
                    ref_type_name(input->type.element_type), ref_shape_str(xs, s1, sizeof s1));
  if (output_dims.size != rank)
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s must be defined for input %s",
                    ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.comps = (int)xs->dims[rank - 1];
  p.inverse = inverse != 0;
  p.onesided = onesided != 0;
  p.type = input->type.element_type;
  p.axis = -1;
  if (!axis_value) {
    odla_value_shape want;
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank - 1)
      return ref_fail(ODLA_INVALID_PARAM, op, "axis %d must be a signal axis of %s (not the last)",
                      axis, ref_shape_str(xs, s1, sizeof s1));
    if (output_dims.dims[axis] < 1)
      return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s must be defined for input %s",
                      ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
    ref_dft_result(&p, xs, axis, output_dims.dims[axis], &want);
    if (ref_shape_conflicts(&output_dims, &want))
      return ref_signal_conflict(op, &output_dims, &want);
    if (!ref_dft_fits(&p, xs, axis, dft_length != NULL, &output_dims))
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "output_dims %s do not fit a transform of length "
                      "%lld",
                      ref_shape_str(&output_dims, s1, sizeof s1),
                      (long long)ref_dft_default_len(&p, xs->dims[axis]));
    p.axis = axis;
  }
  /* The longest transform an axis that fits can take: without dft_length its default, with
   * it at most 2 * bins - 1 for a one-sided forward transform, else the result's extent. */
  for (a = 0; a < rank - 1; ++a) {
    int64_t bins = output_dims.dims[a], len;
    if ((p.axis >= 0 && a != p.axis) || !ref_dft_fits(&p, xs, a, dft_length != NULL, &output_dims))
      continue;
    len = !dft_length                ? ref_dft_default_len(&p, xs->dims[a])
          : p.onesided && !p.inverse ? 2 * bins - 1
                                     : bins;
    fitting = 1;
    if (len > p.max_len)
      p.max_len = len;
    if (bins > max_bins)
      max_bins = bins;
  }
  if (!fitting)
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s fit no axis from 0 to %d of input %s%s",
                    ref_shape_str(&output_dims, s1, sizeof s1), rank - 2,
                    ref_shape_str(xs, s2, sizeof s2),
                    dft_length ? "" : " with the default dft_length");
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  {
    odla_value v = ref_add_op(op, ref_dft_run, 3, in, out, value_id, &p, sizeof p);
    if (v) /* roots (2 L), the line (2 L) and its bins (2 bins) */
      v->node->scratch_bytes = (size_t)(4 * p.max_len + 2 * max_bins) * sizeof(double);
    return v;
  }
}

/* ---- ExtSTFT ----------------------------------------------------------------------------------
 */

typedef struct {
  int64_t batch, sig_len, frames, bins, win_len; /* win_len: window's length, 0 if absent */
  int comps, onesided;
  odla_element_type type, window_type;
} ref_stft_params;

static odla_status ref_stft_run(const ref_node *node, const ref_io *io) {
  const ref_stft_params *p = (const ref_stft_params *)node->params;
  int64_t step = ref_get_int(node->inputs[1]->type.element_type, io->in[1], 0);
  int64_t len = p->win_len, b, f, n, k;
  double *tab = (double *)io->scratch, *re, *im, *ore, *oim;
  if (io->in[3]) {
    int64_t given = ref_get_int(node->inputs[3]->type.element_type, io->in[3], 0);
    if (len > 0 && given != len)
      return ODLA_INVALID_PARAM; /* frame_length differs from the window's length */
    len = given;
  }
  if (step < 1 || len < 1 || len > p->sig_len || (p->sig_len - len) / step + 1 != p->frames ||
      (p->onesided ? len / 2 + 1 : len) != p->bins)
    return ODLA_INVALID_PARAM; /* frame_step or frame_length imply another result shape */
  re = tab + 2 * len;
  im = re + len;
  ore = im + len;
  oim = ore + p->bins;
  ref_roots(len, tab);
  for (b = 0; b < p->batch; ++b)
    for (f = 0; f < p->frames; ++f) {
      for (n = 0; n < len; ++n) {
        int64_t at = (b * p->sig_len + f * step + n) * p->comps;
        double w = io->in[2] ? ref_get(p->window_type, io->in[2], n) : 1.0;
        re[n] = w * ref_get(p->type, io->in[0], at);
        im[n] = p->comps == 2 ? w * ref_get(p->type, io->in[0], at + 1) : 0.0;
      }
      ref_dft_line(re, im, len, tab, -1.0, p->bins, ore, oim);
      for (k = 0; k < p->bins; ++k) {
        int64_t at = ((b * p->frames + f) * p->bins + k) * 2;
        ref_set(p->type, io->out[0], at, ore[k]);
        ref_set(p->type, io->out[0], at + 1, oim[k]);
      }
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtSTFT(odla_value signal, odla_value frame_step, odla_value window,
                        odla_value frame_length, odla_bool onesided, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  const char *op = "ExtSTFT";
  ref_stft_params p;
  odla_value in[4];
  odla_value_type out;
  const odla_value_shape *xs;
  char s1[128], s2[128];
  in[0] = signal;
  in[1] = frame_step;
  in[2] = window;
  in[3] = frame_length;
  if (!ref_check_operands(op, 2, in) || !ref_signal_scalar(op, frame_step, "frame_step", 1) ||
      !ref_signal_scalar(op, frame_length, "frame_length", 1) ||
      (window && !ref_check_operands(op, 1, &window)))
    return NULL;
  xs = &signal->type.shape;
  if (!ref_is_float(signal->type.element_type) || xs->size != 3 ||
      (xs->dims[2] != 1 && xs->dims[2] != 2))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "signal must be of a float type, [batch, length, 1 "
                    "or 2], got %s %s",
                    ref_type_name(signal->type.element_type), ref_shape_str(xs, s1, sizeof s1));
  if (window && (!ref_is_float(window->type.element_type) || window->type.shape.size != 1 ||
                 window->type.shape.dims[0] < 1 || window->type.shape.dims[0] > xs->dims[1]))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "window must be a float vector of 1 to %lld "
                    "elements, got %s %s",
                    (long long)xs->dims[1], ref_type_name(window->type.element_type),
                    ref_shape_str(&window->type.shape, s1, sizeof s1));
  if (!window && !frame_length)
    return ref_fail(ODLA_INVALID_PARAM, op, "neither window nor frame_length is given");
  if (output_dims.size != 4 || output_dims.dims[1] < 1 || output_dims.dims[2] < 1)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "output_dims %s must be defined as [batch, frames, "
                    "bins, 2]",
                    ref_shape_str(&output_dims, s1, sizeof s1));
  out.element_type = signal->type.element_type;
  out.shape.size = 4;
  out.shape.dims[0] = xs->dims[0];
  out.shape.dims[1] = output_dims.dims[1];
  out.shape.dims[2] = output_dims.dims[2];
  out.shape.dims[3] = 2;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_signal_conflict(op, &output_dims, &out.shape);
  memset(&p, 0, sizeof p);
  p.batch = xs->dims[0];
  p.sig_len = xs->dims[1];
  p.frames = out.shape.dims[1];
  p.bins = out.shape.dims[2];
  p.win_len = window ? window->type.shape.dims[0] : 0;
  p.comps = (int)xs->dims[2];
  p.onesided = onesided != 0;
  p.type = signal->type.element_type;
  p.window_type = window ? window->type.element_type : ODLA_FLOAT32;
  if (window && (p.onesided ? p.win_len / 2 + 1 : p.win_len) != p.bins)
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s do not fit frames of window %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&window->type.shape, s2, sizeof s2));
  {
    odla_value v = ref_add_op(op, ref_stft_run, 4, in, out, value_id, &p, sizeof p);
    if (v) /* roots, the frame and its bins, for a frame of at most the signal's length */
      v->node->scratch_bytes = (size_t)(4 * p.sig_len + 2 * p.bins) * sizeof(double);
    return v;
  }
}

/* ---- ExtMelWeightMatrix ------------------------------------------------------------------ */

typedef struct {
  int64_t spectrum_bins, mel_bins;
  odla_element_type type;
} ref_mel_params;

static odla_status ref_mel_run(const ref_node *node, const ref_io *io) {
  const ref_mel_params *p = (const ref_mel_params *)node->params;
  const odla_value *in = node->inputs;
  int64_t mel_bins = ref_get_int(in[0]->type.element_type, io->in[0], 0);
  int64_t dft_length = ref_get_int(in[1]->type.element_type, io->in[1], 0);
  int64_t rate = ref_get_int(in[2]->type.element_type, io->in[2], 0);
  /* The band edges in mel are computed in float, as ONNX's reference does. */
  float lower = (float)ref_get(in[3]->type.element_type, io->in[3], 0);
  float upper = (float)ref_get(in[4]->type.element_type, io->in[4], 0);
  float low_mel = 2595.0f * log10f(1.0f + lower / 700.0f);
  float high_mel = 2595.0f * log10f(1.0f + upper / 700.0f);
  float step = (high_mel - low_mel) / (float)(mel_bins + 2);
  int64_t i, j, edges[3];
  if (mel_bins != p->mel_bins || dft_length < 1 || dft_length / 2 + 1 != p->spectrum_bins ||
      rate < 1)
    return ODLA_INVALID_PARAM; /* the operands imply another result shape */
  for (i = 0; i < p->spectrum_bins * p->mel_bins; ++i)
    ref_set(p->type, io->out[0], i, 0.0);
  for (i = 0; i < mel_bins; ++i) {
    for (j = 0; j < 3; ++j) {
      double mel = (double)(i + j) * (double)step + (double)low_mel;
      double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
      edges[j] = (int64_t)floor((double)(dft_length + 1) * hz / (double)rate);
    }
    if (edges[0] < 0 || edges[1] >= p->spectrum_bins || edges[2] > p->spectrum_bins)
      return ODLA_INVALID_PARAM; /* a band edge outside the spectrum */
    if (edges[1] == edges[0])
      ref_set(p->type, io->out[0], edges[1] * p->mel_bins + i, 1.0);
    else
      for (j = edges[0]; j <= edges[1]; ++j)
        ref_set(p->type, io->out[0], j * p->mel_bins + i,
                (double)(j - edges[0]) / (double)(edges[1] - edges[0]));
    for (j = edges[1]; j < edges[2]; ++j)
      ref_set(p->type, io->out[0], j * p->mel_bins + i,
              (double)(edges[2] - j) / (double)(edges[2] - edges[1]));
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtMelWeightMatrix(odla_value num_mel_bins, odla_value dft_length,
                                   odla_value sample_rate, odla_value lower_edge_hertz,
                                   odla_value upper_edge_hertz, odla_value_type output_value_type,
                                   const odla_value_id value_id) {
  const char *op = "ExtMelWeightMatrix";
  ref_mel_params p;
  odla_value in[5];
  char s[128];
  in[0] = num_mel_bins;
  in[1] = dft_length;
  in[2] = sample_rate;
  in[3] = lower_edge_hertz;
  in[4] = upper_edge_hertz;
  if (!ref_check_operands(op, 5, in) || !ref_signal_scalar(op, in[0], "num_mel_bins", 1) ||
      !ref_signal_scalar(op, in[1], "dft_length", 1) ||
      !ref_signal_scalar(op, in[2], "sample_rate", 1) ||
      !ref_signal_scalar(op, in[3], "lower_edge_hertz", 0) ||
      !ref_signal_scalar(op, in[4], "upper_edge_hertz", 0))
    return NULL;
  if (output_value_type.shape.size != 2 || output_value_type.shape.dims[0] < 1 ||
      output_value_type.shape.dims[1] < 0 ||
      !(ref_is_float(output_value_type.element_type) || ref_is_int(output_value_type.element_type)))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "the result type must be a numeric matrix [bins, "
                    "mel_bins], got %s %s",
                    ref_type_name(output_value_type.element_type),
                    ref_shape_str(&output_value_type.shape, s, sizeof s));
  memset(&p, 0, sizeof p);
  p.spectrum_bins = output_value_type.shape.dims[0];
  p.mel_bins = output_value_type.shape.dims[1];
  p.type = output_value_type.element_type;
  return ref_add_op(op, ref_mel_run, 5, in, output_value_type, value_id, &p, sizeof p);
}
