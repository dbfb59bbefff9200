/* test_qlinear.c: odla_ExtQLinearConv and odla_ExtQLinearMatMul (odla_ext_quant.h, "Integer-only
 * quantized products"), and odla_ExtQLinearAdd and odla_ExtQLinearMul, through the ODLA headers
 * only. Each graph's output must equal, byte for
 * byte, a naive computation written here: plain loops in int64 and the rounding worked out
 * with C's integer division, for uint8 and int8 operands, zero points, per-tensor and
 * per-channel parameters, bias, clamps, groups (depthwise too), strides, dilations, pads, both
 * layouts, 1 to 3 spatial axes, constant and argument kernels, threads, and batched products
 * that broadcast, also built and run in a memory region (odla_ext_memory.h) as --no-heap code
 * runs them (on the reference backend; libodla_dnnl refuses regions). Ties of the rounding are
 * checked against values worked out by hand, and every rule of the builders against its message.
 * Usage: test_qlinear SCRATCH_DIR (unused) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "regions.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))

static char last_error[512];
static void keep_error(const char *file, int line, const char *func, odla_log_level level,
                       const char *msg) {
  (void)file, (void)line, (void)level;
  snprintf(last_error, sizeof last_error, "%s: %s", func, msg);
}

static uint32_t rng = 12345;
static uint32_t next_random(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

/* ---- The naive computation ------------------------------------------------------------------ */

static int32_t load8(odla_element_type t, const uint8_t *p, int64_t i) {
  return t == ODLA_INT8 ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

/* clamp(round_half_to_even(acc * mult / 2^shift) + zp, lo, hi), from C's truncating division. */
static int32_t naive_requantize(int64_t acc, int64_t mult, int shift, int32_t zp, int32_t lo,
                                int32_t hi) {
  const int64_t num = acc * mult, den = (int64_t)1 << shift;
  int64_t q = num / den, r = num % den;
  if (r < 0) { /* floor */
    q -= 1;
    r += den;
  }
  if (2 * r > den || (2 * r == den && q % 2 != 0))
    q += 1;
  q += zp;
  return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

/* The quantization parameters a case draws. */
typedef struct {
  odla_element_type xt, wt, yt;
  int has_xz, has_wz, wz_per_channel, has_bias, scale_per_channel;
  int32_t lo, hi; /* lo > hi: the output type's range */
  int kernel_arg; /* kernel and its zero point as arguments (packed when the node runs) */
  int threads;    /* > 0: the context's ODLA_PROCESSOR_NUM */
} qparams;

/* While set (for the cases named "int32 results: ..."), a case runs without requantization
 * (multiplier, shift and output zero point NULL): its results are the int32 sums. */
static int raw_results;

/* While set, the products run in least-memory computations (ODLA_EXT_ITEM_LEAST_MEMORY),
 * where a constant int8 kernel with zero points 0 is read in place (the lean kernels). While
 * `symmetric` is set, the cases drop their kernel zero points, so that every int8 kernel that
 * is a constant runs lean (least_memory) or, on a CPU with AVX512-VNNI, is packed for the 8-bit
 * product (ref_qg8). */
static int least_memory, symmetric;

static void set_least_memory(odla_computation comp) {
  odla_bool yes = 1;
  if (least_memory)
    CHECK(odla_SetComputationItem(comp, ODLA_EXT_ITEM_LEAST_MEMORY, (odla_item_value)&yes) ==
              ODLA_SUCCESS,
          "ODLA_EXT_ITEM_LEAST_MEMORY");
}

/* While set, each case's computation, executable and context live in a memory region
 * (odla_ext_memory.h), as --no-heap code's do: the products' and QLinearAdd/Mul's parameter
 * blocks are then stored packed (their runs of zero bytes dropped) and expanded for each run,
 * and the results must not change. The region must be empty again after each case. */
static int in_region;
static unsigned char region[1 << 25];

static void create_computation(odla_computation *comp) {
  if (in_region)
    CHECK(odla_ExtSetMemory(region, sizeof region) == ODLA_SUCCESS, "region");
  odla_CreateComputation(comp);
}

static void destroy_computation(odla_computation comp) {
  odla_DestroyComputation(comp);
  if (in_region) {
    odla_ExtSetMemory(NULL, 0);
    CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS, "the region is empty again");
  }
}

/* Drops q's kernel zero point; 1. */
static int without_wz(qparams *q) {
  q->has_wz = 0;
  return 1;
}

/* Drawn data: one output channel per entry of wz, bias, mult, shift. */
typedef struct {
  uint8_t xz, yz, wz[128];
  int32_t bias[128], mult[128], shift[128];
  int32_t lo, hi;
} qdata;

/* The bytes of a result element. */
static int64_t result_size(void) { return raw_results ? 4 : 1; }

/* Stores output element i: acc requantized by output channel c's parameters, or acc itself
 * (int32) without requantization. */
static void naive_store(const qparams *q, const qdata *d, int64_t c, int64_t acc, uint8_t *y,
                        int64_t i) {
  if (raw_results) {
    const int32_t v = (int32_t)acc;
    memcpy(y + i * 4, &v, 4);
  } else {
    y[i] = (uint8_t)naive_requantize(acc, d->mult[c], d->shift[c], load8(q->yt, &d->yz, 0), d->lo,
                                     d->hi);
  }
}

static void draw_params(const qparams *q, int64_t channels, int64_t k, qdata *d) {
  /* A shift that maps a typical sum (sqrt(k) * 70^2) to about 40 steps of the output. */
  const int base = 30 + (int)ceil(log2(sqrt((double)(k > 0 ? k : 1)) * 4900.0 / 40.0));
  int64_t c;
  d->xz = q->has_xz ? (uint8_t)(next_random() % 40 + (q->xt == ODLA_UINT8 ? 100 : 0)) : 0;
  d->yz = (uint8_t)(next_random() % 30 + (q->yt == ODLA_UINT8 ? 110 : 0));
  for (c = 0; c < channels; ++c) {
    int scale_c = q->scale_per_channel ? (int)c : 0;
    d->wz[c] = q->has_wz ? (uint8_t)(next_random() % 20 + (q->wt == ODLA_UINT8 ? 120 : 0)) : 0;
    d->bias[c] = q->has_bias ? (int32_t)(next_random() % 20001) - 10000 : 0;
    d->mult[c] = (int32_t)((1u << 30) + (q->scale_per_channel ? next_random() % (1u << 29) : 7));
    d->shift[c] = base + scale_c % 3 - 1;
  }
  if (!q->wz_per_channel)
    for (c = 1; c < channels; ++c)
      d->wz[c] = d->wz[0];
  if (!q->scale_per_channel)
    for (c = 1; c < channels; ++c)
      d->mult[c] = d->mult[0], d->shift[c] = d->shift[0];
  d->lo = q->lo <= q->hi ? q->lo : q->yt == ODLA_INT8 ? -128 : 0;
  d->hi = q->lo <= q->hi ? q->hi : q->yt == ODLA_INT8 ? 127 : 255;
}

static void fill_random(uint8_t *p, int64_t n) {
  int64_t i;
  for (i = 0; i < n; ++i)
    p[i] = (uint8_t)next_random();
}

/* ---- Building and running ------------------------------------------------------------------- */

/* The operands of a case's quantization parameters, constants (the kernel's zero point an
 * argument "wz" when q->kernel_arg). */
typedef struct {
  odla_value xz, wz, bias, mult, shift, yz;
} qvalues;

static qvalues make_params(const qparams *q, const qdata *d, int64_t channels) {
  qvalues v;
  const int64_t per = q->scale_per_channel ? channels : 1;
  const int64_t wzn = q->wz_per_channel ? channels : 1;
  memset(&v, 0, sizeof v);
  if (q->has_xz)
    v.xz = odla_CreateConstant(vt(q->xt, 0, NULL), &d->xz, ID("xz"));
  if (q->has_wz && q->kernel_arg)
    v.wz = odla_CreateArgument(vt(q->wt, 1, DIMS(wzn)), ID("wz"));
  else if (q->has_wz)
    v.wz = odla_CreateConstant(vt(q->wt, 1, DIMS(wzn)), d->wz, ID("wz"));
  if (q->has_bias)
    v.bias = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(channels)), d->bias, ID("bias"));
  if (raw_results)
    return v;
  v.mult = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(per)), d->mult, ID("mult"));
  v.shift = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(per)), d->shift, ID("shift"));
  v.yz = odla_CreateConstant(vt(q->yt, 1, DIMS(1)), &d->yz, ID("yz"));
  return v;
}

/* Runs the current computation with arguments x (and w, wz when given) into y. */
static odla_status run_graph(odla_computation comp, const qparams *q, const void *x, const void *w,
                             const void *wz, void *y) {
  odla_context ctx;
  odla_status s;
  odla_CreateContext(&ctx);
  if (q->threads > 0) {
    odla_int32 n = q->threads;
    CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
          "ODLA_PROCESSOR_NUM %d", q->threads);
  }
  odla_BindToArgumentById(ID("x"), x, ctx);
  if (w)
    odla_BindToArgumentById(ID("w"), w, ctx);
  if (wz)
    odla_BindToArgumentById(ID("wz"), wz, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL);
  odla_DestroyContext(ctx);
  return s;
}

