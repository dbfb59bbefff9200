/* ops_gemm.c: matrix products of the reference backend: a cache-blocked single-precision
 * GEMM (packed panels and a fixed-size register tile the C compiler vectorizes), a simpler
 * blocked double-precision one, and the odla_Gemm and odla_BatchMatMul ops built on them
 * for every float and integer type. */
#include "autodiff.h"
#include "ops_nn.h"
#include "threads.h"

#include <string.h>

/* Tile and block sizes. The micro-kernel keeps an MR x NR tile of C in registers while it
 * streams a KC-deep packed panel of A (MR wide) and of B (NR wide): the B micro-panel
 * (KC x NR, 32 KiB) stays in L1 while the MC x KC block of A (L2) streams past it, and a
 * KC x NC panel of B (up to 512 KiB; less for small products, see ref_sgemm_nc) is
 * reused from L2 by every block of A. NR = 32 floats is two
 * 512-bit or four 256-bit vectors per row of the tile; GCC and Clang turn the fixed-size
 * tile loops into vector FMAs for any width (measured: NR = 16 vectorizes badly with GCC).
 * MR is the largest row count whose accumulators still fit the register file: 12 rows x 2
 * vectors of the 32 AVX-512 registers, else 4 rows (16 AVX2 or 16 SSE registers). Only the
 * tile sizes depend on the instruction set; the code is the same portable C everywhere, and
 * on x86-64 one library holds a tile for each and picks one by the CPU (ref_tile_get). */
enum { MR_WIDE = 12, MR_NARROW = 4 };
#if defined(__AVX512F__)
enum { MR_BUILD = MR_WIDE };
#else
enum { MR_BUILD = MR_NARROW };
#endif
/* The scratch size must not depend on MR: odlac plans the arena with the reference library
 * it links, and generated code may run on a build of it for another machine. Scratch is
 * sized for the largest MR, MR_MAX, and MC is a multiple of every MR. */
enum { MR_MAX = MR_WIDE, NR = REF_SGEMM_NR, MC = 120, KC = 256, NC = 512, NC_MIN = 128 };
typedef char ref_mc_fits_every_mr[MC % MR_WIDE == 0 && MC % MR_NARROW == 0 ? 1 : -1];

static int64_t ref_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ref_round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* The column block of a product: NC, or less when the packed KC x NC panel of B would be
 * large beside the result, since the panel is arena scratch: at most half the result's
 * elements, and never under NC_MIN columns (a multiple of NR). It depends on the shape only,
 * so odlac's plan and the kernel agree. */
static int64_t ref_sgemm_nc(int64_t m, int64_t n, int64_t k) {
  int64_t kc = ref_min(k, KC), nc = kc > 0 ? m * n / 2 / kc / NR * NR : NC;
  return nc < NC_MIN ? NC_MIN : nc > NC ? NC : nc;
}

size_t ref_sgemm_scratch(int64_t m, int64_t n, int64_t k) {
  int64_t kc = ref_min(k, KC), nc = ref_round_up(ref_min(n, ref_sgemm_nc(m, n, k)), NR);
  int64_t mc = ref_round_up(ref_min(m, MC), MR_MAX);
  return (size_t)(kc * nc + mc * kc);
}

/* Packs rows [i0, i0+mc) and columns [p0, p0+kc) of op(A) into tile-row panels (tr rows,
 * the tile's MR): panel r holds kc groups of tr consecutive values, zero-padded past mc. */
REF_HOT static void ref_pack_a(int trans, const float *a, int64_t lda, int64_t i0, int64_t mc,
                               int64_t p0, int64_t kc, int64_t tr, float *dst) {
  int64_t ir, p, i;
  for (ir = 0; ir < mc; ir += tr) {
    int64_t mr = ref_min(tr, mc - ir);
    if (!trans) { /* rows of A are contiguous along p: walk each row once */
      for (i = 0; i < mr; ++i) {
        const float *row = a + (i0 + ir + i) * lda + p0;
        for (p = 0; p < kc; ++p)
          dst[p * tr + i] = row[p];
      }
      for (; i < tr; ++i)
        for (p = 0; p < kc; ++p)
          dst[p * tr + i] = 0.0f;
      dst += kc * tr;
      continue;
    }
    for (p = 0; p < kc; ++p) {
      for (i = 0; i < mr; ++i)
        dst[i] = a[(p0 + p) * lda + i0 + ir + i];
      for (; i < tr; ++i)
        dst[i] = 0.0f;
      dst += tr;
    }
  }
}

/* The B operand of ref_sgemm: op(B) of a dense matrix. */
typedef struct {
  int trans;
  const float *b;
  int64_t ldb;
} ref_dense_b;

/* Packs rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into NR-column panels. */
REF_HOT static void ref_pack_dense_b(const void *ctx, int64_t p0, int64_t kc, int64_t j0,
                                     int64_t nc, float *dst) {
  const ref_dense_b *d = (const ref_dense_b *)ctx;
  int64_t jr, p, j;
  for (jr = 0; jr < nc; jr += NR) {
    int64_t nr = ref_min(NR, nc - jr);
    if (d->trans) { /* columns of op(B) are contiguous rows of B */
      for (j = 0; j < nr; ++j) {
        const float *col = d->b + (j0 + jr + j) * d->ldb + p0;
        for (p = 0; p < kc; ++p)
          dst[p * NR + j] = col[p];
      }
      for (; j < NR; ++j)
        for (p = 0; p < kc; ++p)
          dst[p * NR + j] = 0.0f;
      dst += kc * NR;
      continue;
    }
    for (p = 0; p < kc; ++p) {
      const float *row = d->b + (p0 + p) * d->ldb + j0 + jr;
      if (nr == NR) {
        memcpy(dst, row, NR * sizeof(float));
      } else {
        for (j = 0; j < nr; ++j)
          dst[j] = row[j];
        for (; j < NR; ++j)
          dst[j] = 0.0f;
      }
      dst += NR;
    }
  }
}

