/* ops_misc.c: detection and text ops of the reference backend: odla_NMS, odla_ROIAlign,
 * odla_ROIMaxPool, odla_TFIDFVectorize, and the extensions odla_ExtNonMaxSuppression and
 * odla_ExtRoiAlign (odla_ext_misc.h). Sampling and signal ops are in ops_misc_signal.c.
 *
 * These ops read boxes, regions and scores of any float type through ref_get and compute in
 * double: they touch few elements per result, so the generic access is fast enough. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static odla_value ref_misc_output_conflict(const char *op, const odla_value_shape *given,
                                           const odla_value_shape *computed) {
  char s1[128], s2[128];
  return ref_fail(ODLA_INVALID_PARAM, op, "output dims %s differ from the computed %s",
                  ref_shape_str(given, s1, sizeof s1), ref_shape_str(computed, s2, sizeof s2));
}

static int ref_is_index_type(odla_element_type t) { return t == ODLA_INT32 || t == ODLA_INT64; }

/* Checks the optional operands that are present. */
static int ref_check_optional(const char *op, int n, const odla_value *values) {
  int i;
  for (i = 0; i < n; ++i)
    if (values[i] && !ref_check_operands(op, 1, &values[i]))
      return 0;
  return 1;
}

/* Whether an optional operand is absent or a scalar (any rank, one element) of a type that
 * `ok` accepts. */
static int ref_scalar_operand(const char *op, odla_value v, const char *what,
                              int (*ok)(odla_element_type)) {
  char s[128];
  if (!v)
    return 1;
  if (ref_count(&v->type.shape) != 1 || !ok(v->type.element_type)) {
    ref_fail(ODLA_INVALID_PARAM, op, "%s must be one element of %s type, got %s %s", what,
             ok == ref_is_float ? "a float" : "an integer", ref_type_name(v->type.element_type),
             ref_shape_str(&v->type.shape, s, sizeof s));
    return 0;
  }
  return 1;
}

/* ---- NMS and ExtNonMaxSuppression --------------------------------------------------------- */

typedef struct {
  int64_t batches, boxes, classes, rows;
  odla_element_type box_type, score_type, out_type;
  int encoding;
  /* odla_NMS passes its parameters as numbers; the extension reads them from operands 2-4. */
  int from_operands;
  int64_t max_out;
  double iou, score;
  int has_score;
} ref_nms_params;

typedef struct {
  double score;
  int64_t box;
} ref_nms_candidate;

/* Decreasing score, then increasing box index (the order ONNX Runtime keeps boxes in). */
static int ref_nms_order(const void *a, const void *b) {
  const ref_nms_candidate *x = (const ref_nms_candidate *)a, *y = (const ref_nms_candidate *)b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->box < y->box ? -1 : (x->box > y->box);
}

/* Whether boxes a and b (ymin, xmin, ymax, xmax) overlap by more than iou. */
static int ref_nms_suppresses(const double *a, const double *b, double iou) {
  double iy = fmin(a[2], b[2]) - fmax(a[0], b[0]), ix = fmin(a[3], b[3]) - fmax(a[1], b[1]);
  double inter, area_a, area_b, uni;
  if (iy <= 0 || ix <= 0)
    return 0;
  inter = iy * ix;
  area_a = (a[2] - a[0]) * (a[3] - a[1]);
  area_b = (b[2] - b[0]) * (b[3] - b[1]);
  uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0)
    return 0;
  return inter / uni > iou;
}

