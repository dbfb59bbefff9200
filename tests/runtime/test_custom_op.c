/* test_custom_op.c: custom ops (odla_CustomOp with kernels registered through
 * odla_ExtRegisterCustomOp, odla_ext_custom.h) through the ODLA headers alone.
 *
 * The op "AffineTile" computes, for x [R, C] float32 and the attributes alpha (FLOAT), bias
 * (FLOATS, C values), act (STRING "relu" or "none") and repeat (INT):
 *   y [R, C * repeat] float32: y[r, k * C + c] = act(alpha * x[r, c] + bias[c])
 *   n [R] int64: how many y[r, c] (c < C) are > 0.
 * Its shape function derives both shapes from x's and `repeat`; the expected numbers are
 * computed here with plain loops. Compile, interpret and load modes must give them; a stored
 * executable is loaded in a fresh process (this program run with --load), which must be
 * refused until the op is registered there. Unknown names, a bad attribute block, a declared
 * result type the shape function contradicts and a failing shape function are refused at
 * build time with a logged reason.
 * Interpret and load mode are checked where the backend's manifest claims them (the build
 * defines TEST_INTERPRET_MODE and TEST_LOAD_MODE to 0 otherwise).
 * Usage: test_custom_op SCRATCH_DIR   (or: test_custom_op --load FILE, the child) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#ifndef TEST_INTERPRET_MODE
#define TEST_INTERPRET_MODE 1
#endif
#ifndef TEST_LOAD_MODE
#define TEST_LOAD_MODE 1
#endif

enum { R = 3, C = 4, REPEAT = 2 };

static const float x_data[R * C] = {1, -2, 3, -4, 0.5f, 0.25f, -0.5f, 8, -1, -1, 2, 2};
static const float alpha = 1.5f;
static const float bias[C] = {0.5f, -1, 0.25f, 2};

static int kernel_calls; /* the registration's user_data points here */

/* ---- The application's op ------------------------------------------------------------- */

static const odla_ext_custom_attr *find_attr(const odla_ext_custom_call *call, const char *name,
                                             odla_int32 kind) {
  int i;
  for (i = 0; i < call->num_attrs; ++i)
    if (strcmp(call->attrs[i].name, name) == 0 && call->attrs[i].kind == kind)
      return &call->attrs[i];
  return NULL;
}

static odla_status affine_shape(const odla_ext_custom_call *call, odla_value_type *out) {
  const odla_ext_custom_attr *repeat = find_attr(call, "repeat", ODLA_EXT_ATTR_INT);
  const odla_value_type *x = &call->input_types[0];
  if (call->num_inputs != 1 || call->num_outputs != 2 || !repeat ||
      x->element_type != ODLA_FLOAT32 || x->shape.size != 2)
    return ODLA_INVALID_PARAM;
  out[0] = *x;
  out[0].shape.dims[1] = x->shape.dims[1] * *(const odla_int64 *)repeat->data;
  out[1].element_type = ODLA_INT64;
  out[1].shape.size = 1;
  out[1].shape.dims[0] = x->shape.dims[0];
  return ODLA_SUCCESS;
}

static odla_status affine_kernel(const odla_ext_custom_call *call, const odla_void *const *in,
                                 odla_void *const *out) {
  const odla_ext_custom_attr *a = find_attr(call, "alpha", ODLA_EXT_ATTR_FLOAT);
  const odla_ext_custom_attr *b = find_attr(call, "bias", ODLA_EXT_ATTR_FLOATS);
  const odla_ext_custom_attr *act = find_attr(call, "act", ODLA_EXT_ATTR_STRING);
  const odla_ext_custom_attr *rep = find_attr(call, "repeat", ODLA_EXT_ATTR_INT);
  int64_t rows = call->input_types[0].shape.dims[0], cols = call->input_types[0].shape.dims[1];
  int64_t r, c, k, width = call->output_types[0].shape.dims[1];
  const float *x = (const float *)in[0];
  float *y = (float *)out[0];
  odla_int64 *n = (odla_int64 *)out[1];
  int relu;
  if (!a || !b || !act || !rep || b->count != cols)
    return ODLA_INVALID_PARAM;
  relu = strcmp((const char *)act->data, "relu") == 0;
  ++*(int *)call->user_data;
  for (r = 0; r < rows; ++r) {
    n[r] = 0;
    for (c = 0; c < cols; ++c) {
      float v = *(const float *)a->data * x[r * cols + c] + ((const float *)b->data)[c];
      if (relu && v < 0)
        v = 0;
      n[r] += v > 0;
      for (k = 0; k < *(const odla_int64 *)rep->data; ++k)
        y[r * width + k * cols + c] = v;
    }
  }
  return ODLA_SUCCESS;
}

