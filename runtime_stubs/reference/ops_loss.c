/* ops_loss.c: loss functions of the reference backend (NegativeLogLikeliHoodLoss) on every
 * float type; float16 and bfloat16 are computed in float, sums accumulate in double. */
#include "autodiff.h"
#include "ref.h"
#include "ref_types.h"

#include <stdint.h>
#include <string.h>

typedef struct {
  int64_t n, c, d; /* batch, classes, elements per (batch, class): the product of d1..dk */
  int64_t ignored;
  odla_reduction_mode reduction;
  int index64;
} ref_nll_params;

/* Per (n, k): loss = -input[n, t, k] * weight[t] with t = gt[n, k]; 0 (with weight 0) when
 * t == ignored. Returns 0 when a target is out of range. */
#define REF_DEFINE_NLL(E, S, C, SFX)                                                               \
  static int ref_nll_##SFX(const ref_nll_params *p, const S *x, const void *gt, const S *w,        \
                           S *y) {                                                                 \
    int64_t n, k;                                                                                  \
    double sum = 0.0, weights = 0.0;                                                               \
    for (n = 0; n < p->n; ++n)                                                                     \
      for (k = 0; k < p->d; ++k) {                                                                 \
        const int64_t j = n * p->d + k;                                                            \
        const int64_t t = p->index64 ? ((const int64_t *)gt)[j] : ((const int32_t *)gt)[j];        \
        double loss = 0.0, weight = 0.0;                                                           \
        if (t != p->ignored) {                                                                     \
          if (t < 0 || t >= p->c)                                                                  \
            return 0;                                                                              \
          weight = w ? (double)REF_LOAD_##SFX(w, t) : 1.0;                                         \
          loss = -(double)REF_LOAD_##SFX(x, (n * p->c + t) * p->d + k) * weight;                   \
        }                                                                                          \
        if (p->reduction == ODLA_REDUCE_NONE)                                                      \
          REF_STORE_##SFX(y, j, loss);                                                             \
        sum += loss;                                                                               \
        weights += weight;                                                                         \
      }                                                                                            \
    if (p->reduction == ODLA_REDUCE_SUM)                                                           \
      REF_STORE_##SFX(y, 0, sum);                                                                  \
    else if (p->reduction == ODLA_REDUCE_MEAN)                                                     \
      REF_STORE_##SFX(y, 0, sum / weights); /* 0/0 (every target ignored) is NaN, as in ONNX */    \
    return 1;                                                                                      \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_NLL)
#undef REF_DEFINE_NLL

