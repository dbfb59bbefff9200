/* qgemm.h: the integer GEMM under the reference backend's quantized products
 * (ops_quant_int.c: odla_ExtQLinearConv, odla_ExtQLinearMatMul):
 *
 *   y[r][c] = clamp(round_half_to_even((sum_k P[r][k] * V[k][c] + bias) * mult / 2^shift) + zp,
 *                   lo, hi)
 *
 * with bias, mult and shift per row or per column. Both operands are int16 (8-bit data less its
 * zero point, in [-255, 255]), the sums int32 (the callers' bound keeps every partial sum in
 * int32), the requantization exact (int64, one rounding).
 *
 * Operand layouts, built by the callers (ref_qg_v_at places an element of V):
 * - P, the row operand: rows of kp int16 (kp = k rounded up to even, the pad zero), row r at
 *   p + r * ldp. Its pairs (P[r][2i], P[r][2i + 1]) are read as one 32-bit word and broadcast.
 * - V, the column operand: panels of REF_QG_NR columns, each kp / 2 pair rows of REF_QG_NR
 *   (V[2i][c], V[2i + 1][c]) pairs, kp * REF_QG_NR values a panel; columns past the product's
 *   last are zero.
 * so that each pair row is one multiply-add of int16 pairs into int32 lanes per REF_QG_NR / 8
 * registers (pmaddwd; vpdpwssd with VNNI), with no horizontal sums: a tile of REF_QG_MR rows x
 * REF_QG_NR columns accumulates in registers.
 *
 * Kernels: AVX2 intrinsics on x86-64 CPUs with AVX2 and FMA, 512-bit VPDPWSSD tiles (one or two
 * panels a call) on CPUs with AVX512-VNNI (chosen when they run; qgemm.c);
 * where the compiler targets them, Helium (__ARM_FEATURE_MVE), NEON (__ARM_NEON) or Arm's DSP
 * extension (__ARM_FEATURE_DSP: SMLAD, whose operands are such pairs); else the portable C99 loop
 * on the same layouts; tests/runtime's qgemm test checks that both give the same bytes (tests/build
 * runs it on Arm too). The layouts and the scratch sizes are the same on every target: odlac plans
 * the arena on the host. */
#ifndef ODLA_REFERENCE_QGEMM_H_
#define ODLA_REFERENCE_QGEMM_H_

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { REF_QG_MR = 6, REF_QG_NR = 16 };

/* Where outputs go and how they are requantized. */
typedef struct {
  const int32_t *bias, *mult, *shift; /* indexed by row (per_row) or by column; bias may be 0s */
  int per_row;
  int32_t zp, lo, hi; /* output zero point and clamp */
  int y_signed;       /* int8 outputs, else uint8 */
  int raw;            /* no requantization: int32 outputs, acc + bias */
  unsigned char *y;   /* output (r, c) at element r * y_row + c (ref_qg_y) */
  int64_t y_row;
  /* ref_qg_prepare's: when `fast`, the requantization runs in float64, exactly */
  int fast;
  const double *scale;
  const int32_t *smin, *smax;
} ref_qg_out;

/* d rounded half to even, for |d| < 2^51, in the default rounding mode: 1.5 * 2^52 added and
 * taken away again (where doubles are evaluated wider, FLT_EVAL_METHOD != 0, rint). */
static inline double ref_qg_round_even(double d) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
  return (d + 6755399441055744.0) - 6755399441055744.0;
#else
  return rint(d);
#endif
}

/* round_half_to_even(t / 2^shift), exactly, for |t| < 2^62 and shift in [1, 62]: without
 * branches, floor((t + 2^(shift-1) - 1 + odd) / 2^shift), where odd is whether floor(t /
 * 2^shift) is odd, rounds up exactly the remainders above one half and the half of an odd
 * quotient. Each floor is an unsigned shift of the sum offset by 2^63 (no negative number is
 * shifted: that is implementation-defined in C99), less the offset's shift, which is even for
 * every shift (with 2^62, a shift of 62 took ties the wrong way). */
