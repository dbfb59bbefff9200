/* qgemm.c: the integer GEMM of qgemm.h: a REF_QG_MR x REF_QG_NR tile over int16 pairs, then
 * the exact requantization and the byte stores, in portable C99 and with intrinsics: on x86-64
 * CPUs with AVX2 and FMA, AVX2 (AVX-VNNI's fused multiply-add where the CPU has it; 512-bit
 * tiles with AVX512-VNNI), chosen at run time (ref_qg_kernels_get); where the compiler targets
 * them, Arm's DSP extension (SMLAD), Helium (MVE) and NEON. */
#include "qgemm.h"
#include "ref_isa.h"

#include <string.h>

#if REF_X86_TARGETS
#include <immintrin.h>
/* What the x86 kernels and their helpers are compiled for. */
#define REF_QG_AVX2 __attribute__((target("avx2,fma")))
#define REF_QG_VNNI512 __attribute__((target("avx2,fma,avx512vnni,avx512vl")))
#define REF_QG_AVXVNNI __attribute__((target("avx2,fma,avxvnni")))
#define REF_QG_VNNI512Z __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define REF_QG_VBMI                                                                                \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))
#endif
/* Kernels for AVX-VNNI, which Clang 14's __builtin_cpu_supports cannot ask for. */
#if REF_X86_TARGETS && !defined(__clang__)
#define REF_QG_WITH_AVXVNNI 1
#else
#define REF_QG_WITH_AVXVNNI 0
#endif

/* 32-bit Arm (A and M profiles): the requantization in integers (REF_QG_FLOAT64 is 0). */
#if defined(__arm__)
#include <arm_acle.h>
#define REF_QG_ARM32 1
#else
#define REF_QG_ARM32 0
#endif

/* The Arm tile kernel: Helium where present (Cortex-M55; the depth's tail with SMLAD), else
 * NEON (A profile, 32 or 64 bits), else the DSP extension's SMLAD (Cortex-M4, M7, M33). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_acle.h>
#include <arm_mve.h>
#define REF_QG_MVE 1
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#define REF_QG_NEON 1
#elif defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#define REF_QG_DSP 1
#endif

/* The kernels a build uses where no run-time choice is made (ref_qg_kernels_get): the
 * target's, else the portable ones. */
#if defined(REF_QG_MVE)
#define REF_QG_TILE ref_qg_tile_mve
#elif defined(REF_QG_NEON)
#define REF_QG_TILE ref_qg_tile_neon
#elif defined(REF_QG_DSP)
#define REF_QG_TILE ref_qg_tile_dsp
#else
#define REF_QG_TILE ref_qg_tile_portable
#endif
#if REF_QG_ARM32
#define REF_QG_STORE ref_qg_store_arm
#else
#define REF_QG_STORE ref_qg_store_portable
#endif

/* A tile's sums; a kernel computes at least rows [0, nr) x columns [0, nc) of it (the rest of
 * the tile repeats the last row or holds zero columns). */
typedef int32_t ref_qg_acc[REF_QG_MR][REF_QG_NR];
typedef void (*ref_qg_tile_fn)(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v,
                               int nr, int nc, ref_qg_acc acc);
/* Two tiles side by side: rows of a against the panels v and w (the next panel), into acc and
 * acc2, each sum started at its row's start[i] plus its column's start[REF_QG_MR + h] (start
 * NULL: 0). */
typedef void (*ref_qg_tile2_fn)(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v,
                                const int16_t *w, ref_qg_acc acc, ref_qg_acc acc2,
                                const int32_t *start);
/* The most pairs of taps (kernel rows x (kw + 1) / 2) a plane kernel holds in registers. */
enum { REF_QG_DW_PLANE_PAIRS = 16 };
typedef void (*ref_qg_dw_plane_fn)(const int16_t *x, int64_t pitch, int64_t n_rows,
                                   int64_t row_stride, int64_t row_dil, int rows, int64_t stride,
                                   int64_t kw, const int16_t *w, int64_t n, int32_t *s);
typedef void (*ref_qg_store_fn)(const ref_qg_out *o, int64_t r, int64_t nr, int64_t c, int64_t nc,
                                ref_qg_acc acc);

/* |acc| <= 2^31 and mult < 2^31 keep |acc * mult| below 2^62 (ref_qg_round_shift). The AVX2
 * store computes the same. */
int32_t ref_qg_requantize(int32_t acc, int32_t mult, int32_t shift, int32_t zp, int32_t lo,
                          int32_t hi) {
  const int64_t q = ref_qg_round_shift((int64_t)acc * mult, shift) + zp;
  return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

/* The float64 requantization of ref_qg_prepare's channels: s = acc + bias. */
static int32_t ref_qg_fast(int32_t s, double scale, int32_t smin, int32_t smax, int32_t zp,
                           int32_t lo, int32_t hi) {
  double d;
  int32_t q;
  s = s < smin ? smin : s > smax ? smax : s;
  d = ref_qg_round_even((double)s * scale) + zp; /* the product exact, |d| < 2^32 */
  /* clamped before the conversion: d may lie outside int32 */
  q = (int32_t)(d < lo ? lo : d > hi ? hi : d);
  return q;
}

/* A bound x of acc + bias as int32: `up` rounds away from the data towards +inf, else -inf. */
static int32_t ref_qg_bound(double x, int up) {
  if (x >= (double)INT32_MAX)
    return INT32_MAX;
  if (x <= (double)INT32_MIN)
    return INT32_MIN;
  x = up ? ceil(x) + 1 : floor(x) - 1;
  return x >= (double)INT32_MAX ? INT32_MAX : x <= (double)INT32_MIN ? INT32_MIN : (int32_t)x;
}

int ref_qg_prepare(int64_t n, const int32_t *mult, const int32_t *shift, int32_t zp, int32_t lo,
                   int32_t hi, double *scale, int32_t *smin, int32_t *smax) {
  int fast = 1;
  int64_t c;
  for (c = 0; c < n; ++c) {
    const double m = mult[c], f = ldexp(1.0, shift[c]);
    double reach;
    scale[c] = ldexp(m, -shift[c]);
    if (mult[c] == 0) { /* every result is zp */
      smin[c] = smax[c] = 0;
      continue;
    }
    /* acc + bias >= smax gives hi or more before the clamp, <= smin lo or less */
    smax[c] = ref_qg_bound(((double)hi - zp + 0.5) * f / m, 1);
    smin[c] = ref_qg_bound(((double)lo - zp - 0.5) * f / m, 0);
    while (smax[c] < INT32_MAX && ref_qg_requantize(smax[c], mult[c], shift[c], zp, lo, hi) < hi)
      ++smax[c]; /* never, unless the float64 bound above rounded the wrong way */
    while (smin[c] > INT32_MIN && ref_qg_requantize(smin[c], mult[c], shift[c], zp, lo, hi) > lo)
      --smin[c];
    reach = fabs((double)smin[c]) > fabs((double)smax[c]) ? fabs((double)smin[c])
                                                          : fabs((double)smax[c]);
    /* every product an exact float64 (under 2^53), and the rounded one well inside int32 */
    fast &= reach * m < 9007199254740992.0 && reach * scale[c] < 1073741824.0;
  }
  return fast && REF_QG_FLOAT64;
}

/* ---- Portable ------------------------------------------------------------------------------ */

static void ref_qg_tile_portable(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v,
                                 int nr, int nc, ref_qg_acc acc) {
  int64_t p;
  int i, j;
  (void)nr; /* the whole tile: fixed bounds the compiler can vectorize */
  (void)nc;
  for (i = 0; i < REF_QG_MR; ++i)
    for (j = 0; j < REF_QG_NR; ++j)
      acc[i][j] = 0;
  for (p = 0; p < kp; p += 2, v += 2 * REF_QG_NR)
    for (i = 0; i < REF_QG_MR; ++i) {
      const int32_t a0 = a[i][p], a1 = a[i][p + 1];
      for (j = 0; j < REF_QG_NR; ++j)
        acc[i][j] += a0 * v[2 * j] + a1 * v[2 * j + 1];
    }
}

static void ref_qg_store_portable(const ref_qg_out *o, int64_t r, int64_t nr, int64_t c, int64_t nc,
                                  ref_qg_acc acc) {
  int64_t i, j;
  for (i = 0; i < nr; ++i) {
    unsigned char *y = ref_qg_y(o, (r + i) * o->y_row + c);
    for (j = 0; j < nc; ++j) {
      const int64_t at = o->per_row ? r + i : c + j;
      const int32_t s = (int32_t)((int64_t)acc[i][j] + o->bias[at]);
      int32_t v;
      if (o->raw) {
        memcpy(y + j * 4, &s, 4);
        continue;
      }
      v = o->fast ? ref_qg_fast(s, o->scale[at], o->smin[at], o->smax[at], o->zp, o->lo, o->hi)
                  : ref_qg_requantize(s, o->mult[at], o->shift[at], o->zp, o->lo, o->hi);
      if (o->y_signed)
        ((int8_t *)y)[j] = (int8_t)v;
      else
        y[j] = (unsigned char)v;
    }
  }
}

/* ---- AVX2 ---------------------------------------------------------------------------------- */

#if REF_X86_TARGETS

/* c + the pairwise products of x and b (16 int16 pairs into 8 int32 lanes): AVX2's two
 * instructions, or one with AVX512-VNNI (VL) or AVX-VNNI. */
REF_QG_AVX2 static inline __m256i ref_qg_madd(__m256i c, __m256i x, __m256i b) {
  return _mm256_add_epi32(c, _mm256_madd_epi16(x, b));
}
REF_QG_VNNI512 static inline __m256i ref_qg_madd_vnni512(__m256i c, __m256i x, __m256i b) {
  return _mm256_dpwssd_epi32(c, x, b);
}
#if REF_QG_WITH_AVXVNNI
REF_QG_AVXVNNI static inline __m256i ref_qg_madd_avxvnni(__m256i c, __m256i x, __m256i b) {
  return _mm256_dpwssd_avx_epi32(c, x, b);
}
#endif

/* The pair at s, in every 32-bit lane. */
REF_QG_AVX2 static inline __m256i ref_qg_pair(const int16_t *s) {
  int32_t w;
  memcpy(&w, s, sizeof w);
  return _mm256_set1_epi32(w);
}

/* The pair of taps (2j, 2j + 1) of kernel row r (the second 0 past the row's end), in every
 * 32-bit lane. */
REF_QG_AVX2 static __m256i ref_qg_tap_pair(const int16_t *w, int64_t kw, int r, int64_t j) {
  int16_t pair[2];
  pair[0] = w[r * kw + 2 * j];
  pair[1] = 2 * j + 1 < kw ? w[r * kw + 2 * j + 1] : 0;
  return ref_qg_pair(pair);
}

/* A depthwise row's 16 sums from its two registers (stride 1: a the even outputs, b the odd
 * ones, interleaved; stride 2: a outputs 0-7, b 8-15), stored at s or added to it. */
REF_QG_AVX2 static inline void ref_qg_dw_put16(__m256i a, __m256i b, int64_t stride, int accumulate,
                                               int32_t *s) {
  if (stride == 1) {
    const __m256i lo = _mm256_unpacklo_epi32(a, b), hi = _mm256_unpackhi_epi32(a, b);
    a = _mm256_permute2x128_si256(lo, hi, 0x20);
    b = _mm256_permute2x128_si256(lo, hi, 0x31);
  }
  if (accumulate) {
    a = _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)s));
    b = _mm256_add_epi32(b, _mm256_loadu_si256((const __m256i *)(s + 8)));
  }
  _mm256_storeu_si256((__m256i *)s, a);
  _mm256_storeu_si256((__m256i *)(s + 8), b);
}

/* The kernels whose multiply-adds are MADD (ref_qg_madd or a VNNI one), compiled for TARGET:
 * ref_qg_tile_SFX (AVX512-VNNI has its own, ref_qg_tile_vnni512z), and
 * ref_qg_depthwise_row_SFX for dil 1 and stride 1 or 2.
 * In the depthwise rows, stride 1: each register of pairs (x[i], x[i + 1]) at even i serves the
 * even outputs, the same one element on the odd ones; the two sums interleave back at the end.
 * Stride 2: the pairs of consecutive outputs are consecutive in memory. Taps pair up along the row.
 */
#define REF_QG_X86_TILE(SFX, TARGET, MADD)                                                         \
  TARGET static void ref_qg_tile_##SFX(int64_t kp, const int16_t *const a[REF_QG_MR],              \
                                       const int16_t *v, int nr, int nc, ref_qg_acc acc) {         \
    const int16_t *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];          \
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;   \
    __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;                      \
    (void)nr; /* the whole tile, in registers */                                                   \
    (void)nc;                                                                                      \
    int64_t p;                                                                                     \
    for (p = 0; p < kp; p += 2, v += 2 * REF_QG_NR) {                                              \
      const __m256i b0 = _mm256_loadu_si256((const __m256i *)v);                                   \
      const __m256i b1 = _mm256_loadu_si256((const __m256i *)(v + REF_QG_NR));                     \
      __m256i x = ref_qg_pair(a0 + p);                                                             \
      c00 = MADD(c00, x, b0);                                                                      \
      c01 = MADD(c01, x, b1);                                                                      \
      x = ref_qg_pair(a1 + p);                                                                     \
      c10 = MADD(c10, x, b0);                                                                      \
      c11 = MADD(c11, x, b1);                                                                      \
      x = ref_qg_pair(a2 + p);                                                                     \
      c20 = MADD(c20, x, b0);                                                                      \
      c21 = MADD(c21, x, b1);                                                                      \
      x = ref_qg_pair(a3 + p);                                                                     \
      c30 = MADD(c30, x, b0);                                                                      \
      c31 = MADD(c31, x, b1);                                                                      \
      x = ref_qg_pair(a4 + p);                                                                     \
      c40 = MADD(c40, x, b0);                                                                      \
      c41 = MADD(c41, x, b1);                                                                      \
      x = ref_qg_pair(a5 + p);                                                                     \
      c50 = MADD(c50, x, b0);                                                                      \
      c51 = MADD(c51, x, b1);                                                                      \
    }                                                                                              \
    _mm256_storeu_si256((__m256i *)acc[0], c00);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[0] + 8), c01);                                             \
    _mm256_storeu_si256((__m256i *)acc[1], c10);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[1] + 8), c11);                                             \
    _mm256_storeu_si256((__m256i *)acc[2], c20);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[2] + 8), c21);                                             \
    _mm256_storeu_si256((__m256i *)acc[3], c30);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[3] + 8), c31);                                             \
    _mm256_storeu_si256((__m256i *)acc[4], c40);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[4] + 8), c41);                                             \
    _mm256_storeu_si256((__m256i *)acc[5], c50);                                                   \
    _mm256_storeu_si256((__m256i *)(acc[5] + 8), c51);                                             \
  }
#define REF_QG_X86_DEPTHWISE(SFX, TARGET, MADD)                                                    \
  TARGET static void ref_qg_depthwise_row_##SFX(int rows, const int16_t *const *x, int64_t stride, \
                                                int64_t kw, const int16_t *w, int64_t n,           \
                                                int accumulate, int32_t *s) {                      \
    const int64_t pairs = (kw + 1) / 2;                                                            \
    int64_t ow0, j;                                                                                \
    int r;                                                                                         \
    for (ow0 = 0; ow0 < n; ow0 += 16) {                                                            \
      __m256i a = _mm256_setzero_si256(), b = a;                                                   \
      for (r = 0; r < rows; ++r)                                                                   \
        for (j = 0; j < pairs; ++j) {                                                              \
          const __m256i tp = ref_qg_tap_pair(w, kw, r, j);                                         \
          if (stride == 1) {                                                                       \
            const int16_t *at = x[r] + ow0 + 2 * j;                                                \
            a = MADD(a, _mm256_loadu_si256((const __m256i *)at), tp);                              \
            b = MADD(b, _mm256_loadu_si256((const __m256i *)(at + 1)), tp);                        \
          } else {                                                                                 \
            const int16_t *at = x[r] + 2 * ow0 + 2 * j;                                            \
            a = MADD(a, _mm256_loadu_si256((const __m256i *)at), tp);                              \
            b = MADD(b, _mm256_loadu_si256((const __m256i *)(at + 16)), tp);                       \
          }                                                                                        \
        }                                                                                          \
      ref_qg_dw_put16(a, b, stride, accumulate, s + ow0);                                          \
    }                                                                                              \
  }
/* ref_qg_depthwise_plane for dil 1, stride 1 or 2 and at most REF_QG_DW_PLANE_PAIRS pairs of
 * taps: the rows of ref_qg_depthwise_row_SFX with the pairs broadcast once for the plane. */
#define REF_QG_X86_DEPTHWISE_PLANE(SFX, TARGET, MADD)                                              \
  TARGET static void ref_qg_depthwise_plane_##SFX(                                                 \
      const int16_t *x, int64_t pitch, int64_t n_rows, int64_t row_stride, int64_t row_dil,        \
      int rows, int64_t stride, int64_t kw, const int16_t *w, int64_t n, int32_t *s) {             \
    const int64_t pairs = (kw + 1) / 2;                                                            \
    __m256i tp[REF_QG_DW_PLANE_PAIRS];                                                             \
    int64_t o, ow0, j;                                                                             \
    int r;                                                                                         \
    for (r = 0; r < rows; ++r)                                                                     \
      for (j = 0; j < pairs; ++j)                                                                  \
        tp[r * pairs + j] = ref_qg_tap_pair(w, kw, r, j);                                          \
    for (o = 0; o < n_rows; ++o, s += n)                                                           \
      for (ow0 = 0; ow0 < n; ow0 += 16) {                                                          \
        __m256i a = _mm256_setzero_si256(), b = a;                                                 \
        for (r = 0; r < rows; ++r) {                                                               \
          const int16_t *at = x + (o * row_stride + r * row_dil) * pitch + stride * ow0;           \
          for (j = 0; j < pairs; ++j, at += 2) {                                                   \
            a = MADD(a, _mm256_loadu_si256((const __m256i *)at), tp[r * pairs + j]);               \
            b = MADD(b, _mm256_loadu_si256((const __m256i *)(at + (stride == 1 ? 1 : 16))),        \
                     tp[r * pairs + j]);                                                           \
          }                                                                                        \
        }                                                                                          \
        ref_qg_dw_put16(a, b, stride, 0, s + ow0);                                                 \
      }                                                                                            \
  }
REF_QG_X86_TILE(avx2, REF_QG_AVX2, ref_qg_madd)
REF_QG_X86_DEPTHWISE(avx2, REF_QG_AVX2, ref_qg_madd)
REF_QG_X86_DEPTHWISE(vnni512, REF_QG_VNNI512, ref_qg_madd_vnni512)
REF_QG_X86_DEPTHWISE_PLANE(avx2, REF_QG_AVX2, ref_qg_madd)
REF_QG_X86_DEPTHWISE_PLANE(vnni512, REF_QG_VNNI512, ref_qg_madd_vnni512)
#if REF_QG_WITH_AVXVNNI
REF_QG_X86_TILE(avxvnni, REF_QG_AVXVNNI, ref_qg_madd_avxvnni)
REF_QG_X86_DEPTHWISE(avxvnni, REF_QG_AVXVNNI, ref_qg_madd_avxvnni)
REF_QG_X86_DEPTHWISE_PLANE(avxvnni, REF_QG_AVXVNNI, ref_qg_madd_avxvnni)
#endif
#undef REF_QG_X86_TILE
#undef REF_QG_X86_DEPTHWISE
#undef REF_QG_X86_DEPTHWISE_PLANE

/* The tiles in 512-bit registers (AVX512-VNNI): a pair row of a V panel (REF_QG_NR = 16
 * columns of int16 pairs) is one register, so a row's pair is one VPDPWSSD for the whole row
 * of the tile, half the instructions of the 256-bit kernel. The instructions are written in
 * assembly because GCC 12 copies each accumulator between registers around the intrinsic
 * (twice the instructions). REF_QG_DPW: c += the pairwise products of b and the pair at s,
 * broadcast by the instruction itself; REF_QG_DPR: the same of registers x and b; REF_QG_DPB:
 * c += the products of the unsigned bytes of x and the signed bytes of b, by groups of 4
 * (VPDPBUSD, the 8-bit product's). REF_QG_SIX(S): S for each of the tile's six rows. */
#define REF_QG_DPW(c, s, b)                                                                        \
  __asm__("vpdpwssd %1%{1to16%}, %2, %0"                                                           \
          : "+v"(c)                                                                                \
          : "m"(*(const int32_t *)(const void *)(s)), "v"(b))
#define REF_QG_DPR(c, x, b) __asm__("vpdpwssd %2, %1, %0" : "+v"(c) : "v"(x), "v"(b))
#define REF_QG_DPB(c, x, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(x), "v"(b))
#define REF_QG_SIX(S) S(0) S(1) S(2) S(3) S(4) S(5)

/* The 4 bytes at s (an int16 pair, or a group of 4 depths) in every 32-bit lane. */
REF_QG_VNNI512Z static inline __m512i ref_qg_word512(const void *s) {
  int32_t w;
  memcpy(&w, s, sizeof w);
  return _mm512_set1_epi32(w);
}

/* One panel: each row sums the even and the odd pair rows apart (12 chains of additions,
 * enough to cover the instruction's latency), added at the end. */
REF_QG_VNNI512Z static void ref_qg_tile_vnni512z(int64_t kp, const int16_t *const a[REF_QG_MR],
                                                 const int16_t *v, int nr, int nc, ref_qg_acc acc) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0;
  int64_t p = 0;
  (void)nr; /* the whole tile, in registers */
  (void)nc;
