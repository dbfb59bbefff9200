/* autodiff.c: training in the reference backend: odla_CreateVariable and
 * odla_DifferentiateComputation, reverse-mode automatic differentiation over the recorded
 * nodes, with the backward kernels its gradient rules need.
 *
 * Variables: odla_CreateVariable makes an argument marked as trainable. Its data is bound by
 * id per context like any argument's (odla_BindToArgumentById), so the application owns the
 * weights and updates them in place between steps (an optimizer step is a loop over the
 * bound buffer and its gradient); nothing is copied in or kept by the computation.
 *
 * odla_DifferentiateComputation(comp), on the computation being built (the current one of
 * the calling thread, compile mode, before odla_CompileComputation):
 *   1. The loss is the computation's single output, of one float32 or float64 element;
 *      anything else is refused.
 *   2. Forward sweep: a value is active when it depends on a variable.
 *   3. Backward sweep, nodes in reverse order, seeded with dloss/dloss = 1: for each node
 *      whose result has a gradient and whose operands include an active one, the op's rule
 *      (the table at the end) appends nodes computing the gradient of each active operand;
 *      contributions to one value are summed with odla_Add. A node on that path without a
 *      rule fails with an error naming the op and the node. Rules reuse the forward builders
 *      where one computes the gradient (Gemm for products, DeConv for a convolution's input,
 *      Mul, Reshape) and add backward kernels otherwise (the ref_ad_* kernels below).
 *   4. Each variable `v` gets the output "v:grad" (its type; zeros when the loss does not
 *      depend on it), which the application binds with odla_BindToOutputById.
 * Executing with ODLA_COMPUTE_TRAINING runs both passes; ODLA_COMPUTE_INFERENCE runs the
 * forward nodes only (gradient outputs need not be bound); odla_LaunchExecutable, which has
 * no mode, runs both. The planner sees the backward nodes as ordinary readers, so forward
 * values the backward pass reads stay alive until then.
 * Element types: float32 and float64 along the differentiated path. Interpret mode is
 * refused (its ops ran as they were built); a stored executable of a differentiated
 * computation (load mode) runs both passes when launched. */
#include "autodiff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Variables ----------------------------------------------------------------------- */

odla_value odla_CreateVariable(const odla_value_type value_type, const odla_value_id value_id) {
  odla_value v;
  if (value_type.element_type != ODLA_FLOAT32 && value_type.element_type != ODLA_FLOAT64)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "CreateVariable",
                    "variable '%s': element type %s is not trainable (float32, float64)",
                    value_id ? (const char *)value_id : "", ref_type_name(value_type.element_type));
  v = odla_CreateArgument(value_type, value_id);
  if (v)
    v->is_variable = 1;
  return v;
}

/* ---- Backward kernels (float32 and float64) ------------------------------------------ */

#define REF_AD_FOR_TYPES(X) X(float, f32) X(double, f64)

/* Runs kernel `name`_f32 or _f64 by the node's first result type. */
#define REF_AD_DISPATCH(name)                                                                      \
  static odla_status name##_run(const ref_node *node, const ref_io *io) {                          \
    if (node->outputs[0]->type.element_type == ODLA_FLOAT64)                                       \
      name##_f64(node, io);                                                                        \
    else                                                                                           \
      name##_f32(node, io);                                                                        \
    return ODLA_SUCCESS;                                                                           \
  }

/* Broadcast map between a large tensor (`rank` axes of extents dims, row-major) and a small
 * one: large element (i_0, ...) pairs with small element sum(i_k * small_strides[k]).
 * Sum: small = scale * (sum of the large elements paired with it) (the gradient of a
 * broadcast). Expand: large = scale * its small element (the gradient of a reduction). */
typedef struct {
  int rank;
  int64_t dims[ODLA_MAX_DIMENSION], small_strides[ODLA_MAX_DIMENSION];
  int64_t large_count, small_count;
  double scale;
} ref_ad_map;

/* The odometer step from large element i to i + 1: `at` follows the paired small element. */
static void ref_ad_map_step(const ref_ad_map *p, int64_t *idx, int64_t *at) {
  int k;
  for (k = p->rank - 1; k >= 0; --k) {
    *at += p->small_strides[k];
    if (++idx[k] < p->dims[k])
      return;
    *at -= p->small_strides[k] * p->dims[k];
    idx[k] = 0;
  }
}

