/* test_builder_limits.c: op builders given numbers at the limits of their types, as a stored
 * executable (replayed through the builders) or a hostile caller may pass them: the window
 * builders (Conv, DeConv, MaxPool, AveragePool) with extents, kernels, strides, dilations and
 * pads, Gemm and BatchMatMul with an outer product too large, Tile with repeats of up to
 * 2^32 - 1, TileDynamic with output_dims, the int8 convolution with pads whose padded planes
 * pass 2^47 values or over no input channels, and the int8 product of depth 0. Products of
 * those numbers pass int64; each case must be refused when the graph is built, with the
 * message that names the rule, and without forming the overflowing product (the sanitize
 * build runs this under UBSan). The operands' own types stay within 2^48 bytes. One more must
 * build: an int8 product of 2^31 output channels with per-tensor constants, without allocating its
 * epilogue arrays. Each case was found by fuzzing the loaders (tests/fuzz), but the product
 * of depth 0 (found beside the convolution's, by review). Usage: test_builder_limits SCRATCH_DIR
 * (unused) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))
#define U32MAX 4294967295u

static char last_error[512];
static void keep_error(const char *file, int line, const char *func, odla_log_level level,
                       const char *msg) {
  (void)file, (void)line, (void)level;
  snprintf(last_error, sizeof last_error, "%s: %s", func, msg);
}

/* The builder's result `v` must be NULL with a message containing `want`, and the computation
 * must then refuse to compile. */
static void check_refused(odla_computation comp, odla_value v, const char *want, const char *what) {
  odla_executable exe = NULL;
  CHECK(v == NULL, "%s: built although invalid", what);
  CHECK(strstr(last_error, want) != NULL, "%s: message '%s' lacks '%s'", what, last_error, want);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_INVALID_PARAM, "%s: compile status",
        what);
}

/* One Conv or DeConv of input x_dims and kernel k_dims (rank `rank`) with the given window
 * parameters, each array one entry per spatial axis. */
static void conv_case_grouped(int deconv, odla_uint32 group, odla_element_type t, int rank,
                              const int64_t *x_dims, const int64_t *k_dims,
                              const odla_uint32 *strides, const odla_uint32 *dilations,
                              const odla_uint32 *pads, const char *want, const char *what) {
  odla_computation comp;
  odla_value x, k, y;
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(t, rank, x_dims), ID("x"));
  k = odla_CreateArgument(vt(t, rank, k_dims), ID("k"));
  CHECK(x && k, "%s: operands refused: %s", what, last_error);
  y = (deconv ? odla_DeConv : odla_Conv)(x, ODLA_CHANNELS_FIRST, group, k,
                                         deconv ? ODLA_IOS : ODLA_OIS, strides, dilations, pads,
                                         pads, NULL, any_shape(), ID("y"));
  check_refused(comp, y, want, what);
  odla_DestroyComputation(comp);
}

static void conv_case(int deconv, odla_element_type t, int rank, const int64_t *x_dims,
                      const int64_t *k_dims, const odla_uint32 *strides,
                      const odla_uint32 *dilations, const odla_uint32 *pads, const char *want,
                      const char *what) {
  conv_case_grouped(deconv, 1, t, rank, x_dims, k_dims, strides, dilations, pads, want, what);
}

static void test_conv(void) {
  const odla_uint32 one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
  const odla_uint32 max[3] = {U32MAX, U32MAX, U32MAX};
  /* Pads of 2^32-1 on both sides of three unit axes: about 2^33 outputs each, 2^99 in all. */
  conv_case(0, ODLA_FLOAT32, 5, (const int64_t[]){1, 1, 1, 1, 1}, (const int64_t[]){1, 1, 1, 1, 1},
            one, one, max, "exceed 2^48 positions", "Conv with 2^32-1 pads on 3 axes");
  /* A kernel of 2^40 at dilation 2^32-1 spans 2^72 cells: it cannot fit any input. */
  conv_case(0, ODLA_FLOAT32, 3, (const int64_t[]){1, 1, 8}, (const int64_t[]){1, 1, 1LL << 40}, one,
            max, zero, "does not fit the input extent", "Conv kernel 2^40 at dilation 2^32-1");
  /* Kernel dim 1 of 2^40 times group 2^32-1 is no int64: it cannot equal the input's 8. */
  conv_case_grouped(0, U32MAX, ODLA_FLOAT32, 3, (const int64_t[]){1, 8, 1},
                    (const int64_t[]){0, 1LL << 40, 1}, one, one, zero, "do not fit",
                    "Conv with kernel dim 1 2^40 and group 2^32-1");
  /* float64 stores its im2col matrix: 72 taps x 2^40 pixels x 8 bytes passes 2^48. */
  conv_case(0, ODLA_FLOAT64, 4, (const int64_t[]){1, 8, 1LL << 20, 1LL << 20},
            (const int64_t[]){1, 8, 3, 3}, one, one, one, "column matrix of 72 x 1099511627776",
            "float64 Conv with a 2^49-byte im2col");
}

