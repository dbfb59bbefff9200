/* ops_elementwise.c: unary elementwise ops of the reference backend: activations and math
 * (float32, float64), and value copies. */
#include "ref.h"

#include <math.h>
#include <string.h>

/* ---- Unary ------------------------------------------------------------------------- */

typedef struct {
  int64_t n;
  float alpha, beta; /* LeakyRelu: alpha; Clamp: [alpha, beta] */
} ref_unary_params;

#define REF_UNARY_KERNEL(name, expr_f, expr_d)                                                  \
  static odla_status ref_##name(const ref_node *node, const ref_io *io) {                      \
    const ref_unary_params *p = (const ref_unary_params *)node->params;                         \
    int64_t i;                                                                                  \
    if (node->inputs[0]->type.element_type == ODLA_FLOAT32) {                                   \
      const float *x = (const float *)io->in[0];                                                \
      float *y = (float *)io->out[0];                                                           \
      const float alpha = p->alpha, beta = p->beta;                                             \
      (void)alpha;                                                                              \
      (void)beta;                                                                               \
      for (i = 0; i < p->n; ++i) {                                                              \
        const float v = x[i];                                                                   \
        y[i] = expr_f;                                                                          \
      }                                                                                         \
    } else {                                                                                    \
      const double *x = (const double *)io->in[0];                                              \
      double *y = (double *)io->out[0];                                                         \
      const double alpha = p->alpha, beta = p->beta;                                            \
      (void)alpha;                                                                              \
      (void)beta;                                                                               \
      for (i = 0; i < p->n; ++i) {                                                              \
        const double v = x[i];                                                                  \
        y[i] = expr_d;                                                                          \
      }                                                                                         \
    }                                                                                           \
    return ODLA_SUCCESS;                                                                        \
  }

REF_UNARY_KERNEL(relu, v > 0.0f ? v : 0.0f, v > 0.0 ? v : 0.0)
REF_UNARY_KERNEL(sigmoid, v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v)),
                 v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v)))
REF_UNARY_KERNEL(tanh, tanhf(v), tanh(v))
REF_UNARY_KERNEL(leaky_relu, v >= 0.0f ? v : alpha * v, v >= 0.0 ? v : alpha * v)
REF_UNARY_KERNEL(clamp, v < alpha ? alpha : (v > beta ? beta : v),
                 v < alpha ? alpha : (v > beta ? beta : v))

static odla_value ref_unary(const char *op, ref_kernel run, odla_value x, float alpha, float beta,
                            odla_value_id id) {
  ref_unary_params p;
  if (!ref_check_operands(op, 1, &x))
    return NULL;
  if (x->type.element_type != ODLA_FLOAT32 && x->type.element_type != ODLA_FLOAT64)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported (float32, "
                    "float64)", ref_type_name(x->type.element_type));
  p.n = ref_count(&x->type.shape);
  p.alpha = alpha;
  p.beta = beta;
  return ref_add_op(op, run, 1, &x, x->type, id, &p, sizeof p);
}

odla_value odla_Relu(odla_value input, const odla_value_id value_id) {
  return ref_unary("Relu", ref_relu, input, 0, 0, value_id);
}
odla_value odla_Sigmoid(odla_value input, const odla_value_id value_id) {
  return ref_unary("Sigmoid", ref_sigmoid, input, 0, 0, value_id);
}
odla_value odla_Tanh(odla_value x, const odla_value_id value_id) {
  return ref_unary("Tanh", ref_tanh, x, 0, 0, value_id);
}
odla_value odla_LeakyRelu(odla_value input, odla_float32 alpha, const odla_value_id value_id) {
  return ref_unary("LeakyRelu", ref_leaky_relu, input, alpha, 0, value_id);
}
odla_value odla_Clamp(odla_value input, odla_float32 lo, odla_float32 hi,
                      const odla_value_id value_id) {
  if (lo > hi)
    return ref_fail(ODLA_INVALID_PARAM, "Clamp", "lo %g exceeds hi %g", (double)lo, (double)hi);
  return ref_unary("Clamp", ref_clamp, input, lo, hi, value_id);
}

/* ---- Copy ---------------------------------------------------------------------------- */

static odla_status ref_copy(const ref_node *node, const ref_io *io) {
  size_t bytes = ref_bytes(&node->outputs[0]->type);
  if (bytes && io->out[0] != io->in[0])
    memcpy(io->out[0], io->in[0], bytes);
  return ODLA_SUCCESS;
}

odla_value odla_CloneValue(const odla_value src_value, const odla_value_id value_id) {
  if (!ref_check_operands("CloneValue", 1, &src_value))
    return NULL;
  return ref_add_op("CloneValue", ref_copy, 1, &src_value, src_value->type, value_id, NULL, 0);
}

