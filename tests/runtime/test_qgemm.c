/* The reference backend's integer GEMM and requantization (runtime_stubs/reference/qgemm.h)
 * against naive int64 loops (and its 8-bit product, one_case8): the kernels this CPU gets (AVX2 on
 * an x86-64 CPU that has it) and the portable ones, on random operands in [-255, 255] and edge
 * tiles (every row count and column count of a partial tile, odd row and panel offsets), per-row
 * and per-column parameters, int8 and uint8 outputs, multipliers and shifts at their limits (0,
 * 2^31 - 1; 1, 62), whose exact rounding includes ties, and both requantizations: the int64 one and
 * the float64 one of ref_qg_prepare where it claims exactness. Compiled with the reference
 * backend's options. */
#include "check.h"
#include "qgemm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint32_t next(void) { /* xorshift64* */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (uint32_t)((state * 0x2545f4914f6cdd1du) >> 32);
}
static int32_t uniform(int32_t lo, int32_t hi) {
  return lo + (int32_t)(next() % (uint32_t)(hi - lo + 1));
}

/* round_half_to_even(v / 2^shift) by the definition, for the naive side. */
static int64_t round_shift(int64_t v, int shift) {
  const int64_t d = (int64_t)1 << shift;
  int64_t q = v >= 0 ? v / d : -((-v + d - 1) / d); /* floor */
  const int64_t r = v - q * d;                      /* in [0, d) */
  if (2 * r > d || (2 * r == d && (q & 1)))
    ++q;
  return q;
}

static void one_case(int64_t rows, int64_t cols, int64_t k, int per_row, int y_signed, int edges,
                     int fast) {
  const int64_t kp = (k + 1) / 2 * 2, ldp = kp + 2, params = per_row ? rows : cols;
  int16_t *p = calloc((size_t)(rows * ldp), sizeof *p);
  int16_t *v = calloc((size_t)ref_qg_v_count(kp, cols), sizeof *v);
  int32_t *bias = malloc((size_t)params * sizeof *bias), *mult = malloc((size_t)params * 4);
  int32_t *shift = malloc((size_t)params * sizeof *shift);
  int32_t *smin = malloc((size_t)params * sizeof *smin), *smax = malloc((size_t)params * 4);
  double *scale = malloc((size_t)params * sizeof *scale);
  unsigned char *y3 = malloc((size_t)(rows * cols));
  int32_t *sums = malloc((size_t)(rows * cols) * sizeof *sums);
  unsigned char *y1 = malloc((size_t)(rows * cols)), *y2 = malloc((size_t)(rows * cols));
  int64_t r, c, i;
  ref_qg g;
  for (r = 0; r < rows; ++r)
    for (i = 0; i < k; ++i)
      p[r * ldp + i] = (int16_t)uniform(-255, 255);
  for (c = 0; c < cols; ++c)
    for (i = 0; i < k; ++i)
      v[ref_qg_v_at(kp, i, c)] = (int16_t)uniform(-255, 255);
  for (i = 0; i < params; ++i) {
    bias[i] = uniform(-100000, 100000);
    if (edges) { /* the limits, and scales that put many results on ties */
      static const int32_t m[] = {0, 1, 0x7fffffff, 1 << 30};
      static const int32_t s[] = {1, 62, 31, 2};
      mult[i] = m[next() % 4];
      shift[i] = s[next() % 4];
    } else {
      mult[i] = uniform(1 << 30, 0x7fffffff);
      shift[i] = uniform(31, 44);
    }
  }
  g.kp = kp;
  g.p = p;
  g.ldp = ldp;
  g.v = v;
  g.v_col0 = 0;
  memset(&g.out, 0, sizeof g.out);
  g.out.bias = bias;
  g.out.mult = mult;
  g.out.shift = shift;
  g.out.per_row = per_row;
  g.out.zp = y_signed ? uniform(-128, 127) : uniform(0, 255);
  g.out.lo = y_signed ? -128 : 0;
  g.out.hi = y_signed ? uniform(0, 127) : uniform(128, 255);
  g.out.y_signed = y_signed;
  g.out.y_row = cols;
  /* float64 where it is exact (and asked for), else int64 */
  g.out.fast =
      ref_qg_prepare(params, mult, shift, g.out.zp, g.out.lo, g.out.hi, scale, smin, smax) && fast;
  g.out.scale = scale;
  g.out.smin = smin;
  g.out.smax = smax;
  if (fast && !edges && REF_QG_FLOAT64)
    CHECK(g.out.fast, "ref_qg_prepare refuses float64 for shifts in [31, 44]");
  memset(y1, 0xAB, (size_t)(rows * cols));
  memset(y2, 0xCD, (size_t)(rows * cols));
  /* in two pieces, the second starting at a panel boundary, as the callers split work */
  g.out.y = y1;
  ref_qg_run(&g, 0, rows, 0, cols);
  g.out.y = y2;
  ref_qg_run_portable(&g, 0, rows / 2, 0, cols);
  ref_qg_run_portable(&g, rows / 2, rows, 0, cols / REF_QG_NR * REF_QG_NR);
  ref_qg_run_portable(&g, rows / 2, rows, cols / REF_QG_NR * REF_QG_NR, cols);
  for (r = 0; r < rows; ++r)
    for (c = 0; c < cols; ++c) {
      const int64_t at = per_row ? r : c;
      int64_t acc = 0, q;
      for (i = 0; i < k; ++i)
        acc += (int64_t)p[r * ldp + i] * v[ref_qg_v_at(kp, i, c)];
      q = round_shift((acc + bias[at]) * mult[at], shift[at]) + g.out.zp;
      q = q < g.out.lo ? g.out.lo : q > g.out.hi ? g.out.hi : q;
      sums[r * cols + c] = (int32_t)acc;
      {
        const int64_t got1 = y_signed ? (int8_t)y1[r * cols + c] : y1[r * cols + c];
        const int64_t got2 = y_signed ? (int8_t)y2[r * cols + c] : y2[r * cols + c];
        CHECK(got1 == q && got2 == q,
              "%lldx%lldx%lld per_row %d signed %d edges %d fast %d: (%lld, %lld) is %lld (built "
              "kernel) and %lld (portable), not %lld (acc %lld, mult %ld, shift %ld)",
              (long long)rows, (long long)cols, (long long)k, per_row, y_signed, edges, g.out.fast,
              (long long)r, (long long)c, (long long)got1, (long long)got2, (long long)q,
              (long long)acc, (long)mult[at], (long)shift[at]);
        if (got1 != q || got2 != q)
          goto done;
      }
    }
  /* the same sums requantized as runs: one row's channel (per_row), or a channel each */
  for (r = 0; r < rows; ++r) {
    if (per_row)
      ref_qg_requantize_run(&g.out, r, sums + r * cols, cols, y3 + r * cols);
    else
      ref_qg_requantize_channels(&g.out, sums + r * cols, cols, y3 + r * cols);
  }
  CHECK(!memcmp(y1, y3, (size_t)(rows * cols)), "%lldx%lldx%lld per_row %d fast %d: runs differ",
        (long long)rows, (long long)cols, (long long)k, per_row, g.out.fast);
done:
  free(p);
  free(v);
  free(bias);
  free(mult);
  free(shift);
  free(y1);
  free(y2);
  free(y3);
  free(sums);
  free(smin);
  free(smax);
  free(scale);
}

