/* test_api_ops.c: ODLA 0.5 op builders that odlac does not emit but a backend must still
 * implement (Rsqrt, SquaredDifference, Inverse, ExpandDims, DimsExpand, Stack, CloneValueById,
 * PostProcess), through the ODLA headers only. Known answers come from numpy (the values in
 * comments, and postprocess_reference.py for PostProcess); invalid operands must be refused
 * when the graph is built. Also Transpose at sizes ONNX's small node tests do not reach (the
 * reference backend's 8-row tiles, their partial last tile, 1- to 8-byte elements), against
 * index arithmetic. Usage: test_api_ops SCRATCH_DIR (unused) */
#include <ODLA/odla.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))

/* Runs the current computation once with one argument bound and `n` outputs. */
static odla_status run(odla_computation comp, const char *arg, const void *arg_data, int n,
                       const char *const *outs, void *const *out_data) {
  odla_context ctx;
  odla_status s;
  int i;
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  if (arg)
    odla_BindToArgumentById(ID(arg), arg_data, ctx);
  for (i = 0; i < n; ++i)
    odla_BindToOutputById(ID(outs[i]), out_data[i], ctx);
  s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL);
  odla_DestroyContext(ctx);
  return s;
}

static odla_status run1(odla_computation comp, const char *arg, const void *arg_data,
                        const char *out, void *out_data) {
  return run(comp, arg, arg_data, 1, &out, &out_data);
}

static void check_close(const char *what, const float *got, const float *want, int n, double rel) {
  int i;
  for (i = 0; i < n; ++i)
    CHECK(fabs((double)got[i] - want[i]) <= rel * (fabs((double)want[i]) + 1e-30),
          "%s[%d] = %.9g, want %.9g", what, i, got[i], want[i]);
}

/* A builder that must fail: NULL, and the computation then refuses to compile with `want`. */
static void check_refused(odla_computation comp, odla_value v, odla_status want, const char *what) {
  odla_executable exe = NULL;
  CHECK(v == NULL, "%s: built although invalid", what);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == want, "%s: status", what);
}

static void test_rsqrt(void) {
  static const float x[5] = {0.25f, 1, 4, 2, 1e-4f}, want[5] = {2, 1, 0.5f, 0.707106769f, 100};
  const uint16_t h_in[2] = {0x4400, 0x3400}; /* float16 4 and 0.25 */
  uint16_t h_out[2];
  float y[5];
  odla_computation comp;
  odla_value a;
  odla_CreateComputation(&comp);
  a = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(5)), ID("x"));
  odla_SetValueAsOutput(odla_Rsqrt(a, ID("y")));
  CHECK(run1(comp, "x", x, "y", y) == ODLA_SUCCESS, "Rsqrt float32");
  check_close("rsqrt", y, want, 5, 1e-6);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  a = odla_CreateArgument(vt(ODLA_FLOAT16, 1, DIMS(2)), ID("x"));
  odla_SetValueAsOutput(odla_Rsqrt(a, ID("y")));
  CHECK(run1(comp, "x", h_in, "y", h_out) == ODLA_SUCCESS, "Rsqrt float16");
  CHECK(h_out[0] == 0x3800 && h_out[1] == 0x4000, "rsqrt float16: %04x %04x", h_out[0], h_out[1]);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  a = odla_CreateArgument(vt(ODLA_INT32, 1, DIMS(2)), ID("x"));
  check_refused(comp, odla_Rsqrt(a, ID("y")), ODLA_UNSUPPORTED_DATATYPE, "Rsqrt int32");
  odla_DestroyComputation(comp);
}

