/* test_se_block.c: a squeeze-and-excitation block and a classifier row, the shapes of
 * MobileNetV3's, through the ODLA headers alone, against double loops:
 *   c = ExtConv(x [1,32,12,12], 3x3 -> 40, pad 1, bias, ReLU)  [1,40,12,12]
 *   p = AveragePool(c, 12x12)                        [1,40,1,1]
 *   s1 = ExtConv(p, 1x1 -> 24, bias, ReLU)           [1,24,1,1]
 *   s2 = ExtConv(s1, 1x1 -> 40, bias, hard swish)    [1,40,1,1]
 *   a = Add(s2, Mul(c, s2))                          [1,40,12,12]  (output "a")
 *   g = ExtGemm(Reshape(s2) [1,40], W [40,2000], bias, hard swish)  (output "g")
 * On libodla_dnnl with AVX-512 c is laid out nChw16c, its 40 channels padded to 48: the Mul
 * and the Add (lhs and rhs swapped) broadcast a per-channel operand over that layout, the 1x1
 * convolutions of a 1x1 map and the Gemm are one row by constant weights, and hard swish is
 * not fused into that product (compile.cpp's ChannelKernel and lowerRowProduct). The
 * program also checks that the one Reorder node of a [1,40,12,12] value there is the one
 * into the bound output a (the Mul and the Add keep c's layout). Usage: test_se_block SCRATCH_DIR
 * (unused) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <string.h>

#include "check.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))
enum { CI = 32, C = 40, H = 12, R = 24, N = 2000, HW = H * H };

static float x_data[CI * HW], w1[C * CI * 9], b1[C], w2[R * C], b2[R], w3[C * R], b3[C], wg[C * N],
    bg[N], a_out[C * HW], g_out[N];
static odla_value a_value; /* the output a */

/* A float32 shape of `rank` dims, and a float32 constant of that shape. */
#define SHAPE(rank, ...) (vt(ODLA_FLOAT32, rank, DIMS(__VA_ARGS__)).shape)
static odla_value constant(odla_value_shape s, const float *data, const char *id) {
  odla_value_type t = vt(ODLA_FLOAT32, s.size, s.dims);
  return odla_CreateConstant(t, data, ID(id));
}

static double hard_swish(double v) {
  double g = v / 6.0 + 0.5;
  return v * (g < 0 ? 0 : g > 1 ? 1 : g);
}

/* The expected outputs a (C x HW) and g (N) in double. */
static void expected(double *a, double *g) {
  static double c[C * HW];
  double p[C], s1[R], s2[C];
  int o, i, y, x, ky, kx;
  for (o = 0; o < C; ++o)
    for (y = 0; y < H; ++y)
      for (x = 0; x < H; ++x) {
        double sum = b1[o];
        for (i = 0; i < CI; ++i)
          for (ky = 0; ky < 3; ++ky)
            for (kx = 0; kx < 3; ++kx) {
              int iy = y + ky - 1, ix = x + kx - 1;
              if (iy >= 0 && iy < H && ix >= 0 && ix < H)
                sum += (double)x_data[(i * H + iy) * H + ix] * w1[((o * CI + i) * 3 + ky) * 3 + kx];
            }
        c[(o * H + y) * H + x] = sum > 0 ? sum : 0;
      }
  for (o = 0; o < C; ++o) {
    p[o] = 0;
    for (i = 0; i < HW; ++i)
      p[o] += c[o * HW + i] / HW;
  }
  for (o = 0; o < R; ++o) {
    double sum = b2[o];
    for (i = 0; i < C; ++i)
      sum += (double)w2[o * C + i] * p[i];
    s1[o] = sum > 0 ? sum : 0;
  }
  for (o = 0; o < C; ++o) {
    double sum = b3[o];
    for (i = 0; i < R; ++i)
      sum += (double)w3[o * R + i] * s1[i];
    s2[o] = hard_swish(sum);
  }
  for (o = 0; o < C; ++o)
    for (i = 0; i < HW; ++i)
      a[o * HW + i] = s2[o] + c[o * HW + i] * s2[o];
  for (o = 0; o < N; ++o) {
    double sum = bg[o];
    for (i = 0; i < C; ++i)
      sum += s2[i] * wg[i * N + o];
    g[o] = hard_swish(sum);
  }
}