static void check_bytes(const char *what, const uint8_t *got, const uint8_t *want, int64_t n) {
  int64_t i, bad = 0;
  for (i = 0; i < n; ++i)
    if (got[i] != want[i] && bad++ < 5)
      CHECK(0, "%s: y[%lld] = %d, want %d", what, (long long)i, got[i], want[i]);
}

/* ---- Convolution cases ---------------------------------------------------------------------- */

typedef struct {
  const char *what;
  int cl, spatial;
  int64_t n, c, m, group, in[3], k[3];
  odla_uint32 stride[3], dil[3], pad0[3], pad1[3];
  qparams q;
} conv_case;

/* Extents padded to 3 axes (leading 1s), as the naive loops read them. */
static int64_t ax(const int64_t *v, int spatial, int i) {
  return i < 3 - spatial ? 1 : v[i - (3 - spatial)];
}
static int64_t axu(const odla_uint32 *v, int spatial, int i, int64_t dflt) {
  return i < 3 - spatial ? dflt : v[i - (3 - spatial)];
}

static void naive_conv(const conv_case *t, const qdata *d, const uint8_t *x, const uint8_t *w,
                       const int64_t *out, uint8_t *y) {
  const int64_t cpg = t->c / t->group, mpg = t->m / t->group;
  int64_t in[3], k[3], s[3], dl[3], p[3], n, mo, o[3], ci, kk[3], i;
  for (i = 0; i < 3; ++i) {
    in[i] = ax(t->in, t->spatial, i);
    k[i] = ax(t->k, t->spatial, i);
    s[i] = axu(t->stride, t->spatial, i, 1);
    dl[i] = axu(t->dil, t->spatial, i, 1);
    p[i] = axu(t->pad0, t->spatial, i, 0);
  }
  for (n = 0; n < t->n; ++n)
    for (mo = 0; mo < t->m; ++mo)
      for (o[0] = 0; o[0] < out[0]; ++o[0])
        for (o[1] = 0; o[1] < out[1]; ++o[1])
          for (o[2] = 0; o[2] < out[2]; ++o[2]) {
            int64_t acc = d->bias[mo], yi;
            for (ci = 0; ci < cpg; ++ci)
              for (kk[0] = 0; kk[0] < k[0]; ++kk[0])
                for (kk[1] = 0; kk[1] < k[1]; ++kk[1])
                  for (kk[2] = 0; kk[2] < k[2]; ++kk[2]) {
                    int64_t at[3], xi, wi, c = mo / mpg * cpg + ci, j, inside = 1;
                    for (j = 0; j < 3; ++j) {
                      at[j] = o[j] * s[j] - p[j] + kk[j] * dl[j];
                      inside &= at[j] >= 0 && at[j] < in[j];
                    }
                    if (!inside)
                      continue;
                    xi = t->cl ? (((n * in[0] + at[0]) * in[1] + at[1]) * in[2] + at[2]) * t->c + c
                               : (((n * t->c + c) * in[0] + at[0]) * in[1] + at[1]) * in[2] + at[2];
                    wi = t->cl ? (((kk[0] * k[1] + kk[1]) * k[2] + kk[2]) * cpg + ci) * t->m + mo
                               : (((mo * cpg + ci) * k[0] + kk[0]) * k[1] + kk[1]) * k[2] + kk[2];
                    acc += (int64_t)(load8(t->q.xt, x, xi) - load8(t->q.xt, &d->xz, 0)) *
                           (load8(t->q.wt, w, wi) - load8(t->q.wt, d->wz, mo));
                  }
            yi = t->cl ? (((n * out[0] + o[0]) * out[1] + o[1]) * out[2] + o[2]) * t->m + mo
                       : (((n * t->m + mo) * out[0] + o[0]) * out[1] + o[1]) * out[2] + o[2];
            naive_store(&t->q, d, mo, acc, y, yi);
          }
}

static void run_conv_case(const conv_case *c) {
  conv_case sym = *c;
  const conv_case *t = symmetric && without_wz(&sym.q) ? &sym : c;
  const int rank = t->spatial + 2, sp0 = t->cl ? 1 : 2;
  const int64_t cpg = t->c / t->group;
  int64_t xdims[5], wdims[5], ydims[5], out[3], xn = t->n * t->c, wn = t->m * cpg, yn = t->n * t->m;
  int64_t kvol = 1;
  uint8_t *x, *w, *y, *want;
  qdata d;
  qvalues v;
  odla_computation comp;
  odla_value xv, wv, yv;
  odla_value_shape shape;
  int i;
  for (i = 0; i < 3; ++i) {
    int64_t in = ax(t->in, t->spatial, i), k = ax(t->k, t->spatial, i);
    int64_t span = (k - 1) * axu(t->dil, t->spatial, i, 1) + 1;
    out[i] = (in + axu(t->pad0, t->spatial, i, 0) + axu(t->pad1, t->spatial, i, 0) - span) /
                 axu(t->stride, t->spatial, i, 1) +
             1;
    xn *= in;
    wn *= k;
    yn *= out[i];
    kvol *= k;
  }
  xdims[0] = ydims[0] = t->n;
  xdims[t->cl ? rank - 1 : 1] = t->c;
  ydims[t->cl ? rank - 1 : 1] = t->m;
  for (i = 0; i < t->spatial; ++i) {
    xdims[sp0 + i] = t->in[i];
    ydims[sp0 + i] = out[3 - t->spatial + i];
    wdims[t->cl ? i : 2 + i] = t->k[i];
  }
  wdims[t->cl ? rank - 2 : 1] = cpg;
  wdims[t->cl ? rank - 1 : 0] = t->m;
  x = (uint8_t *)malloc((size_t)xn);
  w = (uint8_t *)malloc((size_t)wn);
  y = (uint8_t *)calloc((size_t)(yn * result_size()), 1);
  want = (uint8_t *)calloc((size_t)(yn * result_size()), 1);
  fill_random(x, xn);
  fill_random(w, wn);
  draw_params(&t->q, t->m, cpg * kvol, &d);
  naive_conv(t, &d, x, w, out, want);

  last_error[0] = '\0';
  create_computation(&comp);
  set_least_memory(comp);
  xv = odla_CreateArgument(vt(t->q.xt, rank, xdims), ID("x"));
  wv = t->q.kernel_arg ? odla_CreateArgument(vt(t->q.wt, rank, wdims), ID("w"))
                       : odla_CreateConstant(vt(t->q.wt, rank, wdims), w, ID("w"));
  v = make_params(&t->q, &d, t->m);
  shape.size = rank;
  memcpy(shape.dims, ydims, sizeof ydims);
  yv = odla_ExtQLinearConv(xv, v.xz, t->cl ? ODLA_CHANNELS_LAST : ODLA_CHANNELS_FIRST,
                           (odla_uint32)t->group, wv, v.wz, t->cl ? ODLA_SIO : ODLA_OIS, t->stride,
                           t->dil, t->pad0, t->pad1, v.bias, v.mult, v.shift, v.yz, d.lo, d.hi,
                           shape, ID("y"));
  CHECK(yv != NULL, "%s: refused: %s", t->what, last_error);
  odla_SetValueAsOutput(yv);
  CHECK(run_graph(comp, &t->q, x, t->q.kernel_arg ? w : NULL,
                  t->q.kernel_arg && t->q.has_wz ? d.wz : NULL, y) == ODLA_SUCCESS,
        "%s: execution failed: %s", t->what, last_error);
  check_bytes(t->what, y, want, yn * result_size());
  destroy_computation(comp);
  free(x);
  free(w);
  free(y);
  free(want);
}

#define U8 ODLA_UINT8
#define S8 ODLA_INT8