static inline int64_t ref_qg_round_shift(int64_t t, int32_t shift) {
  const uint64_t offset = (uint64_t)1 << 63, u = (uint64_t)t + offset; /* in [2^62, 3 * 2^62) */
  const uint64_t half = ((uint64_t)1 << shift >> 1) - 1 + ((u >> shift) & 1);
  return (int64_t)((u + half) >> shift) - (int64_t)(offset >> shift);
}

/* The bytes of an output element, and where element `at` of o's outputs is. */
static inline size_t ref_qg_esize(const ref_qg_out *o) { return o->raw ? 4 : 1; }
static inline unsigned char *ref_qg_y(const ref_qg_out *o, int64_t at) {
  return o->y + (size_t)at * ref_qg_esize(o);
}

/* o for the channels from `first` on: its per-channel arrays advanced by first. */
static inline ref_qg_out ref_qg_out_from(ref_qg_out o, int64_t first) {
  o.bias += first;
  o.mult += first;
  o.shift += first;
  if (o.scale) {
    o.scale += first;
    o.smin += first;
    o.smax += first;
  }
  return o;
}

/* Whether the float64 requantization (ref_qg_prepare) is used at all: not on 32-bit Arm, where
 * the exact integer one is cheaper (SMULL's 64-bit product; float64 is software on cores
 * with a single-precision FPU or none, the Cortex-M4's, M33's, M0's). */
#if defined(__arm__)
#define REF_QG_FLOAT64 0
#else
#define REF_QG_FLOAT64 1
#endif

/* Fills, for n channels of multipliers and shifts, what makes the requantization a float64
 * product and one rounding: scale[c] = mult[c] / 2^shift[c] (exact) and the range
 * [smin[c], smax[c]] that acc + bias is clamped to first. Outside it the result is clamped
 * anyway (lo or hi: the requantization is monotonic), and inside it |acc + bias| * mult <
 * 2^53 keeps the product exact, so that round-half-to-even of it is the exact result (and
 * |acc + bias| * scale < 2^30 keeps it inside int32). Returns whether that holds for every
 * channel and REF_QG_FLOAT64 (else the requantization must take the int64 path). */
int ref_qg_prepare(int64_t n, const int32_t *mult, const int32_t *shift, int32_t zp, int32_t lo,
                   int32_t hi, double *scale, int32_t *smin, int32_t *smax);

/* Requantizes n sums s of channel ch (its bias, multiplier and shift) into y[0, n). */
void ref_qg_requantize_run(const ref_qg_out *o, int64_t ch, const int32_t *s, int64_t n,
                           unsigned char *y);
/* Requantizes s[c] with channel c's parameters into y[c], c in [0, n). */
void ref_qg_requantize_channels(const ref_qg_out *o, const int32_t *s, int64_t n, unsigned char *y);

/* One product: rows [r0, r1) x columns [c0, c1), c0 a multiple of REF_QG_NR. */
typedef struct {
  int64_t kp;       /* even depth */
  const int16_t *p; /* row r at p + r * ldp */
  int64_t ldp;
  const int16_t *v; /* the panel holding column v_col0 (a multiple of REF_QG_NR) */
  int64_t v_col0;
  ref_qg_out out;
} ref_qg;

/* Index in V (panels of kp values x REF_QG_NR columns) of element (k, c). */
static inline int64_t ref_qg_v_at(int64_t kp, int64_t k, int64_t c) {
  return c / REF_QG_NR * (kp * REF_QG_NR) + k / 2 * (2 * REF_QG_NR) + c % REF_QG_NR * 2 + k % 2;
}

/* Values in V for `cols` columns of depth kp (whole panels). */
static inline int64_t ref_qg_v_count(int64_t kp, int64_t cols) {
  return (cols + REF_QG_NR - 1) / REF_QG_NR * REF_QG_NR * kp;
}

/* Computes and stores outputs [r0, r1) x [c0, c1): panel by panel for each block of
 * REF_QG_MR rows (the rows' P in L1 against V's panels), or, with more columns than rows,
 * row block by row block for each panel (so that the larger operand is read once). */
