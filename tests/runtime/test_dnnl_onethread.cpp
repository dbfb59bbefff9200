// libodla_dnnl running a computation made for several threads on one (runtime_stubs/dnnl/
// onethread.cpp). ThreadedPrimitive: convolutions made for 3 OpenMP threads (1 x 1 at strides
// 1 and 2, 3 x 3 that may take Winograd, depthwise; oneDNN picks the layouts), run on 3 threads
// and on 1 (the twin, with constant weights it may reorder into a layout of its own: a
// Winograd convolution's twin is a Winograd one where its scratchpad fits, else a direct
// one), both against plain double loops; int8
// convolutions and a matmul as lowerQuantized makes them (zero points, per-channel scales),
// against the requantized integer sums; ExtLayerNorm's and ExtAttention's primitives.
// ThreadChooser: its choice over synthetic run times and preemptions, an idle machine (the
// default count stays, one thread tried once), a busy one (one thread chosen, the default retried
// ever less often), a load that comes and goes, runs of another count, and preempted default
// runs that start one thread's trial early.
#include <gtest/gtest.h>

#include "dnnl_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using dnnl::memory;
using odla_dnnl::ThreadChooser;
using odla_dnnl::ThreadedPrimitive;
using odla_dnnl::ThreadScope;

// The thread counts each primitive below, made for 3, runs at: made, its twin (made on its
// first run), the twin again, made again.
constexpr int kRunThreads[] = {3, 1, 1, 3};

struct ConvCase {
  memory::dim c, o, hw, k, stride, groups;
  bool winograd = false; // asks for Winograd: the twin is Winograd too where its scratch fits
};

// y[o][p] = sum over the group's inputs and the window of x * w (zero padding k / 2).
std::vector<double> naiveConv(const ConvCase &t, const std::vector<float> &x,
                              const std::vector<float> &w, memory::dim out_hw) {
  const memory::dim cg = t.c / t.groups, og = t.o / t.groups, pad = t.k / 2;
  std::vector<double> y(static_cast<size_t>(t.o * out_hw * out_hw));
  for (memory::dim o = 0; o < t.o; ++o)
    for (memory::dim oy = 0; oy < out_hw; ++oy)
      for (memory::dim ox = 0; ox < out_hw; ++ox) {
        double sum = 0;
        for (memory::dim ci = 0; ci < cg; ++ci)
          for (memory::dim ky = 0; ky < t.k; ++ky)
            for (memory::dim kx = 0; kx < t.k; ++kx) {
              const memory::dim iy = oy * t.stride + ky - pad, ix = ox * t.stride + kx - pad;
              if (iy < 0 || iy >= t.hw || ix < 0 || ix >= t.hw)
                continue;
              const memory::dim c = o / og * cg + ci;
              sum += double(x[size_t((c * t.hw + iy) * t.hw + ix)]) *
                     w[size_t(((o * cg + ci) * t.k + ky) * t.k + kx)];
            }
        y[size_t((o * out_hw + oy) * out_hw + ox)] = sum;
      }
  return y;
}

