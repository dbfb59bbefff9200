/* ops_yolo.c: odla_PostProcess, the YOLOv3 decoding helper of ODLA 0.5, in the reference
 * backend.
 *
 * ODLA 0.5 names the operands (orig_img_w, orig_img_h, bb13, bb26, bb52) and says the call
 * returns "selected info (cx, cy, w, h, pred_cls) of each class"; it leaves the rest open, so
 * this backend defines it after darknet's YOLOv3 (yolo_layer.c, test_detector's defaults):
 *
 * Operands. orig_img_w and orig_img_h hold one element each (any integer or float type): the
 * original image's size in pixels, read at run time (a value that is not positive fails the
 * execution). bb13, bb26 and bb52 are the three detection heads, channels-first
 * [1, 3 * (5 + C), H, W] of one float type, with C >= 1 classes; bb26's H and W are twice
 * bb13's and bb52's four times (13, 26, 52 for a 416 x 416 network input, whose size is taken
 * as 32 * bb13's W by 32 * bb13's H). Channel a * (5 + C) + k of a head holds, for anchor a,
 * tx, ty, tw, th, the objectness logit (k = 4) and the class logits (k = 5 ...).
 *
 * Decoding. Cell (i, j) of a head with anchor (aw, ah) in network-input pixels (bb13: 116x90,
 * 156x198, 373x326; bb26: 30x61, 62x45, 59x119; bb52: 10x13, 16x30, 33x23) gives the box
 * bx = (j + s(tx)) / W, by = (i + s(ty)) / H, bw = aw e^tw / net_w, bh = ah e^th / net_h
 * (s is the logistic sigmoid), mapped back through darknet's letterbox: the image was scaled
 * by the largest factor that fits the network input (new_w = net_w and
 * new_h = floor(orig_h * net_w / orig_w) when net_w / orig_w < net_h / orig_h, else the other
 * way round) and centered, so x = (bx - (net_w - new_w) / 2 / net_w) * net_w / new_w,
 * w = bw * net_w / new_w (y and h alike), and the box is (x * orig_w, y * orig_h,
 * w * orig_w, h * orig_h) in original-image pixels (center and size). Its score for class c
 * is s(objectness) * s(class logit c).
 *
 * Selection, per class: boxes scoring above 0.5 (darknet's detection threshold), in
 * descending score (ties: bb13 before bb26 before bb52, then anchor, row, column), each kept
 * unless its IoU with a box already kept exceeds 0.45 (darknet's NMS threshold).
 *
 * Results (ids value_id + "0" and value_id + "1", as the ODLA 0.5 backends name them):
 * float32 [C, N, 5] with N = 3 * (the three heads' H * W), class c's kept boxes first as
 * (cx, cy, w, h, score) rows in descending score and zero rows after them; uint32 [C], the
 * number of boxes kept per class. Everything computes in double. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_YOLO_SCORE_THRESHOLD 0.5
#define REF_YOLO_IOU_THRESHOLD 0.45

/* Anchors (w, h) in network-input pixels, per head (bb13, bb26, bb52) and anchor. */
static const double ref_yolo_anchors[3][3][2] = {
    {{116, 90}, {156, 198}, {373, 326}},
    {{30, 61}, {62, 45}, {59, 119}},
    {{10, 13}, {16, 30}, {33, 23}},
};

typedef struct {
  int64_t h[3], w[3]; /* the heads' grids */
  int64_t classes, boxes;
} ref_yolo_params;

typedef struct {
  double score;
  int64_t box;
} ref_yolo_candidate;

static double ref_sigmoid(double v) { return v >= 0 ? 1 / (1 + exp(-v)) : exp(v) / (1 + exp(v)); }

/* Descending score, then ascending box index: a total order, so qsort's result is defined. */
static int ref_yolo_order(const void *pa, const void *pb) {
  const ref_yolo_candidate *a = (const ref_yolo_candidate *)pa, *b = (const ref_yolo_candidate *)pb;
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  return a->box < b->box ? -1 : (a->box > b->box);
}

/* Intersection over union of two (cx, cy, w, h) boxes, as darknet's box_iou. */
static double ref_yolo_iou(const double *a, const double *b) {
  double iw = fmin(a[0] + a[2] / 2, b[0] + b[2] / 2) - fmax(a[0] - a[2] / 2, b[0] - b[2] / 2);
  double ih = fmin(a[1] + a[3] / 2, b[1] + b[3] / 2) - fmax(a[1] - a[3] / 2, b[1] - b[3] / 2);
  double inter = iw > 0 && ih > 0 ? iw * ih : 0, uni = a[2] * a[3] + b[2] * b[3] - inter;
  return uni > 0 ? inter / uni : 0;
}

