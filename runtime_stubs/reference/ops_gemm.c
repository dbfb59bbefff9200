/* ops_gemm.c: matrix products of the reference backend: a cache-blocked single-precision
 * GEMM (packed panels and a fixed-size register tile the C compiler vectorizes), and the
 * odla_Gemm and odla_BatchMatMul ops built on it. */
#include "ref.h"

#include <string.h>

/* Tile and block sizes. The micro-kernel computes an MR x NR tile of C; KC x NC panels of B
 * stay in L2/L3 and MC x KC blocks of A in L1/L2. */
enum { MR = 4, NR = 16, MC = 128, KC = 256, NC = 2048 };

static int64_t ref_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ref_round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

size_t ref_sgemm_scratch(int64_t m, int64_t n, int64_t k) {
  int64_t kc = ref_min(k, KC), nc = ref_round_up(ref_min(n, NC), NR);
  int64_t mc = ref_round_up(ref_min(m, MC), MR);
  return (size_t)(kc * nc + mc * kc);
}

/* Packs rows [i0, i0+mc) and columns [p0, p0+kc) of op(A) into MR-row panels: panel r
 * holds kc groups of MR consecutive values, zero-padded past mc. */
static void ref_pack_a(int trans, const float *a, int64_t lda, int64_t i0, int64_t mc, int64_t p0,
                       int64_t kc, float *dst) {
  int64_t ir, p, i;
  for (ir = 0; ir < mc; ir += MR) {
    int64_t mr = ref_min(MR, mc - ir);
    for (p = 0; p < kc; ++p) {
      for (i = 0; i < mr; ++i) {
        int64_t row = i0 + ir + i, col = p0 + p;
        dst[i] = trans ? a[col * lda + row] : a[row * lda + col];
      }
      for (; i < MR; ++i)
        dst[i] = 0.0f;
      dst += MR;
    }
  }
}

/* Packs rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into NR-column panels. */
static void ref_pack_b(int trans, const float *b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0,
                       int64_t nc, float *dst) {
  int64_t jr, p, j;
  for (jr = 0; jr < nc; jr += NR) {
    int64_t nr = ref_min(NR, nc - jr);
    for (p = 0; p < kc; ++p) {
      const int64_t row = p0 + p;
      if (!trans && nr == NR) {
        memcpy(dst, b + row * ldb + j0 + jr, NR * sizeof(float));
      } else {
        for (j = 0; j < nr; ++j) {
          int64_t col = j0 + jr + j;
          dst[j] = trans ? b[col * ldb + row] : b[row * ldb + col];
        }
        for (; j < NR; ++j)
          dst[j] = 0.0f;
      }
      dst += NR;
    }
  }
}

/* C[0:mr, 0:nr] += alpha * (packed A panel) x (packed B panel). */
static void ref_micro_kernel(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int64_t mr, int64_t nr, float alpha) {
  float acc[MR][NR];
  int64_t p, i, j;
  for (i = 0; i < MR; ++i)
    for (j = 0; j < NR; ++j)
      acc[i][j] = 0.0f;
  for (p = 0; p < kc; ++p) {
    for (i = 0; i < MR; ++i) {
      const float ai = a[i];
      for (j = 0; j < NR; ++j)
        acc[i][j] += ai * b[j];
    }
    a += MR;
    b += NR;
  }
  if (mr == MR && nr == NR) {
    for (i = 0; i < MR; ++i)
      for (j = 0; j < NR; ++j)
        c[i * ldc + j] += alpha * acc[i][j];
  } else {
    for (i = 0; i < mr; ++i)
      for (j = 0; j < nr; ++j)
        c[i * ldc + j] += alpha * acc[i][j];
  }
}