#define REF_AD_MAP(T, SFX)                                                                         \
  static void ref_ad_sum_##SFX(const ref_node *node, const ref_io *io) {                           \
    const ref_ad_map *p = (const ref_ad_map *)node->params;                                        \
    const T *large = (const T *)io->in[0];                                                         \
    T *small = (T *)io->out[0];                                                                    \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, i, at = 0;                                              \
    for (i = 0; i < p->small_count; ++i)                                                           \
      small[i] = 0;                                                                                \
    for (i = 0; i < p->large_count; ++i, ref_ad_map_step(p, idx, &at))                             \
      small[at] += (T)(p->scale * large[i]);                                                       \
  }                                                                                                \
  static void ref_ad_expand_##SFX(const ref_node *node, const ref_io *io) {                        \
    const ref_ad_map *p = (const ref_ad_map *)node->params;                                        \
    const T *small = (const T *)io->in[0];                                                         \
    T *large = (T *)io->out[0];                                                                    \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, i, at = 0;                                              \
    for (i = 0; i < p->large_count; ++i, ref_ad_map_step(p, idx, &at))                             \
      large[i] = (T)(p->scale * small[at]);                                                        \
  }
REF_AD_FOR_TYPES(REF_AD_MAP)
REF_AD_DISPATCH(ref_ad_sum)
REF_AD_DISPATCH(ref_ad_expand)

/* Relu and fused ReLU, from the forward result y: dx = y > 0 ? dy : 0. */
#define REF_AD_RELU(T, SFX)                                                                        \
  static void ref_ad_relu_##SFX(const ref_node *node, const ref_io *io) {                          \
    const T *dy = (const T *)io->in[0], *y = (const T *)io->in[1];                                 \
    T *dx = (T *)io->out[0];                                                                       \
    int64_t i, n = ref_count(&node->outputs[0]->type.shape);                                       \
    for (i = 0; i < n; ++i)                                                                        \
      dx[i] = y[i] > 0 ? dy[i] : 0;                                                                \
  }
REF_AD_FOR_TYPES(REF_AD_RELU)
REF_AD_DISPATCH(ref_ad_relu)

/* The seed dloss/dloss = 1, and the gradient outputs: a copy of the accumulated gradient,
 * or zeros where the loss does not depend on the variable. */
static odla_status ref_ad_ones_run(const ref_node *node, const ref_io *io) {
  if (node->outputs[0]->type.element_type == ODLA_FLOAT64)
    *(double *)io->out[0] = 1.0;
  else
    *(float *)io->out[0] = 1.0f;
  return ODLA_SUCCESS;
}

static odla_status ref_ad_copy_run(const ref_node *node, const ref_io *io) {
  size_t bytes = ref_bytes(&node->outputs[0]->type);
  if (io->in[0])
    memcpy(io->out[0], io->in[0], bytes);
  else
    memset(io->out[0], 0, bytes);
  return ODLA_SUCCESS;
}

/* Windows of convolution and max pooling: the input position of output cell o's tap k. */
typedef struct {
  ref_window w;
  int64_t n, c, m, group; /* MaxPool: n = planes (N * C), c = m = group = 1 */
} ref_ad_window;

/* MaxPool: dy flows to the first maximum of each window (the forward's tie rule), read
 * again from the input x; a window over padding only passes nothing. */
#define REF_AD_MAXPOOL(T, SFX)                                                                     \
  static void ref_ad_maxpool_##SFX(const ref_node *node, const ref_io *io) {                       \
    const ref_ad_window *p = (const ref_ad_window *)node->params;                                  \
    const ref_window *w = &p->w;                                                                   \
    const T *dy = (const T *)io->in[0], *x = (const T *)io->in[1];                                 \
    T *dx = (T *)io->out[0];                                                                       \
    const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);                   \
    int64_t pl, o, i;                                                                              \
    for (i = 0; i < p->n * ipix; ++i)                                                              \
      dx[i] = 0;                                                                                   \
    for (pl = 0; pl < p->n; ++pl)                                                                  \
      for (o = 0; o < opix; ++o) {                                                                 \
        const int64_t od = o / (w->out[1] * w->out[2]), oh = o / w->out[2] % w->out[1];            \
        const int64_t ow = o % w->out[2];                                                          \
        int64_t kd, kh, kw, best = -1;                                                             \
        for (kd = 0; kd < w->k[0]; ++kd)                                                           \
          for (kh = 0; kh < w->k[1]; ++kh)                                                         \
            for (kw = 0; kw < w->k[2]; ++kw) {                                                     \
              const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];                   \
              const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];                   \
              const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];                   \
              int64_t at;                                                                          \
              if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 ||                \
                  iw >= w->in[2])                                                                  \
                continue;                                                                          \
              at = pl * ipix + (id * w->in[1] + ih) * w->in[2] + iw;                               \
              if (best < 0 || x[at] > x[best])                                                     \
                best = at;                                                                         \
            }                                                                                      \
        if (best >= 0)                                                                             \
          dx[best] += dy[pl * opix + o];                                                           \
      }                                                                                            \
  }