#define REF_QG_EVEN_ODD(i)                                                                         \
  REF_QG_DPW(c##i, a[i] + p, b0);                                                                  \
  REF_QG_DPW(d##i, a[i] + p + 2, b1);
#define REF_QG_EVEN(i) REF_QG_DPW(c##i, a[i] + p, b0);
#define REF_QG_STORE_SUM(i) _mm512_storeu_si512((void *)acc[i], _mm512_add_epi32(c##i, d##i));
  for (; p + 4 <= kp; p += 4, v += 4 * REF_QG_NR) {
    const __m512i b0 = _mm512_loadu_si512((const void *)v);
    const __m512i b1 = _mm512_loadu_si512((const void *)(v + 2 * REF_QG_NR));
    REF_QG_SIX(REF_QG_EVEN_ODD)
  }
  if (p < kp) { /* kp is even: one pair row left */
    const __m512i b0 = _mm512_loadu_si512((const void *)v);
    REF_QG_SIX(REF_QG_EVEN)
  }
  REF_QG_SIX(REF_QG_STORE_SUM)
#undef REF_QG_EVEN_ODD
#undef REF_QG_EVEN
#undef REF_QG_STORE_SUM
}

/* Two panels at once (v and w, into acc and acc2), each row's group broadcast into a register
 * once for both (8 loads for 12 multiply-adds, where the one-panel tile has 7 for 6); with w
 * NULL one panel; the sums start as ref_qg_tile2_fn's. For the int16 pairs (STEP 2, REF_QG_MAC
 * REF_QG_DPR) and for the 8-bit product (ref_qg8: unsigned rows, int8 panels, groups of 4
 * depths, REF_QG_DPB; kernel rows: the operands swapped). */
#define REF_QG_TWO_PANELS(NAME, TA, TV, STEP)                                                      \
  REF_QG_VNNI512Z static void NAME(int64_t kp, const TA *const a[REF_QG_MR], const TV *v,          \
                                   const TV *w, ref_qg_acc acc, ref_qg_acc acc2,                   \
                                   const int32_t *start) {                                         \
    __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;              \
    __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0;                                  \
    int64_t p;                                                                                     \
    if (start) {                                                                                   \
      const __m512i e0 = _mm512_loadu_si512((const void *)(start + REF_QG_MR));                    \
      const __m512i e1 = _mm512_loadu_si512((const void *)(start + REF_QG_MR + REF_QG_NR));        \
      REF_QG_SIX(REF_QG_START)                                                                     \
    }                                                                                              \
    if (w)                                                                                         \
      for (p = 0; p < kp; p += (STEP), v += (STEP)*REF_QG_NR, w += (STEP)*REF_QG_NR) {             \
        const __m512i b0 = _mm512_loadu_si512((const void *)v);                                    \
        const __m512i b1 = _mm512_loadu_si512((const void *)w);                                    \
        REF_QG_SIX(REF_QG_BOTH)                                                                    \
      }                                                                                            \
    else                                                                                           \
      for (p = 0; p < kp; p += (STEP), v += (STEP)*REF_QG_NR) {                                    \
        const __m512i b0 = _mm512_loadu_si512((const void *)v);                                    \
        REF_QG_SIX(REF_QG_ONE)                                                                     \
      }                                                                                            \
    REF_QG_SIX(REF_QG_STORE_BOTH)                                                                  \
  }
#define REF_QG_BOTH(i)                                                                             \
  {                                                                                                \
    const __m512i x = ref_qg_word512(a[i] + p);                                                    \
    REF_QG_MAC(c##i, x, b0);                                                                       \
    REF_QG_MAC(d##i, x, b1);                                                                       \
  }
#define REF_QG_ONE(i) REF_QG_MAC(c##i, ref_qg_word512(a[i] + p), b0);
#define REF_QG_START(i)                                                                            \
  c##i = _mm512_add_epi32(_mm512_set1_epi32(start[i]), e0);                                        \
  d##i = _mm512_add_epi32(_mm512_set1_epi32(start[i]), e1);
#define REF_QG_STORE_BOTH(i)                                                                       \
  _mm512_storeu_si512((void *)acc[i], c##i);                                                       \
  if (w)                                                                                           \
    _mm512_storeu_si512((void *)acc2[i], d##i);
#define REF_QG_MAC REF_QG_DPR
REF_QG_TWO_PANELS(ref_qg_tile2_vnni512z, int16_t, int16_t, 2)
#undef REF_QG_MAC
#define REF_QG_MAC REF_QG_DPB
REF_QG_TWO_PANELS(ref_qg8_tile_vnni512z, unsigned char, unsigned char, 4)
#undef REF_QG_MAC
#define REF_QG_MAC(c, x, b) REF_QG_DPB(c, b, x) /* kernel_rows: the panel's bytes unsigned */
REF_QG_TWO_PANELS(ref_qg8k_tile_vnni512z, unsigned char, unsigned char, 4)
#undef REF_QG_MAC
#undef REF_QG_BOTH
#undef REF_QG_ONE
#undef REF_QG_START
#undef REF_QG_STORE_BOTH
#undef REF_QG_TWO_PANELS

/* ref_qg_requantize on four 64-bit lanes: prod (the products), sh (the shifts); zp, lo and
 * hi 64-bit. */
REF_QG_AVX2 static inline __m256i ref_qg_round4(__m256i prod, __m256i sh, __m256i zp, __m256i lo,
                                                __m256i hi) {
  const __m256i offset = _mm256_set1_epi64x(INT64_MIN), one = _mm256_set1_epi64x(1); /* 2^63 */
  const __m256i t = _mm256_add_epi64(prod, offset);
  const __m256i odd = _mm256_and_si256(_mm256_srlv_epi64(t, sh), one);
  /* 2^(shift-1) - 1 + odd; 2^63 >> (64 - shift) is 2^(shift-1) for shift in [1, 62] */
  const __m256i half = _mm256_sub_epi64(
      _mm256_add_epi64(_mm256_srlv_epi64(offset, _mm256_sub_epi64(_mm256_set1_epi64x(64), sh)),
                       odd),
      one);
  __m256i q = _mm256_sub_epi64(_mm256_srlv_epi64(_mm256_add_epi64(t, half), sh),
                               _mm256_srlv_epi64(offset, sh));
  q = _mm256_add_epi64(q, zp);
  q = _mm256_blendv_epi8(q, lo, _mm256_cmpgt_epi64(lo, q));
  return _mm256_blendv_epi8(q, hi, _mm256_cmpgt_epi64(q, hi));
}

/* ref_qg_requantize of eight sums s = acc + bias (int32 lanes; the results in int32 lanes). */
REF_QG_AVX2 static inline __m256i ref_qg_exact8(__m256i s, __m256i mult, __m256i shift, __m256i zp,
                                                __m256i lo, __m256i hi) {
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  const __m256i even =
      ref_qg_round4(_mm256_mul_epi32(s, mult), _mm256_and_si256(shift, low), zp, lo, hi);
  const __m256i odd =
      ref_qg_round4(_mm256_mul_epi32(_mm256_srli_epi64(s, 32), _mm256_srli_epi64(mult, 32)),
                    _mm256_srli_epi64(shift, 32), zp, lo, hi);
  return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* ref_qg_fast of eight sums: scale0 for lanes 0-3, scale1 for lanes 4-7; zp, lo and hi as
 * int32 lanes. s * scale + (1.5 * 2^52 + zp) is rounded once, to nearest even, onto
 * the integers (the sum lies in [2^52, 2^53)): the low 32 bits of that double are then
 * round_half_to_even(s * scale) + zp exactly, whatever s * scale's own precision
 * (ref_qg_prepare bounds |s * scale| well below 2^31). */
REF_QG_AVX2 static inline __m256i ref_qg_fast8(__m256i s, __m256i smin, __m256i smax,
                                               __m256d scale0, __m256d scale1, __m256i zp,
                                               __m256i lo, __m256i hi) {
  const __m256d magic = _mm256_set1_pd(6755399441055744.0); /* 1.5 * 2^52 */
  const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  __m256i low, high, q;
  s = _mm256_min_epi32(_mm256_max_epi32(s, smin), smax);
  low = _mm256_permutevar8x32_epi32(
      _mm256_castpd_si256(
          _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(s)), scale0, magic)),
      even);
  high = _mm256_permutevar8x32_epi32(
      _mm256_castpd_si256(
          _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(s, 1)), scale1, magic)),
      even);
  q = _mm256_add_epi32(_mm256_blend_epi32(low, high, 0xF0), zp);
  return _mm256_min_epi32(_mm256_max_epi32(q, lo), hi);
}

/* Eight results in [lo, hi] (int32 lanes) as bytes in the low 64 bits. */
REF_QG_AVX2 static inline __m128i ref_qg_pack8(__m256i r, int y_signed) {
  const __m256i w = _mm256_packs_epi32(r, r); /* in range: no saturation */
  const __m256i b = y_signed ? _mm256_packs_epi16(w, w) : _mm256_packus_epi16(w, w);
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4)));
}

/* Requantizes eight sums s = acc + bias of channels ch[0..8) (per lane) or channel ch0 (all
 * lanes, ch NULL) and stores the bytes at y. */
REF_QG_AVX2 static inline void ref_qg_requant8(const ref_qg_out *o, __m256i s, int64_t ch0,
                                               const int32_t *mult, const int32_t *shift,
                                               const double *scale, const int32_t *smin,
                                               const int32_t *smax, unsigned char *y) {
  __m256i r;
  if (o->fast) {
    const __m256i zp = _mm256_set1_epi32(o->zp), lo = _mm256_set1_epi32(o->lo);
    const __m256i hi = _mm256_set1_epi32(o->hi);
    if (scale)
      r = ref_qg_fast8(s, _mm256_loadu_si256((const __m256i *)smin),
                       _mm256_loadu_si256((const __m256i *)smax), _mm256_loadu_pd(scale),
                       _mm256_loadu_pd(scale + 4), zp, lo, hi);
    else
      r = ref_qg_fast8(s, _mm256_set1_epi32(o->smin[ch0]), _mm256_set1_epi32(o->smax[ch0]),
                       _mm256_set1_pd(o->scale[ch0]), _mm256_set1_pd(o->scale[ch0]), zp, lo, hi);
  } else {
    const __m256i zp = _mm256_set1_epi64x(o->zp), lo = _mm256_set1_epi64x(o->lo);
    const __m256i hi = _mm256_set1_epi64x(o->hi);
    if (mult)
      r = ref_qg_exact8(s, _mm256_loadu_si256((const __m256i *)mult),
                        _mm256_loadu_si256((const __m256i *)shift), zp, lo, hi);
    else
      r = ref_qg_exact8(s, _mm256_set1_epi32(o->mult[ch0]), _mm256_set1_epi32(o->shift[ch0]), zp,
                        lo, hi);
  }
  _mm_storel_epi64((__m128i *)y, ref_qg_pack8(r, o->y_signed));
}

REF_QG_AVX2 static void ref_qg_store_avx2(const ref_qg_out *o, int64_t r, int64_t nr, int64_t c,
                                          int64_t nc, ref_qg_acc acc) {
  /* per-column parameters of the tile's columns, the missing ones harmless */
  int32_t cb[REF_QG_NR] = {0}, cm[REF_QG_NR] = {0}, cs[REF_QG_NR], lo[REF_QG_NR] = {0};
  int32_t hi[REF_QG_NR] = {0};
  double sc[REF_QG_NR] = {0};
  unsigned char part[REF_QG_NR];
  int64_t i, h;
  if (!o->per_row) {
    for (h = 0; h < REF_QG_NR; ++h)
      cs[h] = 1;
    memcpy(cb, o->bias + c, (size_t)nc * sizeof *cb);
    if (o->fast) {
      memcpy(sc, o->scale + c, (size_t)nc * sizeof *sc);
      memcpy(lo, o->smin + c, (size_t)nc * sizeof *lo);
      memcpy(hi, o->smax + c, (size_t)nc * sizeof *hi);
    } else {
      memcpy(cm, o->mult + c, (size_t)nc * sizeof *cm);
      memcpy(cs, o->shift + c, (size_t)nc * sizeof *cs);
    }
  }
  for (i = 0; i < nr; ++i) {
    unsigned char *y = ref_qg_y(o, (r + i) * o->y_row + c);
    unsigned char *to = nc == REF_QG_NR ? y : part;
    if (o->raw) { /* acc + bias, int32 */
      for (h = 0; h < nc; ++h) {
        const int32_t s = acc[i][h] + (o->per_row ? o->bias[r + i] : cb[h]);
        memcpy(y + h * 4, &s, 4);
      }
      continue;
    }
    for (h = 0; h < REF_QG_NR; h += 8) {
      const __m256i a = _mm256_loadu_si256((const __m256i *)(acc[i] + h));
      if (o->per_row)
        ref_qg_requant8(o, _mm256_add_epi32(a, _mm256_set1_epi32(o->bias[r + i])), r + i, NULL,
                        NULL, NULL, NULL, NULL, to + h);
      else
        ref_qg_requant8(o, _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)(cb + h))), 0,
                        cm + h, cs + h, sc + h, lo + h, hi + h, to + h);
    }
    if (to == part)
      memcpy(y, part, (size_t)nc);
  }
}

/* The runs of sums of ref_qg_requantize_run and ref_qg_requantize_channels, eight at a time:
 * how many they did (the rest is the portable loop's). */
REF_QG_AVX2 static int64_t ref_qg_requantize_run_avx2(const ref_qg_out *o, int64_t ch,
                                                      const int32_t *s, int64_t n,
                                                      unsigned char *y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    ref_qg_requant8(o,
                    _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s + i)),
                                     _mm256_set1_epi32(o->bias[ch])),
                    ch, NULL, NULL, NULL, NULL, NULL, y + i);
  return i;
}
REF_QG_AVX2 static int64_t ref_qg_requantize_channels_avx2(const ref_qg_out *o, const int32_t *s,
                                                           int64_t n, unsigned char *y) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    ref_qg_requant8(o,
                    _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s + c)),
                                     _mm256_loadu_si256((const __m256i *)(o->bias + c))),
                    0, o->mult + c, o->shift + c, o->fast ? o->scale + c : NULL,
                    o->fast ? o->smin + c : NULL, o->fast ? o->smax + c : NULL, y + c);
  return c;
}

/* The float64 requantization (ref_qg_fast8's arithmetic, the same results) of sixteen sums in
 * 512-bit registers, the bytes in the low 128 bits: with AVX512-VNNI's CPUs. */
REF_QG_VNNI512Z static inline __m128i ref_qg_fast16(__m512i s, __m512i smin, __m512i smax,
                                                    __m512d scale0, __m512d scale1, __m512i zp,
                                                    __m512i lo, __m512i hi) {
  const __m512d magic = _mm512_set1_pd(6755399441055744.0); /* 1.5 * 2^52 */
  __m512i q;
  s = _mm512_min_epi32(_mm512_max_epi32(s, smin), smax);
  q = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_castpd_si512(
          _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(s)), scale0, magic)))),
      _mm512_cvtepi64_epi32(_mm512_castpd_si512(
          _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(s, 1)), scale1, magic))),
      1);
  q = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q, zp), lo), hi);
  return _mm512_cvtepi32_epi8(q); /* in the output type's range: its low bytes */
}

/* ref_qg_store_avx2 in 512-bit registers where the requantization is the float64 one: a tile
 * row is one register, its parameters read once a tile (the 256-bit store read them again for
 * every eight outputs; 25% of MobileNetV2's int8 time). */
REF_QG_VNNI512Z static void ref_qg_store_vnni512z(const ref_qg_out *o, int64_t r, int64_t nr,
                                                  int64_t c, int64_t nc, ref_qg_acc acc) {
  const __mmask16 m = (__mmask16)((1u << nc) - 1);
  const __m512i zp = _mm512_set1_epi32(o->zp), lo = _mm512_set1_epi32(o->lo);
  const __m512i hi = _mm512_set1_epi32(o->hi);
  unsigned char *y = o->y;
  const int64_t y_row = o->y_row;
  int64_t i;
  if (!o->fast || o->raw) {
    ref_qg_store_avx2(o, r, nr, c, nc, acc);
    return;
  }
  if (o->per_row) {
    const int32_t *bias = o->bias + r, *smin = o->smin + r, *smax = o->smax + r;
    const double *scale = o->scale + r;
    for (i = 0; i < nr; ++i) {
      const __m512d sc = _mm512_set1_pd(scale[i]);
      const __m512i s =
          _mm512_add_epi32(_mm512_loadu_si512((const void *)acc[i]), _mm512_set1_epi32(bias[i]));
      _mm_mask_storeu_epi8(y + (r + i) * y_row + c, m,
                           ref_qg_fast16(s, _mm512_set1_epi32(smin[i]), _mm512_set1_epi32(smax[i]),
                                         sc, sc, zp, lo, hi));
    }
  } else {
    const __m512i bias = _mm512_maskz_loadu_epi32(m, o->bias + c);
    const __m512i smin = _mm512_maskz_loadu_epi32(m, o->smin + c);
    const __m512i smax = _mm512_maskz_loadu_epi32(m, o->smax + c);
    const __m512d sc0 = _mm512_maskz_loadu_pd((__mmask8)m, o->scale + c);
    const __m512d sc1 = _mm512_maskz_loadu_pd((__mmask8)(m >> 8), o->scale + c + 8);
    for (i = 0; i < nr; ++i)
      _mm_mask_storeu_epi8(
          y + (r + i) * y_row + c, m,
          ref_qg_fast16(_mm512_add_epi32(_mm512_loadu_si512((const void *)acc[i]), bias), smin,
                        smax, sc0, sc1, zp, lo, hi));
  }
}

/* ref_qg_requantize_run_avx2 in 512-bit registers (the float64 requantization; else the
 * 256-bit one): every sum, the last ones under a mask. */
REF_QG_VNNI512Z static int64_t ref_qg_requantize_run_vnni512z(const ref_qg_out *o, int64_t ch,
                                                              const int32_t *s, int64_t n,
                                                              unsigned char *y) {
  const __m512i zp = _mm512_set1_epi32(o->zp), lo = _mm512_set1_epi32(o->lo);
  const __m512i hi = _mm512_set1_epi32(o->hi), bias = _mm512_set1_epi32(o->bias[ch]);
  __m512i smin, smax;
  __m512d sc;
  int64_t i;
  if (!o->fast)
    return ref_qg_requantize_run_avx2(o, ch, s, n, y);
  smin = _mm512_set1_epi32(o->smin[ch]);
  smax = _mm512_set1_epi32(o->smax[ch]);
  sc = _mm512_set1_pd(o->scale[ch]);
  for (i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    const __m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, s + i), bias);
    _mm_mask_storeu_epi8(y + i, m, ref_qg_fast16(v, smin, smax, sc, sc, zp, lo, hi));
  }
  return n;
}

/* ref_qg_dw3_bytes_run's kernel: lane l of a window row's VPERMB holds bytes l * stride + 0, 1,
 * 2 and 2 again of the 64 loaded (the fourth tap is 0). */
REF_QG_VBMI static void ref_qg_dw3_bytes_vbmi(const ref_qg_dw3_bytes *q) {
  const __m512i start = _mm512_set1_epi32(q->start);
  unsigned char index[64];
  __m512i idx, t[3];
  int64_t o, j;
  int b, kh;
  for (b = 0; b < 64; ++b)
    index[b] = (unsigned char)(b / 4 * q->stride + (b % 4 < 3 ? b % 4 : 2));
  idx = _mm512_loadu_si512((const void *)index);
  for (kh = 0; kh < 3; ++kh)
    t[kh] = _mm512_set1_epi32((int32_t)((uint32_t)(uint8_t)q->taps[3 * kh] |
                                        (uint32_t)(uint8_t)q->taps[3 * kh + 1] << 8 |
                                        (uint32_t)(uint8_t)q->taps[3 * kh + 2] << 16));
  for (o = 0; o < q->oh; ++o) {
    const unsigned char *r = q->x + o * q->row_stride * q->pitch;
    int32_t *s = q->s + o * q->ow;
    for (j = 0; j < q->ow; j += 16) {
      const unsigned char *at = r + j * q->stride;
      __m512i acc = start;
      for (kh = 0; kh < 3; ++kh, at += q->pitch)
        acc = _mm512_dpbusd_epi32(
            acc, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512((const void *)at)), t[kh]);
      _mm512_storeu_si512((void *)(s + j), acc);
    }
  }
}

#endif /* REF_X86_TARGETS */

/* ---- Arm ----------------------------------------------------------------------------------- */

#if REF_QG_ARM32

/* The integer requantization (ref_qg_prepare never chooses float64 on 32-bit Arm) of n sums
 * s[c] + bias[c] of channels c with their own multipliers and shifts, into bytes (zp, lo and
 * hi are bytes, so that lo - zp and hi - zp fit); the channels of shifts below 32 redone by
 * the portable path: two loops that keep their registers. A channel's run is
 * ref_qg_requantize_bytes. */
static void ref_qg_requantize_channels_arm(const ref_qg_out *o, const int32_t *s,
                                           const int32_t *bias, const int32_t *mult,
                                           const int32_t *shift, int64_t n, unsigned char *y) {
  const int32_t zp = o->zp, qlo = o->lo - zp, qhi = o->hi - zp;
  int64_t c, low = 0;
  for (c = 0; c < n; ++c) {
    low |= shift[c] < 32;
    y[c] = (unsigned char)(ref_qg_requantize_arm((int32_t)((int64_t)s[c] + bias[c]), mult[c],
                                                 shift[c] < 32 ? 32 : shift[c], qlo, qhi) +
                           zp);
  }
  for (c = 0; low && c < n; ++c)
    if (shift[c] < 32)
      y[c] = (unsigned char)ref_qg_requantize((int32_t)((int64_t)s[c] + bias[c]), mult[c], shift[c],
                                              zp, o->lo, o->hi);
}

/* A tile's stores: raw outputs take the portable ones. */
static void ref_qg_store_arm(const ref_qg_out *o, int64_t r, int64_t nr, int64_t c, int64_t nc,
                             ref_qg_acc acc) {
  int64_t i;
  if (o->raw || o->fast) {
    ref_qg_store_portable(o, r, nr, c, nc, acc);
    return;
  }
  for (i = 0; i < nr; ++i) {
    unsigned char *y = ref_qg_y(o, (r + i) * o->y_row + c);
    if (o->per_row)
      ref_qg_requantize_bytes(acc[i], (int)nc, o->bias[r + i], o->mult[r + i], o->shift[r + i],
                              o->zp, o->lo, o->hi, y);
    else
      ref_qg_requantize_channels_arm(o, acc[i], o->bias + c, o->mult + c, o->shift + c, nc, y);
  }
}