static odla_status ref_yolo_run(const ref_node *node, const ref_io *io) {
  const ref_yolo_params *p = (const ref_yolo_params *)node->params;
  const int64_t nc = p->classes, n = p->boxes, ch = 5 + p->classes;
  const odla_element_type tf = node->inputs[2]->type.element_type;
  const double net_w = 32.0 * (double)p->w[0], net_h = 32.0 * (double)p->h[0];
  double orig_w = ref_get(node->inputs[0]->type.element_type, io->in[0], 0);
  double orig_h = ref_get(node->inputs[1]->type.element_type, io->in[1], 0);
  double *box = (double *)io->scratch, new_w, new_h; /* n x 4 */
  ref_yolo_candidate *cand = (ref_yolo_candidate *)(box + 4 * n);
  int64_t *kept = (int64_t *)(cand + n);
  float *info = (float *)io->out[0];
  uint32_t *count = (uint32_t *)io->out[1];
  int64_t c, b, k, head, a, i, j;
  if (!(orig_w > 0 && orig_h > 0 && orig_w < 1e9 && orig_h < 1e9)) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "PostProcess",
               "'%s': the original image size %g x %g is not positive and finite",
               node->outputs[0]->id, orig_w, orig_h);
    return ODLA_FAILURE;
  }
  if (net_w / orig_w < net_h / orig_h) {
    new_w = net_w;
    new_h = floor(orig_h * net_w / orig_w);
  } else {
    new_h = net_h;
    new_w = floor(orig_w * net_h / orig_h);
  }
  if (new_w < 1 || new_h < 1) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "PostProcess",
               "'%s': the image %g x %g letterboxes to an empty %g x %g region of the network "
               "input",
               node->outputs[0]->id, orig_w, orig_h, new_w, new_h);
    return ODLA_FAILURE;
  }
  /* Boxes, in the order of the tie rule: head, anchor, row, column. */
  for (head = 0, b = 0; head < 3; ++head) {
    const void *x = io->in[2 + head];
    const int64_t hw = p->h[head] * p->w[head];
    for (a = 0; a < 3; ++a)
      for (i = 0; i < p->h[head]; ++i)
        for (j = 0; j < p->w[head]; ++j, ++b) {
          const int64_t at = a * ch * hw + i * p->w[head] + j;
          double bx = (j + ref_sigmoid(ref_get(tf, x, at))) / (double)p->w[head];
          double by = (i + ref_sigmoid(ref_get(tf, x, at + hw))) / (double)p->h[head];
          double bw = ref_yolo_anchors[head][a][0] * exp(ref_get(tf, x, at + 2 * hw)) / net_w;
          double bh = ref_yolo_anchors[head][a][1] * exp(ref_get(tf, x, at + 3 * hw)) / net_h;
          box[4 * b + 0] = (bx - (net_w - new_w) / 2 / net_w) * net_w / new_w * orig_w;
          box[4 * b + 1] = (by - (net_h - new_h) / 2 / net_h) * net_h / new_h * orig_h;
          box[4 * b + 2] = bw * net_w / new_w * orig_w;
          box[4 * b + 3] = bh * net_h / new_h * orig_h;
        }
  }
  memset(info, 0, (size_t)(nc * n * 5) * sizeof *info);
  for (c = 0; c < nc; ++c) {
    int64_t num = 0, nk = 0;
    for (head = 0, b = 0; head < 3; ++head) {
      const void *x = io->in[2 + head];
      const int64_t hw = p->h[head] * p->w[head];
      for (a = 0; a < 3; ++a)
        for (k = 0; k < hw; ++k, ++b) {
          const int64_t at = a * ch * hw + k;
          double score = ref_sigmoid(ref_get(tf, x, at + 4 * hw)) *
                         ref_sigmoid(ref_get(tf, x, at + (5 + c) * hw));
          if (score > REF_YOLO_SCORE_THRESHOLD) {
            cand[num].score = score;
            cand[num++].box = b;
          }
        }
    }
    qsort(cand, (size_t)num, sizeof *cand, ref_yolo_order);
    for (k = 0; k < num; ++k) {
      const double *bk = box + 4 * cand[k].box;
      float *row = info + (c * n + nk) * 5;
      for (i = 0; i < nk && ref_yolo_iou(box + 4 * kept[i], bk) <= REF_YOLO_IOU_THRESHOLD; ++i) {
      }
      if (i < nk)
        continue;
      kept[nk++] = cand[k].box;
      for (i = 0; i < 4; ++i)
        row[i] = (float)bk[i];
      row[4] = (float)cand[k].score;
    }
    count[c] = (uint32_t)nk;
  }
  return ODLA_SUCCESS;
}

