/* test_exec_modes.c: one model through the three execution modes of an ODLA backend, using
 * only the ODLA headers. Compile mode is checked against plain C loops written here; interpret
 * and load modes must then give bit-identical outputs. Stored executables are also loaded
 * from memory, and truncated, corrupt, foreign and missing ones must be refused with
 * ODLA_INVALID_PARAM / ODLA_FILE_NOT_EXIST.
 * Usage: test_exec_modes SCRATCH_DIR */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, K = 5, N = 4 };

#include "check.h"

static float x_data[B * K], w_data[K * N], b_data[N];

static odla_value_type type2(int64_t d0, int64_t d1) {
  odla_value_type t;
  memset(&t, 0, sizeof t);
  t.element_type = ODLA_FLOAT32;
  t.shape.size = 2;
  t.shape.dims[0] = d0;
  t.shape.dims[1] = d1;
  return t;
}

/* y = mean(sigmoid(x W + b), relu(x W + b)) * -1, through Gemm, Add (broadcast), Sigmoid,
 * Relu, Mean and Neg: kernels whose parameters hold function pointers. `x` is an argument
 * (compile mode) or a value holding data (interpret mode). */
static odla_value build_rest(odla_value x, odla_value *h_out) {
  odla_value w = odla_CreateConstant(type2(K, N), w_data, (const odla_value_id) "w");
  odla_value_type bt;
  odla_value b, h, s, r, y;
  odla_values both;
  memset(&bt, 0, sizeof bt);
  bt.element_type = ODLA_FLOAT32;
  bt.shape.size = 1;
  bt.shape.dims[0] = N;
  b = odla_CreateConstant(bt, b_data, (const odla_value_id) "b");
  h = odla_Add(
      odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, type2(B, N).shape, (const odla_value_id) "xw"), b,
      (const odla_value_id) "h");
  s = odla_Sigmoid(h, (const odla_value_id) "s");
  r = odla_Relu(h, (const odla_value_id) "r");
  both.size = 2;
  both.values[0] = s;
  both.values[1] = r;
  y = odla_Neg(odla_Mean(both, (const odla_value_id) "m"), (const odla_value_id) "y");
  if (h_out)
    *h_out = h;
  return y;
}

static void reference(float *y) {
  int i, j, k;
  for (i = 0; i < B; ++i)
    for (j = 0; j < N; ++j) {
      double h = b_data[j];
      for (k = 0; k < K; ++k)
        h += (double)x_data[i * K + k] * w_data[k * N + j];
      y[i * N + j] = (float)(-(1.0 / (1.0 + exp(-h)) + (h > 0 ? h : 0)) / 2);
    }
}

static odla_status compile_mode(odla_computation *comp, odla_executable *exe, float *y) {
  odla_context ctx;
  odla_status s;
  odla_value out;
  CHECK(odla_CreateComputation(comp) == ODLA_SUCCESS, "CreateComputation");
  out = build_rest(odla_CreateArgument(type2(B, K), (const odla_value_id) "x"), NULL);
  CHECK(out != NULL, "building the graph failed");
  CHECK(odla_SetValueAsOutput(out) == ODLA_SUCCESS, "SetValueAsOutput");
  s = odla_CompileComputation(*comp, NULL, exe);
  if (s != ODLA_SUCCESS)
    return s;
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx);
  odla_BindToOutputById((const odla_value_id) "y", y, ctx);
  s = odla_LaunchExecutable(*exe, ctx);
  odla_DestroyContext(ctx);
  return s;
}

static void interpret_mode(float *y) {
  odla_computation comp;
  odla_value x, h, out, late;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  x = odla_CreateValue(type2(B, K), (const odla_value_id) "x");
  CHECK(x != NULL, "CreateValue");
  CHECK(odla_SetValueData(x, x_data) == ODLA_SUCCESS, "SetValueData");
  out = build_rest(x, &h);
  CHECK(out != NULL, "interpreting the ops failed");
  CHECK(odla_GetValueData(out, y, NULL) == ODLA_SUCCESS, "GetValueData");
  /* Released values free their data; an op built on one afterwards fails cleanly. */
  CHECK(odla_ReleaseValue(h) == ODLA_SUCCESS, "ReleaseValue");
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  late = odla_Relu(h, (const odla_value_id) "late");
  CHECK(odla_GetValueData(late, y + B * N, NULL) != ODLA_SUCCESS,
        "an op on a released value must fail");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  odla_DestroyComputation(comp);
}

static odla_status load_and_run(odla_resource_location loc, float *y) {
  odla_executable exe;
  odla_context ctx;
  odla_uint32 n_args = 0, n_outs = 0;
  odla_status s = odla_LoadExecutable(loc, NULL, &exe);
  if (s != ODLA_SUCCESS)
    return s;
  CHECK(odla_GetNumOfArgsFromExecutable(exe, &n_args) == ODLA_SUCCESS && n_args == 1,
        "loaded executable: %u arguments, expected 1", (unsigned)n_args);
  CHECK(odla_GetNumOfOutputsFromExecutable(exe, &n_outs) == ODLA_SUCCESS && n_outs == 1,
        "loaded executable: %u outputs, expected 1", (unsigned)n_outs);
  odla_CreateContext(&ctx);
  odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx);
  odla_BindToOutputById((const odla_value_id) "y", y, ctx);
  s = odla_LaunchExecutable(exe, ctx);
  odla_DestroyContext(ctx);
  odla_DestroyExecutable(exe);
  return s;
}