/* C[0:mr, 0:nr] += alpha * (packed A panel) x (packed B panel) for a tile of `rows` (its MR)
 * rows: inlined into each tile's kernel below with rows a constant. The full tile is always
 * computed (packing zero-pads the edges); only its mr x nr corner is stored. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_micro_tile(const int64_t rows, int64_t kc, const float *restrict a, const float *restrict b,
               float *restrict c, int64_t ldc, int64_t mr, int64_t nr, float alpha) {
  float acc[MR_MAX][NR];
  int64_t p, i, j;
  for (i = 0; i < rows; ++i)
    for (j = 0; j < NR; ++j)
      acc[i][j] = 0.0f;
  for (p = 0; p < kc; ++p) {
    for (i = 0; i < rows; ++i) {
      const float ai = a[i];
      for (j = 0; j < NR; ++j)
        acc[i][j] += ai * b[j];
    }
    a += rows;
    b += NR;
  }
  if (mr == rows && nr == NR) {
    for (i = 0; i < rows; ++i)
      for (j = 0; j < NR; ++j)
        c[i * ldc + j] += alpha * acc[i][j];
  } else {
    for (i = 0; i < mr; ++i)
      for (j = 0; j < nr; ++j)
        c[i * ldc + j] += alpha * acc[i][j];
  }
}

typedef void (*ref_micro_kernel_fn)(int64_t kc, const float *restrict a, const float *restrict b,
                                    float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
                                    float alpha);

/* A register tile: its rows (MR) and its kernel. */
typedef struct {
  int64_t mr;
  ref_micro_kernel_fn kernel;
} ref_tile;

static void ref_micro_kernel(int64_t kc, const float *restrict a, const float *restrict b,
                             float *restrict c, int64_t ldc, int64_t mr, int64_t nr, float alpha) {
  ref_micro_tile(MR_BUILD, kc, a, b, c, ldc, mr, nr, alpha);
}

#if REF_X86_TARGETS
__attribute__((target("avx512f,fma"))) static void
ref_micro_kernel_avx512(int64_t kc, const float *restrict a, const float *restrict b,
                        float *restrict c, int64_t ldc, int64_t mr, int64_t nr, float alpha) {
  ref_micro_tile(MR_WIDE, kc, a, b, c, ldc, mr, nr, alpha);
}
__attribute__((target("avx2,fma"))) static void
ref_micro_kernel_avx2(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, int64_t mr, int64_t nr, float alpha) {
  ref_micro_tile(MR_NARROW, kc, a, b, c, ldc, mr, nr, alpha);
}
#endif

/* The tile for this CPU: on x86-64 AVX-512's, else AVX2's with FMA, else the build's. */
static const ref_tile *ref_tile_get(void) {
  static const ref_tile build = {MR_BUILD, ref_micro_kernel};
#if REF_X86_TARGETS
  static const ref_tile avx512 = {MR_WIDE, ref_micro_kernel_avx512};
  static const ref_tile avx2 = {MR_NARROW, ref_micro_kernel_avx2};
  if (ref_cpu_has("avx512f"))
    return &avx512;
  if (ref_cpu_has("avx2") && ref_cpu_has("fma"))
    return &avx2;
#endif
  return &build;
}

size_t ref_sgemm_packed_a_floats(int64_t m, int64_t k) {
  return (size_t)(ref_round_up(m, ref_tile_get()->mr) * k);
}

void ref_sgemm_pack_a(const float *a, int64_t lda, int64_t m, int64_t k, float *dst) {
  const int64_t mr = ref_tile_get()->mr, rows = ref_round_up(m, mr);
  int64_t pc, ic;
  for (pc = 0; pc < k; pc += KC)
    for (ic = 0; ic < m; ic += MC)
      ref_pack_a(0, a, lda, ic, ref_min(MC, m - ic), pc, ref_min(KC, k - pc), mr,
                 dst + pc * rows + ic * ref_min(KC, k - pc));
}

/* ref_sgemm_packed_b's loops; `packed_a` (or NULL): A packed whole by ref_sgemm_pack_a, of
 * a_rows rows rounded up, this product's first row its row `a_row0` (a multiple of the tile's
 * rows), read where the loops would pack it. */
