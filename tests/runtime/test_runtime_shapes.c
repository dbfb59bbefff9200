/* test_runtime_shapes.c: dynamic batch and runtime shapes of an ODLA backend through the ODLA
 * headers only. An MLP built at batch 1 and a CNN built at batch 2 (so that batches that are
 * not a multiple of it take a padded last pass) opt in with ODLA_DYNAMIC_BATCH and run
 * batches 1 to 9; every row must equal a separate run of that row alone on a computation
 * without the item, and the MLP's also a plain C evaluation of its formula. Then the
 * refusals: a batch on a computation without the item, bounds, runtime shapes that differ
 * in other dims, arguments with different batches, value bounds, and the introspection
 * queries (runtime shapes and types of outputs, number of outputs). */
#include <ODLA/odla.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { kIn = 4, kHidden = 3, kOut = 2, kMaxBatch = 9 };
enum { kImg = 5, kFilters = 2, kConvOut = 3, kPoolOut = 1 }; /* 1x5x5 -> 2x3x3 -> 2x1x1 */

static char logged[512];
static void logger(const char *file, int line, const char *func, odla_log_level level,
                   const char *msg) {
  (void)file;
  (void)line;
  (void)level;
  snprintf(logged, sizeof logged, "%s: %s", func, msg);
}

static const float w1[kIn * kHidden] = {0.5f,  -1.0f,  0.25f, 1.5f,  0.75f,  -0.5f,
                                        -2.0f, 0.125f, 1.0f,  0.25f, -0.75f, 0.5f};
static const float b1[kHidden] = {0.1f, -0.2f, 0.3f};
static const float w2[kHidden * kOut] = {1.0f, -0.5f, 0.75f, 2.0f, -1.25f, 0.5f};
static const float b2[kOut] = {-0.3f, 0.4f};
static const float conv_w[kFilters * 3 * 3] = {1,    0,    -1,   2, 0, -2, 1,     0,     -1,
                                               0.5f, 0.5f, 0.5f, 0, 0, 0,  -0.5f, -0.5f, -0.5f};
static const float conv_b[kFilters] = {0.25f, -0.125f};

static odla_value_shape shape2(odla_int64 a, odla_int64 b) {
  odla_value_shape s;
  s.size = 2;
  s.dims[0] = a;
  s.dims[1] = b;
  return s;
}

static odla_value_shape shape4(odla_int64 a, odla_int64 b, odla_int64 c, odla_int64 d) {
  odla_value_shape s;
  s.size = 4;
  s.dims[0] = a;
  s.dims[1] = b;
  s.dims[2] = c;
  s.dims[3] = d;
  return s;
}

static odla_value_type f32(odla_value_shape s) {
  odla_value_type t;
  t.element_type = ODLA_FLOAT32;
  t.shape = s;
  return t;
}

/* y = relu(x W1 + b1) W2 + b2 for `batch` rows; the dynamic-batch items when `dynamic`. */
static odla_computation build_mlp(int batch, int dynamic, odla_value *x_out, odla_value *y_out) {
  odla_computation comp;
  odla_value x, h, r, y;
  odla_bool on = 1;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  if (dynamic)
    CHECK(odla_SetComputationItem(comp, ODLA_DYNAMIC_BATCH, (odla_item_value)&on) == ODLA_SUCCESS,
          "ODLA_DYNAMIC_BATCH");
  x = odla_CreateArgument(f32(shape2(batch, kIn)), (const odla_value_id) "x");
  h = odla_Gemm(
      x, 0, odla_CreateConstant(f32(shape2(kIn, kHidden)), w1, (const odla_value_id) "w1"), 0, 1.0f,
      1.0f, odla_CreateConstant(f32(shape2(1, kHidden)), b1, (const odla_value_id) "b1"),
      shape2(batch, kHidden), (const odla_value_id) "h");
  r = odla_Relu(h, (const odla_value_id) "r");
  y = odla_Gemm(
      r, 0, odla_CreateConstant(f32(shape2(kHidden, kOut)), w2, (const odla_value_id) "w2"), 0,
      1.0f, 1.0f, odla_CreateConstant(f32(shape2(1, kOut)), b2, (const odla_value_id) "b2"),
      shape2(batch, kOut), (const odla_value_id) "y");
  CHECK(odla_SetValueAsOutput(y) == ODLA_SUCCESS, "SetValueAsOutput y");
  *x_out = x;
  *y_out = y;
  return comp;
}