class Twins : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Twins, OneThreadRunsAgreeWithTheDefinition) {
  const ConvCase t = GetParam();
  const memory::dim pad = t.k / 2, out_hw = (t.hw + 2 * pad - t.k) / t.stride + 1;
  std::vector<float> x(size_t(t.c * t.hw * t.hw)), w(size_t(t.o * t.c / t.groups * t.k * t.k));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i * 37 % 29) - 14) / 14.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int(i * 13 % 19) - 9) / 40.0f;
  const std::vector<double> want = naiveConv(t, x, w, out_hw);

  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  memory::dims wdims = {t.o, t.c, t.k, t.k};
  memory::format_tag wtag = memory::format_tag::oihw;
  if (t.groups > 1) {
    wdims = {t.groups, t.o / t.groups, t.c / t.groups, t.k, t.k};
    wtag = memory::format_tag::goihw;
  }
  ThreadedPrimitive prim;
  dnnl::convolution_forward::primitive_desc pd;
  bool wino_fits = false; // a one-thread Winograd primitive's scratchpad fits in pd's
  {
    ThreadScope three(3); // made for 3 threads, as a computation compiled at 3
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto alg = t.winograd                  ? dnnl::algorithm::convolution_winograd
                     : t.k == 3 && t.groups == 1 ? dnnl::algorithm::convolution_auto
                                                 : dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, alg, memory::desc({1, t.c, t.hw, t.hw}, f32, any),
        memory::desc(wdims, f32, any), memory::desc({1, t.o, out_hw, out_hw}, f32, any),
        {t.stride, t.stride}, {pad, pad}, {pad, pad});
    pd = dnnl::convolution_forward::primitive_desc(d, attr, odla_dnnl::cpuEngine());
    prim = dnnl::convolution_forward(pd);
    prim.constantWeights(memory::desc(wdims, f32, wtag), w.data());
    if (t.winograd) {
      ThreadScope one(1);
      const dnnl::convolution_forward::primitive_desc one_pd(d, attr, odla_dnnl::cpuEngine());
      wino_fits = one_pd.scratchpad_desc().get_size() <= pd.scratchpad_desc().get_size();
    }
  }
  dnnl::engine &eng = odla_dnnl::cpuEngine();
  dnnl::stream &s = odla_dnnl::threadStream();
  memory x_plain({{1, t.c, t.hw, t.hw}, f32, memory::format_tag::nchw}, eng, x.data());
  memory w_plain({wdims, f32, wtag}, eng, w.data());
  memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng), ym(pd.dst_desc(), eng),
      pad_mem(pd.scratchpad_desc(), eng);
  dnnl::reorder(x_plain, xm).execute(s, x_plain, xm);
  dnnl::reorder(w_plain, wm).execute(s, w_plain, wm);
  std::vector<float> y(size_t(t.o * out_hw * out_hw));
  memory y_plain({{1, t.o, out_hw, out_hw}, f32, memory::format_tag::nchw}, eng, y.data());
  for (int threads : kRunThreads) {
    ThreadScope scope(threads);
    std::fill(y.begin(), y.end(), NAN);
    prim.execute(s, {{DNNL_ARG_SRC, xm},
                     {DNNL_ARG_WEIGHTS, wm},
                     {DNNL_ARG_DST, ym},
                     {DNNL_ARG_SCRATCHPAD, pad_mem}});
    dnnl::reorder(ym, y_plain).execute(s, ym, y_plain);
    s.wait();
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-4 * (std::fabs(want[i]) + 1))
          << "output " << i << " at " << threads << " thread(s)";
  }
  if (t.winograd) { // the twin is Winograd exactly where one fits the scratchpad
    EXPECT_EQ(prim.oneImplementation().find("wino") != std::string::npos, wino_fits)
        << "the twin is " << prim.oneImplementation();
  }
}

INSTANTIATE_TEST_SUITE_P(Convolutions, Twins,
                         ::testing::Values(ConvCase{64, 256, 28, 1, 1, 1},  // 1 x 1
                                           ConvCase{256, 128, 28, 1, 2, 1}, // 1 x 1, stride 2
                                           ConvCase{64, 64, 28, 3, 1, 1},   // 3 x 3
                                           ConvCase{96, 96, 28, 3, 2, 96},  // depthwise
                                           // Winograd (ResNet-50's): at 1 thread the first
                                           // wants more scratch than at 3, the second not
                                           ConvCase{64, 64, 56, 3, 1, 1, true},
                                           ConvCase{256, 256, 14, 3, 1, 1, true}));

// An int8 product as lowerQuantized makes it: u8 data with a run-time zero point, constant s8
// weights (plain, which the twin may lay out otherwise), an s32 bias, per-output-channel float
// scales, u8 results with a run-time zero point. Made for 3 threads, run at kRunThreads; each
// result within one step of the requantized double sum (oneDNN scales in float32).
struct Int8Case {
  bool conv; // else a matmul of rows x k by k x o
  memory::dim c, o, hw, k;
};

class Int8Twins : public ::testing::TestWithParam<Int8Case> {};

