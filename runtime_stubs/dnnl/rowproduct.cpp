// rowproduct.cpp: the product of one row by constant weights (y = alpha x W + bias, then the
// residual and a ReLU), the Gemm of a decoder's every step (odlac --dim, one new token), on
// AVX-512. Such a product is a stream of the weights: every weight is read once for one
// multiply-add, so its time is the weights' bytes over the memory's bandwidth. The weights are
// packed once into panels of 64 columns, each panel's k rows of 64 floats contiguous, so that
// each thread reads one sequential run of memory (its share of the panels) with a software
// prefetch ahead of it. On a GPT-2-sized decoder's products (49 matrices, 494 MB, one row
// each, alternating in one process on this project's machine, medians of 36 passes): oneDNN
// 2.6's matmul (brgemm) 45.3 GB/s at 2 threads and 38.5 at 1, this kernel 51.7 and 40.0.
#include "dnnl_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
/* GCC 12 warns inside its own avx512fintrin.h (the intrinsics' _mm512_undefined_ps). */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define ODLA_DNNL_ROW_AVX512 1
#endif

namespace odla_dnnl {

#if ODLA_DNNL_ROW_AVX512

bool rowProductAvailable() {
  static const bool avx512 = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
  return avx512;
}

namespace {

constexpr int64_t kPanel = 64;   /* columns in a panel: four AVX-512 vectors */
constexpr int64_t kPrefetch = 8; /* rows of a panel ahead of the loads (2 KiB) */
/* A product of fewer weights runs on the calling thread: an OpenMP region costs about 1 us,
 * what 64 KiB of weights take to stream in. */
constexpr int64_t kParallelWeights = int64_t{1} << 16;

/* The epilogue of one panel's sums acc: alpha, bias, residual, ReLU, stored into the `cols`
 * (1 to 64) columns from col0 of y. */
__attribute__((target("avx512f"))) void panelStore(const RowProduct &p, const __m512 *acc,
                                                   int64_t col0, int64_t cols, const float *bias,
                                                   const float *residual, float *y) {
  const __m512 alpha = _mm512_set1_ps(p.alpha);
  for (int v = 0; v < 4; ++v) {
    const int64_t at = 16 * v, left = cols - at;
    if (left <= 0)
      break;
    const __mmask16 m = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    const int64_t col = col0 + at;
    __m512 r = p.alpha != 1.0f ? _mm512_mul_ps(acc[v], alpha) : acc[v];
    if (bias)
      r = _mm512_add_ps(r, p.bias_count == 1 ? _mm512_set1_ps(bias[0])
                                             : _mm512_maskz_loadu_ps(m, bias + col));
    if (residual)
      r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, residual + col));
    if (p.relu) /* max(NaN, 0) is 0, as the reference's v > 0 ? v : 0 */
      r = _mm512_max_ps(r, _mm512_setzero_ps());
    _mm512_mask_storeu_ps(y + col, m, r);
  }
}

/* acc[0..3] += xi * row[0..63], prefetching the row kPrefetch ahead. */
__attribute__((target("avx512f"), always_inline)) inline void rowStep(__m512 xi, const float *row,
                                                                      __m512 *acc) {
  const char *ahead = reinterpret_cast<const char *>(row + kPrefetch * kPanel);
  for (int line = 0; line < 4; ++line)
    _mm_prefetch(ahead + 64 * line, _MM_HINT_T0);
  for (int v = 0; v < 4; ++v)
    acc[v] = _mm512_fmadd_ps(xi, _mm512_load_ps(row + 16 * v), acc[v]);
}

/* acc[0..3] = sum over i of x[i] * a[i][0..63], and acc[4..7] the same of b where `pair`: two
 * panels at once are two sequential streams (measured 51.7 GB/s at 2 threads and 40.0 at 1,
 * against 47.8 and 37.6 for one panel at a time). */