void ref_qg_run(const ref_qg *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/* The same with the portable kernel whatever the target: for tests/runtime's comparison. */
void ref_qg_run_portable(const ref_qg *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/* The 8-bit product, for CPUs with AVX512-VNNI (ref_qg8_available): one operand is data taken
 * as unsigned bytes (a caller adds 128 to int8 data), the other an int8 kernel, and V's panels of
 * REF_QG_NR columns hold groups of 4 depths (ref_qg8_v_at: 64 bytes a group row, one register),
 * so that each group row is one VPDPBUSD per tile row: 64 products an instruction, twice an
 * int16 pair's. The rows of P are the data and V the kernel (a MatMul's), or, with
 * kernel_rows, P the kernel and V the data (a channels-first convolution's im2col blocks). The
 * sums wrap modulo 2^32 where an int16 pair's would not (the data is not less its zero point),
 * and sub[j] (the zero point's and the 128's share: (128 + zp) x the kernel's sum for column
 * or, with kernel_rows, row j) is taken from each before the requantization: the result is
 * exact wherever the int16 product's is. */
typedef struct {
  int64_t kq;             /* depth rounded up to a multiple of 4 (the pad: 0 in the kernel) */
  const unsigned char *p; /* row r at p + r * ldp */
  int64_t ldp;
  const unsigned char *v; /* the panel holding column v_col0 (a multiple of REF_QG_NR) */
  int64_t v_col0;
  const int32_t *sub; /* by column from 0, or by row from 0 with kernel_rows */
  int kernel_rows;    /* P int8 and V unsigned, else P unsigned and V int8 */
  ref_qg_out out;
} ref_qg8;

static inline int64_t ref_qg8_v_at(int64_t kq, int64_t k, int64_t c) {
  return c / REF_QG_NR * (kq * REF_QG_NR) + k / 4 * (4 * REF_QG_NR) + c % REF_QG_NR * 4 + k % 4;
}

/* Group row k / 4 (k a multiple of 4) of V's columns [0, n) for depths k .. k + 3 from the
 * byte rows src[0..3] (a NULL row: zeros), each byte xor flip, at v (V's first panel): the
 * columns past n to the panel's end are zeros. */
void ref_qg8_group_row(const unsigned char *const src[4], int64_t n, unsigned char flip,
                       unsigned char *v, int64_t kq, int64_t k);

/* Whether this CPU runs ref_qg8_run's kernels (x86-64 with AVX512-VNNI). */
int ref_qg8_available(void);
/* ref_qg_run for the 8-bit product; ref_qg8_run_portable: its portable loop, for the tests. */
void ref_qg8_run(const ref_qg8 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1);
void ref_qg8_run_portable(const ref_qg8 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

/* A channel's 3 x 3 depthwise convolution (dilation 1) over a padded plane of bytes taken as
 * unsigned, for output rows o < oh and columns j < ow:
 *   s[o * ow + j] = start + sum over kh, kw < 3 of
 *                   x[(o * row_stride + kh) * pitch + j * stride + kw] * taps[kh * 3 + kw]
 * modulo 2^32, stride 1 or 2. On x86-64 with AVX512-VBMI and AVX512-VNNI
 * (ref_qg_dw3_bytes_available) a window row of 16 outputs is one load, one VPERMB (each
 * output's 3 bytes into its lane) and one VPDPBUSD: the data is not widened to int16. A row may
 * write up to 15 sums past its end (into the next row's, which that row overwrites: s holds
 * (oh - 1) * ow + ref_qg_row_room(ow) values) and read up to 64 bytes past its window rows'
 * last (the plane's slack). */
typedef struct {
  const unsigned char *x;
  int64_t pitch, row_stride, stride, oh, ow;
  int8_t taps[9];
  int32_t start;
  int32_t *s;
} ref_qg_dw3_bytes;
int ref_qg_dw3_bytes_available(void);
void ref_qg_dw3_bytes_run(const ref_qg_dw3_bytes *q);
/* The same in portable C whatever the CPU (the other CPUs' path is the int16 one): for
 * tests/runtime's comparison. */
void ref_qg_dw3_bytes_portable(const ref_qg_dw3_bytes *q);

/* clamp(round_half_to_even(acc * mult / 2^shift) + zp, lo, hi) in exact integer arithmetic,
 * for 0 <= mult < 2^31 and shift in [1, 62]. */
int32_t ref_qg_requantize(int32_t acc, int32_t mult, int32_t shift, int32_t zp, int32_t lo,
                          int32_t hi);

/* ---- Depthwise rows ----------------------------------------------------------------------- */

/* One output row of a single-channel window (a depthwise convolution's): for ow in [0, n),
 *   s[ow] (+)= sum over r < rows, t < kw of x[r][ow * stride + t * dil] * w[r * kw + t]
 * (+= with `accumulate`), x[r] the input rows the kernel's rows r read, padded with zeros, w
 * the kernel taps less their zero point. s holds ref_qg_row_room(n) values; each x[r] must be
 * readable REF_QG_ROW_SLACK values past (n - 1) * stride + (kw - 1) * dil + 1 (the AVX2 kernel
 * computes whole blocks of 16 outputs). The sums are exact in int32 (the callers' bound). */
enum { REF_QG_ROW_SLACK = 48 };
static inline int64_t ref_qg_row_room(int64_t n) { return (n + 15) / 16 * 16; }
void ref_qg_depthwise_row(int rows, const int16_t *const *x, int64_t stride, int64_t dil,
                          int64_t kw, const int16_t *w, int64_t n, int accumulate, int32_t *s);

/* n_rows output rows of one channel, row o summing over kernel rows r < rows (at most 16) the
 * input row at x + (o * row_stride + r * row_dil) * pitch, each as ref_qg_depthwise_row's row (with
 * accumulate 0) into s + o * n: the taps' pairs made once for the plane (x86), else row by row.
 * A row may write up to a block of 16 past its end, into the next row's sums before that row
 * overwrites them: s holds (n_rows - 1) * n + ref_qg_row_room(n) values. */
void ref_qg_depthwise_plane(const int16_t *x, int64_t pitch, int64_t n_rows, int64_t row_stride,
                            int64_t row_dil, int rows, int64_t stride, int64_t dil, int64_t kw,
                            const int16_t *w, int64_t n, int32_t *s);
/* The same with the portable loop whatever the target: for tests/runtime's comparison. */
void ref_qg_depthwise_row_portable(int rows, const int16_t *const *x, int64_t stride, int64_t dil,
                                   int64_t kw, const int16_t *w, int64_t n, int accumulate,
                                   int32_t *s);

/* dst[i] = x[i] - zp for the n 8-bit values at src (int8 where is_signed, else uint8): an
 * operand staged as int16. */
void ref_qg_widen(const unsigned char *src, int64_t n, int is_signed, int32_t zp, int16_t *dst);
/* The same with the portable loop whatever the target: ref_qg_widen's tail, narrow rows, and
 * tests/runtime's comparison. */
static inline void ref_qg_widen_portable(const unsigned char *src, int64_t n, int is_signed,
                                         int32_t zp, int16_t *dst) {
  int64_t i;
  if (is_signed) /* vectorized */
    for (i = 0; i < n; ++i)
      dst[i] = (int16_t)(((const int8_t *)src)[i] - zp);
  else
    for (i = 0; i < n; ++i)
      dst[i] = (int16_t)(src[i] - zp);
}

/* ref_qg_widen of `rows` rows of `width` values, contiguous at src, into rows dst_step values
 * apart at dst (a padded plane's interior). */
void ref_qg_widen_rows(const unsigned char *src, int rows, int width, int is_signed, int32_t zp,
                       int16_t *dst, int dst_step);
/* The same with the portable loop whatever the target. */
static inline void ref_qg_widen_rows_portable(const unsigned char *src, int rows, int width,
                                              int is_signed, int32_t zp, int16_t *dst,
                                              int dst_step) {
  int r;
  for (r = 0; r < rows; ++r, src += width, dst += dst_step)
    ref_qg_widen_portable(src, width, is_signed, zp, dst);
}

/* ---- Lean products ------------------------------------------------------------------------ */

/* The kernels of least-memory computations (ops_quant_int.c), which read an int8 kernel where
 * it is (in flash on a microcontroller) instead of packing it as int16 into RAM, and stage the
 * im2col columns of REF_QG_LEAN_PIXELS output pixels at a time (a "lean block") as int16
 * x - xz, two to a word (ref_qg_lean_pack): for the group g of depths 4g .. 4g + 3 and pixel h,
 * the words (4g, 4g + 2) and (4g + 1, 4g + 3) at (g * REF_QG_LEAN_PIXELS + h) * 2, the order in
 * which Arm's SXTB16 splits 4 kernel bytes into two int16 pairs (bytes 0 and 2, then 1 and 3),
 * so that each pair multiplies a word of the block by SMLAD. ref_qg_lean_words(k) words; the
 * depths past k are zero. A block of one pixel (a "lean column": a product of one row, the last
 * pixel of a map) has its two words of group g at 2g. */
enum { REF_QG_LEAN_PIXELS = 4 };
static inline int64_t ref_qg_lean_words(int64_t k) { return (k + 3) / 4 * 2 * REF_QG_LEAN_PIXELS; }
/* A word of two int16 halves: lo, then hi. */
static inline int32_t ref_qg_lean_pack(int32_t lo, int32_t hi) {
  return (int32_t)((uint32_t)(uint16_t)lo | (uint32_t)hi << 16);
}

/* Places pixel h's column, staged in depth order at col (k int16 values, rounded up to 4 with
 * zeros), into the lean block at q + 2 * h (pixels = REF_QG_LEAN_PIXELS), or as a lean column
 * at q (pixels = 1). */
void ref_qg_lean_place(const int16_t *col, int64_t k, int pixels, int32_t *q);
/* The lean column of k contiguous input values less xz at x (int8 where is_signed, else
 * uint8): a 1 x 1 window's pixel where the map is that one pixel. */
void ref_qg_lean_column_unit(const unsigned char *x, int64_t k, int is_signed, int32_t xz,
                             int32_t *q);
/* A lean block of 4 pixels whose columns are runs of a 1 x 1 window: pixel h's depth d is
 * x[d * ipix + h] - xz (int8 where is_signed, else uint8), for k depths (the block's pad
 * depths zero). */
void ref_qg_lean_block_unit(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                            int32_t xz, int32_t *q);
/* The same for the first n of the 4 pixels (the last block of a map): pixels n to 3 repeat
 * pixel n - 1, and one pixel is a lean column (the scratch of a 1 x 1 convolution is then its
 * lean block alone). */
void ref_qg_lean_block_unit_n(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                              int32_t xz, int n, int32_t *q);
/* The sum over i < n of w[i] * (x[i] - xz), x int8 where is_signed, else uint8: a window that
 * is a whole channel's input (a global pool's as a depthwise convolution). */
int32_t ref_qg_dot8(const unsigned char *x, const int8_t *w, int64_t n, int is_signed, int32_t xz);
/* The same with the portable loop whatever the target: its tail, and tests/runtime's. */
int32_t ref_qg_dot8_portable(const unsigned char *x, const int8_t *w, int64_t n, int is_signed,
                             int32_t xz);
/* The same with the portable loops whatever the target: for tests/runtime's comparison. */
void ref_qg_lean_place_portable(const int16_t *col, int64_t k, int pixels, int32_t *q);
void ref_qg_lean_column_unit_portable(const unsigned char *x, int64_t k, int is_signed, int32_t xz,
                                      int32_t *q);
void ref_qg_lean_block_unit_portable(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                                     int32_t xz, int32_t *q);

/* A lean product's epilogue, read in place: output channel c's element is the byte
 * ref_qg_requantize(s + bias[c], mult[c * mult_step], shift[c * shift_step], zp, lo, hi), or
 * (raw) the int32 s + bias[c], for its sums s. */
typedef struct {
  const int32_t *bias, *mult, *shift; /* bias may be NULL; mult and shift NULL when raw */
  int64_t mult_step, shift_step;      /* 1: one per channel; 0: one for all */
  int32_t zp, lo, hi;
  int raw;
  int fast;     /* every channel takes ref_qg_lean_fast (32-bit Arm; ref_qg_lean_fast_all) */
  int sum_bits; /* |s + bias| < 2^sum_bits for every sum; 0: not known (32) */
} ref_qg_lean_out;

/* For the m kernel rows of k int8 values at w (read in place), row r output channel c0 + r:
 * the sums over d < k of w[r * k + d] * (depth d of pixel h in the lean block c), for the
 * block's first n pixels (n = 1: c is a lean column), put by o as elements h of the row at
 * y + r * y_row (bytes). The
 * first `over` rows may read up to 3 bytes past their k (the next rows', which the block's zero
 * depths cancel), so that they run whole groups of 4 depths: ref_qg_lean_over. */
void ref_qg_lean_dots(int64_t k, const int8_t *w, int64_t m, int64_t over, const int32_t *c,
                      const ref_qg_lean_out *o, int64_t c0, int n, unsigned char *y, int64_t y_row);
/* Wide lean blocks: 8 pixels in the lean block's layout (pixel h's words of group g at
 * (g * REF_QG_LEAN_WIDE_PIXELS + h) * 2), multiplied a kernel row at a time over all 8 pixels
 * (ref_qg_lean_dots_wide: a group of 4 depths is one load and two SXTB16 of the row's bytes,
 * 8 LDRD of the block's words and 16 SMLAD, where pairs of rows over 4 pixels take 32
 * instructions; the row's requantization serves 8 outputs). Only where the target has that
 * assembly (REF_QG_LEAN_WIDE); a lean convolution's scratch holds one on every target, since
 * odlac plans the arena on the host. */
enum { REF_QG_LEAN_WIDE_PIXELS = 8 };
static inline int64_t ref_qg_lean_wide_words(int64_t k) {
  return (k + 3) / 4 * 2 * REF_QG_LEAN_WIDE_PIXELS;
}
#if defined(__arm__) && defined(__thumb2__) && defined(__GNUC__) && defined(__ARM_FEATURE_DSP)
#define REF_QG_LEAN_WIDE 1
/* Whether ref_qg_lean_dots_wide takes m rows with o: uint8 [0, 255] outputs, every channel
 * fast, a bias and a multiplier and shift per channel, every row reading whole groups (over >=
 * m: ref_qg_lean_over). */
int ref_qg_lean_wide_ok(int64_t m, int64_t over, const ref_qg_lean_out *o);
/* ref_qg_lean_block_unit's block of 8 pixels (pixel h's depth d: x[d * ipix + h] - xz). */
void ref_qg_lean_block_unit_wide(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                                 int32_t xz, int32_t *q);
/* ref_qg_lean_dots over the 8 pixels of the wide block c, where ref_qg_lean_wide_ok. */
void ref_qg_lean_dots_wide(int64_t k, const int8_t *w, int64_t m, const int32_t *c,
                           const ref_qg_lean_out *o, int64_t c0, unsigned char *y, int64_t y_row);
/* Channels [c0, c1) of a lean 3 x 3 depthwise convolution (dilation 1, stride 1 or 2 along the
 * rows) over a 2-D uint8 map read as it is, not staged as int16 x - xz: channel c's in1 x in2
 * input (at x + c * ipix) copied into rows of a byte plane (pitch bytes a row, its input at
 * plane + at, its pads xz: the caller's), the plane readable 4 bytes past the last window; the
 * outputs as ref_qg_depthwise_lean's (at y + c * opix), where ref_qg_depthwise3_u8_ok (uint8
 * [0, 255], every channel fast). oh, ow >= 1. */
typedef struct {
  const unsigned char *x;
  int ipix, in1, in2;
  unsigned char *plane;
  int pitch, at;
  int stride, step;   /* along the rows; bytes from an output row's windows to the next's */
  const int8_t *taps; /* channel c's 9 at taps + 9 c */
  int oh, ow;
  const ref_qg_lean_out *o;
  int32_t xz;
  unsigned char *y;
  int opix;
} ref_qg_dw3_channels;
int ref_qg_depthwise3_u8_ok(const ref_qg_lean_out *o);
void ref_qg_depthwise3_u8(const ref_qg_dw3_channels *d, int64_t c0, int64_t c1);
/* rows of width bytes from src (contiguous) to rows pitch bytes apart at dst (apart from them),
 * a word or two at a time: newlib-nano's memcpy copies a byte at a time. */
void ref_qg_copy_rows(unsigned char *dst, int pitch, const unsigned char *src, int rows, int width);
#endif
/* The `over` of ref_qg_lean_dots for rows c0 .. c0 + m - 1 of a kernel of `rows` rows of k
 * bytes: those whose last group of 4 depths ends inside the kernel. */
static inline int64_t ref_qg_lean_over(int64_t k, int64_t rows, int64_t c0, int64_t m) {
  const int64_t past = (4 - k % 4) % 4, after = k > 0 ? (past + k - 1) / k : rows;
  const int64_t over = rows - after - c0;
  return over < 0 ? 0 : over > m ? m : over;
}
/* s[j] = sum over d < k of x[d] * w[d * ldw + j], for j < n: a row of k int16 values (k rounded
 * up to even, the pad zero) times an int8 matrix read in place. */
void ref_qg_lean_row(int64_t k, const int16_t *x, const int8_t *w, int64_t ldw, int64_t n,
                     int32_t *s);
/* One channel of a lean depthwise convolution: for oy < oh, ox < ow, the sum over r < rows,
 * t < kw of taps[r * kw + t] * x[oy * step + rows[r] + ox * stride + t * dil], put by o's
 * channel ch as element oy * ow + ox at y. x: the channel's input as int16 x - xz, padded
 * with the convolution's zeros, readable REF_QG_LEAN_SLACK values past the last window (a
 * pair of taps (t, 0) loads the value after an odd window's row); taps the channel's int8
 * kernel in place. */
enum { REF_QG_LEAN_SLACK = 2 };
void ref_qg_depthwise_lean(const int16_t *x, const int *rows, int nrows, int kw, int dil,
                           int stride, int64_t step, const int8_t *taps, int64_t oh, int64_t ow,
                           const ref_qg_lean_out *o, int64_t ch, unsigned char *y);
/* The same with the portable loops whatever the target: for tests/runtime's comparison. */
void ref_qg_lean_dots_portable(int64_t k, const int8_t *w, int64_t m, int64_t over,
                               const int32_t *c, const ref_qg_lean_out *o, int64_t c0, int n,
                               unsigned char *y, int64_t y_row);
void ref_qg_lean_row_portable(int64_t k, const int16_t *x, const int8_t *w, int64_t ldw, int64_t n,
                              int32_t *s);
void ref_qg_depthwise_lean_portable(const int16_t *x, const int *rows, int nrows, int kw, int dil,
                                    int stride, int64_t step, const int8_t *taps, int64_t oh,
                                    int64_t ow, const ref_qg_lean_out *o, int64_t ch,
                                    unsigned char *y);

#if defined(__arm__)
/* round_half_to_even(s * mult / 2^shift) clamped to [qlo, qhi], for shifts from 32 on, with
 * SMLAL's 64-bit t = s * mult + 2^(shift-1): round half up is an arithmetic shift of t's high
 * word, less one where t's low `shift` bits are all zero (a tie) and the quotient is odd. */
static inline int32_t ref_qg_requantize_arm(int32_t s, int32_t mult, int32_t shift, int32_t qlo,
                                            int32_t qhi) {
  const uint32_t e = (uint32_t)shift - 32;
  const uint64_t t = (uint64_t)((int64_t)s * mult + ((int64_t)1 << (shift - 1)));
  int32_t q = (int32_t)(uint32_t)(t >> 32) >> e; /* arithmetic on every Arm compiler */
  if (((uint32_t)t | ((uint32_t)(t >> 32) & ((1u << e) - 1))) == 0)
    q &= ~1;
  return q < qlo ? qlo : q > qhi ? qhi : q;
}
#endif

/* One channel of a ref_qg_lean_out. */
typedef struct {
  int32_t bias, mult, shift, zp, lo, hi;
  int raw, sum_bits;
} ref_qg_lean_ch;

static inline ref_qg_lean_ch ref_qg_lean_channel(const ref_qg_lean_out *o, int64_t c) {
  ref_qg_lean_ch ch;
  ch.raw = o->raw;
  ch.bias = o->bias ? o->bias[c] : 0;
  ch.mult = o->raw ? 0 : o->mult[c * o->mult_step];
  ch.shift = o->raw ? 0 : o->shift[c * o->shift_step];
  ch.zp = o->zp;
  ch.lo = o->lo;
  ch.hi = o->hi;
  ch.sum_bits = o->sum_bits;
  return ch;
}

#if defined(__arm__)
/* On 32-bit Arm, the channels whose shift is 33 or more and whose sums cannot fall on a tie
 * take ref_qg_lean_fast: there ref_qg_requantize_arm's t = s * mult + 2^(shift-1) is
 * (hi + 2^(e-1)) : lo, e = shift - 32, hi and lo SMULL's words, so the quotient is
 * (hi + 2^(e-1)) >> e, in int32 (|s * mult| < 2^62). A tie needs s * mult to be an odd
 * multiple of 2^(shift-1), v2(s) = shift - 1 - v2(mult), so |s| >= 2^(shift-1-v2(mult)):
 * none where |s| < 2^sum_bits (32 when not known) and mult has a bit set below
 * shift - sum_bits. Shifts up to 54 (e <= 22), so that a zero point times 2^e joins the
 * rounding constant: |hi| <= 2^30, |zp| * 2^e + 2^(e-1) < 2^30. */
static inline int ref_qg_lean_fast_ok(int32_t mult, int32_t shift, int sum_bits) {
  const int32_t low = shift - (sum_bits > 0 ? sum_bits : 32); /* mult's bits that rule out ties */
  return shift >= 33 && shift <= 54 &&
         (mult == 0 || low >= 31 ||
          (low > 0 && ((uint32_t)mult & (((uint32_t)1 << low) - 1)) != 0));
}

/* The output byte for the sum s (qlo, qhi: the clamp less the zero point), e = shift - 32. */
static inline int32_t ref_qg_lean_fast(int32_t s, int32_t bias, int32_t mult, int32_t e,
                                       int32_t qlo, int32_t qhi, int32_t zp) {
  const int32_t v = (int32_t)((uint32_t)s + (uint32_t)bias);
  const int32_t hi = (int32_t)(uint32_t)((uint64_t)((int64_t)v * mult) >> 32);
  const int32_t q = (hi + ((int32_t)1 << (e - 1))) >> e; /* arithmetic on every Arm compiler */
  return (q < qlo ? qlo : q > qhi ? qhi : q) + zp;
}
#endif

/* Whether each of o's `channels` channels takes ref_qg_lean_fast (never off 32-bit Arm). */
int ref_qg_lean_fast_all(const ref_qg_lean_out *o, int64_t channels);

/* Element i of the channel's outputs at y (a byte, or raw an int32) from its sum s. */
void ref_qg_lean_put(const ref_qg_lean_ch *ch, int32_t s, unsigned char *y, int64_t i);
/* Elements j < n at y of channels c0 + j from their sums s[j] (a MatMul's row), by
 * ref_qg_lean_fast's 8-bit loop where it applies. */
void ref_qg_lean_put_channels(const ref_qg_lean_out *o, int64_t c0, int64_t n, const int32_t *s,
                              unsigned char *y);

/* y[i] = the low byte of ref_qg_requantize(s[i] + bias, ...) for i < n (uint8 or int8 alike):
 * one channel's run, on 32-bit Arm for shifts from 32 on by ref_qg_requantize_arm. */
void ref_qg_requantize_bytes(const int32_t *s, int n, int32_t bias, int32_t mult, int32_t shift,
                             int32_t zp, int32_t lo, int32_t hi, unsigned char *y);

#endif /* ODLA_REFERENCE_QGEMM_H_ */