static odla_status failing_shape(const odla_ext_custom_call *call, odla_value_type *out) {
  (void)call;
  (void)out;
  return ODLA_UNSUPPORTED_DATATYPE;
}

static odla_status register_ops(void) {
  odla_status s =
      odla_ExtRegisterCustomOp("AffineTile", affine_kernel, affine_shape, &kernel_calls);
  if (s != ODLA_SUCCESS)
    return s;
  return odla_ExtRegisterCustomOp("FailingShape", affine_kernel, failing_shape, NULL);
}

/* ---- Expected numbers ------------------------------------------------------------------ */

static void expected(float *y, odla_int64 *n) {
  int r, c, k;
  for (r = 0; r < R; ++r) {
    n[r] = 0;
    for (c = 0; c < C; ++c) {
      float v = alpha * x_data[r * C + c] + bias[c];
      v = v < 0 ? 0 : v;
      n[r] += v > 0;
      for (k = 0; k < REPEAT; ++k)
        y[r * C * REPEAT + k * C + c] = -v; /* the graph negates y */
    }
  }
}

/* ---- Building ---------------------------------------------------------------------------- */

static odla_value_type ftype(int rank, int64_t d0, int64_t d1) {
  odla_value_type t;
  memset(&t, 0, sizeof t);
  t.element_type = ODLA_FLOAT32;
  t.shape.size = rank;
  t.shape.dims[0] = d0;
  t.shape.dims[1] = d1;
  return t;
}

static const odla_int64 repeat_value = REPEAT;
static const odla_ext_custom_attr attrs[] = {
    {"alpha", ODLA_EXT_ATTR_FLOAT, 1, &alpha},
    {"bias", ODLA_EXT_ATTR_FLOATS, C, bias},
    {"act", ODLA_EXT_ATTR_STRING, 4, "relu"},
    {"repeat", ODLA_EXT_ATTR_INT, 1, &repeat_value},
};

/* The custom op on x, then Neg of its first result (a core op reading a custom result).
 * `declared`, when given, are the result types the caller expects. */
static int build(odla_value x, const char *op_name, const odla_value_type *declared,
                 odla_value *neg, odla_value *count) {
  odla_ext_custom_params params;
  odla_values ins, outs;
  odla_value_ids ids;
  memset(&ins, 0, sizeof ins);
  memset(&ids, 0, sizeof ids);
  params.version = ODLA_EXT_CUSTOM_VERSION;
  params.num_attrs = (odla_int32)(sizeof attrs / sizeof attrs[0]);
  params.attrs = attrs;
  params.result_types = declared;
  ins.size = 1;
  ins.values[0] = x;
  ids.size = 2;
  ids.value_ids[0] = (odla_value_id) "y";
  ids.value_ids[1] = (odla_value_id) "n";
  outs = odla_CustomOp(ins, op_name, "com.example", ids, &params);
  if (outs.size != 2 || !outs.values[0] || !outs.values[1])
    return 0;
  *neg = odla_Neg(outs.values[0], (const odla_value_id) "neg");
  *count = outs.values[1];
  return *neg != NULL;
}