/* Depthwise rows: ref_qg_depthwise_row and its portable loop against the definition. */
static void row_case(int rows, int64_t stride, int64_t dil, int64_t kw, int64_t n, int accumulate) {
  const int64_t len = (n - 1) * stride + (kw - 1) * dil + 1 + REF_QG_ROW_SLACK;
  int16_t *data = malloc((size_t)(rows * len) * sizeof *data), *w = malloc((size_t)(rows * kw) * 2);
  const int16_t **x = malloc((size_t)rows * sizeof *x);
  int32_t *s1 = malloc((size_t)ref_qg_row_room(n) * sizeof *s1);
  int32_t *s2 = malloc((size_t)ref_qg_row_room(n) * sizeof *s2);
  int64_t i, ow, t;
  int r;
  for (i = 0; i < rows * len; ++i)
    data[i] = (int16_t)uniform(-255, 255);
  for (i = 0; i < rows * kw; ++i)
    w[i] = (int16_t)uniform(-255, 255);
  for (r = 0; r < rows; ++r)
    x[r] = data + r * len;
  for (ow = 0; ow < n; ++ow)
    s1[ow] = s2[ow] = (int32_t)ow * 7 - 100;
  ref_qg_depthwise_row(rows, x, stride, dil, kw, w, n, accumulate, s1);
  ref_qg_depthwise_row_portable(rows, x, stride, dil, kw, w, n, accumulate, s2);
  for (ow = 0; ow < n; ++ow) {
    int64_t want = accumulate ? ow * 7 - 100 : 0;
    for (r = 0; r < rows; ++r)
      for (t = 0; t < kw; ++t)
        want += (int64_t)x[r][ow * stride + t * dil] * w[r * kw + t];
    CHECK(s1[ow] == want && s2[ow] == want,
          "depthwise row: %d rows, stride %lld, dilation %lld, %lld taps, %lld outputs: "
          "output %lld is %ld (built kernel) and %ld (portable), not %lld",
          rows, (long long)stride, (long long)dil, (long long)kw, (long long)n, (long long)ow,
          (long)s1[ow], (long)s2[ow], (long long)want);
    if (s1[ow] != want || s2[ow] != want)
      break;
  }
  free(data);
  free(w);
  free(x);
  free(s1);
  free(s2);
}

/* A lean epilogue for LEAN_CHANNELS channels, mode 0: random multipliers and shifts from 31
 * to 44 (the integer path below 32); 1: multipliers 2^30 and 2^29 and shifts 32 to 36, so
 * that many sums fall on ties; 2: raw int32 results; 3: random multipliers and shifts from 33
 * to 44, every channel fast on 32-bit Arm (ref_qg_lean_fast_all); 4: fast too, at the bounds
 * of ref_qg_lean_q8's int32 sum: biases near +-2^31, shifts up to 54, the zero point's
 * extremes; 5: fast thanks to the sums' bound (o.sum_bits, from the depth): multipliers whose
 * low 12 bits are zero and shifts from 40 to 44. int8 or uint8 clamps, at random. */
enum { LEAN_CHANNELS = 12 };
typedef struct {
  int32_t bias[LEAN_CHANNELS], mult[LEAN_CHANNELS], shift[LEAN_CHANNELS];
  ref_qg_lean_out o;
} lean_epilogue;

/* While 0 to 3, lean_epilogue_init takes that output range (uint8 [0, 255], uint8 above a fused
 * activation's bound, int8 [-128, 127], int8 above a bound) instead of drawing one: the 3 x 3
 * depthwise kernels have a loop for each. */
static int lean_clamp = -1;

static void lean_epilogue_init(lean_epilogue *e, int mode, int64_t depth) {
  int64_t bound = 0;
  int c;
  memset(e, 0, sizeof *e);
  for (c = 0; c < LEAN_CHANNELS; ++c) {
    e->bias[c] = mode == 4 ? (c % 2 ? 1 : -1) * (0x7fffffff - (1 << 27)) : uniform(-3000, 3000);
    e->mult[c] = mode == 1   ? (int32_t)1 << (29 + c % 2)
                 : mode == 5 ? (int32_t)((uint32_t)uniform(1 << 30, 0x7fffffff) & ~0xFFFu) | 0x1000
                             : uniform(1 << 30, 0x7fffffff) | 1;
    e->shift[c] = mode == 1   ? uniform(32, 36)
                  : mode == 4 ? uniform(44, 54)
                  : mode == 5 ? uniform(40, 44)
                              : uniform(mode == 3 ? 33 : 31, 44);
    bound = e->bias[c] < -bound ? -e->bias[c] : e->bias[c] > bound ? e->bias[c] : bound;
  }
  bound += depth * 255 * 128;
  while (mode != 0 && e->o.sum_bits < 32 && bound >= (int64_t)1 << e->o.sum_bits)
    ++e->o.sum_bits; /* as the backend bounds its sums; mode 0 leaves it unknown */
  if (mode == 0) {   /* shifts 31 and 32 (not fast) on channels 0 and 1 */
    e->shift[0] = 31;
    e->shift[1] = 32;
  }
  e->o.bias = e->bias;
  e->o.mult = e->mult;
  e->o.shift = e->shift;
  e->o.mult_step = e->o.shift_step = 1;
  e->o.raw = mode == 2;
  if (lean_clamp >= 0 ? lean_clamp >= 2 : uniform(0, 1)) { /* int8, maybe an activation's bound */
    e->o.zp = uniform(-20, 20);
    e->o.lo = (lean_clamp >= 0 ? lean_clamp == 2 : uniform(0, 1)) ? -128 : -128 + uniform(1, 100);
    e->o.hi = 127;
  } else { /* uint8 */
    e->o.zp = uniform(108, 148);
    e->o.lo = (lean_clamp >= 0 ? lean_clamp == 0 : uniform(0, 1)) ? 0 : uniform(1, 100);
    e->o.hi = 255;
  }
  if (mode == 4) /* the zero point's extremes */
    e->o.zp = e->o.hi == 255 ? 255 * uniform(0, 1) : uniform(0, 1) ? 127 : -128;
  e->o.fast = ref_qg_lean_fast_all(&e->o, LEAN_CHANNELS);
#if defined(__arm__)
  CHECK(e->o.fast == (mode >= 3), "lean epilogue, mode %d: fast is %d", mode, e->o.fast);
#endif
}