#endif /* REF_QG_ARM32 */

#if defined(REF_QG_MVE) || defined(__ARM_FEATURE_DSP)
/* The pair at s as one 32-bit word (SMLAD's operand: two int16 halves). */
static inline int32_t ref_qg_word(const int16_t *s) {
  int32_t w;
  memcpy(&w, s, sizeof w);
  return w;
}

/* A 2 x 4 sub-tile's sums into rows i, i + 1 and columns j .. j + 3 of acc. */
static inline void ref_qg_put_2x4(ref_qg_acc acc, int i, int j, int32_t c00, int32_t c01,
                                  int32_t c02, int32_t c03, int32_t c10, int32_t c11, int32_t c12,
                                  int32_t c13) {
  acc[i][j] = c00;
  acc[i][j + 1] = c01;
  acc[i][j + 2] = c02;
  acc[i][j + 3] = c03;
  acc[i + 1][j] = c10;
  acc[i + 1][j + 1] = c11;
  acc[i + 1][j + 2] = c12;
  acc[i + 1][j + 3] = c13;
}
#endif

#ifdef REF_QG_DSP
/* Sub-tiles of 2 rows x 4 columns, their eight sums in registers with their operands (the 14
 * usable general registers of a Cortex-M hold no wider tile), a pair row a step: a row's
 * pair and a column's pair are one word each, and SMLAD adds both products to a sum. */
static void ref_qg_tile_dsp(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v, int nr,
                            int nc, ref_qg_acc acc) {
  int i, j;
  for (i = 0; i < nr; i += 2) /* REF_QG_MR is even: a[i + 1] exists (the last row repeated) */
    for (j = 0; j < nc; j += 4) {
      const int16_t *a0 = a[i], *a1 = a[i + 1], *b = v + 2 * j, *end = a0 + kp;
      int32_t c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      for (; a0 != end; a0 += 2, a1 += 2, b += 2 * REF_QG_NR) {
        const int32_t x0 = ref_qg_word(a0), x1 = ref_qg_word(a1);
        int32_t w = ref_qg_word(b);
        c00 = __smlad(x0, w, c00);
        c10 = __smlad(x1, w, c10);
        w = ref_qg_word(b + 2);
        c01 = __smlad(x0, w, c01);
        c11 = __smlad(x1, w, c11);
        w = ref_qg_word(b + 4);
        c02 = __smlad(x0, w, c02);
        c12 = __smlad(x1, w, c12);
        w = ref_qg_word(b + 6);
        c03 = __smlad(x0, w, c03);
        c13 = __smlad(x1, w, c13);
      }
      ref_qg_put_2x4(acc, i, j, c00, c01, c02, c03, c10, c11, c12, c13);
    }
}
#endif

#ifdef REF_QG_MVE
/* VMLADAVA of one column's gathered pairs with the sub-tile's two rows. */
#define REF_QG_MVE_COLUMN(h, s0, s1)                                                               \
  do {                                                                                             \
    const int16x8_t w_ = vreinterpretq_s16_s32(                                                    \
        vldrwq_gather_offset_s32((const int32_t *)(const void *)(b + 2 * (h)), rows4));            \
    s0 = vmladavaq_s16(s0, x0, w_);                                                                \
    s1 = vmladavaq_s16(s1, x1, w_);                                                                \
  } while (0)

/* SMLAD of one column's pair at depth row b with the sub-tile's two rows' pairs. */
#define REF_QG_DSP_COLUMN(h, s0, s1)                                                               \
  do {                                                                                             \
    const int32_t w_ = ref_qg_word(b + 2 * (h));                                                   \
    s0 = __smlad(x0, w_, s0);                                                                      \
    s1 = __smlad(x1, w_, s1);                                                                      \
  } while (0)

/* Sub-tiles of 2 rows x 4 columns as dot products of 8 depths: a row's 8 values are one
 * load, a column's the pairs of 4 successive pair rows (REF_QG_NR pairs apart) one gather of
 * words (V's pairs are word-aligned: its panels start on the backend's aligned buffers and
 * hold whole pairs), and VMLADAVA adds the 8 products of a row and a column to a scalar sum
 * (in an even register: the 8 sums and their operands fit). The depths past the last
 * multiple of 8 take SMLAD. */
static void ref_qg_tile_mve(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v, int nr,
                            int nc, ref_qg_acc acc) {
  const uint32x4_t rows4 = vmulq_n_u32(vidupq_n_u32(0, 1), 2 * REF_QG_NR * sizeof(int16_t));
  int i, j;
  for (i = 0; i < nr; i += 2)
    for (j = 0; j < nc; j += 4) {
      const int16_t *a0 = a[i], *a1 = a[i + 1], *b = v + 2 * j;
      const int16_t *end8 = a0 + kp / 8 * 8, *end = a0 + kp;
      int32_t c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      for (; a0 != end8; a0 += 8, a1 += 8, b += 8 * REF_QG_NR) {
        const int16x8_t x0 = vld1q_s16(a0), x1 = vld1q_s16(a1);
        REF_QG_MVE_COLUMN(0, c00, c10);
        REF_QG_MVE_COLUMN(1, c01, c11);
        REF_QG_MVE_COLUMN(2, c02, c12);
        REF_QG_MVE_COLUMN(3, c03, c13);
      }
      for (; a0 != end; a0 += 2, a1 += 2, b += 2 * REF_QG_NR) {
        const int32_t x0 = ref_qg_word(a0), x1 = ref_qg_word(a1);
        REF_QG_DSP_COLUMN(0, c00, c10);
        REF_QG_DSP_COLUMN(1, c01, c11);
        REF_QG_DSP_COLUMN(2, c02, c12);
        REF_QG_DSP_COLUMN(3, c03, c13);
      }
      ref_qg_put_2x4(acc, i, j, c00, c01, c02, c03, c10, c11, c12, c13);
    }
}
#endif

#ifdef REF_QG_NEON
/* Sub-tiles of 2 rows x REF_QG_NR columns in eight 4-lane sums: a pair row of V loads
 * de-interleaved (its even depths, then its odd ones, for 8 columns a load) and each of a
 * row's two values, loaded into every lane, multiplies it into the sums (SMLAL). */
static void ref_qg_tile_neon(int64_t kp, const int16_t *const a[REF_QG_MR], const int16_t *v,
                             int nr, int nc, ref_qg_acc acc) {
  int i;
  (void)nc; /* whole panels */
  for (i = 0; i < nr; i += 2) {
    const int16_t *a0 = a[i], *a1 = a[i + 1], *b = v;
    int32x4_t c00 = vdupq_n_s32(0), c01 = c00, c02 = c00, c03 = c00;
    int32x4_t c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    int64_t p;
    for (p = 0; p < kp; p += 2, b += 2 * REF_QG_NR) {
      const int16x8x2_t lo = vld2q_s16(b), hi = vld2q_s16(b + REF_QG_NR);
      const int16x4_t x0 = vld1_dup_s16(a0 + p), x1 = vld1_dup_s16(a1 + p);
      const int16x4_t y0 = vld1_dup_s16(a0 + p + 1), y1 = vld1_dup_s16(a1 + p + 1);
      c00 = vmlal_s16(vmlal_s16(c00, vget_low_s16(lo.val[0]), x0), vget_low_s16(lo.val[1]), y0);
      c01 = vmlal_s16(vmlal_s16(c01, vget_high_s16(lo.val[0]), x0), vget_high_s16(lo.val[1]), y0);
      c02 = vmlal_s16(vmlal_s16(c02, vget_low_s16(hi.val[0]), x0), vget_low_s16(hi.val[1]), y0);
      c03 = vmlal_s16(vmlal_s16(c03, vget_high_s16(hi.val[0]), x0), vget_high_s16(hi.val[1]), y0);
      c10 = vmlal_s16(vmlal_s16(c10, vget_low_s16(lo.val[0]), x1), vget_low_s16(lo.val[1]), y1);
      c11 = vmlal_s16(vmlal_s16(c11, vget_high_s16(lo.val[0]), x1), vget_high_s16(lo.val[1]), y1);
      c12 = vmlal_s16(vmlal_s16(c12, vget_low_s16(hi.val[0]), x1), vget_low_s16(hi.val[1]), y1);
      c13 = vmlal_s16(vmlal_s16(c13, vget_high_s16(hi.val[0]), x1), vget_high_s16(hi.val[1]), y1);
    }
    vst1q_s32(acc[i], c00);
    vst1q_s32(acc[i] + 4, c01);
    vst1q_s32(acc[i] + 8, c02);
    vst1q_s32(acc[i] + 12, c03);
    vst1q_s32(acc[i + 1], c10);
    vst1q_s32(acc[i + 1] + 4, c11);
    vst1q_s32(acc[i + 1] + 8, c12);
    vst1q_s32(acc[i + 1] + 12, c13);
  }
}
#endif

int32_t ref_qg_dot8_portable(const unsigned char *x, const int8_t *w, int64_t n, int is_signed,
                             int32_t xz) {
  int64_t i;
  int32_t s = 0;
  for (i = 0; i < n; ++i)
    s += w[i] * ((is_signed ? (int32_t)(int8_t)x[i] : (int32_t)x[i]) - xz);
  return s;
}

void ref_qg_lean_place_portable(const int16_t *col, int64_t k, int pixels, int32_t *q) {
  int64_t g;
  for (g = 0; g < (k + 3) / 4; ++g, col += 4, q += 2 * pixels) {
    q[0] = ref_qg_lean_pack(col[0], col[2]);
    q[1] = ref_qg_lean_pack(col[1], col[3]);
  }
}

void ref_qg_lean_column_unit_portable(const unsigned char *x, int64_t k, int is_signed, int32_t xz,
                                      int32_t *q) {
  int64_t g;
  int i;
  for (g = 0; g < (k + 3) / 4; ++g, x += 4, q += 2) {
    int32_t v[4];
    for (i = 0; i < 4; ++i)
      v[i] = g * 4 + i >= k ? 0 : (is_signed ? (int32_t)(int8_t)x[i] : (int32_t)x[i]) - xz;
    q[0] = ref_qg_lean_pack(v[0], v[2]);
    q[1] = ref_qg_lean_pack(v[1], v[3]);
  }
}

void ref_qg_lean_block_unit_portable(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                                     int32_t xz, int32_t *q) {
  ref_qg_lean_block_unit_n(x, ipix, k, is_signed, xz, REF_QG_LEAN_PIXELS, q);
}

void ref_qg_lean_block_unit_n(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                              int32_t xz, int n, int32_t *q) {
  const int pixels = n == 1 ? 1 : REF_QG_LEAN_PIXELS;
  int64_t g;
  int h, i;
  for (g = 0; g < (k + 3) / 4; ++g, q += 2 * pixels)
    for (h = 0; h < pixels; ++h) {
      int32_t v[4];
      for (i = 0; i < 4; ++i) {
        const int64_t d = 4 * g + i;
        const unsigned char b = d < k ? x[d * ipix + (h < n ? h : n - 1)] : 0;
        v[i] = d < k ? (is_signed ? (int32_t)(int8_t)b : (int32_t)b) - xz : 0;
      }
      q[2 * h] = ref_qg_lean_pack(v[0], v[2]);
      q[2 * h + 1] = ref_qg_lean_pack(v[1], v[3]);
    }
}

/* ---- Lean products ------------------------------------------------------------------------ */

/* The depths past the last multiple of 4 (d < k % 4 of the last group at c), one at a time,
 * for the block's first `pixels` pixels: the kernel row's bytes there may be the next row's, or
 * none. */
static void ref_qg_lean_tail(int k4, const int8_t *w, const int32_t *c, int pixels, int32_t *s) {
  int d, h;
  for (d = 0; d < k4; ++d)
    for (h = 0; h < pixels; ++h) { /* depth d: the half d >> 1 of word d & 1 */
      const uint32_t word = (uint32_t)c[2 * h + (d & 1)];
      s[h] += w[d] * (int16_t)(uint16_t)(d >> 1 ? word >> 16 : word & 0xFFFFu);
    }
}

void ref_qg_lean_put(const ref_qg_lean_ch *ch, int32_t s, unsigned char *y, int64_t i) {
  const int32_t v = (int32_t)((uint32_t)s + (uint32_t)ch->bias);
  if (ch->raw) {
    memcpy(y + i * 4, &v, sizeof v);
    return;
  }
#if REF_QG_ARM32
  if (ch->shift >= 32) {
    y[i] = (unsigned char)(ref_qg_requantize_arm(v, ch->mult, ch->shift, ch->lo - ch->zp,
                                                 ch->hi - ch->zp) +
                           ch->zp);
    return;
  }
#endif
  y[i] = (unsigned char)ref_qg_requantize(v, ch->mult, ch->shift, ch->zp, ch->lo, ch->hi);
}

int ref_qg_lean_fast_all(const ref_qg_lean_out *o, int64_t channels) {
#if REF_QG_ARM32
  int64_t c;
  if (o->raw)
    return 0;
  for (c = 0; c < channels; ++c)
    if (!ref_qg_lean_fast_ok(o->mult[c * o->mult_step], o->shift[c * o->shift_step], o->sum_bits))
      return 0;
  return 1;
#else
  (void)o;
  (void)channels;
  return 0;
#endif
}

#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
/* ref_qg_lean_fast where the clamp is [-128, 127] or [0, 255] (SSAT or USAT saturates to it)
 * before the lower bound of a fused activation: (hi + rnd) >> e plus the zero point is
 * (hi + rnd + zp * 2^e) >> e, rz that constant (ref_qg_lean_fast_ok bounds it: no sum wraps). u:
 * uint8's clamp; lo: the activation's bound where it is above the clamp's, else INT32_MIN (a
 * constant compare the compiler drops). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int32_t
ref_qg_lean_q8(int32_t v, int32_t mult, int32_t rz, int32_t e, int u, int32_t lo) {
  int32_t t, q; /* hi + rz by SMMLA (the product's high word plus rz): compilers do not pick it */
  __asm__("smmla %0, %1, %2, %3" : "=r"(t) : "r"(v), "r"(mult), "r"(rz));
  t >>= e; /* arithmetic on every Arm compiler */
  q = u ? (int32_t)__usat(t, 8) : __ssat(t, 8);
  return q < lo ? lo : q;
}

/* rz of ref_qg_lean_q8: 2^(e-1) + zp * 2^e, one shift of 2 zp + 1. */
static inline int32_t ref_qg_lean_rz(int32_t e, int32_t zp) {
  return (int32_t)((uint32_t)(2 * zp + 1) << (e - 1));
}

/* Whether the clamp [lo, hi] takes ref_qg_lean_q8. */
static inline int ref_qg_lean_sat8(int32_t lo, int32_t hi) {
  return (hi == 127 && lo >= -128) || (hi == 255 && lo >= 0);
}

/* ref_qg_lean_run's loop for ref_qg_lean_q8, u and lo constants where it is inlined. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_lean_run8(const int32_t *s, int n, int32_t bias, int32_t mult, int32_t e, int32_t zp, int u,
                 int32_t lo, unsigned char *y) {
  const int32_t rz = ref_qg_lean_rz(e, zp);
  int i;
  for (i = 0; i < n; ++i)
    y[i] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[i] + (uint32_t)bias), mult, rz, e, u,
                                         lo);
}

/* ref_qg_lean_tile's rows for ref_qg_lean_q8 (per-channel multipliers and shifts), each of
 * n = 4 or 1 elements (a constant where it is inlined). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_lean_rows8(const ref_qg_lean_out *o, int c0, int m, const int32_t *s, int n,
                  unsigned char *y, int64_t y_row, int u, int32_t lo) {
  const int32_t zp = o->zp, none = 0, *bias = o->bias ? o->bias + c0 : &none;
  const int32_t *mult = o->mult + c0, *shift = o->shift + c0, *end = s + m * REF_QG_LEAN_PIXELS;
  const int bstep = o->bias ? 1 : 0;
  for (; s != end; s += REF_QG_LEAN_PIXELS, y += y_row, bias += bstep) {
    const uint32_t b = (uint32_t)*bias;
    const int32_t mu = *mult++, e = *shift++ - 32, rz = ref_qg_lean_rz(e, zp);
    y[0] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[0] + b), mu, rz, e, u, lo);
    if (n == 1)
      continue;
    y[1] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[1] + b), mu, rz, e, u, lo);
    y[2] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[2] + b), mu, rz, e, u, lo);
    y[3] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[3] + b), mu, rz, e, u, lo);
  }
}
/* ref_qg_lean_put_channels' loop for ref_qg_lean_q8 (per-channel multipliers and shifts). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_lean_channels8(const ref_qg_lean_out *o, int64_t c0, int64_t n, const int32_t *s,
                      unsigned char *y, int u, int32_t lo) {
  const int32_t zp = o->zp, none = 0, *bias = o->bias ? o->bias + c0 : &none;
  const int32_t *mult = o->mult + c0, *shift = o->shift + c0;
  const int bstep = o->bias ? 1 : 0;
  int64_t j;
  for (j = 0; j < n; ++j, bias += bstep) {
    const int32_t e = shift[j] - 32;
    y[j] = (unsigned char)ref_qg_lean_q8((int32_t)((uint32_t)s[j] + (uint32_t)*bias), mult[j],
                                         ref_qg_lean_rz(e, zp), e, u, lo);
  }
}
#endif

void ref_qg_lean_put_channels(const ref_qg_lean_out *o, int64_t c0, int64_t n, const int32_t *s,
                              unsigned char *y) {
  int64_t j;
#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
  if (o->fast && ref_qg_lean_sat8(o->lo, o->hi) && o->mult_step == 1 && o->shift_step == 1) {
    if (o->hi == 255 && o->lo == 0)
      ref_qg_lean_channels8(o, c0, n, s, y, 1, INT32_MIN);
    else if (o->hi == 255)
      ref_qg_lean_channels8(o, c0, n, s, y, 1, o->lo);
    else if (o->lo == -128)
      ref_qg_lean_channels8(o, c0, n, s, y, 0, INT32_MIN);
    else
      ref_qg_lean_channels8(o, c0, n, s, y, 0, o->lo);
    return;
  }
#endif
  for (j = 0; j < n; ++j) {
    const ref_qg_lean_ch ch = ref_qg_lean_channel(o, c0 + j);
    ref_qg_lean_put(&ch, s[j], y, j);
  }
}

/* y[i0 + i] for i < n from channel ch's sums s: in a loop of ref_qg_lean_fast where it
 * applies. */
static void ref_qg_lean_run(const ref_qg_lean_out *o, int64_t ch, const int32_t *s, int n,
                            unsigned char *y, int64_t i0) {
  const ref_qg_lean_ch q = ref_qg_lean_channel(o, ch);
  int i;
#if REF_QG_ARM32
  if (!q.raw && ref_qg_lean_fast_ok(q.mult, q.shift, q.sum_bits)) {
    const int32_t bias = q.bias, mult = q.mult, e = q.shift - 32, zp = q.zp;
    const int32_t qlo = q.lo - zp, qhi = q.hi - zp;
    unsigned char *yi = y + i0;
#if defined(__ARM_FEATURE_SAT)
    if (ref_qg_lean_sat8(q.lo, q.hi)) { /* the common clamps with their constants */
      if (q.hi == 255 && q.lo == 0)
        ref_qg_lean_run8(s, n, bias, mult, e, zp, 1, INT32_MIN, yi);
      else if (q.hi == 255)
        ref_qg_lean_run8(s, n, bias, mult, e, zp, 1, q.lo, yi);
      else if (q.lo == -128)
        ref_qg_lean_run8(s, n, bias, mult, e, zp, 0, INT32_MIN, yi);
      else
        ref_qg_lean_run8(s, n, bias, mult, e, zp, 0, q.lo, yi);
      return;
    }
#endif
    for (i = 0; i < n; ++i)
      yi[i] = (unsigned char)ref_qg_lean_fast(s[i], bias, mult, e, qlo, qhi, zp);
    return;
  }
#endif
  for (i = 0; i < n; ++i)
    ref_qg_lean_put(&q, s[i], y, i0 + i);
}

/* The lean kernels below are REF_NOINLINE: their loops need every register, which a caller's
 * live values would take if GCC inlined them (spills in the inner loop). */

/* A lean tile's outputs: rows [0, m) of the sums s (REF_QG_LEAN_PIXELS a row, row r channel
 * c0 + r), their first n, into y + r * y_row; where every channel is fast, with the layer's
 * constants in registers. */

#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
/* ref_qg_lean_rows8 for the common clamps, with their constants. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_lean_clamps8(const ref_qg_lean_out *o, int c0, int m, const int32_t *s, int n,
                    unsigned char *y, int64_t y_row) {
  if (o->hi == 255 && o->lo == 0)
    ref_qg_lean_rows8(o, c0, m, s, n, y, y_row, 1, INT32_MIN);
  else if (o->hi == 255)
    ref_qg_lean_rows8(o, c0, m, s, n, y, y_row, 1, o->lo);
  else if (o->lo == -128)
    ref_qg_lean_rows8(o, c0, m, s, n, y, y_row, 0, INT32_MIN);
  else
    ref_qg_lean_rows8(o, c0, m, s, n, y, y_row, 0, o->lo);
}
#endif

static void ref_qg_lean_tile(const ref_qg_lean_out *o, int c0, int m, const int32_t *s, int n,
                             unsigned char *y, int64_t y_row) {
  int r;
#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
  if (o->fast && ref_qg_lean_sat8(o->lo, o->hi) && o->mult_step == 1 && o->shift_step == 1) {
    if (n == REF_QG_LEAN_PIXELS) { /* per-channel */
      ref_qg_lean_clamps8(o, c0, m, s, REF_QG_LEAN_PIXELS, y, y_row);
      return;
    }
    if (n == 1) { /* a lean column: a product of one row, a 1 x 1 output */
      ref_qg_lean_clamps8(o, c0, m, s, 1, y, y_row);
      return;
    }
  }