static void test_squared_difference(void) {
  static const float a[6] = {1.5f, -2, 3, 0.25f, 4, -1}, b[3] = {0.5f, -1, 2};
  static const float want[6] = {1, 1, 1, 0.0625f, 25, 9}; /* numpy.square(a - b) */
  static const int8_t ia[3] = {100, -100, 7}, ib[3] = {-100, 100, -9};
  static const uint8_t ua[2] = {3, 250}, ub[2] = {5, 1};
  int8_t iy[3];
  uint8_t uy[2];
  float y[6];
  odla_computation comp;
  odla_value x;
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 2, DIMS(2, 3)), ID("a"));
  odla_SetValueAsOutput(odla_SquaredDifference(
      x, odla_CreateConstant(vt(ODLA_FLOAT32, 1, DIMS(3)), b, ID("b")), ID("y")));
  CHECK(run1(comp, "a", a, "y", y) == ODLA_SUCCESS, "SquaredDifference float32");
  check_close("sqdiff", y, want, 6, 0);
  odla_DestroyComputation(comp);

  /* Integers wrap as numpy's int8 and uint8 do: [64, 64, 0] and [4, 49]. */
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_INT8, 1, DIMS(3)), ID("a"));
  odla_SetValueAsOutput(odla_SquaredDifference(
      x, odla_CreateConstant(vt(ODLA_INT8, 1, DIMS(3)), ib, ID("b")), ID("y")));
  CHECK(run1(comp, "a", ia, "y", iy) == ODLA_SUCCESS, "SquaredDifference int8");
  CHECK(iy[0] == 64 && iy[1] == 64 && iy[2] == 0, "sqdiff int8: %d %d %d", iy[0], iy[1], iy[2]);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_UINT8, 1, DIMS(2)), ID("a"));
  odla_SetValueAsOutput(odla_SquaredDifference(
      x, odla_CreateConstant(vt(ODLA_UINT8, 1, DIMS(2)), ub, ID("b")), ID("y")));
  CHECK(run1(comp, "a", ua, "y", uy) == ODLA_SUCCESS, "SquaredDifference uint8");
  CHECK(uy[0] == 4 && uy[1] == 49, "sqdiff uint8: %d %d", uy[0], uy[1]);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(3)), ID("a"));
  check_refused(comp,
                odla_SquaredDifference(
                    x, odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(2)), ID("b")), ID("y")),
                ODLA_INVALID_PARAM, "SquaredDifference [3] and [2]");
  odla_DestroyComputation(comp);
}

static void test_inverse(void) {
  static const float m[18] = {4, 7, 2, 3, 6, 1, 2, 5, 3, 0, 1, 2, 1, 0, 3, 4, -3, 8};
  static const float want[18] = {/* numpy.linalg.inv */
                                 1.44444442f,
                                 -1.22222221f,
                                 -0.555555582f,
                                 -0.777777791f,
                                 0.888888896f,
                                 0.222222224f,
                                 0.333333343f,
                                 -0.666666687f,
                                 0.333333343f,
                                 -4.5f,
                                 7,
                                 -1.5f,
                                 -2,
                                 4,
                                 -1,
                                 1.5f,
                                 -2,
                                 0.5f};
  static const double d[4] = {2, 1, 7, 4};
  double dy[4];
  float y[18];
  odla_computation comp;
  odla_value x;
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 3, DIMS(2, 3, 3)), ID("m"));
  odla_SetValueAsOutput(odla_Inverse(x, ID("y")));
  CHECK(run1(comp, "m", m, "y", y) == ODLA_SUCCESS, "Inverse float32");
  check_close("inverse", y, want, 18, 1e-6);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT64, 2, DIMS(2, 2)), ID("m"));
  odla_SetValueAsOutput(odla_Inverse(x, ID("y")));
  CHECK(run1(comp, "m", d, "y", dy) == ODLA_SUCCESS, "Inverse float64");
  CHECK(fabs(dy[0] - 4) < 1e-14 && fabs(dy[1] + 1) < 1e-14 && fabs(dy[2] + 7) < 1e-14 &&
            fabs(dy[3] - 2) < 1e-14,
        "inverse float64: %g %g %g %g", dy[0], dy[1], dy[2], dy[3]);
  /* A singular matrix fails the execution. */
  CHECK(run1(comp, "m", (const double[]){1, 2, 2, 4}, "y", dy) == ODLA_FAILURE,
        "Inverse of a singular matrix");
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, 2, DIMS(2, 3)), ID("m"));
  check_refused(comp, odla_Inverse(x, ID("y")), ODLA_INVALID_PARAM, "Inverse of [2,3]");
  odla_DestroyComputation(comp);
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_INT32, 2, DIMS(2, 2)), ID("m"));
  check_refused(comp, odla_Inverse(x, ID("y")), ODLA_UNSUPPORTED_DATATYPE, "Inverse int32");
  odla_DestroyComputation(comp);
}