void ref_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc, float *pack) {
  int64_t i, j, jc, pc, ic, jr, ir;
  float *pack_b = pack;
  float *pack_a = pack + ref_min(k, KC) * ref_round_up(ref_min(n, NC), NR);
  /* C = beta * C first; the blocks below only accumulate. beta == 0 ignores C's contents. */
  if (beta != 1.0f)
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
  if (k == 0 || alpha == 0.0f)
    return;
  for (jc = 0; jc < n; jc += NC) {
    int64_t nc = ref_min(NC, n - jc);
    for (pc = 0; pc < k; pc += KC) {
      int64_t kc = ref_min(KC, k - pc);
      ref_pack_b(trans_b, b, ldb, pc, kc, jc, nc, pack_b);
      for (ic = 0; ic < m; ic += MC) {
        int64_t mc = ref_min(MC, m - ic);
        ref_pack_a(trans_a, a, lda, ic, mc, pc, kc, pack_a);
        for (jr = 0; jr < nc; jr += NR)
          for (ir = 0; ir < mc; ir += MR)
            ref_micro_kernel(kc, pack_a + ir * kc, pack_b + jr * kc, c + (ic + ir) * ldc + jc + jr,
                             ldc, ref_min(MR, mc - ir), ref_min(NR, nc - jr), alpha);
      }
    }
  }
}

/* ---- odla_Gemm ----------------------------------------------------------------------- */

typedef struct {
  int trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t c_rows, c_cols; /* C's extent after aligning it to [M, N] (1 = broadcast) */
} ref_gemm_params;

static odla_status ref_gemm_run(const ref_node *node, const ref_io *io) {
  const ref_gemm_params *p = (const ref_gemm_params *)node->params;
  float *y = (float *)io->out[0];
  float beta = 0.0f;
  int64_t i, j;
  if (io->in[2] && p->beta != 0.0f) {
    const float *cv = (const float *)io->in[2];
    for (i = 0; i < p->m; ++i)
      for (j = 0; j < p->n; ++j)
        y[i * p->n + j] = p->beta * cv[(p->c_rows == 1 ? 0 : i) * p->c_cols + (p->c_cols == 1 ? 0 : j)];
    beta = 1.0f;
  }
  ref_sgemm(p->trans_a, p->trans_b, p->m, p->n, p->k, p->alpha, (const float *)io->in[0],
            p->trans_a ? p->m : p->k, (const float *)io->in[1], p->trans_b ? p->k : p->n, beta, y,
            p->n, (float *)io->scratch);
  return ODLA_SUCCESS;
}

odla_value odla_Gemm(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                     odla_float32 alpha, odla_float32 beta, odla_value C,
                     odla_value_shape output_dims, const odla_value_id value_id) {
  ref_gemm_params p;
  odla_value in[3];
  odla_value_type out;
  odla_value v;
  char s1[128], s2[128];
  in[0] = A;
  in[1] = B;
  in[2] = C;
  if (!ref_check_operands("Gemm", 2, in) || (C && !ref_check_operands("Gemm", 1, &in[2])))
    return NULL;
  if (A->type.element_type != ODLA_FLOAT32 || B->type.element_type != ODLA_FLOAT32 ||
      (C && C->type.element_type != ODLA_FLOAT32))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Gemm", "only float32 is supported");
  if (A->type.shape.size != 2 || B->type.shape.size != 2)
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "A %s and B %s must be matrices",
                    ref_shape_str(&A->type.shape, s1, sizeof s1),
                    ref_shape_str(&B->type.shape, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.trans_a = A_transpose != 0;
  p.trans_b = B_transpose != 0;
  p.m = A->type.shape.dims[p.trans_a ? 1 : 0];
  p.k = A->type.shape.dims[p.trans_a ? 0 : 1];
  p.n = B->type.shape.dims[p.trans_b ? 0 : 1];
  if (B->type.shape.dims[p.trans_b ? 1 : 0] != p.k)
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "inner dimensions differ: A %s, B %s",
                    ref_shape_str(&A->type.shape, s1, sizeof s1),
                    ref_shape_str(&B->type.shape, s2, sizeof s2));
  p.alpha = alpha;
  p.beta = beta;
  if (C) {
    const odla_value_shape *cs = &C->type.shape;
    p.c_rows = cs->size >= 2 ? cs->dims[cs->size - 2] : 1;
    p.c_cols = cs->size >= 1 ? cs->dims[cs->size - 1] : 1;
    if (cs->size > 2 || (p.c_rows != 1 && p.c_rows != p.m) || (p.c_cols != 1 && p.c_cols != p.n))
      return ref_fail(ODLA_INVALID_PARAM, "Gemm", "C %s does not broadcast to [%lld,%lld]",
                      ref_shape_str(cs, s1, sizeof s1), (long long)p.m, (long long)p.n);
  }
  out.element_type = ODLA_FLOAT32;
  out.shape.size = 2;
  out.shape.dims[0] = p.m;
  out.shape.dims[1] = p.n;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  v = ref_add_op("Gemm", ref_gemm_run, 3, in, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = ref_sgemm_scratch(p.m, p.n, p.k) * sizeof(float);
  return v;
}

/* ---- odla_BatchMatMul ---------------------------------------------------------------- */

typedef struct {
  int trans_a, trans_b;
  int64_t m, n, k;
  int batch_rank;
  int64_t batch[ODLA_MAX_DIMENSION]; /* output batch dims */
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION]; /* matrix strides, 0 = broadcast */
} ref_bmm_params;

