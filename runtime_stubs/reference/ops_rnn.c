/* ops_rnn.c: recurrent layers of the reference backend: odla_RNN, odla_LSTM and odla_GRU.
 *
 * Semantics (ONNX's RNN, LSTM and GRU with their default activations: f = sigmoid for
 * gates, g = h = tanh; no clipping; LSTM input and forget gates not coupled):
 *   RNN:  H_t = tanh(X_t W^T + H_{t-1} R^T + Wb + Rb)
 *   LSTM: i = f(X_t Wi^T + H_{t-1} Ri^T + Pi . C_{t-1} + Wbi + Rbi)
 *         f = f(X_t Wf^T + H_{t-1} Rf^T + Pf . C_{t-1} + Wbf + Rbf)
 *         c = g(X_t Wc^T + H_{t-1} Rc^T + Wbc + Rbc)
 *         C_t = f . C_{t-1} + i . c
 *         o = f(X_t Wo^T + H_{t-1} Ro^T + Po . C_t + Wbo + Rbo)
 *         H_t = o . h(C_t)
 *   GRU:  z = f(X_t Wz^T + H_{t-1} Rz^T + Wbz + Rbz)
 *         r = f(X_t Wr^T + H_{t-1} Rr^T + Wbr + Rbr)
 *         n = g(X_t Wh^T + (r . H_{t-1}) Rh^T + Rbh + Wbh)      linear_before_reset = 0
 *         n = g(X_t Wh^T + r . (H_{t-1} Rh^T + Rbh) + Wbh)      linear_before_reset != 0
 *         H_t = (1 - z) . n + z . H_{t-1}
 *
 * Operands: input X [T, B, I] (sequence-major); W, R and B as weight_format and gate_order
 * say (below); sequence_lens [B] (int32 or int64, optional: every sequence has T steps;
 * lengths are clamped to [0, T]); initial_h and initial_c [D, B, H] (optional: zeros); P
 * [D, 3H] peepholes in the order i, o, f whatever gate_order is (optional: zeros). D is 2 for
 * ODLA_RNN_BIDIRECTIONAL (direction 0 runs forward, 1 in reverse), else 1. X, W, R, B,
 * initial states and P share one float element type (float32, float64; float16 and bfloat16
 * compute in float32).
 *
 * Weights: ODLA_RNN_LDGOI: W [D, G*H, I], R [D, G*H, H] (ONNX's layout);
 * ODLA_RNN_LDIGO: W [D, I, G*H], R [D, H, G*H]. weight_dims, when defined, is W's shape.
 * B is [D, 2*G*H]: the input biases Wb then the recurrence biases Rb. Gates are stacked in
 * gate_order: LSTM accepts ODLA_RNN_IOFC (ONNX's order), IFCO, IFOC and ICOF; GRU
 * ODLA_RNN_URO (update z, reset r, hidden h: ONNX's order); RNN has one gate.
 *
 * Results: Y [T, D, B, H], zero at steps t >= sequence_lens[b], always first; then, as
 * `outputs` asks, Y_h [D, B, H] (hidden state after each sequence's last step; for the
 * reverse direction, after step 0) and Y_c [D, B, H] (LSTM cell state). RNN and GRU accept
 * ODLA_RNN_NO_STATE and ODLA_RNN_HIDDEN_STATE. value_ids name the results in that order.
 *
 * odla_ExtRNN, odla_ExtLSTM and odla_ExtGRU (odla_ext_recurrent.h) are the same ops with a
 * choice of activations f, g, h, clipping of every gate's input, and (LSTM) input_forget:
 * the forget gate becomes 1 - i. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

typedef enum { REF_RNN, REF_LSTM, REF_GRU } ref_rnn_kind;

/* Operands: X, W, R, B, sequence_lens, initial_h, initial_c, P, activation_params. */
enum { REF_RNN_OPERANDS = 9, REF_RNN_MAX_RESULTS = 3, REF_RNN_MAX_ACTS = 3 };

typedef struct {
  int kind; /* odla_ext_rnn_activation */
  double alpha, beta;
} ref_rnn_act;

typedef struct {
  ref_rnn_kind kind;
  odla_element_type type, seq_type;
  odla_rnn_direction direction;
  int64_t seq, batch, input, hidden, dirs, gates; /* T, B, I, H, D, G */
  int igo;                                        /* ODLA_RNN_LDIGO weights */
  int64_t gate_pos[4]; /* block of each gate: LSTM i, o, f, c; GRU z, r, h; RNN 0 */
  int linear_before_reset, input_forget;
  int act[2][REF_RNN_MAX_ACTS]; /* per direction: f, g, h */
  int num_acts;                 /* activations per direction */
  double clip;                  /* 0: none */
  int out_h, out_c;             /* result index of Y_h and Y_c; 0 when not returned */
  /* Scratch, byte offsets: lengths, combined bias, input projections, gate sums, states, GRU
   * reset products, GEMM packing, and float copies of float16/bfloat16 operands/results. */
  size_t off_len, off_bias, off_xw, off_g, off_h, off_c, off_rh, off_gh, off_pack;
  size_t off_in[REF_RNN_OPERANDS], off_out[REF_RNN_MAX_RESULTS];
} ref_rnn_params;