REF_HOT static void ref_sgemm_blocks(int trans_a, int64_t m, int64_t n, int64_t k, float alpha,
                                     const float *a, int64_t lda, const float *packed_a,
                                     int64_t a_rows, int64_t a_row0, ref_pack_b_fn pack_b,
                                     const void *b_ctx, float *c, int64_t ldc, float *pack) {
  const ref_tile *tile = ref_tile_get();
  int64_t jc, pc, ic, jr, ir, block = ref_sgemm_nc(m, n, k);
  float *pack_b_buf = pack, *pack_a;
  if (k == 0 || alpha == 0.0f)
    return; /* before any use of pack: an empty product has no scratch */
  pack_a = pack + ref_min(k, KC) * ref_round_up(ref_min(n, block), NR);
  for (jc = 0; jc < n; jc += block) {
    int64_t nc = ref_min(block, n - jc);
    for (pc = 0; pc < k; pc += KC) {
      int64_t kc = ref_min(KC, k - pc);
      pack_b(b_ctx, pc, kc, jc, nc, pack_b_buf);
      for (ic = 0; ic < m; ic += MC) {
        int64_t mc = ref_min(MC, m - ic);
        const float *pa = packed_a ? packed_a + pc * a_rows + (a_row0 + ic) * kc : pack_a;
        if (!packed_a)
          ref_pack_a(trans_a, a, lda, ic, mc, pc, kc, tile->mr, pack_a);
        for (jr = 0; jr < nc; jr += NR)
          for (ir = 0; ir < mc; ir += tile->mr)
            tile->kernel(kc, pa + ir * kc, pack_b_buf + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                         ref_min(tile->mr, mc - ir), ref_min(NR, nc - jr), alpha);
      }
    }
  }
}

void ref_sgemm_packed_b(int trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                        int64_t lda, ref_pack_b_fn pack_b, const void *b_ctx, float *c, int64_t ldc,
                        float *pack) {
  ref_sgemm_blocks(trans_a, m, n, k, alpha, a, lda, NULL, 0, 0, pack_b, b_ctx, c, ldc, pack);
}

/* C = beta * C for an m x n block, or C = row_bias[i] on row i where row_bias is given; the
 * GEMM blocks only accumulate. beta == 0 ignores C's contents. */
REF_HOT static void ref_init_c(float beta, const float *row_bias, int64_t m, int64_t n, float *c,
                               int64_t ldc) {
  int64_t i, j;
  if (row_bias)
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j)
        c[i * ldc + j] = row_bias[i];
  else if (beta != 1.0f)
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

/* C += alpha * op(A) * op(B) for one row of A over a dense B, without packing: what ref_sgemm
 * and ref_sgemm_mt compute when given no packing scratch (pack NULL), which products of one
 * row get (ref_mm_layout): packing B, read once, would cost more than the product (most of
 * EfficientNet-B0's 1280 x 1000 classifier, transposed: 0.92 ms packed at 1 thread). B is
 * streamed in its memory order. With B transposed (a PyTorch Linear's weights) each element
 * is a dot product along a row of B in 8 partial sums the compiler vectorizes; untransposed,
 * each element of C accumulates its column of B scaled by A's row in depth order. The sums
 * are in another order than the packed kernel's. */
#define REF_SGEMV_COLUMNS 2048 /* 8 KiB of C */
REF_HOT static void ref_sgemv(int trans_a, int trans_b, int64_t n, int64_t k, float alpha,
                              const float *a, int64_t lda, const float *b, int64_t ldb, float *c) {
  int64_t j, j0, p;
  if (trans_b) {
    for (j = 0; j < n; ++j) {
      const float *bj = b + j * ldb;
      /* the partial sums as variables: registers, where an array may stay in memory */
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0, sum = 0;
      if (!trans_a) {
        for (p = 0; p + 8 <= k; p += 8) {
          s0 += a[p] * bj[p];
          s1 += a[p + 1] * bj[p + 1];
          s2 += a[p + 2] * bj[p + 2];
          s3 += a[p + 3] * bj[p + 3];
          s4 += a[p + 4] * bj[p + 4];
          s5 += a[p + 5] * bj[p + 5];
          s6 += a[p + 6] * bj[p + 6];
          s7 += a[p + 7] * bj[p + 7];
        }
        for (; p < k; ++p)
          sum += a[p] * bj[p];
      } else {
        for (p = 0; p < k; ++p)
          sum += a[p * lda] * bj[p];
      }
      sum += s0;
      sum += s1;
      sum += s2;
      sum += s3;
      sum += s4;
      sum += s5;
      sum += s6;
      sum += s7;
      c[j] += alpha * sum;
    }
    return;
  }
  /* B's rows in order, four at a time, each added into a chunk of C's columns that stays in
     the first-level cache: four sequential streams of B (columns eight at a time over the whole
     depth read B across its rows, 32 bytes a row: a 768 x 50257 product took 17.4 ms so on one
     thread, 5.1 this way). Each column's additions are in depth order, as before. */
  for (j0 = 0; j0 < n; j0 += REF_SGEMV_COLUMNS) {
    const int64_t j1 = n - j0 < REF_SGEMV_COLUMNS ? n : j0 + REF_SGEMV_COLUMNS;
    for (p = 0; p + 4 <= k; p += 4) {
      const float s0 = alpha * a[trans_a ? p * lda : p];
      const float s1 = alpha * a[trans_a ? (p + 1) * lda : p + 1];
      const float s2 = alpha * a[trans_a ? (p + 2) * lda : p + 2];
      const float s3 = alpha * a[trans_a ? (p + 3) * lda : p + 3];
      const float *b0 = b + p * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      for (j = j0; j < j1; ++j)
        c[j] = (((c[j] + s0 * b0[j]) + s1 * b1[j]) + s2 * b2[j]) + s3 * b3[j];
    }
    for (; p < k; ++p) {
      const float s = alpha * a[trans_a ? p * lda : p], *bp = b + p * ldb;
      for (j = j0; j < j1; ++j)
        c[j] += s * bp[j];
    }
  }
}

