/* ref_vmath.h: float32 exp and erf as branch-free inline C that compilers vectorize in the
 * kernels' loops (libm's expf and erff take one element per call), for the reference kernels
 * where they dominate: Softmax, and Erf (a transformer's GELU).
 *
 * Accuracy, measured against float64 over dense sweeps (tests/runtime/test_vmath.c):
 *   - ref_expf: within 1.5 ulp of exp(x) where the result is a normal float, within 2^-149
 *     where it is denormal; exp(-inf) = 0, exp(+inf) = exp(x > 88.73) = +inf, NaN stays NaN.
 *   - ref_erff: within 3 ulp of erf(x); erf(+-inf) = +-1, NaN stays NaN.
 * Neither depends on the rounding mode beyond a last-bit difference. */
#ifndef ODLA_REFERENCE_VMATH_H_
#define ODLA_REFERENCE_VMATH_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ref_f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static inline float ref_f32_from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* exp(x) = 2^n * e^r, n = x / ln 2 rounded, r = x - n ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2 in
 * two parts, so r is exact), e^r by its Taylor series to r^7 (error below 2^-24 there), and
 * 2^n as two powers of two so that n from -150 to 128 needs no special case. */
static inline float ref_expf(float x) {
  /* x beyond 104 gives +inf all the same; below -104, 0, selected at the end while the lane
   * computes exp(0): a product that underflows costs a microcode assist on x86 (about 150
   * cycles an element), and masked attention scores (-1e4, -inf) are all below. NaN goes
   * through as NaN (r is NaN; n is 0, a NaN converted to an integer being undefined). No other
   * branch, so that gcc if-converts and vectorizes the loops this is inlined in. */
  const uint32_t keep = (uint32_t)(x < -104.0f) - 1u; /* all ones, or 0 where under */
  const float c = ref_f32_from_bits(ref_f32_bits(x > 104.0f ? 104.0f : x) & keep);
  const float t = c * 1.44269504f; /* converted below as tn: 0 for NaN, selected on the bits */
  const float tn = ref_f32_from_bits(ref_f32_bits(t) & (0u - (uint32_t)(t == t)));
  const int32_t n = (int32_t)(tn + (tn >= 0.0f ? 0.5f : -0.5f));
  const float fn = (float)n;
  const float r = (c - fn * 0.693145752f) - fn * 1.42860677e-6f;
  float p = 1.98412698e-4f;
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  {
    const int32_t n1 = n / 2, n2 = n - n1;
    return ref_f32_from_bits(ref_f32_bits(p * ref_f32_from_bits((uint32_t)(n1 + 127) << 23) *
                                          ref_f32_from_bits((uint32_t)(n2 + 127) << 23)) &
                             keep);
  }
}

/* erf(x): below |x| = 1, x P(x^2); above, 1 - e^(-x^2) R(1 / |x|), R fitted to
 * erfc(a) e^(a^2) on [1, 4] (erf is 1 in float32 beyond 3.92), with the sign of x.
 * P and R: least-squares fits in float64 on Chebyshev points, relative weights. */
static inline float ref_erff(float x) {
  const float a = fabsf(x), x2 = x * x;
  float s = -9.68974109e-6f, l = -3.82176042e-2f, b, u, e;
  s = s * x2 + 1.12747381e-4f;
  s = s * x2 - 8.48543888e-4f;
  s = s * x2 + 5.22113871e-3f;
  s = s * x2 - 2.68654749e-2f;
  s = s * x2 + 1.12837836e-1f;
  s = s * x2 - 3.76126379e-1f;
  s = s * x2 + 1.12837923f;
  s *= x;
  b = a > 4.0f ? 4.0f : a; /* below 1 only the discarded lanes of e: no second select */
  u = 1.0f / b;
  l = l * u + 2.64662623e-1f;
  l = l * u - 8.10604155e-1f;
  l = l * u + 1.42400491f;
  l = l * u - 1.52405393f;
  l = l * u + 8.99486005e-1f;
  l = l * u - 6.92685097e-2f;
  l = l * u - 2.85186321e-1f;
  l = l * u + 3.01545812e-3f;
  l = l * u + 5.63719213e-1f;
  l = l * u + 2.59613480e-5f;
  e = copysignf(1.0f - ref_expf(-(b * b)) * l, x);
  {
    /* s below 1, else e (NaN: e, NaN through b), selected on the bits: gcc turns a
     * conditional here into branches and leaves the loop scalar. */
    const uint32_t small = 0u - (uint32_t)(a < 1.0f);
    return ref_f32_from_bits((ref_f32_bits(s) & small) | (ref_f32_bits(e) & ~small));
  }
}

#endif /* ODLA_REFERENCE_VMATH_H_ */