/* c[m x n] = a[m x k] op(b); op(b) is b^T with b [n x k] when trans_b, else b [k x n]. The
 * float32 form is the blocked ref_sgemm; the float64 form plain loops over contiguous rows. */
static void ref_rnn_gemm_f(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                           const float *b, int64_t ldb, int trans_b, float *c, int64_t ldc,
                           void *pack) {
  ref_sgemm(0, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc, (float *)pack);
}

static void ref_rnn_gemm_d(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                           const double *b, int64_t ldb, int trans_b, double *c, int64_t ldc,
                           void *pack) {
  int64_t i, j, q;
  (void)pack;
  for (i = 0; i < m; ++i) {
    const double *ai = a + i * lda;
    double *ci = c + i * ldc;
    if (trans_b) {
      for (j = 0; j < n; ++j) {
        const double *bj = b + j * ldb;
        double sum = 0.0;
        for (q = 0; q < k; ++q)
          sum += ai[q] * bj[q];
        ci[j] = sum;
      }
      continue;
    }
    for (j = 0; j < n; ++j)
      ci[j] = 0.0;
    for (q = 0; q < k; ++q) {
      const double aiq = ai[q];
      const double *bq = b + q * ldb;
      for (j = 0; j < n; ++j)
        ci[j] += aiq * bq[j];
    }
  }
}

/* The recurrence in compute type C. in[]: X, W, R, B, (sequence_lens unused), initial_h,
 * initial_c, P in C (NULL when absent); out[]: Y, Y_h, Y_c. len: per-batch lengths or NULL.
 * acts[d * REF_RNN_MAX_ACTS + k]: activation k (f, g, h) of direction d. */