/* Whether element i at y (bytes, or int32 where raw) is channel ch's result for the sum s. */
static int lean_expected(const lean_epilogue *e, int64_t ch, int64_t s, const unsigned char *y,
                         int64_t i, int64_t *want) {
  const int64_t v = s + e->bias[ch];
  int32_t got;
  if (e->o.raw) {
    memcpy(&got, y + i * 4, sizeof got);
    *want = v;
    return got == v;
  }
  *want = round_shift(v * e->mult[ch], e->shift[ch]) + e->o.zp;
  *want = *want < e->o.lo ? e->o.lo : *want > e->o.hi ? e->o.hi : *want;
  return (e->o.hi == 255 ? (int64_t)y[i] : (int64_t)(int8_t)y[i]) == *want;
}

/* Lean products: ref_qg_lean_dots (a block of 4 pixels, and a lean column: one pixel) and
 * ref_qg_lean_row (the target's and the portable loops) against the definition, on int8 kernels
 * at odd offsets (unaligned words) and int16 data in [-255, 255]; the kernel rows end where the
 * allocation ends, so that a kernel reading past the depth of the last row would be caught by
 * the sanitizers (the others may, as far as ref_qg_lean_over allows). 7 rows: the column's
 * kernel takes 4 at a time, then one by one; and the first 6: whole pairs (on Cortex-M a
 * block's pairs of uint8 rows are requantized in registers, ref_qg_lean_pairs_u8_t2). */
enum { LEAN_ROWS = 7 };
static void lean_case(int64_t k, int64_t n, int64_t offset, int mode) {
  const int64_t words = ref_qg_lean_words(k);
  const int64_t total = offset + (k > 0 ? k : 1) * (n + 2) + LEAN_ROWS * k;
  int8_t *w = malloc((size_t)total);
  int32_t *c = malloc((size_t)(words + 1) * sizeof *c);
  int32_t *c1 = malloc((size_t)(words / REF_QG_LEAN_PIXELS + 1) * sizeof *c1); /* pixel 0 */
  int16_t *x = malloc((size_t)(k + 2) * sizeof *x), *v = malloc((size_t)(4 * (k + 4)) * 2);
  int32_t *s1 = malloc((size_t)(n + 1) * sizeof *s1), *s2 = malloc((size_t)(n + 1) * sizeof *s2);
  const int8_t *rows = w + total - LEAN_ROWS * k; /* the kernel rows: the last bytes */
  enum { ROW_BYTES = 4 * REF_QG_LEAN_PIXELS };
  unsigned char d1[LEAN_ROWS * ROW_BYTES], d2[LEAN_ROWS * ROW_BYTES];
  lean_epilogue e;
  int64_t i, j, d, want;
  int h, r, np, m;
  lean_epilogue_init(&e, mode, k);
  for (i = 0; i < total; ++i)
    w[i] = (int8_t)uniform(-128, 127);
  for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) /* pixel h's depths at v + h * (k + 4), then zeros */
    for (d = 0; d < k + 4; ++d)
      v[h * (k + 4) + d] = (int16_t)(d < k ? uniform(-255, 255) : 0);
  for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) /* depths 4g .. 4g + 3 of pixel h in two words */
    for (d = 0; d < (k + 3) / 4 * 4; d += 4) {
      const int16_t *vd = v + h * (k + 4) + d;
      c[(d / 4 * REF_QG_LEAN_PIXELS + h) * 2] = ref_qg_lean_pack(vd[0], vd[2]);
      c[(d / 4 * REF_QG_LEAN_PIXELS + h) * 2 + 1] = ref_qg_lean_pack(vd[1], vd[3]);
      if (h == 0) {
        c1[d / 4 * 2] = ref_qg_lean_pack(vd[0], vd[2]);
        c1[d / 4 * 2 + 1] = ref_qg_lean_pack(vd[1], vd[3]);
      }
    }
  for (i = 0; i < k; ++i)
    x[i] = (int16_t)uniform(-255, 255);
  x[k] = 0;
  for (m = LEAN_ROWS - 1; m <= LEAN_ROWS; ++m)
    for (np = 1; np <= REF_QG_LEAN_PIXELS; np += REF_QG_LEAN_PIXELS - 1) {
      memset(d1, 0xA5, sizeof d1);
      memset(d2, 0xA5, sizeof d2);
      const int64_t over = ref_qg_lean_over(k, LEAN_ROWS, 0, m);
      ref_qg_lean_dots(k, rows, m, over, np == 1 ? c1 : c, &e.o, 2, np, d1, ROW_BYTES);
      ref_qg_lean_dots_portable(k, rows, m, over, np == 1 ? c1 : c, &e.o, 2, np, d2, ROW_BYTES);
      for (r = 0; r < LEAN_ROWS; ++r)
        for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) {
          const unsigned char *y1 = d1 + r * ROW_BYTES, *y2 = d2 + r * ROW_BYTES;
          int64_t sum = 0;
          int ok1, ok2;
          for (d = 0; d < k; ++d)
            sum += (int64_t)rows[r * k + d] * v[h * (k + 4) + d];
          if (h >= np || r >= m) { /* not written */
            const int es = e.o.raw ? 4 : 1;
            CHECK(y1[h * es] == 0xA5 && y2[h * es] == 0xA5,
                  "lean dots: depth %lld: row %d of %d, pixel %d of %d written", (long long)k, r, m,
                  h, np);
            continue;
          }
          ok1 = lean_expected(&e, 2 + r, sum, y1, h, &want);
          ok2 = lean_expected(&e, 2 + r, sum, y2, h, &want);
          CHECK(ok1 && ok2,
                "lean dots: depth %lld, mode %d: row %d, pixel %d is wrong (built kernel: %s, "
                "portable: %s; want %lld)",
                (long long)k, mode, r, h, ok1 ? "right" : "wrong", ok2 ? "right" : "wrong",
                (long long)want);
        }
    }
  ref_qg_lean_row(k, x, w + offset, n + 1, n, s1);
  ref_qg_lean_row_portable(k, x, w + offset, n + 1, n, s2);
  for (j = 0; j < n; ++j) {
    want = 0;
    for (d = 0; d < k; ++d)
      want += (int64_t)x[d] * w[offset + d * (n + 1) + j];
    CHECK(s1[j] == want && s2[j] == want,
          "lean row: depth %lld, %lld columns, offset %lld: column %lld is %ld (built kernel) and "
          "%ld (portable), not %lld",
          (long long)k, (long long)n, (long long)offset, (long long)j, (long)s1[j], (long)s2[j],
          (long long)want);
    if (s1[j] != want || s2[j] != want)
      break;
  }
  free(w);
  free(c);
  free(c1);
  free(x);
  free(v);
  free(s1);
  free(s2);
}

/* ref_qg_lean_put_channels (a MatMul row's outputs, channel j at element j) against the
 * definition, on sums over the depth's whole range. */