void ref_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc, float *pack) {
  ref_dense_b dense;
  ref_init_c(beta, NULL, m, n, c, ldc);
  if (m == 1 && !pack) {
    if (k > 0 && alpha != 0.0f)
      ref_sgemv(trans_a, trans_b, n, k, alpha, a, lda, b, ldb, c);
    return;
  }
  dense.trans = trans_b;
  dense.b = b;
  dense.ldb = ldb;
  ref_sgemm_packed_b(trans_a, m, n, k, alpha, a, lda, ref_pack_dense_b, &dense, c, ldc, pack);
}

/* ---- Threads ------------------------------------------------------------------------------
 * A product on T threads is T independent blocks of C: column blocks (multiples of NR) or
 * row blocks (multiples of MR), each computed by ref_sgemm_packed_b with the thread's own
 * packing buffers. Each element of C sees the same operations in the same order as on one
 * thread (the depth blocks depend on k alone, every tile element accumulates on its own), so
 * the result is bit-identical at any thread count. Splitting the columns repacks A once more
 * per thread, splitting the rows repacks all of B (the im2col gather of a convolution) per
 * thread: columns are split when there are at least as many as rows, and enough of them. A
 * block's packing scratch never exceeds the whole product's (ref_sgemm_nc grows with m * n),
 * so each thread's copy of the node's scratch holds it at the same offset. */

/* Products under this many multiply-adds stay on one thread: waking the workers (tens of
 * microseconds) would cost more than they save. */
#define REF_SGEMM_PARALLEL_MIN ((int64_t)1 << 21)

/* A B operand seen from column `j0` on. */
typedef struct {
  ref_pack_b_fn pack_b;
  const void *ctx;
  int64_t j0;
} ref_shifted_b;

static void ref_pack_shifted_b(const void *ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                               float *dst) {
  const ref_shifted_b *s = (const ref_shifted_b *)ctx;
  s->pack_b(s->ctx, p0, kc, s->j0 + j0, nc, dst);
}

typedef struct {
  int trans_a, split_cols;
  int64_t m, n, k, lda, ldc;
  float alpha, beta;
  const float *a, *row_bias;
  const float *packed_a; /* or NULL (ref_sgemm_blocks) */
  int64_t a_rows;
  ref_pack_b_fn pack_b;
  const void *b_ctx;
  float *c;
  size_t pack_at; /* the packing buffers' offset in the node's scratch */
} ref_sgemm_job;

static void ref_sgemm_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_sgemm_job *g = (const ref_sgemm_job *)arg;
  float *pack = (float *)ref_scratch_at(scratch, g->pack_at);
  int64_t lo, hi;
  if (g->split_cols) {
    ref_shifted_b b;
    ref_split(g->n, NR, index, parts, &lo, &hi);
    b.pack_b = g->pack_b;
    b.ctx = g->b_ctx;
    b.j0 = lo;
    ref_init_c(g->beta, g->row_bias, g->m, hi - lo, g->c + lo, g->ldc);
    ref_sgemm_blocks(g->trans_a, g->m, hi - lo, g->k, g->alpha, g->a, g->lda, g->packed_a,
                     g->a_rows, 0, ref_pack_shifted_b, &b, g->c + lo, g->ldc, pack);
    return;
  }
  ref_split(g->m, ref_tile_get()->mr, index, parts, &lo, &hi);
  ref_init_c(g->beta, g->row_bias ? g->row_bias + lo : NULL, hi - lo, g->n, g->c + lo * g->ldc,
             g->ldc);
  ref_sgemm_blocks(g->trans_a, hi - lo, g->n, g->k, g->alpha,
                   g->trans_a ? g->a + lo : g->a + lo * g->lda, g->lda, g->packed_a, g->a_rows, lo,
                   g->pack_b, g->b_ctx, g->c + lo * g->ldc, g->ldc, pack);
}

/* C = beta * C (or row_bias) + alpha * op(A) B on the node's threads; 0 when it should run
 * on one. */
static int ref_sgemm_parallel(const ref_io *io, int trans_a, int64_t m, int64_t n, int64_t k,
                              float alpha, const float *a, int64_t lda, const float *packed_a,
                              ref_pack_b_fn pack_b, const void *b_ctx, float beta,
                              const float *row_bias, float *c, int64_t ldc, float *pack) {
  ref_threads *pool = io ? ref_io_threads(io) : NULL;
  const int64_t col_blocks = (n + NR - 1) / NR, mr = ref_tile_get()->mr,
                row_blocks = (m + mr - 1) / mr;
  int64_t threads = ref_threads_count(pool), blocks;
  ref_sgemm_job g;
  if (threads < 2 || m * n * k < REF_SGEMM_PARALLEL_MIN)
    return 0;
  g.split_cols = n >= m ? col_blocks >= threads || col_blocks >= row_blocks
                        : row_blocks < threads && col_blocks > row_blocks;
  blocks = g.split_cols ? col_blocks : row_blocks;
  if (blocks < 2)
    return 0;
  g.trans_a = trans_a;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = lda;
  g.ldc = ldc;
  g.alpha = alpha;
  g.beta = beta;
  g.row_bias = row_bias;
  g.a = a;
  g.packed_a = packed_a;
  g.a_rows = ref_round_up(m, mr);
  g.pack_b = pack_b;
  g.b_ctx = b_ctx;
  g.c = c;
  g.pack_at = (size_t)((unsigned char *)pack - (unsigned char *)io->scratch);
  ref_parallel(pool, (int)(blocks < threads ? blocks : threads), ref_sgemm_part, &g,
               (unsigned char *)io->scratch);
  return 1;
}