static odla_status ref_nms_run(const ref_node *node, const ref_io *io) {
  const ref_nms_params *p = (const ref_nms_params *)node->params;
  double *corners = (double *)io->scratch; /* [boxes][4] of the current batch */
  ref_nms_candidate *cand = (ref_nms_candidate *)(corners + 4 * p->boxes);
  int64_t *kept = (int64_t *)(cand + p->boxes);
  int64_t max_out = p->max_out, row = 0, b, c, i, k;
  double iou = p->iou, score = p->score;
  int has_score = p->has_score;
  if (p->from_operands) {
    max_out = io->in[2] ? ref_get_int(node->inputs[2]->type.element_type, io->in[2], 0) : 0;
    iou = io->in[3] ? ref_get(node->inputs[3]->type.element_type, io->in[3], 0) : 0.0;
    has_score = io->in[4] != NULL;
    score = has_score ? ref_get(node->inputs[4]->type.element_type, io->in[4], 0) : 0.0;
  }
  if (max_out > p->boxes)
    max_out = p->boxes;
  for (b = 0; b < p->batches; ++b) {
    for (i = 0; i < p->boxes; ++i) {
      double v[4], *o = corners + 4 * i;
      for (k = 0; k < 4; ++k)
        v[k] = ref_get(p->box_type, io->in[0], (b * p->boxes + i) * 4 + k);
      if (p->encoding == ODLA_EXT_BOX_CENTER) { /* x_center, y_center, width, height */
        o[0] = v[1] - v[3] / 2;
        o[1] = v[0] - v[2] / 2;
        o[2] = v[1] + v[3] / 2;
        o[3] = v[0] + v[2] / 2;
      } else { /* y1, x1, y2, x2: any two opposite corners */
        o[0] = fmin(v[0], v[2]);
        o[1] = fmin(v[1], v[3]);
        o[2] = fmax(v[0], v[2]);
        o[3] = fmax(v[1], v[3]);
      }
    }
    for (c = 0; c < p->classes; ++c) {
      int64_t n = 0, nkept = 0;
      for (i = 0; i < p->boxes && max_out > 0; ++i) {
        double s = ref_get(p->score_type, io->in[1], (b * p->classes + c) * p->boxes + i);
        if (!has_score || s > score) {
          cand[n].score = s;
          cand[n++].box = i;
        }
      }
      qsort(cand, (size_t)n, sizeof *cand, ref_nms_order);
      for (i = 0; i < n && nkept < max_out; ++i) {
        const double *box = corners + 4 * cand[i].box;
        for (k = 0; k < nkept; ++k)
          if (ref_nms_suppresses(corners + 4 * kept[k], box, iou))
            break;
        if (k < nkept)
          continue;
        kept[nkept++] = cand[i].box;
        if (row == p->rows)
          return ODLA_INVALID_PARAM; /* more boxes kept than the result has rows */
        ref_set(p->out_type, io->out[0], 3 * row, (double)b);
        ref_set(p->out_type, io->out[0], 3 * row + 1, (double)c);
        ref_set(p->out_type, io->out[0], 3 * row + 2, (double)cand[i].box);
        ++row;
      }
    }
  }
  for (i = 3 * row; i < 3 * p->rows; ++i)
    ref_set(p->out_type, io->out[0], i, -1.0);
  return ODLA_SUCCESS;
}

/* Checks boxes, scores and the result type shared by odla_NMS and odla_ExtNonMaxSuppression. */
static odla_value ref_nms_build(const char *op, odla_value *in, ref_nms_params *p,
                                odla_value_type out, const odla_value_id value_id) {
  const odla_value_shape *bs = &in[0]->type.shape, *ss = &in[1]->type.shape;
  char s1[128], s2[128];
  odla_value v;
  if (!ref_is_float(in[0]->type.element_type) || !ref_is_float(in[1]->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "boxes and scores must be of float types, got "
                    "%s and %s",
                    ref_type_name(in[0]->type.element_type),
                    ref_type_name(in[1]->type.element_type));
  if (bs->size != 3 || bs->dims[2] != 4 || ss->size != 3 || ss->dims[0] != bs->dims[0] ||
      ss->dims[2] != bs->dims[1])
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "boxes %s must be [batches, boxes, 4] and scores %s "
                    "[batches, classes, boxes]",
                    ref_shape_str(bs, s1, sizeof s1), ref_shape_str(ss, s2, sizeof s2));
  if (!ref_is_index_type(out.element_type) || out.shape.size != 2 || out.shape.dims[0] < 0 ||
      out.shape.dims[1] != 3)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "the result type must be int32 or int64 [rows, 3], "
                    "got %s %s",
                    ref_type_name(out.element_type), ref_shape_str(&out.shape, s1, sizeof s1));
  p->batches = bs->dims[0];
  p->boxes = bs->dims[1];
  p->classes = ss->dims[1];
  p->rows = out.shape.dims[0];
  p->box_type = in[0]->type.element_type;
  p->score_type = in[1]->type.element_type;
  p->out_type = out.element_type;
  v = ref_add_op(op, ref_nms_run, 5, in, out, value_id, p, sizeof *p);
  if (v)
    v->node->scratch_bytes =
        (size_t)p->boxes * (4 * sizeof(double) + sizeof(ref_nms_candidate) + sizeof(int64_t));
  return v;
}