static void put_channels_case(int mode) {
  enum { DEPTH = 300 };
  int32_t sums[LEAN_CHANNELS];
  unsigned char y[LEAN_CHANNELS * 4];
  lean_epilogue e;
  int64_t want;
  int j;
  lean_epilogue_init(&e, mode, DEPTH);
  for (j = 0; j < LEAN_CHANNELS; ++j)
    sums[j] = uniform(-DEPTH * 255 * 128, DEPTH * 255 * 128);
  ref_qg_lean_put_channels(&e.o, 0, LEAN_CHANNELS, sums, y);
  for (j = 0; j < LEAN_CHANNELS; ++j)
    CHECK(lean_expected(&e, j, sums[j], y, j, &want),
          "lean channels, mode %d: channel %d of sum %ld is wrong (want %lld)", mode, j,
          (long)sums[j], (long long)want);
}

/* A lean depthwise channel: ref_qg_depthwise_lean (the target's and the portable loop) over a
 * random padded plane against the definition, for nrows kernel rows of kw taps. */
static void depthwise_lean_case(int nrows, int kw, int dil, int stride, int64_t oh, int64_t ow,
                                int mode) {
  const int64_t pitch = (ow - 1) * stride + (kw - 1) * dil + 1 + 3, step = stride * pitch;
  const int64_t values = ((oh - 1) * stride + nrows) * pitch + REF_QG_ROW_SLACK;
  int16_t *x = malloc((size_t)values * sizeof *x);
  int8_t *taps = malloc((size_t)nrows * (size_t)kw);
  unsigned char *y1 = malloc((size_t)(oh * ow * 4)), *y2 = malloc((size_t)(oh * ow * 4));
  int *rows = malloc((size_t)nrows * sizeof *rows);
  lean_epilogue e;
  int64_t i, oy, ox, want;
  int r, t, bad = 0;
  lean_epilogue_init(&e, mode, (int64_t)nrows * kw);
  for (i = 0; i < values; ++i)
    x[i] = (int16_t)uniform(-255, 255);
  for (i = 0; i < nrows * kw; ++i)
    taps[i] = (int8_t)uniform(-128, 127);
  for (r = 0; r < nrows; ++r)
    rows[r] = (int)(r * pitch);
  ref_qg_depthwise_lean(x, rows, nrows, kw, dil, stride, step, taps, oh, ow, &e.o, 5, y1);
  ref_qg_depthwise_lean_portable(x, rows, nrows, kw, dil, stride, step, taps, oh, ow, &e.o, 5, y2);
  for (oy = 0; oy < oh && !bad; ++oy)
    for (ox = 0; ox < ow && !bad; ++ox) {
      int64_t sum = 0;
      int ok1, ok2;
      for (r = 0; r < nrows; ++r)
        for (t = 0; t < kw; ++t)
          sum += (int64_t)taps[r * kw + t] * x[oy * step + rows[r] + ox * stride + t * dil];
      ok1 = lean_expected(&e, 5, sum, y1, oy * ow + ox, &want);
      ok2 = lean_expected(&e, 5, sum, y2, oy * ow + ox, &want);
      bad = !ok1 || !ok2;
      CHECK(!bad,
            "lean depthwise: %d rows of %d taps, dilation %d, stride %d, mode %d: output (%lld, "
            "%lld) of %lldx%lld is wrong (built kernel: %s, portable: %s; want %lld)",
            nrows, kw, dil, stride, mode, (long long)oy, (long long)ox, (long long)oh,
            (long long)ow, ok1 ? "right" : "wrong", ok2 ? "right" : "wrong", (long long)want);
    }
  free(x);
  free(taps);
  free(y1);
  free(y2);
  free(rows);
}

#if defined(REF_QG_LEAN_WIDE)
/* ref_qg_depthwise3_u8 (Thumb-2 with the DSP extension) against the int64 definition: channel 1
 * of two random uint8 maps (channels ipix apart, a gap between them) copied into a byte plane
 * (pads of one row above and one column left, holding xz; rows pitch bytes apart, at times
 * more than the plane's width), a 3 x 3 window of stride (1 or 2) along the rows and 1 or 2
 * down them, uint8 [0, 255] outputs (mode 3 to 5); the plane allocated to its last window plus
 * the 4 bytes of slack the kernel may read; channel 0's outputs and a byte after channel 1's
 * must stay. Then ref_qg_copy_rows of 2 rows of n bytes, aligned and not. */
static void depthwise3_u8_case(int stride, int oh, int ow, int mode) {
  const int down = 1 + oh % 2, width = (ow - 1) * stride + 3, pitch = width + ow % 3;
  const int height = (oh - 1) * down + 3, in1 = height - 1, in2 = width - 1;
  const int ipix = in1 * in2 + 3, opix = oh * ow + 1, bytes = (height - 1) * pitch + width + 4;
  unsigned char *plane = malloc((size_t)bytes), *x = malloc((size_t)(2 * ipix));
  unsigned char *y = malloc((size_t)(2 * opix));
  uint32_t cw[28], sw[24]; /* word-aligned */
  unsigned char *c = (unsigned char *)cw, *src = (unsigned char *)sw;
  int8_t taps[18];
  ref_qg_dw3_channels d;
  lean_epilogue e;
  int64_t want;
  int i, oy, ox, r, t, n;
  lean_clamp = 0;
  lean_epilogue_init(&e, mode, 9);
  lean_clamp = -1;
  for (i = 0; i < 2 * ipix; ++i)
    x[i] = (unsigned char)uniform(0, 255);
  for (i = 0; i < 18; ++i)
    taps[i] = (int8_t)uniform(-128, 127);
  d.x = x;
  d.ipix = ipix;
  d.in1 = in1;
  d.in2 = in2;
  d.plane = plane;
  d.pitch = pitch;
  d.at = pitch + 1;
  d.stride = stride;
  d.step = down * pitch;
  d.taps = taps;
  d.oh = oh;
  d.ow = ow;
  d.o = &e.o;
  d.xz = uniform(0, 255);
  d.y = y;
  d.opix = opix;
  memset(plane, d.xz, (size_t)bytes);
  memset(y, 0xA5, (size_t)(2 * opix));
  CHECK(ref_qg_depthwise3_u8_ok(&e.o), "depthwise3_u8: mode %d refused", mode);
  ref_qg_depthwise3_u8(&d, 1, 2);
  for (i = 0; i < opix; ++i)
    CHECK(y[i] == 0xA5, "depthwise3_u8: channel 0's output %d written", i);
  CHECK(y[opix + oh * ow] == 0xA5, "depthwise3_u8: the byte after channel 1's outputs written");
  for (oy = 0; oy < oh; ++oy)
    for (ox = 0; ox < ow; ++ox) {
      int64_t sum = 0;
      for (r = 0; r < 3; ++r)
        for (t = 0; t < 3; ++t) {
          const int iy = oy * down + r - 1, ix = ox * stride + t - 1; /* in the input */
          const int v = iy >= 0 && iy < in1 && ix >= 0 && ix < in2 ? x[ipix + iy * in2 + ix] : d.xz;
          sum += (int64_t)taps[9 + r * 3 + t] * (v - d.xz);
        }
      CHECK(lean_expected(&e, 1, sum, y + opix, oy * ow + ox, &want),
            "depthwise3_u8: stride %d, %dx%d, mode %d: output (%d, %d) is %d, not %lld", stride, oh,
            ow, mode, oy, ox, y[opix + oy * ow + ox], (long long)want);
    }
  for (i = 0; i < (int)sizeof sw; ++i)
    src[i] = (unsigned char)uniform(0, 255);
  for (n = 0; n <= 40; ++n) /* 2 rows of n, 48 bytes apart, from word offsets 0 to 3 */
    for (i = 0; i < 4; ++i) {
      memset(c, 0x5A, sizeof cw);
      ref_qg_copy_rows(c + 4 + i, 48, src + i, 2, n);
      for (t = 0; t < (int)sizeof cw; ++t) {
        const int at = t - 4 - i, row = at >= 0 ? at / 48 : -1, col = at >= 0 ? at % 48 : -1;
        CHECK(c[t] == (row >= 0 && row < 2 && col < n ? src[i + row * n + col] : 0x5A),
              "copy_rows: 2 rows of %d at %d: byte %d is %d", n, i, at, c[t]);
      }
    }
  free(plane);
  free(x);
  free(y);
}
#endif