REF_AD_FOR_TYPES(REF_AD_MAXPOOL)
REF_AD_DISPATCH(ref_ad_maxpool)

/* Conv's kernel gradient: dW[m, ci, k] = sum over images and output cells of
 * dy[n, m, o] * x[n, group(m) * C/group + ci, tap k of o], accumulated in double. */
#define REF_AD_CONV_W(T, SFX)                                                                      \
  static void ref_ad_conv_w_##SFX(const ref_node *node, const ref_io *io) {                        \
    const ref_ad_window *p = (const ref_ad_window *)node->params;                                  \
    const ref_window *w = &p->w;                                                                   \
    const T *dy = (const T *)io->in[0], *x = (const T *)io->in[1];                                 \
    T *dw = (T *)io->out[0];                                                                       \
    const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);                   \
    const int64_t cpg = p->c / p->group, mpg = p->m / p->group, kvol = ref_window_k_count(w);      \
    int64_t m, ci, k, n, o;                                                                        \
    for (m = 0; m < p->m; ++m)                                                                     \
      for (ci = 0; ci < cpg; ++ci)                                                                 \
        for (k = 0; k < kvol; ++k) {                                                               \
          const int64_t kd = k / (w->k[1] * w->k[2]), kh = k / w->k[2] % w->k[1];                  \
          const int64_t kw = k % w->k[2], c = m / mpg * cpg + ci;                                  \
          double acc = 0.0;                                                                        \
          for (n = 0; n < p->n; ++n) {                                                             \
            const T *xc = x + (n * p->c + c) * ipix, *g = dy + (n * p->m + m) * opix;              \
            for (o = 0; o < opix; ++o) {                                                           \
              const int64_t od = o / (w->out[1] * w->out[2]), oh = o / w->out[2] % w->out[1];      \
              const int64_t ow = o % w->out[2];                                                    \
              const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];                   \
              const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];                   \
              const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];                   \
              if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 ||                \
                  iw >= w->in[2])                                                                  \
                continue;                                                                          \
              acc += (double)g[o] * (double)xc[(id * w->in[1] + ih) * w->in[2] + iw];              \
            }                                                                                      \
          }                                                                                        \
          dw[(m * cpg + ci) * kvol + k] = (T)acc;                                                  \
        }                                                                                          \
  }
REF_AD_FOR_TYPES(REF_AD_CONV_W)
REF_AD_DISPATCH(ref_ad_conv_w)

/* LogSoftmax, from the forward result y: dx = dy - exp(y) * (sum of dy along the axis). */
typedef struct {
  int64_t outer, axis, inner;
} ref_ad_axis;

#define REF_AD_LOGSOFTMAX(T, SFX)                                                                  \
  static void ref_ad_logsoftmax_##SFX(const ref_node *node, const ref_io *io) {                    \
    const ref_ad_axis *p = (const ref_ad_axis *)node->params;                                      \
    const T *dy = (const T *)io->in[0], *y = (const T *)io->in[1];                                 \
    T *dx = (T *)io->out[0];                                                                       \
    int64_t o, a, i;                                                                               \
    for (o = 0; o < p->outer; ++o)                                                                 \
      for (i = 0; i < p->inner; ++i) {                                                             \
        const int64_t base = o * p->axis * p->inner + i;                                           \
        double sum = 0.0;                                                                          \
        for (a = 0; a < p->axis; ++a)                                                              \
          sum += (double)dy[base + a * p->inner];                                                  \
        for (a = 0; a < p->axis; ++a) {                                                            \
          const int64_t at = base + a * p->inner;                                                  \
          dx[at] = (T)((double)dy[at] - exp((double)y[at]) * sum);                                 \
        }                                                                                          \
      }                                                                                            \
  }
REF_AD_FOR_TYPES(REF_AD_LOGSOFTMAX)
REF_AD_DISPATCH(ref_ad_logsoftmax)

/* NegativeLogLikeliHoodLoss with respect to its input: -weight[t] * g at each target t,
 * with g the loss's gradient (per element for NONE, divided by the sum of the weights of
 * the targets not ignored for MEAN); 0 elsewhere. Targets were checked by the forward run. */
typedef struct {
  int64_t n, c, d, ignored;
  odla_reduction_mode reduction;
  int index64;
} ref_ad_nll_params;