static int write_file(const char *path, const unsigned char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(p, 1, n, f) == n;
  return f && fclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
  float want[B * N], y_compile[B * N], y_interp[2 * B * N], y_load[B * N], y_mem[B * N];
  odla_computation comp;
  odla_executable exe;
  odla_resource_location loc;
  odla_size_t bytes = 0;
  unsigned char *image, *bad;
  char path[4096], bad_path[4096];
  size_t cuts[] = {0, 8, 63, 64, 65, 200}, i;
  uint64_t weights_at = 0;
  int k;
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  for (k = 0; k < B * K; ++k)
    x_data[k] = (float)((k * 37) % 11) / 5.0f - 1.0f;
  for (k = 0; k < K * N; ++k)
    w_data[k] = (float)((k * 53) % 13) / 6.0f - 1.0f;
  for (k = 0; k < N; ++k)
    b_data[k] = 0.25f * (float)k - 0.5f;
  reference(want);

  CHECK(compile_mode(&comp, &exe, y_compile) == ODLA_SUCCESS, "compile mode failed");
  for (k = 0; k < B * N; ++k)
    CHECK(fabsf(y_compile[k] - want[k]) <= 1e-5f * (1 + fabsf(want[k])),
          "compile mode y[%d] = %.9g, plain C says %.9g", k, y_compile[k], want[k]);

  interpret_mode(y_interp);
  CHECK(memcmp(y_interp, y_compile, sizeof y_compile) == 0, "interpret mode differs");

  /* Load mode from a file. */
  snprintf(path, sizeof path, "%s/model.odlx", argv[1]);
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  loc.size = 0;
  CHECK(odla_StoreExecutable(loc, exe) == ODLA_SUCCESS, "StoreExecutable to %s", path);
  CHECK(load_and_run(loc, y_load) == ODLA_SUCCESS, "load mode from a file failed");
  CHECK(memcmp(y_load, y_compile, sizeof y_compile) == 0, "load mode (file) differs");

  /* Load mode from memory, aligned and not: the same outputs. */
  CHECK(odla_ExtGetStoredExecutableBytes(exe, &bytes) == ODLA_SUCCESS && bytes > 64,
        "ExtGetStoredExecutableBytes");
  image = (unsigned char *)malloc(bytes + 65);
  bad = (unsigned char *)malloc(bytes + 65);
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = image + 1;
  loc.size = bytes - 1;
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  CHECK(odla_StoreExecutable(loc, exe) == ODLA_MEM_ERROR, "a too-small buffer must be refused");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  loc.size = bytes;
  CHECK(odla_StoreExecutable(loc, exe) == ODLA_SUCCESS, "StoreExecutable to memory");
  CHECK(load_and_run(loc, y_mem) == ODLA_SUCCESS, "load mode from memory failed");
  CHECK(memcmp(y_mem, y_compile, sizeof y_compile) == 0, "load mode (memory) differs");

  /* Refusals: never a crash. */
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  loc.location_type = ODLA_LOCATION_PATH;
  snprintf(bad_path, sizeof bad_path, "%s/missing.odlx", argv[1]);
  loc.location = bad_path;
  CHECK(load_and_run(loc, y_mem) == ODLA_FILE_NOT_EXIST, "a missing file");
  snprintf(bad_path, sizeof bad_path, "%s/bad.odlx", argv[1]);
  for (i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    CHECK(write_file(bad_path, image + 1, cuts[i]), "write %s", bad_path);
    CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "a file cut to %lu bytes",
          (unsigned long)cuts[i]);
  }
  CHECK(write_file(bad_path, image + 1, bytes - 1), "write");
  CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "a file cut by one byte");
  memcpy(bad, image + 1, bytes);
  bad[bytes] = 0;
  CHECK(write_file(bad_path, bad, bytes + 1), "write");
  CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "a file one byte too long");
  for (i = 0; i < bytes; ++i)
    bad[i] = (unsigned char)(i * 131 + 7);
  CHECK(write_file(bad_path, bad, bytes), "write");
  CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "a foreign file");
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.size = bytes;
  for (i = 8; i < 16; ++i) { /* version, then byte-order mark */
    memcpy(bad, image + 1, bytes);
    bad[i] ^= 0x5a;
    loc.location = bad;
    CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "header byte %lu changed",
          (unsigned long)i);
  }
  memcpy(&weights_at, image + 1 + 48, sizeof weights_at);
  CHECK(weights_at > 64 && weights_at < bytes, "weights offset %lu", (unsigned long)weights_at);
  for (i = 64; i < weights_at; i += 7) { /* any change of the structure fails the checksum */
    memcpy(bad, image + 1, bytes);
    bad[i] ^= 0x01;
    CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "body byte %lu changed",
          (unsigned long)i);
  }
  loc.location = image + 1;
  loc.size = bytes - 10;
  CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "a short memory image");
  loc.location_type = ODLA_LOCATION_URI;
  CHECK(load_and_run(loc, y_mem) == ODLA_INVALID_PARAM, "URI locations are not supported");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);

  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  free(image);
  free(bad);
  if (failures == 0)
    printf("exec modes: compile, interpret and load agree on %d outputs\n", B * N);
  return failures ? 1 : 0;
}