/* odla_NMS: ONNX NonMaxSuppression with corner boxes (y1, x1, y2, x2) and its parameters as
 * numbers: max_num_outputs boxes per batch and class, iou_threshold, and score_threshold
 * (-inf keeps every score). The result is as odla_ExtNonMaxSuppression's (odla_ext_misc.h):
 * rows (batch, class, box), then rows of -1. */
odla_value odla_NMS(odla_value boxes, odla_value scores, odla_uint32 max_num_outputs,
                    odla_float32 iou_threshold, odla_float32 score_threshold,
                    odla_value_type output_value_type, const odla_value_id value_id) {
  ref_nms_params p;
  odla_value in[5] = {NULL, NULL, NULL, NULL, NULL};
  in[0] = boxes;
  in[1] = scores;
  if (!ref_check_operands("NMS", 2, in))
    return NULL;
  memset(&p, 0, sizeof p);
  p.encoding = ODLA_EXT_BOX_CORNERS;
  p.max_out = max_num_outputs;
  p.iou = iou_threshold;
  p.score = score_threshold;
  p.has_score = 1;
  return ref_nms_build("NMS", in, &p, output_value_type, value_id);
}

odla_value odla_ExtNonMaxSuppression(odla_value boxes, odla_value scores,
                                     odla_value max_output_boxes_per_class,
                                     odla_value iou_threshold, odla_value score_threshold,
                                     odla_int32 box_encoding, odla_value_type output_value_type,
                                     const odla_value_id value_id) {
  const char *op = "ExtNonMaxSuppression";
  ref_nms_params p;
  odla_value in[5];
  in[0] = boxes;
  in[1] = scores;
  in[2] = max_output_boxes_per_class;
  in[3] = iou_threshold;
  in[4] = score_threshold;
  if (!ref_check_operands(op, 2, in) || !ref_check_optional(op, 3, in + 2))
    return NULL;
  if (!ref_scalar_operand(op, in[2], "max_output_boxes_per_class", ref_is_int) ||
      !ref_scalar_operand(op, in[3], "iou_threshold", ref_is_float) ||
      !ref_scalar_operand(op, in[4], "score_threshold", ref_is_float))
    return NULL;
  if (box_encoding != ODLA_EXT_BOX_CORNERS && box_encoding != ODLA_EXT_BOX_CENTER)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown box encoding %d", box_encoding);
  memset(&p, 0, sizeof p);
  p.encoding = box_encoding;
  p.from_operands = 1;
  return ref_nms_build(op, in, &p, output_value_type, value_id);
}

/* ---- ROIAlign and ExtRoiAlign ------------------------------------------------------------ */

typedef struct {
  int64_t n, c, h, w, rois, oh, ow;
  int sampling_ratio, mode, half_pixel;
  int batch_in_rois; /* odla_ROIAlign: rois are [batch, x1, y1, x2, y2] */
  double scale;
  odla_element_type type, index_type;
} ref_roi_align_params;

/* One bilinear sample: the four pixel offsets and weights (all 0 outside the input). */
typedef struct {
  int64_t pos[4];
  double w[4];
} ref_roi_sample;

static void ref_roi_sample_at(const ref_roi_align_params *p, double y, double x,
                              ref_roi_sample *s) {
  int64_t y0, x0, y1, x1;
  double ly, lx;
  if (y < -1.0 || y > (double)p->h || x < -1.0 || x > (double)p->w) {
    memset(s, 0, sizeof *s);
    return;
  }
  y = y < 0 ? 0 : y;
  x = x < 0 ? 0 : x;
  y0 = (int64_t)y;
  x0 = (int64_t)x;
  if (y0 >= p->h - 1) {
    y0 = y1 = p->h - 1;
    y = (double)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= p->w - 1) {
    x0 = x1 = p->w - 1;
    x = (double)x0;
  } else {
    x1 = x0 + 1;
  }
  ly = y - (double)y0;
  lx = x - (double)x0;
  s->pos[0] = y0 * p->w + x0;
  s->pos[1] = y0 * p->w + x1;
  s->pos[2] = y1 * p->w + x0;
  s->pos[3] = y1 * p->w + x1;
  s->w[0] = (1 - ly) * (1 - lx);
  s->w[1] = (1 - ly) * lx;
  s->w[2] = ly * (1 - lx);
  s->w[3] = ly * lx;
}