#define REF_AD_NLL(T, SFX)                                                                         \
  static void ref_ad_nll_##SFX(const ref_node *node, const ref_io *io) {                           \
    const ref_ad_nll_params *p = (const ref_ad_nll_params *)node->params;                          \
    const T *dy = (const T *)io->in[0], *wt = (const T *)io->in[2];                                \
    T *dx = (T *)io->out[0];                                                                       \
    double weights = 0.0;                                                                          \
    int64_t j, pass;                                                                               \
    for (j = 0; j < p->n * p->c * p->d; ++j)                                                       \
      dx[j] = 0;                                                                                   \
    for (pass = p->reduction == ODLA_REDUCE_MEAN ? 0 : 1; pass < 2; ++pass)                        \
      for (j = 0; j < p->n * p->d; ++j) {                                                          \
        const int64_t t =                                                                          \
            p->index64 ? ((const int64_t *)io->in[1])[j] : ((const int32_t *)io->in[1])[j];        \
        const double w = wt ? (double)wt[t] : 1.0;                                                 \
        double g;                                                                                  \
        if (t == p->ignored || t < 0 || t >= p->c)                                                 \
          continue;                                                                                \
        if (pass == 0) {                                                                           \
          weights += w;                                                                            \
          continue;                                                                                \
        }                                                                                          \
        g = p->reduction == ODLA_REDUCE_NONE ? (double)dy[j] : (double)dy[0];                      \
        if (p->reduction == ODLA_REDUCE_MEAN)                                                      \
          g /= weights;                                                                            \
        dx[(j / p->d * p->c + t) * p->d + j % p->d] = (T)(-w * g);                                 \
      }                                                                                            \
  }
REF_AD_FOR_TYPES(REF_AD_NLL)
REF_AD_DISPATCH(ref_ad_nll)

/* ---- Building the backward pass ------------------------------------------------------ */

typedef struct {
  odla_computation comp;
  int num_values;        /* values of the forward pass */
  unsigned char *active; /* by value index: depends on a variable */
  odla_value *grad;      /* by value index: the gradient summed so far, or NULL */
  const ref_node *node;  /* the node whose rule runs */
} ref_ad;

static const char *const kOp = "DifferentiateComputation";

static odla_value_shape ref_ad_any_shape(void) {
  odla_value_shape s;
  memset(&s, 0, sizeof s);
  s.size = -1; /* undefined: the builder infers it */
  return s;
}

/* The id of a gradient contribution to `v` made by the current node's rule. */
static odla_value_id ref_ad_id(const ref_ad *ad, odla_value v, char *buf, size_t cap) {
  ref_snprintf(buf, cap, "%s:grad@%d", v->id, ad->node->index);
  return ref_made_id(buf);
}

/* Appends a backward-kernel node of one result. */
static odla_value ref_ad_op(const char *op, ref_kernel run, int n, const odla_value *in,
                            odla_value_type type, odla_value_id id, const void *params,
                            size_t params_size) {
  int i;
  for (i = 0; i < n; ++i)
    if (in[i] && !ref_check_operands(op, 1, &in[i]))
      return NULL;
  return ref_add_op(op, run, n, in, type, id, params, params_size);
}

/* Adds `g` to the gradient of `v`. Returns 0 after an error (recorded). */
static int ref_ad_add(ref_ad *ad, odla_value v, odla_value g) {
  char buf[512];
  odla_value *slot;
  if (!g)
    return 0;
  slot = &ad->grad[v->index];
  if (!*slot) {
    *slot = g;
    return 1;
  }
  ref_snprintf(buf, sizeof buf, "%s:grad+%d", v->id, ad->node->index);
  *slot = odla_Add(*slot, g, ref_made_id(buf));
  return *slot != NULL;
}

/* The map between `large` and `small`, whose axis k is large's axis axis_of[k] (the others
 * broadcast). */
static void ref_ad_make_map(const odla_value_shape *large, const odla_value_shape *small,
                            const int *axis_of, double scale, ref_ad_map *p) {
  int64_t stride = 1, small_stride[ODLA_MAX_DIMENSION];
  int i, k;
  memset(p, 0, sizeof *p);
  for (k = small->size - 1; k >= 0; --k) {
    small_stride[k] = stride;
    stride *= small->dims[k];
  }
  p->rank = large->size;
  for (i = 0; i < large->size; ++i) {
    p->dims[i] = large->dims[i];
    for (k = 0; k < small->size; ++k)
      if (axis_of[k] == i && small->dims[k] == large->dims[i])
        p->small_strides[i] = small_stride[k];
  }
  p->large_count = ref_count(large);
  p->small_count = ref_count(small);
  p->scale = scale;
}

/* scale * dy summed down to the shape of `v`, numpy-broadcast (aligned at the last axis). */
static odla_value ref_ad_unbroadcast(ref_ad *ad, odla_value dy, odla_value v, double scale) {
  int axis_of[ODLA_MAX_DIMENSION], k;
  ref_ad_map p;
  char buf[512];
  if (scale == 1.0 && ref_same_shape(&dy->type.shape, &v->type.shape))
    return dy;
  for (k = 0; k < v->type.shape.size; ++k)
    axis_of[k] = dy->type.shape.size - v->type.shape.size + k;
  ref_ad_make_map(&dy->type.shape, &v->type.shape, axis_of, scale, &p);
  return ref_ad_op("GradSum", ref_ad_sum_run, 1, &dy, ref_type_of(v),
                   ref_ad_id(ad, v, buf, sizeof buf), &p, sizeof p);
}