TEST_P(Int8Twins, OneThreadRunsAgreeWithTheDefinition) {
  const Int8Case t = GetParam();
  const int32_t x0 = 3, y0 = 5;
  const memory::dim pad = t.conv ? t.k / 2 : 0, rows = t.conv ? t.hw * t.hw : t.hw;
  const memory::dim taps = t.conv ? t.k * t.k : 1;
  std::vector<uint8_t> x(size_t(t.c * rows));
  std::vector<int> wv(size_t(t.o * t.c * taps)); // conv: o x c x taps; matmul: c x o
  std::vector<int8_t> w(wv.size());
  std::vector<int32_t> bias(size_t(t.o));
  std::vector<float> scales(size_t(t.o));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = uint8_t(i * 37 % 251);
  for (size_t i = 0; i < w.size(); ++i) {
    wv[i] = int(i * 13 % 255) - 127;
    w[i] = static_cast<int8_t>(wv[i]);
  }
  for (memory::dim o = 0; o < t.o; ++o) {
    bias[size_t(o)] = int32_t(o * 97 % 2001) - 1000;
    scales[size_t(o)] = 1.0f / float(2000 + 37 * o);
  }
  // want[o][p] (conv, p over the output map) or want[r][o] (matmul) before rounding
  std::vector<double> want(size_t(t.o * rows));
  for (memory::dim o = 0; o < t.o; ++o)
    for (memory::dim p = 0; p < rows; ++p) {
      int64_t acc = bias[size_t(o)];
      for (memory::dim ci = 0; ci < t.c; ++ci)
        for (memory::dim tap = 0; tap < taps; ++tap) {
          memory::dim xi;
          if (t.conv) {
            const memory::dim iy = p / t.hw + tap / t.k - pad, ix = p % t.hw + tap % t.k - pad;
            if (iy < 0 || iy >= t.hw || ix < 0 || ix >= t.hw)
              continue; // padding: the zero point, (x - x0) = 0
            xi = (ci * t.hw + iy) * t.hw + ix;
          } else {
            xi = p * t.c + ci;
          }
          const int64_t wo =
              t.conv ? wv[size_t((o * t.c + ci) * taps + tap)] : wv[size_t(ci * t.o + o)];
          acc += (int64_t(x[size_t(xi)]) - x0) * wo;
        }
      want[size_t(t.conv ? o * rows + p : p * t.o + o)] = double(acc) * scales[size_t(o)] + y0;
    }

  const auto u8 = memory::data_type::u8, s8 = memory::data_type::s8, s32 = memory::data_type::s32;
  const auto any = memory::format_tag::any;
  const memory::dims xdims = t.conv ? memory::dims{1, t.c, t.hw, t.hw} : memory::dims{rows, t.c},
                     wdims = t.conv ? memory::dims{t.o, t.c, t.k, t.k} : memory::dims{t.c, t.o},
                     ydims = t.conv ? memory::dims{1, t.o, t.hw, t.hw} : memory::dims{rows, t.o};
  const memory::desc x_plain(xdims, u8, t.conv ? memory::format_tag::nchw : memory::format_tag::ab),
      w_plain(wdims, s8, t.conv ? memory::format_tag::oihw : memory::format_tag::ab),
      y_plain(ydims, u8, t.conv ? memory::format_tag::nchw : memory::format_tag::ab);
  ThreadedPrimitive prim;
  memory::desc src_md, wei_md, bias_md, dst_md, pad_md;
  {
    ThreadScope three(3);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_output_scales(1 << 1, scales); // per dim 1: the channels, the columns
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    if (t.conv) {
      dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          memory::desc(xdims, u8, any), memory::desc(wdims, s8, any),
          memory::desc({t.o}, s32, memory::format_tag::a), memory::desc(ydims, u8, any), {1, 1},
          {pad, pad}, {pad, pad});
      dnnl::convolution_forward::primitive_desc pd(d, attr, odla_dnnl::cpuEngine());
      prim = dnnl::convolution_forward(pd);
      src_md = pd.src_desc(), wei_md = pd.weights_desc(), bias_md = pd.bias_desc();
      dst_md = pd.dst_desc(), pad_md = pd.scratchpad_desc();
    } else {
      dnnl::matmul::desc d(x_plain, memory::desc(wdims, s8, any),
                           memory::desc({1, t.o}, s32, memory::format_tag::ab), y_plain);
      dnnl::matmul::primitive_desc pd(d, attr, odla_dnnl::cpuEngine());
      prim = dnnl::matmul(pd);
      src_md = pd.src_desc(), wei_md = pd.weights_desc(), bias_md = pd.bias_desc();
      dst_md = pd.dst_desc(), pad_md = pd.scratchpad_desc();
    }
    prim.constantWeights(w_plain, w.data());
  }
  dnnl::engine &eng = odla_dnnl::cpuEngine();
  dnnl::stream &s = odla_dnnl::threadStream();
  memory xp(x_plain, eng, x.data()), wp(w_plain, eng, w.data());
  memory xm(src_md, eng), wm(wei_md, eng), bm(bias_md, eng, bias.data()), ym(dst_md, eng),
      pad_mem(pad_md, eng);
  int32_t zx = x0, zy = y0;
  memory zxm({{1}, s32, memory::format_tag::a}, eng, &zx),
      zym({{1}, s32, memory::format_tag::a}, eng, &zy);
  dnnl::reorder(xp, xm).execute(s, xp, xm);
  dnnl::reorder(wp, wm).execute(s, wp, wm);
  std::vector<uint8_t> y(want.size());
  memory yp(y_plain, eng, y.data());
  for (int threads : kRunThreads) {
    ThreadScope scope(threads);
    std::fill(y.begin(), y.end(), uint8_t(0));
    prim.execute(s, {{DNNL_ARG_SRC, xm},
                     {DNNL_ARG_WEIGHTS, wm},
                     {DNNL_ARG_BIAS, bm},
                     {DNNL_ARG_DST, ym},
                     {DNNL_ARG_SCRATCHPAD, pad_mem},
                     {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zxm},
                     {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zym}});
    dnnl::reorder(ym, yp).execute(s, ym, yp);
    s.wait();
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(double(y[i]), std::min(255.0, std::max(0.0, std::nearbyint(want[i]))), 1.0)
          << "output " << i << " at " << threads << " thread(s)";
  }
}