static int check_numbers(const char *mode, const float *y, const odla_int64 *n) {
  float ey[R * C * REPEAT];
  odla_int64 en[R];
  int i, bad = 0;
  expected(ey, en);
  for (i = 0; i < R * C * REPEAT; ++i)
    if (y[i] != ey[i]) {
      CHECK(0, "%s: y[%d] = %g, expected %g", mode, i, (double)y[i], (double)ey[i]);
      bad = 1;
      break;
    }
  for (i = 0; i < R; ++i)
    if (n[i] != en[i]) {
      CHECK(0, "%s: n[%d] = %lld, expected %lld", mode, i, (long long)n[i], (long long)en[i]);
      bad = 1;
      break;
    }
  return !bad;
}

static odla_status run_executable(odla_executable exe, float *y, odla_int64 *n) {
  odla_context ctx;
  odla_status s;
  if (odla_CreateContext(&ctx) != ODLA_SUCCESS)
    return ODLA_FAILURE;
  odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx);
  odla_BindToOutputById((const odla_value_id) "neg", y, ctx);
  odla_BindToOutputById((const odla_value_id) "n", n, ctx);
  s = odla_LaunchExecutable(exe, ctx);
  odla_DestroyContext(ctx);
  return s;
}

/* ---- Logged messages ----------------------------------------------------------------------- */

static char last_log[1024];
static void capture(const char *file, int line, const char *func, odla_log_level level,
                    const char *msg) {
  (void)file;
  (void)line;
  (void)level;
  snprintf(last_log, sizeof last_log, "%s: %s", func, msg);
}

/* Builds x -> op_name with an attribute block and returns what compiling reports; the logged
 * reason lands in last_log. */
static odla_status build_failure(const char *op_name, const odla_ext_custom_params *params) {
  odla_computation comp;
  odla_executable exe = NULL;
  odla_values ins, outs;
  odla_value_ids ids;
  odla_status s;
  memset(&ins, 0, sizeof ins);
  memset(&ids, 0, sizeof ids);
  last_log[0] = '\0';
  odla_CreateComputation(&comp);
  ins.size = 1;
  ins.values[0] = odla_CreateArgument(ftype(2, R, C), (const odla_value_id) "x");
  ids.size = 2;
  ids.value_ids[0] = (odla_value_id) "y";
  ids.value_ids[1] = (odla_value_id) "n";
  outs = odla_CustomOp(ins, op_name, "com.example", ids, params);
  CHECK(outs.size == 0 && outs.values[0] == NULL, "%s: a refused custom op gives no values",
        op_name);
  s = odla_CompileComputation(comp, NULL, &exe);
  odla_DestroyComputation(comp);
  return s;
}

/* ---- The child: load a stored executable in a fresh process ------------------------------- */

static int child_load(const char *path) {
  odla_resource_location loc;
  odla_executable exe = NULL;
  float y[R * C * REPEAT];
  odla_int64 n[R];
  odla_status s;
  odla_SetLogger(capture);
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  loc.size = 0;
  s = odla_LoadExecutable(loc, NULL, &exe);
  CHECK(s == ODLA_UNSUPPORTED_OP && exe == NULL,
        "loading before registering must give ODLA_UNSUPPORTED_OP, got %d", (int)s);
  CHECK(strstr(last_log, "'AffineTile' is not registered") != NULL,
        "the refusal names the op: '%s'", last_log);
  CHECK(register_ops() == ODLA_SUCCESS, "registering in the child");
  s = odla_LoadExecutable(loc, NULL, &exe);
  CHECK(s == ODLA_SUCCESS, "loading after registering: status %d (%s)", (int)s, last_log);
  if (s == ODLA_SUCCESS) {
    CHECK(run_executable(exe, y, n) == ODLA_SUCCESS, "running the loaded executable");
    check_numbers("load (fresh process)", y, n);
    CHECK(kernel_calls == 1, "the child's kernel ran %d times, expected 1", kernel_calls);
    odla_DestroyExecutable(exe);
  }
  return failures != 0;
}

/* ---- Vendor items (odla_ext.h): unknown to this backend, refused without harm -------------- */