static void test_conv(void) {
  /* what, cl, spatial, n, c, m, group, in, k, stride, dil, pad0, pad1,
   * {xt, wt, yt, has_xz, has_wz, wz_per_channel, has_bias, scale_per_channel, lo, hi,
   *  kernel_arg, threads} */
  static const conv_case cases[] = {
      {"u8 3x3 pad 1, per tensor",
       0,
       2,
       1,
       5,
       7,
       1,
       {6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 0, 1, 0, 1, 0, 0, 0}},
      {"u8 3x3, kernel an argument",
       0,
       2,
       1,
       5,
       7,
       1,
       {6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"s8 per channel, groups, stride 2, dilation 2, asymmetric pads",
       0,
       2,
       2,
       6,
       8,
       2,
       {9, 8},
       {3, 2},
       {2, 1},
       {2, 2},
       {2, 0},
       {1, 3},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"channels-last s8 per channel, groups, stride 2, dilation 2",
       1,
       2,
       2,
       6,
       8,
       2,
       {9, 8},
       {3, 2},
       {2, 1},
       {2, 2},
       {2, 0},
       {1, 3},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"channels-last u8 x s8, kernel an argument",
       1,
       2,
       1,
       4,
       5,
       1,
       {5, 7},
       {3, 3},
       {1, 2},
       {1, 1},
       {1, 1},
       {1, 0},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"depthwise 3x3 stride 2",
       0,
       2,
       1,
       6,
       6,
       6,
       {7, 7},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"channels-last depthwise, kernel an argument",
       1,
       2,
       2,
       6,
       6,
       6,
       {7, 5},
       {3, 3},
       {2, 1},
       {1, 2},
       {1, 2},
       {0, 2},
       {S8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"depthwise with channel multiplier 2",
       1,
       2,
       1,
       3,
       6,
       3,
       {6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 0, 1, 1, 1, 0, 0, 0}},
      {"pointwise u8 x s8, no zero points, no bias",
       0,
       2,
       2,
       9,
       6,
       1,
       {5, 6},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, S8, U8, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
      {"channels-last pointwise, groups",
       1,
       2,
       1,
       8,
       6,
       2,
       {5, 6},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"pointwise stride 2 (im2col)",
       0,
       2,
       1,
       4,
       5,
       1,
       {7, 7},
       {1, 1},
       {2, 2},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, U8, U8, 1, 1, 0, 1, 0, 1, 0, 0, 0}},
      {"relu clamp [yz, 255] (yz drawn in [110, 140))",
       0,
       2,
       1,
       5,
       7,
       1,
       {6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 125, 255, 0, 0}},
      {"s8 clamp [-20, 30]",
       1,
       2,
       1,
       5,
       7,
       1,
       {6, 6},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, -20, 30, 0, 0}},
      {"1 spatial axis",
       0,
       1,
       2,
       3,
       4,
       1,
       {11},
       {4},
       {3},
       {2},
       {2},
       {1},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"channels-last 3 spatial axes",
       1,
       3,
       1,
       3,
       4,
       1,
       {4, 5, 3},
       {2, 3, 2},
       {1, 2, 1},
       {1, 1, 2},
       {1, 0, 1},
       {0, 1, 1},
       {S8, U8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"3 spatial axes, groups",
       0,
       3,
       1,
       4,
       6,
       2,
       {4, 5, 3},
       {2, 3, 2},
       {1, 2, 1},
       {1, 1, 2},
       {1, 0, 1},
       {0, 1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"32 -> 32 3x3 on 2 threads",
       0,
       2,
       1,
       32,
       32,
       1,
       {24, 24},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      {"channels-last 32 -> 32 3x3 on 2 threads, kernel an argument",
       1,
       2,
       1,
       32,
       32,
       1,
       {24, 24},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 1, 2}},
      {"depthwise 64 channels on 2 threads",
       1,
       2,
       1,
       64,
       64,
       64,
       {64, 64},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      /* channels first, pointwise and depthwise along rows (ref_qconv_cf): taps that start
       * and end out of bounds, strides, dilations, ragged pixel blocks and channel quads */
      {"depthwise 5x5 dilation 2, asymmetric pads, kernel an argument, 2 threads",
       0,
       2,
       2,
       12,
       12,
       12,
       {11, 9},
       {5, 5},
       {1, 1},
       {2, 2},
       {3, 1},
       {1, 4},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 1, 2}},
      {"depthwise 1 spatial axis, stride 3, pads 2",
       0,
       1,
       1,
       5,
       5,
       5,
       {17},
       {4},
       {3},
       {1},
       {2},
       {2},
       {U8, S8, U8, 1, 1, 0, 1, 1, 1, 0, 0, 0}},
      {"depthwise 3 spatial axes, stride 2",
       0,
       3,
       1,
       3,
       3,
       3,
       {5, 6, 7},
       {3, 3, 3},
       {2, 2, 2},
       {1, 1, 1},
       {1, 1, 1},
       {0, 1, 1},
       {U8, U8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"pointwise 40 -> 7 over 13 x 11 pixels, 2 threads",
       0,
       2,
       2,
       40,
       7,
       1,
       {13, 11},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      /* a lean 1 x 1 convolution's last block: 1 of 25 pixels (a lean column), 3 of 7 */
      {"pointwise 9 -> 6 over 5 x 5 pixels",
       0,
       2,
       1,
       9,
       6,
       1,
       {5, 5},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"pointwise u8 x s8 5 -> 3 over 1 x 7 pixels",
       0,
       2,
       1,
       5,
       3,
       1,
       {1, 7},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, S8, U8, 1, 0, 0, 1, 0, 1, 0, 0, 0}},
      {"pointwise u8 x u8, kernel an argument, 3 x 3 pixels",
       0,
       2,
       1,
       6,
       5,
       1,
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, U8, U8, 1, 1, 0, 1, 0, 1, 0, 1, 0}},
      /* how a channels-first product splits over threads (ref_qconv_cf_split): blocks of
         pixels, each part its own (many blocks); or one shared block at a time, its depth rows
         built by all parts, then each part's output channels (few blocks) */
      {"16 -> 32 3x3 over 96 x 96 pixels on 2 threads, by blocks",
       0,
       2,
       1,
       16,
       32,
       1,
       {96, 96},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      {"64 -> 96 3x3 over 10 x 10 pixels on 3 threads, by output channels",
       0,
       2,
       1,
       64,
       96,
       1,
       {10, 10},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 3}},
      {"channels-last pointwise, 5 input channels a group (odd: im2col rows)",
       1,
       2,
       1,
       10,
       6,
       2,
       {7, 9},
       {1, 1},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {S8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      /* int32 results, no requantization (ConvInteger) */
      {"s8 3 -> 8 3x3 stride 2, pads 1, over 17 x 21 (a first layer: 9 window rows)",
       0,
       2,
       1,
       3,
       8,
       1,
       {17, 21},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"u8 x s8 6 -> 5 3x3 over 9 x 14 (18 window rows)",
       0,
       2,
       1,
       6,
       5,
       1,
       {9, 14},
       {3, 3},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"s8 7 -> 4 3x3 stride 2 over 11 x 13, clamp [0, 127] (21 window rows)",
       0,
       2,
       1,
       7,
       4,
       1,
       {11, 13},
       {3, 3},
       {2, 2},
       {1, 1},
       {0, 0},
       {0, 0},
       {S8, S8, S8, 1, 1, 1, 1, 1, 0, 127, 0, 0}},
      {"depthwise 5x4 window over 5 x 4 pixels (a global pool's), s8",
       0,
       2,
       1,
       8,
       8,
       8,
       {5, 4},
       {5, 4},
       {1, 1},
       {1, 1},
       {0, 0},
       {0, 0},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"int32 results: s8 per channel, groups, stride 2, asymmetric pads",
       0,
       2,
       2,
       6,
       8,
       2,
       {9, 8},
       {3, 2},
       {2, 1},
       {1, 2},
       {1, 0},
       {0, 1},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"int32 results: channels-last, kernel an argument",
       1,
       2,
       1,
       4,
       6,
       1,
       {5, 5},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"int32 results: depthwise 3x3, on 2 threads",
       0,
       2,
       1,
       16,
       16,
       16,
       {20, 20},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, U8, U8, 1, 1, 1, 0, 1, 1, 0, 0, 2}},
      {"depthwise 3x3 dilations 2 x 1, strides 1 x 2 (a plane's rows two input rows apart)",
       0,
       2,
       1,
       6,
       6,
       6,
       {13, 20},
       {3, 3},
       {1, 2},
       {2, 1},
       {2, 1},
       {1, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"depthwise 5x5 stride 2 over 23 x 37 pixels (a partial block of 16 outputs)",
       0,
       2,
       1,
       12,
       12,
       12,
       {23, 37},
       {5, 5},
       {2, 2},
       {1, 1},
       {2, 2},
       {1, 2},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      /* uint8 maps to uint8 [0, 255]: on Thumb-2 with the DSP extension a lean 3 x 3 one reads
       * its input as bytes (ref_qg_depthwise3_u8), rows of odd and even widths */
      {"depthwise 3x3 u8, stride 1, on 2 threads",
       0,
       2,
       1,
       9,
       9,
       9,
       {9, 13},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      {"depthwise 3x3 u8, strides 1 x 2, pads (0, 1) and (1, 0)",
       0,
       2,
       1,
       5,
       5,
       5,
       {12, 15},
       {3, 3},
       {1, 2},
       {1, 1},
       {0, 1},
       {1, 0},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      /* int8 data on the 3 x 3 byte kernel where the CPU has it (ref_qg_dw3_bytes): rows of
       * whole and partial blocks of 16 outputs, pads of the zero point's byte */
      {"depthwise 3x3 s8, stride 2, pads (1, 0) and (0, 1), 21 output columns",
       0,
       2,
       1,
       7,
       7,
       7,
       {11, 41},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 0},
       {0, 1},
       {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"depthwise 3x3 s8, stride 1, 70 columns, on 2 threads",
       0,
       2,
       1,
       24,
       24,
       24,
       {6, 70},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {1, 1},
       {S8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    raw_results = strncmp(cases[i].what, "int32 results", 13) == 0;
    run_conv_case(&cases[i]);
  }
  raw_results = 0;
}

/* ---- MatMul cases --------------------------------------------------------------------------- */

typedef struct {
  const char *what;
  int ra, rb;
  int64_t a[4], b[4]; /* input [..., M, K], kernel [..., K, N] */
  qparams q;
} mm_case;

static void run_mm_case(const mm_case *c) {
  mm_case sym = *c;
  const mm_case *t = symmetric && without_wz(&sym.q) ? &sym : c;
  const int64_t m = t->a[t->ra - 2], k = t->a[t->ra - 1], n = t->b[t->rb - 1];
  const int br = (t->ra > t->rb ? t->ra : t->rb) - 2;
  int64_t batch[4], an = m * k, bn = k * n, yn = m * n, nb = 1, bi, ydims[6], i, j, p;
  uint8_t *x, *w, *y, *want;
  qdata d;
  qvalues v;
  odla_computation comp;
  odla_value xv, wv, yv;
  odla_value_shape shape;
  int e;
  for (e = 0; e < br; ++e) {
    int ia = e - (br - (t->ra - 2)), ib = e - (br - (t->rb - 2));
    int64_t da = ia >= 0 ? t->a[ia] : 1, db = ib >= 0 ? t->b[ib] : 1;
    batch[e] = da > db ? da : db;
    nb *= batch[e];
    ydims[e] = batch[e];
  }
  for (e = 0; e < t->ra - 2; ++e)
    an *= t->a[e];
  for (e = 0; e < t->rb - 2; ++e)
    bn *= t->b[e];
  yn *= nb;
  ydims[br] = m;
  ydims[br + 1] = n;
  x = (uint8_t *)malloc((size_t)an);
  w = (uint8_t *)malloc((size_t)bn);
  y = (uint8_t *)calloc((size_t)(yn * result_size()), 1);
  want = (uint8_t *)calloc((size_t)(yn * result_size()), 1);
  fill_random(x, an);
  fill_random(w, bn);
  draw_params(&t->q, n, k, &d);
  for (bi = 0; bi < nb; ++bi) { /* output batch bi: the operands' batches by broadcasting */
    int64_t r = bi, oa = 0, ob = 0, sa = 1, sb = 1;
    for (e = br - 1; e >= 0; --e) {
      int ia = e - (br - (t->ra - 2)), ib = e - (br - (t->rb - 2));
      int64_t da = ia >= 0 ? t->a[ia] : 1, db = ib >= 0 ? t->b[ib] : 1, ix = r % batch[e];
      r /= batch[e];
      oa += (da == 1 ? 0 : ix) * sa;
      ob += (db == 1 ? 0 : ix) * sb;
      sa *= da;
      sb *= db;
    }
    for (i = 0; i < m; ++i)
      for (j = 0; j < n; ++j) {
        int64_t acc = d.bias[j];
        for (p = 0; p < k; ++p)
          acc += (int64_t)(load8(t->q.xt, x, (oa * m + i) * k + p) - load8(t->q.xt, &d.xz, 0)) *
                 (load8(t->q.wt, w, (ob * k + p) * n + j) - load8(t->q.wt, d.wz, j));
        naive_store(&t->q, &d, j, acc, want, (bi * m + i) * n + j);
      }
  }

  last_error[0] = '\0';
  create_computation(&comp);
  set_least_memory(comp);
  xv = odla_CreateArgument(vt(t->q.xt, t->ra, t->a), ID("x"));
  wv = t->q.kernel_arg ? odla_CreateArgument(vt(t->q.wt, t->rb, t->b), ID("w"))
                       : odla_CreateConstant(vt(t->q.wt, t->rb, t->b), w, ID("w"));
  v = make_params(&t->q, &d, n);
  shape.size = br + 2;
  memcpy(shape.dims, ydims, sizeof ydims);
  yv = odla_ExtQLinearMatMul(xv, v.xz, wv, v.wz, v.bias, v.mult, v.shift, v.yz, d.lo, d.hi, shape,
                             ID("y"));
  CHECK(yv != NULL, "%s: refused: %s", t->what, last_error);
  odla_SetValueAsOutput(yv);
  CHECK(run_graph(comp, &t->q, x, t->q.kernel_arg ? w : NULL,
                  t->q.kernel_arg && t->q.has_wz ? d.wz : NULL, y) == ODLA_SUCCESS,
        "%s: execution failed: %s", t->what, last_error);
  check_bytes(t->what, y, want, yn * result_size());
  destroy_computation(comp);
  free(x);
  free(w);
  free(y);
  free(want);
}

/* ---- Convolutions over their input ---------------------------------------------------------- */

/* A chain of convolutions whose results have their inputs' shape (n images of c x h x w, or of
 * c x dd x h x w with the stages' windows 1 deep), each input dying at the next node, against
 * the naive loops stage by stage: in a least-memory computation with symmetric kernels (lean)
 * the planner gives each such result its input's buffer (a 1 x 1 and a depthwise convolution
 * write over what they have copied, the others over a 2-D map a row at a time from the rows
 * they keep; ops_quant_int.c), which the placements must show, and the bytes must not change,
 * on one thread and on two (where a 1 x 1 stage has the work to split its pixels). The first
 * stage reads the argument and the last writes the output, so those two stay apart. */
static void test_inplace_chain(int64_t n, int64_t c, int64_t dd, int64_t h, int64_t w) {
  enum { STAGES = 7 };
  /* A stage a row: what, cl, spatial, n, c, m (set below); group (0: c, depthwise), in (set
   * below), k, stride, dil, pad0, pad1; q. */
  /* clang-format off */
  static const conv_case stages[STAGES] = {
      {"1x1 from the argument", 0, 2, 0, 0, 0,
       1, {0, 0}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0},
       {U8, S8, S8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
      {"3x3 pad 1 over its input", 0, 2, 0, 0, 0,
       1, {0, 0}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
       {S8, S8, U8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
      {"depthwise 3x3 over its input", 0, 2, 0, 0, 0,
       0, {0, 0}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
       {U8, S8, U8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
      {"1x1 over its input", 0, 2, 0, 0, 0,
       1, {0, 0}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0},
       {U8, S8, U8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
      {"5x3 dilation 2 across, asymmetric pads, over its input", 0, 2, 0, 0, 0,
       1, {0, 0}, {5, 3}, {1, 1}, {1, 2}, {3, 1}, {1, 3},
       {U8, S8, S8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
      {"1x3 over its input, clamped", 0, 2, 0, 0, 0,
       1, {0, 0}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1},
       {S8, S8, U8, 1, 0, 0, 1, 1, 0, 90, 0, 0}},
      {"3x3 to the output (its row copies unused)", 0, 2, 0, 0, 0,
       1, {0, 0}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1},
       {U8, S8, U8, 1, 0, 0, 1, 1, 1, 0, 0, 0}},
  };
  /* clang-format on */
  const int64_t pix = n * c * dd * h * w, out[3] = {dd, h, w};
  const int deep = dd > 1, rank = deep ? 5 : 4;
  const int64_t xdims[5] = {n, c, deep ? dd : h, deep ? h : w, w};
  char ids[6][16];
  uint8_t *x = malloc((size_t)pix), *want = malloc((size_t)pix), *y = malloc((size_t)pix);
  uint8_t *next = malloc((size_t)pix), *kernels[STAGES];
  conv_case t[STAGES];
  qdata d[STAGES];
  odla_value r[STAGES], v;
  odla_computation comp;
  odla_context ctx;
  odla_int32 threads;
  int i, k;
  fill_random(x, pix);
  memcpy(want, x, (size_t)pix);
  for (i = 0; i < STAGES; ++i) { /* the expected bytes, stage by stage */
    const int64_t depth = (c / (stages[i].group ? 1 : c)) * stages[i].k[0] * stages[i].k[1];
    t[i] = stages[i];
    t[i].n = n;
    t[i].c = t[i].m = c;
    t[i].group = stages[i].group ? 1 : c;
    t[i].in[0] = deep ? dd : h;
    t[i].in[1] = deep ? h : w;
    t[i].in[2] = w;
    if (deep) { /* the windows one deep: a leading axis of extent 1, stride 1, no pads */
      t[i].spatial = 3;
      for (k = 2; k > 0; --k) {
        t[i].k[k] = t[i].k[k - 1];
        t[i].stride[k] = t[i].stride[k - 1];
        t[i].dil[k] = t[i].dil[k - 1];
        t[i].pad0[k] = t[i].pad0[k - 1];
        t[i].pad1[k] = t[i].pad1[k - 1];
      }
      t[i].k[0] = t[i].stride[0] = t[i].dil[0] = 1;
      t[i].pad0[0] = t[i].pad1[0] = 0;
    }
    kernels[i] = malloc((size_t)(c * depth));
    fill_random(kernels[i], c * depth);
    draw_params(&t[i].q, c, depth, &d[i]);
    naive_conv(&t[i], &d[i], want, kernels[i], out, next);
    memcpy(want, next, (size_t)pix);
  }
  last_error[0] = '\0';
  create_computation(&comp);
  set_least_memory(comp);
  v = odla_CreateArgument(vt(U8, rank, xdims), ID("x"));
  for (i = 0; i < STAGES; ++i) {
    const qdata *q = &d[i];
    const int64_t wdims[5] = {c, c / t[i].group, t[i].k[0], t[i].k[1], t[i].k[2]};
    odla_value_shape shape;
    shape.size = rank;
    memcpy(shape.dims, xdims, sizeof xdims);
    for (k = 0; k < 6; ++k)
      snprintf(ids[k], sizeof ids[k], "%c%d", "wzbmsy"[k], i);
    v = odla_ExtQLinearConv(v, odla_CreateConstant(vt(t[i].q.xt, 0, NULL), &q->xz, ID(ids[1])),
                            ODLA_CHANNELS_FIRST, (odla_uint32)t[i].group,
                            odla_CreateConstant(vt(S8, rank, wdims), kernels[i], ID(ids[0])), NULL,
                            ODLA_OIS, t[i].stride, t[i].dil, t[i].pad0, t[i].pad1,
                            odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(c)), q->bias, ID(ids[2])),
                            odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(c)), q->mult, ID(ids[3])),
                            odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(c)), q->shift, ID(ids[4])),
                            odla_CreateConstant(vt(t[i].q.yt, 1, DIMS(1)), &q->yz, ID(ids[5])),
                            q->lo, q->hi, shape, ID(i == STAGES - 1 ? "y" : t[i].what));
    CHECK(v != NULL, "%s: refused: %s", t[i].what, last_error);
    r[i] = v;
  }
  odla_SetValueAsOutput(r[STAGES - 1]);
  for (threads = 1; threads <= 2; ++threads) {
    odla_CreateContext(&ctx);
    CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&threads) == ODLA_SUCCESS,
          "in-place chain: %d threads", (int)threads);
    odla_BindToArgumentById(ID("x"), x, ctx);
    memset(y, 0, (size_t)pix);
    odla_BindToOutputById(ID("y"), y, ctx);
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "in-place chain, %d threads: execution failed: %s", (int)threads, last_error);
    odla_DestroyContext(ctx);
    check_bytes(threads == 1 ? "in-place chain" : "in-place chain, 2 threads", y, want, pix);
  }
  if (least_memory && symmetric)
    for (i = 1; i + 1 < STAGES; ++i) { /* each inner result in its input's buffer */
      odla_size_t at[2], bytes;
      odla_int32 first, last;
      if (deep && t[i].group == 1 && stages[i].k[0] * stages[i].k[1] > 1)
        continue; /* over a 3-D map only the local ways (a row of a 2-D map is not a row) */
      CHECK(odla_ExtGetValuePlacement(r[i - 1], &at[0], &bytes, &first, &last) == ODLA_SUCCESS &&
                odla_ExtGetValuePlacement(r[i], &at[1], &bytes, &first, &last) == ODLA_SUCCESS,
            "in-place chain: placements of stage %d", i);
      CHECK(at[0] == at[1], "in-place chain: %s at %lu, its input at %lu", t[i].what,
            (unsigned long)at[1], (unsigned long)at[0]);
    }
  destroy_computation(comp);
  for (i = 0; i < STAGES; ++i)
    free(kernels[i]);
  free(x);
  free(want);
  free(y);
  free(next);
}

/* The chain small (odd extents, two images), large enough for a 1 x 1 stage's pixels to split
 * over two threads (ref_qi_parts), and over maps 3 deep. */
static void test_inplace_chains(void) {
  test_inplace_chain(2, 6, 1, 7, 9);
  test_inplace_chain(1, 48, 1, 32, 32);
  test_inplace_chain(1, 5, 3, 6, 7);
}

static void test_matmul(void) {
  static const mm_case cases[] = {
      {"u8 matrices, per tensor", 2, 2, {7, 13}, {13, 5}, {U8, U8, U8, 1, 1, 0, 1, 0, 1, 0, 0, 0}},
      {"s8 per column", 2, 2, {9, 40}, {40, 11}, {S8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"u8 x s8, kernel an argument",
       2,
       2,
       {5, 17},
       {17, 6},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"batched kernel broadcast over the input's batch",
       4,
       3,
       {2, 3, 4, 9},
       {1, 9, 5},
       {U8, S8, S8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"batched both ways [3,1] x [1,2]",
       4,
       4,
       {3, 1, 5, 8},
       {1, 2, 8, 7},
       {S8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
      {"matrix input, batched kernel",
       2,
       3,
       {6, 10},
       {3, 10, 4},
       {U8, U8, U8, 0, 1, 0, 0, 1, 1, 0, 0, 0}},
      {"clamp [0, 100], no zero points",
       3,
       2,
       {2, 5, 12},
       {12, 9},
       {U8, U8, U8, 0, 0, 0, 1, 1, 0, 100, 0, 0}},
      {"256 x 128 x 96 on 2 threads",
       2,
       2,
       {256, 128},
       {128, 96},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 2}},
      /* int32 results, no requantization (MatMulInteger) */
      {"int32 results: per column, odd depth, batched",
       3,
       2,
       {2, 7, 13},
       {13, 21},
       {U8, S8, U8, 1, 1, 1, 1, 1, 1, 0, 0, 0}},
      {"int32 results: computed kernel, no bias, 2 threads",
       2,
       2,
       {64, 96},
       {96, 40},
       {S8, S8, S8, 1, 1, 0, 0, 1, 1, 0, 1, 2}},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    raw_results = strncmp(cases[i].what, "int32 results", 13) == 0;
    run_mm_case(&cases[i]);
  }
  raw_results = 0;
}

/* ---- Ties, worked out by hand --------------------------------------------------------------- */

/* y[i] = round_half_to_even((bias + x[i] * 1) * mult / 2^shift) + zp for a [rows, 1] x [1, 1]
 * int8 product: the sums are the x values plus bias. */
static void tie_case(const char *what, int rows, const int8_t *x, int32_t bias, int32_t mult,
                     int32_t shift, int8_t zp, const int8_t *want) {
  const int8_t one = 1;
  int8_t y[16];
  odla_computation comp;
  odla_value xv, yv;
  qparams q;
  int i;
  memset(&q, 0, sizeof q);
  memset(y, 0x55, sizeof y);
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  xv = odla_CreateArgument(vt(ODLA_INT8, 2, DIMS(rows, 1)), ID("x"));
  yv = odla_ExtQLinearMatMul(
      xv, NULL, odla_CreateConstant(vt(ODLA_INT8, 2, DIMS(1, 1)), &one, ID("w")), NULL,
      odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(1)), &bias, ID("bias")),
      odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &mult, ID("mult")),
      odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &shift, ID("shift")),
      odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &zp, ID("yz")), -128, 127, any_shape(), ID("y"));
  CHECK(yv != NULL, "%s: refused: %s", what, last_error);
  odla_SetValueAsOutput(yv);
  CHECK(run_graph(comp, &q, x, NULL, NULL, y) == ODLA_SUCCESS, "%s: execution failed", what);
  for (i = 0; i < rows; ++i)
    CHECK(y[i] == want[i], "%s: row %d (sum %d) gives %d, want %d", what, i, (int)(x[i] + bias),
          y[i], want[i]);
  odla_DestroyComputation(comp);
}

static void test_ties(void) {
  /* sum / 2 + 10: 1.5 -> 2, 2.5 -> 2, -1.5 -> -2, -2.5 -> -2, 0.5 -> 0, -0.5 -> 0, 3.5 -> 4,
   * and 4 -> 2 exactly */
  static const int8_t x1[8] = {3, 5, -3, -5, 1, -1, 7, 4};
  static const int8_t w1[8] = {12, 12, 8, 8, 10, 10, 14, 12};
  /* sum * 3 / 4: 2 -> 1.5 -> 2, -2 -> -2, 6 -> 4.5 -> 4, -6 -> -4, 1 -> 0.75 -> 1,
   * -1 -> -0.75 -> -1, 10 -> 7.5 -> 8, 14 -> 10.5 -> 10 */
  static const int8_t x2[8] = {2, -2, 6, -6, 1, -1, 10, 14};
  static const int8_t w2[8] = {2, -2, 4, -4, 1, -1, 8, 10};
  /* Sums near 2^31 (the bias): (3 * 2^29 + x) * 2^30 / 2^60 is 1.5 -> 2 for x = 0 and just
   * over 1.5 -> 2 for x = 1; negated, -1.5 -> -2 and just over -1.5 -> -1. (5 * 2^28 + x) *
   * 2^30 / 2^59 is 2.5 -> 2 for x = 0 and just under 2.5 -> 2 for x = -1. */
  static const int8_t x3[2] = {0, 1}, w3[2] = {2, 2}, w4[2] = {-2, -1};
  static const int8_t x5[2] = {0, -1}, w5[2] = {2, 2};
  tie_case("ties of sum / 2", 8, x1, 0, 1, 1, 10, w1);
  tie_case("ties of sum * 3 / 4", 8, x2, 0, 3, 2, 0, w2);
  tie_case("1.5 at 2^60", 2, x3, 3 << 29, 1 << 30, 60, 0, w3);
  tie_case("-1.5 at 2^60", 2, x3, -(3 << 29), 1 << 30, 60, 0, w4);
  tie_case("2.5 at 2^59", 2, x5, 5 << 28, 1 << 30, 59, 0, w5);
}

/* ---- The builders' rules -------------------------------------------------------------------- */

/* The builder's result must be NULL with a message containing `want`, and the computation
 * must then refuse to compile with `status`. */
static void check_refused(odla_computation comp, odla_value v, odla_status status, const char *want,
                          const char *what) {
  odla_executable exe = NULL;
  CHECK(v == NULL, "%s: built although invalid", what);
  CHECK(strstr(last_error, want) != NULL, "%s: message '%s' lacks '%s'", what, last_error, want);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == status, "%s: compile status", what);
}

/* Operands of a valid convolution (input [1, 2, 4, 4] u8, kernel [3, 2, 3, 3] u8) or product
 * (input [4, 6], kernel [6, 3]) that each case below spoils in one way. */
typedef struct {
  odla_value x, xz, w, wz, bias, mult, shift, yz;
  odla_int32 lo, hi;
  odla_memory_layout layout, kernel_layout;
  odla_uint32 group;
  odla_value_shape out;
} ops;

static const uint8_t zeros[64];
static const int32_t ones32[8] = {1, 1, 1, 1, 1, 1, 1, 1};
static const int32_t shifts[8] = {8, 8, 8, 8, 8, 8, 8, 8};

static ops valid_ops(int matmul) {
  ops o;
  o.x =
      odla_CreateArgument(vt(U8, matmul ? 2 : 4, matmul ? DIMS(4, 6) : DIMS(1, 2, 4, 4)), ID("x"));
  o.xz = odla_CreateConstant(vt(U8, 0, NULL), zeros, ID("xz"));
  o.w = odla_CreateConstant(vt(U8, matmul ? 2 : 4, matmul ? DIMS(6, 3) : DIMS(3, 2, 3, 3)), zeros,
                            ID("w"));
  o.wz = odla_CreateConstant(vt(U8, 1, DIMS(3)), zeros, ID("wz"));
  o.bias = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(3)), zeros, ID("bias"));
  o.mult = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(3)), ones32, ID("mult"));
  o.shift = odla_CreateConstant(vt(ODLA_INT32, 0, NULL), shifts, ID("shift"));
  o.yz = odla_CreateConstant(vt(U8, 0, NULL), zeros, ID("yz"));
  o.lo = 0;
  o.hi = 255;
  o.layout = ODLA_CHANNELS_FIRST;
  o.kernel_layout = ODLA_OIS;
  o.group = 1;
  o.out = any_shape();
  return o;
}