INSTANTIATE_TEST_SUITE_P(Products, Int8Twins,
                         ::testing::Values(Int8Case{true, 64, 128, 14, 1},     // 1 x 1
                                           Int8Case{true, 32, 48, 14, 3},      // 3 x 3
                                           Int8Case{false, 256, 384, 96, 1})); // matmul

// A transformer layer's primitives as transformer.cpp makes them, made for 3 threads and run at
// kRunThreads: ExtLayerNorm's layer normalization (scale and shift) over 197 rows of 768, and
// ExtAttention's scores matmul reading query and key^T through strided views of [tokens,
// heads x 64] rows, scaled, with a mask added by a binary post-op; against double loops.
TEST(TransformerTwins, LayerNormAgreesWithTheDefinition) {
  const memory::dim rows = 197, cols = 768;
  const float eps = 1e-5f;
  std::vector<float> x(static_cast<size_t>(rows * cols)), gamma(static_cast<size_t>(cols)),
      beta(static_cast<size_t>(cols));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i * 37 % 101) - 50) / 25.0f + float(i / size_t(cols) % 7);
  for (size_t i = 0; i < gamma.size(); ++i) {
    gamma[i] = 0.5f + float(i % 13) / 13.0f;
    beta[i] = float(int(i % 11) - 5) / 10.0f;
  }
  const auto f32 = memory::data_type::f32;
  const memory::desc data({rows, cols}, f32, memory::format_tag::ab),
      param({cols}, f32, memory::format_tag::a);
  ThreadedPrimitive prim;
  dnnl::layer_normalization_forward::primitive_desc pd;
  {
    ThreadScope three(3);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, data, eps,
                                              dnnl::normalization_flags::use_scale |
                                                  dnnl::normalization_flags::use_shift);
    pd = dnnl::layer_normalization_forward::primitive_desc(d, attr, odla_dnnl::cpuEngine());
    prim = dnnl::layer_normalization_forward(pd);
  }
  dnnl::engine &eng = odla_dnnl::cpuEngine();
  dnnl::stream &s = odla_dnnl::threadStream();
  std::vector<float> y(x.size());
  memory xm(data, eng, x.data()), ym(data, eng, y.data()), gm(param, eng, gamma.data()),
      bm(param, eng, beta.data()), mean(pd.mean_desc(), eng), var(pd.variance_desc(), eng),
      pad(pd.scratchpad_desc(), eng);
  for (int threads : kRunThreads) {
    ThreadScope scope(threads);
    std::fill(y.begin(), y.end(), NAN);
    prim.execute(s, {{DNNL_ARG_SRC, xm},
                     {DNNL_ARG_DST, ym},
                     {DNNL_ARG_SCALE, gm},
                     {DNNL_ARG_SHIFT, bm},
                     {DNNL_ARG_MEAN, mean},
                     {DNNL_ARG_VARIANCE, var},
                     {DNNL_ARG_SCRATCHPAD, pad}});
    s.wait();
    for (memory::dim r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (memory::dim c = 0; c < cols; ++c)
        m += x[size_t(r * cols + c)];
      m /= double(cols);
      for (memory::dim c = 0; c < cols; ++c)
        v += (x[size_t(r * cols + c)] - m) * (x[size_t(r * cols + c)] - m);
      v /= double(cols);
      for (memory::dim c = 0; c < cols; ++c) {
        const double want =
            (x[size_t(r * cols + c)] - m) / std::sqrt(v + eps) * gamma[size_t(c)] + beta[size_t(c)];
        ASSERT_NEAR(y[size_t(r * cols + c)], want, 1e-4 * (std::fabs(want) + 1))
            << "row " << r << " column " << c << " at " << threads << " thread(s)";
      }
    }
  }
}