#define REF_RNN_DEFINE(C, SFX, EXP, TANH, LOG1P, FABS)                                             \
  static C ref_rnn_act_##SFX(const ref_rnn_act *a, C v) {                                          \
    const C alpha = (C)a->alpha, beta = (C)a->beta;                                                \
    C y;                                                                                           \
    switch (a->kind) {                                                                             \
    case ODLA_EXT_ACT_RELU:                                                                        \
      return v > 0 ? v : (C)0;                                                                     \
    case ODLA_EXT_ACT_TANH:                                                                        \
      return TANH(v);                                                                              \
    case ODLA_EXT_ACT_SIGMOID:                                                                     \
      return v >= 0 ? (C)1 / ((C)1 + EXP(-v)) : EXP(v) / ((C)1 + EXP(v));                          \
    case ODLA_EXT_ACT_AFFINE:                                                                      \
      return alpha * v + beta;                                                                     \
    case ODLA_EXT_ACT_LEAKY_RELU:                                                                  \
      return v >= 0 ? v : alpha * v;                                                               \
    case ODLA_EXT_ACT_THRESHOLDED_RELU:                                                            \
      return v > alpha ? v : (C)0;                                                                 \
    case ODLA_EXT_ACT_SCALED_TANH:                                                                 \
      return alpha * TANH(beta * v);                                                               \
    case ODLA_EXT_ACT_HARD_SIGMOID:                                                                \
      y = alpha * v + beta;                                                                        \
      return y < 0 ? (C)0 : (y > 1 ? (C)1 : y);                                                    \
    case ODLA_EXT_ACT_ELU:                                                                         \
      return v >= 0 ? v : alpha * (EXP(v) - (C)1);                                                 \
    case ODLA_EXT_ACT_SOFTSIGN:                                                                    \
      return v / ((C)1 + FABS(v));                                                                 \
    default: /* ODLA_EXT_ACT_SOFTPLUS */                                                           \
      return v > 0 ? v + LOG1P(EXP(-v)) : LOG1P(EXP(v));                                           \
    }                                                                                              \
  }                                                                                                \
  static void ref_rnn_run_##SFX(const ref_rnn_params *p, const ref_rnn_act *acts,                  \
                                const C *const *in, C *const *out, const int64_t *len,             \
                                unsigned char *scratch) {                                          \
    const int64_t T = p->seq, B = p->batch, I = p->input, H = p->hidden, D = p->dirs;              \
    const int64_t GH = p->gates * H, TB = T * B;                                                   \
    const int gru_reset_first = p->kind == REF_GRU && !p->linear_before_reset;                     \
    const C clip = (C)p->clip;                                                                     \
    C *bias = (C *)(scratch + p->off_bias), *xw = (C *)(scratch + p->off_xw);                      \
    C *g = (C *)(scratch + p->off_g), *h = (C *)(scratch + p->off_h);                              \
    C *c = (C *)(scratch + p->off_c), *rh = (C *)(scratch + p->off_rh);                            \
    C *gh = (C *)(scratch + p->off_gh);                                                            \
    void *pack = scratch + p->off_pack;                                                            \
    const int64_t pz = p->gate_pos[0] * H, pr = p->gate_pos[1] * H, ph = p->gate_pos[2] * H;       \
    const int64_t pi = p->gate_pos[0] * H, po = p->gate_pos[1] * H, pf = p->gate_pos[2] * H;       \
    const int64_t pc = p->gate_pos[3] * H;                                                         \
    int64_t dir, s, b, j, row;                                                                     \
    if (len)                                                                                       \
      memset(out[0], 0, (size_t)(T * D * B * H) * sizeof(C));                                      \
    for (dir = 0; dir < D; ++dir) {                                                                \
      const int reverse = p->direction == ODLA_RNN_REVERSE || dir == 1;                            \
      const ref_rnn_act *f = acts + dir * REF_RNN_MAX_ACTS, *ga = f + 1, *ha = f + 2;              \
      const C *w = in[1] + dir * GH * I, *r = in[2] + dir * GH * H;                                \
      const C *wb = in[3] ? in[3] + dir * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;                \
      const C *peep = in[7] ? in[7] + dir * 3 * H : NULL;                                          \
      /* R's h-gate block, for the GRU's (r . H) Rh^T. */                                          \
      const C *r_h = p->igo ? r + ph : r + ph * H;                                                 \
      /* Biases folded into the input projection; the GRU's Rbh stays apart (it is inside          \
       * the reset product when linear_before_reset). */                                           \
      for (j = 0; j < GH; ++j)                                                                     \
        bias[j] =                                                                                  \
            wb ? wb[j] + (p->kind == REF_GRU && j >= ph && j < ph + H ? (C)0 : rb[j]) : (C)0;      \
      /* Input projections of every step at once: xw[t*B + b] = X[t, b] W^T + bias. */             \
      ref_rnn_gemm_##SFX(TB, GH, I, in[0], I, w, p->igo ? GH : I, !p->igo, xw, GH, pack);          \
      for (row = 0; row < TB; ++row)                                                               \
        for (j = 0; j < GH; ++j)                                                                   \
          xw[row * GH + j] += bias[j];                                                             \
      for (j = 0; j < B * H; ++j) {                                                                \
        h[j] = in[5] ? in[5][dir * B * H + j] : (C)0;                                              \
        c[j] = in[6] ? in[6][dir * B * H + j] : (C)0;                                              \
      }                                                                                            \
      for (s = 0; s < T; ++s) {                                                                    \
        ref_rnn_gemm_##SFX(B, GH, H, h, H, r, p->igo ? GH : H, !p->igo, g, GH, pack);              \
        for (b = 0; b < B; ++b) {                                                                  \
          const int64_t n = len ? len[b] : T, t = reverse ? n - 1 - s : s;                         \
          const C *xr;                                                                             \
          C *gr = g + b * GH, *hb = h + b * H, *cb = c + b * H;                                    \
          if (s >= n) {                                                                            \
            if (gru_reset_first)                                                                   \
              for (j = 0; j < H; ++j)                                                              \
                rh[b * H + j] = (C)0;                                                              \
            continue;                                                                              \
          }                                                                                        \
          xr = xw + (t * B + b) * GH;                                                              \
          if (p->kind == REF_RNN) {                                                                \
            for (j = 0; j < H; ++j)                                                                \
              hb[j] = ref_rnn_act_##SFX(f, REF_RNN_CLIP(xr[j] + gr[j]));                           \
          } else if (p->kind == REF_LSTM) {                                                        \
            for (j = 0; j < H; ++j) {                                                              \
              C cp = cb[j], ig = xr[pi + j] + gr[pi + j], fg = xr[pf + j] + gr[pf + j];            \
              C og = xr[po + j] + gr[po + j];                                                      \
              const C cg = ref_rnn_act_##SFX(ga, REF_RNN_CLIP(xr[pc + j] + gr[pc + j]));           \
              if (peep) {                                                                          \
                ig += peep[j] * cp;                                                                \
                fg += peep[2 * H + j] * cp;                                                        \
              }                                                                                    \
              ig = ref_rnn_act_##SFX(f, REF_RNN_CLIP(ig));                                         \
              fg = p->input_forget ? (C)1 - ig : ref_rnn_act_##SFX(f, REF_RNN_CLIP(fg));           \
              cp = fg * cp + ig * cg;                                                              \
              if (peep)                                                                            \
                og += peep[H + j] * cp;                                                            \
              cb[j] = cp;                                                                          \
              hb[j] = ref_rnn_act_##SFX(f, REF_RNN_CLIP(og)) * ref_rnn_act_##SFX(ha, cp);          \
            }                                                                                      \
          } else {                                                                                 \
            for (j = 0; j < H; ++j) {                                                              \
              gr[pz + j] = ref_rnn_act_##SFX(f, REF_RNN_CLIP(xr[pz + j] + gr[pz + j]));            \
              gr[pr + j] = ref_rnn_act_##SFX(f, REF_RNN_CLIP(xr[pr + j] + gr[pr + j]));            \
            }                                                                                      \
            if (gru_reset_first) {                                                                 \
              for (j = 0; j < H; ++j)                                                              \
                rh[b * H + j] = gr[pr + j] * hb[j];                                                \
              continue; /* finished below, once every row's r . H is known */                      \
            }                                                                                      \
            for (j = 0; j < H; ++j) {                                                              \
              const C z = gr[pz + j];                                                              \
              const C nh = ref_rnn_act_##SFX(                                                      \
                  ga,                                                                              \
                  REF_RNN_CLIP(xr[ph + j] + gr[pr + j] * (gr[ph + j] + (rb ? rb[ph + j] : 0))));   \
              hb[j] = ((C)1 - z) * nh + z * hb[j];                                                 \
            }                                                                                      \
          }                                                                                        \
          memcpy(out[0] + ((t * D + dir) * B + b) * H, hb, (size_t)H * sizeof(C));                 \
        }                                                                                          \
        if (!gru_reset_first)                                                                      \
          continue;                                                                                \
        ref_rnn_gemm_##SFX(B, H, H, rh, H, r_h, p->igo ? GH : H, !p->igo, gh, H, pack);            \
        for (b = 0; b < B; ++b) {                                                                  \
          const int64_t n = len ? len[b] : T, t = reverse ? n - 1 - s : s;                         \
          const C *xr = xw + (t * B + b) * GH, *gr = g + b * GH;                                   \
          C *hb = h + b * H;                                                                       \
          if (s >= n)                                                                              \
            continue;                                                                              \
          for (j = 0; j < H; ++j) {                                                                \
            const C z = gr[pz + j];                                                                \
            const C nh = ref_rnn_act_##SFX(                                                        \
                ga, REF_RNN_CLIP(xr[ph + j] + gh[b * H + j] + (rb ? rb[ph + j] : 0)));             \
            hb[j] = ((C)1 - z) * nh + z * hb[j];                                                   \
          }                                                                                        \
          memcpy(out[0] + ((t * D + dir) * B + b) * H, hb, (size_t)H * sizeof(C));                 \
        }                                                                                          \
      }                                                                                            \
      if (p->out_h)                                                                                \
        memcpy(out[p->out_h] + dir * B * H, h, (size_t)(B * H) * sizeof(C));                       \
      if (p->out_c)                                                                                \
        memcpy(out[p->out_c] + dir * B * H, c, (size_t)(B * H) * sizeof(C));                       \
    }                                                                                              \
  }

