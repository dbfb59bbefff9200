// swish.cpp: swish (x * sigmoid(x)) over a float buffer in place, with AVX-512, for the
// convolutions whose fused activation is swish (EfficientNet's). oneDNN 2.6's swish
// post-op costs about 22 cycles per 16 floats on this project's machine (exp, then a
// division), which made EfficientNet-B0's low-channel expand convolutions 3x slower than the
// same convolution with ReLU; this pass runs after the primitive instead, at about a third of
// that: exp by range reduction and a degree-6 polynomial, the reciprocal by rcp14 and one
// Newton step (relative error below 3e-7 against the exact function, tested by
// tests/runtime/test_dnnl_swish.cpp).
#include "dnnl_backend.h"

#include <cmath>

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
  /* e = exp(-x), -x clamped to [-87, 87] so that e and 1 + e stay finite. */
  const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), x),
                                               _mm512_set1_ps(-87.0f)),
                                 _mm512_set1_ps(87.0f));
  /* t = n ln2 + f, |f| <= ln2 / 2 (ln2 split in two for the subtraction). */
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), t);
  f = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), f);
  /* exp(f) by its Taylor polynomial to f^6 (truncation error below 1.2e-7 on the range). */
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  const __m512 e = _mm512_scalef_ps(p, n); /* p * 2^n */
  /* sigmoid(x) = 1 / (1 + e): rcp14, then one Newton step r (2 - d r). */
  const __m512 d = _mm512_add_ps(e, _mm512_set1_ps(1.0f));
  __m512 r = _mm512_rcp14_ps(d);
  r = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
  /* Below -87 swish is under 1e-35: 0 there, not x times the clamped sigmoid (NaN stays). */
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);
  return _mm512_maskz_mul_ps(live, x, r);
}

__attribute__((target("avx512f"))) void swishAvx512(float *x, size_t n, int threads) {
  const size_t blocks = (n + 15) / 16;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 4096)
  for (size_t b = 0; b < blocks; ++b) {
    const size_t i = b * 16;
    const __mmask16 m = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(x + i, m, swish16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

} // namespace

bool fastSwish() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

void swishInPlace(float *x, size_t n) {
  swishAvx512(x, n, omp_get_max_threads());
}

#else

bool fastSwish() { return false; }

/* Not used here (fastSwish() is false, oneDNN's post-op runs), but correct if called. */
void swishInPlace(float *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

#endif

} // namespace odla_dnnl