#endif
#if REF_QG_ARM32
  if (o->fast && n == REF_QG_LEAN_PIXELS) {
    const int32_t zp = o->zp, qlo = o->lo - zp, qhi = o->hi - zp;
    const int mstep = (int)o->mult_step, sstep = (int)o->shift_step;
    const int32_t *bias = o->bias ? o->bias + c0 : NULL, *mult = o->mult + c0 * mstep;
    const int32_t *shift = o->shift + c0 * sstep;
    for (r = 0; r < m; ++r, s += REF_QG_LEAN_PIXELS, y += y_row, mult += mstep, shift += sstep) {
      const int32_t b = bias ? bias[r] : 0, mu = *mult, e = *shift - 32;
      y[0] = (unsigned char)ref_qg_lean_fast(s[0], b, mu, e, qlo, qhi, zp);
      y[1] = (unsigned char)ref_qg_lean_fast(s[1], b, mu, e, qlo, qhi, zp);
      y[2] = (unsigned char)ref_qg_lean_fast(s[2], b, mu, e, qlo, qhi, zp);
      y[3] = (unsigned char)ref_qg_lean_fast(s[3], b, mu, e, qlo, qhi, zp);
    }
    return;
  }
#endif
  for (r = 0; r < m; ++r)
    ref_qg_lean_run(o, c0 + r, s + r * REF_QG_LEAN_PIXELS, n, y + r * y_row, 0);
}

/* s[r * REF_QG_LEAN_PIXELS + h] for the m rows at w (ref_qg_lean_dots' sums) and the block's
 * pixels h < n (n = 1: c is a lean column; else all 4); the first `over` rows in whole groups
 * of 4 depths. */
typedef void (*ref_qg_lean_sums_fn)(int k, const int8_t *w, int m, int over, const int32_t *c,
                                    int n, int32_t *s);

REF_NOINLINE static void ref_qg_lean_sums_portable(int k, const int8_t *w, int m, int over,
                                                   const int32_t *c, int n, int32_t *s) {
  const int pixels = n == 1 ? 1 : REF_QG_LEAN_PIXELS;
  int r, g, h;
  for (r = 0; r < m; ++r, s += REF_QG_LEAN_PIXELS) {
    const int8_t *wr = w + r * k;
    const int32_t *cg = c;
    const int whole = r < over ? (k + 3) / 4 : k / 4;
    for (h = 0; h < pixels; ++h)
      s[h] = 0;
    for (g = 0; g < whole; ++g, wr += 4, cg += 2 * pixels)
      ref_qg_lean_tail(4, wr, cg, pixels, s);
    if (whole * 4 < k)
      ref_qg_lean_tail(k % 4, wr, cg, pixels, s);
  }
}

/* Rows in chunks of REF_QG_LEAN_ROWS: their sums, then their outputs. */
enum { REF_QG_LEAN_ROWS = 16 };
static void ref_qg_lean_dots_with(ref_qg_lean_sums_fn sums, int64_t k, const int8_t *w, int64_t m,
                                  int64_t over, const int32_t *c, const ref_qg_lean_out *o,
                                  int64_t c0, int n, unsigned char *y, int64_t y_row) {
  int32_t s[REF_QG_LEAN_ROWS * REF_QG_LEAN_PIXELS];
  int r0, nr;
  for (r0 = 0; r0 < (int)m; r0 += nr) { /* the callers' bound: int */
    nr = (int)m - r0 < REF_QG_LEAN_ROWS ? (int)m - r0 : REF_QG_LEAN_ROWS;
    sums((int)k, w + (int64_t)r0 * k, nr, (int)over - r0, c, n, s);
    ref_qg_lean_tile(o, (int)c0 + r0, nr, s, n, y + r0 * y_row, y_row);
  }
}

void ref_qg_lean_dots_portable(int64_t k, const int8_t *w, int64_t m, int64_t over,
                               const int32_t *c, const ref_qg_lean_out *o, int64_t c0, int n,
                               unsigned char *y, int64_t y_row) {
  ref_qg_lean_dots_with(ref_qg_lean_sums_portable, k, w, m, over, c, o, c0, n, y, y_row);
}

void ref_qg_lean_row_portable(int64_t k, const int16_t *x, const int8_t *w, int64_t ldw, int64_t n,
                              int32_t *s) {
  int64_t d, j;
  for (j = 0; j < n; ++j)
    s[j] = 0;
  for (d = 0; d < k; ++d) {
    const int32_t xd = x[d];
    const int8_t *wd = w + d * ldw;
    for (j = 0; j < n; ++j)
      s[j] += xd * wd[j];
  }
}

#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

/* Four bytes at p as one word (an unaligned load where the core allows it). */
static inline int32_t ref_qg_word8(const int8_t *p) {
  int32_t w;
  memcpy(&w, p, sizeof w);
  return w;
}

/* SXTB16 of x rotated by 8 bits: its bytes 1 and 3 as two int16 halves. */
static inline int32_t ref_qg_sxtb16_ror8(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

/* PKHBT, PKHTB: the low half of lo with the low half of hi above it; the high half of hi with
 * the high half of lo below it. */
static inline int32_t ref_qg_pkhbt(int32_t lo, int32_t hi) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
  return r;
}
static inline int32_t ref_qg_pkhtb(int32_t hi, int32_t lo) {
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
  return r;
}

/* Four depths a step: the row's 4 kernel bytes one load and two SXTB16 (depths 0 and 2, 1 and
 * 3), each pixel's two words, eight SMLADs (a block of 4 pixels: its sums in 4 registers). */
typedef char ref_qg_lean_block_of_4[REF_QG_LEAN_PIXELS == 4 ? 1 : -1];
/* `rows` rows of `groups` groups of 4 depths, k bytes apart. */
static inline void ref_qg_lean_sums_rows(const int8_t *w, int k, int rows, int groups,
                                         const int32_t *c, int32_t *s) {
  for (; rows > 0; --rows, w += k, s += REF_QG_LEAN_PIXELS) {
    const int8_t *wr = w, *end = w + 4 * groups;
    const int32_t *cg = c;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; wr != end; wr += 4, cg += 8) {
      const int32_t a = ref_qg_word8(wr);
      const int32_t e = __sxtb16(a), od = ref_qg_sxtb16_ror8(a);
      s0 = __smlad(od, cg[1], __smlad(e, cg[0], s0));
      s1 = __smlad(od, cg[3], __smlad(e, cg[2], s1));
      s2 = __smlad(od, cg[5], __smlad(e, cg[4], s2));
      s3 = __smlad(od, cg[7], __smlad(e, cg[6], s3));
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
  }
}

/* Pairs of rows: each word of the block multiplies both rows' halves (16 SMLADs for 2 kernel
 * words and 8 block words). */
#if defined(__thumb2__) && defined(__GNUC__)
/* In Thumb-2 assembly: the 8 sums, the two pointers, k and three temporaries take all 14
 * registers, which C compilers do not manage (GCC reloads block words and spills, 40
 * instructions a group). A group's odd depths (the block's odd words), then its even ones,
 * each phase one half of each row's word (SXTB16) in a register and each block word loaded
 * once for both rows: 35 instructions for 32 multiply-adds, the loop's end read from the
 * stack; two groups a loop (an odd one first): 67 for 64. Arguments: w, k, pairs, groups; c and s
 * on the stack. */
void ref_qg_lean_pairs_t2(const int8_t *w, int k, int pairs, int groups, const int32_t *c,
                          int32_t *s);
/* One group of 4 depths of the two rows (r0 and r0 + r1) against the block at r2. */
#define REF_QG_PAIRS_GROUP                                                                         \
  "  ldr lr, [r0, r1]\n"                                                                           \
  "  sxtb16 r12, lr, ror #8\n"                                                                     \
  "  ldr lr, [r0]\n"                                                                               \
  "  sxtb16 r3, lr, ror #8\n"                                                                      \
  "  ldr lr, [r2, #4]\n"                                                                           \
  "  smlad r4, r3, lr, r4\n"                                                                       \
  "  smlad r8, r12, lr, r8\n"                                                                      \
  "  ldr lr, [r2, #12]\n"                                                                          \
  "  smlad r5, r3, lr, r5\n"                                                                       \
  "  smlad r9, r12, lr, r9\n"                                                                      \
  "  ldr lr, [r2, #20]\n"                                                                          \
  "  smlad r6, r3, lr, r6\n"                                                                       \
  "  smlad r10, r12, lr, r10\n"                                                                    \
  "  ldr lr, [r2, #28]\n"                                                                          \
  "  smlad r7, r3, lr, r7\n"                                                                       \
  "  smlad r11, r12, lr, r11\n"                                                                    \
  "  ldr lr, [r0, r1]\n"                                                                           \
  "  sxtb16 r12, lr\n"                                                                             \
  "  ldr lr, [r0], #4\n"                                                                           \
  "  sxtb16 r3, lr\n"                                                                              \
  "  ldr lr, [r2, #8]\n"                                                                           \
  "  smlad r5, r3, lr, r5\n"                                                                       \
  "  smlad r9, r12, lr, r9\n"                                                                      \
  "  ldr lr, [r2, #16]\n"                                                                          \
  "  smlad r6, r3, lr, r6\n"                                                                       \
  "  smlad r10, r12, lr, r10\n"                                                                    \
  "  ldr lr, [r2, #24]\n"                                                                          \
  "  smlad r7, r3, lr, r7\n"                                                                       \
  "  smlad r11, r12, lr, r11\n"                                                                    \
  "  ldr lr, [r2], #32\n"                                                                          \
  "  smlad r4, r3, lr, r4\n"                                                                       \
  "  smlad r8, r12, lr, r8\n"
/* The parts both pair kernels share (their frame's first 16 bytes alike: [sp] the pair's end,
 * [sp, 4] pairs left, [sp, 8] 4 groups, [sp, 12] the pair's first row). A pair's start: its
 * first row and end. */
#define REF_QG_PAIRS_START                                                                         \
  "  str r0, [sp, #12]\n"                                                                          \
  "  ldr r3, [sp, #8]\n"                                                                           \
  "  add r3, r3, r0\n"                                                                             \
  "  str r3, [sp, #0]\n"
/* The pair's groups into the sums r4-r11: an odd one first, then two a loop; ends at 3:. */
#define REF_QG_PAIRS_GROUPS                                                                        \
  "  ldr lr, [sp, #8]\n"                                                                           \
  "  tst lr, #4\n"                                                                                 \
  "  beq 5f\n" REF_QG_PAIRS_GROUP "5:\n"                                                           \
  "  ldr lr, [sp, #0]\n"                                                                           \
  "  cmp r0, lr\n"                                                                                 \
  "  beq 3f\n"                                                                                     \
  "2:\n" REF_QG_PAIRS_GROUP REF_QG_PAIRS_GROUP "  ldr lr, [sp, #0]\n"                              \
  "  cmp r0, lr\n"                                                                                 \
  "  bne 2b\n"                                                                                     \
  "3:\n"
/* The next pair (k in r1), back to 1: while pairs are left. */
#define REF_QG_PAIRS_NEXT                                                                          \
  "  ldr r0, [sp, #12]\n"                                                                          \
  "  add r0, r0, r1, lsl #1\n"                                                                     \
  "  ldr r2, [sp, #4]\n"                                                                           \
  "  subs r2, r2, #1\n"                                                                            \
  "  str r2, [sp, #4]\n"                                                                           \
  "  bne 1b\n"
__asm__(".syntax unified\n"
        ".pushsection .text.ref_qg_lean_pairs_t2,\"ax\",%progbits\n"
        ".balign 4\n"
        ".global ref_qg_lean_pairs_t2\n"
        ".hidden ref_qg_lean_pairs_t2\n"
        ".type ref_qg_lean_pairs_t2, %function\n"
        ".thumb\n"
        ".thumb_func\n"
        "ref_qg_lean_pairs_t2:\n"
        "  push {r4-r11, lr}\n"
        "  sub sp, sp, #16\n" /* [sp]: the pair's end, [sp, 4]: pairs left, [sp, 8]: 4 groups */
        "  cmp r2, #0\n"      /* [sp, 12]: the pair's first row; c at [sp, 52], s at [sp, 56] */
        "  ble 4f\n"
        "  str r2, [sp, #4]\n"
        "  lsls r3, r3, #2\n"
        "  str r3, [sp, #8]\n"
        "1:\n" REF_QG_PAIRS_START "  ldr r2, [sp, #52]\n"
        "  mov r4, #0\n"
        "  mov r5, #0\n"
        "  mov r6, #0\n"
        "  mov r7, #0\n"
        "  mov r8, #0\n"
        "  mov r9, #0\n"
        "  mov r10, #0\n"
        "  mov r11, #0\n" REF_QG_PAIRS_GROUPS "  ldr lr, [sp, #56]\n"
        "  stmia lr!, {r4-r11}\n"
        "  str lr, [sp, #56]\n" REF_QG_PAIRS_NEXT "4:\n"
        "  add sp, sp, #16\n"
        "  pop {r4-r11, pc}\n"
        ".size ref_qg_lean_pairs_t2, .-ref_qg_lean_pairs_t2\n"
        ".popsection\n");
/* ref_qg_lean_pairs_t2 whose rows end in uint8 outputs [0, 255] by ref_qg_lean_q8 (every
 * channel fast, per-channel multipliers and shifts): each pair's sums start at the rows'
 * biases and are requantized in registers as the pair ends (SMMLA, ASR, USAT), each row's 4
 * bytes stored at its place in y; no sums stored, no tile of them requantized after. */
typedef struct {
  const int32_t *bias, *mult, *shift; /* the first row's */
  unsigned char *y;                   /* the first row's first output */
  int32_t y_row;                      /* bytes from one row's outputs to the next's */
  int32_t zp2p1;                      /* 2 zp + 1 (rz = zp2p1 << (e - 1)) */
} ref_qg_lean_u8;
void ref_qg_lean_pairs_u8_t2(const int8_t *w, int k, int pairs, int groups, const int32_t *c,
                             const ref_qg_lean_u8 *q);
/* One row's 4 sums (registers A-D) requantized: mult in r12, rz in lr, e in r3, y in r1. */
#define REF_QG_PAIRS_U8_ROW(A, B, C, D)                                                            \
  "  smmla " A ", " A ", r12, lr\n"                                                                \
  "  smmla " B ", " B ", r12, lr\n"                                                                \
  "  smmla " C ", " C ", r12, lr\n"                                                                \
  "  smmla " D ", " D ", r12, lr\n"                                                                \
  "  asr " A ", " A ", r3\n"                                                                       \
  "  asr " B ", " B ", r3\n"                                                                       \
  "  asr " C ", " C ", r3\n"                                                                       \
  "  asr " D ", " D ", r3\n"                                                                       \
  "  usat " A ", #8, " A "\n"                                                                      \
  "  usat " B ", #8, " B "\n"                                                                      \
  "  usat " C ", #8, " C "\n"                                                                      \
  "  usat " D ", #8, " D "\n"                                                                      \
  "  strb " A ", [r1, #0]\n"                                                                       \
  "  strb " B ", [r1, #1]\n"                                                                       \
  "  strb " C ", [r1, #2]\n"                                                                       \
  "  strb " D ", [r1, #3]\n"
#define REF_QG_PAIRS_U8_FIRST REF_QG_PAIRS_U8_ROW("r4", "r5", "r6", "r7")
#define REF_QG_PAIRS_U8_SECOND REF_QG_PAIRS_U8_ROW("r8", "r9", "r10", "r11")
/* Frame: [sp] the pair's end, [sp, 4] pairs left, [sp, 8] 4 groups, [sp, 12] the pair's first
 * row, [sp, 16] k, [sp, 20..40] q's bias, mult, shift, y, y_row, zp2p1 (advanced per pair);
 * c at [sp, 80], q at [sp, 84]. */
__asm__(".syntax unified\n"
        ".pushsection .text.ref_qg_lean_pairs_u8_t2,\"ax\",%progbits\n"
        ".balign 4\n"
        ".global ref_qg_lean_pairs_u8_t2\n"
        ".hidden ref_qg_lean_pairs_u8_t2\n"
        ".type ref_qg_lean_pairs_u8_t2, %function\n"
        ".thumb\n"
        ".thumb_func\n"
        "ref_qg_lean_pairs_u8_t2:\n"
        "  push {r4-r11, lr}\n"
        "  sub sp, sp, #44\n"
        "  cmp r2, #0\n"
        "  ble 4f\n"
        "  str r2, [sp, #4]\n"
        "  lsls r3, r3, #2\n"
        "  str r3, [sp, #8]\n"
        "  str r1, [sp, #16]\n"
        "  ldr r12, [sp, #84]\n"
        "  ldmia r12, {r3-r8}\n"
        "  add lr, sp, #20\n"
        "  stmia lr, {r3-r8}\n"
        "1:\n" REF_QG_PAIRS_START "  ldr r2, [sp, #80]\n"
        "  ldr r3, [sp, #20]\n" /* the biases: the sums' start */
        "  ldr r4, [r3], #4\n"
        "  ldr r8, [r3], #4\n"
        "  str r3, [sp, #20]\n"
        "  mov r5, r4\n"
        "  mov r6, r4\n"
        "  mov r7, r4\n"
        "  mov r9, r8\n"
        "  mov r10, r8\n"
        "  mov r11, r8\n" REF_QG_PAIRS_GROUPS "  ldr r0, [sp, #24]\n"
        "  ldr r2, [sp, #28]\n"
        "  ldr r12, [r0], #4\n" /* the first row's multiplier, shift, e, rz */
        "  ldr r3, [r2], #4\n"
        "  ldr lr, [sp, #40]\n"
        "  sub r3, r3, #32\n"
        "  sub r1, r3, #1\n"
        "  lsl lr, lr, r1\n"
        "  ldr r1, [sp, #32]\n" REF_QG_PAIRS_U8_FIRST "  ldr r12, [r0], #4\n" /* the second row's */
        "  ldr r3, [r2], #4\n"
        "  str r0, [sp, #24]\n"
        "  str r2, [sp, #28]\n"
        "  ldr lr, [sp, #40]\n"
        "  sub r3, r3, #32\n"
        "  sub r0, r3, #1\n"
        "  lsl lr, lr, r0\n"
        "  ldr r0, [sp, #36]\n"
        "  add r1, r1, r0\n" REF_QG_PAIRS_U8_SECOND "  add r1, r1, r0\n"
        "  str r1, [sp, #32]\n"
        "  ldr r1, [sp, #16]\n" REF_QG_PAIRS_NEXT "4:\n"
        "  add sp, sp, #44\n"
        "  pop {r4-r11, pc}\n"
        ".size ref_qg_lean_pairs_u8_t2, .-ref_qg_lean_pairs_u8_t2\n"
        ".popsection\n");
#undef REF_QG_PAIRS_U8_ROW
#undef REF_QG_PAIRS_U8_FIRST
#undef REF_QG_PAIRS_U8_SECOND

/* A kernel row over the 8 pixels of a wide block (ref_qg_lean_dots_wide): the sums r4-r11 start
 * at the row's bias; a group of 4 depths is one load of the row's 4 bytes, SXTB16 and SXTB16
 * by 8 (depths 0, 2 and 1, 3), then each pixel's two words by one LDRD and two SMLADs: 27
 * instructions for 32 multiply-adds. Requantized as the row ends (SMMLA, ASR, USAT; the 8
 * bytes stored). Arguments: w, k, rows, groups; c and q (ref_qg_lean_u8) on the stack. */
void ref_qg_lean_rows8_u8_t2(const int8_t *w, int k, int rows, int groups, const int32_t *c,
                             const ref_qg_lean_u8 *q);
/* Pixel H's words (at r2 + 8 H - 64, r2 past the group) into sum S. */
#define REF_QG_ROWS8_PIXEL(H, S)                                                                   \
  "  ldrd r1, lr, [r2, #" #H "]\n"                                                                 \
  "  smlad " S ", r12, r1, " S "\n"                                                                \
  "  smlad " S ", r3, lr, " S "\n"
#define REF_QG_ROWS8_GROUP                                                                         \
  "  ldr r3, [r0], #4\n"                                                                           \
  "  ldrd r1, lr, [r2], #64\n"                                                                     \
  "  sxtb16 r12, r3\n"                                                                             \
  "  sxtb16 r3, r3, ror #8\n"                                                                      \
  "  smlad r4, r12, r1, r4\n"                                                                      \
  "  smlad r4, r3, lr, r4\n" REF_QG_ROWS8_PIXEL(-56, "r5") REF_QG_ROWS8_PIXEL(-48, "r6")           \
      REF_QG_ROWS8_PIXEL(-40, "r7") REF_QG_ROWS8_PIXEL(-32, "r8") REF_QG_ROWS8_PIXEL(-24, "r9")    \
          REF_QG_ROWS8_PIXEL(-16, "r10") REF_QG_ROWS8_PIXEL(-8, "r11")
/* The row's first group, its sums started at the bias in r11 (no copies of it). */
#define REF_QG_ROWS8_FIRST_PIXEL(H, S)                                                             \
  "  ldrd r1, lr, [r2, #" #H "]\n"                                                                 \
  "  smlad " S ", r12, r1, r11\n"                                                                  \
  "  smlad " S ", r3, lr, " S "\n"
#define REF_QG_ROWS8_FIRST                                                                         \
  "  ldr r3, [r0], #4\n"                                                                           \
  "  ldrd r1, lr, [r2], #64\n"                                                                     \
  "  sxtb16 r12, r3\n"                                                                             \
  "  sxtb16 r3, r3, ror #8\n"                                                                      \
  "  smlad r4, r12, r1, r11\n"                                                                     \
  "  smlad r4, r3, lr, r4\n" REF_QG_ROWS8_FIRST_PIXEL(-56, "r5")                                   \
      REF_QG_ROWS8_FIRST_PIXEL(-48, "r6") REF_QG_ROWS8_FIRST_PIXEL(-40, "r7")                      \
          REF_QG_ROWS8_FIRST_PIXEL(-32, "r8") REF_QG_ROWS8_FIRST_PIXEL(-24, "r9")                  \
              REF_QG_ROWS8_FIRST_PIXEL(-16, "r10") REF_QG_ROWS8_FIRST_PIXEL(-8, "r11")
