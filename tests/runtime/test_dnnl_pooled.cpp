// libodla_dnnl's large products on a busy machine (runtime_stubs/dnnl/blockpool.cpp and
// compile.cpp's column blocks): runBlocks runs each block once and a stalled thread strands no
// block; an ExtGemm by constant weights (bias, residual, activation, alpha, transposes, a last
// block of fewer columns) run on one thread with its blocks over 3 threads, and whole, against
// double loops.
#include <gtest/gtest.h>

#include "blockpool.h"

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <thread>
#include <vector>

namespace {

TEST(RunBlocks, EachBlockOnceAndAStalledThreadStrandsNothing) {
  // block 0 stalls its thread for 300 ms (a thread the scheduler gave another process); the
  // other threads take the 63 blocks of 1 ms left, and the stalled one takes no other
  constexpr int n = 64;
  std::vector<std::atomic<int>> runs(n);
  std::vector<std::thread::id> by(n);
  const auto start = std::chrono::steady_clock::now();
  odla_dnnl::runBlocks(n, 3, [&](int b) {
    runs[size_t(b)]++;
    by[size_t(b)] = std::this_thread::get_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(b == 0 ? 300 : 1));
  });
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (int b = 0; b < n; ++b)
    EXPECT_EQ(runs[size_t(b)].load(), 1) << "block " << b;
  EXPECT_EQ(std::count(by.begin(), by.end(), by[0]), 1);
  EXPECT_LT(ms, 300 + 200);
  // each index once again, many times over (the helpers' claims of one call never leak into
  // the next)
  for (int round = 0; round < 200; ++round) {
    std::vector<std::atomic<int>> again(size_t(round % 7 + 2));
    odla_dnnl::runBlocks(int(again.size()), 2 + round % 3, [&](int b) { again[size_t(b)]++; });
    for (auto &r : again)
      ASSERT_EQ(r.load(), 1) << "round " << round;
  }
}

// A product by constant weights as an ODLA ExtGemm: y = act(alpha op(A) op(B) + C + residual).
struct PooledCase {
  int64_t m, k, n;
  bool trans_a, trans_b, bias, residual;
  float alpha;
  odla_ext_fused_activation act;
};

class PooledProducts : public ::testing::TestWithParam<PooledCase> {};

odla_value_type f32Type(std::initializer_list<int64_t> dims) {
  odla_value_type t{};
  t.element_type = ODLA_FLOAT32;
  t.shape.size = int(dims.size());
  int i = 0;
  for (int64_t d : dims)
    t.shape.dims[i++] = d;
  return t;
}

// A run on one thread with PooledScope(3) (what api.cpp sets where its ThreadChooser chose one
// thread) runs the product's column blocks over 3 threads; one without runs the primitive
// whole. Both against double loops.
TEST_P(PooledProducts, BlocksOverThreeThreadsAgreeWithTheDefinition) {
  const PooledCase t = GetParam();
  std::vector<float> a(size_t(t.m * t.k)), b(size_t(t.k * t.n)), c(size_t(t.n)),
      r(size_t(t.m * t.n)), y(size_t(t.m * t.n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i * 37 % 101) - 50) / 50.0f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float(int(i * 53 % 97) - 48) / 480.0f;
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = float(int(i % 11) - 5) / 10.0f;
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = float(int(i % 13) - 6) / 4.0f;
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value av = odla_CreateArgument(t.trans_a ? f32Type({t.k, t.m}) : f32Type({t.m, t.k}),
                                      (odla_value_id) "a");
  odla_value bv = odla_CreateConstant(t.trans_b ? f32Type({t.n, t.k}) : f32Type({t.k, t.n}),
                                      b.data(), (odla_value_id) "b");
  odla_value cv =
      t.bias ? odla_CreateConstant(f32Type({t.n}), c.data(), (odla_value_id) "c") : nullptr;
  odla_value rv =
      t.residual ? odla_CreateArgument(f32Type({t.m, t.n}), (odla_value_id) "r") : nullptr;
  odla_value yv = odla_ExtGemm(av, t.trans_a, bv, t.trans_b, t.alpha, 1.0f, cv, rv, t.act, 0, 0,
                               f32Type({t.m, t.n}).shape, (odla_value_id) "y");
  ASSERT_TRUE(yv);
  ASSERT_EQ(odla_SetValueAsOutput(yv), ODLA_SUCCESS);
  std::vector<double> want(y.size());
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < t.k; ++p)
        sum += double(a[size_t(t.trans_a ? p * t.m + i : i * t.k + p)]) *
               b[size_t(t.trans_b ? j * t.k + p : p * t.n + j)];
      double v =
          t.alpha * sum + (t.bias ? c[size_t(j)] : 0) + (t.residual ? r[size_t(i * t.n + j)] : 0);
      if (t.act == ODLA_EXT_FUSED_GELU)
        v = v * (1 + std::erf(v / std::sqrt(2.0))) / 2;
      else if (t.act == ODLA_EXT_FUSED_RELU)
        v = std::max(v, 0.0);
      want[size_t(i * t.n + j)] = v;
    }
  for (int pooled : {3, 0, 3}) {
    odla_context ctx;
    ASSERT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
    odla_int32 one = 1;
    ASSERT_EQ(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&one), ODLA_SUCCESS);
    odla_BindToArgumentById((odla_value_id) "a", a.data(), ctx);
    if (t.residual)
      odla_BindToArgumentById((odla_value_id) "r", r.data(), ctx);
    odla_BindToOutputById((odla_value_id) "y", y.data(), ctx);
    std::fill(y.begin(), y.end(), NAN);
    const uint64_t jobs = odla_dnnl::blockJobs();
    {
      odla_dnnl::PooledScope scope(pooled);
      ASSERT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
    }
    EXPECT_EQ(odla_dnnl::blockJobs() - jobs, pooled ? 1u : 0u) << "pooled " << pooled;
    odla_DestroyContext(ctx);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-4 * (std::fabs(want[i]) + 1))
          << "element " << i << ", pooled " << pooled;
  }
  odla_DestroyComputation(comp);
}

INSTANTIATE_TEST_SUITE_P(
    Gemms, PooledProducts,
    ::testing::Values(
        // bias, residual and GELU in the blocks; 424 columns: 3 blocks of 128 and one of 40
        PooledCase{128, 1280, 424, false, false, true, true, 1.0f, ODLA_EXT_FUSED_GELU},
        // B transposed, alpha as the output scale, ReLU
        PooledCase{100, 768, 896, false, true, false, false, 0.5f, ODLA_EXT_FUSED_RELU},
        // A and B transposed (A read through strides), 300 columns
        PooledCase{128, 2048, 300, true, true, true, false, 1.0f, ODLA_EXT_FUSED_NONE}));

} // namespace