static void test_deconv(void) {
  const odla_uint32 one[1] = {1}, zero[1] = {0}, big[1] = {1u << 31};
  /* An input extent of 2^40 at stride 2^31: 2^71 output cells. */
  conv_case(1, ODLA_FLOAT32, 3, (const int64_t[]){1, 1, 1LL << 40}, (const int64_t[]){1, 1, 1}, big,
            one, zero, "spans more than 2^48 output cells", "DeConv extent 2^40 stride 2^31");
  /* A kernel of 2^40 at dilation 2^31. */
  conv_case(1, ODLA_FLOAT32, 3, (const int64_t[]){1, 1, 1}, (const int64_t[]){1, 1, 1LL << 40}, one,
            big, zero, "spans more than 2^48 output cells", "DeConv kernel 2^40 dilation 2^31");
  /* No input channels (so any group divides them) and 2^40 x (2^32-1) output channels. */
  conv_case_grouped(1, U32MAX, ODLA_FLOAT32, 3, (const int64_t[]){1, 0, 1},
                    (const int64_t[]){0, 1LL << 40, 1}, one, one, zero,
                    "makes more than 2^48 output channels", "DeConv with 2^72 output channels");
  /* 2^24 x 2^24 output cells of 2^8 channels in float32: 2^58 bytes, each factor valid. */
  conv_case(1, ODLA_FLOAT32, 4, (const int64_t[]){1, 1, 1LL << 12, 1LL << 12},
            (const int64_t[]){1, 256, 1, 1}, (const odla_uint32[]){4096, 4096},
            (const odla_uint32[]){1, 1}, (const odla_uint32[]){0, 0}, "holds more than 2^48 bytes",
            "DeConv result of 2^58 bytes");
}

static void test_pool(void) {
  const odla_uint32 max[3] = {U32MAX, U32MAX, U32MAX}, one[3] = {1, 1, 1};
  odla_computation comp;
  odla_value x, y;
  int avg;
  for (avg = 0; avg < 2; ++avg) {
    const char *what = avg ? "AveragePool with 2^32-1 pads" : "MaxPool with 2^32-1 pads";
    last_error[0] = '\0';
    odla_CreateComputation(&comp);
    x = odla_CreateArgument(vt(ODLA_FLOAT32, 5, (const int64_t[]){1, 1, 1, 1, 1}), ID("x"));
    y = avg ? odla_AveragePool(x, ODLA_CHANNELS_FIRST, one, one, max, max, 0, any_shape(), ID("y"))
            : odla_MaxPool(x, ODLA_CHANNELS_FIRST, one, one, max, max, any_shape(), ID("y"));
    check_refused(comp, y, "exceed 2^48 positions", what);
    odla_DestroyComputation(comp);
  }
  /* A window of 2^32-1 at the same pads fits once: the refusal above is about the count. */
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 3, (const int64_t[]){1, 1, 1}), ID("x"));
  y = odla_MaxPool(x, ODLA_CHANNELS_FIRST, max, one, max, max, any_shape(), ID("y"));
  CHECK(y != NULL, "MaxPool window 2^32-1 over 2^33 padded cells refused: %s", last_error);
  odla_DestroyComputation(comp);
}

/* Repeats of 2^32 - 1 over an extent of 2^35 (a product past 2^63), and of 2^31 over 2^20
 * (2^51 elements, past 2^48 bytes). */