static odla_status ref_roi_align_run(const ref_node *node, const ref_io *io) {
  const ref_roi_align_params *p = (const ref_roi_align_params *)node->params;
  int cols = p->batch_in_rois ? 5 : 4;
  int64_t r, ph, pw, ch, iy, ix, k, plane = p->h * p->w;
  for (r = 0; r < p->rois; ++r) {
    const double off = p->half_pixel ? 0.5 : 0.0;
    const int64_t first = r * cols + (p->batch_in_rois ? 1 : 0);
    double x1 = ref_get(p->type, io->in[1], first) * p->scale - off;
    double y1 = ref_get(p->type, io->in[1], first + 1) * p->scale - off;
    double x2 = ref_get(p->type, io->in[1], first + 2) * p->scale - off;
    double y2 = ref_get(p->type, io->in[1], first + 3) * p->scale - off;
    double rw = x2 - x1, rh = y2 - y1, bin_h, bin_w;
    int64_t grid_h, grid_w, count, batch;
    if (p->batch_in_rois) {
      double bd = ref_get(p->type, io->in[1], r * cols);
      batch = bd >= 0 && bd < (double)p->n ? (int64_t)bd : -1;
    } else {
      batch = ref_get_int(p->index_type, io->in[2], r);
    }
    if (batch < 0 || batch >= p->n)
      return ODLA_INVALID_PARAM; /* a batch index out of range */
    if (!p->half_pixel) {
      rw = rw > 1 ? rw : 1;
      rh = rh > 1 ? rh : 1;
    }
    bin_h = rh / (double)p->oh;
    bin_w = rw / (double)p->ow;
    grid_h = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(rh / (double)p->oh);
    grid_w = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(rw / (double)p->ow);
    count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
    for (ph = 0; ph < p->oh; ++ph)
      for (pw = 0; pw < p->ow; ++pw)
        for (ch = 0; ch < p->c; ++ch) {
          int64_t base = (batch * p->c + ch) * plane;
          double acc = 0.0;
          int first_sample = 1;
          for (iy = 0; iy < grid_h; ++iy) {
            double y = y1 + (double)ph * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
            for (ix = 0; ix < grid_w; ++ix) {
              double x = x1 + (double)pw * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
              ref_roi_sample s;
              ref_roi_sample_at(p, y, x, &s);
              if (p->mode == ODLA_EXT_ROI_AVG) {
                for (k = 0; k < 4; ++k)
                  acc += s.w[k] * ref_get(p->type, io->in[0], base + s.pos[k]);
              } else {
                for (k = 0; k < 4; ++k) {
                  double t = s.w[k] * ref_get(p->type, io->in[0], base + s.pos[k]);
                  if (first_sample || t > acc)
                    acc = t;
                  first_sample = 0;
                }
              }
            }
          }
          if (p->mode == ODLA_EXT_ROI_AVG)
            acc /= (double)count;
          ref_set(p->type, io->out[0], ((r * p->c + ch) * p->oh + ph) * p->ow + pw, acc);
        }
  }
  return ODLA_SUCCESS;
}

/* Checks input and rois (with `cols` columns) and fills the shared parameters. */
static int ref_roi_check(const char *op, odla_value input, odla_value rois, int cols,
                         ref_roi_align_params *p) {
  const odla_value_shape *xs = &input->type.shape, *rs = &rois->type.shape;
  char s1[128], s2[128];
  memset(p, 0, sizeof *p);
  if (!ref_is_float(input->type.element_type) ||
      rois->type.element_type != input->type.element_type) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
             "input and rois must be of one float type, got %s "
             "and %s",
             ref_type_name(input->type.element_type), ref_type_name(rois->type.element_type));
    return 0;
  }
  if (xs->size != 4 || rs->size != 2 || rs->dims[1] != cols) {
    ref_fail(ODLA_INVALID_PARAM, op, "input %s must be [N, C, H, W] and rois %s [rois, %d]",
             ref_shape_str(xs, s1, sizeof s1), ref_shape_str(rs, s2, sizeof s2), cols);
    return 0;
  }
  p->n = xs->dims[0];
  p->c = xs->dims[1];
  p->h = xs->dims[2];
  p->w = xs->dims[3];
  p->rois = rs->dims[0];
  p->type = input->type.element_type;
  return 1;
}