/* A product of one row without packing (ref_sgemv): columns [lo, hi) of part `index`. */
typedef struct {
  int trans_a, trans_b;
  int64_t n, k, lda, ldb;
  float alpha, beta;
  const float *a, *b, *row_bias;
  float *c;
} ref_sgemv_job;

static void ref_sgemv_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_sgemv_job *g = (const ref_sgemv_job *)arg;
  int64_t lo, hi;
  (void)scratch;
  ref_split(g->n, 16, index, parts, &lo, &hi);
  ref_init_c(g->beta, g->row_bias, 1, hi - lo, g->c + lo, g->n);
  if (g->k > 0 && g->alpha != 0.0f)
    ref_sgemv(g->trans_a, g->trans_b, hi - lo, g->k, g->alpha, g->a, g->lda,
              g->trans_b ? g->b + lo * g->ldb : g->b + lo, g->ldb, g->c + lo);
}

void ref_sgemm_mt(const ref_io *io, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *packed_a, const float *b,
                  int64_t ldb, float beta, const float *row_bias, float *c, int64_t ldc,
                  float *pack) {
  ref_dense_b dense;
  if (m == 1 && !pack) { /* the columns split over the threads where the product is large */
    ref_threads *pool = io ? ref_io_threads(io) : NULL;
    int64_t threads = ref_threads_count(pool), blocks = (n + 15) / 16;
    ref_sgemv_job g;
    g.trans_a = trans_a;
    g.trans_b = trans_b;
    g.n = n;
    g.k = k;
    g.lda = lda;
    g.ldb = ldb;
    g.alpha = alpha;
    g.beta = beta;
    g.a = a;
    g.b = b;
    g.row_bias = row_bias;
    g.c = c;
    if (threads < 2 || n * k < REF_SGEMM_PARALLEL_MIN || blocks < 2)
      ref_sgemv_part(&g, 0, 1, NULL);
    else
      ref_parallel(pool, (int)(blocks < threads ? blocks : threads), ref_sgemv_part, &g, NULL);
    return;
  }
  dense.trans = trans_b;
  dense.b = b;
  dense.ldb = ldb;
  ref_sgemm_packed_b_mt(io, trans_a, m, n, k, alpha, a, lda, packed_a, ref_pack_dense_b, &dense,
                        beta, row_bias, c, ldc, pack);
}

void ref_sgemm_packed_b_mt(const ref_io *io, int trans_a, int64_t m, int64_t n, int64_t k,
                           float alpha, const float *a, int64_t lda, const float *packed_a,
                           ref_pack_b_fn pack_b, const void *b_ctx, float beta,
                           const float *row_bias, float *c, int64_t ldc, float *pack) {
  if (ref_sgemm_parallel(io, trans_a, m, n, k, alpha, a, lda, packed_a, pack_b, b_ctx, beta,
                         row_bias, c, ldc, pack))
    return;
  ref_init_c(beta, row_bias, m, n, c, ldc);
  ref_sgemm_blocks(trans_a, m, n, k, alpha, a, lda, packed_a,
                   packed_a ? ref_round_up(m, ref_tile_get()->mr) : 0, 0, pack_b, b_ctx, c, ldc,
                   pack);
}

/* ---- ref_dgemm --------------------------------------------------------------------------- */

/* Column and depth blocks: a DKC x DNC panel of B (512 KiB) stays in L2 while every row of A
 * streams over it; the innermost loop runs along a row of B and C, which the compiler
 * vectorizes. */
enum { DKC = 128, DNC = 512 };

void ref_dgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc) {
  int64_t i, j, p, jc, pc;
  if (beta != 1.0)
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
  if (k == 0 || alpha == 0.0)
    return;
  if (trans_b) { /* rows of B are columns of op(B): dot products */
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j) {
        double s = 0.0;
        for (p = 0; p < k; ++p)
          s += (trans_a ? a[p * lda + i] : a[i * lda + p]) * b[j * ldb + p];
        c[i * ldc + j] += alpha * s;
      }
    return;
  }
  for (jc = 0; jc < n; jc += DNC) {
    int64_t nc = ref_min(DNC, n - jc);
    for (pc = 0; pc < k; pc += DKC) {
      int64_t kc = ref_min(DKC, k - pc);
      for (i = 0; i < m; ++i) {
        double *crow = c + i * ldc + jc;
        for (p = pc; p < pc + kc; ++p) {
          const double aip = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
          const double *brow = b + p * ldb + jc;
          for (j = 0; j < nc; ++j)
            crow[j] += aip * brow[j];
        }
      }
    }
  }
}

/* ---- Matrix products of every numeric type --------------------------------------------- */