static odla_status ref_nll_run(const ref_node *node, const ref_io *io) {
  const ref_nll_params *p = (const ref_nll_params *)node->params;
  int ok = 0;
  switch (node->inputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ok = ref_nll_##SFX(p, (const S *)io->in[0], io->in[1], (const S *)io->in[2], (S *)io->out[0]); \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ok ? ODLA_SUCCESS : ODLA_INVALID_PARAM; /* a target out of [0, C) */
}

/* ONNX's NegativeLogLikelihoodLoss. input [N, C, d1..dk] (k >= 0) holds log-probabilities,
 * gt [N, d1..dk] (int32 or int64) the target classes, weight (optional, [C], the input's type)
 * per-class weights (1 when NULL). Per element, loss = -input[n, gt, d...] * weight[gt]; a
 * target equal to `ignored` contributes loss 0 and weight 0 (ODLA's int32 cannot say "none":
 * pass a value outside [0, C), such as INT32_MIN, to ignore nothing). reduction: NONE gives
 * the losses (shape of gt), SUM their sum, MEAN their sum divided by the sum of the weights of
 * the targets not ignored (NaN when every target is ignored). A target outside [0, C) that is
 * not ignored makes execution fail with ODLA_INVALID_PARAM. */
odla_value odla_NegativeLogLikeliHoodLoss(odla_value input, odla_value gt, odla_int32 ignored,
                                          odla_reduction_mode reduction, odla_value weight,
                                          odla_value_shape output_shape, odla_value_id value_id) {
  ref_nll_params p;
  odla_value in[3];
  odla_value_type out;
  const odla_value_shape *xs, *ts;
  odla_element_type t;
  int i;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = gt;
  in[2] = weight;
  if (!ref_check_operands("NegativeLogLikeliHoodLoss", 2, in) ||
      (weight && !ref_check_operands("NegativeLogLikeliHoodLoss", 1, &in[2])))
    return NULL;
  t = input->type.element_type;
  if (t != ODLA_FLOAT32 && t != ODLA_FLOAT64 && t != ODLA_FLOAT16 && t != ODLA_BFLOAT16)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "NegativeLogLikeliHoodLoss",
                    "element type %s is "
                    "not supported (float32, float64, float16, bfloat16)",
                    ref_type_name(t));
  if (gt->type.element_type != ODLA_INT32 && gt->type.element_type != ODLA_INT64)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "NegativeLogLikeliHoodLoss",
                    "gt must be int32 or int64, got %s", ref_type_name(gt->type.element_type));
  if (reduction != ODLA_REDUCE_NONE && reduction != ODLA_REDUCE_MEAN &&
      reduction != ODLA_REDUCE_SUM)
    return ref_fail(ODLA_INVALID_PARAM, "NegativeLogLikeliHoodLoss", "reduction %d is unknown",
                    (int)reduction);
  xs = &input->type.shape;
  ts = &gt->type.shape;
  memset(&p, 0, sizeof p);
  if (xs->size < 2 || ts->size != xs->size - 1)
    return ref_fail(ODLA_INVALID_PARAM, "NegativeLogLikeliHoodLoss",
                    "input %s needs rank >= 2 "
                    "and gt %s one axis less",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ts, s2, sizeof s2));
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.d = 1;
  for (i = 0; i < ts->size; ++i) {
    if (ts->dims[i] != xs->dims[i == 0 ? 0 : i + 1])
      return ref_fail(ODLA_INVALID_PARAM, "NegativeLogLikeliHoodLoss",
                      "gt %s must be the input "
                      "%s without axis 1",
                      ref_shape_str(ts, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
    if (i > 0)
      p.d *= ts->dims[i];
  }
  if (weight && (weight->type.element_type != t || weight->type.shape.size != 1 ||
                 weight->type.shape.dims[0] != p.c))
    return ref_fail(ODLA_INVALID_PARAM, "NegativeLogLikeliHoodLoss",
                    "weight %s %s must be %s "
                    "[%lld]",
                    ref_type_name(weight->type.element_type),
                    ref_shape_str(&weight->type.shape, s1, sizeof s1), ref_type_name(t),
                    (long long)p.c);
  p.ignored = ignored;
  p.reduction = reduction;
  p.index64 = gt->type.element_type == ODLA_INT64;
  memset(&out, 0, sizeof out);
  out.element_type = t;
  if (reduction == ODLA_REDUCE_NONE)
    out.shape = ref_shape_copy(ts);
  else
    out.shape.size = 0;
  if (ref_shape_conflicts(&output_shape, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "NegativeLogLikeliHoodLoss",
                    "output_shape %s differs "
                    "from the computed %s",
                    ref_shape_str(&output_shape, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  return ref_add_op("NegativeLogLikeliHoodLoss", ref_nll_run, 3, in, out, value_id, &p, sizeof p);
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_nll_describe(const ref_node *node, int64_t *n, int64_t *c, int64_t *d, int64_t *ignored,
                     odla_reduction_mode *reduction, int *index64) {
  const ref_nll_params *p = (const ref_nll_params *)node->params;
  if (node->run != ref_nll_run)
    return 0;
  *n = p->n;
  *c = p->c;
  *d = p->d;
  *ignored = p->ignored;
  *reduction = p->reduction;
  *index64 = p->index64;
  return 1;
}