/* maxpool3x3(relu(conv3x3(x) + b)) for `batch` images of 1x5x5. */
static odla_computation build_cnn(int batch, int dynamic, odla_value *y_out) {
  static const odla_uint32 ones[2] = {1, 1}, zeros[2] = {0, 0}, window[2] = {3, 3};
  odla_computation comp;
  odla_value x, c, r, y;
  odla_bool on = 1;
  odla_value_shape bias_shape;
  bias_shape.size = 1;
  bias_shape.dims[0] = kFilters;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  if (dynamic)
    CHECK(odla_SetComputationItem(comp, ODLA_DYNAMIC_BATCH, (odla_item_value)&on) == ODLA_SUCCESS,
          "ODLA_DYNAMIC_BATCH");
  x = odla_CreateArgument(f32(shape4(batch, 1, kImg, kImg)), (const odla_value_id) "img");
  c = odla_Conv(
      x, ODLA_CHANNELS_FIRST, 1,
      odla_CreateConstant(f32(shape4(kFilters, 1, 3, 3)), conv_w, (const odla_value_id) "conv_w"),
      ODLA_OIS, ones, ones, zeros, zeros,
      odla_CreateConstant(f32(bias_shape), conv_b, (const odla_value_id) "conv_b"),
      shape4(batch, kFilters, kConvOut, kConvOut), (const odla_value_id) "conv");
  r = odla_Relu(c, (const odla_value_id) "conv_relu");
  y = odla_MaxPool(r, ODLA_CHANNELS_FIRST, window, ones, zeros, zeros,
                   shape4(batch, kFilters, kPoolOut, kPoolOut), (const odla_value_id) "pool");
  CHECK(odla_SetValueAsOutput(y) == ODLA_SUCCESS, "SetValueAsOutput pool");
  *y_out = y;
  return comp;
}

/* Runs `comp` (arguments and output by id) on `ctx`. */
static odla_status run(odla_computation comp, odla_context ctx, const char *in_id, const float *in,
                       const char *out_id, float *out) {
  odla_status s = odla_BindToArgumentById((const odla_value_id)in_id, in, ctx);
  if (s == ODLA_SUCCESS)
    s = odla_BindToOutputById((const odla_value_id)out_id, out, ctx);
  return s == ODLA_SUCCESS ? odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) : s;
}

static float input_value(int row, int i) { return (float)sin(0.7 * row + 1.3 * i) * 2.0f; }