/* One product y = alpha * op(A) op(B), A and B dense (lda / ldb implied by the transposes),
 * y row-major m x n. How each type computes:
 * - float32: ref_sgemm; float64: ref_dgemm;
 * - float16, bfloat16: A and B converted to float32 in scratch, ref_sgemm, y rounded once;
 * - integers: exact wrap-around arithmetic in the type's width (products and sums modulo
 *   2^64, then truncated); with a non-integral alpha the product is scaled in double and
 *   converted with saturation (ref_set). */
typedef struct {
  int trans_a, trans_b;
  int64_t m, n, k;
  odla_element_type type;
  size_t af_at, bf_at, yf_at, pack_at, bytes; /* scratch layout in bytes */
  int unpacked;                               /* a product of one row: no packing (ref_sgemv) */
} ref_mm_shape;

static void ref_mm_layout(ref_mm_shape *s) {
  size_t at = 0;
  if (s->type == ODLA_FLOAT16 || s->type == ODLA_BFLOAT16) {
    s->af_at = at;
    at += ref_nn_align((size_t)(s->m * s->k) * sizeof(float));
    s->bf_at = at;
    at += ref_nn_align((size_t)(s->k * s->n) * sizeof(float));
    s->yf_at = at;
    at += ref_nn_align((size_t)(s->m * s->n) * sizeof(float));
  }
  s->pack_at = at;
  s->unpacked = s->m == 1;
  if ((s->type == ODLA_FLOAT32 || s->type == ODLA_FLOAT16 || s->type == ODLA_BFLOAT16) &&
      !s->unpacked)
    at += ref_sgemm_scratch(s->m, s->n, s->k) * sizeof(float);
  s->bytes = at;
}

/* C, when given, is added as beta * C[ci(i, j)] with ci from the broadcast extents below. */
typedef struct {
  const void *c;
  double beta;
  int64_t rows, cols; /* C's extent after aligning it to [M, N] (1 = broadcast) */
} ref_mm_bias;

#define REF_DEFINE_IMM(E, S, C, SFX)                                                               \
  static void ref_imm_##SFX(const ref_mm_shape *s, double alpha, const S *a, const S *b,           \
                            const ref_mm_bias *bias, S *y) {                                       \
    const int64_t lda = s->trans_a ? s->m : s->k, ldb = s->trans_b ? s->k : s->n;                  \
    const S *cv = bias ? (const S *)bias->c : NULL;                                                \
    const double beta = bias ? bias->beta : 0.0;                                                   \
    const int exact = alpha == (double)(int64_t)alpha && beta == (double)(int64_t)beta;            \
    int64_t i, j, p;                                                                               \
    for (i = 0; i < s->m; ++i)                                                                     \
      for (j = 0; j < s->n; ++j) {                                                                 \
        uint64_t acc = 0, cij = 0;                                                                 \
        for (p = 0; p < s->k; ++p)                                                                 \
          acc += (uint64_t)(s->trans_a ? a[p * lda + i] : a[i * lda + p]) *                        \
                 (uint64_t)(s->trans_b ? b[j * ldb + p] : b[p * ldb + j]);                         \
        if (cv)                                                                                    \
          cij = (uint64_t)cv[(bias->rows == 1 ? 0 : i) * bias->cols + (bias->cols == 1 ? 0 : j)];  \
        if (exact)                                                                                 \
          y[i * s->n + j] = (S)(acc * (uint64_t)(int64_t)alpha + cij * (uint64_t)(int64_t)beta);   \
        else if (E == ODLA_INT8 || E == ODLA_INT16 || E == ODLA_INT32 || E == ODLA_INT64)          \
          ref_set(E, y, i * s->n + j, alpha * (double)(int64_t)acc + beta * (double)(int64_t)cij); \
        else                                                                                       \
          ref_set(E, y, i * s->n + j, alpha * (double)acc + beta * (double)cij);                   \
      }                                                                                            \
  }
REF_FOR_INT_TYPES(REF_DEFINE_IMM)
#undef REF_DEFINE_IMM

/* y += beta * C for a float result held as T (float for float16/bfloat16, before rounding). */
#define REF_DEFINE_ADD_BIAS(T, SFX)                                                                \
  static void ref_mm_add_bias_##SFX(const ref_mm_shape *s, const ref_mm_bias *bias, T *y) {        \
    int64_t i, j;                                                                                  \
    for (i = 0; i < s->m; ++i)                                                                     \
      for (j = 0; j < s->n; ++j)                                                                   \
        y[i * s->n + j] += (T)(bias->beta * ref_get(s->type, bias->c,                              \
                                                    (bias->rows == 1 ? 0 : i) * bias->cols +       \
                                                        (bias->cols == 1 ? 0 : j)));               \
  }
REF_DEFINE_ADD_BIAS(float, f32)
REF_DEFINE_ADD_BIAS(double, f64)
#undef REF_DEFINE_ADD_BIAS