TEST(TransformerTwins, AttentionScoresAgreeWithTheDefinition) {
  const memory::dim heads = 12, t = 197, d = 64, e = heads * d;
  const float alpha = 0.125f;
  std::vector<float> q(size_t(t * e)), k(size_t(t * e)), mask(size_t(t * t));
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = float(int(i * 37 % 61) - 30) / 30.0f;
    k[i] = float(int(i * 11 % 53) - 26) / 26.0f;
  }
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = i % size_t(t) > i / size_t(t) ? -10000.0f : 0.0f; // causal
  const auto f32 = memory::data_type::f32;
  // head h of token i at q[i * e + h * d]: strided views, as ExtAttention reads a Gemm's rows
  const memory::desc qv({1, heads, t, d}, f32, {t * e, d, e, 1}),
      ktv({1, heads, d, t}, f32, {t * e, d, 1, e}),
      sv({1, heads, t, t}, f32, {heads * t * t, t * t, t, 1}),
      mv({1, 1, t, t}, f32, {t * t, t * t, t, 1});
  ThreadedPrimitive prim;
  dnnl::matmul::primitive_desc pd;
  {
    ThreadScope three(3);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_output_scales(0, {alpha});
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, mv);
    attr.set_post_ops(ops);
    pd =
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(qv, ktv, sv), attr, odla_dnnl::cpuEngine());
    prim = dnnl::matmul(pd);
  }
  dnnl::engine &eng = odla_dnnl::cpuEngine();
  dnnl::stream &s = odla_dnnl::threadStream();
  std::vector<float> scores(size_t(heads * t * t));
  memory qm(qv, eng, q.data()), km(ktv, eng, k.data()), sm(sv, eng, scores.data()),
      mm(mv, eng, mask.data()), pad(pd.scratchpad_desc(), eng);
  for (int threads : kRunThreads) {
    ThreadScope scope(threads);
    std::fill(scores.begin(), scores.end(), NAN);
    prim.execute(s, {{DNNL_ARG_SRC, qm},
                     {DNNL_ARG_WEIGHTS, km},
                     {DNNL_ARG_DST, sm},
                     {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mm},
                     {DNNL_ARG_SCRATCHPAD, pad}});
    s.wait();
    for (memory::dim h = 0; h < heads; ++h)
      for (memory::dim i = 0; i < t; ++i)
        for (memory::dim j = 0; j < t; ++j) {
          double dot = 0;
          for (memory::dim c = 0; c < d; ++c)
            dot += double(q[size_t(i * e + h * d + c)]) * k[size_t(j * e + h * d + c)];
          const double want = alpha * dot + mask[size_t(i * t + j)];
          ASSERT_NEAR(scores[size_t((h * t + i) * t + j)], want, 1e-4 * (std::fabs(want) + 1))
              << "head " << h << " (" << i << ", " << j << ") at " << threads << " thread(s)";
        }
  }
}

// Feeds `chooser` runs timed by `ms(one, run)`, preempted `per_second(one, run)` times a second
// of each, and returns how many took one thread.
template <class F, class P>
int feed(ThreadChooser &chooser, int runs, F ms, int first, P per_second) {
  int ones = 0;
  for (int i = first; i < first + runs; ++i) {
    const bool one = chooser.oneNext();
    ones += one;
    const double seconds = ms(one, i) * 1e-3;
    chooser.record(one, seconds, std::lround(per_second(one, i) * seconds));
  }
  return ones;
}
template <class F> int feed(ThreadChooser &chooser, int runs, F ms, int first = 0) {
  return feed(chooser, runs, ms, first, [](bool, int) { return 0.0; });
}