/* Sum S requantized (mult in r12, rz in lr, e in r3) and stored at byte I of r1. */
#define REF_QG_ROWS8_Q8(S, I)                                                                      \
  "  smmla " S ", " S ", r12, lr\n"                                                                \
  "  asr " S ", " S ", r3\n"                                                                       \
  "  usat " S ", #8, " S "\n"                                                                      \
  "  strb " S ", [r1, #" #I "]\n"
/* Frame: [sp] the row's end, [sp, 4] where the row's groups after its first start (four a loop:
 * at 2:, 5:, 6: or 8: as their number modulo 4 is 0, 3, 2 or 1; 3: where there are none; the
 * Thumb bit set), [sp, 8] 4 groups, [sp, 12] k - 4
 * groups (from a row's end to the next row), [sp, 16] the biases' end, [sp, 20..40] q's bias, mult,
 * shift, y, y_row, zp2p1 (advanced per row); c at [sp, 80], q at [sp, 84]. */
__asm__(".syntax unified\n"
        ".pushsection .text.ref_qg_lean_rows8_u8_t2,\"ax\",%progbits\n"
        ".balign 4\n"
        ".global ref_qg_lean_rows8_u8_t2\n"
        ".hidden ref_qg_lean_rows8_u8_t2\n"
        ".type ref_qg_lean_rows8_u8_t2, %function\n"
        ".thumb\n"
        ".thumb_func\n"
        "ref_qg_lean_rows8_u8_t2:\n"
        "  push {r4-r11, lr}\n"
        "  sub sp, sp, #44\n"
        "  cmp r2, #0\n"
        "  ble 4f\n"
        "  subs r12, r3, #1\n" /* the groups after the first, r: none, or r % 4 */
        "  adr.w lr, 3f\n"
        "  beq 7f\n"
        "  ands r12, r12, #3\n"
        "  adr.w lr, 2f\n"
        "  beq 7f\n"
        "  adr.w lr, 8f\n"
        "  cmp r12, #1\n"
        "  beq 7f\n"
        "  adr.w lr, 6f\n"
        "  cmp r12, #2\n"
        "  beq 7f\n"
        "  adr.w lr, 5f\n"
        "7:\n"
        "  orr lr, lr, #1\n"
        "  str lr, [sp, #4]\n"
        "  lsls r3, r3, #2\n"
        "  str r3, [sp, #8]\n"
        "  sub r1, r1, r3\n"
        "  str r1, [sp, #12]\n"
        "  ldr r12, [sp, #84]\n"
        "  ldmia r12, {r3-r8}\n"
        "  add lr, sp, #20\n"
        "  stmia lr, {r3-r8}\n"
        "  add r3, r3, r2, lsl #2\n"
        "  str r3, [sp, #16]\n"
        "1:\n"
        "  ldr r3, [sp, #8]\n"
        "  add r3, r3, r0\n"
        "  str r3, [sp, #0]\n"
        "  ldr r2, [sp, #80]\n"
        "  ldr r3, [sp, #20]\n" /* the bias: the sums' start */
        "  ldr r11, [r3], #4\n"
        "  str r3, [sp, #20]\n" REF_QG_ROWS8_FIRST "  ldr pc, [sp, #4]\n"
        "2:\n" REF_QG_ROWS8_GROUP "5:\n" REF_QG_ROWS8_GROUP "6:\n" REF_QG_ROWS8_GROUP
        "8:\n" REF_QG_ROWS8_GROUP "  ldr lr, [sp, #0]\n"
        "  cmp r0, lr\n"
        "  bne 2b\n"
        "3:\n"
        "  ldr r1, [sp, #24]\n" /* the row's multiplier, shift, e, rz */
        "  ldr r12, [r1], #4\n"
        "  str r1, [sp, #24]\n"
        "  ldr r1, [sp, #28]\n"
        "  ldr r3, [r1], #4\n"
        "  str r1, [sp, #28]\n"
        "  sub r3, r3, #32\n"
        "  sub r1, r3, #1\n"
        "  ldr lr, [sp, #40]\n"
        "  lsl lr, lr, r1\n"
        "  ldr r1, [sp, #32]\n" REF_QG_ROWS8_Q8("r4", 0) REF_QG_ROWS8_Q8("r5", 1)
            REF_QG_ROWS8_Q8("r6", 2) REF_QG_ROWS8_Q8("r7", 3) REF_QG_ROWS8_Q8("r8", 4)
                REF_QG_ROWS8_Q8("r9", 5) REF_QG_ROWS8_Q8("r10", 6)
                    REF_QG_ROWS8_Q8("r11",
                                    7) "  ldr r2, [sp, #36]\n"
                                       "  add r1, r1, r2\n"
                                       "  str r1, [sp, #32]\n"
                                       "  ldr r1, [sp, #12]\n" /* the next row */
                                       "  add r0, r0, r1\n"
                                       "  ldr r2, [sp, #20]\n"
                                       "  ldr r1, [sp, #16]\n"
                                       "  cmp r2, r1\n"
                                       "  bne 1b\n"
                                       "4:\n"
                                       "  add sp, sp, #44\n"
                                       "  pop {r4-r11, pc}\n"
                                       ".size ref_qg_lean_rows8_u8_t2, .-ref_qg_lean_rows8_u8_t2\n"
                                       ".popsection\n");
#undef REF_QG_ROWS8_PIXEL
#undef REF_QG_ROWS8_GROUP
#undef REF_QG_ROWS8_FIRST_PIXEL
#undef REF_QG_ROWS8_FIRST

/* A 3 x 3 depthwise channel over uint8 input straight from a byte plane padded with the input's
 * zero point (ref_qg_depthwise3_u8): each window row's 4 bytes from one (unaligned) load,
 * UXTB16 and UXTB16 by 8 its pairs (x0, x2) and (x1, x3), two outputs a step. Stride 1: the
 * first output's t0 x0 + t2 x2 by SMLAD of (t0, t2) and t1 x1 by a halfword multiply-add, the
 * second's t0 x1 + t2 x3 and t1 x2 alike from the same load (7 instructions a window row);
 * stride 2: the second output's from a load 2 bytes on (10). The sums start at the bias less
 * xz times the taps' sum (the plane holds x, not x - xz), are requantized as ref_qg_lean_q8
 * does for uint8 [0, 255] (SMMLA, ASR, USAT) and stored; an odd row's last output takes a
 * step of its own that stores one byte (its loads reach past the row: the plane's slack). */
typedef struct {
  int32_t bias, mult, rz, e;   /* the frame's first words, in this order */
  const unsigned char *x;      /* output (0, 0)'s window corner in the plane */
  int32_t d1, d2, step;        /* window rows 1 and 2 from row 0; from an output row to the next */
  int32_t rows, n;             /* output rows, outputs a row (n >= 1) */
  int32_t a0, a1, a2, b01, b2; /* (t0, t2) of window rows 0, 1, 2; (t1 row 0, t1 row 1); t1 row 2 */
  unsigned char *y;
} ref_qg_dw3_u8;
void ref_qg_dw3_u8_s1_t2(const ref_qg_dw3_u8 *q);
void ref_qg_dw3_u8_s2_t2(const ref_qg_dw3_u8 *q);
/* Window row W's load at pointer P (post-incremented by S, the stride times 2) into the sums:
 * taps pair A, t1 in the bottom (B = "b") or top ("t") half of register T. */
#define REF_QG_DW3U_ROW1(P, A, T, B)                                                               \
  "  ldr r11, [" P "], #2\n"                                                                       \
  "  uxtb16 r12, r11, ror #8\n"                                                                    \
  "  uxtb16 r11, r11\n"                                                                            \
  "  smlad r9, " A ", r11, r9\n"                                                                   \
  "  smla" B "b r9, " T ", r12, r9\n"                                                              \
  "  smlad r10, " A ", r12, r10\n"                                                                 \
  "  smla" B "t r10, " T ", r11, r10\n"
#define REF_QG_DW3U_ROW2(P, A, T, B)                                                               \
  "  ldr r11, [" P "], #2\n"                                                                       \
  "  uxtb16 r12, r11, ror #8\n"                                                                    \
  "  uxtb16 r11, r11\n"                                                                            \
  "  smlad r9, " A ", r11, r9\n"                                                                   \
  "  smla" B "b r9, " T ", r12, r9\n"                                                              \
  "  ldr r11, [" P "], #2\n"                                                                       \
  "  uxtb16 r12, r11, ror #8\n"                                                                    \
  "  uxtb16 r11, r11\n"                                                                            \
  "  smlad r10, " A ", r11, r10\n"                                                                 \
  "  smla" B "b r10, " T ", r12, r10\n"
/* The two sums requantized; STORE stores them. */
#define REF_QG_DW3U_Q8(STORE)                                                                      \
  "  ldrd r11, r12, [sp, #4]\n"                                                                    \
  "  smmla r9, r9, r11, r12\n"                                                                     \
  "  smmla r10, r10, r11, r12\n"                                                                   \
  "  ldr r11, [sp, #12]\n"                                                                         \
  "  asr r9, r9, r11\n"                                                                            \
  "  asr r10, r10, r11\n"                                                                          \
  "  usat r9, #8, r9\n"                                                                            \
  "  usat r10, #8, r10\n" STORE
#define REF_QG_DW3U_TWO                                                                            \
  "  strb r10, [r3, #1]\n"                                                                         \
  "  strb r9, [r3], #2\n"
#define REF_QG_DW3U_ONE "  strb r9, [r3], #1\n"
/* Two outputs: the sums from the bias, the window rows (r0, r1, r2: rows 0, 1, 2). */
#define REF_QG_DW3U_STEP(ROW)                                                                      \
  "  ldr r9, [sp, #0]\n"                                                                           \
  "  mov r10, r9\n" ROW("r0", "r4", "r7", "b") ROW("r1", "r5", "r7", "t")                          \
      ROW("r2", "r6", "r8", "b")
/* Frame: [sp] bias, [sp, 4] mult, [sp, 8] rz, [sp, 12] e, [sp, 16] the row's window corner,
 * [sp, 20] d1, [sp, 24] d2, [sp, 28] step, [sp, 32] rows left, [sp, 36] n (q's first ten
 * words); r4-r8 the taps, r3 y, lr the row's last pair's end. */
#define REF_QG_DW3U_FN(NAME, ROW)                                                                  \
  __asm__(".syntax unified\n"                                                                      \
          ".pushsection .text." #NAME ",\"ax\",%progbits\n"                                        \
          ".balign 4\n"                                                                            \
          ".global " #NAME "\n"                                                                    \
          ".hidden " #NAME "\n"                                                                    \
          ".type " #NAME ", %function\n"                                                           \
          ".thumb\n"                                                                               \
          ".thumb_func\n" #NAME ":\n"                                                              \
          "  push {r4-r11, lr}\n"                                                                  \
          "  sub sp, sp, #40\n"                                                                    \
          "  ldmia r0!, {r1-r10}\n"                                                                \
          "  stmia sp, {r1-r10}\n"                                                                 \
          "  ldr r3, [r0, #20]\n"                                                                  \
          "  ldmia r0, {r4-r8}\n"                                                                  \
          "1:\n"                                                                                   \
          "  ldr r0, [sp, #16]\n"                                                                  \
          "  ldrd r1, r2, [sp, #20]\n"                                                             \
          "  add r1, r1, r0\n"                                                                     \
          "  add r2, r2, r0\n"                                                                     \
          "  ldr r12, [sp, #36]\n"                                                                 \
          "  bic lr, r12, #1\n"                                                                    \
          "  adds lr, lr, r3\n"                                                                    \
          "  cmp r3, lr\n"                                                                         \
          "  beq 3f\n"                                                                             \
          "2:\n" REF_QG_DW3U_STEP(ROW)                                                             \
              REF_QG_DW3U_Q8(REF_QG_DW3U_TWO) "  cmp r3, lr\n"                                     \
                                              "  bne 2b\n"                                         \
                                              "3:\n"                                               \
                                              "  ldr r12, [sp, #36]\n"                             \
                                              "  tst r12, #1\n"                                    \
                                              "  beq 4f\n" REF_QG_DW3U_STEP(ROW) REF_QG_DW3U_Q8(   \
                                                  REF_QG_DW3U_ONE) "4:\n"                          \
                                                                   "  ldr r0, [sp, #16]\n"         \
                                                                   "  ldr r12, [sp, #28]\n"        \
                                                                   "  add r0, r0, r12\n"           \
                                                                   "  str r0, [sp, #16]\n"         \
                                                                   "  ldr r12, [sp, #32]\n"        \
                                                                   "  subs r12, r12, #1\n"         \
                                                                   "  str r12, [sp, #32]\n"        \
                                                                   "  bgt 1b\n"                    \
                                                                   "  add sp, sp, #40\n"           \
                                                                   "  pop {r4-r11, pc}\n"          \
                                                                   ".size " #NAME ", .-" #NAME     \
                                                                   "\n"                            \
                                                                   ".popsection\n")
REF_QG_DW3U_FN(ref_qg_dw3_u8_s1_t2, REF_QG_DW3U_ROW1);
REF_QG_DW3U_FN(ref_qg_dw3_u8_s2_t2, REF_QG_DW3U_ROW2);
#undef REF_QG_DW3U_ROW1
#undef REF_QG_DW3U_ROW2
#undef REF_QG_DW3U_Q8
#undef REF_QG_DW3U_TWO
#undef REF_QG_DW3U_ONE
#undef REF_QG_DW3U_STEP
#undef REF_QG_DW3U_FN
#undef REF_QG_ROWS8_Q8
#define REF_QG_LEAN_PAIRS_U8 1
#undef REF_QG_PAIRS_GROUP
#undef REF_QG_PAIRS_START
#undef REF_QG_PAIRS_GROUPS
#undef REF_QG_PAIRS_NEXT
static inline void ref_qg_lean_sums_rows2(const int8_t *w, int k, int pairs, int groups,
                                          const int32_t *c, int32_t *s) {
  ref_qg_lean_pairs_t2(w, k, pairs, groups, c, s);
}
#else
static inline void ref_qg_lean_sums_rows2(const int8_t *w, int k, int pairs, int groups,
                                          const int32_t *c, int32_t *s) {
  for (; pairs > 0; --pairs, w += 2 * k, s += 2 * REF_QG_LEAN_PIXELS) {
    const int8_t *wr = w, *end = w + 4 * groups;
    const int32_t *cg = c;
    int32_t p0 = 0, p1 = 0, p2 = 0, p3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
    for (; wr != end; wr += 4, cg += 8) {
      const int32_t a = ref_qg_word8(wr), b = ref_qg_word8(wr + k);
      int32_t ua = __sxtb16(a), ub = __sxtb16(b), v;
      v = cg[0], p0 = __smlad(ua, v, p0), q0 = __smlad(ub, v, q0);
      v = cg[2], p1 = __smlad(ua, v, p1), q1 = __smlad(ub, v, q1);
      v = cg[4], p2 = __smlad(ua, v, p2), q2 = __smlad(ub, v, q2);
      v = cg[6], p3 = __smlad(ua, v, p3), q3 = __smlad(ub, v, q3);
      ua = ref_qg_sxtb16_ror8(a), ub = ref_qg_sxtb16_ror8(b);
      v = cg[1], p0 = __smlad(ua, v, p0), q0 = __smlad(ub, v, q0);
      v = cg[3], p1 = __smlad(ua, v, p1), q1 = __smlad(ub, v, q1);
      v = cg[5], p2 = __smlad(ua, v, p2), q2 = __smlad(ub, v, q2);
      v = cg[7], p3 = __smlad(ua, v, p3), q3 = __smlad(ub, v, q3);
    }
    s[0] = p0, s[1] = p1, s[2] = p2, s[3] = p3;
    s[4] = q0, s[5] = q1, s[6] = q2, s[7] = q3;
  }
}
#endif

/* A lean column (n = 1: a product of one row, a 1 x 1 output), four rows a step: a group of 4
 * depths is a load and two SXTB16 a row against the column's two words, loaded once for the
 * four rows. */
#if defined(__thumb2__) && defined(__GNUC__)
/* In Thumb-2 assembly (GCC reloads k and the loop's end from the stack): rows 0, 1 and 2, 3
 * from two pointers k bytes apart, the column's words by one LDRD; two groups a loop (an odd
 * one first): 44 instructions for 32 multiply-adds. Arguments: w, k, quads, groups; c and s on
 * the stack. */
void ref_qg_lean_one4_t2(const int8_t *w, int k, int quads, int groups, const int32_t *c,
                         int32_t *s);
/* One group of 4 depths of the four rows: r0, r2 the rows 0 and 2 (r1 = k), r3 the column. */
#define REF_QG_ONE4_GROUP                                                                          \
  "  ldrd r8, r9, [r3], #8\n" /* the column's words: depths (0, 2), (1, 3) */                      \
  "  ldr r10, [r0, r1]\n"                                                                          \
  "  ldr r11, [r0], #4\n"                                                                          \
  "  sxtb16 lr, r11\n"                                                                             \
  "  smlad r4, lr, r8, r4\n"                                                                       \
  "  sxtb16 lr, r11, ror #8\n"                                                                     \
  "  smlad r4, lr, r9, r4\n"                                                                       \
  "  sxtb16 lr, r10\n"                                                                             \
  "  smlad r5, lr, r8, r5\n"                                                                       \
  "  sxtb16 lr, r10, ror #8\n"                                                                     \
  "  smlad r5, lr, r9, r5\n"                                                                       \
  "  ldr r10, [r2, r1]\n"                                                                          \
  "  ldr r11, [r2], #4\n"                                                                          \
  "  sxtb16 lr, r11\n"                                                                             \
  "  smlad r6, lr, r8, r6\n"                                                                       \
  "  sxtb16 lr, r11, ror #8\n"                                                                     \
  "  smlad r6, lr, r9, r6\n"                                                                       \
  "  sxtb16 lr, r10\n"                                                                             \
  "  smlad r7, lr, r8, r7\n"                                                                       \
  "  sxtb16 lr, r10, ror #8\n"                                                                     \
  "  smlad r7, lr, r9, r7\n"
__asm__(".syntax unified\n"
        ".pushsection .text.ref_qg_lean_one4_t2,\"ax\",%progbits\n"
        ".balign 4\n"
        ".global ref_qg_lean_one4_t2\n"
        ".hidden ref_qg_lean_one4_t2\n"
        ".type ref_qg_lean_one4_t2, %function\n"
        ".thumb\n"
        ".thumb_func\n"
        "ref_qg_lean_one4_t2:\n"
        "  push {r4-r11, lr}\n"
        "  sub sp, sp, #16\n" /* [sp]: quads left, [sp, 4]: the quad's first row */
        "  cmp r2, #0\n"      /* [sp, 8]: 4 groups, [sp, 12]: s; c at [sp, 52], s at [sp, 56] */
        "  ble 4f\n"
        "  str r2, [sp, #0]\n"
        "  lsls r3, r3, #2\n"
        "  str r3, [sp, #8]\n"
        "  ldr r2, [sp, #56]\n"
        "  str r2, [sp, #12]\n"
        "1:\n"
        "  str r0, [sp, #4]\n"
        "  ldr r3, [sp, #8]\n"
        "  add r12, r0, r3\n"
        "  add r2, r0, r1, lsl #1\n"
        "  movs r4, #0\n"
        "  movs r5, #0\n"
        "  movs r6, #0\n"
        "  movs r7, #0\n"
        "  tst r3, #4\n" /* an odd number of groups: one first */
        "  ldr r3, [sp, #52]\n"
        "  beq 5f\n" REF_QG_ONE4_GROUP "5:\n"
        "  cmp r0, r12\n"
        "  beq 3f\n"
        "2:\n" REF_QG_ONE4_GROUP REF_QG_ONE4_GROUP "  cmp r0, r12\n"
        "  bne 2b\n"
        "3:\n"
        "  ldr lr, [sp, #12]\n" /* rows 4 sums apart (REF_QG_LEAN_PIXELS) */
        "  str r4, [lr]\n"
        "  str r5, [lr, #16]\n"
        "  str r6, [lr, #32]\n"
        "  str r7, [lr, #48]\n"
        "  add lr, lr, #64\n"
        "  str lr, [sp, #12]\n"
        "  ldr r0, [sp, #4]\n"
        "  add r0, r0, r1, lsl #2\n"
        "  ldr r2, [sp, #0]\n"
        "  subs r2, r2, #1\n"
        "  str r2, [sp, #0]\n"
        "  bne 1b\n"
        "4:\n"
        "  add sp, sp, #16\n"
        "  pop {r4-r11, pc}\n"
        ".size ref_qg_lean_one4_t2, .-ref_qg_lean_one4_t2\n"
        ".popsection\n");
#undef REF_QG_ONE4_GROUP
static inline void ref_qg_lean_sums_one4(const int8_t *w, int k, int quads, int groups,
                                         const int32_t *c, int32_t *s) {
  ref_qg_lean_one4_t2(w, k, quads, groups, c, s);
}
#else
/* Rows 0, 1 and 2, 3 from two pointers k bytes apart. */
static inline void ref_qg_lean_sums_one4(const int8_t *w, int k, int quads, int groups,
                                         const int32_t *c, int32_t *s) {
  for (; quads > 0; --quads, w += 4 * k, s += 4 * REF_QG_LEAN_PIXELS) {
    const int8_t *w0 = w, *w2 = w + 2 * k, *end = w + 4 * groups;
    const int32_t *cg = c;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; w0 != end; w0 += 4, w2 += 4, cg += 2) {
      const int32_t xe = cg[0], xo = cg[1];
      int32_t a = ref_qg_word8(w0);
      s0 = __smlad(ref_qg_sxtb16_ror8(a), xo, __smlad(__sxtb16(a), xe, s0));
      a = ref_qg_word8(w0 + k);
      s1 = __smlad(ref_qg_sxtb16_ror8(a), xo, __smlad(__sxtb16(a), xe, s1));
      a = ref_qg_word8(w2);
      s2 = __smlad(ref_qg_sxtb16_ror8(a), xo, __smlad(__sxtb16(a), xe, s2));
      a = ref_qg_word8(w2 + k);
      s3 = __smlad(ref_qg_sxtb16_ror8(a), xo, __smlad(__sxtb16(a), xe, s3));
    }
    s[0] = s0;
    s[REF_QG_LEAN_PIXELS] = s1;
    s[2 * REF_QG_LEAN_PIXELS] = s2;
    s[3 * REF_QG_LEAN_PIXELS] = s3;
  }
}