static void check_mlp(void) {
  odla_computation dyn, one;
  odla_value x, y, x1, y1;
  odla_context ctx, ctx1;
  float in[kMaxBatch * kIn], out[kMaxBatch * kOut + 1], row_out[kOut];
  int n, b, i, j, k;
  dyn = build_mlp(1, 1, &x, &y);
  one = build_mlp(1, 0, &x1, &y1);
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS && odla_CreateContext(&ctx1) == ODLA_SUCCESS,
        "CreateContext");
  for (b = 0; b < kMaxBatch; ++b)
    for (i = 0; i < kIn; ++i)
      in[b * kIn + i] = input_value(b, i);
  for (n = 1; n <= kMaxBatch; ++n) {
    odla_value_shape rs;
    odla_value_type rt;
    out[n * kOut] = 12345.0f; /* must stay: nothing past n rows is written */
    CHECK(odla_SetContextItem(ctx, ODLA_RUN_BATCH_SIZE, (odla_item_value)&n) == ODLA_SUCCESS,
          "ODLA_RUN_BATCH_SIZE %d", n);
    CHECK(run(dyn, ctx, "x", in, "y", out) == ODLA_SUCCESS, "MLP batch %d", n);
    CHECK(out[n * kOut] == 12345.0f, "MLP batch %d wrote past its output", n);
    CHECK(odla_GetRuntimeShape(ctx, y, &rs) == ODLA_SUCCESS && rs.size == 2 && rs.dims[0] == n &&
              rs.dims[1] == kOut,
          "GetRuntimeShape(y) at batch %d: [%lld, %lld]", n, (long long)rs.dims[0],
          (long long)rs.dims[1]);
    CHECK(odla_GetRuntimeValueType(ctx, x, &rt) == ODLA_SUCCESS &&
              rt.element_type == ODLA_FLOAT32 && rt.shape.dims[0] == n && rt.shape.dims[1] == kIn,
          "GetRuntimeValueType(x) at batch %d", n);
    for (b = 0; b < n; ++b) {
      CHECK(run(one, ctx1, "x", in + b * kIn, "y", row_out) == ODLA_SUCCESS, "MLP row %d", b);
      for (k = 0; k < kOut; ++k) {
        /* The formula in plain C, in the order of the kernels' sums. */
        double want = b2[k];
        for (j = 0; j < kHidden; ++j) {
          double hj = b1[j];
          for (i = 0; i < kIn; ++i)
            hj += (double)in[b * kIn + i] * w1[i * kHidden + j];
          want += (hj > 0 ? hj : 0) * w2[j * kOut + k];
        }
        CHECK(out[b * kOut + k] == row_out[k], "MLP batch %d row %d col %d: %g, alone %g", n, b, k,
              out[b * kOut + k], row_out[k]);
        CHECK(fabs(out[b * kOut + k] - want) <= 1e-5 * (1 + fabs(want)),
              "MLP batch %d row %d col %d: %g, formula %g", n, b, k, out[b * kOut + k], want);
      }
    }
  }

  /* The same through runtime shapes instead of the item; outputs report the batch. */
  {
    odla_value_shape s = shape2(3, kIn), rs;
    odla_uint32 num = 0;
    odla_context c2;
    CHECK(odla_CreateContext(&c2) == ODLA_SUCCESS, "CreateContext");
    odla_SetLogger(logger); /* refusals log their reason */
    CHECK(odla_GetRuntimeNumOfOutputs(c2, &num) == ODLA_INVALID_PARAM,
          "GetRuntimeNumOfOutputs before any execution");
    CHECK(odla_SetRuntimeShape(c2, x, s) == ODLA_SUCCESS, "SetRuntimeShape(x, [3, 4])");
    CHECK(run(dyn, c2, "x", in, "y", out) == ODLA_SUCCESS, "MLP through SetRuntimeShape");
    CHECK(odla_GetRuntimeShape(c2, y, &rs) == ODLA_SUCCESS && rs.dims[0] == 3,
          "GetRuntimeShape(y) after SetRuntimeShape: %lld", (long long)rs.dims[0]);
    CHECK(odla_GetRuntimeNumOfOutputs(c2, &num) == ODLA_SUCCESS && num == 1,
          "GetRuntimeNumOfOutputs: %u", (unsigned)num);
    for (b = 0; b < 3; ++b) {
      CHECK(run(one, ctx1, "x", in + b * kIn, "y", row_out) == ODLA_SUCCESS, "MLP row %d", b);
      CHECK(memcmp(out + b * kOut, row_out, sizeof row_out) == 0, "SetRuntimeShape row %d", b);
    }

    /* Refusals, each with its reason logged. */
    s = shape2(3, kIn + 1);
    logged[0] = 0;
    CHECK(odla_SetRuntimeShape(c2, x, s) == ODLA_INVALID_PARAM && strstr(logged, "'x'") &&
              strstr(logged, "[3,5]") && strstr(logged, "[1,4]"),
          "a runtime shape differing in a non-batch dim: '%s'", logged);
    CHECK(odla_SetRuntimeShape(c2, y, shape2(3, kOut)) == ODLA_INVALID_PARAM,
          "SetRuntimeShape on an output");
    {
      odla_value_type t = f32(shape2(3, kIn));
      t.element_type = ODLA_INT32;
      CHECK(odla_SetRuntimeValueType(c2, x, t) == ODLA_INVALID_PARAM && strstr(logged, "int32"),
            "a runtime element type that differs: '%s'", logged);
    }
    n = 0;
    CHECK(odla_SetContextItem(c2, ODLA_RUN_BATCH_SIZE, (odla_item_value)&n) == ODLA_INVALID_PARAM,
          "ODLA_RUN_BATCH_SIZE 0");
    n = 2;
    logged[0] = 0;
    CHECK(odla_SetContextItem(c2, ODLA_RUN_BATCH_SIZE, (odla_item_value)&n) == ODLA_SUCCESS &&
              run(one, c2, "x", in, "y", out) == ODLA_INVALID_PARAM &&
              strstr(logged, "ODLA_DYNAMIC_BATCH"),
          "batch 2 on a computation without ODLA_DYNAMIC_BATCH: '%s'", logged);
    odla_SetLogger(NULL);
    odla_DestroyContext(c2);
  }
  odla_DestroyContext(ctx);
  odla_DestroyContext(ctx1);
  odla_DestroyComputation(dyn);
  odla_DestroyComputation(one);
}