constexpr int K = ThreadChooser::kRuns;

TEST(ThreadChooser, AnIdleMachineKeepsTheDefaultCount) {
  ThreadChooser c;
  // warm-up, K at the default, the twins' run and 3 at one thread, whose 54 ms passed the
  // K x 10 ms it had to stay under: the trial lost; never again
  EXPECT_EQ(feed(c, 1000, [](bool one, int) { return one ? 18.0 : 10.0; }), 1 + 3);
  EXPECT_FALSE(c.oneNext());
}

TEST(ThreadChooser, ABusyMachineRunsOnOneThread) {
  ThreadChooser c;
  const int ones = feed(c, 1000, [](bool one, int) { return one ? 20.0 : 100.0; });
  EXPECT_TRUE(c.oneNext());
  // the default retried after 8, 16, ..., 256 runs: 7 trials (and the warm-up and K runs
  // before the first trial) of 1000 runs, each ended by its first run (100 ms, past the
  // K x 0.8 x 20 ms it had to stay under)
  EXPECT_GE(ones, 1000 - (1 + K) - 7);
  EXPECT_LE(ones, 1000 - (1 + K) - 5);
}

TEST(ThreadChooser, FollowsALoadThatComesAndGoes) {
  ThreadChooser c;
  auto busy = [](int i) { return i >= 200 && i < 400; };
  auto ms = [&](bool one, int i) { return busy(i) ? (one ? 20.0 : 60.0) : (one ? 18.0 : 10.0); };
  feed(c, 200, ms);
  EXPECT_FALSE(c.oneNext());
  feed(c, 30, ms, 200); // the default slows past 1.5x its best: one thread is tried and kept
  EXPECT_TRUE(c.oneNext());
  feed(c, 170, ms, 230);
  EXPECT_TRUE(c.oneNext());
  feed(c, 100, ms, 400); // the load went: the default's next trial wins
  EXPECT_FALSE(c.oneNext());
  EXPECT_EQ(feed(c, 300, ms, 500), 0);
}

TEST(ThreadChooser, IgnoresRunsOfTheOtherCount) {
  ThreadChooser c;
  for (int i = 0; i < 50; ++i)
    c.record(true, 1e-3); // not what oneNext() gave: another thread's run from before a switch
  EXPECT_FALSE(c.oneNext());
  EXPECT_EQ(feed(c, 100, [](bool one, int) { return one ? 18.0 : 10.0; }), 1 + 3);
}

TEST(ThreadChooser, ATrialThatCanStillWinRunsToItsEnd) {
  ThreadChooser c;
  // one thread 12 ms against the default's 10: K runs sum to 48, under K x 10, and lose by
  // their mean only when the last is in (their sum never reaches 40 before)
  EXPECT_EQ(feed(c, 1000, [](bool one, int) { return one ? 12.0 : 10.0; }), 1 + K);
  // a default count that wins in the end despite a slow first run: 30 + 3 x 2 = 36 ms, under
  // K x 0.8 x 20 ms (64)
  ThreadChooser b;
  int defaults = 0;
  feed(b, 1000, [&](bool one, int) {
    if (one)
      return 20.0;
    return ++defaults <= 1 + K ? 100.0 : (defaults - (1 + K)) % K == 1 ? 30.0 : 2.0;
  });
  EXPECT_FALSE(b.oneNext());
}

TEST(ThreadChooser, PreemptedDefaultRunsTryOneThreadAtOnce) {
  // ViT-B/16 beside two spinning processes: 1 s a run on the default count, preempted 250
  // times a second, 0.45 s on one thread. The warm-up and one default run (past the 50 ms
  // window) are all the default count makes before one thread's trial, which wins.
  ThreadChooser c;
  auto ms = [](bool one, int) { return one ? 450.0 : 1000.0; };
  auto rate = [](bool one, int) { return one ? 0.0 : 250.0; };
  std::vector<bool> took;
  for (int i = 0; i < 8; ++i) {
    took.push_back(c.oneNext());
    feed(c, 1, ms, i, rate);
  }
  EXPECT_EQ(took, (std::vector<bool>{false, false, true, true, true, true, true, true}));
  // without the preemptions, K default runs before the trial
  ThreadChooser quiet;
  EXPECT_EQ(feed(quiet, 2 + K, ms), 1);
}