/* ref_qg_widen and ref_qg_dot8 (the target's and the portable loops) against the definition,
 * at odd offsets. */
static void widen_case(int64_t n, int64_t offset, int is_signed) {
  unsigned char src[64];
  int16_t d1[64], d2[64];
  int8_t w[64];
  const int32_t zp = is_signed ? uniform(-128, 127) : uniform(0, 255);
  int64_t i, dot_want = 0;
  int32_t dot1, dot2;
  for (i = 0; i < (int64_t)sizeof src; ++i)
    src[i] = (unsigned char)uniform(0, 255);
  for (i = 0; i < (int64_t)sizeof w; ++i)
    w[i] = (int8_t)uniform(-128, 127);
  ref_qg_widen(src + offset, n, is_signed, zp, d1 + offset);
  ref_qg_widen_portable(src + offset, n, is_signed, zp, d2 + offset);
  for (i = 0; i < n; ++i) {
    const int32_t want = (is_signed ? (int32_t)(int8_t)src[offset + i] : src[offset + i]) - zp;
    CHECK(d1[offset + i] == want && d2[offset + i] == want,
          "widen: %lld values at %lld, %s: value %lld is %d and %d, not %d", (long long)n,
          (long long)offset, is_signed ? "int8" : "uint8", (long long)i, d1[offset + i],
          d2[offset + i], (int)want);
  }
  for (i = 0; i < n; ++i)
    dot_want += w[i] * ((is_signed ? (int32_t)(int8_t)src[offset + i] : src[offset + i]) - zp);
  dot1 = ref_qg_dot8(src + offset, w, n, is_signed, zp);
  dot2 = ref_qg_dot8_portable(src + offset, w, n, is_signed, zp);
  CHECK(dot1 == dot_want && dot2 == dot_want,
        "dot8: %lld values at %lld, %s: %ld and %ld, not %lld", (long long)n, (long long)offset,
        is_signed ? "int8" : "uint8", (long)dot1, (long)dot2, (long long)dot_want);
}

/* ref_qg_widen_rows (the target's and the portable loop) into rows of a padded plane against
 * the definition, the pads around them left as they were. */
static void widen_rows_case(int rows, int width, int offset, int is_signed) {
  enum { PAD = 3 };
  const int step = width + 2 * PAD + offset;
  unsigned char src[4 * 21 + 4];
  int16_t d1[5 * (21 + 2 * PAD + 4)], d2[5 * (21 + 2 * PAD + 4)];
  const int32_t zp = is_signed ? uniform(-128, 127) : uniform(0, 255);
  int i;
  for (i = 0; i < (int)sizeof src; ++i)
    src[i] = (unsigned char)uniform(0, 255);
  for (i = 0; i < (int)(sizeof d1 / sizeof *d1); ++i)
    d1[i] = d2[i] = (int16_t)(-1000 - i);
  ref_qg_widen_rows(src + offset, rows, width, is_signed, zp, d1 + PAD, step);
  ref_qg_widen_rows_portable(src + offset, rows, width, is_signed, zp, d2 + PAD, step);
  for (i = 0; i < (int)(sizeof d1 / sizeof *d1); ++i) {
    const int at = i - PAD, row = at >= 0 ? at / step : -1, col = at >= 0 ? at % step : -1;
    const unsigned char x =
        row >= 0 && row < rows && col < width ? src[offset + row * width + col] : 0;
    const int32_t want = row >= 0 && row < rows && col < width
                             ? (is_signed ? (int32_t)(int8_t)x : (int32_t)x) - zp
                             : -1000 - i;
    CHECK(d1[i] == want && d2[i] == want,
          "widen_rows: %d rows of %d at %d, %s: value %d is %d and %d, not %d", rows, width, offset,
          is_signed ? "int8" : "uint8", i, d1[i], d2[i], (int)want);
  }
}

/* A lean block built both ways (ref_qg_lean_block_unit from a 1 x 1 window's runs, and
 * ref_qg_lean_place of each pixel's staged column), and a lean column (ref_qg_lean_column_unit
 * from contiguous values, ref_qg_lean_place of one column), the target's and the portable code,
 * against the definition of their layouts (qgemm.h). */