static odla_value build(int matmul, const ops *o) {
  static const odla_uint32 one[2] = {1, 1}, zero[2] = {0, 0};
  if (matmul)
    return odla_ExtQLinearMatMul(o->x, o->xz, o->w, o->wz, o->bias, o->mult, o->shift, o->yz, o->lo,
                                 o->hi, o->out, ID("y"));
  return odla_ExtQLinearConv(o->x, o->xz, o->layout, o->group, o->w, o->wz, o->kernel_layout, one,
                             one, zero, zero, o->bias, o->mult, o->shift, o->yz, o->lo, o->hi,
                             o->out, ID("y"));
}

/* One spoilt operand per case: `spoil` changes the valid set. */
typedef void (*spoil_fn)(ops *o, int matmul);
typedef struct {
  const char *what;
  spoil_fn spoil;
  odla_status status;
  const char *want;
  int ops; /* 1: Conv only, 2: MatMul only, 3: both */
} refusal;

static void sp_float_input(ops *o, int mm) {
  o->x = odla_CreateArgument(vt(ODLA_FLOAT32, mm ? 2 : 4, mm ? DIMS(4, 6) : DIMS(1, 2, 4, 4)),
                             ID("xf"));
}
static void sp_int16_kernel(ops *o, int mm) {
  o->w = odla_CreateConstant(vt(ODLA_INT16, mm ? 2 : 4, mm ? DIMS(6, 3) : DIMS(3, 2, 3, 3)), zeros,
                             ID("w16"));
}
static void sp_xz_type(ops *o, int mm) {
  (void)mm;
  o->xz = odla_CreateConstant(vt(S8, 0, NULL), zeros, ID("xz8"));
}
static void sp_xz_count(ops *o, int mm) {
  (void)mm;
  o->xz = odla_CreateConstant(vt(U8, 1, DIMS(2)), zeros, ID("xz2"));
}
static void sp_wz_count(ops *o, int mm) {
  (void)mm;
  o->wz = odla_CreateConstant(vt(U8, 1, DIMS(2)), zeros, ID("wz2"));
}
static void sp_wz_type(ops *o, int mm) {
  (void)mm;
  o->wz = odla_CreateConstant(vt(S8, 1, DIMS(3)), zeros, ID("wz8"));
}
static void sp_bias_type(ops *o, int mm) {
  (void)mm;
  o->bias = odla_CreateConstant(vt(ODLA_INT64, 1, DIMS(3)), zeros, ID("b64"));
}
static void sp_bias_count(ops *o, int mm) {
  (void)mm;
  o->bias = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(1)), zeros, ID("b1"));
}
static void sp_mult_type(ops *o, int mm) {
  (void)mm;
  o->mult = odla_CreateConstant(vt(ODLA_FLOAT32, 0, NULL), ones32, ID("mf"));
}
static void sp_mult_negative(ops *o, int mm) {
  static const int32_t m[3] = {1, 1, -5};
  (void)mm;
  o->mult = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(3)), m, ID("mneg"));
}
static void sp_shift_zero(ops *o, int mm) {
  (void)mm;
  o->shift = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(1)), zeros, ID("s0"));
}
static void sp_shift_63(ops *o, int mm) {
  static const int32_t s[3] = {8, 63, 8};
  (void)mm;
  o->shift = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(3)), s, ID("s63"));
}
static void sp_shift_count(ops *o, int mm) {
  (void)mm;
  o->shift = odla_CreateConstant(vt(ODLA_INT32, 1, DIMS(2)), shifts, ID("s2"));
}
static void sp_yz_null(ops *o, int mm) {
  (void)mm;
  o->yz = NULL;
}
static void sp_yz_type(ops *o, int mm) {
  (void)mm;
  o->yz = odla_CreateConstant(vt(ODLA_INT32, 0, NULL), zeros, ID("yz32"));
}
static void sp_clamp_order(ops *o, int mm) {
  (void)mm;
  o->lo = 10;
  o->hi = 9;
}
static void sp_clamp_range(ops *o, int mm) {
  (void)mm;
  o->hi = 256;
}
static void sp_clamp_s8(ops *o, int mm) {
  (void)mm;
  o->yz = odla_CreateConstant(vt(S8, 0, NULL), zeros, ID("yz8"));
  o->lo = -129;
  o->hi = 0;
}
static void sp_layout(ops *o, int mm) {
  (void)mm;
  o->kernel_layout = ODLA_SIO;
}
static void sp_group(ops *o, int mm) {
  (void)mm;
  o->group = 2;
}
static void sp_out(ops *o, int mm) {
  static const int64_t conv[4] = {1, 3, 3, 2}, matmul[2] = {4, 4};
  o->out.size = mm ? 2 : 4;
  memcpy(o->out.dims, mm ? matmul : conv, (size_t)o->out.size * sizeof(int64_t));
}
static void sp_rank1(ops *o, int mm) {
  (void)mm;
  o->x = odla_CreateArgument(vt(U8, 1, DIMS(6)), ID("x1"));
}
static void sp_inner(ops *o, int mm) {
  (void)mm;
  o->w = odla_CreateConstant(vt(U8, 2, DIMS(5, 3)), zeros, ID("w53"));
}
static void sp_batch(ops *o, int mm) {
  (void)mm;
  o->x = odla_CreateArgument(vt(U8, 3, DIMS(2, 4, 6)), ID("x3"));
  o->w = odla_CreateConstant(vt(U8, 3, DIMS(3, 6, 3)), zeros, ID("w3"));
}

