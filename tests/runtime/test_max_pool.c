/* float32 MaxPool (2-D, channels first) against naive loops, on windows of every shape the
 * backends' row-wise kernels take: strides, dilations, padding front and back, windows of
 * padding only (0), a NaN in the window (NaN: the maximum of a window holding NaN is NaN, as
 * in PyTorch), infinities and ties of 0.0 and -0.0. */
#include "check.h"

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { N = 2, C = 3, H = 9, W = 11 };

static uint32_t state = 12345u;
static float next_value(void) {
  state = state * 1664525u + 1013904223u;
  switch (state >> 28) {
  case 0:
    return NAN;
  case 1:
    return -INFINITY;
  case 2:
    return (state >> 27) & 1 ? 0.0f : -0.0f;
  default:
    return (float)((int32_t)(state >> 8) % 1000) / 16.0f;
  }
}

/* The window's maximum by definition: NaN if any cell is NaN, 0 for padding only. */
static float naive(const float *x, int n, int c, int oh, int ow, const odla_uint32 *k,
                   const odla_uint32 *s, const odla_uint32 *d, const odla_uint32 *pf) {
  float best = 0.0f;
  int any = 0, kh, kw;
  for (kh = 0; kh < (int)k[0]; ++kh)
    for (kw = 0; kw < (int)k[1]; ++kw) {
      const int ih = oh * (int)s[0] - (int)pf[0] + kh * (int)d[0];
      const int iw = ow * (int)s[1] - (int)pf[1] + kw * (int)d[1];
      float v;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W)
        continue;
      v = x[((n * C + c) * H + ih) * W + iw];
      if (!any || v > best || (isnan(v) && !isnan(best)))
        best = v;
      any = 1;
    }
  return best;
}

static void check_case(const odla_uint32 *k, const odla_uint32 *s, const odla_uint32 *d,
                       const odla_uint32 *pf, const odla_uint32 *pb) {
  static float x[N * C * H * W], y[N * C * H * W];
  const int oh_n = (int)((H + pf[0] + pb[0] - (d[0] * (k[0] - 1) + 1)) / s[0] + 1);
  const int ow_n = (int)((W + pf[1] + pb[1] - (d[1] * (k[1] - 1) + 1)) / s[1] + 1);
  const odla_value_shape out_shape = {4, {N, C, oh_n, ow_n}};
  odla_value_type t = {ODLA_FLOAT32, {4, {N, C, H, W}}};
  odla_computation comp;
  odla_context ctx;
  odla_value in, out;
  int i, n, c, oh, ow, wrong = 0;
  for (i = 0; i < N * C * H * W; ++i)
    x[i] = next_value();
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  in = odla_CreateArgument(t, (const odla_value_id) "x");
  out = odla_ExtMaxPool(in, ODLA_CHANNELS_FIRST, k, s, d, pf, pb, out_shape,
                        (const odla_value_id) "y");
  CHECK(out && odla_SetValueAsOutput(out) == ODLA_SUCCESS, "ExtMaxPool");
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  CHECK(odla_BindToArgumentById((const odla_value_id) "x", x, ctx) == ODLA_SUCCESS, "bind x");
  CHECK(odla_BindToOutputById((const odla_value_id) "y", y, ctx) == ODLA_SUCCESS, "bind y");
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "ExecuteComputation");
  for (n = 0; n < N; ++n)
    for (c = 0; c < C; ++c)
      for (oh = 0; oh < oh_n; ++oh)
        for (ow = 0; ow < ow_n; ++ow) {
          const float want = naive(x, n, c, oh, ow, k, s, d, pf);
          const float got = y[((n * C + c) * oh_n + oh) * ow_n + ow];
          /* equal, both NaN, or a tie of zeros of either sign */
          if (!(got == want || (isnan(got) && isnan(want))) && wrong++ < 3)
            CHECK(0,
                  "window %ux%u stride %u,%u dilation %u,%u pads %u,%u/%u,%u: y[%d][%d][%d][%d] = "
                  "%g, want %g",
                  k[0], k[1], s[0], s[1], d[0], d[1], pf[0], pf[1], pb[0], pb[1], n, c, oh, ow,
                  (double)got, (double)want);
        }
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

int main(void) {
  /* window, strides, dilations, pads front, pads back */
  static const odla_uint32 cases[][5][2] = {
      {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}, /* ResNet's stem */
      {{3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}}, /* SqueezeNet's */
      {{2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
      {{3, 2}, {1, 3}, {2, 1}, {2, 0}, {0, 1}},
      {{1, 5}, {1, 1}, {1, 2}, {0, 4}, {0, 4}},
      {{4, 4}, {3, 3}, {1, 1}, {3, 3}, {3, 3}}, /* windows of padding only */
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    check_case(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4]);
  return failures != 0;
}