static void test_tile(void) {
  const struct {
    int64_t extent;
    odla_uint32 repeat;
    const char *want, *what;
  } cases[] = {
      {1LL << 35, U32MAX, "repeat[0] = 4294967295 times extent 34359738368 passes 2^63",
       "Tile past 2^63 elements"},
      {1LL << 20, 1u << 31, "the result float32 [2251799813685248,1] holds more than 2^48 bytes",
       "Tile to 2^51 elements"},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof *cases; ++i) {
    odla_computation comp;
    odla_value x, y;
    last_error[0] = '\0';
    odla_CreateComputation(&comp);
    x = odla_CreateArgument(vt(ODLA_FLOAT32, 2, (const int64_t[]){cases[i].extent, 1}), ID("x"));
    y = odla_Tile(x, (const odla_uint32[]){cases[i].repeat, 1}, any_shape(), ID("y"));
    check_refused(comp, y, cases[i].want, cases[i].what);
    odla_DestroyComputation(comp);
  }
}

/* Per-tensor int8 parameters (zero points 0, multiplier 1, shift 1) as constants. */
static const int8_t q_zero = 0;
static const int32_t q_one = 1, q_shift = 1;

/* An int8 convolution over 16 channels of [1,1,1] with pads of 2^32 - 1 on every side and a
 * stride as large: the output is [1, 1, 1, 1, 1] per channel, each padded plane
 * (2^33 - 1)^3 values, whose product passes int64 before the check. */
static void test_qconv_pads(void) {
  const odla_uint32 big[3] = {U32MAX, U32MAX, U32MAX}, one[3] = {1, 1, 1};
  odla_computation comp;
  odla_value x, w, y;
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_INT8, 5, (const int64_t[]){1, 16, 1, 1, 1}), ID("x"));
  w = odla_CreateArgument(vt(ODLA_INT8, 5, (const int64_t[]){16, 16, 1, 1, 1}), ID("w"));
  y = odla_ExtQLinearConv(
      x, odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("xz")), ODLA_CHANNELS_FIRST, 1, w,
      odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("wz")), ODLA_OIS, big, one, big, big,
      NULL, odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_one, ID("m")),
      odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_shift, ID("s")),
      odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("yz")), -128, 127, any_shape(),
      ID("y"));
  check_refused(comp, y,
                "the padded input planes, 16 channels of 8589934591x8589934591x8589934591, pass "
                "2^47 values",
                "ExtQLinearConv with 2^32-1 pads");
  odla_DestroyComputation(comp);
}

/* An int8 convolution over no input channels, channels first and last: its scratch divided
 * a block's values by the kernel's depth, 0 (found by fuzzing), and its kernels sum over at
 * least one channel (past that division, a run left the output unwritten). It is refused. */
static void test_qconv_no_channels(void) {
  const odla_uint32 one[2] = {1, 1}, zero[2] = {0, 0};
  int cl;
  for (cl = 0; cl < 2; ++cl) {
    odla_computation comp;
    odla_executable exe = NULL;
    odla_value x, w, y;
    last_error[0] = '\0';
    odla_CreateComputation(&comp);
    x = odla_CreateArgument(vt(ODLA_INT8, 4, cl ? DIMS(1, 4, 4, 0) : DIMS(1, 0, 4, 4)), ID("x"));
    w = odla_CreateArgument(vt(ODLA_INT8, 4, cl ? DIMS(3, 3, 0, 8) : DIMS(8, 0, 3, 3)), ID("w"));
    y = odla_ExtQLinearConv(x, odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("xz")),
                            cl ? ODLA_CHANNELS_LAST : ODLA_CHANNELS_FIRST, 1, w,
                            odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("wz")),
                            cl ? ODLA_SIO : ODLA_OIS, one, one, zero, zero, NULL,
                            odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_one, ID("m")),
                            odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_shift, ID("s")),
                            odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("yz")), -128,
                            127, any_shape(), ID("y"));
    CHECK(y == NULL, "ExtQLinearConv over no channels (%s) built",
          cl ? "channels last" : "channels first");
    CHECK(strstr(last_error, "has no channels: a convolution over none is not supported") != NULL,
          "ExtQLinearConv over no channels: message '%s'", last_error);
    CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_UNSUPPORTED_OP,
          "ExtQLinearConv over no channels: compile status");
    odla_DestroyComputation(comp);
  }
}