static odla_value ref_roi_align_build(const char *op, odla_value *in, ref_roi_align_params *p,
                                      const odla_value_shape *given, const odla_value_id value_id) {
  odla_value_type out;
  if (p->oh < 1 || p->ow < 1)
    return ref_fail(ODLA_INVALID_PARAM, op, "output size %lldx%lld must be at least 1x1",
                    (long long)p->oh, (long long)p->ow);
  out.element_type = p->type;
  out.shape.size = 4;
  out.shape.dims[0] = p->rois;
  out.shape.dims[1] = p->c;
  out.shape.dims[2] = p->oh;
  out.shape.dims[3] = p->ow;
  if (given && ref_shape_conflicts(given, &out.shape))
    return ref_misc_output_conflict(op, given, &out.shape);
  return ref_add_op(op, ref_roi_align_run, 3, in, out, value_id, p, sizeof *p);
}

/* odla_ROIAlign: rois are [rois, 5] rows (batch index, x1, y1, x2, y2) of input's type (the
 * Caffe2 layout); output_dim, which must be defined as [rois, C, out_h, out_w], gives the
 * result size. Average pooling with the original, not half-pixel, coordinates (ONNX RoiAlign-10's
 * default); see odla_ExtRoiAlign (odla_ext_misc.h) for the arithmetic. Channels first only. */
odla_value odla_ROIAlign(odla_value input, odla_memory_layout input_layout, odla_value rois,
                         odla_int32 sampling_ratio, odla_float32 scale, odla_value_shape output_dim,
                         const odla_value_id value_id) {
  ref_roi_align_params p;
  odla_value in[3];
  char s[128];
  in[0] = input;
  in[1] = rois;
  in[2] = NULL;
  if (!ref_check_operands("ROIAlign", 2, in) || !ref_roi_check("ROIAlign", input, rois, 5, &p))
    return NULL;
  if (input_layout != ODLA_CHANNELS_FIRST)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ROIAlign",
                    "only channels-first input is "
                    "supported");
  if (output_dim.size != 4)
    return ref_fail(ODLA_INVALID_PARAM, "ROIAlign",
                    "output_dim %s must be defined as [rois, C, "
                    "out_h, out_w]",
                    ref_shape_str(&output_dim, s, sizeof s));
  p.oh = output_dim.dims[2];
  p.ow = output_dim.dims[3];
  p.sampling_ratio = sampling_ratio;
  p.scale = scale;
  p.mode = ODLA_EXT_ROI_AVG;
  p.batch_in_rois = 1;
  return ref_roi_align_build("ROIAlign", in, &p, &output_dim, value_id);
}

odla_value odla_ExtRoiAlign(odla_value input, odla_value rois, odla_value batch_indices,
                            odla_int32 mode, odla_int32 output_height, odla_int32 output_width,
                            odla_int32 sampling_ratio, odla_float32 spatial_scale,
                            odla_bool half_pixel, const odla_value_id value_id) {
  const char *op = "ExtRoiAlign";
  ref_roi_align_params p;
  odla_value in[3];
  char s[128];
  in[0] = input;
  in[1] = rois;
  in[2] = batch_indices;
  if (!ref_check_operands(op, 3, in) || !ref_roi_check(op, input, rois, 4, &p))
    return NULL;
  if (!ref_is_index_type(batch_indices->type.element_type) || batch_indices->type.shape.size != 1 ||
      batch_indices->type.shape.dims[0] != p.rois)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "batch_indices must be int32 or int64 [%lld], got %s "
                    "%s",
                    (long long)p.rois, ref_type_name(batch_indices->type.element_type),
                    ref_shape_str(&batch_indices->type.shape, s, sizeof s));
  if (mode != ODLA_EXT_ROI_AVG && mode != ODLA_EXT_ROI_MAX)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown mode %d", mode);
  p.oh = output_height;
  p.ow = output_width;
  p.sampling_ratio = sampling_ratio;
  p.scale = spatial_scale;
  p.mode = mode;
  p.half_pixel = half_pixel != 0;
  p.index_type = batch_indices->type.element_type;
  return ref_roi_align_build(op, in, &p, NULL, value_id);
}