static void ref_mm(const ref_io *io, const ref_mm_shape *s, double alpha, const void *a,
                   const void *b, const ref_mm_bias *bias, void *y) {
  const int64_t lda = s->trans_a ? s->m : s->k, ldb = s->trans_b ? s->k : s->n;
  unsigned char *scratch = (unsigned char *)io->scratch;
  float *pack = s->unpacked ? NULL : (float *)ref_scratch_at(scratch, s->pack_at);
  switch (s->type) {
  case ODLA_FLOAT32:
    ref_sgemm_mt(io, s->trans_a, s->trans_b, s->m, s->n, s->k, (float)alpha, (const float *)a, lda,
                 NULL, (const float *)b, ldb, 0.0f, NULL, (float *)y, s->n, pack);
    if (bias)
      ref_mm_add_bias_f32(s, bias, (float *)y);
    break;
  case ODLA_FLOAT64:
    ref_dgemm(s->trans_a, s->trans_b, s->m, s->n, s->k, alpha, (const double *)a, lda,
              (const double *)b, ldb, 0.0, (double *)y, s->n);
    if (bias)
      ref_mm_add_bias_f64(s, bias, (double *)y);
    break;
  case ODLA_FLOAT16:
  case ODLA_BFLOAT16: {
    float *af = (float *)(scratch + s->af_at), *bf = (float *)(scratch + s->bf_at);
    float *yf = (float *)(scratch + s->yf_at);
    ref_nn_to_float(s->type, (const uint16_t *)a, af, s->m * s->k);
    ref_nn_to_float(s->type, (const uint16_t *)b, bf, s->k * s->n);
    ref_sgemm_mt(io, s->trans_a, s->trans_b, s->m, s->n, s->k, (float)alpha, af, lda, NULL, bf, ldb,
                 0.0f, NULL, yf, s->n, pack);
    if (bias)
      ref_mm_add_bias_f32(s, bias, yf);
    ref_nn_from_float(s->type, yf, (uint16_t *)y, s->m * s->n);
    break;
  }
#define REF_IMM_CASE(E, S, C, SFX)                                                                 \
  case E:                                                                                          \
    ref_imm_##SFX(s, alpha, (const S *)a, (const S *)b, bias, (S *)y);                             \
    break;
    REF_FOR_INT_TYPES(REF_IMM_CASE)
#undef REF_IMM_CASE
  default:
    break;
  }
}

static int ref_mm_type_ok(odla_element_type t) { return ref_is_float(t) || ref_is_int(t); }

/* ---- odla_Gemm ----------------------------------------------------------------------- */

typedef struct {
  ref_mm_shape mm;
  float alpha, beta;
  int64_t c_rows, c_cols; /* C's extent after aligning it to [M, N] (1 = broadcast) */
} ref_gemm_params;

static odla_status ref_gemm_run(const ref_node *node, const ref_io *io) {
  const ref_gemm_params *p = (const ref_gemm_params *)node->params;
  const ref_mm_shape *s = &p->mm;
  int64_t i, j;
  if (s->type == ODLA_FLOAT32) { /* C first, then the GEMM accumulates onto it */
    float *y = (float *)io->out[0];
    float beta = 0.0f;
    if (io->in[2] && p->beta != 0.0f) {
      const float *cv = (const float *)io->in[2];
      for (i = 0; i < s->m; ++i)
        for (j = 0; j < s->n; ++j)
          y[i * s->n + j] =
              p->beta * cv[(p->c_rows == 1 ? 0 : i) * p->c_cols + (p->c_cols == 1 ? 0 : j)];
      beta = 1.0f;
    }
    ref_sgemm_mt(io, s->trans_a, s->trans_b, s->m, s->n, s->k, p->alpha, (const float *)io->in[0],
                 s->trans_a ? s->m : s->k, NULL, (const float *)io->in[1], s->trans_b ? s->k : s->n,
                 beta, NULL, y, s->n,
                 s->unpacked ? NULL : (float *)ref_scratch_at(io->scratch, s->pack_at));
    return ODLA_SUCCESS;
  }
  {
    ref_mm_bias bias;
    bias.c = io->in[2];
    bias.beta = p->beta;
    bias.rows = p->c_rows;
    bias.cols = p->c_cols;
    ref_mm(io, s, p->alpha, io->in[0], io->in[1], io->in[2] && p->beta != 0.0f ? &bias : NULL,
           io->out[0]);
  }
  return ODLA_SUCCESS;
}