static void block_case(int64_t k, int is_signed) {
  enum { IPIX = 7 };
  const int64_t words = ref_qg_lean_words(k), column_words = (k + 3) / 4 * 2;
  unsigned char *x = malloc((size_t)(k * IPIX + 4));
  int16_t *col = calloc((size_t)(k + 4), sizeof *col);
  int32_t *q[4], *qc[4];
  const int32_t xz = is_signed ? uniform(-128, 127) : uniform(0, 255);
  int64_t i, d;
  int h, b;
  for (b = 0; b < 4; ++b) {
    q[b] = malloc((size_t)words * sizeof *q[b]);
    qc[b] = malloc((size_t)(column_words + 1) * sizeof *qc[b]);
  }
  for (i = 0; i < k * IPIX + 4; ++i)
    x[i] = (unsigned char)uniform(0, 255);
  ref_qg_lean_block_unit(x, IPIX, k, is_signed, xz, q[0]);
  ref_qg_lean_block_unit_portable(x, IPIX, k, is_signed, xz, q[1]);
  for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) {
    for (d = 0; d < k; ++d)
      col[d] = (int16_t)((is_signed ? (int32_t)(int8_t)x[d * IPIX + h] : x[d * IPIX + h]) - xz);
    ref_qg_lean_place(col, k, REF_QG_LEAN_PIXELS, q[2] + 2 * h);
    ref_qg_lean_place_portable(col, k, REF_QG_LEAN_PIXELS, q[3] + 2 * h);
  }
  /* the column of pixel 0 of a map of one pixel: x's first k values (the last may end the
     allocation, where the sanitizers would catch a read past them) */
  ref_qg_lean_column_unit(x + k * IPIX + 4 - k, k, is_signed, xz, qc[0]);
  ref_qg_lean_column_unit_portable(x + k * IPIX + 4 - k, k, is_signed, xz, qc[1]);
  for (d = 0; d < k; ++d)
    col[d] =
        (int16_t)((is_signed ? (int32_t)(int8_t)x[k * IPIX + 4 - k + d] : x[k * IPIX + 4 - k + d]) -
                  xz);
  ref_qg_lean_place(col, k, 1, qc[2]);
  ref_qg_lean_place_portable(col, k, 1, qc[3]);
  for (d = 0; d < (k + 3) / 4 * 4; ++d) {
    const int32_t want = d < k ? col[d] : 0;
    for (b = 0; b < 4; ++b) {
      const uint32_t v = (uint32_t)qc[b][d / 4 * 2 + d % 2];
      const int32_t got = (int16_t)(uint16_t)(d / 2 % 2 ? v >> 16 : v & 0xFFFFu);
      CHECK(got == want, "lean column (%s), depth %lld of %lld, %s: %d, not %d",
            b == 0   ? "unit"
            : b == 1 ? "unit, portable"
            : b == 2 ? "placed"
                     : "placed, portable",
            (long long)d, (long long)k, is_signed ? "int8" : "uint8", (int)got, (int)want);
    }
  }
  for (d = 0; d < (k + 3) / 4 * 4; ++d)
    for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) {
      const int64_t word = (d / 4 * REF_QG_LEAN_PIXELS + h) * 2 + d % 2;
      const int32_t want =
          d < k ? (is_signed ? (int32_t)(int8_t)x[d * IPIX + h] : x[d * IPIX + h]) - xz : 0;
      for (b = 0; b < 4; ++b) {
        const uint32_t v = (uint32_t)q[b][word];
        const int32_t got = (int16_t)(uint16_t)(d / 2 % 2 ? v >> 16 : v & 0xFFFFu);
        CHECK(got == want, "lean block (%s), depth %lld of %lld, %s: pixel %d is %d, not %d",
              b == 0   ? "unit window"
              : b == 1 ? "unit window, portable"
              : b == 2 ? "placed"
                       : "placed, portable",
              (long long)d, (long long)k, is_signed ? "int8" : "uint8", h, (int)got, (int)want);
      }
    }
  for (b = 0; b < 4; ++b) {
    free(q[b]);
    free(qc[b]);
  }
  free(x);
  free(col);
}

#if defined(REF_QG_LEAN_WIDE)
/* A wide lean block (Thumb-2 with the DSP extension): ref_qg_lean_block_unit_wide against the
 * layout's definition (qgemm.h), then ref_qg_lean_dots_wide of m rows over its 8 pixels against
 * the int64 definition, on the uint8 [0, 255] outputs it takes (mode 3 to 5: every channel
 * fast), the kernel rows ending where the allocation ends; where a row cannot read whole groups
 * (over < m) ref_qg_lean_wide_ok must refuse. */
static void lean_wide_case(int64_t k, int is_signed, int mode) {
  enum { IPIX = 11, PIX = REF_QG_LEAN_WIDE_PIXELS, ROW_BYTES = PIX + 3 };
  const int64_t words = ref_qg_lean_wide_words(k);
  unsigned char *x = malloc((size_t)(k * IPIX + 8));
  int32_t *q = malloc((size_t)(words + 1) * sizeof *q);
  int8_t *w = malloc((size_t)(LEAN_ROWS * k + 1));
  const int8_t *rows = w + 1; /* unaligned */
  const int32_t xz = is_signed ? uniform(-128, 127) : uniform(0, 255);
  unsigned char y[LEAN_ROWS * ROW_BYTES];
  lean_epilogue e;
  int64_t i, d, want;
  int h, r, m;
  for (i = 0; i < k * IPIX + 8; ++i)
    x[i] = (unsigned char)uniform(0, 255);
  for (i = 0; i < LEAN_ROWS * k + 1; ++i)
    w[i] = (int8_t)uniform(-128, 127);
  ref_qg_lean_block_unit_wide(x, IPIX, k, is_signed, xz, q);
  for (d = 0; d < (k + 3) / 4 * 4; ++d)
    for (h = 0; h < PIX; ++h) {
      const uint32_t v = (uint32_t)q[(d / 4 * PIX + h) * 2 + d % 2];
      const int32_t got = (int16_t)(uint16_t)(d / 2 % 2 ? v >> 16 : v & 0xFFFFu);
      want = d < k ? (is_signed ? (int32_t)(int8_t)x[d * IPIX + h] : x[d * IPIX + h]) - xz : 0;
      CHECK(got == want, "wide lean block, depth %lld of %lld, %s: pixel %d is %d, not %lld",
            (long long)d, (long long)k, is_signed ? "int8" : "uint8", h, (int)got, (long long)want);
    }
  lean_clamp = 0; /* uint8 [0, 255] */
  lean_epilogue_init(&e, mode, k);
  lean_clamp = -1;
  for (m = 1; m <= LEAN_ROWS; ++m) {
    const int64_t over = ref_qg_lean_over(k, LEAN_ROWS, LEAN_ROWS - m, m);
    const int8_t *wm = rows + (LEAN_ROWS - m) * k; /* the last m rows */
    if (!ref_qg_lean_wide_ok(m, over, &e.o)) {
      CHECK(over < m, "wide lean dots: depth %lld, %d rows (over %lld) refused", (long long)k, m,
            (long long)over);
      continue;
    }
    memset(y, 0xA5, sizeof y);
    ref_qg_lean_dots_wide(k, wm, m, q, &e.o, 2, y, ROW_BYTES);
    for (r = 0; r < LEAN_ROWS; ++r)
      for (h = 0; h < ROW_BYTES; ++h) {
        int64_t sum = 0;
        if (r >= m || h >= PIX) {
          CHECK(y[r * ROW_BYTES + h] == 0xA5,
                "wide lean dots: depth %lld: row %d of %d, byte %d "
                "written",
                (long long)k, r, m, h);
          continue;
        }
        for (d = 0; d < k; ++d)
          sum += (int64_t)wm[r * k + d] *
                 ((is_signed ? (int32_t)(int8_t)x[d * IPIX + h] : x[d * IPIX + h]) - xz);
        CHECK(lean_expected(&e, 2 + r, sum, y + r * ROW_BYTES, h, &want),
              "wide lean dots: depth %lld, mode %d, %s: row %d of %d, pixel %d is %d, not %lld",
              (long long)k, mode, is_signed ? "int8" : "uint8", r, m, h, y[r * ROW_BYTES + h],
              (long long)want);
      }
  }
  free(x);
  free(q);
  free(w);
}
#endif