static void check_cnn(void) {
  odla_computation dyn, one;
  odla_value y, y1;
  odla_context ctx, ctx1;
  enum { kInRow = kImg * kImg, kOutRow = kFilters * kPoolOut * kPoolOut };
  float in[kMaxBatch * kInRow], out[kMaxBatch * kOutRow + 1], row_out[kOutRow];
  int n, b, i;
  odla_value img = NULL;
  dyn = build_cnn(2, 1, &y);
  one = build_cnn(1, 0, &y1);
  CHECK(odla_GetArgFromComputationByIdx(dyn, 0, &img) == ODLA_SUCCESS, "the CNN's argument");
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS && odla_CreateContext(&ctx1) == ODLA_SUCCESS,
        "CreateContext");
  for (b = 0; b < kMaxBatch; ++b)
    for (i = 0; i < kInRow; ++i)
      in[b * kInRow + i] = input_value(b, i);
  for (n = 1; n <= kMaxBatch; ++n) {
    odla_value_shape rs;
    out[n * kOutRow] = 12345.0f;
    CHECK(odla_SetRuntimeShape(ctx, img, shape4(n, 1, kImg, kImg)) == ODLA_SUCCESS,
          "SetRuntimeShape(img, batch %d)", n);
    CHECK(run(dyn, ctx, "img", in, "pool", out) == ODLA_SUCCESS, "CNN batch %d", n);
    CHECK(out[n * kOutRow] == 12345.0f, "CNN batch %d wrote past its output", n);
    CHECK(odla_GetRuntimeShape(ctx, y, &rs) == ODLA_SUCCESS && rs.size == 4 && rs.dims[0] == n &&
              rs.dims[1] == kFilters,
          "GetRuntimeShape(pool) at batch %d", n);
    for (b = 0; b < n; ++b) {
      CHECK(run(one, ctx1, "img", in + b * kInRow, "pool", row_out) == ODLA_SUCCESS, "CNN row %d",
            b);
      for (i = 0; i < kOutRow; ++i)
        CHECK(fabsf(out[b * kOutRow + i] - row_out[i]) <= 1e-5f * (1 + fabsf(row_out[i])),
              "CNN batch %d image %d element %d: %g, alone %g", n, b, i, out[b * kOutRow + i],
              row_out[i]);
    }
  }
  odla_DestroyContext(ctx);
  odla_DestroyContext(ctx1);
  odla_DestroyComputation(dyn);
  odla_DestroyComputation(one);
}

/* Batch bounds (items and value shape infos), arguments with different batches, value
 * bounds. */