#endif

/* The same a row at a time. */
static inline void ref_qg_lean_sums_one(const int8_t *w, int k, int rows, int groups,
                                        const int32_t *c, int32_t *s) {
  for (; rows > 0; --rows, w += k, s += REF_QG_LEAN_PIXELS) {
    const int8_t *wr = w, *end = w + 4 * groups;
    const int32_t *cg = c;
    int32_t s0 = 0;
    for (; wr != end; wr += 4, cg += 2) {
      const int32_t a = ref_qg_word8(wr);
      s0 = __smlad(ref_qg_sxtb16_ror8(a), cg[1], __smlad(__sxtb16(a), cg[0], s0));
    }
    s[0] = s0;
  }
}

REF_NOINLINE static void ref_qg_lean_sums_dsp1(int k, const int8_t *w, int m, int over,
                                               const int32_t *c, int32_t *s) {
  const int full = over < 0 ? 0 : over < m ? over : m;
  int r;
  ref_qg_lean_sums_one4(w, k, full / 4, (k + 3) / 4, c, s);
  ref_qg_lean_sums_one(w + full / 4 * 4 * k, k, full % 4, (k + 3) / 4, c,
                       s + full / 4 * 4 * REF_QG_LEAN_PIXELS);
  ref_qg_lean_sums_one(w + full * k, k, m - full, k / 4, c, s + full * REF_QG_LEAN_PIXELS);
  for (r = full; r < m && k % 4; ++r)
    ref_qg_lean_tail(k % 4, w + r * k + k / 4 * 4, c + k / 4 * 2, 1, s + r * REF_QG_LEAN_PIXELS);
}

REF_NOINLINE static void ref_qg_lean_sums_dsp(int k, const int8_t *w, int m, int over,
                                              const int32_t *c, int n, int32_t *s) {
  const int full = over < 0 ? 0 : over < m ? over : m;
  int r;
  if (n == 1) {
    ref_qg_lean_sums_dsp1(k, w, m, over, c, s);
    return;
  }
  ref_qg_lean_sums_rows2(w, k, full / 2, (k + 3) / 4, c, s);
  ref_qg_lean_sums_rows(w + full / 2 * 2 * k, k, full % 2, (k + 3) / 4, c,
                        s + full / 2 * 2 * REF_QG_LEAN_PIXELS);
  ref_qg_lean_sums_rows(w + full * k, k, m - full, k / 4, c, s + full * REF_QG_LEAN_PIXELS);
  for (r = full; r < m && k % 4; ++r)
    ref_qg_lean_tail(k % 4, w + r * k + k / 4 * 4, c + k / 4 * 2 * REF_QG_LEAN_PIXELS,
                     REF_QG_LEAN_PIXELS, s + r * REF_QG_LEAN_PIXELS);
}

#if defined(REF_QG_LEAN_PAIRS_U8)
/* The epilogue of o's rows from c0, their outputs at y (y_row bytes apart), for the assembly. */
static inline ref_qg_lean_u8 ref_qg_lean_u8_at(const ref_qg_lean_out *o, int64_t c0,
                                               unsigned char *y, int64_t y_row) {
  ref_qg_lean_u8 q;
  q.bias = o->bias + c0;
  q.mult = o->mult + c0;
  q.shift = o->shift + c0;
  q.y = y;
  q.y_row = (int32_t)y_row;
  q.zp2p1 = 2 * o->zp + 1;
  return q;
}

/* ref_qg_lean_dots by ref_qg_lean_pairs_u8_t2, where ref_qg_lean_dots_u8_ok. */
REF_NOINLINE static void ref_qg_lean_dots_u8(int64_t k, const int8_t *w, int64_t m,
                                             const int32_t *c, const ref_qg_lean_out *o, int64_t c0,
                                             unsigned char *y, int64_t y_row) {
  const ref_qg_lean_u8 q = ref_qg_lean_u8_at(o, c0, y, y_row);
  ref_qg_lean_pairs_u8_t2(w, (int)k, (int)m / 2, (int)(k + 3) / 4, c, &q);
}

/* Whole pairs of rows to uint8 [0, 255] outputs, requantized as each pair ends: only where
 * every row reads whole groups (a kernel row's last one past its end only into the next's)
 * and they pair up. A last row of its own, or one whose last group would read past the
 * kernel, takes ref_qg_lean_dots_with with the rows before it (two calls cost more). */
static int ref_qg_lean_dots_u8_ok(int64_t m, int64_t over, const ref_qg_lean_out *o, int n) {
  return n == REF_QG_LEAN_PIXELS && over >= m && m % 2 == 0 && o->fast && o->bias && o->lo == 0 &&
         o->hi == 255 && o->mult_step == 1 && o->shift_step == 1;
}

#if defined(REF_QG_LEAN_WIDE)
int ref_qg_lean_wide_ok(int64_t m, int64_t over, const ref_qg_lean_out *o) {
  return over >= m && !o->raw && o->fast && o->bias && o->lo == 0 && o->hi == 255 &&
         o->mult_step == 1 && o->shift_step == 1;
}

void ref_qg_lean_dots_wide(int64_t k, const int8_t *w, int64_t m, const int32_t *c,
                           const ref_qg_lean_out *o, int64_t c0, unsigned char *y, int64_t y_row) {
  const ref_qg_lean_u8 q = ref_qg_lean_u8_at(o, c0, y, y_row);
  ref_qg_lean_rows8_u8_t2(w, (int)k, (int)m, (int)(k + 3) / 4, c, &q);
}

/* Where every row starts on a word (dst, src, pitch and width multiples of 4), 16 bytes a step
 * by LDM / STM (memcpy of aligned words, which GCC and Clang inline), then 8 and 4; else a word
 * a step, then a halfword and a byte, the loads and stores unaligned. */
void ref_qg_copy_rows(unsigned char *dst, int pitch, const unsigned char *src, int rows,
                      int width) {
  int r;
  if ((((uintptr_t)dst | (uintptr_t)src | (uint32_t)pitch | (uint32_t)width) & 3u) == 0) {
    for (r = 0; r < rows; ++r, dst += pitch, src += width) {
      const unsigned char *s = (const unsigned char *)__builtin_assume_aligned(src, 4);
      const unsigned char *end = s + (width - width % 16);
      unsigned char *d = (unsigned char *)__builtin_assume_aligned(dst, 4);
      for (; s != end; s += 16, d += 16)
        memcpy(d, s, 16);
      if (width & 8) {
        memcpy(d, s, 8);
        s += 8, d += 8;
      }
      if (width & 4)
        memcpy(d, s, 4);
    }
    return;
  }
  for (r = 0; r < rows; ++r, dst += pitch, src += width) {
    const unsigned char *s = src, *end = src + (width - width % 4);
    unsigned char *d = dst;
    uint32_t w;
    uint16_t h;
    for (; s != end; s += 4, d += 4) {
      memcpy(&w, s, sizeof w);
      memcpy(d, &w, sizeof w);
    }
    if (width & 2) {
      memcpy(&h, s, sizeof h);
      memcpy(d, &h, sizeof h);
      s += 2, d += 2;
    }
    if (width & 1)
      *d = *s;
  }
}

int ref_qg_depthwise3_u8_ok(const ref_qg_lean_out *o) { return ref_qg_lean_wide_ok(1, 1, o); }

/* Each channel's taps t0 .. t8 from two words and a byte: SXTB16 and SXTB16 by 8 give (t0, t2),
 * (t1, t3), (t4, t6), (t5, t7), which PKHBT pairs as the kernel takes them, and SMLADs by
 * (1, 1) sum. */
void ref_qg_depthwise3_u8(const ref_qg_dw3_channels *d, int64_t c0, int64_t c1) {
  const ref_qg_lean_out *o = d->o;
  const int32_t ones = 0x00010001;
  ref_qg_dw3_u8 q;
  int64_t c;
  q.x = d->plane;
  q.d1 = d->pitch;
  q.d2 = 2 * d->pitch;
  q.step = d->step;
  q.rows = d->oh;
  q.n = d->ow;
  for (c = c0; c < c1; ++c) {
    const int8_t *t = d->taps + c * 9;
    const int32_t w0 = ref_qg_word8(t), w1 = ref_qg_word8(t + 4), t8 = t[8];
    const int32_t e0 = __sxtb16(w0), o0 = ref_qg_sxtb16_ror8(w0);
    const int32_t e1 = __sxtb16(w1), o1 = ref_qg_sxtb16_ror8(w1);
    const int32_t sum =
        __smlad(e0, ones, __smlad(o0, ones, __smlad(e1, ones, __smlad(o1, ones, t8))));
    ref_qg_copy_rows(d->plane + d->at, d->pitch, d->x + c * d->ipix, d->in1, d->in2);
    q.bias = (int32_t)((uint32_t)o->bias[c] - (uint32_t)d->xz * (uint32_t)sum);
    q.mult = o->mult[c];
    q.e = o->shift[c] - 32;
    q.rz = ref_qg_lean_rz(q.e, o->zp);
    q.a0 = e0;
    q.a1 = ref_qg_pkhbt(o0 >> 16, o1);
    q.a2 = ref_qg_pkhbt(e1 >> 16, t8);
    q.b01 = ref_qg_pkhbt(o0, e1);
    q.b2 = o1 >> 16;
    q.y = d->y + c * d->opix;
    if (d->stride == 1)
      ref_qg_dw3_u8_s1_t2(&q);
    else
      ref_qg_dw3_u8_s2_t2(&q);
  }
}
#endif
#endif

void ref_qg_lean_dots(int64_t k, const int8_t *w, int64_t m, int64_t over, const int32_t *c,
                      const ref_qg_lean_out *o, int64_t c0, int n, unsigned char *y,
                      int64_t y_row) {
#if defined(REF_QG_LEAN_PAIRS_U8)
  if (ref_qg_lean_dots_u8_ok(m, over, o, n)) {
    ref_qg_lean_dots_u8(k, w, m, c, o, c0, y, y_row);
    return;
  }
#endif
  ref_qg_lean_dots_with(ref_qg_lean_sums_dsp, k, w, m, over, c, o, c0, n, y, y_row);
}

/* Blocks of 4 columns over pairs of depths: the two kernel rows' 4 bytes one load each,
 * their low halves and their high halves packed into one word each (PKHBT, PKHTB: bytes
 * r0[0], r0[1], r1[0], r1[1]), whose SXTB16 and SXTB16 by 8 are two columns' (depth d,
 * depth d + 1) pairs, which SMLAD multiplies by the row's pair: 12 instructions for 8
 * multiply-adds. */