/* A gate input clipped to [-clip, clip] when clipping is on (clip > 0). */
#define REF_RNN_CLIP(v) (clip > 0 ? ((v) < -clip ? -clip : ((v) > clip ? clip : (v))) : (v))

REF_RNN_DEFINE(float, f, expf, tanhf, log1pf, fabsf)
REF_RNN_DEFINE(double, d, exp, tanh, log1p, fabs)

static void ref_rnn_to_float(odla_element_type t, const void *src, int64_t n, float *dst) {
  int64_t i;
  if (t == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      dst[i] = REF_LOAD_f16((const uint16_t *)src, i);
  else
    for (i = 0; i < n; ++i)
      dst[i] = REF_LOAD_bf16((const uint16_t *)src, i);
}

static void ref_rnn_from_float(odla_element_type t, const float *src, int64_t n, void *dst) {
  int64_t i;
  if (t == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      REF_STORE_f16((uint16_t *)dst, i, src[i]);
  else
    for (i = 0; i < n; ++i)
      REF_STORE_bf16((uint16_t *)dst, i, src[i]);
}

/* ONNX's defaults for the alpha and beta of an activation. */
static void ref_rnn_act_defaults(int kind, double *alpha, double *beta) {
  *alpha = kind == ODLA_EXT_ACT_LEAKY_RELU ? 0.01 : (kind == ODLA_EXT_ACT_HARD_SIGMOID ? 0.2 : 1.0);
  *beta = kind == ODLA_EXT_ACT_HARD_SIGMOID ? 0.5 : (kind == ODLA_EXT_ACT_SCALED_TANH ? 1.0 : 0.0);
}

static int ref_rnn_default_act(ref_rnn_kind kind, int k) {
  return kind == REF_RNN || k > 0 ? ODLA_EXT_ACT_TANH : ODLA_EXT_ACT_SIGMOID;
}

static odla_status ref_rnn_run(const ref_node *node, const ref_io *io) {
  const ref_rnn_params *p = (const ref_rnn_params *)node->params;
  const float *act_params = (const float *)io->in[8];
  unsigned char *scratch = (unsigned char *)io->scratch;
  ref_rnn_act acts[2 * REF_RNN_MAX_ACTS];
  int64_t *len = NULL, b;
  int k, d;
  memset(acts, 0, sizeof acts);
  for (d = 0; d < p->dirs; ++d)
    for (k = 0; k < p->num_acts; ++k) {
      ref_rnn_act *a = &acts[d * REF_RNN_MAX_ACTS + k];
      a->kind = p->act[d][k];
      ref_rnn_act_defaults(a->kind, &a->alpha, &a->beta);
      if (act_params) {
        a->alpha = act_params[2 * (d * p->num_acts + k)];
        a->beta = act_params[2 * (d * p->num_acts + k) + 1];
      }
    }
  if (io->in[4]) {
    len = (int64_t *)(scratch + p->off_len);
    for (b = 0; b < p->batch; ++b) {
      int64_t n = ref_get_int(p->seq_type, io->in[4], b);
      len[b] = n < 0 ? 0 : (n > p->seq ? p->seq : n);
    }
  }
  if (p->type == ODLA_FLOAT64) {
    const double *in[REF_RNN_OPERANDS];
    double *out[REF_RNN_MAX_RESULTS] = {NULL, NULL, NULL};
    for (k = 0; k < REF_RNN_OPERANDS; ++k)
      in[k] = k == 4 || k == 8 ? NULL : (const double *)io->in[k];
    for (k = 0; k < node->num_outputs; ++k)
      out[k] = (double *)io->out[k];
    ref_rnn_run_d(p, acts, in, out, len, scratch);
  } else {
    const float *in[REF_RNN_OPERANDS];
    float *out[REF_RNN_MAX_RESULTS] = {NULL, NULL, NULL};
    const int convert = p->type != ODLA_FLOAT32;
    for (k = 0; k < REF_RNN_OPERANDS; ++k) {
      in[k] = k == 4 || k == 8 ? NULL : (const float *)io->in[k];
      if (convert && in[k]) {
        float *copy = (float *)(scratch + p->off_in[k]);
        ref_rnn_to_float(p->type, io->in[k], ref_count(&node->inputs[k]->type.shape), copy);
        in[k] = copy;
      }
    }
    for (k = 0; k < node->num_outputs; ++k)
      out[k] = convert ? (float *)(scratch + p->off_out[k]) : (float *)io->out[k];
    ref_rnn_run_f(p, acts, in, out, len, scratch);
    if (convert)
      for (k = 0; k < node->num_outputs; ++k)
        ref_rnn_from_float(p->type, out[k], ref_count(&node->outputs[k]->type.shape), io->out[k]);
  }
  return ODLA_SUCCESS;
}

/* ---- Builders ---------------------------------------------------------------------------- */

static odla_values ref_rnn_no_values(int n) {
  odla_values none;
  memset(&none, 0, sizeof none);
  none.size = (odla_size_t)n; /* all NULL: the error is recorded in the computation */
  return none;
}

/* Checks that `v` (when present) has the shape [d0, d1(, d2)] and element type t. */
static int ref_rnn_expect(const char *op, const char *what, odla_value v, odla_element_type t,
                          int rank, int64_t d0, int64_t d1, int64_t d2) {
  odla_value_shape want;
  char s1[128], s2[128];
  if (!v)
    return 1;
  want.size = rank;
  want.dims[0] = d0;
  want.dims[1] = d1;
  want.dims[2] = d2;
  if (!ref_same_shape(&v->type.shape, &want)) {
    ref_fail(ODLA_INVALID_PARAM, op, "%s must be %s, got %s", what,
             ref_shape_str(&want, s1, sizeof s1), ref_shape_str(&v->type.shape, s2, sizeof s2));
    return 0;
  }
  if (v->type.element_type != t) {
    ref_fail(ODLA_INVALID_PARAM, op, "%s element type %s differs from the input's, %s", what,
             ref_type_name(v->type.element_type), ref_type_name(t));
    return 0;
  }
  return 1;
}

/* Places a scratch buffer of `bytes` bytes at the end of *total, 64-byte aligned. */
static size_t ref_rnn_place(size_t *total, size_t bytes) {
  size_t at = *total;
  *total += (bytes + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
  return at;
}

static int ref_rnn_gate_positions(const char *op, ref_rnn_kind kind, odla_rnn_gate_order order,
                                  int64_t pos[4]) {
  /* pos[k]: the block of logical gate k; LSTM i, o, f, c; GRU z, r, h. */
  static const int64_t lstm[4][4] = {{0, 1, 2, 3}, {0, 3, 1, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}};
  memset(pos, 0, 4 * sizeof *pos);
  if (kind == REF_RNN)
    return 1;
  if (kind == REF_GRU) {
    if (order != ODLA_RNN_URO) {
      ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "gate order %d is not supported (ODLA_RNN_URO)",
               (int)order);
      return 0;
    }
    pos[0] = 0;
    pos[1] = 1;
    pos[2] = 2;
    return 1;
  }
  if (order != ODLA_RNN_IOFC && order != ODLA_RNN_IFCO && order != ODLA_RNN_IFOC &&
      order != ODLA_RNN_ICOF) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
             "gate order %d is not supported (ODLA_RNN_IOFC, IFCO, IFOC, ICOF)", (int)order);
    return 0;
  }
  memcpy(pos, lstm[order - ODLA_RNN_IOFC], 4 * sizeof *pos);
  return 1;
}