/* An int8 product x * w with per-tensor constants: zero points 0, q_one and q_shift. */
static odla_value qmatmul_per_tensor(odla_value x, odla_value w) {
  return odla_ExtQLinearMatMul(x, odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("xz")), w,
                               odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("wz")), NULL,
                               odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_one, ID("m")),
                               odla_CreateConstant(vt(ODLA_INT32, 0, NULL), &q_shift, ID("s")),
                               odla_CreateConstant(vt(ODLA_INT8, 0, NULL), &q_zero, ID("yz")), -128,
                               127, any_shape(), ID("y"));
}

/* The same for an int8 product of inner dimension 0 ([2, 0] x [0, 4]): refused. */
static void test_qmatmul_no_depth(void) {
  odla_computation comp;
  odla_executable exe = NULL;
  odla_value x, w, y;
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_INT8, 2, DIMS(2, 0)), ID("x"));
  w = odla_CreateArgument(vt(ODLA_INT8, 2, DIMS(0, 4)), ID("w"));
  y = qmatmul_per_tensor(x, w);
  CHECK(y == NULL, "ExtQLinearMatMul of depth 0 built");
  CHECK(strstr(last_error, "have an inner dimension of 0: not supported") != NULL,
        "ExtQLinearMatMul of depth 0: message '%s'", last_error);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_UNSUPPORTED_OP,
        "ExtQLinearMatMul of depth 0: compile status");
  odla_DestroyComputation(comp);
}

/* [1, 1] x [1, 2^31] in int8 with per-tensor constants: 2^31 output channels (a 2 GiB kernel
 * argument, a 2 GiB result), whose epilogue arrays would take 56 GiB if built with the node. */
static void test_qmatmul_channels(void) {
  odla_computation comp;
  odla_value x, w, y;
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_INT8, 2, (const int64_t[]){1, 1}), ID("x"));
  w = odla_CreateArgument(vt(ODLA_INT8, 2, (const int64_t[]){1, 1LL << 31}), ID("w"));
  y = qmatmul_per_tensor(x, w);
  CHECK(y != NULL, "ExtQLinearMatMul of 2^31 channels refused: %s", last_error);
  odla_DestroyComputation(comp);
}

/* output_dims of 2^42 x 2^42 elements, each a multiple of the input's: a valid tiling whose
 * result passes 2^48 bytes. */
static void test_tile_dynamic(void) {
  odla_computation comp;
  odla_value x, r, y;
  odla_value_shape dims = any_shape();
  last_error[0] = '\0';
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 2, (const int64_t[]){1, 1}), ID("x"));
  r = odla_CreateArgument(vt(ODLA_INT64, 1, (const int64_t[]){2}), ID("r"));
  dims.size = 2;
  dims.dims[0] = dims.dims[1] = 1LL << 42;
  y = odla_TileDynamic(x, r, dims, ID("y"));
  check_refused(comp, y,
                "the result float32 [4398046511104,4398046511104] holds more than 2^48 bytes",
                "TileDynamic to 2^84 elements");
  odla_DestroyComputation(comp);
}

/* [2^24, 1] x [1, 2^24] in float32: 2^50 bytes of result from two 64 MiB operands. */
static void test_matmul(void) {
  const int64_t col[2] = {1LL << 24, 1}, row[2] = {1, 1LL << 24};
  odla_computation comp;
  odla_value a, b, y;
  int batched;
  for (batched = 0; batched < 2; ++batched) {
    const char *what = batched ? "BatchMatMul of a 2^50-byte result" : "Gemm of a 2^50-byte result";
    last_error[0] = '\0';
    odla_CreateComputation(&comp);
    a = odla_CreateArgument(vt(ODLA_FLOAT32, 2, col), ID("a"));
    b = odla_CreateArgument(vt(ODLA_FLOAT32, 2, row), ID("b"));
    y = batched ? odla_BatchMatMul(a, 0, b, 0, any_shape(), ID("y"))
                : odla_Gemm(a, 0, b, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y"));
    check_refused(comp, y, "the result float32 [16777216,16777216] holds more than 2^48 bytes",
                  what);
    odla_DestroyComputation(comp);
  }
}

int main(void) {
  odla_SetLogger(keep_error);
  test_conv();
  test_deconv();
  test_pool();
  test_matmul();
  test_tile();
  test_tile_dynamic();
  test_qconv_pads();
  test_qconv_no_channels();
  test_qmatmul_no_depth();
  test_qmatmul_channels();
  if (!failures)
    printf("test_builder_limits: all checks passed\n");
  return failures != 0;
}