/* ---- Gradient rules: each adds the gradients of the node's active operands, given dy, the
 * gradient of its result. Return 0 after an error (recorded). ---------------------------- */

static int ref_ad_active(const ref_ad *ad, odla_value v) {
  return v && v->index < ad->num_values && ad->active[v->index];
}

static int ref_ad_gemm(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value a = n->inputs[0], b = n->inputs[1], c = n->inputs[2];
  int ta, tb, ok = 1;
  float alpha, beta;
  char buf[512];
  if (!ref_gemm_describe(n, &ta, &tb, &alpha, &beta)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp, "node %d (Gemm) is not the reference Gemm kernel", n->index);
    return 0;
  }
  if (ref_ad_active(ad, a))
    ok &= ref_ad_add(ad, a,
                     ta ? odla_Gemm(b, tb, dy, 1, alpha, 0.0f, NULL, ref_ad_any_shape(),
                                    ref_ad_id(ad, a, buf, sizeof buf))
                        : odla_Gemm(dy, 0, b, !tb, alpha, 0.0f, NULL, ref_ad_any_shape(),
                                    ref_ad_id(ad, a, buf, sizeof buf)));
  if (ok && ref_ad_active(ad, b))
    ok &= ref_ad_add(ad, b,
                     tb ? odla_Gemm(dy, 1, a, ta, alpha, 0.0f, NULL, ref_ad_any_shape(),
                                    ref_ad_id(ad, b, buf, sizeof buf))
                        : odla_Gemm(a, !ta, dy, 0, alpha, 0.0f, NULL, ref_ad_any_shape(),
                                    ref_ad_id(ad, b, buf, sizeof buf)));
  if (ok && ref_ad_active(ad, c) && beta != 0.0f)
    ok &= ref_ad_add(ad, c, ref_ad_unbroadcast(ad, dy, c, beta));
  return ok;
}

static odla_value ref_ad_relu_grad(ref_ad *ad, odla_value dy, odla_value y, odla_value x) {
  odla_value in[2];
  char buf[512];
  in[0] = dy;
  in[1] = y;
  return ref_ad_op("ReluGrad", ref_ad_relu_run, 2, in, ref_type_of(dy),
                   ref_ad_id(ad, x, buf, sizeof buf), NULL, 0);
}

static int ref_ad_relu(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  return ref_ad_add(ad, n->inputs[0], ref_ad_relu_grad(ad, dy, n->outputs[0], n->inputs[0]));
}

/* ExtGemm / ExtConv's epilogue: y = act(product + residual). */
static int ref_ad_epilogue(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_ext_fused_activation act;
  odla_value d;
  int ok = 1;
  if (!ref_epilogue_describe(n, &act) ||
      (act != ODLA_EXT_FUSED_NONE && act != ODLA_EXT_FUSED_RELU)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp,
             "node %d (%s) producing '%s': fused activation %d has "
             "no gradient rule (NONE and RELU have)",
             n->index, n->op, n->outputs[0]->id, (int)act);
    return 0;
  }
  d = act == ODLA_EXT_FUSED_RELU ? ref_ad_relu_grad(ad, dy, n->outputs[0], n->inputs[0]) : dy;
  if (ref_ad_active(ad, n->inputs[0]))
    ok &= ref_ad_add(ad, n->inputs[0], d);
  if (ok && ref_ad_active(ad, n->inputs[1]))
    ok &= ref_ad_add(ad, n->inputs[1], d);
  return ok;
}

