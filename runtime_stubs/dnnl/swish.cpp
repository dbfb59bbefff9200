// swish.cpp: swish (x * sigmoid(x)) over a float buffer in place, with AVX-512, for the
// convolutions whose fused activation is swish (EfficientNet's). oneDNN 2.6's swish
// post-op costs about 22 cycles per 16 floats on this project's machine (exp, then a
// division), which made EfficientNet-B0's low-channel expand convolutions 3x slower than the
// same convolution with ReLU; this pass runs after the primitive instead, at about a third of
// that: exp by range reduction and a degree-6 polynomial, the reciprocal by rcp14 and one
// Newton step (relative error at most 2.4e-7 against the exact function over every 64th
// float in [-87, 87], tested by tests/runtime/test_dnnl_swish.cpp). The same pass can also
// average each nChw16c channel as it goes (swishPoolInPlace), a global average pool that
// then costs no read of its own.
#include "dnnl_backend.h"

#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
/* GCC 12 warns inside its own avx512fintrin.h (the intrinsics' _mm512_undefined_ps). */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define ODLA_DNNL_SWISH_AVX512 1
#endif

namespace odla_dnnl {

#if ODLA_DNNL_SWISH_AVX512

namespace {

__attribute__((target("avx512f"))) inline __m512 swish16(__m512 x) {
  /* e = exp(-x) with x at most 87 (so that e stays above the float range's bottom); below
   * -87 e overflows and the result is masked to 0 at the end. -x = n ln2 + f, |f| <= ln2 / 2,
   * computed as g = -f = x + n ln2 (ln2 split in two) to save negating x. */
  const __m512 xc = _mm512_min_ps(x, _mm512_set1_ps(87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(-1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 g = _mm512_fmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  g = _mm512_fmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), g);
  /* exp(f) = exp(-g) by a degree-6 polynomial in f fitted for least relative error on the
   * range (2e-9 before float rounding; the Taylor one errs by 1.2e-7 at the ends), its odd
   * coefficients negated to take g. */
  __m512 p = _mm512_set1_ps(0.0013836802681908011f);
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(-0.008374815806746483f));
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(0.04166822507977486f));
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(-0.16666419804096222f));
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(0.49999991059303284f));
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(-1.0f));
  p = _mm512_fmadd_ps(p, g, _mm512_set1_ps(1.0f));
  const __m512 e = _mm512_scalef_ps(p, n); /* p * 2^n */
  /* sigmoid(x) = 1 / (1 + e): rcp14, then one Newton step r (2 - d r). */
  const __m512 d = _mm512_add_ps(e, _mm512_set1_ps(1.0f));
  __m512 r = _mm512_rcp14_ps(d);
  r = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
  /* Below -87 swish is under 1e-35: 0 there, where e overflowed (NaN stays NaN). */
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);
  return _mm512_maskz_mul_ps(live, x, r);
}

/* Both passes split over the threads from 16K floats up (about 6 us on one thread; an
 * OpenMP parallel region costs about 1 us): EfficientNet's 7x7 layers (1152 channels, 56K
 * floats) among them. */
__attribute__((target("avx512f"))) void swishAvx512(float *x, size_t n, int threads) {
  const size_t blocks = (n + 15) / 16;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1024)
  for (size_t b = 0; b < blocks; ++b) {
    const size_t i = b * 16;
    const __mmask16 m = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(x + i, m, swish16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

/* Swish over blocks x nChw16c channel blocks of hw positions (16 floats each), and mean[b]
 * = the block's average per channel. The work is split into chunks of a block's positions
 * so that few blocks still keep every thread busy; each chunk's sum goes to partial, then
 * one thread adds them up (4 running sums per chunk: a long float sum loses less). */
__attribute__((target("avx512f"))) void swishPoolAvx512(float *x, float *mean, size_t blocks,
                                                        size_t hw, int threads) {
  const size_t parts =
      std::max<size_t>(1, std::min(hw, (8 * static_cast<size_t>(threads) + blocks - 1) / blocks));
  const size_t chunk = (hw + parts - 1) / parts, items = blocks * parts;
  thread_local std::vector<float> partial;
  partial.resize(items * 16);
  float *sums = partial.data();
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks * hw > 1024)
  for (size_t item = 0; item < items; ++item) {
    const size_t b = item / parts, begin = item % parts * chunk, end = std::min(hw, begin + chunk);
    float *p = x + (b * hw + begin) * 16;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    for (size_t i = begin; i < end; ++i, p += 16) {
      const __m512 v = swish16(_mm512_loadu_ps(p));
      _mm512_storeu_ps(p, v);
      acc[i & 3] = _mm512_add_ps(acc[i & 3], v);
    }
    _mm512_storeu_ps(sums + item * 16,
                     _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  }
  const __m512 scale = _mm512_set1_ps(1.0f / static_cast<float>(hw));
  for (size_t b = 0; b < blocks; ++b) {
    __m512 total = _mm512_setzero_ps();
    for (size_t k = 0; k < parts; ++k)
      total = _mm512_add_ps(total, _mm512_loadu_ps(sums + (b * parts + k) * 16));
    _mm512_storeu_ps(mean + b * 16, _mm512_mul_ps(total, scale));
  }
}

} // namespace

bool fastSwish() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

void swishInPlace(float *x, size_t n) { swishAvx512(x, n, omp_get_max_threads()); }

void swishPoolInPlace(float *x, float *mean, size_t blocks, size_t hw) {
  swishPoolAvx512(x, mean, blocks, hw, omp_get_max_threads());
}

#else

bool fastSwish() { return false; }

/* Not used here (fastSwish() is false, oneDNN's post-op runs), but correct if called. */
void swishInPlace(float *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void swishPoolInPlace(float *x, float *mean, size_t blocks, size_t hw) {
  swishInPlace(x, blocks * hw * 16);
  for (size_t b = 0; b < blocks; ++b)
    for (size_t c = 0; c < 16; ++c) {
      double sum = 0.0;
      for (size_t i = 0; i < hw; ++i)
        sum += x[(b * hw + i) * 16 + c];
      mean[b * 16 + c] = static_cast<float>(sum / static_cast<double>(hw));
    }
}

#endif

} // namespace odla_dnnl