/* ref_qg_round_shift against the definition for shifts 1 to 62: random t below 2^(shift + 9) in
 * magnitude (2^61 at most), and the ties (2j + 1) * 2^(shift - 1) and their neighbours. */
static void round_shift_cases(void) {
  int32_t shift;
  int i, d;
  for (shift = 1; shift <= 62; ++shift)
    for (i = 0; i < 200; ++i) {
      const int bits = shift + 10 < 62 ? shift + 10 : 62; /* quotients up to 2^9 */
      const int32_t lim = shift >= 61   ? 0
                          : shift >= 45 ? (int32_t)(((int64_t)1 << (61 - shift)) - 1)
                                        : 100000;
      const int64_t j = (int64_t)uniform(-lim, lim); /* |t| < 2^62 */
      int64_t t = (int64_t)((uint64_t)next() << 32 | next()) >> (64 - bits);
      if (i % 2)
        t = (2 * j + 1) * ((int64_t)1 << (shift - 1));
      for (d = -1; d <= 1; ++d) {
        const int64_t u = t + d, want = round_shift(u, shift), got = ref_qg_round_shift(u, shift);
        CHECK(got == want, "round shift: %lld / 2^%ld is %lld, not %lld", (long long)u, (long)shift,
              (long long)got, (long long)want);
      }
    }
}

/* The 8-bit product (ref_qg8): unsigned byte rows against int8 panels less a sub by column, or
 * (kernel_rows) int8 rows against unsigned panels less a sub by row, its int32 results (raw)
 * from this CPU's kernel (AVX512-VNNI's where it has them) and the portable one against int64
 * sums reduced modulo 2^32; sums that overflow int32 on the way wrap back. */
static void one_case8(int64_t rows, int64_t cols, int64_t k, int kernel_rows) {
  const int64_t kq = (k + 3) / 4 * 4, ldp = kq + 4;
  unsigned char *p = calloc((size_t)(rows * ldp), 1);
  unsigned char *v = calloc((size_t)ref_qg_v_count(kq, cols), 1);
  const int64_t nsub = kernel_rows ? rows : cols;
  int32_t *sub = malloc((size_t)nsub * sizeof *sub), *bias = malloc((size_t)cols * sizeof *bias);
  int32_t *ones = malloc((size_t)cols * sizeof *ones); /* multipliers and shifts, unused raw */
  int32_t *y1 = malloc((size_t)(rows * cols) * 4), *y2 = malloc((size_t)(rows * cols) * 4);
  ref_qg8 g;
  int64_t r, c, i;
  for (r = 0; r < rows; ++r)
    for (i = 0; i < k; ++i)
      p[r * ldp + i] = (unsigned char)uniform(0, 255);
  for (c = 0; c < cols; ++c) {
    for (i = 0; i < k; ++i)
      v[ref_qg8_v_at(kq, i, c)] = (unsigned char)uniform(0, 255);
    bias[c] = uniform(-1000, 1000);
    ones[c] = 1;
  }
  for (i = 0; i < nsub; ++i)
    sub[i] = (int32_t)next();
  memset(&g, 0, sizeof g);
  g.kq = kq;
  g.p = p;
  g.ldp = ldp;
  g.v = v;
  g.sub = sub;
  g.kernel_rows = kernel_rows;
  g.out.bias = bias;
  g.out.mult = g.out.shift = ones;
  g.out.raw = 1;
  g.out.y_row = cols;
  g.out.y = (unsigned char *)y1;
  ref_qg8_run(&g, 0, rows, 0, cols);
  g.out.y = (unsigned char *)y2;
  ref_qg8_run_portable(&g, 0, rows, 0, cols);
  for (r = 0; r < rows; ++r)
    for (c = 0; c < cols; ++c) {
      uint32_t want = (uint32_t)bias[c] - (uint32_t)sub[kernel_rows ? r : c];
      for (i = 0; i < k; ++i) {
        const int32_t a = p[r * ldp + i], b = v[ref_qg8_v_at(kq, i, c)];
        want += (uint32_t)(kernel_rows ? (int32_t)(int8_t)a * b : a * (int32_t)(int8_t)b);
      }
      CHECK(y1[r * cols + c] == (int32_t)want && y2[r * cols + c] == (int32_t)want,
            "8-bit product%s %ldx%ld, k %ld, (%ld, %ld): kernel %ld, portable %ld, want %ld",
            kernel_rows ? " (kernel rows)" : "", (long)rows, (long)cols, (long)k, (long)r, (long)c,
            (long)y1[r * cols + c], (long)y2[r * cols + c], (long)(int32_t)want);
    }
  free(p);
  free(v);
  free(sub);
  free(bias);
  free(ones);
  free(y1);
  free(y2);
}

/* ref_qg8_group_row: four rows (one of them NULL, the others of every length around a panel's)
 * interleaved into V's group row, flipped, against ref_qg8_v_at; the columns past n zeros. */
static void group_rows(void) {
  enum { N = 3 * REF_QG_NR + 5, KQ = 8 };
  unsigned char rows[4][N], v[4 * REF_QG_NR * KQ];
  const unsigned char *src[4];
  int64_t n, c, h, flip;
  for (h = 0; h < 4; ++h)
    for (c = 0; c < N; ++c)
      rows[h][c] = (unsigned char)uniform(0, 255);
  for (flip = 0; flip < 256; flip += 128)
    for (n = 1; n <= N; ++n) {
      for (h = 0; h < 4; ++h)
        src[h] = h == 2 ? NULL : rows[h];
      memset(v, 0xAB, sizeof v);
      ref_qg8_group_row(src, n, (unsigned char)flip, v, KQ, 4);
      for (c = 0; c < (n + REF_QG_NR - 1) / REF_QG_NR * REF_QG_NR; ++c)
        for (h = 0; h < 4; ++h) {
          const unsigned char want =
              c < n && h != 2 ? (unsigned char)(rows[h][c] ^ flip) : (unsigned char)0;
          const unsigned char got = v[ref_qg8_v_at(KQ, 4 + h, c)];
          CHECK(got == want, "group row n %ld flip %ld: column %ld depth %ld is %d, not %d",
                (long)n, (long)flip, (long)c, (long)h, got, want);
          CHECK(v[ref_qg8_v_at(KQ, h, c)] == 0xAB, "group row n %ld wrote group 0", (long)n);
        }
    }
}

/* ref_qg_dw3_bytes: this CPU's kernel (AVX512-VBMI's where it has them) and the portable loop
 * against int64 sums modulo 2^32, strides 1 and 2, rows of whole and partial blocks of 16. */