static odla_status build(void) {
  static const odla_uint32 one[] = {1, 1}, zero[] = {0, 0}, window[] = {H, H};
  odla_value x, c, p, s1, s2, m, a, row, g;
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 4, DIMS(1, CI, H, H)), ID("x"));
  c = odla_ExtConv(x, ODLA_CHANNELS_FIRST, 1, constant(SHAPE(4, C, CI, 3, 3), w1, "w1"), ODLA_OIS,
                   one, one, one, one, constant(SHAPE(1, C), b1, "b1"), NULL, ODLA_EXT_FUSED_RELU,
                   0, 0, SHAPE(4, 1, C, H, H), ID("c"));
  p = odla_AveragePool(c, ODLA_CHANNELS_FIRST, window, one, zero, zero, 0, SHAPE(4, 1, C, 1, 1),
                       ID("p"));
  s1 = odla_ExtConv(p, ODLA_CHANNELS_FIRST, 1, constant(SHAPE(4, R, C, 1, 1), w2, "w2"), ODLA_OIS,
                    one, one, zero, zero, constant(SHAPE(1, R), b2, "b2"), NULL,
                    ODLA_EXT_FUSED_RELU, 0, 0, SHAPE(4, 1, R, 1, 1), ID("s1"));
  s2 = odla_ExtConv(s1, ODLA_CHANNELS_FIRST, 1, constant(SHAPE(4, C, R, 1, 1), w3, "w3"), ODLA_OIS,
                    one, one, zero, zero, constant(SHAPE(1, C), b3, "b3"), NULL,
                    ODLA_EXT_FUSED_HARD_SWISH, 0, 0, SHAPE(4, 1, C, 1, 1), ID("s2"));
  m = odla_Mul(c, s2, ID("m"));
  a = odla_Add(s2, m, ID("a"));
  row = odla_Reshape(s2, SHAPE(2, 1, C), ID("row"));
  g = odla_ExtGemm(row, 0, constant(SHAPE(2, C, N), wg, "wg"), 0, 1.0f, 1.0f,
                   constant(SHAPE(1, N), bg, "bg"), NULL, ODLA_EXT_FUSED_HARD_SWISH, 0, 0,
                   any_shape(), ID("g"));
  if (!a || !g)
    return ODLA_FAILURE;
  a_value = a;
  if (odla_SetValueAsOutput(a) != ODLA_SUCCESS)
    return ODLA_FAILURE;
  return odla_SetValueAsOutput(g);
}

int main(void) {
  static double want_a[C * HW], want_g[N];
  odla_computation comp;
  odla_context ctx;
  odla_int32 nodes = 0, i;
  for (i = 0; i < CI * HW; ++i)
    x_data[i] = (float)((i * 37) % 29 - 14) / 14.0f;
  for (i = 0; i < C * CI * 9; ++i)
    w1[i] = (float)((i * 13) % 19 - 9) / 90.0f;
  for (i = 0; i < R * C; ++i)
    w2[i] = (float)((i * 7) % 17 - 8) / 20.0f;
  for (i = 0; i < C * R; ++i)
    w3[i] = (float)((i * 11) % 23 - 11) / 8.0f;
  for (i = 0; i < C * N; ++i)
    wg[i] = (float)((i * 5) % 31 - 15) / 30.0f;
  for (i = 0; i < C; ++i)
    b1[i] = b3[i] = (float)(i % 5 - 2) / 10.0f;
  for (i = 0; i < R; ++i)
    b2[i] = (float)(i % 3 - 1) / 10.0f;
  for (i = 0; i < N; ++i)
    bg[i] = (float)(i % 7 - 3) / 2.0f;
  expected(want_a, want_g);

  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  CHECK(build() == ODLA_SUCCESS, "building the graph");
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  odla_BindToArgumentById(ID("x"), x_data, ctx);
  odla_BindToOutputById(ID("a"), a_out, ctx);
  odla_BindToOutputById(ID("g"), g_out, ctx);
  for (int run = 0; run < 2; ++run) {  /* the second reuses the arena and the padded lanes */
    memset(a_out, 0xff, sizeof a_out); /* NaN */
    memset(g_out, 0xff, sizeof g_out);
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "ExecuteComputation");
    for (i = 0; i < C * HW && fabs(a_out[i] - want_a[i]) <= 1e-4 * (fabs(want_a[i]) + 1); ++i)
      ;
    CHECK(i == C * HW, "run %d: a[%d] = %g, want %g", run, (int)i, a_out[i], want_a[i]);
    for (i = 0; i < N && fabs(g_out[i] - want_g[i]) <= 1e-4 * (fabs(want_g[i]) + 1); ++i)
      ;
    CHECK(i == N, "run %d: g[%d] = %g, want %g", run, (int)i, g_out[i], want_g[i]);
  }
  CHECK(odla_ExtGetNumNodes(comp, &nodes) == ODLA_SUCCESS, "ExtGetNumNodes");
  for (i = 0; i < nodes; ++i) {
    const odla_char *op = NULL;
    odla_value first = NULL;
    odla_size_t offset, bytes;
    odla_value_type t;
    if (odla_ExtGetNodeInfo(comp, i, &op, &first, &offset, &bytes) != ODLA_SUCCESS || !op ||
        strcmp((const char *)op, "Reorder") != 0 || !first)
      continue;
    CHECK(odla_GetValueType(first, &t) == ODLA_SUCCESS, "GetValueType");
    CHECK(first == a_value || !(t.shape.size == 4 && t.shape.dims[1] == C && t.shape.dims[2] == H),
          "node %d reorders a [1,%d,%d,%d] value besides the output", (int)i, C, H, H);
  }
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
  return failures != 0;
}
