// libodla_dnnl's product of one row by packed weights (runtime_stubs/dnnl/rowproduct.cpp)
// against double-precision sums of the unpacked weights: every column count around the
// 64-column panels and their 16-float vectors (the masked tail), weights stored k x n and
// n x k, no bias, a broadcast one and one per column, alpha, the residual, the ReLU (with a NaN),
// on 1 to 3 threads (the panels split unevenly, and the two-panel walk's odd one left).
// Decoders on it are checked against PyTorch by e2e.generate and the GPT-2 test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <omp.h>

#include "dnnl_backend.h"

namespace {

struct Case {
  int64_t k, n;
  bool trans_b;
  int bias; /* 0 none, 1 broadcast, 2 per column */
  float alpha;
  bool residual, relu;
};

void check(const Case &c, int threads, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(c.k * c.n)), x(static_cast<size_t>(c.k)),
      bias(c.bias == 2 ? static_cast<size_t>(c.n) : 1), res(static_cast<size_t>(c.n)),
      y(static_cast<size_t>(c.n) + 16, 7.0f);
  for (float &v : w)
    v = u(rng);
  for (float &v : x)
    v = u(rng);
  for (float &v : bias)
    v = u(rng);
  for (float &v : res)
    v = u(rng);
  if (c.relu && c.n > 3)
    res[3] = NAN; /* ReLU of NaN: 0, as the reference backend's */
  auto panels = odla_dnnl::rowPanels(w.data(), c.k, c.n, c.trans_b);
  odla_dnnl::RowProduct p;
  p.panels = static_cast<const float *>(panels.get());
  p.k = c.k;
  p.n = c.n;
  p.alpha = c.alpha;
  p.bias_count = c.bias == 0 ? 0 : c.bias == 1 ? 1 : c.n;
  p.relu = c.relu;
  omp_set_num_threads(threads);
  odla_dnnl::rowProduct(p, x.data(), c.bias ? bias.data() : nullptr,
                        c.residual ? res.data() : nullptr, y.data());
  for (int64_t j = 0; j < c.n; ++j) {
    double sum = 0.0, mag = 0.0;
    for (int64_t i = 0; i < c.k; ++i) {
      const double wij =
          c.trans_b ? w[static_cast<size_t>(j * c.k + i)] : w[static_cast<size_t>(i * c.n + j)];
      sum += x[static_cast<size_t>(i)] * wij;
      mag += std::fabs(x[static_cast<size_t>(i)] * wij);
    }
    double want = c.alpha * sum;
    if (c.bias)
      want += bias[c.bias == 1 ? 0 : static_cast<size_t>(j)];
    if (c.residual)
      want += res[static_cast<size_t>(j)];
    if (c.relu)
      want = std::isnan(want) ? 0.0 : std::max(want, 0.0);
    const float got = y[static_cast<size_t>(j)];
    ASSERT_NEAR(got, want, 1e-6 * (std::fabs(c.alpha) * mag + 4.0))
        << "k " << c.k << " n " << c.n << " column " << j << " trans_b " << c.trans_b << " bias "
        << c.bias << " threads " << threads;
  }
  for (int64_t j = c.n; j < c.n + 16; ++j)
    ASSERT_EQ(y[static_cast<size_t>(j)], 7.0f) << "wrote past column " << c.n;
}

TEST(DnnlRowProduct, MatchesDoubleSums) {
  if (!odla_dnnl::rowProductAvailable())
    GTEST_SKIP() << "no AVX-512 here: libodla_dnnl runs these products on oneDNN";
  std::mt19937 rng(7);
  const int64_t ks[] = {1, 3, 64, 100};
  const int64_t ns[] = {1, 15, 16, 17, 63, 64, 65, 130, 200, 321};
  int cases = 0;
  for (int64_t k : ks)
    for (int64_t n : ns)
      for (int t = 0; t < 8; ++t) {
        Case c{k, n, (t & 1) != 0, t % 3, (t & 4) ? 0.5f : 1.0f, (t & 2) != 0, (t & 4) != 0};
        for (int threads = 1; threads <= 3; ++threads)
          check(c, threads, rng);
        ++cases;
      }
  EXPECT_EQ(cases, 4 * 10 * 8);
}

TEST(DnnlRowProduct, LargeProductsSplitOverThreads) {
  if (!odla_dnnl::rowProductAvailable())
    GTEST_SKIP() << "no AVX-512 here: libodla_dnnl runs these products on oneDNN";
  std::mt19937 rng(11);
  /* Above the one-thread limit: 2 to 3 threads, panel counts that do not divide evenly. */
  for (const Case &c : {Case{768, 1000, false, 2, 1.0f, true, false},
                        Case{300, 64 * 7 + 5, true, 1, 1.0f, false, true},
                        Case{1024, 130, false, 0, 2.0f, false, false}})
    for (int threads = 1; threads <= 3; ++threads)
      check(c, threads, rng);
}

TEST(DnnlRowProduct, PacksOnceForComputationsAlive) {
  if (!odla_dnnl::rowProductAvailable())
    GTEST_SKIP() << "no AVX-512 here";
  std::vector<float> w(64 * 96, 1.0f);
  auto a = odla_dnnl::rowPanels(w.data(), 64, 96, false);
  auto b = odla_dnnl::rowPanels(w.data(), 64, 96, false);
  auto t = odla_dnnl::rowPanels(w.data(), 64, 96, true);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), t.get()); /* the other storage order is another packing */
}

} // namespace