static void test_expand_stack(void) {
  static const int32_t x[3] = {7, -8, 9};
  static const float s0[4] = {1, 2, 3, 4}, s1[4] = {5, 6, 7, 8}, s2[4] = {9, 10, 11, 12};
  const float *ins[3] = {s0, s1, s2};
  int32_t y[24];
  float st[12], st2[12];
  odla_computation comp;
  odla_value v, r;
  odla_values vals;
  odla_value_type t;
  int i, j, k;
  /* ExpandDims: [3, 1] broadcast to [2, 3, 4] (numpy.broadcast_to). */
  odla_CreateComputation(&comp);
  v = odla_CreateArgument(vt(ODLA_INT32, 2, DIMS(3, 1)), ID("x"));
  r = odla_ExpandDims(v, vt(ODLA_INT32, 3, DIMS(2, 3, 4)).shape, ID("y"));
  odla_SetValueAsOutput(r);
  CHECK(run1(comp, "x", x, "y", y) == ODLA_SUCCESS, "ExpandDims");
  for (i = 0; i < 24; ++i)
    CHECK(y[i] == x[(i / 4) % 3], "expand y[%d] = %d", i, y[i]);
  odla_DestroyComputation(comp);
  odla_CreateComputation(&comp);
  v = odla_CreateArgument(vt(ODLA_INT32, 2, DIMS(3, 2)), ID("x"));
  check_refused(comp, odla_ExpandDims(v, vt(ODLA_INT32, 2, DIMS(3, 4)).shape, ID("y")),
                ODLA_INVALID_PARAM, "ExpandDims [3,2] to [3,4]");
  odla_DestroyComputation(comp);

  /* Stack: numpy.stack(ins, axis=1) is [2, 3, 2]; axis=-1 is [2, 2, 3]. */
  for (k = 0; k < 2; ++k) {
    odla_CreateComputation(&comp);
    vals.size = 3;
    for (i = 0; i < 3; ++i) {
      char id[8];
      sprintf(id, "s%d", i);
      vals.values[i] = odla_CreateConstant(vt(ODLA_FLOAT32, 2, DIMS(2, 2)), ins[i], ID(id));
    }
    r = odla_Stack(vals, k == 0 ? 1 : -1, any_shape(), ID("y"));
    odla_SetValueAsOutput(r);
    odla_GetValueType(r, &t);
    CHECK(t.shape.size == 3 && t.shape.dims[0] == 2 && t.shape.dims[1] == (k ? 2 : 3) &&
              t.shape.dims[2] == (k ? 3 : 2),
          "Stack shape");
    CHECK(run1(comp, NULL, NULL, "y", k ? st2 : st) == ODLA_SUCCESS, "Stack");
    odla_DestroyComputation(comp);
  }
  for (i = 0; i < 2; ++i)
    for (k = 0; k < 3; ++k)
      for (j = 0; j < 2; ++j) {
        CHECK(st[(i * 3 + k) * 2 + j] == ins[k][i * 2 + j], "stack axis 1 [%d,%d,%d]", i, k, j);
        CHECK(st2[(i * 2 + j) * 3 + k] == ins[k][i * 2 + j], "stack axis -1 [%d,%d,%d]", i, j, k);
      }
  odla_CreateComputation(&comp);
  vals.size = 2;
  vals.values[0] = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(2)), ID("a"));
  vals.values[1] = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(3)), ID("b"));
  check_refused(comp, odla_Stack(vals, 0, any_shape(), ID("y")), ODLA_INVALID_PARAM,
                "Stack of [2] and [3]");
  odla_DestroyComputation(comp);
}