static void test_refusals(void) {
  static const refusal cases[] = {
      {"float input", sp_float_input, ODLA_UNSUPPORTED_DATATYPE,
       "input has element type float32; uint8 or int8 is required", 3},
      {"int16 kernel", sp_int16_kernel, ODLA_UNSUPPORTED_DATATYPE,
       "kernel has element type int16; uint8 or int8 is required", 3},
      {"input zero point of another type", sp_xz_type, ODLA_INVALID_PARAM,
       "input_zero_point has element type int8, the input uint8", 3},
      {"input zero point of 2 elements", sp_xz_count, ODLA_INVALID_PARAM,
       "input_zero_point [2] must hold 1 element", 3},
      {"kernel zero point of 2 elements", sp_wz_count, ODLA_INVALID_PARAM,
       "kernel_zero_point [2] must hold 1 element or 3 (one per output channel)", 3},
      {"kernel zero point of another type", sp_wz_type, ODLA_INVALID_PARAM,
       "kernel_zero_point has element type int8, the kernel uint8", 3},
      {"int64 bias", sp_bias_type, ODLA_INVALID_PARAM, "bias is int64 [3]; it must be int32 [3]",
       3},
      {"bias of 1 element", sp_bias_count, ODLA_INVALID_PARAM,
       "bias is int32 [1]; it must be int32 [3]", 3},
      {"float multiplier", sp_mult_type, ODLA_INVALID_PARAM,
       "multiplier is float32 []; it must be int32 with 1 element or 3", 3},
      {"negative multiplier", sp_mult_negative, ODLA_INVALID_PARAM,
       "multiplier[2] is -5; it must be in [0, 2^31)", 3},
      {"shift 0", sp_shift_zero, ODLA_INVALID_PARAM, "shift[0] is 0; it must be in [1, 62]", 3},
      {"shift 63", sp_shift_63, ODLA_INVALID_PARAM, "shift[1] is 63; it must be in [1, 62]", 3},
      {"shift of 2 elements", sp_shift_count, ODLA_INVALID_PARAM,
       "shift is int32 [2]; it must be int32 with 1 element or 3", 3},
      {"no output zero point", sp_yz_null, ODLA_INVALID_PARAM, "output_zero_point is NULL", 3},
      {"int32 output zero point", sp_yz_type, ODLA_INVALID_PARAM,
       "output_zero_point is int32 []; it must be one uint8 or int8 element", 3},
      {"output_min > output_max", sp_clamp_order, ODLA_INVALID_PARAM,
       "output_min 10 and output_max 9 must satisfy 0 <= output_min <= output_max <= 255", 3},
      {"output_max 256 for uint8", sp_clamp_range, ODLA_INVALID_PARAM,
       "output_min 0 and output_max 256 must satisfy 0 <= output_min", 3},
      {"output_min -129 for int8", sp_clamp_s8, ODLA_INVALID_PARAM,
       "must satisfy -128 <= output_min <= output_max <= 127 (the output type int8)", 3},
      {"channels-first data with an SIO kernel", sp_layout, ODLA_UNSUPPORTED_OP,
       "channels-first data needs an OIS kernel, channels-last data an SIO kernel", 1},
      {"group 2 of a 2-channel input and a 2-channel kernel", sp_group, ODLA_INVALID_PARAM,
       "input [1,2,4,4], kernel [3,2,3,3] and group 2 do not fit", 1},
      {"wrong output_dims", sp_out, ODLA_INVALID_PARAM, "differ from the computed", 3},
      {"rank-1 input", sp_rank1, ODLA_INVALID_PARAM, "input [6] and kernel [6,3] need rank >= 2",
       2},
      {"inner dimensions", sp_inner, ODLA_INVALID_PARAM,
       "inner dimensions of input [4,6] and kernel [5,3] differ", 2},
      {"batches 2 and 3", sp_batch, ODLA_INVALID_PARAM,
       "batch dims of input [2,4,6] and kernel [3,6,3] do not broadcast", 2},
  };
  size_t i;
  int mm;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    for (mm = 0; mm < 2; ++mm) {
      odla_computation comp;
      ops o;
      char what[160];
      if (!(cases[i].ops & (1 << mm)))
        continue;
      snprintf(what, sizeof what, "%s: %s", mm ? "MatMul" : "Conv", cases[i].what);
      odla_CreateComputation(&comp);
      o = valid_ops(mm);
      last_error[0] = '\0';
      CHECK(build(mm, &o) != NULL, "%s: the valid operands are refused: %s", what, last_error);
      odla_DestroyComputation(comp);
      odla_CreateComputation(&comp);
      o = valid_ops(mm);
      cases[i].spoil(&o, mm);
      last_error[0] = '\0';
      check_refused(comp, build(mm, &o), cases[i].status, cases[i].want, what);
      odla_DestroyComputation(comp);
    }
}