TEST(ThreadChooser, AnIdleMachinesPreemptionsChangeNothing) {
  // 40 involuntary switches a second (kernel threads on an idle VM): as on a machine with none
  ThreadChooser c;
  EXPECT_EQ(feed(
                c, 1000, [](bool one, int) { return one ? 18.0 : 10.0; }, 0,
                [](bool, int) { return 40.0; }),
            1 + 3);
  EXPECT_FALSE(c.oneNext());
}

TEST(ThreadChooser, PreemptionsStartATrialBeforeTheMeanSlows) {
  // a load arrives at run 200: the default count's runs keep their 12 ms (not 1.5x its best)
  // but are preempted 200 times a second, and one thread now takes 8 ms; a trial starts at
  // the run that completes a 50 ms window with 100 preemptions a second (at most 5 of the
  // preempted runs: the window may hold idle runs before them), and one thread stays
  ThreadChooser c;
  auto busy = [](int i) { return i >= 200; };
  auto ms = [&](bool one, int i) { return one ? (busy(i) ? 8.0 : 18.0) : 12.0; };
  auto rate = [&](bool one, int i) { return !one && busy(i) ? 200.0 : 0.0; };
  feed(c, 200, ms, 0, rate);
  EXPECT_FALSE(c.oneNext());
  int i = 200;
  while (!c.oneNext() && i < 300)
    feed(c, 1, ms, i++, rate);
  EXPECT_GE(i, 201);
  EXPECT_LE(i, 205);
  // one thread's trial (4 runs, won), then the default retried after 8, 16, 32, 64 and 128
  // runs, each trial lost at its third run (36 ms past 4 x 0.8 x 8)
  EXPECT_EQ(feed(c, 295, ms, i, rate), 295 - 5 * 3);
}

TEST(ThreadChooser, PreemptedDefaultRunsLoseToOneThreadWithinAMargin) {
  // ResNet-50 beside two spinning processes: the default count's one run before one thread's
  // trial took 64 ms, preempted 200 times a second (its next ones took 200 to 600), one
  // thread's 70: one thread is chosen (70 under 64 / 0.8); idle, 70 against 64 keeps the
  // default count
  ThreadChooser c;
  auto ms = [](bool one, int) { return one ? 70.0 : 64.0; };
  feed(c, 10, ms, 0, [](bool one, int) { return one ? 0.0 : 200.0; });
  EXPECT_TRUE(c.oneNext());
  ThreadChooser quiet;
  EXPECT_EQ(feed(quiet, 10, ms), 1 + K);
  EXPECT_FALSE(quiet.oneNext());
}

TEST(ThreadChooser, AnIdleDefaultCountWinsBackByItsMeanAlone) {
  // one thread chosen under a load (the default count 60 ms, preempted 200 times a second,
  // one thread 20); the load goes, and one thread's runs (large products still on the default
  // count's threads) take 11 ms against the default count's 10: the default's next trial,
  // not preempted, wins by its mean alone (under 0.8 x 11 it would stay on one thread)
  ThreadChooser c;
  auto busy = [](int i) { return i < 100; };
  auto ms = [&](bool one, int i) {
    return one ? (busy(i) ? 20.0 : 11.0) : (busy(i) ? 60.0 : 10.0);
  };
  auto rate = [&](bool one, int i) { return !one && busy(i) ? 200.0 : 0.0; };
  feed(c, 100, ms, 0, rate);
  EXPECT_TRUE(c.oneNext());
  feed(c, 300, ms, 100, rate);
  EXPECT_FALSE(c.oneNext());
  // preempted, the same 10 ms against 11 is not enough: the default count must beat 0.8 x 11
  ThreadChooser d;
  feed(d, 100, ms, 0, rate);
  feed(
      d, 300, [](bool one, int) { return one ? 11.0 : 10.0; }, 100,
      [](bool one, int) { return one ? 0.0 : 200.0; });
  EXPECT_TRUE(d.oneNext());
}

} // namespace