static void vendor_items(odla_computation comp, odla_context ctx) {
  odla_int32 value = 7;
  odla_item_type first = (odla_item_type)ODLA_EXT_VENDOR_ITEM_FIRST;
  odla_item_type last = (odla_item_type)ODLA_EXT_VENDOR_ITEM_LAST;
  CHECK(odla_SetContextItem(ctx, first, (odla_item_value)&value) == ODLA_UNSUPPORTED_DATATYPE,
        "a vendor context item gives ODLA_UNSUPPORTED_DATATYPE");
  CHECK(odla_SetContextItem(ctx, last, (odla_item_value)&value) == ODLA_UNSUPPORTED_DATATYPE,
        "the last vendor context item gives ODLA_UNSUPPORTED_DATATYPE");
  CHECK(odla_SetComputationItem(comp, first, (odla_item_value)&value) == ODLA_UNSUPPORTED_DATATYPE,
        "a vendor computation item gives ODLA_UNSUPPORTED_DATATYPE");
  CHECK(value == 7, "the item's value is left alone");
}

int main(int argc, char **argv) {
  odla_computation comp;
  odla_executable exe = NULL;
  odla_context ctx;
  odla_value neg = NULL, count = NULL, x;
  float y[R * C * REPEAT];
  odla_int64 n[R];
  char path[1024], cmd[2300];
  odla_resource_location loc;
  odla_value_type declared[2];
  odla_ext_custom_params bad;
  int rc;

  if (argc == 3 && strcmp(argv[1], "--load") == 0)
    return child_load(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  odla_SetLogger(capture);

  /* Registration. */
  CHECK(register_ops() == ODLA_SUCCESS, "registering");
  CHECK(register_ops() == ODLA_SUCCESS, "registering the same ops again changes nothing");
  CHECK(odla_ExtRegisterCustomOp("AffineTile", affine_kernel, failing_shape, &kernel_calls) ==
            ODLA_INVALID_PARAM,
        "another shape function under a taken name is refused");
  CHECK(odla_ExtRegisterCustomOp(NULL, affine_kernel, affine_shape, NULL) == ODLA_INVALID_PARAM,
        "a NULL name is refused");
  CHECK(odla_ExtRegisterCustomOp("NoKernel", NULL, affine_shape, NULL) == ODLA_INVALID_PARAM,
        "a NULL kernel is refused");

  /* Compile mode, with the declared result types the shape function must agree with. */
  declared[0] = ftype(2, R, C * REPEAT);
  memset(&declared[1], 0, sizeof declared[1]);
  declared[1].element_type = ODLA_INT64;
  declared[1].shape.size = 1;
  declared[1].shape.dims[0] = R;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  CHECK(build(odla_CreateArgument(ftype(2, R, C), (const odla_value_id) "x"), "AffineTile",
              declared, &neg, &count),
        "building: %s", last_log);
  odla_SetValueAsOutput(neg);
  odla_SetValueAsOutput(count);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "compiling: %s", last_log);
  memset(y, 0, sizeof y);
  CHECK(run_executable(exe, y, n) == ODLA_SUCCESS, "compile mode: %s", last_log);
  check_numbers("compile", y, n);
  CHECK(kernel_calls == 1, "the kernel ran %d times, expected 1", kernel_calls);
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  vendor_items(comp, ctx);
  odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx);
  odla_BindToOutputById((const odla_value_id) "neg", y, ctx);
  odla_BindToOutputById((const odla_value_id) "n", n, ctx);
  memset(y, 0, sizeof y);
  CHECK(odla_LaunchExecutable(exe, ctx) == ODLA_SUCCESS, "running after the vendor items");
  check_numbers("compile, after vendor items", y, n);
  odla_DestroyContext(ctx);