/* What the extension builders add to the core ones. */
typedef struct {
  const odla_int32 *activations; /* NULL: ONNX's defaults */
  odla_value params;             /* alpha, beta of each activation; NULL: defaults */
  odla_float32 clip;
  odla_bool input_forget;
} ref_rnn_options;

static int ref_rnn_check_options(const char *op, ref_rnn_kind kind, int dirs,
                                 const ref_rnn_options *opt, ref_rnn_params *p) {
  int d, k;
  char s1[128];
  p->num_acts = kind == REF_RNN ? 1 : (kind == REF_LSTM ? 3 : 2);
  for (d = 0; d < dirs; ++d)
    for (k = 0; k < p->num_acts; ++k) {
      int a =
          opt->activations ? opt->activations[d * p->num_acts + k] : ref_rnn_default_act(kind, k);
      if (a < ODLA_EXT_ACT_RELU || a > ODLA_EXT_ACT_SOFTPLUS) {
        ref_fail(ODLA_INVALID_PARAM, op,
                 "activation %d (direction %d, function %d) is not an "
                 "odla_ext_rnn_activation",
                 a, d, k);
        return 0;
      }
      p->act[d][k] = a;
    }
  if (opt->params && (opt->params->type.element_type != ODLA_FLOAT32 ||
                      ref_count(&opt->params->type.shape) != 2 * dirs * p->num_acts)) {
    ref_fail(ODLA_INVALID_PARAM, op, "activation_params (%s%s) must be float32 [%d, 2]",
             ref_type_name(opt->params->type.element_type),
             ref_shape_str(&opt->params->type.shape, s1, sizeof s1), dirs * p->num_acts);
    return 0;
  }
  /* Clipping is on for a positive finite bound (NaN and infinity clip nothing). */
  p->clip = opt->clip > 0 && opt->clip <= 3.402823466e38f ? opt->clip : 0.0;
  p->input_forget = kind == REF_LSTM && opt->input_forget;
  return 1;
}

