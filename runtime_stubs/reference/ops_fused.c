/* ops_fused.c: the fused ops of odla_ext_fused.h in the reference backend. The product runs
 * as the core op would (odla_Conv, odla_Gemm); one epilogue node then adds the residual and
 * applies the activation in a single pass, in place over the product's buffer. */
#include "autodiff.h"
#include "ref.h"
#include "ref_types.h"
#include "ref_vmath.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  int64_t n;
  odla_ext_fused_activation act;
  float alpha, beta;
} ref_epilogue_params;

/* The activations in float, each an expression of v (alpha and beta: the parameters) for
 * loops the compiler vectorizes: exp and erf are ref_vmath.h's; sigmoid is 1 / (1 + e) or
 * e / (1 + e) with e = exp(-|v|), which never overflows. Tanh is the C library's. */
#define REF_ACT_CLAMP(v) ((v) < alpha ? alpha : ((v) > beta ? beta : (v)))
#define REF_ACT_SIGMOID(v) ref_sigmoid(v)
#define REF_ACT_TANH(v) tanhf(v)
#define REF_ACT_LEAKY_RELU(v) ((v) >= 0.0f ? (v) : alpha * (v))
#define REF_ACT_HARD_SWISH(v) ((v)*ref_clamp01((v) / 6.0f + 0.5f))
#define REF_ACT_SWISH(v) ((v)*ref_sigmoid(v))
#define REF_ACT_GELU(v) (0.5f * (v) * (1.0f + ref_erff((v)*0.70710678118654752f)))

static inline float ref_sigmoid(float v) {
  const float e = ref_expf(-fabsf(v)), s = 1.0f / (1.0f + e);
  return v >= 0.0f ? s : e * s;
}
static inline float ref_clamp01(float g) { return g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g); }

/* One activation's loop: y = ACT(x (+ r)), in float. (Two loops: a load under `r ? :` in one
 * would become a masked load that some emulators fault on where r is NULL.) */
#define REF_EPILOGUE_LOOP(SFX, ACT)                                                                \
  if (r)                                                                                           \
    for (i = 0; i < p->n; ++i) {                                                                   \
      const float v = (float)REF_LOAD_##SFX(x, i) + (float)REF_LOAD_##SFX(r, i);                   \
      REF_STORE_##SFX(y, i, ACT(v));                                                               \
    }                                                                                              \
  else                                                                                             \
    for (i = 0; i < p->n; ++i) {                                                                   \
      const float v = (float)REF_LOAD_##SFX(x, i);                                                 \
      REF_STORE_##SFX(y, i, ACT(v));                                                               \
    }                                                                                              \
  return;

#define REF_EPILOGUE(E, S, C, SFX)                                                                 \
  REF_HOT static void ref_epilogue_##SFX(const ref_epilogue_params *p, const S *x, const S *r,     \
                                         S *y) {                                                   \
    const float alpha = p->alpha, beta = p->beta;                                                  \
    int64_t i;                                                                                     \
    switch (p->act) {                                                                              \
    case ODLA_EXT_FUSED_RELU: /* exact in the type: no round trip through float */                 \
      if (r)                                                                                       \
        for (i = 0; i < p->n; ++i) {                                                               \
          C v = REF_LOAD_##SFX(x, i) + REF_LOAD_##SFX(r, i);                                       \
          REF_STORE_##SFX(y, i, v > 0 ? v : 0);                                                    \
        }                                                                                          \
      else                                                                                         \
        for (i = 0; i < p->n; ++i) {                                                               \
          C v = REF_LOAD_##SFX(x, i);                                                              \
          REF_STORE_##SFX(y, i, v > 0 ? v : 0);                                                    \
        }                                                                                          \
      return;                                                                                      \
    case ODLA_EXT_FUSED_CLAMP:                                                                     \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_CLAMP)                                                        \
    case ODLA_EXT_FUSED_SIGMOID:                                                                   \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_SIGMOID)                                                      \
    case ODLA_EXT_FUSED_TANH:                                                                      \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_TANH)                                                         \
    case ODLA_EXT_FUSED_LEAKY_RELU:                                                                \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_LEAKY_RELU)                                                   \
    case ODLA_EXT_FUSED_HARD_SWISH:                                                                \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_HARD_SWISH)                                                   \
    case ODLA_EXT_FUSED_SWISH:                                                                     \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_SWISH)                                                        \
    case ODLA_EXT_FUSED_GELU:                                                                      \
      REF_EPILOGUE_LOOP(SFX, REF_ACT_GELU)                                                         \
    default: /* none: the residual sum alone */                                                    \
      REF_EPILOGUE_LOOP(SFX, )                                                                     \
    }                                                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_EPILOGUE)