#if TEST_LOAD_MODE
  /* Load mode: stored, then loaded in this process and in a fresh one. */
  snprintf(path, sizeof path, "%s/custom.odlaexe", argv[1]);
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  loc.size = 0;
  CHECK(odla_StoreExecutable(loc, exe) == ODLA_SUCCESS, "StoreExecutable: %s", last_log);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  exe = NULL;
  CHECK(odla_LoadExecutable(loc, NULL, &exe) == ODLA_SUCCESS, "LoadExecutable: %s", last_log);
  if (exe) {
    memset(y, 0, sizeof y);
    CHECK(run_executable(exe, y, n) == ODLA_SUCCESS, "load mode: %s", last_log);
    check_numbers("load", y, n);
    odla_DestroyExecutable(exe);
  }
  snprintf(cmd, sizeof cmd, "'%s' --load '%s'", argv[0], path);
  rc = system(cmd);
  CHECK(rc == 0, "the fresh process loading %s failed (%d)", path, rc);
#else
  (void)loc;
  (void)path;
  (void)cmd;
  (void)rc;
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
#endif

#if TEST_INTERPRET_MODE
  /* Interpret mode. */
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation (interpret)");
  x = odla_CreateValue(ftype(2, R, C), (const odla_value_id) "x");
  CHECK(odla_SetValueData(x, x_data) == ODLA_SUCCESS, "SetValueData");
  CHECK(build(x, "AffineTile", NULL, &neg, &count), "building (interpret): %s", last_log);
  memset(y, 0, sizeof y);
  CHECK(odla_GetValueData(neg, y, NULL) == ODLA_SUCCESS, "GetValueData y: %s", last_log);
  CHECK(odla_GetValueData(count, n, NULL) == ODLA_SUCCESS, "GetValueData n: %s", last_log);
  check_numbers("interpret", y, n);
  odla_DestroyComputation(comp);
#else
  (void)x;
#endif

  /* Refusals at build time, each with a logged reason. */
  CHECK(build_failure("NoSuchOp", NULL) == ODLA_UNSUPPORTED_OP, "an unknown op is refused");
  CHECK(strstr(last_log, "'NoSuchOp'") && strstr(last_log, "not registered"),
        "the message names the unknown op: '%s'", last_log);
  declared[0].shape.dims[1] = C; /* the shape function says C * REPEAT */
  bad.version = ODLA_EXT_CUSTOM_VERSION;
  bad.num_attrs = (odla_int32)(sizeof attrs / sizeof attrs[0]);
  bad.attrs = attrs;
  bad.result_types = declared;
  CHECK(build_failure("AffineTile", &bad) == ODLA_INVALID_PARAM,
        "a declared result type the shape function contradicts is refused");
  CHECK(strstr(last_log, "[3,8]") && strstr(last_log, "[3,4]"),
        "the message gives both shapes: '%s'", last_log);
  bad.result_types = NULL;
  bad.version = 99;
  CHECK(build_failure("AffineTile", &bad) == ODLA_INVALID_PARAM, "a bad version is refused");
  CHECK(strstr(last_log, "version 99") != NULL, "the message gives the version: '%s'", last_log);
  bad.version = ODLA_EXT_CUSTOM_VERSION;
  bad.num_attrs = 1; /* "alpha" only: the shape function finds no "repeat" */
  CHECK(build_failure("AffineTile", &bad) == ODLA_INVALID_PARAM,
        "a shape function's refusal fails the build with its status");
  CHECK(build_failure("FailingShape", NULL) == ODLA_UNSUPPORTED_DATATYPE,
        "a failing shape function's status is the build's");
  CHECK(strstr(last_log, "shape function of 'FailingShape'") != NULL,
        "the message names the op: '%s'", last_log);
  /* Two compile-mode runs, the in-process load's run and the interpreted one. */
  CHECK(kernel_calls == 2 + TEST_LOAD_MODE + TEST_INTERPRET_MODE,
        "the kernel ran %d times in this process, expected %d", kernel_calls,
        2 + TEST_LOAD_MODE + TEST_INTERPRET_MODE);

  if (failures == 0)
    printf("custom ops: compile%s%s mode and refusals OK\n",
           TEST_INTERPRET_MODE ? ", interpret" : "",
           TEST_LOAD_MODE ? ", load (in process and fresh)" : "");
  return failures != 0;
}