static int ref_ad_conv(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value x = n->inputs[0], k = n->inputs[1], bias = n->inputs[2], in[2];
  ref_ad_window p;
  char buf[512];
  int ok = 1, i, sp = x->type.shape.size - 2;
  memset(&p, 0, sizeof p);
  if (!ref_conv_describe(n, &p.w, &p.group)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp,
             "node %d (Conv) producing '%s': only the channels-first "
             "Conv has a gradient rule",
             n->index, n->outputs[0]->id);
    return 0;
  }
  p.n = x->type.shape.dims[0];
  p.c = x->type.shape.dims[1];
  p.m = k->type.shape.dims[0];
  if (ref_ad_active(ad, x)) { /* the transposed convolution of dy with the same kernel */
    odla_uint32 st[REF_SPATIAL], dil[REF_SPATIAL], pf[REF_SPATIAL], pb[REF_SPATIAL];
    for (i = 0; i < sp; ++i) {
      const int j = REF_SPATIAL - sp + i;
      st[i] = (odla_uint32)p.w.stride[j];
      dil[i] = (odla_uint32)p.w.dil[j];
      pf[i] = (odla_uint32)p.w.pad[j];
      pb[i] = (odla_uint32)p.w.pad_end[j];
    }
    ok &= ref_ad_add(ad, x,
                     odla_DeConv(dy, ODLA_CHANNELS_FIRST, (odla_uint32)p.group, k, ODLA_IOS, st,
                                 dil, pf, pb, NULL, ref_type_of(x).shape,
                                 ref_ad_id(ad, x, buf, sizeof buf)));
  }
  if (ok && ref_ad_active(ad, k)) {
    in[0] = dy;
    in[1] = x;
    ok &= ref_ad_add(ad, k,
                     ref_ad_op("ConvKernelGrad", ref_ad_conv_w_run, 2, in, ref_type_of(k),
                               ref_ad_id(ad, k, buf, sizeof buf), &p, sizeof p));
  }
  if (ok && ref_ad_active(ad, bias)) { /* dy summed over images and output cells */
    int axis_of = 1;
    ref_ad_map m;
    ref_ad_make_map(&dy->type.shape, &bias->type.shape, &axis_of, 1.0, &m);
    ok &= ref_ad_add(ad, bias,
                     ref_ad_op("GradSum", ref_ad_sum_run, 1, &dy, ref_type_of(bias),
                               ref_ad_id(ad, bias, buf, sizeof buf), &m, sizeof m));
  }
  return ok;
}

static int ref_ad_maxpool(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value x = n->inputs[0], in[2];
  ref_ad_window p;
  char buf[512];
  memset(&p, 0, sizeof p);
  if (!ref_maxpool_describe(n, &p.w)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp,
             "node %d (%s) producing '%s': only the channels-first "
             "max pooling has a gradient rule",
             n->index, n->op, n->outputs[0]->id);
    return 0;
  }
  p.n = x->type.shape.dims[0] * x->type.shape.dims[1];
  p.c = p.m = p.group = 1;
  in[0] = dy;
  in[1] = x;
  return ref_ad_add(ad, x,
                    ref_ad_op("MaxPoolGrad", ref_ad_maxpool_run, 2, in, ref_type_of(x),
                              ref_ad_id(ad, x, buf, sizeof buf), &p, sizeof p));
}

static int ref_ad_reshape(ref_ad *ad, odla_value dy) {
  odla_value x = ad->node->inputs[0];
  char buf[512];
  return ref_ad_add(ad, x,
                    odla_Reshape(dy, ref_type_of(x).shape, ref_ad_id(ad, x, buf, sizeof buf)));
}

/* Add, Sub, Mul with numpy broadcasting. */
static int ref_ad_binary(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  int k, ok = 1;
  char buf[512];
  for (k = 0; k < 2 && ok; ++k) {
    odla_value v = n->inputs[k], g = dy;
    if (!ref_ad_active(ad, v))
      continue;
    if (strcmp(n->op, "Mul") == 0)
      g = odla_Mul(dy, n->inputs[1 - k], ref_ad_id(ad, v, buf, sizeof buf));
    ok &= g && ref_ad_add(
                   ad, v,
                   ref_ad_unbroadcast(ad, g, v, k == 1 && strcmp(n->op, "Sub") == 0 ? -1.0 : 1.0));
  }
  return ok;
}

static int ref_ad_reduce(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value x = n->inputs[0];
  ref_ad_map p;
  char buf[512];
  memset(&p, 0, sizeof p);
  if (!ref_reduce_describe(n, &p.rank, p.dims, p.small_strides, &p.scale)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp, "node %d (%s) is not the reference reduction kernel",
             n->index, n->op);
    return 0;
  }
  p.large_count = ref_count(&x->type.shape);
  p.small_count = ref_count(&dy->type.shape);
  return ref_ad_add(ad, x,
                    ref_ad_op("GradExpand", ref_ad_expand_run, 1, &dy, ref_type_of(x),
                              ref_ad_id(ad, x, buf, sizeof buf), &p, sizeof p));
}

static int ref_ad_logsoftmax(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value in[2];
  ref_ad_axis p;
  char buf[512];
  if (!ref_logsoftmax_describe(n, &p.outer, &p.axis, &p.inner)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp, "node %d (LogSoftmax) is not the reference kernel",
             n->index);
    return 0;
  }
  in[0] = dy;
  in[1] = n->outputs[0];
  return ref_ad_add(ad, n->inputs[0],
                    ref_ad_op("LogSoftmaxGrad", ref_ad_logsoftmax_run, 2, in, ref_type_of(dy),
                              ref_ad_id(ad, n->inputs[0], buf, sizeof buf), &p, sizeof p));
}

