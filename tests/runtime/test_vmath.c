/* The reference backend's vectorizable exp and erf (runtime_stubs/reference/ref_vmath.h)
 * against libm's float64 exp and erf over dense sweeps, in loops that the compiler
 * vectorizes as it does the kernels' (same options, REF_HOT): exp within 1.5 ulp where its result
 * is a normal float and within 2^-149 where it is denormal, erf within 3 ulp; infinities and NaN.
 */
#include "check.h"
#include "ref_isa.h"
#include "ref_vmath.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

enum { N = 1 << 22 };

/* The distance of `got` from the exact `want`, in units of the float32 spacing at want. */
static double ulps(float got, double want) {
  int e;
  double spacing;
  frexp(want, &e);
  spacing = ldexp(1.0, (e - 24 < -149 ? -149 : e - 24));
  return fabs((double)got - want) / spacing;
}

/* The loops under test, compiled as the kernels' are (REF_HOT: for this CPU's vectors). */
REF_HOT static void exp_all(const float *x, float *y) {
  int64_t i;
  for (i = 0; i < N; ++i)
    y[i] = ref_expf(x[i]);
}
REF_HOT static void erf_all(const float *x, float *y) {
  int64_t i;
  for (i = 0; i < N; ++i)
    y[i] = ref_erff(x[i]);
}

static void sweep_exp(float *x, float *y, float lo, float hi) {
  int64_t i;
  double worst = 0, worst_denormal = 0;
  float at = 0;
  for (i = 0; i < N; ++i)
    x[i] = lo + (hi - lo) * (float)i / (float)(N - 1);
  exp_all(x, y);
  for (i = 0; i < N; ++i) {
    double want = exp((double)x[i]);
    if (want > FLT_MAX) {
      CHECK(isinf(y[i]) && y[i] > 0, "exp(%.9g) = %.9g, not +inf", x[i], y[i]);
    } else if (want < FLT_MIN) {
      double d = fabs((double)y[i] - want);
      worst_denormal = d > worst_denormal ? d : worst_denormal;
    } else if (ulps(y[i], want) > worst) {
      worst = ulps(y[i], want);
      at = x[i];
    }
  }
  CHECK(worst <= 1.5, "exp: %.3f ulp at %.9g", worst, at);
  CHECK(worst_denormal <= ldexp(1.0, -149), "exp: %g off a denormal result", worst_denormal);
}

static void sweep_erf(float *x, float *y, float lo, float hi) {
  int64_t i;
  double worst = 0;
  float at = 0;
  for (i = 0; i < N; ++i)
    x[i] = lo + (hi - lo) * (float)i / (float)(N - 1);
  erf_all(x, y);
  for (i = 0; i < N; ++i) {
    double u = ulps(y[i], erf((double)x[i]));
    if (u > worst) {
      worst = u;
      at = x[i];
    }
  }
  CHECK(worst <= 3.0, "erf: %.3f ulp at %.9g", worst, at);
}

int main(void) {
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  float special[6], out[6];
  int i;
  if (!x || !y)
    return 1;
  sweep_exp(x, y, -110.0f, 90.0f);
  sweep_exp(x, y, -1.0f, 1.0f);
  sweep_erf(x, y, -6.0f, 6.0f);
  sweep_erf(x, y, -1e-3f, 1e-3f);
  sweep_erf(x, y, 0.9f, 1.1f);
  special[0] = INFINITY;
  special[1] = -INFINITY;
  special[2] = NAN;
  special[3] = -NAN;
  special[4] = 0.0f;
  special[5] = -0.0f;
  for (i = 0; i < 6; ++i)
    out[i] = ref_expf(special[i]);
  CHECK(isinf(out[0]) && out[0] > 0 && out[1] == 0 && isnan(out[2]) && isnan(out[3]) &&
            out[4] == 1 && out[5] == 1,
        "exp(inf, -inf, nan, -nan, 0, -0) = %g %g %g %g %g %g", out[0], out[1], out[2], out[3],
        out[4], out[5]);
  for (i = 0; i < 6; ++i)
    out[i] = ref_erff(special[i]);
  CHECK(out[0] == 1 && out[1] == -1 && isnan(out[2]) && isnan(out[3]) && out[4] == 0 &&
            out[5] == 0 && signbit(out[5]),
        "erf(inf, -inf, nan, -nan, 0, -0) = %g %g %g %g %g %g", out[0], out[1], out[2], out[3],
        out[4], out[5]);
  free(x);
  free(y);
  return failures != 0;
}