static odla_values ref_rnn_build(const char *op, ref_rnn_kind kind, odla_value input,
                                 odla_rnn_weight_format weight_format,
                                 odla_rnn_gate_order gate_order, odla_value_shape weight_dims,
                                 odla_value W, odla_value R, odla_value B, odla_value sequence_lens,
                                 odla_value initial_h, odla_value initial_c, odla_value P,
                                 odla_int32 hidden_size, odla_rnn_direction direction,
                                 odla_bool linear_before_reset, odla_rnn_outputs outputs,
                                 const ref_rnn_options *opt, const odla_value_ids *ids) {
  ref_rnn_params p;
  odla_value in[REF_RNN_OPERANDS];
  odla_value_type types[REF_RNN_MAX_RESULTS];
  odla_value_id out_ids[REF_RNN_MAX_RESULTS];
  odla_values results;
  ref_node *node;
  const odla_value_shape *xs;
  int64_t gh;
  size_t elem, total = 0, pack = 0;
  int k, num_results;
  char s1[128], s2[128];
  num_results = 1 + (outputs == ODLA_RNN_HIDDEN_STATE || outputs == ODLA_RNN_CELL_STATE) +
                2 * (outputs == ODLA_RNN_HIDDEN_CELL_STATE);
  in[0] = input;
  in[1] = W;
  in[2] = R;
  in[3] = B;
  in[4] = sequence_lens;
  in[5] = initial_h;
  in[6] = initial_c;
  in[7] = P;
  in[8] = opt->params;
  if (!ref_check_operands(op, 3, in))
    return ref_rnn_no_values(num_results);
  for (k = 3; k < REF_RNN_OPERANDS; ++k)
    if (in[k] && !ref_check_operands(op, 1, &in[k]))
      return ref_rnn_no_values(num_results);
  memset(&p, 0, sizeof p);
  p.kind = kind;
  p.type = input->type.element_type;
  xs = &input->type.shape;
  if (!ref_is_float(p.type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported (float types)",
             ref_type_name(p.type));
    return ref_rnn_no_values(num_results);
  }
  if (xs->size != 3) {
    ref_fail(ODLA_INVALID_PARAM, op, "input %s must be [seq_length, batch, input_size]",
             ref_shape_str(xs, s1, sizeof s1));
    return ref_rnn_no_values(num_results);
  }
  if (direction != ODLA_RNN_FORWARD && direction != ODLA_RNN_REVERSE &&
      direction != ODLA_RNN_BIDIRECTIONAL) {
    ref_fail(ODLA_INVALID_PARAM, op, "direction %d is not valid", (int)direction);
    return ref_rnn_no_values(num_results);
  }
  if (weight_format != ODLA_RNN_LDGOI && weight_format != ODLA_RNN_LDIGO) {
    ref_fail(ODLA_INVALID_PARAM, op, "weight format %d is not valid", (int)weight_format);
    return ref_rnn_no_values(num_results);
  }
  if (outputs != ODLA_RNN_NO_STATE && outputs != ODLA_RNN_HIDDEN_STATE &&
      (kind != REF_LSTM ||
       (outputs != ODLA_RNN_CELL_STATE && outputs != ODLA_RNN_HIDDEN_CELL_STATE))) {
    ref_fail(ODLA_INVALID_PARAM, op, "outputs %d is not valid for %s", (int)outputs, op);
    return ref_rnn_no_values(num_results);
  }
  if (hidden_size < 1) {
    ref_fail(ODLA_INVALID_PARAM, op, "hidden_size %d must be positive", (int)hidden_size);
    return ref_rnn_no_values(num_results);
  }
  if (!ref_rnn_gate_positions(op, kind, gate_order, p.gate_pos))
    return ref_rnn_no_values(num_results);
  if (!ref_rnn_check_options(op, kind, direction == ODLA_RNN_BIDIRECTIONAL ? 2 : 1, opt, &p))
    return ref_rnn_no_values(num_results);
  p.direction = direction;
  p.seq = xs->dims[0];
  p.batch = xs->dims[1];
  p.input = xs->dims[2];
  p.hidden = hidden_size;
  p.dirs = direction == ODLA_RNN_BIDIRECTIONAL ? 2 : 1;
  p.gates = kind == REF_RNN ? 1 : (kind == REF_LSTM ? 4 : 3);
  p.igo = weight_format == ODLA_RNN_LDIGO;
  p.linear_before_reset = linear_before_reset != 0;
  gh = p.gates * p.hidden;
  if (!ref_rnn_expect(op, "W", W, p.type, 3, p.dirs, p.igo ? p.input : gh, p.igo ? gh : p.input) ||
      !ref_rnn_expect(op, "R", R, p.type, 3, p.dirs, p.igo ? p.hidden : gh,
                      p.igo ? gh : p.hidden) ||
      !ref_rnn_expect(op, "B", B, p.type, 2, p.dirs, 2 * gh, 0) ||
      !ref_rnn_expect(op, "initial_h", initial_h, p.type, 3, p.dirs, p.batch, p.hidden) ||
      !ref_rnn_expect(op, "initial_c", initial_c, p.type, 3, p.dirs, p.batch, p.hidden) ||
      !ref_rnn_expect(op, "P", P, p.type, 2, p.dirs, 3 * p.hidden, 0))
    return ref_rnn_no_values(num_results);
  if (ref_shape_conflicts(&weight_dims, &W->type.shape)) {
    ref_fail(ODLA_INVALID_PARAM, op, "weight_dims %s differ from W's shape %s",
             ref_shape_str(&weight_dims, s1, sizeof s1),
             ref_shape_str(&W->type.shape, s2, sizeof s2));
    return ref_rnn_no_values(num_results);
  }
  if (sequence_lens) {
    const odla_value_shape *ls = &sequence_lens->type.shape;
    p.seq_type = sequence_lens->type.element_type;
    if ((p.seq_type != ODLA_INT32 && p.seq_type != ODLA_INT64) || ls->size != 1 ||
        ls->dims[0] != p.batch) {
      ref_fail(ODLA_INVALID_PARAM, op, "sequence_lens (%s%s) must be int32 or int64 [%lld]",
               ref_type_name(p.seq_type), ref_shape_str(ls, s1, sizeof s1), (long long)p.batch);
      return ref_rnn_no_values(num_results);
    }
  }
  /* Results: Y, then Y_h and Y_c as asked. */
  for (k = 0; k < num_results; ++k) {
    types[k].element_type = p.type;
    types[k].shape.size = 3;
    types[k].shape.dims[0] = p.dirs;
    types[k].shape.dims[1] = p.batch;
    types[k].shape.dims[2] = p.hidden;
    out_ids[k] = ids && (odla_size_t)k < ids->size ? ids->value_ids[k] : NULL;
  }
  types[0].shape.size = 4;
  types[0].shape.dims[0] = p.seq;
  types[0].shape.dims[1] = p.dirs;
  types[0].shape.dims[2] = p.batch;
  types[0].shape.dims[3] = p.hidden;
  p.out_h = outputs == ODLA_RNN_HIDDEN_STATE || outputs == ODLA_RNN_HIDDEN_CELL_STATE ? 1 : 0;
  p.out_c = outputs == ODLA_RNN_CELL_STATE ? 1 : (outputs == ODLA_RNN_HIDDEN_CELL_STATE ? 2 : 0);
  /* Scratch. */
  elem = p.type == ODLA_FLOAT64 ? sizeof(double) : sizeof(float);
  p.off_len = ref_rnn_place(&total, sequence_lens ? (size_t)p.batch * sizeof(int64_t) : 0);
  p.off_bias = ref_rnn_place(&total, (size_t)gh * elem);
  p.off_xw = ref_rnn_place(&total, (size_t)(p.seq * p.batch * gh) * elem);
  p.off_g = ref_rnn_place(&total, (size_t)(p.batch * gh) * elem);
  p.off_h = ref_rnn_place(&total, (size_t)(p.batch * p.hidden) * elem);
  p.off_c = ref_rnn_place(&total, (size_t)(p.batch * p.hidden) * elem);
  p.off_rh = ref_rnn_place(&total, kind == REF_GRU ? (size_t)(p.batch * p.hidden) * elem : 0);
  p.off_gh = ref_rnn_place(&total, kind == REF_GRU ? (size_t)(p.batch * p.hidden) * elem : 0);
  if (p.type != ODLA_FLOAT64) {
    size_t a = ref_sgemm_scratch(p.seq * p.batch, gh, p.input);
    size_t b = ref_sgemm_scratch(p.batch, gh, p.hidden);
    size_t c = ref_sgemm_scratch(p.batch, p.hidden, p.hidden);
    pack = a > b ? a : b;
    pack = pack > c ? pack : c;
  }
  p.off_pack = ref_rnn_place(&total, pack * sizeof(float));
  if (p.type == ODLA_FLOAT16 || p.type == ODLA_BFLOAT16) {
    for (k = 0; k < REF_RNN_OPERANDS; ++k)
      if (in[k] && k != 4 && k != 8)
        p.off_in[k] = ref_rnn_place(&total, (size_t)ref_count(&in[k]->type.shape) * sizeof(float));
    for (k = 0; k < num_results; ++k)
      p.off_out[k] = ref_rnn_place(&total, (size_t)ref_count(&types[k].shape) * sizeof(float));
  }
  node = ref_add_node(op, ref_rnn_run, REF_RNN_OPERANDS, in, num_results, types, out_ids, &p,
                      sizeof p);
  if (!node)
    return ref_rnn_no_values(num_results);
  node->scratch_bytes = total;
  memset(&results, 0, sizeof results);
  results.size = (odla_size_t)num_results;
  for (k = 0; k < num_results; ++k)
    results.values[k] = node->outputs[k];
  return results;
}

