// libodla_dnnl's swish pass (runtime_stubs/dnnl/swish.cpp) against x / (1 + exp(-x)) in double
// precision: every 64th float in [-87, 87], the saturating ends, signed zeros, NaN, and
// buffer lengths that leave every tail size (the kernel masks the last 16 floats); and the pass
// that also averages each nChw16c channel (a fused global average pool) against double sums,
// for block counts and position counts that split the work unevenly between threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <omp.h>

namespace odla_dnnl { // swish.cpp, as dnnl_backend.h declares it
bool fastSwish();
void swishInPlace(float *x, size_t n);
void swishPoolInPlace(float *x, float *mean, size_t blocks, size_t hw);
} // namespace odla_dnnl

namespace {

double swishExact(double x) { return x / (1.0 + std::exp(-x)); }

uint32_t bitsOf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

TEST(DnnlSwish, MatchesExactFunction) {
  if (!odla_dnnl::fastSwish())
    GTEST_SKIP() << "no AVX-512 here: libodla_dnnl keeps oneDNN's swish post-op";
  std::vector<float> x;
  for (uint32_t bits = bitsOf(1e-30f); bits <= bitsOf(87.0f); bits += 64) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v :
       {-1e30f, -200.0f, -88.0f, -87.5f, 87.5f, 88.0f, 200.0f, 1e30f, 1e-30f, -1e-30f, 0.0f, -0.0f})
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

TEST(DnnlSwish, PoolAveragesEachChannel) {
  if (!odla_dnnl::fastSwish())
    GTEST_SKIP() << "no AVX-512 here";
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (int threads : {1, 2, 3})
    for (size_t blocks : {1, 2, 3, 9, 72})
      for (size_t hw : {1, 5, 49, 196, 3136}) {
        omp_set_num_threads(threads);
        std::vector<float> x(blocks * hw * 16);
        for (float &v : x)
          v = normal(rng);
        std::vector<float> y = x, mean(blocks * 16 + 1, -1.0f);
        mean.back() = 12345.0f; // past the end: must stay untouched
        odla_dnnl::swishPoolInPlace(y.data(), mean.data(), blocks, hw);
        for (size_t b = 0; b < blocks; ++b)
          for (size_t c = 0; c < 16; ++c) {
            double sum = 0.0, mag = 0.0;
            for (size_t i = 0; i < hw; ++i) {
              const size_t at = (b * hw + i) * 16 + c;
              const double want = swishExact(x[at]);
              ASSERT_LE(std::fabs(y[at] - want), 3e-7 * std::fabs(want) + 1e-35) << "x=" << x[at];
              sum += want;
              mag += std::fabs(want);
            }
            // Float sums over hw terms: within 1e-6 of the sum of magnitudes.
            ASSERT_NEAR(mean[b * 16 + c], sum / hw, 1e-6 * mag / hw + 1e-30)
                << "threads=" << threads << " blocks=" << blocks << " hw=" << hw << " b=" << b
                << " c=" << c;
          }
        ASSERT_EQ(mean.back(), 12345.0f);
      }
  omp_set_num_threads(1);
}

} // namespace