static odla_status ref_epilogue_run(const ref_node *node, const ref_io *io) {
  const ref_epilogue_params *p = (const ref_epilogue_params *)node->params;
  switch (node->outputs[0]->type.element_type) {
#define REF_EPILOGUE_CASE(E, S, C, SFX)                                                            \
  case E:                                                                                          \
    ref_epilogue_##SFX(p, (const S *)io->in[0], (const S *)io->in[1], (S *)io->out[0]);            \
    break;
    REF_FOR_FLOAT_TYPES(REF_EPILOGUE_CASE)
#undef REF_EPILOGUE_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  return ODLA_SUCCESS;
}

/* Adds the epilogue node after `product`; returns its result. */
static odla_value ref_epilogue(const char *op, odla_value product, odla_value residual,
                               odla_ext_fused_activation act, float alpha, float beta,
                               odla_value_id id) {
  ref_epilogue_params p;
  odla_value in[2], v;
  char s1[128], s2[128];
  if (!product)
    return NULL;
  if (act > ODLA_EXT_FUSED_GELU)
    return ref_fail(ODLA_INVALID_PARAM, op, "unknown activation %d", (int)act);
  if (residual) {
    if (!ref_check_operands(op, 1, &residual))
      return NULL;
    if (residual->type.element_type != product->type.element_type ||
        !ref_same_shape(&residual->type.shape, &product->type.shape))
      return ref_fail(ODLA_INVALID_PARAM, op, "residual %s %s must match the product %s %s",
                      ref_type_name(residual->type.element_type),
                      ref_shape_str(&residual->type.shape, s1, sizeof s1),
                      ref_type_name(product->type.element_type),
                      ref_shape_str(&product->type.shape, s2, sizeof s2));
  }
  p.n = ref_count(&product->type.shape);
  p.act = act;
  p.alpha = alpha;
  p.beta = beta;
  in[0] = product;
  in[1] = residual;
  v = ref_add_op(op, ref_epilogue_run, 2, in, ref_type_of(product), id, &p, sizeof p);
  if (v)
    v->node->inplace_input = 0;
  return v;
}

/* The id of the product inside a fused op: "<id>/product". */
static odla_value_id ref_product_id(odla_value_id id, char *buf, size_t cap) {
  ref_snprintf(buf, cap, "%s/product", id ? (const char *)id : "");
  return ref_made_id(buf);
}

odla_value odla_ExtConv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                        odla_value kernel, odla_memory_layout kernel_layout,
                        const odla_uint32 *strides, const odla_uint32 *dilations,
                        const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                        odla_value bias, odla_value residual, odla_ext_fused_activation activation,
                        odla_float32 alpha, odla_float32 beta, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  char buf[512];
  odla_value conv = odla_Conv(input, input_layout, group, kernel, kernel_layout, strides, dilations,
                              paddings_front, paddings_back, bias, output_dims,
                              ref_product_id(value_id, buf, sizeof buf));
  return ref_epilogue("ExtConv", conv, residual, activation, alpha, beta, value_id);
}

odla_value odla_ExtGemm(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                        odla_float32 alpha, odla_float32 beta, odla_value C, odla_value residual,
                        odla_ext_fused_activation activation, odla_float32 act_alpha,
                        odla_float32 act_beta, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  char buf[512];
  odla_value gemm = odla_Gemm(A, A_transpose, B, B_transpose, alpha, beta, C, output_dims,
                              ref_product_id(value_id, buf, sizeof buf));
  return ref_epilogue("ExtGemm", gemm, residual, activation, act_alpha, act_beta, value_id);
}

/* ---- odla_Gelu (core ODLA 0.5; used by the fused ops' core decomposition) --------------- */

typedef struct {
  int64_t n;
  int approx; /* tanh approximation instead of erf */
} ref_gelu_params;

#define REF_GELU(E, S, C, SFX)                                                                     \
  static void ref_gelu_##SFX(const ref_gelu_params *p, const S *x, S *y) {                         \
    int64_t i;                                                                                     \
    for (i = 0; i < p->n; ++i) {                                                                   \
      double v = (double)REF_LOAD_##SFX(x, i);                                                     \
      double g = p->approx ? 0.5 * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))   \
                           : 0.5 * (1.0 + erf(v * 0.7071067811865476));                            \
      REF_STORE_##SFX(y, i, v *g);                                                                 \
    }                                                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_GELU)

static odla_status ref_gelu_run(const ref_node *node, const ref_io *io) {
  const ref_gelu_params *p = (const ref_gelu_params *)node->params;
  switch (node->outputs[0]->type.element_type) {
#define REF_GELU_CASE(E, S, C, SFX)                                                                \
  case E:                                                                                          \
    ref_gelu_##SFX(p, (const S *)io->in[0], (S *)io->out[0]);                                      \
    break;
    REF_FOR_FLOAT_TYPES(REF_GELU_CASE)
#undef REF_GELU_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  return ODLA_SUCCESS;
}

odla_value odla_Gelu(odla_value input, odla_bool use_approx, const odla_value_id value_id) {
  ref_gelu_params p;
  odla_value v;
  if (!ref_check_operands("Gelu", 1, &input))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Gelu", "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  p.n = ref_count(&input->type.shape);
  p.approx = use_approx != 0;
  v = ref_add_op("Gelu", ref_gelu_run, 1, &input, ref_type_of(input), value_id, &p, sizeof p);
  if (v)
    v->node->inplace_input = 0;
  return v;
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_epilogue_describe(const ref_node *node, odla_ext_fused_activation *act) {
  if (node->run != ref_epilogue_run)
    return 0;
  *act = ((const ref_epilogue_params *)node->params)->act;
  return 1;
}