void ref_qg_lean_row(int64_t k, const int16_t *x, const int8_t *w, int64_t ldw, int64_t n,
                     int32_t *s) {
  const uint32_t pairs = (uint32_t)(k / 2);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t *wd = w + j;
    const int16_t *xd = x;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t p;
    for (p = pairs; p != 0; --p, xd += 2, wd += 2 * ldw) {
      const int32_t xp = ref_qg_word(xd);
      const int32_t r0 = ref_qg_word8(wd), r1 = ref_qg_word8(wd + ldw);
      const int32_t lo = ref_qg_pkhbt(r0, r1), hi = ref_qg_pkhtb(r1, r0);
      s0 = __smlad(xp, __sxtb16(lo), s0);
      s1 = __smlad(xp, ref_qg_sxtb16_ror8(lo), s1);
      s2 = __smlad(xp, __sxtb16(hi), s2);
      s3 = __smlad(xp, ref_qg_sxtb16_ror8(hi), s3);
    }
    if (k % 2) { /* the last depth */
      s0 += *xd * wd[0];
      s1 += *xd * wd[1];
      s2 += *xd * wd[2];
      s3 += *xd * wd[3];
    }
    s[j] = s0;
    s[j + 1] = s1;
    s[j + 2] = s2;
    s[j + 3] = s3;
  }
  if (j < n)
    ref_qg_lean_row_portable(k, x, w + j, ldw, n - j, s + j);
}
/* UXTB16 of x rotated by 8 bits: its bytes 1 and 3 as two uint16 halves. */
static inline int32_t ref_qg_uxtb16_ror8(int32_t x) {
  int32_t r;
  __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

/* Four values a step: bytes 0 and 2, 1 and 3 extended and less zp in pairs (SSUB16), put back
 * in order (PKHBT, PKHTB). */
void ref_qg_widen(const unsigned char *src, int64_t n, int is_signed, int32_t zp, int16_t *dst) {
  const int32_t zz = ref_qg_pkhbt(zp, zp);
  const unsigned char *end = src + (n - n % 4);
  for (; src != end && is_signed; src += 4, dst += 4) {
    const int32_t a = ref_qg_word8((const int8_t *)src);
    const int32_t e = __ssub16(__sxtb16(a), zz), o = __ssub16(ref_qg_sxtb16_ror8(a), zz);
    const int32_t lo = ref_qg_pkhbt(e, o), hi = ref_qg_pkhtb(o, e);
    memcpy(dst, &lo, sizeof lo);
    memcpy(dst + 2, &hi, sizeof hi);
  }
  for (; src != end; src += 4, dst += 4) {
    const int32_t a = ref_qg_word8((const int8_t *)src);
    const int32_t e = __ssub16((int32_t)__uxtb16(a), zz);
    const int32_t o = __ssub16(ref_qg_uxtb16_ror8(a), zz);
    const int32_t lo = ref_qg_pkhbt(e, o), hi = ref_qg_pkhtb(o, e);
    memcpy(dst, &lo, sizeof lo);
    memcpy(dst + 2, &hi, sizeof hi);
  }
  ref_qg_widen_portable(src, n % 4, is_signed, zp, dst);
}

/* UXTAB16 and SXTAB16 of x rotated by 8 bits: its bytes 1 and 3 zero- or sign-extended, added
 * to the halves of a. */
static inline int32_t ref_qg_uxtab16_ror8(int32_t a, int32_t x) {
  int32_t r;
  __asm__("uxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}
static inline int32_t ref_qg_sxtab16_ror8(int32_t a, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}

/* ref_qg_widen_rows' rows, uint8 or int8 (is_signed a constant where inlined): eight values a
 * step, each word's even and odd bytes extended and added to (-zp, -zp) by one UXTAB16 or
 * SXTAB16 each (every x - zp fits in int16) and put in order by PKHBT and PKHTB; then four,
 * two (PKHBT of the bytes) and one. */
static inline void ref_qg_widen_rows_of(const unsigned char *src, int rows, int width,
                                        int is_signed, int32_t zp, int16_t *dst, int dst_step) {
  const int32_t nz = ref_qg_pkhbt(-zp, -zp);
  int r;
#define REF_QG_WIDEN4(at, to)                                                                      \
  do {                                                                                             \
    const int32_t a_ = ref_qg_word8((const int8_t *)(at));                                         \
    const int32_t e_ = is_signed ? __sxtab16(nz, a_) : (int32_t)__uxtab16(nz, a_);                 \
    const int32_t o_ = is_signed ? ref_qg_sxtab16_ror8(nz, a_) : ref_qg_uxtab16_ror8(nz, a_);      \
    const int32_t lo_ = ref_qg_pkhbt(e_, o_), hi_ = ref_qg_pkhtb(o_, e_);                          \
    memcpy((to), &lo_, sizeof lo_);                                                                \
    memcpy((to) + 2, &hi_, sizeof hi_);                                                            \
  } while (0)
  for (r = 0; r < rows; ++r, dst += dst_step) {
    const unsigned char *end8 = src + (width & ~7);
    int16_t *d = dst;
    for (; src != end8; src += 8, d += 8) {
      REF_QG_WIDEN4(src, d);
      REF_QG_WIDEN4(src + 4, d + 4);
    }
    if (width & 4) {
      REF_QG_WIDEN4(src, d);
      src += 4;
      d += 4;
    }
    if (width & 2) {
      const int32_t a = is_signed ? (int32_t)(int8_t)src[0] : (int32_t)src[0];
      const int32_t b = is_signed ? (int32_t)(int8_t)src[1] : (int32_t)src[1];
      const int32_t two = __sadd16(ref_qg_pkhbt(a, b), nz);
      memcpy(d, &two, sizeof two);
      src += 2;
      d += 2;
    }
    if (width & 1)
      *d = (int16_t)((is_signed ? (int32_t)(int8_t)*src++ : (int32_t)*src++) - zp);
  }
#undef REF_QG_WIDEN4
}

void ref_qg_widen_rows(const unsigned char *src, int rows, int width, int is_signed, int32_t zp,
                       int16_t *dst, int dst_step) {
  if (is_signed)
    ref_qg_widen_rows_of(src, rows, width, 1, zp, dst, dst_step);
  else
    ref_qg_widen_rows_of(src, rows, width, 0, zp, dst, dst_step);
}

/* Four values a step: both words split into pairs, two SMLADs for the products and two for the
 * kernel's sum (times xz, taken away at the end). */
int32_t ref_qg_dot8(const unsigned char *x, const int8_t *w, int64_t n, int is_signed, int32_t xz) {
  const int8_t *end = w + (n - n % 4);
  const int32_t ones = 0x00010001;
  int32_t s = 0, sw = 0;
  for (; w != end && is_signed; w += 4, x += 4) {
    const int32_t a = ref_qg_word8((const int8_t *)x), b = ref_qg_word8(w);
    const int32_t be = __sxtb16(b), bo = ref_qg_sxtb16_ror8(b);
    s = __smlad(ref_qg_sxtb16_ror8(a), bo, __smlad(__sxtb16(a), be, s));
    sw = __smlad(bo, ones, __smlad(be, ones, sw));
  }
  for (; w != end; w += 4, x += 4) {
    const int32_t a = ref_qg_word8((const int8_t *)x), b = ref_qg_word8(w);
    const int32_t be = __sxtb16(b), bo = ref_qg_sxtb16_ror8(b);
    s = __smlad(ref_qg_uxtb16_ror8(a), bo, __smlad((int32_t)__uxtb16(a), be, s));
    sw = __smlad(bo, ones, __smlad(be, ones, sw));
  }
  return (int32_t)((uint32_t)s - (uint32_t)xz * (uint32_t)sw) + /* exact where the sum fits */
         ref_qg_dot8_portable(x, w, n % 4, is_signed, xz);
}

/* Two words of the staged column (depths d, d + 1 and d + 2, d + 3) a group: (d, d + 2) by
 * PKHBT, (d + 1, d + 3) by PKHTB. */
void ref_qg_lean_place(const int16_t *col, int64_t k, int pixels, int32_t *q) {
  const int16_t *end = col + (k + 3) / 4 * 4;
  for (; col != end; col += 4, q += 2 * pixels) {
    const int32_t a = ref_qg_word(col), b = ref_qg_word(col + 2);
    q[0] = ref_qg_pkhbt(a, b);
    q[1] = ref_qg_pkhtb(b, a);
  }
}

/* Four depths a step, one word: its bytes 0 and 2, 1 and 3 extended in pairs less xz (SSUB16)
 * are the column's two words as they are. */
void ref_qg_lean_column_unit(const unsigned char *x, int64_t k, int is_signed, int32_t xz,
                             int32_t *q) {
  const int32_t zz = ref_qg_pkhbt(xz, xz);
  const unsigned char *end = x + k / 4 * 4;
  for (; x != end && is_signed; x += 4, q += 2) {
    const int32_t a = ref_qg_word8((const int8_t *)x);
    q[0] = __ssub16(__sxtb16(a), zz);
    q[1] = __ssub16(ref_qg_sxtb16_ror8(a), zz);
  }
  for (; x != end; x += 4, q += 2) {
    const int32_t a = ref_qg_word8((const int8_t *)x);
    q[0] = __ssub16((int32_t)__uxtb16(a), zz);
    q[1] = __ssub16(ref_qg_uxtb16_ror8(a), zz);
  }
  if (k % 4)
    ref_qg_lean_column_unit_portable(x, k % 4, is_signed, xz, q);
}

/* Four depths a step, each a word of 4 pixels' bytes: extended in pairs (pixels 0 and 2, 1 and
 * 3) less xz, then depths d and d + 2 of a pixel paired by PKHBT / PKHTB; `pixels` (4 or 8) 4 at
 * a time, the block's groups 2 * pixels words apart; is_signed and pixels constants where it is
 * inlined (REF_QG_BLOCK_UNIT). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_lean_block_unit_of(const unsigned char *x, int step, int groups, int is_signed, int32_t zz,
                          int pixels, int32_t *q) {
  int g, h;
  for (g = 0; g < groups; ++g, x += 4 * step, q += 2 * pixels)
    for (h = 0; h < pixels; h += 4) {
      const int8_t *xh = (const int8_t *)x + h;
      const int32_t a0 = ref_qg_word8(xh), a1 = ref_qg_word8(xh + step);
      const int32_t a2 = ref_qg_word8(xh + 2 * step), a3 = ref_qg_word8(xh + 3 * step);
      int32_t e0, o0, e1, o1, e2, o2, e3, o3, *qh = q + 2 * h;
      if (is_signed) {
        e0 = __sxtb16(a0), o0 = ref_qg_sxtb16_ror8(a0), e1 = __sxtb16(a1);
        o1 = ref_qg_sxtb16_ror8(a1), e2 = __sxtb16(a2), o2 = ref_qg_sxtb16_ror8(a2);
        e3 = __sxtb16(a3), o3 = ref_qg_sxtb16_ror8(a3);
      } else {
        e0 = (int32_t)__uxtb16(a0), o0 = ref_qg_uxtb16_ror8(a0), e1 = (int32_t)__uxtb16(a1);
        o1 = ref_qg_uxtb16_ror8(a1), e2 = (int32_t)__uxtb16(a2), o2 = ref_qg_uxtb16_ror8(a2);
        e3 = (int32_t)__uxtb16(a3), o3 = ref_qg_uxtb16_ror8(a3);
      }
      e0 = __ssub16(e0, zz), o0 = __ssub16(o0, zz), e1 = __ssub16(e1, zz), o1 = __ssub16(o1, zz);
      e2 = __ssub16(e2, zz), o2 = __ssub16(o2, zz), e3 = __ssub16(e3, zz), o3 = __ssub16(o3, zz);
      qh[0] = ref_qg_pkhbt(e0, e2); /* pixel h: depths (0, 2), (1, 3) */
      qh[1] = ref_qg_pkhbt(e1, e3);
      qh[2] = ref_qg_pkhbt(o0, o2); /* pixel h + 1 */
      qh[3] = ref_qg_pkhbt(o1, o3);
      qh[4] = ref_qg_pkhtb(e2, e0); /* pixel h + 2 */
      qh[5] = ref_qg_pkhtb(e3, e1);
      qh[6] = ref_qg_pkhtb(o2, o0); /* pixel h + 3 */
      qh[7] = ref_qg_pkhtb(o3, o1);
    }
}

#define REF_QG_BLOCK_UNIT(PIXELS)                                                                  \
  do {                                                                                             \
    if (is_signed)                                                                                 \
      ref_qg_lean_block_unit_of(x, (int)ipix, (int)(k / 4), 1, ref_qg_pkhbt(xz, xz), PIXELS, q);   \
    else                                                                                           \
      ref_qg_lean_block_unit_of(x, (int)ipix, (int)(k / 4), 0, ref_qg_pkhbt(xz, xz), PIXELS, q);   \
  } while (0)
void ref_qg_lean_block_unit(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                            int32_t xz, int32_t *q) {
  REF_QG_BLOCK_UNIT(REF_QG_LEAN_PIXELS);
  if (k % 4)
    ref_qg_lean_block_unit_portable(x + k / 4 * 4 * ipix, ipix, k % 4, is_signed, xz,
                                    q + k / 4 * 2 * REF_QG_LEAN_PIXELS);
}

#if defined(REF_QG_LEAN_WIDE)
/* Its last k % 4 depths as two blocks of 4 pixels, their words then put in place. */
void ref_qg_lean_block_unit_wide(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                                 int32_t xz, int32_t *q) {
  REF_QG_BLOCK_UNIT(REF_QG_LEAN_WIDE_PIXELS);
  if (k % 4) {
    int32_t half[2 * REF_QG_LEAN_PIXELS];
    int h;
    x += k / 4 * 4 * ipix, q += k / 4 * 2 * REF_QG_LEAN_WIDE_PIXELS;
    for (h = 0; h < REF_QG_LEAN_WIDE_PIXELS; h += REF_QG_LEAN_PIXELS) {
      ref_qg_lean_block_unit_portable(x + h, ipix, k % 4, is_signed, xz, half);
      memcpy(q + 2 * h, half, sizeof half);
    }
  }
}
#endif
#undef REF_QG_BLOCK_UNIT
#else
void ref_qg_lean_dots(int64_t k, const int8_t *w, int64_t m, int64_t over, const int32_t *c,
                      const ref_qg_lean_out *o, int64_t c0, int n, unsigned char *y,
                      int64_t y_row) {
  ref_qg_lean_dots_portable(k, w, m, over, c, o, c0, n, y, y_row);
}

void ref_qg_widen(const unsigned char *src, int64_t n, int is_signed, int32_t zp, int16_t *dst) {
  ref_qg_widen_portable(src, n, is_signed, zp, dst);
}

void ref_qg_widen_rows(const unsigned char *src, int rows, int width, int is_signed, int32_t zp,
                       int16_t *dst, int dst_step) {
  ref_qg_widen_rows_portable(src, rows, width, is_signed, zp, dst, dst_step);
}

void ref_qg_lean_place(const int16_t *col, int64_t k, int pixels, int32_t *q) {
  ref_qg_lean_place_portable(col, k, pixels, q);
}

void ref_qg_lean_column_unit(const unsigned char *x, int64_t k, int is_signed, int32_t xz,
                             int32_t *q) {
  ref_qg_lean_column_unit_portable(x, k, is_signed, xz, q);
}

int32_t ref_qg_dot8(const unsigned char *x, const int8_t *w, int64_t n, int is_signed, int32_t xz) {
  return ref_qg_dot8_portable(x, w, n, is_signed, xz);
}

void ref_qg_lean_block_unit(const unsigned char *x, int64_t ipix, int64_t k, int is_signed,
                            int32_t xz, int32_t *q) {
  ref_qg_lean_block_unit_portable(x, ipix, k, is_signed, xz, q);
}

void ref_qg_lean_row(int64_t k, const int16_t *x, const int8_t *w, int64_t ldw, int64_t n,
                     int32_t *s) {
  ref_qg_lean_row_portable(k, x, w, ldw, n, s);
}
#endif

typedef void (*ref_qg_depthwise_fn)(int rows, const int16_t *const *x, int64_t stride, int64_t kw,
                                    const int16_t *w, int64_t n, int accumulate, int32_t *s);

#if defined(__ARM_FEATURE_DSP)
/* Depthwise rows (dilation 1) by SMLAD of pairs of taps (the last of an odd row with 0, which
 * multiplies the value after the window: within the rows' slack) and pairs of input values;
 * three rows of two pairs (3 x 3 kernels) with the taps in registers. */
enum { REF_QG_DW_WORDS = 16 };
static void ref_qg_depthwise_row_dsp(int rows, const int16_t *const *x, int64_t stride, int64_t kw,
                                     const int16_t *w, int64_t n, int accumulate, int32_t *s) {
  const int pairs = (int)((kw + 1) / 2);
  int32_t tw[REF_QG_DW_WORDS];
  int64_t ow;
  int r, q;
  if (rows * pairs > REF_QG_DW_WORDS) {
    ref_qg_depthwise_row_portable(rows, x, stride, 1, kw, w, n, accumulate, s);
    return;
  }
  for (r = 0; r < rows; ++r)
    for (q = 0; q < pairs; ++q) {
      const int16_t lo = w[r * kw + 2 * q], hi = 2 * q + 1 < kw ? w[r * kw + 2 * q + 1] : 0;
      tw[r * pairs + q] = (int32_t)((uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16);
    }
  if (!accumulate)
    memset(s, 0, (size_t)n * sizeof *s);
  if (rows == 3 && pairs == 2) {
    const int32_t a0 = tw[0], a1 = tw[1], b0 = tw[2], b1 = tw[3], c0 = tw[4], c1 = tw[5];
    const int16_t *x0 = x[0], *x1 = x[1], *x2 = x[2];
    const int32_t *end = s + n;
    const int step = (int)stride;
    for (; s != end; ++s, x0 += step, x1 += step, x2 += step) {
      int32_t acc = __smlad(a0, ref_qg_word(x0), *s);
      acc = __smlad(a1, ref_qg_word(x0 + 2), acc);
      acc = __smlad(b0, ref_qg_word(x1), acc);
      acc = __smlad(b1, ref_qg_word(x1 + 2), acc);
      acc = __smlad(c0, ref_qg_word(x2), acc);
      *s = __smlad(c1, ref_qg_word(x2 + 2), acc);
    }
    return;
  }
  for (ow = 0; ow < n; ++ow) {
    int32_t acc = s[ow];
    for (r = 0; r < rows; ++r) {
      const int16_t *xr = x[r] + ow * stride;
      for (q = 0; q < pairs; ++q)
        acc = __smlad(tw[r * pairs + q], ref_qg_word(xr + 2 * q), acc);
    }
    s[ow] = acc;
  }
}
#define REF_QG_DEPTHWISE ref_qg_depthwise_row_dsp
#else
#define REF_QG_DEPTHWISE NULL
#endif

/* A lean depthwise convolution's sums: an output row in runs of this many, requantized after
 * each run (the row kernel's registers hold the taps, the requantization's the channel). */
enum { REF_QG_DW_RUN = 64 };

void ref_qg_depthwise_lean_portable(const int16_t *x, const int *rows, int nrows, int kw, int dil,
                                    int stride, int64_t step, const int8_t *taps, int64_t oh,
                                    int64_t ow, const ref_qg_lean_out *o, int64_t ch,
                                    unsigned char *y) {
  int32_t s[REF_QG_DW_RUN];
  int64_t oy, ox0;
  int r, t, j, n;
  for (oy = 0; oy < oh; ++oy)
    for (ox0 = 0; ox0 < ow; ox0 += n) {
      n = ow - ox0 < REF_QG_DW_RUN ? (int)(ow - ox0) : REF_QG_DW_RUN;
      for (j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (r = 0; r < nrows; ++r) {
          const int16_t *xr = x + oy * step + rows[r] + (ox0 + j) * stride;
          const int8_t *tr = taps + r * kw;
          for (t = 0; t < kw; ++t)
            acc += tr[t] * xr[t * dil];
        }
        s[j] = acc;
      }
      ref_qg_lean_run(o, ch, s, n, y, oy * ow + ox0);
    }
}

#if defined(__ARM_FEATURE_DSP)
/* Sums of a 3 x 3 (or 3 x 4) window with the taps' pairs in registers, for `rows` output rows
 * of n (x at each row's window corner, rows `step` apart; d1 and d2 the second and third
 * window rows' offsets): strides 1 and 2 as constants, so that the loads advance their
 * pointers. */
static inline void ref_qg_dw3_rows(const int16_t *x, int d1, int d2, int step, int stride,
                                   const int32_t *tw, int rows, int n, int32_t *s) {
  const int32_t a0 = tw[0], a1 = tw[1], b0 = tw[2], b1 = tw[3], c0 = tw[4], c1 = tw[5];
  int oy;
  for (oy = 0; oy < rows; ++oy, x += step) {
    const int16_t *x0 = x, *x1 = x + d1, *x2 = x + d2;
    const int32_t *end = s + n;
    for (; s != end; ++s, x0 += stride, x1 += stride, x2 += stride) {
      int32_t acc = __smlad(a0, ref_qg_word(x0), 0);
      acc = __smlad(a1, ref_qg_word(x0 + 2), acc);
      acc = __smlad(b0, ref_qg_word(x1), acc);
      acc = __smlad(b1, ref_qg_word(x1 + 2), acc);
      acc = __smlad(c0, ref_qg_word(x2), acc);
      *s = __smlad(c1, ref_qg_word(x2 + 2), acc);
    }
  }
}

/* Stride 1, 3 taps a row: two outputs a step from each window row's two words (values 0-1,
 * 2-3): the first output's a0 x0 + a1 x1 by SMLAD and a2 x2 by SMLATB of (a1, a2), the
 * second's a1 x2 + a2 x3 by SMLAD of (a1, a2) and a0 x1 by SMLABT: 6 loads and 12
 * multiply-adds for two outputs (were 12 and 12). tw: (a0, a1) and (a2, 0) a row. */
static void ref_qg_dw3_rows_1(const int16_t *x, int d1, int d2, int step, const int32_t *tw,
                              int rows, int n, int32_t *s) {
  const int32_t a0 = tw[0], b0 = ref_qg_pkhbt(a0 >> 16, tw[1]);
  const int32_t a1 = tw[2], b1 = ref_qg_pkhbt(a1 >> 16, tw[3]);
  const int32_t a2 = tw[4], b2 = ref_qg_pkhbt(a2 >> 16, tw[5]);
  int oy;
  for (oy = 0; oy < rows; ++oy, x += step) {
    const int16_t *x0 = x, *x1 = x + d1, *x2 = x + d2;
    const int32_t *end = s + n - n % 2;
    for (; s != end; s += 2, x0 += 2, x1 += 2, x2 += 2) {
      int32_t p = ref_qg_word(x0), q = ref_qg_word(x0 + 2);
      int32_t u = __smlatb(b0, q, __smuad(a0, p)), v = __smlabt(a0, p, __smuad(b0, q));
      p = ref_qg_word(x1), q = ref_qg_word(x1 + 2);
      u = __smlatb(b1, q, __smlad(a1, p, u)), v = __smlabt(a1, p, __smlad(b1, q, v));
      p = ref_qg_word(x2), q = ref_qg_word(x2 + 2);
      s[0] = __smlatb(b2, q, __smlad(a2, p, u));
      s[1] = __smlabt(a2, p, __smlad(b2, q, v));
    }
    if (n % 2) {
      int32_t u = __smlad(a0, ref_qg_word(x0), 0);
      u = __smlabb(tw[1], ref_qg_word(x0 + 2), u);
      u = __smlad(a1, ref_qg_word(x1), u);
      u = __smlabb(tw[3], ref_qg_word(x1 + 2), u);
      u = __smlad(a2, ref_qg_word(x2), u);
      *s++ = __smlabb(tw[5], ref_qg_word(x2 + 2), u);
    }
  }
}

/* Stride 1 with 3 taps a row; strides 1 (4 taps) and 2 as constants, others as they are. */
REF_NOINLINE static void ref_qg_dw3(const int16_t *x, int d1, int d2, int step, int stride, int kw,
                                    const int32_t *tw, int rows, int n, int32_t *s) {
  if (stride == 1 && kw == 3)
    ref_qg_dw3_rows_1(x, d1, d2, step, tw, rows, n, s);
  else if (stride == 2)
    ref_qg_dw3_rows(x, d1, d2, step, 2, tw, rows, n, s);
  else
    ref_qg_dw3_rows(x, d1, d2, step, stride, tw, rows, n, s);
}

#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
/* A 3 x 3 depthwise channel's outputs in one pass, stride 1 or 2 (a constant where inlined),
 * each sum started at the bias and requantized as it is made (ref_qg_lean_q8: u, lo constants
 * where inlined), rows of n outputs into y: no sums stored, no call a run. tw: the taps' pairs
 * (a0, a1), (a2, 0) of each row. Two outputs a step; stride 1: the first output's
 * a0 x0 + a1 x1 by SMLAD and a2 x2 by SMLATB of (a1, a2), the second's a1 x2 + a2 x3 by
 * SMLAD of (a1, a2) and a0 x1 by SMLABT (6 loads, 12 multiply-adds); stride 2: the first
 * output's a0 x0 + a1 x1 and a2 x2 by SMLABB, the second's a0 x2 + a1 x3 and a2 x4 (9 loads,
 * 12 multiply-adds). An odd n's last output on its own. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
ref_qg_dw3_q8_rows(const int16_t *x, int d1, int d2, int step, int stride, const int32_t *tw,
                   int rows, int n, int32_t bias, int32_t mult, int32_t e, int32_t rz, int u,
                   int32_t lo, unsigned char *y) {
  const int32_t a0 = tw[0], a1 = tw[2], a2 = tw[4], c0 = tw[1], c1 = tw[3], c2 = tw[5];
  const int32_t b0 = ref_qg_pkhbt(a0 >> 16, c0), b1 = ref_qg_pkhbt(a1 >> 16, c1);
  const int32_t b2 = ref_qg_pkhbt(a2 >> 16, c2);
  int oy;
  for (oy = 0; oy < rows; ++oy, x += step) {
    const int16_t *x0 = x, *x1 = x + d1, *x2 = x + d2;
    unsigned char *end = y + (n - n % 2);
    for (; y != end; y += 2, x0 += 2 * stride, x1 += 2 * stride, x2 += 2 * stride) {
      int32_t f, g;
      if (stride == 1) {
        int32_t p = ref_qg_word(x0), q = ref_qg_word(x0 + 2);
        f = __smlatb(b0, q, __smlad(a0, p, bias)), g = __smlabt(a0, p, __smlad(b0, q, bias));
        p = ref_qg_word(x1), q = ref_qg_word(x1 + 2);
        f = __smlatb(b1, q, __smlad(a1, p, f)), g = __smlabt(a1, p, __smlad(b1, q, g));
        p = ref_qg_word(x2), q = ref_qg_word(x2 + 2);
        f = __smlatb(b2, q, __smlad(a2, p, f)), g = __smlabt(a2, p, __smlad(b2, q, g));
      } else {
        int32_t p = ref_qg_word(x0), q = ref_qg_word(x0 + 2), r = ref_qg_word(x0 + 4);
        f = __smlabb(c0, q, __smlad(a0, p, bias)), g = __smlabb(c0, r, __smlad(a0, q, bias));
        p = ref_qg_word(x1), q = ref_qg_word(x1 + 2), r = ref_qg_word(x1 + 4);
        f = __smlabb(c1, q, __smlad(a1, p, f)), g = __smlabb(c1, r, __smlad(a1, q, g));
        p = ref_qg_word(x2), q = ref_qg_word(x2 + 2), r = ref_qg_word(x2 + 4);
        f = __smlabb(c2, q, __smlad(a2, p, f)), g = __smlabb(c2, r, __smlad(a2, q, g));
      }
      y[0] = (unsigned char)ref_qg_lean_q8(f, mult, rz, e, u, lo);
      y[1] = (unsigned char)ref_qg_lean_q8(g, mult, rz, e, u, lo);
    }
    if (n % 2) {
      int32_t f = __smlad(a0, ref_qg_word(x0), bias);
      f = __smlabb(c0, ref_qg_word(x0 + 2), f);
      f = __smlad(a1, ref_qg_word(x1), f);
      f = __smlabb(c1, ref_qg_word(x1 + 2), f);
      f = __smlad(a2, ref_qg_word(x2), f);
      *y++ =
          (unsigned char)ref_qg_lean_q8(__smlabb(c2, ref_qg_word(x2 + 2), f), mult, rz, e, u, lo);
    }
  }
}

/* ref_qg_dw3_q8_rows for strides 1 and 2 and the common clamps, with their constants. */
#define REF_QG_DW3_Q8(u, lo)                                                                       \
  (stride == 1 ? ref_qg_dw3_q8_rows(x, d1, d2, step, 1, tw, rows, n, bias, mult, e, rz, u, lo, y)  \
               : ref_qg_dw3_q8_rows(x, d1, d2, step, 2, tw, rows, n, bias, mult, e, rz, u, lo, y))
REF_NOINLINE static void ref_qg_dw3_q8(const int16_t *x, int d1, int d2, int step, int stride,
                                       const int32_t *tw, int rows, int n, const ref_qg_lean_ch *q,
                                       unsigned char *y) {
  const int32_t bias = q->bias, mult = q->mult, e = q->shift - 32, rz = ref_qg_lean_rz(e, q->zp);
  if (q->hi == 255 && q->lo == 0)
    REF_QG_DW3_Q8(1, INT32_MIN);
  else if (q->hi == 255)
    REF_QG_DW3_Q8(1, q->lo);
  else if (q->lo == -128)
    REF_QG_DW3_Q8(0, INT32_MIN);
  else
    REF_QG_DW3_Q8(0, q->lo);
}
#undef REF_QG_DW3_Q8

/* Whether channel q of a 3 x 3 window (dilation 1) takes ref_qg_dw3_q8. */
static int ref_qg_dw3_q8_ok(const ref_qg_lean_ch *q, int kw, int stride) {
  return kw == 3 && (stride == 1 || stride == 2) && !q->raw &&
         ref_qg_lean_fast_ok(q->mult, q->shift, q->sum_bits) && ref_qg_lean_sat8(q->lo, q->hi);
}
#endif

/* Any other window: the taps' pairs from tw where they were packed (ntw words), else packed
 * as they are read (a global pool's window). */
REF_NOINLINE static void ref_qg_dw_any(const int16_t *x, const int *rows, int nrows, int kw,
                                       int step, int stride, const int32_t *tw, int ntw,
                                       const int8_t *taps, int orows, int n, int32_t *s) {
  const int pairs = (kw + 1) / 2;
  int oy, j, r, t;
  for (oy = 0; oy < orows; ++oy, x += step)
    for (j = 0; j < n; ++j, ++s) {
      int32_t acc = 0;
      for (r = 0; r < nrows; ++r) {
        const int16_t *xr = x + rows[r] + j * stride;
        if (ntw) {
          for (t = 0; t < pairs; ++t)
            acc = __smlad(tw[r * pairs + t], ref_qg_word(xr + 2 * t), acc);
        } else {
          const int8_t *tr = taps + r * kw;
          for (t = 0; t + 1 < kw; t += 2)
            acc = __smlad(ref_qg_lean_pack(tr[t], tr[t + 1]), ref_qg_word(xr + t), acc);
          if (kw % 2)
            acc += tr[kw - 1] * xr[kw - 1];
        }
      }
      *s = acc;
    }
}

/* Dilation 1 by SMLAD of pairs of taps and pairs of input values (an odd row's last tap paired
 * with 0, which multiplies the value after the window: within the slack), the taps packed once
 * where they fit in REF_QG_DW_WORDS words; the sums of as many whole output rows as
 * REF_QG_DW_RUN holds (or of a part of one row) a call, then their outputs. */
void ref_qg_depthwise_lean(const int16_t *x, const int *rows, int nrows, int kw, int dil,
                           int stride, int64_t step, const int8_t *taps, int64_t oh, int64_t ow,
                           const ref_qg_lean_out *o, int64_t ch, unsigned char *y) {
  const int pairs = (kw + 1) / 2, ntw = nrows * pairs <= REF_QG_DW_WORDS ? nrows * pairs : 0;
  const int w = (int)ow, per = w <= REF_QG_DW_RUN ? REF_QG_DW_RUN / w : 1;
  int32_t tw[REF_QG_DW_WORDS], s[REF_QG_DW_RUN];
  int oy, ox, r, t, nr, n;
  if (dil != 1) {
    ref_qg_depthwise_lean_portable(x, rows, nrows, kw, dil, stride, step, taps, oh, ow, o, ch, y);
    return;
  }
  if (nrows == 3 && kw == 3) /* unrolled: a channel's packing was a tenth of its 3 x 3 work */
    for (r = 0; r < 3; ++r) {
      tw[2 * r] = ref_qg_lean_pack(taps[3 * r], taps[3 * r + 1]);
      tw[2 * r + 1] = ref_qg_lean_pack(taps[3 * r + 2], 0);
    }
  else
    for (r = 0; ntw && r < nrows; ++r)
      for (t = 0; t < pairs; ++t)
        tw[r * pairs + t] =
            ref_qg_lean_pack(taps[r * kw + 2 * t], 2 * t + 1 < kw ? taps[r * kw + 2 * t + 1] : 0);
#if REF_QG_ARM32 && defined(__ARM_FEATURE_SAT)
  if (nrows == 3 && pairs == 2) {
    const ref_qg_lean_ch q = ref_qg_lean_channel(o, ch);
    if (ref_qg_dw3_q8_ok(&q, kw, stride)) {
      ref_qg_dw3_q8(x + rows[0], rows[1] - rows[0], rows[2] - rows[0], (int)step, stride, tw,
                    (int)oh, w, &q, y);
      return;
    }
  }
#endif
  for (oy = 0; oy < (int)oh; oy += nr) {
    nr = (int)oh - oy < per ? (int)oh - oy : per;
    for (ox = 0; ox < w; ox += n) {
      const int16_t *xo = x + oy * (int)step + ox * stride;
      n = w - ox < REF_QG_DW_RUN ? w - ox : REF_QG_DW_RUN;
      if (nrows == 3 && pairs == 2)
        ref_qg_dw3(xo + rows[0], rows[1] - rows[0], rows[2] - rows[0], (int)step, stride, kw, tw,
                   nr, n, s);
      else
        ref_qg_dw_any(xo, rows, nrows, kw, (int)step, stride, tw, ntw, taps, nr, n, s);
      ref_qg_lean_run(o, ch, s, nr * n, y, (int64_t)oy * w + ox);
    }
  }
}
#else
void ref_qg_depthwise_lean(const int16_t *x, const int *rows, int nrows, int kw, int dil,
                           int stride, int64_t step, const int8_t *taps, int64_t oh, int64_t ow,
                           const ref_qg_lean_out *o, int64_t ch, unsigned char *y) {
  ref_qg_depthwise_lean_portable(x, rows, nrows, kw, dil, stride, step, taps, oh, ow, o, ch, y);
}
#endif

/* ---- The kernels for this CPU ------------------------------------------------------------- */

typedef struct {
  ref_qg_tile_fn tile;
  ref_qg_tile2_fn tile2; /* NULL: one panel at a time */
  ref_qg_store_fn store;
  ref_qg_depthwise_fn depthwise; /* dil 1, stride 1 or 2; NULL: the portable loop */
  ref_qg_dw_plane_fn plane;      /* the same for a plane; NULL: row by row */
  int x86;                       /* the AVX2 requantization runs: 1, or 2 the AVX-512 one */
} ref_qg_kernels;

/* On x86-64 with AVX2 and FMA, the AVX2 kernels (with VNNI's multiply-add where the CPU has
 * it), else the build's (REF_QG_TILE, REF_QG_STORE). */
static const ref_qg_kernels *ref_qg_kernels_get(void) {
  static const ref_qg_kernels build = {REF_QG_TILE, NULL, REF_QG_STORE, REF_QG_DEPTHWISE, NULL, 0};
#if REF_X86_TARGETS
  static const ref_qg_kernels avx2 = {ref_qg_tile_avx2,
                                      NULL,
                                      ref_qg_store_avx2,
                                      ref_qg_depthwise_row_avx2,
                                      ref_qg_depthwise_plane_avx2,
                                      1};
  static const ref_qg_kernels vnni512 = {
      ref_qg_tile_vnni512z,         ref_qg_tile2_vnni512z,          ref_qg_store_vnni512z,
      ref_qg_depthwise_row_vnni512, ref_qg_depthwise_plane_vnni512, 2};
#if REF_QG_WITH_AVXVNNI
  static const ref_qg_kernels avxvnni = {ref_qg_tile_avxvnni,
                                         NULL,
                                         ref_qg_store_avx2,
                                         ref_qg_depthwise_row_avxvnni,
                                         ref_qg_depthwise_plane_avxvnni,
                                         1};
#endif
  if (!ref_cpu_has("avx2") || !ref_cpu_has("fma"))
    return &build;
  if (ref_cpu_has("avx512vnni") && ref_cpu_has("avx512vl") && ref_cpu_has("avx512bw"))
    return &vnni512;
#if REF_QG_WITH_AVXVNNI
  if (ref_cpu_has("avxvnni"))
    return &avxvnni;
#endif
  return &avx2;
#else
  return &build;
#endif
}

/* ---- The loop over tiles ------------------------------------------------------------------- */

/* The tiles of rows [r0, r1) x columns [c0, c1) and their stores. The larger operand is read
 * once, the smaller again for each tile row or column: row blocks outside (a block's P rows in
 * L1 against V's panels: a convolution's kernel against a block of pixels), or, where V is the
 * larger (a MatMul's packed kernel against a few hundred rows), panels outside (BERT-base's
 * 768 x 3072 kernels, 4.7 MB of V, came from L3 once per row block: 25% of its time). */
static void ref_qg_loop(const ref_qg *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                        ref_qg_tile_fn tile, ref_qg_tile2_fn tile2, ref_qg_store_fn store) {
  ref_qg_acc acc, acc2;
  const int16_t *a[REF_QG_MR];
  const int64_t step = tile2 ? 2 * REF_QG_NR : REF_QG_NR; /* columns a call */
  const int by_rows = r1 - r0 >= c1 - c0;
  const int64_t outer0 = by_rows ? r0 : c0, outer1 = by_rows ? r1 : c1;
  const int64_t inner0 = by_rows ? c0 : r0, inner1 = by_rows ? c1 : r1;
  int64_t o, n, r, c;
  int i;
  for (o = outer0; o < outer1; o += by_rows ? REF_QG_MR : step)
    for (n = inner0; n < inner1; n += by_rows ? step : REF_QG_MR) {
      int64_t nr, nc;
      const int16_t *v;
      r = by_rows ? o : n;
      c = by_rows ? n : o;
      nr = r1 - r < REF_QG_MR ? r1 - r : REF_QG_MR;
      nc = c1 - c < REF_QG_NR ? c1 - c : REF_QG_NR;
      v = g->v + (c - g->v_col0) / REF_QG_NR * (g->kp * REF_QG_NR);
      for (i = 0; i < REF_QG_MR; ++i) /* an edge tile repeats its last row */
        a[i] = g->p + (r + (i < nr ? i : nr - 1)) * g->ldp;
      if (tile2 && c1 - c > REF_QG_NR) { /* this panel and (part of) the next */
        const int64_t nc2 = c1 - c - REF_QG_NR < REF_QG_NR ? c1 - c - REF_QG_NR : REF_QG_NR;
        tile2(g->kp, a, v, v + g->kp * REF_QG_NR, acc, acc2, NULL);
        store(&g->out, r, nr, c, nc, acc);
        store(&g->out, r, nr, c + REF_QG_NR, nc2, acc2);
      } else {
        tile(g->kp, a, v, (int)nr, (int)nc, acc);
        store(&g->out, r, nr, c, nc, acc);
      }
    }
}

void ref_qg_run(const ref_qg *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const ref_qg_kernels *k = ref_qg_kernels_get();
  ref_qg_loop(g, r0, r1, c0, c1, k->tile, k->tile2, k->store);
}

void ref_qg_run_portable(const ref_qg *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  ref_qg_loop(g, r0, r1, c0, c1, ref_qg_tile_portable, NULL, ref_qg_store_portable);
}

/* ---- The 8-bit product (ref_qg8) -------------------------------------------------------- */

typedef void (*ref_qg8_tile_fn)(int64_t kq, const unsigned char *const a[REF_QG_MR],
                                const unsigned char *v, const unsigned char *w, ref_qg_acc acc,
                                ref_qg_acc acc2, const int32_t *start);

/* The tile(s) of ref_qg8_tile_vnni512z (a unsigned, the panels int8) or, with kernel_rows,
 * ref_qg8k_tile_vnni512z's (a int8, the panels unsigned) in portable C. */
static void ref_qg8_tile_portable(int kernel_rows, int64_t kq, const unsigned char *const a[],
                                  const unsigned char *v, const unsigned char *w, ref_qg_acc acc,
                                  ref_qg_acc acc2, const int32_t *start) {
  int panel, i, h;
  int64_t q;
  for (panel = 0; panel < (w ? 2 : 1); ++panel) {
    const unsigned char *vp = panel ? w : v;
    int32_t(*to)[REF_QG_NR] = panel ? acc2 : acc;
    for (i = 0; i < REF_QG_MR; ++i)
      for (h = 0; h < REF_QG_NR; ++h) {
        uint32_t sum = (uint32_t)start[i] + (uint32_t)start[REF_QG_MR + panel * REF_QG_NR + h];
        for (q = 0; q < kq; ++q) { /* modulo 2^32, as the instruction's lanes */
          const unsigned char x = a[i][q], b = vp[q / 4 * (4 * REF_QG_NR) + h * 4 + q % 4];
          sum +=
              kernel_rows ? (uint32_t)((int32_t)(int8_t)x * b) : (uint32_t)((int32_t)x * (int8_t)b);
        }
        to[i][h] = (int32_t)sum;
      }
  }
}
static void ref_qg8_tile_portable_data(int64_t kq, const unsigned char *const a[REF_QG_MR],
                                       const unsigned char *v, const unsigned char *w,
                                       ref_qg_acc acc, ref_qg_acc acc2, const int32_t *start) {
  ref_qg8_tile_portable(0, kq, a, v, w, acc, acc2, start);
}
static void ref_qg8_tile_portable_kernel(int64_t kq, const unsigned char *const a[REF_QG_MR],
                                         const unsigned char *v, const unsigned char *w,
                                         ref_qg_acc acc, ref_qg_acc acc2, const int32_t *start) {
  ref_qg8_tile_portable(1, kq, a, v, w, acc, acc2, start);
}

int ref_qg8_available(void) {
#if REF_X86_TARGETS
  return ref_qg_kernels_get()->x86 == 2;
#else
  return 0;
#endif
}

/* ref_qg_loop's order and edges for the 8-bit tiles, the sums started at less sub. */
static void ref_qg8_loop(const ref_qg8 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                         ref_qg8_tile_fn tile, ref_qg_store_fn store) {
  ref_qg_acc acc[2];
  int32_t start[REF_QG_MR + 2 * REF_QG_NR];
  const unsigned char *a[REF_QG_MR];
  const int by_rows = r1 - r0 >= c1 - c0;
  const int64_t outer0 = by_rows ? r0 : c0, outer1 = by_rows ? r1 : c1;
  const int64_t inner0 = by_rows ? c0 : r0, inner1 = by_rows ? c1 : r1;
  int64_t o, n, r, c, nr, nc, h;
  int i, panel;
  for (o = outer0; o < outer1; o += by_rows ? REF_QG_MR : 2 * REF_QG_NR)
    for (n = inner0; n < inner1; n += by_rows ? 2 * REF_QG_NR : REF_QG_MR) {
      const unsigned char *v;
      int two;
      r = by_rows ? o : n;
      c = by_rows ? n : o;
      nr = r1 - r < REF_QG_MR ? r1 - r : REF_QG_MR;
      v = g->v + (c - g->v_col0) / REF_QG_NR * (g->kq * REF_QG_NR);
      two = c1 - c > REF_QG_NR;
      for (i = 0; i < REF_QG_MR; ++i) { /* an edge tile repeats its last row */
        a[i] = g->p + (r + (i < nr ? i : nr - 1)) * g->ldp;
        start[i] = g->kernel_rows ? (int32_t)(0u - (uint32_t)g->sub[r + (i < nr ? i : nr - 1)]) : 0;
      }
      for (h = 0; h < 2 * REF_QG_NR; ++h)
        start[REF_QG_MR + h] =
            !g->kernel_rows && c + h < c1 ? (int32_t)(0u - (uint32_t)g->sub[c + h]) : 0;
      tile(g->kq, a, v, two ? v + g->kq * REF_QG_NR : NULL, acc[0], acc[1], start);
      for (panel = 0; panel < 1 + two; ++panel) {
        const int64_t cp = c + panel * REF_QG_NR;
        nc = c1 - cp < REF_QG_NR ? c1 - cp : REF_QG_NR;
        store(&g->out, r, nr, cp, nc, acc[panel]);
      }
    }
}

void ref_qg8_run(const ref_qg8 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
#if REF_X86_TARGETS
  if (ref_qg8_available()) {
    ref_qg8_loop(g, r0, r1, c0, c1, g->kernel_rows ? ref_qg8k_tile_vnni512z : ref_qg8_tile_vnni512z,
                 ref_qg_store_vnni512z);
    return;
  }
#endif
  ref_qg8_run_portable(g, r0, r1, c0, c1);
}

void ref_qg8_run_portable(const ref_qg8 *g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  ref_qg8_loop(g, r0, r1, c0, c1,
               g->kernel_rows ? ref_qg8_tile_portable_kernel : ref_qg8_tile_portable_data,
               ref_qg_store_portable);
}

void ref_qg8_group_row(const unsigned char *const src[4], int64_t n, unsigned char flip,
                       unsigned char *v, int64_t kq, int64_t k) {
  const int64_t panel = kq * REF_QG_NR;
  unsigned char part[4][REF_QG_NR];
  int64_t j = 0;
  int h;
  v += k * REF_QG_NR;
#if REF_X86_TARGETS /* SSE2, which every x86-64 CPU has */
  {
    const __m128i f = _mm_set1_epi8((char)flip), zero = _mm_setzero_si128();
    for (; j + REF_QG_NR <= n; j += REF_QG_NR, v += panel) { /* 16 columns: 4 x 16 bytes */
      __m128i r[4], lo, hi, lo2, hi2;
      for (h = 0; h < 4; ++h)
        r[h] = src[h] ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src[h] + j)), f) : zero;
      lo = _mm_unpacklo_epi8(r[0], r[1]);
      hi = _mm_unpackhi_epi8(r[0], r[1]);
      lo2 = _mm_unpacklo_epi8(r[2], r[3]);
      hi2 = _mm_unpackhi_epi8(r[2], r[3]);
      _mm_storeu_si128((__m128i *)v, _mm_unpacklo_epi16(lo, lo2));
      _mm_storeu_si128((__m128i *)(v + 16), _mm_unpackhi_epi16(lo, lo2));
      _mm_storeu_si128((__m128i *)(v + 32), _mm_unpacklo_epi16(hi, hi2));
      _mm_storeu_si128((__m128i *)(v + 48), _mm_unpackhi_epi16(hi, hi2));
    }
  }