/* A shift computed in the graph (an argument) is checked when the node runs. */
static void test_runtime_shift(void) {
  static const int32_t bad = 63;
  static const uint8_t x[24];
  uint8_t y[12];
  odla_computation comp;
  odla_context ctx;
  ops o;
  odla_CreateComputation(&comp);
  o = valid_ops(1);
  o.shift = odla_CreateArgument(vt(ODLA_INT32, 0, NULL), ID("shift"));
  odla_SetValueAsOutput(build(1, &o));
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToArgumentById(ID("shift"), &bad, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_INVALID_PARAM,
        "a shift of 63 computed in the graph must fail the execution");
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

/* A stored and loaded executable replays the builder (its window arrays included) and packs
 * the kernel again: the same bytes. */
static void test_store_load(void) {
  static const odla_uint32 stride[2] = {2, 1}, dil[2] = {1, 2}, pad0[2] = {1, 0}, pad1[2] = {0, 2};
  /* x [2, 3, 7, 6] -> y [2, 4, 3, 6] */
  uint8_t x[2 * 3 * 7 * 6], w[4 * 3 * 3 * 2], y[2 * 4 * 3 * 6], y2[2 * 4 * 3 * 6];
  qparams q;
  qdata d;
  qvalues v;
  odla_computation comp;
  odla_executable exe = NULL;
  odla_resource_location loc;
  odla_size_t bytes = 0;
  odla_context ctx;
  unsigned char *image;
  memset(&q, 0, sizeof q);
  q.xt = U8, q.wt = S8, q.yt = U8, q.has_xz = q.has_wz = q.wz_per_channel = q.has_bias = 1;
  q.scale_per_channel = 1, q.lo = 1;
  fill_random(x, sizeof x);
  fill_random(w, sizeof w);
  draw_params(&q, 4, 18, &d);
  odla_CreateComputation(&comp);
  v = make_params(&q, &d, 4);
  odla_SetValueAsOutput(odla_ExtQLinearConv(
      odla_CreateArgument(vt(U8, 4, DIMS(2, 3, 7, 6)), ID("x")), v.xz, ODLA_CHANNELS_FIRST, 1,
      odla_CreateConstant(vt(S8, 4, DIMS(4, 3, 3, 2)), w, ID("w")), v.wz, ODLA_OIS, stride, dil,
      pad0, pad1, v.bias, v.mult, v.shift, v.yz, d.lo, d.hi, any_shape(), ID("y")));
  CHECK(run_graph(comp, &q, x, NULL, NULL, y) == ODLA_SUCCESS, "store/load: compile mode");
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "store/load: compile");
  CHECK(odla_ExtGetStoredExecutableBytes(exe, &bytes) == ODLA_SUCCESS && bytes > 0,
        "store/load: stored size");
  image = (unsigned char *)malloc((size_t)bytes);
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = image;
  loc.size = bytes;
  CHECK(odla_StoreExecutable(loc, exe) == ODLA_SUCCESS, "store/load: store");
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  CHECK(odla_LoadExecutable(loc, NULL, &exe) == ODLA_SUCCESS, "store/load: load: %s", last_error);
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToOutputById(ID("y"), y2, ctx);
  CHECK(odla_LaunchExecutable(exe, ctx) == ODLA_SUCCESS, "store/load: launch");
  CHECK(memcmp(y, y2, sizeof y) == 0, "store/load: the loaded executable computes other bytes");
  odla_DestroyContext(ctx);
  odla_DestroyExecutable(exe);
  free(image);
}