static int ref_ad_nll(ref_ad *ad, odla_value dy) {
  const ref_node *n = ad->node;
  odla_value in[3];
  ref_ad_nll_params p;
  char buf[512];
  memset(&p, 0, sizeof p);
  if (!ref_nll_describe(n, &p.n, &p.c, &p.d, &p.ignored, &p.reduction, &p.index64)) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp, "node %d (%s) is not the reference kernel", n->index, n->op);
    return 0;
  }
  if (ref_ad_active(ad, n->inputs[2])) {
    ref_fail(ODLA_UNSUPPORTED_OP, kOp,
             "node %d (%s): its class weights depend on a variable; "
             "only the gradient with respect to the input has a rule",
             n->index, n->op);
    return 0;
  }
  in[0] = dy;
  in[1] = n->inputs[1];
  in[2] = n->inputs[2];
  return ref_ad_add(ad, n->inputs[0],
                    ref_ad_op("NegativeLogLikeliHoodLossGrad", ref_ad_nll_run, 3, in,
                              ref_type_of(n->inputs[0]),
                              ref_ad_id(ad, n->inputs[0], buf, sizeof buf), &p, sizeof p));
}

/* The ops with a gradient rule, by the name their nodes carry (ExtGemm and ExtConv: the
 * epilogue node after their Gemm or Conv node). */
static const struct {
  const char *op;
  int (*rule)(ref_ad *ad, odla_value dy);
} kRules[] = {
    {"Add", ref_ad_binary},
    {"Conv", ref_ad_conv},
    {"ExtConv", ref_ad_epilogue},
    {"ExtGemm", ref_ad_epilogue},
    {"ExtMaxPool", ref_ad_maxpool},
    {"Gemm", ref_ad_gemm},
    {"LogSoftmax", ref_ad_logsoftmax},
    {"MaxPool", ref_ad_maxpool},
    {"Mul", ref_ad_binary},
    {"NegativeLogLikeliHoodLoss", ref_ad_nll},
    {"ReduceMean", ref_ad_reduce},
    {"ReduceSum", ref_ad_reduce},
    {"Relu", ref_ad_relu},
    {"Reshape", ref_ad_reshape},
    {"Sub", ref_ad_binary},
};

/* Step 3 for one node. */
static int ref_ad_node(ref_ad *ad, const ref_node *n) {
  odla_value dy;
  size_t r;
  int k, any = 0;
  char s1[128];
  for (k = 0; k < n->num_inputs; ++k)
    any |= ref_ad_active(ad, n->inputs[k]);
  for (k = 0; k < n->num_outputs; ++k)
    if (ad->grad[n->outputs[k]->index] && k > 0) {
      ref_fail(ODLA_UNSUPPORTED_OP, kOp,
               "node %d (%s) has several results; no rule takes "
               "gradients of result %d ('%s')",
               n->index, n->op, k, n->outputs[k]->id);
      return 0;
    }
  dy = n->num_outputs ? ad->grad[n->outputs[0]->index] : NULL;
  if (!any || !dy)
    return 1; /* no variable behind it, or the loss does not read it */
  for (k = 0; k < n->num_inputs; ++k)
    if (ref_ad_active(ad, n->inputs[k]) && n->inputs[k]->type.element_type != ODLA_FLOAT32 &&
        n->inputs[k]->type.element_type != ODLA_FLOAT64) {
      ref_fail(ODLA_UNSUPPORTED_DATATYPE, kOp,
               "node %d (%s): operand %d ('%s') is %s %s; "
               "gradients are float32 or float64",
               n->index, n->op, k, n->inputs[k]->id, ref_type_name(n->inputs[k]->type.element_type),
               ref_shape_str(&n->inputs[k]->type.shape, s1, sizeof s1));
      return 0;
    }
  ad->node = n;
  for (r = 0; r < sizeof kRules / sizeof kRules[0]; ++r)
    if (strcmp(kRules[r].op, n->op) == 0)
      return kRules[r].rule(ad, dy);
  ref_fail(ODLA_UNSUPPORTED_OP, kOp,
           "op %s has no gradient rule (node %d producing '%s' lies "
           "between a variable and the loss)",
           n->op, n->index, n->outputs[0]->id);
  return 0;
}