static odla_status ref_bmm_run(const ref_node *node, const ref_io *io) {
  const ref_bmm_params *p = (const ref_bmm_params *)node->params;
  const float *a = (const float *)io->in[0], *b = (const float *)io->in[1];
  float *y = (float *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0;
  int d;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  for (;;) {
    ref_sgemm(p->trans_a, p->trans_b, p->m, p->n, p->k, 1.0f, a + oa * p->m * p->k,
              p->trans_a ? p->m : p->k, b + ob * p->k * p->n, p->trans_b ? p->k : p->n, 0.0f, y,
              p->n, (float *)io->scratch);
    y += p->m * p->n;
    for (d = p->batch_rank - 1; d >= 0; --d) {
      oa += p->sa[d];
      ob += p->sb[d];
      if (++idx[d] < p->batch[d])
        break;
      oa -= p->sa[d] * p->batch[d];
      ob -= p->sb[d] * p->batch[d];
      idx[d] = 0;
    }
    if (d < 0)
      return ODLA_SUCCESS;
  }
}

odla_value odla_BatchMatMul(odla_value A, odla_bool A_transpose, odla_value B,
                            odla_bool B_transpose, odla_value_shape output_dims,
                            const odla_value_id value_id) {
  ref_bmm_params p;
  odla_value in[2];
  odla_value_type out;
  odla_value v;
  const odla_value_shape *as, *bs;
  int64_t stride_a = 1, stride_b = 1;
  int i;
  char s1[128], s2[128];
  in[0] = A;
  in[1] = B;
  if (!ref_check_operands("BatchMatMul", 2, in))
    return NULL;
  as = &A->type.shape;
  bs = &B->type.shape;
  if (A->type.element_type != ODLA_FLOAT32 || B->type.element_type != ODLA_FLOAT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "BatchMatMul", "only float32 is supported");
  if (as->size < 2 || bs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "operands %s and %s need rank >= 2",
                    ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.trans_a = A_transpose != 0;
  p.trans_b = B_transpose != 0;
  p.m = as->dims[as->size - (p.trans_a ? 1 : 2)];
  p.k = as->dims[as->size - (p.trans_a ? 2 : 1)];
  p.n = bs->dims[bs->size - (p.trans_b ? 2 : 1)];
  if (bs->dims[bs->size - (p.trans_b ? 1 : 2)] != p.k)
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "inner dimensions of %s and %s differ",
                    ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
  p.batch_rank = (as->size > bs->size ? as->size : bs->size) - 2;
  for (i = p.batch_rank - 1; i >= 0; --i) {
    int ia = i - (p.batch_rank - (as->size - 2)), ib = i - (p.batch_rank - (bs->size - 2));
    int64_t da = ia >= 0 ? as->dims[ia] : 1, db = ib >= 0 ? bs->dims[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "batch dims of %s and %s do not broadcast",
                      ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
    p.batch[i] = da == 1 ? db : da;
    p.sa[i] = da == 1 ? 0 : stride_a;
    p.sb[i] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  out.element_type = ODLA_FLOAT32;
  out.shape.size = p.batch_rank + 2;
  for (i = 0; i < p.batch_rank; ++i)
    out.shape.dims[i] = p.batch[i];
  out.shape.dims[p.batch_rank] = p.m;
  out.shape.dims[p.batch_rank + 1] = p.n;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (p.batch_rank == 0) { /* keep the batch loop uniform: one batch of extent 1 */
    p.batch_rank = 1;
    p.batch[0] = 1;
  }
  v = ref_add_op("BatchMatMul", ref_bmm_run, 2, in, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = ref_sgemm_scratch(p.m, p.n, p.k) * sizeof(float);
  return v;
}