/* ---- ROIMaxPool ---------------------------------------------------------------------------- */

typedef struct {
  int64_t n, c, h, w, rois, oh, ow;
  double scale;
  odla_element_type type;
} ref_roi_pool_params;

static int64_t ref_clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

static odla_status ref_roi_pool_run(const ref_node *node, const ref_io *io) {
  const ref_roi_pool_params *p = (const ref_roi_pool_params *)node->params;
  int64_t r, ph, pw, ch, y, x;
  for (r = 0; r < p->rois; ++r) {
    double bd = ref_get(p->type, io->in[1], r * 5);
    int64_t batch, x1, y1, x2, y2, rw, rh;
    double bin_h, bin_w;
    if (!(bd >= 0 && bd < (double)p->n))
      return ODLA_INVALID_PARAM; /* a batch index out of range */
    batch = (int64_t)bd;
    x1 = (int64_t)round(ref_get(p->type, io->in[1], r * 5 + 1) * p->scale);
    y1 = (int64_t)round(ref_get(p->type, io->in[1], r * 5 + 2) * p->scale);
    x2 = (int64_t)round(ref_get(p->type, io->in[1], r * 5 + 3) * p->scale);
    y2 = (int64_t)round(ref_get(p->type, io->in[1], r * 5 + 4) * p->scale);
    rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
    rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1;
    bin_h = (double)rh / (double)p->oh;
    bin_w = (double)rw / (double)p->ow;
    for (ch = 0; ch < p->c; ++ch)
      for (ph = 0; ph < p->oh; ++ph)
        for (pw = 0; pw < p->ow; ++pw) {
          int64_t hs = ref_clamp64((int64_t)floor((double)ph * bin_h) + y1, 0, p->h);
          int64_t he = ref_clamp64((int64_t)ceil((double)(ph + 1) * bin_h) + y1, 0, p->h);
          int64_t ws = ref_clamp64((int64_t)floor((double)pw * bin_w) + x1, 0, p->w);
          int64_t we = ref_clamp64((int64_t)ceil((double)(pw + 1) * bin_w) + x1, 0, p->w);
          const int64_t base = (batch * p->c + ch) * p->h * p->w;
          double m = 0.0;
          int empty = he <= hs || we <= ws;
          for (y = hs; y < he; ++y)
            for (x = ws; x < we; ++x) {
              double v = ref_get(p->type, io->in[0], base + y * p->w + x);
              if ((y == hs && x == ws) || v > m)
                m = v;
            }
          ref_set(p->type, io->out[0], ((r * p->c + ch) * p->oh + ph) * p->ow + pw, empty ? 0 : m);
        }
  }
  return ODLA_SUCCESS;
}

/* odla_ROIMaxPool: ONNX MaxRoiPool (Fast R-CNN's region pooling). rois are [rois, 5] rows
 * (batch index, x1, y1, x2, y2) of input's float type; region corners are rounded (half away
 * from zero) after scaling, a region is at least 1 x 1 pixel, and bin (i, j) of a win_h x win_w
 * grid takes the maximum over rows [floor(i * rh / win_h), ceil((i + 1) * rh / win_h)) of the
 * region (likewise for columns), clipped to the input; an empty bin is 0. Channels first. */
