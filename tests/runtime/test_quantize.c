/* test_quantize.c: odla_ExtQuantize from float32 to int8 and uint8 (odla_ext_quant.h) through
 * the ODLA headers only, on inputs at and next to the rounding's ties (x = (k + 1/2) * scale
 * and the floats one to three steps either side), against a naive computation written here:
 * the float32 quotient x / scale rounded half to even in float64, plus the zero point,
 * saturated. Also NaN (the zero point), infinities and values far beyond the range, per tensor
 * and per channel, at 1 and 2 threads, on the heap and, on the reference backend, in a memory
 * region (odla_ext_memory.h), as --no-heap code builds it.
 * Usage: test_quantize SCRATCH_DIR (unused) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "regions.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))

static uint32_t rng = 4242;
static int in_region;
static unsigned char region[1 << 20];
static uint32_t next_random(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

enum { ROWS = 4, COLS = 50000 };

static int32_t naive(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float q = x / scale;
  double r;
  if (q != q)
    return zp;
  r = nearbyint((double)q) + zp; /* the default rounding mode: half to even */
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

static void run_case(odla_element_type yt, int per_channel, int threads) {
  static float x[ROWS * COLS];
  static uint8_t y[ROWS * COLS];
  float scales[ROWS];
  uint8_t zps[ROWS];
  const int32_t lo = yt == ODLA_INT8 ? -128 : 0, hi = yt == ODLA_INT8 ? 127 : 255;
  const int64_t xdims[2] = {ROWS, COLS}, pdims[2] = {ROWS, 1};
  odla_computation comp;
  odla_context ctx;
  odla_value xv, sv, zv, yv;
  int64_t i, bad = 0;
  odla_int32 n = threads;
  for (i = 0; i < ROWS; ++i) {
    scales[i] = ldexpf(1.0f + (float)(next_random() % 1000) / 1000.0f, -(int)(next_random() % 10));
    zps[i] = (uint8_t)(yt == ODLA_INT8 ? (int32_t)(next_random() % 20) - 10
                                       : (int32_t)(next_random() % 40));
  }
  for (i = 0; i < ROWS * COLS; ++i) {
    const int64_t c = per_channel ? i / COLS : 0;
    const float base = ((float)((int)(next_random() % 300) - 150) + 0.5f) * scales[c];
    const int steps = (int)(next_random() % 7) - 3;
    float v = base;
    int k;
    for (k = 0; k < (steps < 0 ? -steps : steps); ++k)
      v = nextafterf(v, steps < 0 ? -INFINITY : INFINITY);
    x[i] = i % 5 == 0 ? ((float)(next_random() % 100000) / 100000.0f - 0.5f) * 400 * scales[c] : v;
  }
  x[7] = NAN;
  x[8] = INFINITY;
  x[9] = -INFINITY;
  x[10] = 1e30f;
  x[11] = -1e30f;

  if (in_region)
    CHECK(odla_ExtSetMemory(region, sizeof region) == ODLA_SUCCESS, "region");
  odla_CreateComputation(&comp);
  xv = odla_CreateArgument(vt(ODLA_FLOAT32, 2, xdims), ID("x"));
  sv = odla_CreateConstant(vt(ODLA_FLOAT32, per_channel, pdims), scales, ID("s"));
  zv = odla_CreateConstant(vt(yt, per_channel, pdims), zps, ID("z"));
  yv = odla_ExtQuantize(xv, sv, zv, 0, 0, yt, 1, ID("y"));
  CHECK(yv != NULL, "Quantize refused");
  odla_SetValueAsOutput(yv);
  odla_CreateContext(&ctx);
  CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
        "ODLA_PROCESSOR_NUM %d", threads);
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "execution failed");
  for (i = 0; i < ROWS * COLS; ++i) {
    const int64_t c = per_channel ? i / COLS : 0;
    const int32_t zp = yt == ODLA_INT8 ? (int8_t)zps[c] : zps[c];
    const int32_t want = naive(x[i], scales[c], zp, lo, hi);
    const int32_t got = yt == ODLA_INT8 ? (int8_t)y[i] : y[i];
    if (got != want && bad++ < 5)
      CHECK(0, "%s %s %d threads: y[%lld] = %d, want %d (x = %a, scale = %a)",
            yt == ODLA_INT8 ? "int8" : "uint8", per_channel ? "per channel" : "per tensor", threads,
            (long long)i, got, want, x[i], scales[c]);
  }
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
  if (in_region) {
    odla_ExtSetMemory(NULL, 0);
    CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS, "the region is empty again");
  }
}

int main(void) {
  int per_channel, threads;
  const int regions = backend_takes_regions(region, sizeof region);
  for (in_region = 0; in_region <= regions; ++in_region)
    for (per_channel = 0; per_channel < 2; ++per_channel)
      for (threads = 1; threads <= 2; ++threads) {
        run_case(ODLA_INT8, per_channel, threads);
        run_case(ODLA_UINT8, per_channel, threads);
      }
  return failures != 0;
}