static void test_dims_expand_clone(void) {
  static const int64_t axes[2] = {0, -1}, repeated[2] = {1, 1};
  static const float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  float y[12], z[12];
  const char *outs[2] = {"y", "z"};
  void *out_data[2];
  odla_computation comp;
  odla_value v, r, o;
  odla_value_type t;
  int i;
  /* numpy.expand_dims(x, (0, -1)) of a [3, 4] is [1, 3, 4, 1]. */
  odla_CreateComputation(&comp);
  v = odla_CreateArgument(vt(ODLA_FLOAT32, 2, DIMS(3, 4)), ID("x"));
  r = odla_DimsExpand(v, NULL, odla_CreateConstant(vt(ODLA_INT64, 1, DIMS(2)), axes, ID("axes")),
                      any_shape(), ID("y"));
  odla_GetValueType(r, &t);
  CHECK(t.shape.size == 4 && t.shape.dims[0] == 1 && t.shape.dims[1] == 3 && t.shape.dims[2] == 4 &&
            t.shape.dims[3] == 1,
        "DimsExpand shape");
  odla_SetValueAsOutput(r);
  /* CloneValueById copies the value named "x". */
  odla_SetValueAsOutput(odla_CloneValueById(ID("x"), ID("z")));
  out_data[0] = y;
  out_data[1] = z;
  CHECK(run(comp, "x", x, 2, outs, out_data) == ODLA_SUCCESS, "DimsExpand, CloneValueById");
  for (i = 0; i < 12; ++i)
    CHECK(y[i] == x[i] && z[i] == x[i], "data [%d]: %g %g", i, y[i], z[i]);
  odla_DestroyComputation(comp);

  /* With original only: [3] back to original's [1, 3, 1]. */
  odla_CreateComputation(&comp);
  o = odla_CreateArgument(vt(ODLA_FLOAT32, 3, DIMS(1, 3, 1)), ID("o"));
  v = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(3)), ID("x"));
  r = odla_DimsExpand(v, o, NULL, any_shape(), ID("y"));
  odla_GetValueType(r, &t);
  CHECK(t.shape.size == 3 && t.shape.dims[1] == 3, "DimsExpand from original");
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  v = odla_CreateArgument(vt(ODLA_FLOAT32, 2, DIMS(3, 4)), ID("x"));
  check_refused(comp,
                odla_DimsExpand(v, NULL,
                                odla_CreateConstant(vt(ODLA_INT64, 1, DIMS(2)), repeated, ID("a")),
                                any_shape(), ID("y")),
                ODLA_INVALID_PARAM, "DimsExpand with a repeated axis");
  odla_DestroyComputation(comp);
  odla_CreateComputation(&comp);
  v = odla_CreateArgument(vt(ODLA_FLOAT32, 1, DIMS(3)), ID("x"));
  check_refused(comp, odla_CloneValueById(ID("nope"), ID("y")), ODLA_INVALID_PARAM,
                "CloneValueById of an unknown id");
  odla_DestroyComputation(comp);
}

/* Known answers: postprocess_reference.py, for the logits below. */
#include "postprocess_expected.inc"

static float logit(int head, int64_t k) { return (float)((k * 37 + 11 * head + 5) % 97 - 48) / 16; }

static void test_post_process(void) {
  enum { C = 2, G = 2, CH = 3 * (5 + C), N = 3 * (G * G + 4 * G * G + 16 * G * G) };
  static float heads[3][CH * 16 * G * G];
  static float info[C * N * 5];
  static const uint32_t orig_w = 100, orig_h = 60;
  const unsigned want_kept[C] = {kept_0, kept_1};
  const float(*want_rows[C])[5] = {rows_0, rows_1};
  uint32_t num[C];
  const char *outs[2] = {"pp0", "pp1"};
  void *out_data[2];
  odla_computation comp;
  odla_value in[5];
  odla_values res;
  odla_value_type t;
  int h, c;
  unsigned r;
  int64_t k;
  for (h = 0; h < 3; ++h)
    for (k = 0; k < (int64_t)CH * (G << h) * (G << h); ++k)
      heads[h][k] = logit(h, k);
  odla_CreateComputation(&comp);
  in[0] = odla_CreateConstant(vt(ODLA_UINT32, 0, NULL), &orig_w, ID("w"));
  in[1] = odla_CreateConstant(vt(ODLA_UINT32, 1, DIMS(1)), &orig_h, ID("h"));
  for (h = 0; h < 3; ++h) {
    char id[8];
    sprintf(id, "bb%d", h);
    in[2 + h] =
        odla_CreateConstant(vt(ODLA_FLOAT32, 4, DIMS(1, CH, G << h, G << h)), heads[h], ID(id));
  }
  res = odla_PostProcess(in[0], in[1], in[2], in[3], in[4], ID("pp"));
  CHECK(res.size == 2, "PostProcess results: %d", (int)res.size);
  odla_SetValuesAsOutput(res);
  odla_GetValueType(res.values[0], &t);
  CHECK(t.element_type == ODLA_FLOAT32 && t.shape.size == 3 && t.shape.dims[0] == C &&
            t.shape.dims[1] == N && t.shape.dims[2] == 5,
        "PostProcess info type");
  out_data[0] = info;
  out_data[1] = num;
  memset(info, 0xff, sizeof info);
  CHECK(run(comp, NULL, NULL, 2, outs, out_data) == ODLA_SUCCESS, "PostProcess");
  for (c = 0; c < C; ++c) {
    CHECK(num[c] == want_kept[c], "class %d: %u kept, want %u", c, num[c], want_kept[c]);
    for (r = 0; r < num[c] && r < want_kept[c]; ++r)
      check_close("PostProcess row", info + (c * N + r) * 5, want_rows[c][r], 5, 2e-6);
    for (r = want_kept[c] * 5; r < N * 5; ++r)
      CHECK(info[c * N * 5 + r] == 0, "class %d: element %u after the kept rows is not 0", c, r);
  }
  odla_DestroyComputation(comp);

  /* Heads of mismatched grids, and batch 2, are refused. */
  odla_CreateComputation(&comp);
  in[0] = odla_CreateArgument(vt(ODLA_UINT32, 0, NULL), ID("w"));
  in[1] = odla_CreateArgument(vt(ODLA_UINT32, 0, NULL), ID("h"));
  in[2] = odla_CreateArgument(vt(ODLA_FLOAT32, 4, DIMS(1, CH, 2, 2)), ID("a"));
  in[3] = odla_CreateArgument(vt(ODLA_FLOAT32, 4, DIMS(1, CH, 4, 4)), ID("b"));
  in[4] = odla_CreateArgument(vt(ODLA_FLOAT32, 4, DIMS(1, CH, 4, 4)), ID("c"));
  res = odla_PostProcess(in[0], in[1], in[2], in[3], in[4], ID("pp"));
  check_refused(comp, res.size ? res.values[0] : NULL, ODLA_INVALID_PARAM,
                "PostProcess with bb52 as large as bb26");
  odla_DestroyComputation(comp);
}