static void dw3_bytes(int64_t oh, int64_t ow, int64_t stride) {
  const int64_t row_stride = 2, pitch = (ow - 1) * stride + 3 + 5;
  const int64_t bytes = ((oh - 1) * row_stride + 3) * pitch + 64; /* the kernel's slack */
  unsigned char *x = malloc((size_t)bytes);
  int32_t *s1 = malloc((size_t)(oh * ow + 16) * sizeof *s1);
  int32_t *s2 = malloc((size_t)(oh * ow + 16) * sizeof *s2);
  ref_qg_dw3_bytes q;
  int64_t i, o, j;
  int t;
  for (i = 0; i < bytes; ++i)
    x[i] = (unsigned char)uniform(0, 255);
  for (t = 0; t < 9; ++t)
    q.taps[t] = (int8_t)uniform(-128, 127);
  q.x = x;
  q.pitch = pitch;
  q.row_stride = row_stride;
  q.stride = stride;
  q.oh = oh;
  q.ow = ow;
  q.start = (int32_t)next();
  q.s = s1;
  ref_qg_dw3_bytes_run(&q);
  q.s = s2;
  ref_qg_dw3_bytes_portable(&q);
  for (o = 0; o < oh; ++o)
    for (j = 0; j < ow; ++j) {
      uint32_t want = (uint32_t)q.start;
      for (t = 0; t < 9; ++t)
        want += (uint32_t)(x[(o * row_stride + t / 3) * pitch + j * stride + t % 3] * q.taps[t]);
      CHECK(s1[o * ow + j] == (int32_t)want && s2[o * ow + j] == (int32_t)want,
            "3x3 bytes %ldx%ld stride %ld, (%ld, %ld): kernel %ld, portable %ld, want %ld",
            (long)oh, (long)ow, (long)stride, (long)o, (long)j, (long)s1[o * ow + j],
            (long)s2[o * ow + j], (long)(int32_t)want);
    }
  free(x);
  free(s1);
  free(s2);
}

int main(void) {
  int64_t rows, cols, k;
  int per_row, y_signed, edges, fast, kernel_rows;
  for (rows = 1; rows <= 2 * REF_QG_MR + 1; ++rows)
    for (cols = 1; cols <= 2 * REF_QG_NR + 1; cols += 3)
      for (k = 0; k <= 9; k += 3)
        for (per_row = 0; per_row < 2; ++per_row)
          for (y_signed = 0; y_signed < 2; ++y_signed)
            for (edges = 0; edges < 2; ++edges)
              for (fast = 0; fast < 2; ++fast)
                one_case(rows, cols, k, per_row, y_signed, edges, fast);
  for (kernel_rows = 0; kernel_rows < 2; ++kernel_rows) {
    for (rows = 1; rows <= 2 * REF_QG_MR + 1; ++rows)
      for (cols = 1; cols <= 3 * REF_QG_NR + 1; cols += 5)
        for (k = 0; k <= 9; k += 3)
          one_case8(rows, cols, k, kernel_rows);
    one_case8(37, 70, 3072, kernel_rows); /* deep: sums that wrap */
  }
  group_rows();
  for (k = 1; k <= 2; ++k) /* the stride */
    for (cols = 1; cols <= 3 * REF_QG_NR + 2; cols += 7)
      dw3_bytes(3, cols, k);
  /* deep products: sums far from int32's limit, and long runs of pairs */
  for (fast = 0; fast < 2; ++fast) {
    one_case(37, 70, 1151, 0, 0, 0, fast);
    one_case(64, 49, 4608, 1, 1, 0, fast);
    one_case(13, 200, 2048, 1, 0, 1, fast);
  }
  {
    int rows, accumulate;
    int64_t stride, dil, kw, n;
    for (rows = 1; rows <= 4; ++rows)
      for (stride = 1; stride <= 3; ++stride)
        for (dil = 1; dil <= 2; ++dil)
          for (kw = 1; kw <= 7; ++kw)
            for (n = 1; n <= 40; n += 3)
              for (accumulate = 0; accumulate < 2; ++accumulate)
                row_case(rows, stride, dil, kw, n, accumulate);
  }
  {
    int64_t n, offset, i;
    int mode, nrows, kw, dil, stride, is_signed;
    for (n = 0; n <= 21; ++n)
      for (is_signed = 0; is_signed < 2; ++is_signed) {
        for (offset = 0; offset < 4; ++offset) {
          widen_case(n, offset, is_signed);
          for (mode = 1; mode <= 4; ++mode)
            widen_rows_case(mode, (int)n, (int)offset, is_signed);
        }
        block_case(n, is_signed);
      }
    for (mode = 0; mode < 6; ++mode) {
      for (k = 0; k <= 13; ++k)
        for (n = 1; n <= 11; n += 2)
          for (offset = 0; offset < 4; ++offset)
            lean_case(k, n, offset, mode);
      lean_case(576, 64, 1, mode);
      lean_case(1151, 37, 3, mode);
      for (nrows = 1; nrows <= 5; ++nrows)
        for (kw = 1; kw <= 7; ++kw)
          for (dil = 1; dil <= 2; ++dil)
            for (stride = 1; stride <= 3; ++stride)
              depthwise_lean_case(nrows, kw, dil, stride, 1 + (nrows + kw) % 4, 1 + kw + stride,
                                  mode);
      for (lean_clamp = 0; lean_clamp < 4; ++lean_clamp) /* each 3 x 3 loop, odd and even rows */
        for (stride = 1; stride <= 2; ++stride) {
          depthwise_lean_case(3, 3, 1, stride, 4, 11, mode);
          depthwise_lean_case(3, 3, 1, stride, 2, 8, mode);
        }
      lean_clamp = -1;
      depthwise_lean_case(25, 5, 1, 1, 1, 1, mode); /* a global pool's window */
      depthwise_lean_case(9, 10, 1, 2, 2, 3, mode);
      for (i = 0; i < 50; ++i)
        put_channels_case(mode);
    }
#if defined(REF_QG_LEAN_WIDE)
    for (mode = 3; mode <= 5; ++mode)
      for (is_signed = 0; is_signed < 2; ++is_signed) {
        for (k = 1; k <= 21; ++k) /* 1 to 6 groups: each way into the loop of 4 */
          lean_wide_case(k, is_signed, mode);
        lean_wide_case(64, is_signed, mode);
        lean_wide_case(261, is_signed, mode);
      }
    for (mode = 3; mode <= 5; ++mode)
      for (stride = 1; stride <= 2; ++stride)
        for (i = 1; i <= 9; ++i) {
          depthwise3_u8_case(stride, 1 + i % 4, i, mode);
          depthwise3_u8_case(stride, i, 1 + i % 3, mode);
        }
#endif
  }
  round_shift_cases();
  if (!failures)
    printf("qgemm: every case agrees with the int64 definition\n");
  return failures != 0;
}