#endif
  for (; j < n; j += REF_QG_NR, v += panel) { /* the last panel's columns, zeros past n */
    const int64_t m = n - j < REF_QG_NR ? n - j : REF_QG_NR;
    int64_t l;
    memset(part, 0, sizeof part);
    for (h = 0; h < 4; ++h)
      for (l = 0; src[h] && l < m; ++l)
        part[h][l] = (unsigned char)(src[h][j + l] ^ flip);
    for (l = 0; l < REF_QG_NR; ++l)
      for (h = 0; h < 4; ++h)
        v[4 * l + h] = part[h][l];
  }
}

/* ---- Runs of sums ------------------------------------------------------------------------- */

void ref_qg_requantize_bytes(const int32_t *s, int n, int32_t bias, int32_t mult, int32_t shift,
                             int32_t zp, int32_t lo, int32_t hi, unsigned char *y) {
  int i;
#if REF_QG_ARM32
  if (shift >= 32) {
    const int32_t qlo = lo - zp, qhi = hi - zp;
    for (i = 0; i < n; ++i)
      y[i] = (unsigned char)(ref_qg_requantize_arm((int32_t)((int64_t)s[i] + bias), mult, shift,
                                                   qlo, qhi) +
                             zp);
    return;
  }
#endif
  for (i = 0; i < n; ++i)
    y[i] =
        (unsigned char)ref_qg_requantize((int32_t)((int64_t)s[i] + bias), mult, shift, zp, lo, hi);
}

static unsigned char ref_qg_byte(const ref_qg_out *o, int32_t v) {
  return o->y_signed ? (unsigned char)(int8_t)v : (unsigned char)v;
}

void ref_qg_requantize_run(const ref_qg_out *o, int64_t ch, const int32_t *s, int64_t n,
                           unsigned char *y) {
  const int32_t bias = o->bias[ch];
  int64_t i = 0;
  if (o->raw) {
    for (; i < n; ++i) {
      const int32_t v = (int32_t)((int64_t)s[i] + bias);
      memcpy(y + i * 4, &v, 4);
    }
    return;
  }
#if REF_X86_TARGETS
  if (ref_qg_kernels_get()->x86 == 2)
    i = ref_qg_requantize_run_vnni512z(o, ch, s, n, y);
  else if (ref_qg_kernels_get()->x86)
    i = ref_qg_requantize_run_avx2(o, ch, s, n, y);
#endif
#if REF_QG_ARM32
  if (!o->fast) {
    ref_qg_requantize_bytes(s, (int)n, bias, o->mult[ch], o->shift[ch], o->zp, o->lo, o->hi, y);
    return;
  }
#endif
  if (o->fast)
    for (; i < n; ++i)
      y[i] = ref_qg_byte(o, ref_qg_fast((int32_t)((int64_t)s[i] + bias), o->scale[ch], o->smin[ch],
                                        o->smax[ch], o->zp, o->lo, o->hi));
  else
    for (; i < n; ++i)
      y[i] = ref_qg_byte(o, ref_qg_requantize((int32_t)((int64_t)s[i] + bias), o->mult[ch],
                                              o->shift[ch], o->zp, o->lo, o->hi));
}

void ref_qg_requantize_channels(const ref_qg_out *o, const int32_t *s, int64_t n,
                                unsigned char *y) {
  int64_t c = 0;
  if (o->raw) {
    for (; c < n; ++c) {
      const int32_t v = (int32_t)((int64_t)s[c] + o->bias[c]);
      memcpy(y + c * 4, &v, 4);
    }
    return;
  }
#if REF_X86_TARGETS
  if (ref_qg_kernels_get()->x86)
    c = ref_qg_requantize_channels_avx2(o, s, n, y);
#endif
#if REF_QG_ARM32
  if (!o->fast) {
    ref_qg_requantize_channels_arm(o, s, o->bias, o->mult, o->shift, n, y);
    return;
  }
#endif
  for (; c < n; ++c) {
    const int32_t v = (int32_t)((int64_t)s[c] + o->bias[c]);
    y[c] = ref_qg_byte(
        o, o->fast ? ref_qg_fast(v, o->scale[c], o->smin[c], o->smax[c], o->zp, o->lo, o->hi)
                   : ref_qg_requantize(v, o->mult[c], o->shift[c], o->zp, o->lo, o->hi));
  }
}

/* ---- Depthwise rows ------------------------------------------------------------------------ */

void ref_qg_depthwise_row_portable(int rows, const int16_t *const *x, int64_t stride, int64_t dil,
                                   int64_t kw, const int16_t *w, int64_t n, int accumulate,
                                   int32_t *s) {
  int64_t ow, t;
  int r;
  if (!accumulate)
    for (ow = 0; ow < n; ++ow)
      s[ow] = 0;
  for (r = 0; r < rows; ++r)
    for (t = 0; t < kw; ++t) {
      const int32_t wv = w[r * kw + t];
      const int16_t *xr = x[r] + t * dil;
      if (stride == 1)
        for (ow = 0; ow < n; ++ow)
          s[ow] += wv * xr[ow];
      else
        for (ow = 0; ow < n; ++ow)
          s[ow] += wv * xr[ow * stride];
    }
}

void ref_qg_depthwise_row(int rows, const int16_t *const *x, int64_t stride, int64_t dil,
                          int64_t kw, const int16_t *w, int64_t n, int accumulate, int32_t *s) {
  const ref_qg_depthwise_fn fast = ref_qg_kernels_get()->depthwise;
  if (fast && dil == 1 && (stride == 1 || stride == 2)) {
    fast(rows, x, stride, kw, w, n, accumulate, s);
    return;
  }
  ref_qg_depthwise_row_portable(rows, x, stride, dil, kw, w, n, accumulate, s);
}

void ref_qg_depthwise_plane(const int16_t *x, int64_t pitch, int64_t n_rows, int64_t row_stride,
                            int64_t row_dil, int rows, int64_t stride, int64_t dil, int64_t kw,
                            const int16_t *w, int64_t n, int32_t *s) {
  const ref_qg_dw_plane_fn fast = ref_qg_kernels_get()->plane;
  const int16_t *xr[REF_QG_DW_PLANE_PAIRS];
  int64_t o;
  int r;
  if (fast && dil == 1 && (stride == 1 || stride == 2) &&
      rows * ((kw + 1) / 2) <= REF_QG_DW_PLANE_PAIRS) {
    fast(x, pitch, n_rows, row_stride, row_dil, rows, stride, kw, w, n, s);
    return;
  }
  for (o = 0; o < n_rows; ++o) {
    for (r = 0; r < rows; ++r)
      xr[r] = x + (o * row_stride + r * row_dil) * pitch;
    ref_qg_depthwise_row(rows, xr, stride, dil, kw, w, n, 0, s + o * n);
  }
}

int ref_qg_dw3_bytes_available(void) {
#if REF_X86_TARGETS
  return ref_cpu_has("avx512vbmi") && ref_cpu_has("avx512vnni") && ref_cpu_has("avx512bw");
#else
  return 0;
#endif
}

void ref_qg_dw3_bytes_run(const ref_qg_dw3_bytes *q) {
#if REF_X86_TARGETS
  if (ref_qg_dw3_bytes_available()) {
    ref_qg_dw3_bytes_vbmi(q);
    return;
  }
#endif
  ref_qg_dw3_bytes_portable(q);
}

void ref_qg_dw3_bytes_portable(const ref_qg_dw3_bytes *q) {
  int64_t o, j;
  int kh, kw;
  for (o = 0; o < q->oh; ++o)
    for (j = 0; j < q->ow; ++j) {
      uint32_t sum = (uint32_t)q->start;
      for (kh = 0; kh < 3; ++kh)
        for (kw = 0; kw < 3; ++kw)
          sum += (uint32_t)(q->x[(o * q->row_stride + kh) * q->pitch + j * q->stride + kw] *
                            q->taps[kh * 3 + kw]);
      q->s[o * q->ow + j] = (int32_t)sum;
    }
}