/* alpha * op(A) op(B) + beta * C for every float and integer type (see ref_mm for how each
 * computes). A and B are matrices of one element type; C, of the same type, broadcasts to
 * [M, N] numpy-style (rank 0 to 2). */
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
  if (!ref_mm_type_ok(A->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Gemm", "element type %s is not supported",
                    ref_type_name(A->type.element_type));
  if (B->type.element_type != A->type.element_type ||
      (C && C->type.element_type != A->type.element_type))
    return ref_fail(ODLA_INVALID_PARAM, "Gemm",
                    "A, B and C must have one element type (%s, %s, %s)",
                    ref_type_name(A->type.element_type), ref_type_name(B->type.element_type),
                    C ? ref_type_name(C->type.element_type) : "none");
  if (A->type.shape.size != 2 || B->type.shape.size != 2)
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "A %s and B %s must be matrices",
                    ref_shape_str(&A->type.shape, s1, sizeof s1),
                    ref_shape_str(&B->type.shape, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.mm.type = A->type.element_type;
  p.mm.trans_a = A_transpose != 0;
  p.mm.trans_b = B_transpose != 0;
  p.mm.m = A->type.shape.dims[p.mm.trans_a ? 1 : 0];
  p.mm.k = A->type.shape.dims[p.mm.trans_a ? 0 : 1];
  p.mm.n = B->type.shape.dims[p.mm.trans_b ? 0 : 1];
  if (B->type.shape.dims[p.mm.trans_b ? 1 : 0] != p.mm.k)
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "inner dimensions differ: A %s%s, B %s%s",
                    ref_shape_str(&A->type.shape, s1, sizeof s1), p.mm.trans_a ? " transposed" : "",
                    ref_shape_str(&B->type.shape, s2, sizeof s2),
                    p.mm.trans_b ? " transposed" : "");
  p.alpha = alpha;
  p.beta = beta;
  if (C) {
    const odla_value_shape *cs = &C->type.shape;
    p.c_rows = cs->size >= 2 ? cs->dims[cs->size - 2] : 1;
    p.c_cols = cs->size >= 1 ? cs->dims[cs->size - 1] : 1;
    if (cs->size > 2 || (p.c_rows != 1 && p.c_rows != p.mm.m) ||
        (p.c_cols != 1 && p.c_cols != p.mm.n))
      return ref_fail(ODLA_INVALID_PARAM, "Gemm", "C %s does not broadcast to [%lld,%lld]",
                      ref_shape_str(cs, s1, sizeof s1), (long long)p.mm.m, (long long)p.mm.n);
  }
  out.element_type = p.mm.type;
  out.shape.size = 2;
  out.shape.dims[0] = p.mm.m;
  out.shape.dims[1] = p.mm.n;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Gemm", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (!ref_result_fits("Gemm", &out)) /* the scratch layout multiplies m and n */
    return NULL;
  ref_mm_layout(&p.mm);
  v = ref_add_op("Gemm", ref_gemm_run, 3, in, out, value_id, &p, sizeof p);
  if (v) {
    v->node->scratch_bytes = p.mm.bytes;
    v->node->flops = ref_mul_sat(2 * p.mm.m * p.mm.n, p.mm.k);
  }
  return v;
}

/* ---- odla_BatchMatMul ---------------------------------------------------------------- */

typedef struct {
  ref_mm_shape mm;
  int batch_rank;
  int64_t batch[ODLA_MAX_DIMENSION];                      /* output batch dims */
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION]; /* matrix strides, 0 = broadcast */
} ref_bmm_params;

static odla_status ref_bmm_run(const ref_node *node, const ref_io *io) {
  const ref_bmm_params *p = (const ref_bmm_params *)node->params;
  const ref_mm_shape *s = &p->mm;
  size_t elem = ref_elem_size(s->type);
  const unsigned char *a = (const unsigned char *)io->in[0], *b = (const unsigned char *)io->in[1];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0;
  int d;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  for (;;) {
    ref_mm(io, s, 1.0, a + (size_t)(oa * s->m * s->k) * elem, b + (size_t)(ob * s->k * s->n) * elem,
           NULL, y);
    y += (size_t)(s->m * s->n) * elem;
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

/* Batches of op(A) op(B) over the leading axes, which broadcast numpy-style; every float and
 * integer type, as odla_Gemm. */
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
  if (!ref_mm_type_ok(A->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "BatchMatMul", "element type %s is not supported",
                    ref_type_name(A->type.element_type));
  if (B->type.element_type != A->type.element_type)
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "A is %s but B %s",
                    ref_type_name(A->type.element_type), ref_type_name(B->type.element_type));
  if (as->size < 2 || bs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "operands %s and %s need rank >= 2",
                    ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.mm.type = A->type.element_type;
  p.mm.trans_a = A_transpose != 0;
  p.mm.trans_b = B_transpose != 0;
  p.mm.m = as->dims[as->size - (p.mm.trans_a ? 1 : 2)];
  p.mm.k = as->dims[as->size - (p.mm.trans_a ? 2 : 1)];
  p.mm.n = bs->dims[bs->size - (p.mm.trans_b ? 2 : 1)];
  if (bs->dims[bs->size - (p.mm.trans_b ? 1 : 2)] != p.mm.k)
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
  out.element_type = p.mm.type;
  out.shape.size = p.batch_rank + 2;
  for (i = 0; i < p.batch_rank; ++i)
    out.shape.dims[i] = p.batch[i];
  out.shape.dims[p.batch_rank] = p.mm.m;
  out.shape.dims[p.batch_rank + 1] = p.mm.n;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "BatchMatMul", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (!ref_result_fits("BatchMatMul", &out)) /* the scratch layout multiplies m and n */
    return NULL;
  if (p.batch_rank == 0) { /* keep the batch loop uniform: one batch of extent 1 */
    p.batch_rank = 1;
    p.batch[0] = 1;
  }
  ref_mm_layout(&p.mm);
  v = ref_add_op("BatchMatMul", ref_bmm_run, 2, in, out, value_id, &p, sizeof p);
  if (v) {
    v->node->scratch_bytes = p.mm.bytes;
    v->node->flops = ref_mul_sat(2 * p.mm.m * p.mm.n, p.mm.k);
    for (i = 0; i < p.batch_rank; ++i)
      v->node->flops = ref_mul_sat(v->node->flops, p.batch[i]);
  }
  return v;
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_gemm_describe(const ref_node *node, int *trans_a, int *trans_b, float *alpha, float *beta) {
  const ref_gemm_params *p = (const ref_gemm_params *)node->params;
  if (node->run != ref_gemm_run)
    return 0;
  *trans_a = p->mm.trans_a;
  *trans_b = p->mm.trans_b;
  *alpha = p->alpha;
  *beta = p->beta;
  return 1;
}