/* ---- Add and Mul ---------------------------------------------------------------------------- */

typedef struct {
  const char *what;
  int mul;
  odla_element_type at, bt, yt;
  int rank;
  int64_t ad[4], bd[4]; /* operand dims, right-aligned against each other (numpy) */
  int has_za, has_zb;
  int32_t ma, mb, shift; /* the multipliers' magnitudes: drawn below them */
  int32_t lo, hi;        /* lo > hi: the output type's range */
  int threads;
} qbin_case;

/* Flat index into an operand of dims d (rank r, right-aligned in the output's rank) of the
 * output element whose coordinates are c. */
static int64_t bcast_index(const int64_t *d, int r, const int64_t *c, int out_rank) {
  int64_t at = 0;
  int i;
  for (i = 0; i < r; ++i)
    at = at * d[i] + (d[i] == 1 ? 0 : c[out_rank - r + i]);
  return at;
}

static void run_qbin_case(const qbin_case *t) {
  const int32_t tlo = t->yt == ODLA_INT8 ? -128 : 0, thi = t->yt == ODLA_INT8 ? 127 : 255;
  const int32_t lo = t->lo > t->hi ? tlo : t->lo, hi = t->lo > t->hi ? thi : t->hi;
  int64_t yd[4], an = 1, bn = 1, yn = 1, i, c[4];
  static uint8_t a[1 << 16], b[1 << 16], y[1 << 16], want[1 << 16];
  uint8_t za = 0, zb = 0, zy;
  int32_t ma = (int32_t)(next_random() % (uint32_t)t->ma),
          mb = (int32_t)(next_random() % (uint32_t)t->mb);
  odla_computation comp;
  odla_value av, bv, zav = NULL, zbv = NULL, zyv, yv;
  odla_context ctx;
  int d;
  for (d = 0; d < t->rank; ++d) {
    yd[d] = t->ad[d] > t->bd[d] ? t->ad[d] : t->bd[d];
    an *= t->ad[d];
    bn *= t->bd[d];
    yn *= yd[d];
  }
  fill_random(a, an);
  fill_random(b, bn);
  if (t->has_za)
    za = (uint8_t)next_random();
  if (t->has_zb)
    zb = (uint8_t)next_random();
  zy = (uint8_t)next_random();
  if (t->mul)
    mb = 0;
  for (i = 0; i < yn; ++i) {
    int64_t r = i, x, z, num;
    for (d = t->rank - 1; d >= 0; --d) {
      c[d] = r % yd[d];
      r /= yd[d];
    }
    x = load8(t->at, a, bcast_index(t->ad, t->rank, c, t->rank)) -
        (t->has_za ? load8(t->at, &za, 0) : 0);
    z = load8(t->bt, b, bcast_index(t->bd, t->rank, c, t->rank)) -
        (t->has_zb ? load8(t->bt, &zb, 0) : 0);
    num = t->mul ? x * z * ma : x * ma + z * mb;
    want[i] = (uint8_t)naive_requantize(num, 1, t->shift, load8(t->yt, &zy, 0), lo, hi);
  }
  create_computation(&comp);
  av = odla_CreateArgument(vt(t->at, t->rank, t->ad), ID("a"));
  bv = odla_CreateArgument(vt(t->bt, t->rank, t->bd), ID("b"));
  if (t->has_za)
    zav = odla_CreateConstant(vt(t->at, 0, NULL), &za, ID("za"));
  if (t->has_zb)
    zbv = odla_CreateConstant(vt(t->bt, 0, NULL), &zb, ID("zb"));
  zyv = odla_CreateConstant(vt(t->yt, 0, NULL), &zy, ID("zy"));
  yv = t->mul
           ? odla_ExtQLinearMul(av, zav, bv, zbv, ma, t->shift, zyv, lo, hi, any_shape(), ID("y"))
           : odla_ExtQLinearAdd(av, zav, ma, bv, zbv, mb, t->shift, zyv, lo, hi, any_shape(),
                                ID("y"));
  CHECK(yv != NULL, "%s: the builder failed: %s", t->what, last_error);
  if (yv) {
    odla_SetValueAsOutput(yv);
    odla_executable exe = NULL;
    CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "%s: compile", t->what);
    odla_CreateContext(&ctx);
    if (t->threads > 0) {
      odla_int32 n = t->threads;
      odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n);
    }
    odla_BindToArgumentById(ID("a"), a, ctx);
    odla_BindToArgumentById(ID("b"), b, ctx);
    odla_BindToOutputById(ID("y"), y, ctx);
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "%s: execute", t->what);
    odla_DestroyContext(ctx);
    odla_DestroyExecutable(exe);
    check_bytes(t->what, y, want, yn);
  }
  destroy_computation(comp);
}

