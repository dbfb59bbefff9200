// libodla_dnnl's swish pass (runtime_stubs/dnnl/swish.cpp) against x / (1 + exp(-x)) in double
// precision: every float in [-20, 20] at a 1/512 step, the saturating ends, signed zeros, NaN, and
// buffer lengths that leave every tail size (the kernel masks the last 16 floats).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace odla_dnnl { // swish.cpp, as dnnl_backend.h declares it
bool fastSwish();
void swishInPlace(float *x, size_t n);
} // namespace odla_dnnl

namespace {

double swishExact(double x) { return x / (1.0 + std::exp(-x)); }

TEST(DnnlSwish, MatchesExactFunction) {
  if (!odla_dnnl::fastSwish())
    GTEST_SKIP() << "no AVX-512 here: libodla_dnnl keeps oneDNN's swish post-op";
  std::vector<float> x;
  for (int i = -20 * 512; i <= 20 * 512; ++i)
    x.push_back(static_cast<float>(i) / 512.0f);
  for (float v : {-1e30f, -200.0f, -88.0f, -87.5f, 87.5f, 88.0f, 200.0f, 1e30f, 1e-30f, -1e-30f,
                  0.0f, -0.0f})
    x.push_back(v);
  std::vector<float> y = x;
  odla_dnnl::swishInPlace(y.data(), y.size());
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = swishExact(x[i]);
    // Relative error, with an absolute floor of 1e-35 where swish underflows (x < -87: 0).
    const double err = std::fabs(y[i] - want) / std::max(std::fabs(want), 1e-35);
    if (std::fabs(want) > 1e-35)
      worst = std::max(worst, err);
    ASSERT_TRUE(std::isfinite(y[i])) << "x=" << x[i];
    ASSERT_LE(std::fabs(y[i] - want), 3e-7 * std::fabs(want) + 1e-35) << "x=" << x[i];
  }
  EXPECT_LT(worst, 3e-7);
  float nan[1] = {std::nanf("")};
  odla_dnnl::swishInPlace(nan, 1);
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST(DnnlSwish, EveryTailLength) {
  if (!odla_dnnl::fastSwish())
    GTEST_SKIP() << "no AVX-512 here";
  for (size_t n = 0; n <= 40; ++n) {
    std::vector<float> y(n + 1, 1.0f);
    y[n] = 12345.0f; // past the end: must stay untouched
    odla_dnnl::swishInPlace(y.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_NEAR(y[i], swishExact(1.0), 3e-7) << "n=" << n << " i=" << i;
    ASSERT_EQ(y[n], 12345.0f) << "n=" << n;
  }
}

} // namespace