/* One element of an integer or float type. */
static int ref_yolo_size_operand(odla_value v, const char *what) {
  char s[128];
  odla_element_type t = v->type.element_type;
  if ((!ref_is_int(t) && !ref_is_float(t)) || ref_count(&v->type.shape) != 1) {
    ref_fail(ODLA_INVALID_PARAM, "PostProcess",
             "%s must hold one integer or float element, not %s %s", what, ref_type_name(t),
             ref_shape_str(&v->type.shape, s, sizeof s));
    return 0;
  }
  return 1;
}

odla_values odla_PostProcess(odla_value orig_img_w, odla_value orig_img_h, odla_value bb13,
                             odla_value bb26, odla_value bb52, const odla_value_id value_id) {
  static const char *const names[3] = {"bb13", "bb26", "bb52"};
  odla_values res;
  odla_value in[5];
  odla_value_type out[2];
  odla_value_id ids[2];
  ref_yolo_params p;
  ref_node *node;
  char id0[256], id1[256], s1[128];
  int head;
  int64_t ch = 0;
  memset(&res, 0, sizeof res);
  in[0] = orig_img_w;
  in[1] = orig_img_h;
  in[2] = bb13;
  in[3] = bb26;
  in[4] = bb52;
  if (!ref_check_operands("PostProcess", 5, in) ||
      !ref_yolo_size_operand(orig_img_w, "orig_img_w") ||
      !ref_yolo_size_operand(orig_img_h, "orig_img_h"))
    return res;
  memset(&p, 0, sizeof p);
  for (head = 0; head < 3; ++head) {
    const odla_value_type *t = &in[2 + head]->type;
    const int64_t scale = (int64_t)1 << head;
    if (!ref_is_float(t->element_type) || t->element_type != bb13->type.element_type) {
      ref_fail(ODLA_UNSUPPORTED_DATATYPE, "PostProcess",
               "%s has element type %s; the heads take one float type (bb13: %s)", names[head],
               ref_type_name(t->element_type), ref_type_name(bb13->type.element_type));
      return res;
    }
    if (t->shape.size != 4 || t->shape.dims[0] != 1 || t->shape.dims[1] % 3 != 0 ||
        t->shape.dims[1] / 3 < 6 || (head > 0 && t->shape.dims[1] != ch) || t->shape.dims[2] < 1 ||
        t->shape.dims[3] < 1 ||
        (head > 0 && (t->shape.dims[2] != scale * p.h[0] || t->shape.dims[3] != scale * p.w[0]))) {
      ref_fail(ODLA_INVALID_PARAM, "PostProcess",
               "%s is %s; the heads must be [1, 3 * (5 + C), H, W] with C >= 1, one C, and "
               "bb26 and bb52 2 and 4 times bb13's H and W (batch 1 only)",
               names[head], ref_shape_str(&t->shape, s1, sizeof s1));
      return res;
    }
    ch = t->shape.dims[1];
    p.h[head] = t->shape.dims[2];
    p.w[head] = t->shape.dims[3];
    p.boxes += 3 * p.h[head] * p.w[head];
  }
  p.classes = ch / 3 - 5;
  out[0].element_type = ODLA_FLOAT32;
  out[0].shape.size = 3;
  out[0].shape.dims[0] = p.classes;
  out[0].shape.dims[1] = p.boxes;
  out[0].shape.dims[2] = 5;
  out[1].element_type = ODLA_UINT32;
  out[1].shape.size = 1;
  out[1].shape.dims[0] = p.classes;
  ref_snprintf(id0, sizeof id0, "%s0", value_id ? (const char *)value_id : "");
  ref_snprintf(id1, sizeof id1, "%s1", value_id ? (const char *)value_id : "");
  ids[0] = ref_made_id(id0);
  ids[1] = ref_made_id(id1);
  node = ref_add_node("PostProcess", ref_yolo_run, 5, in, 2, out, ids, &p, sizeof p);
  if (!node)
    return res;
  node->scratch_bytes =
      (size_t)p.boxes * (4 * sizeof(double) + sizeof(ref_yolo_candidate) + sizeof(int64_t));
  res.size = 2;
  res.values[0] = node->outputs[0];
  res.values[1] = node->outputs[1];
  return res;
}