static void test_add_mul(void) {
  /* what, mul, at, bt, yt, rank, ad, bd, has_za, has_zb, ma, mb (bounds), shift, lo, hi, threads */
  static const qbin_case cases[] = {
      {"add u8 + u8 -> u8, same shapes",
       0,
       U8,
       U8,
       U8,
       2,
       {5, 7},
       {5, 7},
       1,
       1,
       1 << 30,
       1 << 30,
       31,
       1,
       0,
       0},
      {"add s8 + u8 -> s8, b broadcast over rows",
       0,
       S8,
       U8,
       S8,
       2,
       {6, 9},
       {1, 9},
       1,
       1,
       1 << 28,
       1 << 30,
       32,
       1,
       0,
       0},
      {"add u8 + s8 -> u8, relu clamp [40, 255], a broadcast both ways",
       0,
       U8,
       S8,
       U8,
       3,
       {2, 1, 5},
       {1, 4, 5},
       1,
       0,
       1 << 30,
       1 << 29,
       33,
       40,
       255,
       0},
      {"add ties: multipliers 1 and 1, shift 1",
       0,
       S8,
       S8,
       S8,
       1,
       {64},
       {64},
       0,
       0,
       2,
       2,
       1,
       1,
       0,
       0},
      {"add of a scalar, 2 threads, 4096 elements",
       0,
       U8,
       U8,
       U8,
       2,
       {64, 64},
       {1, 1},
       1,
       1,
       1 << 30,
       1 << 30,
       31,
       1,
       0,
       2},
      {"add of rows, 3 threads over 256 rows of 160",
       0,
       S8,
       S8,
       U8,
       3,
       {2, 128, 160},
       {1, 1, 160},
       1,
       1,
       1 << 30,
       1 << 29,
       31,
       1,
       0,
       3},
      {"mul by a scalar, 2 threads over one row of 40000",
       1,
       U8,
       S8,
       S8,
       1,
       {40000},
       {1},
       1,
       1,
       1 << 30,
       1,
       36,
       1,
       0,
       2},
      {"mul u8 * u8 -> u8", 1, U8, U8, U8, 2, {3, 11}, {3, 11}, 1, 1, 1 << 30, 1, 38, 1, 0, 0},
      {"mul s8 * u8 -> s8, broadcast, clamp [-20, 30]",
       1,
       S8,
       U8,
       S8,
       4,
       {2, 1, 3, 1},
       {1, 2, 1, 4},
       1,
       1,
       1 << 30,
       1,
       37,
       -20,
       30,
       0},
      {"mul ties: multiplier 1, shift 1", 1, S8, S8, U8, 1, {50}, {50}, 1, 0, 2, 1, 1, 1, 0, 0},
  };
  size_t i;
  odla_computation comp;
  odla_value a, b, f, zy, zbad;
  uint8_t z = 3;
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    run_qbin_case(&cases[i]);
  /* the builders' rules, each on a computation of its own */
  for (i = 0; i < 7; ++i) {
    static const char *const whats[7] = {"float operand",        "shapes",
                                         "negative multiplier",  "shift 63",
                                         "computed zero point",  "a zero point of another type",
                                         "clamp beyond the type"};
    static const char *const messages[7] = {"uint8 or int8 is required",
                                            "do not broadcast",
                                            "multipliers must be in [0, 2^31)",
                                            "shift in [1, 62]",
                                            "must be a constant scalar of its operand's type",
                                            "a_zero_point is uint8",
                                            "output_min 0 and output_max 256"};
    odla_value v = NULL;
    odla_CreateComputation(&comp);
    a = odla_CreateArgument(vt(U8, 2, DIMS(2, 3)), ID("a"));
    b = odla_CreateArgument(vt(S8, 2, DIMS(4, 3)), ID("b"));
    f = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(3)), ID("f"));
    zy = odla_CreateConstant(vt(U8, 0, NULL), &z, ID("zy"));
    zbad = odla_CreateArgument(vt(U8, 0, NULL), ID("zbad"));
    switch (i) {
    case 0:
      v = odla_ExtQLinearAdd(f, NULL, 1, a, NULL, 1, 30, zy, 0, 255, any_shape(), ID("y"));
      break;
    case 1:
      v = odla_ExtQLinearAdd(a, NULL, 1, b, NULL, 1, 30, zy, 0, 255, any_shape(), ID("y"));
      break;
    case 2:
      v = odla_ExtQLinearMul(a, NULL, a, NULL, -1, 30, zy, 0, 255, any_shape(), ID("y"));
      break;
    case 3:
      v = odla_ExtQLinearAdd(a, NULL, 1, a, NULL, 1, 63, zy, 0, 255, any_shape(), ID("y"));
      break;
    case 4:
      v = odla_ExtQLinearAdd(a, zbad, 1, a, NULL, 1, 30, zy, 0, 255, any_shape(), ID("y"));
      break;
    case 5:
      v = odla_ExtQLinearAdd(b, zy, 1, b, NULL, 1, 30, zy, 0, 255, any_shape(), ID("y"));
      break;
    default:
      v = odla_ExtQLinearAdd(a, NULL, 1, a, NULL, 1, 30, zy, 0, 256, any_shape(), ID("y"));
      break;
    }
    check_refused(comp, v, i == 0 ? ODLA_UNSUPPORTED_DATATYPE : ODLA_INVALID_PARAM, messages[i],
                  whats[i]);
    odla_DestroyComputation(comp);
  }
}

int main(int argc, char **argv) {
  (void)argc, (void)argv;
  odla_SetLogger(keep_error);
  test_conv();
  test_matmul();
  test_inplace_chains();
  symmetric = 1; /* int8 kernels that are constants: the 8-bit product on AVX512-VNNI's CPUs */
  test_conv();
  test_matmul();
  symmetric = 0;
  least_memory = 1; /* the int8 kernels that are constants lean, the others packed */
  test_conv();
  test_matmul();
  symmetric = 1; /* every int8 kernel that is a constant lean */
  test_conv();
  test_inplace_chains();
  test_matmul();
  if (backend_takes_regions(region, sizeof region)) { /* as on a microcontroller */
    in_region = 1;
    test_conv();
    test_inplace_chains();
    test_matmul();
    test_add_mul();
  }
  in_region = least_memory = symmetric = 0;
  test_ties();
  test_refusals();
  test_runtime_shift();
  test_store_load();
  test_add_mul();
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