odla_value odla_ROIMaxPool(odla_value input, odla_memory_layout input_layout, odla_value rois,
                           odla_int32 win_h, odla_int32 win_w, odla_float32 scale,
                           odla_value_shape output_dim, const odla_value_id value_id) {
  ref_roi_align_params a;
  ref_roi_pool_params p;
  odla_value in[2];
  odla_value_type out;
  in[0] = input;
  in[1] = rois;
  if (!ref_check_operands("ROIMaxPool", 2, in) || !ref_roi_check("ROIMaxPool", input, rois, 5, &a))
    return NULL;
  if (input_layout != ODLA_CHANNELS_FIRST)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ROIMaxPool",
                    "only channels-first input is "
                    "supported");
  if (win_h < 1 || win_w < 1)
    return ref_fail(ODLA_INVALID_PARAM, "ROIMaxPool", "window %dx%d must be at least 1x1", win_h,
                    win_w);
  memset(&p, 0, sizeof p);
  p.n = a.n;
  p.c = a.c;
  p.h = a.h;
  p.w = a.w;
  p.rois = a.rois;
  p.oh = win_h;
  p.ow = win_w;
  p.scale = scale;
  p.type = a.type;
  out.element_type = a.type;
  out.shape.size = 4;
  out.shape.dims[0] = a.rois;
  out.shape.dims[1] = a.c;
  out.shape.dims[2] = win_h;
  out.shape.dims[3] = win_w;
  if (ref_shape_conflicts(&output_dim, &out.shape))
    return ref_misc_output_conflict("ROIMaxPool", &output_dim, &out.shape);
  return ref_add_op("ROIMaxPool", ref_roi_pool_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- TFIDFVectorize ------------------------------------------------------------------------ */

typedef struct {
  int64_t rows, len, width;      /* input rows and items per row; result columns */
  int64_t pool, levels, indices; /* elements of pool, gram_counts and output_indices */
  int min_gram, max_gram, max_skip;
  odla_tf_idf_mode mode;
  odla_element_type in_type, pool_type, counts_type, indices_type, weights_type;
} ref_tfidf_params;

static odla_status ref_tfidf_run(const ref_node *node, const ref_io *io) {
  const ref_tfidf_params *p = (const ref_tfidf_params *)node->params;
  const void *x = io->in[0], *pool = io->in[1], *counts = io->in[2], *ids = io->in[3];
  float *y = (float *)io->out[0];
  int64_t r, d, s, n, g, k, i;
  for (i = 0; i < p->rows * p->width; ++i)
    y[i] = 0;
  for (r = 0; r < p->rows; ++r) {
    for (d = 1; d <= (int64_t)p->max_skip + 1; ++d) {
      /* Unigrams do not depend on the skip distance: they are counted once, at distance 1. */
      int64_t nmin = d == 1 || p->min_gram > 1 ? p->min_gram : 2;
      if (nmin > p->max_gram)
        break;
      for (s = 0; s < p->len; ++s)
        for (n = nmin; n <= p->max_gram && s + (n - 1) * d < p->len; ++n) {
          /* The n-grams of the pool run from gram_counts[n - 1] to the next level's start. */
          int64_t begin, end, id0 = 0;
          if (n > p->levels)
            break;
          begin = ref_get_int(p->counts_type, counts, n - 1);
          end = n < p->levels ? ref_get_int(p->counts_type, counts, n) : p->pool;
          if (begin < 0 || end > p->pool || begin > end)
            return ODLA_INVALID_PARAM;  /* gram_counts do not partition pool */
          for (k = 0; k < n - 1; ++k) { /* ids of the grams of the shorter levels */
            int64_t b0 = ref_get_int(p->counts_type, counts, k);
            int64_t e0 = ref_get_int(p->counts_type, counts, k + 1);
            id0 += (e0 - b0) / (k + 1);
          }
          for (g = 0; begin + (g + 1) * n <= end; ++g) {
            for (k = 0; k < n; ++k)
              if (ref_get_int(p->pool_type, pool, begin + g * n + k) !=
                  ref_get_int(p->in_type, x, r * p->len + s + k * d))
                break;
            if (k == n) {
              int64_t col;
              if (id0 + g >= p->indices)
                return ODLA_INVALID_PARAM; /* a gram without an output index */
              col = ref_get_int(p->indices_type, ids, id0 + g);
              if (col < 0 || col >= p->width)
                return ODLA_INVALID_PARAM; /* an output index beyond the result */
              y[r * p->width + col] += 1;
            }
          }
        }
    }
  }
  if (p->mode == ODLA_TFIDF_TF)
    return ODLA_SUCCESS;
  for (r = 0; r < p->rows; ++r)
    for (i = 0; i < p->width; ++i) {
      float *v = &y[r * p->width + i];
      double w = 1.0;
      if (io->in[4]) {
        if (i >= p->indices)
          return ODLA_INVALID_PARAM; /* weights has one entry per output index */
        w = ref_get(p->weights_type, io->in[4], i);
      }
      *v = (float)(p->mode == ODLA_TFIDF_IDF ? (*v > 0 ? w : 0.0) : *v * w);
    }
  return ODLA_SUCCESS;
}

/* odla_TFIDFVectorize: ONNX TfIdfVectorizer over integer tokens. input is int32 or int64, [len]
 * or [rows, len]; pool (integer) holds the n-grams of each length n >= 1 one after another,
 * those of length n starting at gram_counts[n - 1] (integer); gram j (counted over all
 * lengths in pool order) adds to result column output_indices[j] (integer). For every row,
 * skip distance d in 1..max_skip_count + 1 and start position, the items start, start + d, ...
 * that form an n-gram of the pool with min_gram_length <= n <= max_gram_length count once
 * (unigrams only at d = 1). The result is float32 counts (TF), weights[column] where the count
 * is positive (IDF), or count * weights[column] (TFIDF); weights (float, one per output index)
 * is optional, 1 when absent. output_shape must be defined: [width] or [rows, width]; execution
 * fails for an output index outside [0, width). */
odla_value odla_TFIDFVectorize(odla_value input, odla_int32 min_gram_length,
                               odla_int32 max_gram_length, odla_int32 max_skip_count,
                               odla_tf_idf_mode mode, odla_value pool, odla_value gram_counts,
                               odla_value output_indices, odla_value weights,
                               odla_value_shape output_shape, odla_value_id value_id) {
  const char *op = "TFIDFVectorize";
  ref_tfidf_params p;
  odla_value in[5];
  odla_value_type out;
  const odla_value_shape *xs;
  char s1[128], s2[128];
  int i;
  in[0] = input;
  in[1] = pool;
  in[2] = gram_counts;
  in[3] = output_indices;
  in[4] = weights;
  if (!ref_check_operands(op, 4, in) || !ref_check_optional(op, 1, in + 4))
    return NULL;
  xs = &input->type.shape;
  if (!ref_is_index_type(input->type.element_type) || xs->size < 1 || xs->size > 2)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "input must be int32 or int64 [len] or [rows, len], "
                    "got %s %s",
                    ref_type_name(input->type.element_type), ref_shape_str(xs, s1, sizeof s1));
  for (i = 1; i < 4; ++i)
    if (!ref_is_int(in[i]->type.element_type) || in[i]->type.shape.size != 1)
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "operand %d (pool, gram_counts, output_indices) "
                      "must be an integer vector, got %s %s",
                      i, ref_type_name(in[i]->type.element_type),
                      ref_shape_str(&in[i]->type.shape, s1, sizeof s1));
  if (weights && (!ref_is_float(weights->type.element_type) || weights->type.shape.size != 1))
    return ref_fail(ODLA_INVALID_PARAM, op, "weights must be a float vector");
  if (min_gram_length < 1 || max_gram_length < min_gram_length || max_skip_count < 0)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "gram lengths [%d, %d] and max_skip_count %d are "
                    "invalid",
                    min_gram_length, max_gram_length, max_skip_count);
  if (mode != ODLA_TFIDF_TF && mode != ODLA_TFIDF_IDF && mode != ODLA_TFIDF_TFIDF)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown mode %d", (int)mode);
  if (output_shape.size != xs->size || output_shape.dims[output_shape.size - 1] < 0 ||
      (xs->size == 2 && output_shape.dims[0] != xs->dims[0]))
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "output_shape %s must be defined as [width] or "
                    "[rows, width] for input %s",
                    ref_shape_str(&output_shape, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.rows = xs->size == 2 ? xs->dims[0] : 1;
  p.len = xs->dims[xs->size - 1];
  p.width = output_shape.dims[output_shape.size - 1];
  p.pool = pool->type.shape.dims[0];
  p.levels = gram_counts->type.shape.dims[0];
  p.indices = output_indices->type.shape.dims[0];
  p.min_gram = min_gram_length;
  p.max_gram = max_gram_length;
  p.max_skip = max_skip_count;
  p.mode = mode;
  p.in_type = input->type.element_type;
  p.pool_type = pool->type.element_type;
  p.counts_type = gram_counts->type.element_type;
  p.indices_type = output_indices->type.element_type;
  p.weights_type = weights ? weights->type.element_type : ODLA_FLOAT32;
  out.element_type = ODLA_FLOAT32;
  out.shape = output_shape;
  return ref_add_op(op, ref_tfidf_run, 5, in, out, value_id, &p, sizeof p);
}