/* Steps 1 and 2, and the checks before: returns the loss, or NULL after an error. */
static odla_value ref_ad_prepare(ref_ad *ad) {
  odla_computation comp = ad->comp;
  odla_value loss = NULL;
  int i, k, outputs = 0;
  for (i = 0; i < comp->num_values; ++i)
    if (comp->values[i]->is_output) {
      loss = comp->values[i];
      ++outputs;
    }
  if (outputs != 1)
    return ref_fail(ODLA_INVALID_PARAM, kOp,
                    "the computation has %d outputs; it needs exactly "
                    "one, the scalar loss",
                    outputs);
  if ((loss->type.element_type != ODLA_FLOAT32 && loss->type.element_type != ODLA_FLOAT64) ||
      ref_count(&loss->type.shape) != 1) {
    char s1[128];
    return ref_fail(ODLA_INVALID_PARAM, kOp,
                    "the output '%s' is %s %s; the loss must be one "
                    "float32 or float64 element",
                    loss->id, ref_type_name(loss->type.element_type),
                    ref_shape_str(&loss->type.shape, s1, sizeof s1));
  }
  for (i = 0; i < comp->num_values; ++i)
    ad->active[i] = comp->values[i]->is_variable != 0;
  for (i = 0; i < comp->num_nodes; ++i) {
    const ref_node *n = comp->nodes[i];
    int any = 0;
    for (k = 0; k < n->num_inputs; ++k)
      any |= ref_ad_active(ad, n->inputs[k]);
    for (k = 0; k < n->num_outputs; ++k)
      ad->active[n->outputs[k]->index] = (unsigned char)any;
  }
  return loss;
}

/* Step 4: the output "<id>:grad" of each variable. */
static int ref_ad_outputs(ref_ad *ad) {
  odla_computation comp = ad->comp;
  char buf[512];
  int i, j;
  for (i = 0; i < ad->num_values; ++i) {
    odla_value v = comp->values[i], g;
    if (!v->is_variable)
      continue;
    ref_snprintf(buf, sizeof buf, "%s:grad", v->id);
    for (j = 0; j < comp->num_values; ++j)
      if (strcmp(comp->values[j]->id, buf) == 0) {
        ref_fail(ODLA_INVALID_PARAM, kOp,
                 "the gradient id '%s' of variable '%s' is taken by "
                 "another value",
                 buf, v->id);
        return 0;
      }
    g = ref_ad_op("GradOutput", ref_ad_copy_run, 1, &ad->grad[i], ref_type_of(v), ref_made_id(buf),
                  NULL, 0);
    if (!g)
      return 0;
    g->is_output = 1;
  }
  return 1;
}

odla_status odla_DifferentiateComputation(odla_computation computation) {
  ref_ad ad;
  odla_value loss, seed;
  char buf[512];
  int i, ok = 1;
  if (!computation)
    return ODLA_INVALID_PARAM;
  if (computation->error != ODLA_SUCCESS)
    return computation->error;
  if (computation != ref_current()) {
    ref_report(ODLA_LOG_LEVEL_ERROR, kOp,
               "the computation is not the current one of this "
               "thread (differentiate it where it was built, before building another)");
    return ODLA_INVALID_PARAM;
  }
  if (computation->interpret || computation->compiled || computation->num_forward_nodes ||
      computation->regions) {
    /* Reported without recording an error: the computation itself stays usable. */
    ref_report(ODLA_LOG_LEVEL_ERROR, kOp, "the computation is %s",
               computation->interpret ? "in interpret mode, whose ops already ran"
               : computation->compiled
                   ? "already compiled (differentiate before odla_CompileComputation)"
               : computation->regions ? "inside an open If or Loop region"
                                      : "already differentiated");
    return ODLA_INVALID_PARAM;
  }
  memset(&ad, 0, sizeof ad);
  ad.comp = computation;
  ad.num_values = computation->num_values;
  ad.active = (unsigned char *)ref_calloc((size_t)ad.num_values + 1, 1);
  ad.grad = (odla_value *)ref_calloc((size_t)ad.num_values + 1, sizeof *ad.grad);
  if (!ad.active || !ad.grad) {
    ref_free(ad.active);
    ref_free(ad.grad);
    ref_fail(ODLA_MEM_ERROR, kOp, "out of memory");
    return ODLA_MEM_ERROR;
  }
  computation->num_forward_nodes = computation->num_nodes;
  loss = ref_ad_prepare(&ad);
  if (loss) {
    ref_snprintf(buf, sizeof buf, "%s:grad", loss->id);
    seed = ref_ad_op("GradSeed", ref_ad_ones_run, 0, NULL, ref_type_of(loss), ref_made_id(buf),
                     NULL, 0);
    ad.grad[loss->index] = seed;
    ok = seed != NULL;
    for (i = computation->num_forward_nodes - 1; i >= 0 && ok; --i)
      ok = ref_ad_node(&ad, computation->nodes[i]);
    if (ok)
      ok = ref_ad_outputs(&ad);
  }
  ref_free(ad.active);
  ref_free(ad.grad);
  return computation->error != ODLA_SUCCESS ? computation->error
                                            : (ok ? ODLA_SUCCESS : ODLA_INTERNAL_LOGIC_ERR);
}