static const ref_rnn_options ref_rnn_defaults = {NULL, NULL, 0.0f, 0};

odla_values odla_RNN(odla_value input, odla_rnn_weight_format weight_format,
                     odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
                     odla_value sequence_lens, odla_value initial_h, odla_int32 hidden_size,
                     odla_rnn_direction direction, odla_rnn_outputs outputs,
                     const odla_value_ids value_id) {
  return ref_rnn_build("RNN", REF_RNN, input, weight_format, ODLA_RNN_IOFC, weight_dims, W, R, B,
                       sequence_lens, initial_h, NULL, NULL, hidden_size, direction, 0, outputs,
                       &ref_rnn_defaults, &value_id);
}

odla_values odla_GRU(odla_value input, odla_rnn_weight_format weight_format,
                     odla_rnn_gate_order gate_order, odla_value_shape weight_dims, odla_value W,
                     odla_value R, odla_value B, odla_value sequence_lens, odla_value initial_h,
                     odla_int32 hidden_size, odla_rnn_direction direction,
                     odla_bool linear_before_reset, odla_rnn_outputs outputs,
                     const odla_value_ids value_id) {
  return ref_rnn_build("GRU", REF_GRU, input, weight_format, gate_order, weight_dims, W, R, B,
                       sequence_lens, initial_h, NULL, NULL, hidden_size, direction,
                       linear_before_reset, outputs, &ref_rnn_defaults, &value_id);
}