/* Every permutation of a [5, 19, 13] tensor of each element size, element e holding e (mod
 * 256 in bytes): output element (i0, i1, i2) must hold the input's at the permuted index. */
static void test_transpose_tiles(void) {
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  static const odla_element_type types[4] = {ODLA_UINT8, ODLA_INT16, ODLA_INT32, ODLA_INT64};
  static const size_t sizes[4] = {1, 2, 4, 8};
  const int64_t in[3] = {5, 19, 13}, n = 5 * 19 * 13;
  unsigned char x[5 * 19 * 13 * 8], y[5 * 19 * 13 * 8];
  int t, p, k;
  for (t = 0; t < 4; ++t)
    for (p = 0; p < 6; ++p) {
      int64_t out[3], i[3], stride[3] = {19 * 13, 13, 1};
      odla_value_shape perm, dims;
      odla_computation comp;
      int64_t e;
      for (k = 0; k < 3; ++k)
        out[k] = in[perms[p][k]];
      for (e = 0; e < n; ++e) /* element e holds e (mod 256 for bytes) */
        memcpy(x + e * sizes[t], &(uint64_t){(uint64_t)e}, sizes[t]);
      memset(&perm, 0, sizeof perm);
      memset(&dims, 0, sizeof dims);
      perm.size = dims.size = 3;
      for (k = 0; k < 3; ++k) {
        perm.dims[k] = perms[p][k];
        dims.dims[k] = out[k];
      }
      odla_CreateComputation(&comp);
      odla_SetValueAsOutput(
          odla_Transpose(odla_CreateArgument(vt(types[t], 3, in), ID("x")), perm, dims, ID("y")));
      CHECK(run1(comp, "x", x, "y", y) == ODLA_SUCCESS, "Transpose %zu-byte perm %d", sizes[t], p);
      odla_DestroyComputation(comp);
      for (i[0] = 0; i[0] < out[0]; ++i[0])
        for (i[1] = 0; i[1] < out[1]; ++i[1])
          for (i[2] = 0; i[2] < out[2]; ++i[2]) {
            int64_t src = 0, at = (i[0] * out[1] + i[1]) * out[2] + i[2];
            uint64_t got = 0, want = 0;
            for (k = 0; k < 3; ++k)
              src += i[k] * stride[perms[p][k]];
            memcpy(&got, y + at * sizes[t], sizes[t]);
            memcpy(&want, x + src * sizes[t], sizes[t]);
            CHECK(got == want, "Transpose %zu-byte perm %d at %lld: %llu, want %llu", sizes[t], p,
                  (long long)at, (unsigned long long)got, (unsigned long long)want);
            if (got != want)
              return;
          }
    }
}

int main(void) {
  test_transpose_tiles();
  test_rsqrt();
  test_squared_difference();
  test_inverse();
  test_expand_stack();
  test_dims_expand_clone();
  test_post_process();
  if (!failures)
    printf("test_api_ops: all checks passed\n");
  return failures != 0;
}