template <bool pair>
__attribute__((target("avx512f"))) void panelSums(const float *x, int64_t k, const float *a,
                                                  const float *b, __m512 *acc) {
  __m512 sums[8];
  for (__m512 &v : sums)
    v = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i, a += kPanel, b += kPanel) {
    const __m512 xi = _mm512_set1_ps(x[i]);
    rowStep(xi, a, sums);
    if (pair)
      rowStep(xi, b, sums + 4);
  }
  for (int v = 0; v < (pair ? 8 : 4); ++v)
    acc[v] = sums[v];
}

/* Panels [lo, hi) of the product: its two halves side by side, then the odd one left. */
__attribute__((target("avx512f"))) void panelsRun(const RowProduct &p, const float *x,
                                                  const float *bias, const float *residual,
                                                  float *y, int64_t lo, int64_t hi) {
  const int64_t half = (hi - lo) / 2, stride = p.k * kPanel;
  __m512 acc[8];
  for (int64_t j = lo; j < lo + half; ++j) {
    const int64_t j2 = j + half;
    panelSums<true>(x, p.k, p.panels + j * stride, p.panels + j2 * stride, acc);
    panelStore(p, acc, j * kPanel, std::min(kPanel, p.n - j * kPanel), bias, residual, y);
    panelStore(p, acc + 4, j2 * kPanel, std::min(kPanel, p.n - j2 * kPanel), bias, residual, y);
  }
  for (int64_t j = lo + 2 * half; j < hi; ++j) {
    const float *panel = p.panels + j * stride;
    panelSums<false>(x, p.k, panel, panel, acc); /* (b unread) */
    panelStore(p, acc, j * kPanel, std::min(kPanel, p.n - j * kPanel), bias, residual, y);
  }
}

/* The packed weights shared by the computations that hold them, as sharedReorder's copies
 * (compile.cpp): a decoder built again for other dims packs each matrix once. */
struct SharedPanels {
  const float *src;
  int64_t k, n;
  bool trans_b;
  std::weak_ptr<void> panels;
};
std::mutex g_panels_mutex;
std::vector<SharedPanels> g_panels;

} // namespace

std::shared_ptr<void> rowPanels(const float *w, int64_t k, int64_t n, bool trans_b) {
  std::lock_guard<std::mutex> lock(g_panels_mutex);
  g_panels.erase(std::remove_if(g_panels.begin(), g_panels.end(),
                                [](const SharedPanels &s) { return s.panels.expired(); }),
                 g_panels.end());
  for (const SharedPanels &s : g_panels)
    if (s.src == w && s.k == k && s.n == n && s.trans_b == trans_b)
      if (std::shared_ptr<void> made = s.panels.lock())
        return made;
  const int64_t count = (n + kPanel - 1) / kPanel;
  std::shared_ptr<void> made =
      alignedBuffer(static_cast<size_t>(count * k * kPanel) * sizeof(float));
  float *out = static_cast<float *>(made.get());
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < count; ++j)
    for (int64_t i = 0; i < k; ++i) {
      float *dst = out + (j * k + i) * kPanel;
      for (int64_t c = 0; c < kPanel; ++c) {
        const int64_t col = j * kPanel + c;
        dst[c] = col >= n ? 0.0f : trans_b ? w[col * k + i] : w[i * n + col];
      }
    }
  g_panels.push_back({w, k, n, trans_b, made});
  return made;
}

void rowProduct(const RowProduct &p, const float *x, const float *bias, const float *residual,
                float *y) {
  const int64_t count = (p.n + kPanel - 1) / kPanel;
  if (p.k * p.n < kParallelWeights || omp_get_max_threads() < 2 || omp_in_parallel()) {
    panelsRun(p, x, bias, residual, y, 0, count);
    return;
  }
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    panelsRun(p, x, bias, residual, y, count * t / threads, count * (t + 1) / threads);
  }
}

#else

bool rowProductAvailable() { return false; }
std::shared_ptr<void> rowPanels(const float *, int64_t, int64_t, bool) { return nullptr; }
void rowProduct(const RowProduct &, const float *, const float *, const float *, float *) {}

#endif

} // namespace odla_dnnl