static void check_bounds(void) {
  odla_computation comp;
  odla_value a, b2v, sum;
  odla_context ctx;
  odla_bool on = 1;
  odla_int32 v;
  float xa[8 * 3], xb[8 * 3], out[8 * 3];
  static const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
  int i;
  odla_SetLogger(logger);
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  CHECK(odla_SetComputationItem(comp, ODLA_DYNAMIC_BATCH, (odla_item_value)&on) == ODLA_SUCCESS,
        "ODLA_DYNAMIC_BATCH");
  v = 2;
  CHECK(odla_SetComputationItem(comp, ODLA_MIN_BATCH_SIZE, (odla_item_value)&v) == ODLA_SUCCESS,
        "ODLA_MIN_BATCH_SIZE");
  v = 1;
  CHECK(odla_SetComputationItem(comp, ODLA_MAX_BATCH_SIZE, (odla_item_value)&v) ==
            ODLA_INVALID_PARAM,
        "a max below the min");
  CHECK(odla_SetComputationItem(comp, ODLA_RUN_BATCH_SIZE, (odla_item_value)&v) ==
            ODLA_INVALID_PARAM,
        "ODLA_RUN_BATCH_SIZE on a computation");
  a = odla_CreateArgument(f32(shape2(1, 3)), (const odla_value_id) "a");
  b2v = odla_CreateArgument(f32(shape2(1, 3)), (const odla_value_id) "b");
  CHECK(odla_SetValueShapeInfo(a, ODLA_MAX_SHAPE, shape2(6, 3)) == ODLA_SUCCESS,
        "SetValueShapeInfo(a, ODLA_MAX_SHAPE, [6, 3])");
  CHECK(odla_SetValueShapeInfo(a, ODLA_MAX_SHAPE, shape2(6, 4)) == ODLA_INVALID_PARAM,
        "a shape info differing in a non-batch dim");
  CHECK(odla_SetValueShapeInfo(a, ODLA_OPT_SHAPE, shape2(7, 3)) == ODLA_INVALID_PARAM,
        "an opt shape above the max");
  CHECK(odla_SetInputValueInfo(b2v, ODLA_MIN_VALUE, (odla_item_value)lo) == ODLA_SUCCESS &&
            odla_SetInputValueInfo(b2v, ODLA_MAX_VALUE, (odla_item_value)hi) == ODLA_SUCCESS,
        "SetInputValueInfo bounds");
  sum = odla_Add(a, b2v, (const odla_value_id) "sum");
  CHECK(odla_SetValueAsOutput(sum) == ODLA_SUCCESS, "SetValueAsOutput");
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  for (i = 0; i < 8 * 3; ++i) {
    xa[i] = (float)i;
    xb[i] = 0.125f * (float)(i % 7) - 0.25f;
  }
  CHECK(odla_BindToArgumentById((const odla_value_id) "a", xa, ctx) == ODLA_SUCCESS &&
            odla_BindToArgumentById((const odla_value_id) "b", xb, ctx) == ODLA_SUCCESS &&
            odla_BindToOutputById((const odla_value_id) "sum", out, ctx) == ODLA_SUCCESS,
        "bind");
  logged[0] = 0;
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_INVALID_PARAM &&
            strstr(logged, "[2, 6]"),
        "the built batch 1 is below the min 2: '%s'", logged);
  CHECK(odla_SetRuntimeShape(ctx, a, shape2(4, 3)) == ODLA_SUCCESS &&
            odla_SetRuntimeShape(ctx, b2v, shape2(5, 3)) == ODLA_SUCCESS,
        "SetRuntimeShape a, b");
  logged[0] = 0;
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_INVALID_PARAM &&
            strstr(logged, "'a'") && strstr(logged, "4"),
        "arguments with different batches: '%s'", logged);
  CHECK(odla_SetRuntimeShape(ctx, a, shape2(5, 3)) == ODLA_SUCCESS, "SetRuntimeShape a");
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "batch 5 of two arguments");
  for (i = 0; i < 5 * 3; ++i)
    CHECK(out[i] == xa[i] + xb[i], "sum element %d: %g, want %g", i, out[i], xa[i] + xb[i]);
  v = 7;
  logged[0] = 0;
  CHECK(odla_SetContextItem(ctx, ODLA_RUN_BATCH_SIZE, (odla_item_value)&v) == ODLA_SUCCESS &&
            odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) ==
                ODLA_INVALID_PARAM &&
            strstr(logged, "run batch 7"),
        "batch 7 above the max 6: '%s'", logged);
  v = 6;
  xb[5 * 3 + 1] = 1.5f;
  logged[0] = 0;
  CHECK(odla_SetContextItem(ctx, ODLA_RUN_BATCH_SIZE, (odla_item_value)&v) == ODLA_SUCCESS &&
            odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) ==
                ODLA_INVALID_PARAM &&
            strstr(logged, "'b' element 16") && strstr(logged, "MAX"),
        "a value above its ODLA_MAX_VALUE: '%s'", logged);
  odla_SetLogger(NULL);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

int main(void) {
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  check_mlp();
  check_cnn();
  check_bounds();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  return failures != 0;
}