odla_values odla_LSTM(odla_value input, odla_rnn_weight_format weight_format,
                      odla_rnn_gate_order gate_order, odla_value_shape weight_dims, odla_value W,
                      odla_value R, odla_value B, odla_value sequence_lens, odla_value initial_h,
                      odla_value initial_c, odla_value P, odla_int32 hidden_size,
                      odla_rnn_direction direction, odla_rnn_outputs outputs,
                      const odla_value_ids value_ids) {
  return ref_rnn_build("LSTM", REF_LSTM, input, weight_format, gate_order, weight_dims, W, R, B,
                       sequence_lens, initial_h, initial_c, P, hidden_size, direction, 0, outputs,
                       &ref_rnn_defaults, &value_ids);
}

odla_values odla_ExtRNN(odla_value input, odla_rnn_weight_format weight_format,
                        odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
                        odla_value sequence_lens, odla_value initial_h, odla_int32 hidden_size,
                        odla_rnn_direction direction, odla_rnn_outputs outputs,
                        const odla_int32 *activations, odla_value activation_params,
                        odla_float32 clip, const odla_value_ids value_ids) {
  ref_rnn_options opt;
  opt.activations = activations;
  opt.params = activation_params;
  opt.clip = clip;
  opt.input_forget = 0;
  return ref_rnn_build("ExtRNN", REF_RNN, input, weight_format, ODLA_RNN_IOFC, weight_dims, W, R, B,
                       sequence_lens, initial_h, NULL, NULL, hidden_size, direction, 0, outputs,
                       &opt, &value_ids);
}

odla_values odla_ExtGRU(odla_value input, odla_rnn_weight_format weight_format,
                        odla_rnn_gate_order gate_order, odla_value_shape weight_dims, odla_value W,
                        odla_value R, odla_value B, odla_value sequence_lens, odla_value initial_h,
                        odla_int32 hidden_size, odla_rnn_direction direction,
                        odla_bool linear_before_reset, odla_rnn_outputs outputs,
                        const odla_int32 *activations, odla_value activation_params,
                        odla_float32 clip, const odla_value_ids value_ids) {
  ref_rnn_options opt;
  opt.activations = activations;
  opt.params = activation_params;
  opt.clip = clip;
  opt.input_forget = 0;
  return ref_rnn_build("ExtGRU", REF_GRU, input, weight_format, gate_order, weight_dims, W, R, B,
                       sequence_lens, initial_h, NULL, NULL, hidden_size, direction,
                       linear_before_reset, outputs, &opt, &value_ids);
}

odla_values odla_ExtLSTM(odla_value input, odla_rnn_weight_format weight_format,
                         odla_rnn_gate_order gate_order, odla_value_shape weight_dims, odla_value W,
                         odla_value R, odla_value B, odla_value sequence_lens, odla_value initial_h,
                         odla_value initial_c, odla_value P, odla_int32 hidden_size,
                         odla_rnn_direction direction, odla_rnn_outputs outputs,
                         const odla_int32 *activations, odla_value activation_params,
                         odla_float32 clip, odla_bool input_forget,
                         const odla_value_ids value_ids) {
  ref_rnn_options opt;
  opt.activations = activations;
  opt.params = activation_params;
  opt.clip = clip;
  opt.input_forget = input_forget;
  return ref_rnn_build("ExtLSTM", REF_LSTM, input, weight_format, gate_order, weight_dims, W, R, B,
                       sequence_lens, initial_h, initial_c, P, hidden_size, direction, 0, outputs,
                       &opt, &value_ids);
}
