/* test_api_runtime.c: the ODLA 0.5 runtime functions beyond the execution modes, through the
 * ODLA headers only: stored computations (odla_StoreComputation / odla_LoadComputation, and
 * the refusal of truncated, corrupt, foreign, missing and mismatched files), constants arrays
 * (create, store, load, and odla_AsyncLaunchExecutable running one executable with another
 * computation's weights), values bound to a context (odla_BindValueTo*ById), odla_Dump's
 * text, the computation item ODLA_EXT_ITEM_STATIC_IDS (ids kept by pointer, not copied), the
 * computation item ODLA_EXT_ITEM_COMPILE_SCRATCH (compiling's temporaries in the caller's memory),
 * and computations built one after another at other sizes (as odlac --dim's run_shaped builds them)
 * running in the arena the last context left (memory.c's spare arena, grown and shrunk), and a
 * Concat and a Gather of megabytes (a decoder's key/value cache) copied by 1 and 3 threads, and
 * a decoder step's attention (one query row per head, a causal-style mask) at 1 and 3 threads
 * against a double-precision loop, a product of one row (B read in place, split over the
 * threads) at 1 and 3 threads against each other and a double-precision loop, and results that
 * are views of an argument (no copy, no arena).
 * Outputs are checked against plain C loops written here.
 * Usage: test_api_runtime SCRATCH_DIR */
#define _POSIX_C_SOURCE 200809L
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define ID(s) ((const odla_value_id)(s))
enum { B = 2, K = 3, N = 2 };

static const char *scratch;

static odla_value_type vt(odla_element_type t, int64_t d0, int64_t d1) {
  odla_value_type v;
  memset(&v, 0, sizeof v);
  v.element_type = t;
  v.shape.size = d1 ? 2 : 1;
  v.shape.dims[0] = d0;
  v.shape.dims[1] = d1;
  return v;
}

static const float x_data[B * K] = {1, -2, 0.5f, 3, 0.25f, -1};
static const int32_t xi_data[N] = {10, -20};

typedef struct {
  float w[K * N], b[N];
  int32_t k[N];
} weights;

static const weights wa = {{0.5f, -1, 2, 0.25f, -0.75f, 1.5f}, {0.1f, -0.2f}, {3, 4}};
static const weights wc = {{-1, 2, 0.5f, 0.5f, 1, -2}, {1, 2}, {3, 4}}; /* other floats */
static const weights wk = {{0.5f, -1, 2, 0.25f, -0.75f, 1.5f}, {0.1f, -0.2f}, {3, 5}}; /* k */

/* y = x W + b (Gemm, then Add) and yi = xi + k, over the constants "w", "b", "k". */
static odla_computation build(const weights *c, int wrong_w_shape) {
  odla_computation comp;
  odla_value x, xi, w, h, y, yi;
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, B, K), ID("x"));
  xi = odla_CreateArgument(vt(ODLA_INT32, N, 0), ID("xi"));
  w = odla_CreateConstant(wrong_w_shape ? vt(ODLA_FLOAT32, N, K) : vt(ODLA_FLOAT32, K, N), c->w,
                          ID("w"));
  h = odla_Gemm(x, 0, w, wrong_w_shape, 1, 0, NULL, vt(ODLA_FLOAT32, B, N).shape, ID("h"));
  y = odla_Add(h, odla_CreateConstant(vt(ODLA_FLOAT32, N, 0), c->b, ID("b")), ID("y"));
  yi = odla_Add(xi, odla_CreateConstant(vt(ODLA_INT32, N, 0), c->k, ID("k")), ID("yi"));
  odla_SetValueAsOutput(y);
  odla_SetValueAsOutput(yi);
  return comp;
}

static void expected(const weights *c, float *y, int32_t *yi) {
  int i, j, k;
  for (i = 0; i < B; ++i)
    for (j = 0; j < N; ++j) {
      float s = 0;
      for (k = 0; k < K; ++k)
        s += x_data[i * K + k] * c->w[k * N + j];
      y[i * N + j] = s + c->b[j];
    }
  for (j = 0; j < N; ++j)
    yi[j] = xi_data[j] + c->k[j];
}

static void check_outputs(const char *what, const weights *c, const float *y, const int32_t *yi) {
  float wy[B * N];
  int32_t wyi[N];
  int i;
  expected(c, wy, wyi);
  for (i = 0; i < B * N; ++i)
    CHECK(fabsf(y[i] - wy[i]) <= 1e-6f * (1 + fabsf(wy[i])), "%s: y[%d] = %g, want %g", what, i,
          y[i], wy[i]);
  for (i = 0; i < N; ++i)
    CHECK(yi[i] == wyi[i], "%s: yi[%d] = %d, want %d", what, i, yi[i], wyi[i]);
}

static odla_context bound_context(float *y, int32_t *yi) {
  odla_context ctx;
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), x_data, ctx);
  odla_BindToArgumentById(ID("xi"), xi_data, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  odla_BindToOutputById(ID("yi"), yi, ctx);
  return ctx;
}

static void execute_and_check(const char *what, odla_computation comp, const weights *c) {
  float y[B * N];
  int32_t yi[N];
  odla_context ctx = bound_context(y, yi);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "%s: execute", what);
  check_outputs(what, c, y, yi);
  odla_DestroyContext(ctx);
}

static odla_resource_location path_location(const char *path) {
  odla_resource_location l;
  l.location_type = ODLA_LOCATION_PATH;
  l.location = path;
  l.size = 0;
  return l;
}

static long read_file(const char *path, unsigned char **data) {
  FILE *f = fopen(path, "rb");
  long n;
  if (!f)
    return -1;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *data = (unsigned char *)malloc((size_t)n + 1);
  if (fread(*data, 1, (size_t)n, f) != (size_t)n)
    n = -1;
  fclose(f);
  return n;
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(data, 1, n, f);
  fclose(f);
}

/* ---- Stored computations -------------------------------------------------------------- */

static void test_stored_computation(void) {
  char path[512], bad[512], exe_path[512];
  unsigned char *image, *copy;
  long n;
  odla_computation comp = build(&wa, 0), loaded;
  odla_executable exe;
  odla_resource_location mem;
  odla_uint32 num;
  unsigned char small[16];
  sprintf(path, "%s/net.odlc", scratch);
  sprintf(bad, "%s/bad.odlc", scratch);
  sprintf(exe_path, "%s/net.odlx", scratch);
  CHECK(odla_StoreComputation(path_location(path), comp) == ODLA_SUCCESS, "StoreComputation");
  CHECK(odla_LoadComputation(path_location(path), &loaded) == ODLA_SUCCESS, "LoadComputation");
  CHECK(odla_GetNumOfArgsFromComputation(loaded, &num) == ODLA_SUCCESS && num == 2, "args: %u",
        num);
  CHECK(odla_GetNumOfOutputsFromComputation(loaded, &num) == ODLA_SUCCESS && num == 2,
        "outputs: %u", num);
  execute_and_check("loaded computation", loaded, &wa);
  odla_DestroyComputation(loaded);

  /* After compiling, the graph is stored the same way (its plan is made again on load). */
  execute_and_check("original", comp, &wa);
  CHECK(odla_StoreComputation(path_location(path), comp) == ODLA_SUCCESS, "StoreComputation 2");
  n = read_file(path, &image);
  CHECK(n > 64, "stored computation size %ld", n);
  /* From memory, also at an address that is not 64-byte aligned. */
  copy = (unsigned char *)malloc((size_t)n + 1);
  memcpy(copy + 1, image, (size_t)n);
  mem.location_type = ODLA_LOCATION_MEMORY;
  mem.location = copy + 1;
  mem.size = (odla_size_t)n;
  CHECK(odla_LoadComputation(mem, &loaded) == ODLA_SUCCESS, "LoadComputation from memory");
  execute_and_check("computation loaded from memory", loaded, &wa);
  odla_DestroyComputation(loaded);
  mem.location = small;
  mem.size = sizeof small;
  CHECK(odla_StoreComputation(mem, comp) == ODLA_MEM_ERROR, "StoreComputation to 16 bytes");

  /* Refused: missing, truncated, foreign, corrupt, an executable, and the other way round. */
  CHECK(odla_LoadComputation(path_location("/nonexistent/net.odlc"), &loaded) ==
            ODLA_FILE_NOT_EXIST,
        "missing file");
  write_file(bad, image, (size_t)n / 2);
  CHECK(odla_LoadComputation(path_location(bad), &loaded) == ODLA_INVALID_PARAM && !loaded,
        "truncated file");
  memset(copy, 0, (size_t)n);
  write_file(bad, copy, (size_t)n);
  CHECK(odla_LoadComputation(path_location(bad), &loaded) == ODLA_INVALID_PARAM, "foreign file");
  memcpy(copy, image, (size_t)n);
  copy[80] ^= 0x40;
  write_file(bad, copy, (size_t)n);
  CHECK(odla_LoadComputation(path_location(bad), &loaded) == ODLA_INVALID_PARAM, "corrupt file");
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "compile");
  CHECK(odla_StoreExecutable(path_location(exe_path), exe) == ODLA_SUCCESS, "StoreExecutable");
  odla_DestroyExecutable(exe);
  CHECK(odla_LoadComputation(path_location(exe_path), &loaded) == ODLA_INVALID_PARAM,
        "an executable given to LoadComputation");
  CHECK(odla_LoadExecutable(path_location(path), NULL, &exe) == ODLA_INVALID_PARAM,
        "a computation given to LoadExecutable");
  odla_DestroyComputation(comp);
  free(image);
  free(copy);

  /* An interpret-mode computation has no graph left to store. */
  odla_CreateComputation(&comp);
  odla_CreateValue(vt(ODLA_FLOAT32, 2, 0), ID("v"));
  CHECK(odla_StoreComputation(path_location(bad), comp) == ODLA_INVALID_PARAM,
        "StoreComputation in interpret mode");
  odla_DestroyComputation(comp);
}

/* ---- Constants arrays ------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done;
static odla_status done_status;

static int on_done(void *arg, odla_status status) {
  (void)arg;
  pthread_mutex_lock(&lock);
  done = 1;
  done_status = status;
  pthread_cond_signal(&done_cond);
  pthread_mutex_unlock(&lock);
  return 0;
}

static odla_status launch(odla_executable exe, odla_constants_array array, const weights *want,
                          const char *what) {
  float y[B * N];
  int32_t yi[N];
  odla_context ctx = bound_context(y, yi);
  odla_status s;
  odla_SetContextItem(ctx, ODLA_ASYNC_CALLBACK_FUNC, (odla_item_value)(uintptr_t)on_done);
  done = 0;
  s = odla_AsyncLaunchExecutable(exe, array, ctx, ODLA_COMPUTE_INFERENCE, NULL);
  if (s == ODLA_SUCCESS) {
    pthread_mutex_lock(&lock);
    while (!done)
      pthread_cond_wait(&done_cond, &lock);
    pthread_mutex_unlock(&lock);
    CHECK(done_status == ODLA_SUCCESS, "%s: status %d", what, (int)done_status);
    check_outputs(what, want, y, yi);
  }
  odla_DestroyContext(ctx);
  return s;
}

static odla_constants_array array_of(const weights *c, int wrong_w_shape) {
  odla_computation comp = build(c, wrong_w_shape);
  odla_constants_array array = NULL;
  CHECK(odla_CreateConstantsArray(&array) == ODLA_SUCCESS, "CreateConstantsArray");
  odla_DestroyComputation(comp); /* the array holds copies */
  return array;
}

static void test_constants_arrays(void) {
  char path[512], bad[512];
  odla_computation comp = build(&wa, 0);
  odla_executable exe;
  odla_constants_array array, loaded;
  unsigned char *image;
  long n;
  sprintf(path, "%s/weights.odlk", scratch);
  sprintf(bad, "%s/bad.odlk", scratch);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "compile");
  array = array_of(&wc, 0);
  CHECK(odla_StoreConstantsArray(path, array) == ODLA_SUCCESS, "StoreConstantsArray");
  odla_DestroyConstantsArray(array);
  CHECK(odla_LoadConstantsArray(path, &loaded) == ODLA_SUCCESS, "LoadConstantsArray");
  CHECK(launch(exe, loaded, &wc, "launch with the other weights") == ODLA_SUCCESS, "launch");
  CHECK(launch(exe, NULL, &wa, "launch with its own weights") == ODLA_SUCCESS, "launch 2");
  odla_DestroyConstantsArray(loaded);

  /* Refused at launch: an integer constant that differs, a float one of another shape. */
  array = array_of(&wk, 0);
  CHECK(launch(exe, array, &wk, "") == ODLA_INVALID_PARAM, "changed int constant");
  odla_DestroyConstantsArray(array);
  array = array_of(&wc, 1);
  CHECK(launch(exe, array, &wc, "") == ODLA_INVALID_PARAM, "constant of another shape");
  odla_DestroyConstantsArray(array);

  /* Files: missing, truncated, foreign, corrupt. */
  CHECK(odla_LoadConstantsArray("/nonexistent/w.odlk", &loaded) == ODLA_FILE_NOT_EXIST,
        "missing constants file");
  n = read_file(path, &image);
  write_file(bad, image, (size_t)n - 1);
  CHECK(odla_LoadConstantsArray(bad, &loaded) == ODLA_INVALID_PARAM && !loaded, "truncated");
  image[70] ^= 1;
  write_file(bad, image, (size_t)n);
  CHECK(odla_LoadConstantsArray(bad, &loaded) == ODLA_INVALID_PARAM, "corrupt constants file");
  memset(image, 'A', (size_t)n);
  write_file(bad, image, (size_t)n);
  CHECK(odla_LoadConstantsArray(bad, &loaded) == ODLA_INVALID_PARAM, "foreign constants file");
  free(image);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
}

/* ---- A Conv's kernel packed when compiled ------------------------------------------------- */

/* Two float32 Convs over the GEMM: a 3x3 one of 2 groups (130 output channels and a depth of
 * 270 a group: two blocks of rows and of depth, 616 pixels: two of columns; split by columns
 * over threads) and a 1x1 one (130 x 300 over 60 pixels: split by rows). Compiled, their kernels
 * are packed once (ref_prepare_node): the outputs equal, bit for bit, those of the same computation
 * run without odla_CompileComputation (packed as each run goes), at 1 and 3 threads, and a double
 * loop's within float rounding; launched with a constants array of other kernels, they are the
 * other kernels' (the packed ones are not read). */
enum { CG = 2, CI = 30, CM = 130, CH = 24, CW = 30, PC = 300, PH = 10, PW = 6 };
#define CONV_OUT (CG * CM * (CH - 2) * (CW - 2))
#define POINT_OUT (CM * PH * PW)

static float *conv_data(size_t n, unsigned seed) {
  float *d = (float *)malloc(n * sizeof *d);
  size_t i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    d[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
  return d;
}

static odla_computation conv_graph(const float *w3, const float *w1) {
  static const odla_uint32 ones[2] = {1, 1}, zeros[2] = {0, 0};
  odla_computation comp;
  odla_value_type xt = {ODLA_FLOAT32, {4, {1, CG * CI, CH, CW}}};
  odla_value_type wt = {ODLA_FLOAT32, {4, {CG * CM, CI, 3, 3}}};
  odla_value_type pt = {ODLA_FLOAT32, {4, {1, PC, PH, PW}}};
  odla_value_type qt = {ODLA_FLOAT32, {4, {CM, PC, 1, 1}}};
  odla_value_shape ys = {4, {1, CG * CM, CH - 2, CW - 2}}, zs = {4, {1, CM, PH, PW}};
  odla_CreateComputation(&comp);
  odla_SetValueAsOutput(odla_Conv(odla_CreateArgument(xt, ID("cx")), ODLA_CHANNELS_FIRST, CG,
                                  odla_CreateConstant(wt, w3, ID("cw")), ODLA_OIS, ones, ones,
                                  zeros, zeros, NULL, ys, ID("cy")));
  odla_SetValueAsOutput(odla_Conv(odla_CreateArgument(pt, ID("px")), ODLA_CHANNELS_FIRST, 1,
                                  odla_CreateConstant(qt, w1, ID("pw")), ODLA_OIS, ones, ones,
                                  zeros, zeros, NULL, zs, ID("py")));
  return comp;
}

/* Runs comp (with exe and array: launched) at `threads`, into y and z. */
static void conv_run(odla_computation comp, odla_executable exe, odla_constants_array array,
                     int threads, const float *x, const float *p, float *y, float *z) {
  odla_context ctx;
  odla_int32 n = threads;
  odla_CreateContext(&ctx);
  odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n);
  odla_BindToArgumentById(ID("cx"), x, ctx);
  odla_BindToArgumentById(ID("px"), p, ctx);
  odla_BindToOutputById(ID("cy"), y, ctx);
  odla_BindToOutputById(ID("py"), z, ctx);
  if (exe) {
    odla_SetContextItem(ctx, ODLA_ASYNC_CALLBACK_FUNC, (odla_item_value)(uintptr_t)on_done);
    done = 0;
    CHECK(odla_AsyncLaunchExecutable(exe, array, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "launch");
    pthread_mutex_lock(&lock);
    while (!done)
      pthread_cond_wait(&done_cond, &lock);
    pthread_mutex_unlock(&lock);
    CHECK(done_status == ODLA_SUCCESS, "launched run: status %d", (int)done_status);
  } else {
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "conv run");
  }
  odla_DestroyContext(ctx);
}

/* The largest |got - double loop| over the largest |double loop| of both Convs. */
static double conv_error(const float *x, const float *w3, const float *p, const float *w1,
                         const float *y, const float *z) {
  double most = 0, top = 0;
  int g, m, c, i, j, a, b;
  for (g = 0; g < CG; ++g)
    for (m = 0; m < CM; ++m)
      for (i = 0; i < CH - 2; ++i)
        for (j = 0; j < CW - 2; ++j) {
          double s = 0;
          for (c = 0; c < CI; ++c)
            for (a = 0; a < 3; ++a)
              for (b = 0; b < 3; ++b)
                s += (double)x[((g * CI + c) * CH + i + a) * CW + j + b] *
                     w3[(((g * CM + m) * CI + c) * 3 + a) * 3 + b];
          top = fabs(s) > top ? fabs(s) : top;
          s = fabs(s - y[((g * CM + m) * (CH - 2) + i) * (CW - 2) + j]);
          most = s > most ? s : most;
        }
  for (m = 0; m < CM; ++m)
    for (i = 0; i < PH * PW; ++i) {
      double s = 0;
      for (c = 0; c < PC; ++c)
        s += (double)p[c * PH * PW + i] * w1[m * PC + c];
      top = fabs(s) > top ? fabs(s) : top;
      s = fabs(s - z[m * PH * PW + i]);
      most = s > most ? s : most;
    }
  return most / top;
}

static void test_conv_packed_kernel(void) {
  static unsigned char region[1 << 21];
  float *x = conv_data((size_t)CG * CI * CH * CW, 1), *w3 = conv_data((size_t)CG * CM * CI * 9, 2);
  float *p = conv_data((size_t)PC * PH * PW, 3), *w1 = conv_data((size_t)CM * PC, 4);
  float *v3 = conv_data((size_t)CG * CM * CI * 9, 5), *v1 = conv_data((size_t)CM * PC, 6);
  float *y[4], *z[4];
  odla_computation comp, plain, other;
  odla_executable exe;
  odla_constants_array array = NULL;
  double err;
  int r;
  for (r = 0; r < 4; ++r) {
    y[r] = (float *)malloc(CONV_OUT * sizeof(float));
    z[r] = (float *)malloc(POINT_OUT * sizeof(float));
  }
  {
    /* compiling packs the kernels: the region that holds the computation gains their bytes */
    odla_size_t before = 0, after = 0, peak = 0;
    CHECK(odla_ExtSetMemory(region, sizeof region) == ODLA_SUCCESS, "region");
    comp = conv_graph(w3, w1);
    odla_ExtGetMemoryUse(region, &before, &peak);
    CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "compile");
    odla_ExtGetMemoryUse(region, &after, &peak);
    CHECK(after - before >= (CG * CM * CI * 9 + CM * PC) * sizeof(float),
          "compiling took %lu bytes, fewer than the kernels'", (unsigned long)(after - before));
    odla_ExtSetMemory(NULL, 0);
  }
  conv_run(comp, NULL, NULL, 1, x, p, y[0], z[0]);
  conv_run(comp, NULL, NULL, 3, x, p, y[1], z[1]);
  plain = conv_graph(w3, w1); /* never compiled: its runs pack the kernels */
  conv_run(plain, NULL, NULL, 1, x, p, y[2], z[2]);
  for (r = 1; r < 3; ++r)
    CHECK(memcmp(y[r], y[0], CONV_OUT * sizeof(float)) == 0 &&
              memcmp(z[r], z[0], POINT_OUT * sizeof(float)) == 0,
          "the packed kernels' outputs differ from %s", r == 1 ? "3 threads'" : "packing's");
  err = conv_error(x, w3, p, w1, y[0], z[0]);
  CHECK(err < 1e-5, "packed kernels: %g from a double loop", err);
  other = conv_graph(v3, v1);
  CHECK(odla_CreateConstantsArray(&array) == ODLA_SUCCESS, "constants array");
  conv_run(comp, exe, array, 3, x, p, y[3], z[3]);
  err = conv_error(x, v3, p, v1, y[3], z[3]);
  CHECK(err < 1e-5, "launched with other kernels: %g from their double loop", err);
  odla_DestroyConstantsArray(array);
  odla_DestroyComputation(other);
  odla_DestroyComputation(plain);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS, "the region is empty again");
  for (r = 0; r < 4; ++r) {
    free(y[r]);
    free(z[r]);
  }
  free(x), free(w3), free(p), free(w1), free(v3), free(v1);
}

/* ---- Static ids ---------------------------------------------------------------------------- */

/* A fused product (odla_ExtGemm), whose inner product the backend names "g/product" in a buffer
 * of the builder's stack; then that stack overwritten. */
static void __attribute__((noinline)) fused_product(void) {
  static const float one[4] = {1, 1, 1, 1};
  odla_value_type t = {ODLA_FLOAT32, {2, {2, 2}}};
  odla_value_shape s = {2, {2, 2}};
  odla_value a = odla_CreateConstant(t, one, (const odla_value_id) "fa");
  CHECK(odla_ExtGemm(a, 0, a, 0, 1, 0, NULL, NULL, (odla_ext_fused_activation)ODLA_EXT_ACT_RELU, 0,
                     0, s, (const odla_value_id) "g") != NULL,
        "odla_ExtGemm");
}
static void __attribute__((noinline)) overwrite_stack(void) {
  volatile char junk[4096];
  size_t i;
  for (i = 0; i < sizeof junk; ++i)
    junk[i] = 'Z';
}

/* With ODLA_EXT_ITEM_STATIC_IDS a value's id is the caller's string itself; without it a copy
 * (the caller may reuse its buffer); the ids the backend makes itself (a fused op's product)
 * live as long as the computation either way. The item is refused once a value exists:
 * earlier ids were copied. */
static void test_static_ids(void) {
  static const float one = 1;
  static const char name[] = "the_constant";
  odla_bool yes = 1;
  char buffer[32];
  int kind;
  for (kind = 0; kind < 2; ++kind) {
    odla_computation comp = NULL;
    odla_value v;
    odla_value_id id = NULL;
    odla_value_type t = {ODLA_FLOAT32, {1, {1}}};
    CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "create");
    if (kind)
      CHECK(odla_SetComputationItem(comp, ODLA_EXT_ITEM_STATIC_IDS, (odla_item_value)&yes) ==
                ODLA_SUCCESS,
            "ODLA_EXT_ITEM_STATIC_IDS");
    strcpy(buffer, name);
    v = odla_CreateConstant(t, &one, (const odla_value_id)(kind ? name : buffer));
    CHECK(v && odla_GetValueId(v, &id) == ODLA_SUCCESS && strcmp((const char *)id, name) == 0,
          "the constant's id");
    if (kind)
      CHECK((const char *)id == name, "with static ids the id is not the caller's string");
    else
      CHECK((const char *)id != buffer, "without static ids the id is not a copy");
    CHECK(odla_SetComputationItem(comp, ODLA_EXT_ITEM_STATIC_IDS, (odla_item_value)&yes) ==
              ODLA_INVALID_PARAM,
          "ODLA_EXT_ITEM_STATIC_IDS accepted after a value");
    fused_product();
    overwrite_stack();
    id = NULL;
    CHECK(odla_FindValueById((const odla_value_id) "g/product", &v) == ODLA_SUCCESS && v &&
              odla_GetValueId(v, &id) == ODLA_SUCCESS && id &&
              strcmp((const char *)id, "g/product") == 0,
          "static ids %d: the fused product's id is lost", kind);
    odla_DestroyComputation(comp);
  }
}

/* ---- The computation item ODLA_EXT_ITEM_COMPILE_SCRATCH ------------------------------------ */

/* A chain of Adds built and compiled in a region (odla_ext_memory.h), with and without the item:
 * with it the planner's lists are the scratch's (the region's peak is lower, and the scratch
 * was written), and after compiling the scratch is the caller's again:
 * repainted, it serves as the context's arena and the outputs are right. */
static void test_compile_scratch(void) {
  enum { LEN = 40, ADDS = 30 };
  static unsigned char region[1 << 16], room[(1 << 14) + 64];
  static char ids[ADDS][16];
  unsigned char *arena_at = room + (64 - (uintptr_t)room % 64) % 64;
  odla_size_t peak[2] = {0, 0};
  float x[LEN], y[LEN];
  int use, i;
  for (i = 0; i < LEN; ++i)
    x[i] = (float)i - 7.5f;
  for (use = 0; use < 2; ++use) {
    odla_computation comp = NULL;
    odla_executable exec = NULL;
    odla_context ctx = NULL;
    odla_ext_arena scratch = {arena_at, 1 << 14}, arena;
    odla_size_t in_use = 0, need = 0, written = 0;
    odla_value a, v;
    CHECK(odla_ExtSetMemory(region, sizeof region) == ODLA_SUCCESS, "region");
    CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "create");
    if (use)
      CHECK(odla_SetComputationItem(comp, ODLA_EXT_ITEM_COMPILE_SCRATCH,
                                    (odla_item_value)&scratch) == ODLA_SUCCESS,
            "ODLA_EXT_ITEM_COMPILE_SCRATCH");
    a = v = odla_CreateArgument(vt(ODLA_FLOAT32, LEN, 0), ID("x"));
    for (i = 0; i < ADDS; ++i) {
      snprintf(ids[i], sizeof ids[i], i + 1 < ADDS ? "sum%d" : "y", i);
      v = odla_Add(v, a, ID(ids[i]));
    }
    CHECK(odla_SetValueAsOutput(v) == ODLA_SUCCESS, "output");
    memset(room, 0xA5, sizeof room);
    CHECK(odla_CompileComputation(comp, NULL, &exec) == ODLA_SUCCESS, "compile");
    CHECK(odla_ExtGetMemoryUse(region, &in_use, &peak[use]) == ODLA_SUCCESS, "memory use");
    for (i = 0; i < (int)sizeof room; ++i)
      written += room[i] != 0xA5;
    CHECK(use ? written > 0 : written == 0, "scratch %d: %lu bytes written", use,
          (unsigned long)written);
    CHECK(odla_ExtGetArenaBytes(comp, &need) == ODLA_SUCCESS && need <= scratch.bytes, "arena");
    memset(room, 0x5A, sizeof room); /* the caller's again */
    arena.base = arena_at;
    arena.bytes = need;
    CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS &&
              odla_SetContextItem(ctx, ODLA_EXT_ITEM_ARENA, (odla_item_value)&arena) ==
                  ODLA_SUCCESS &&
              odla_BindToArgumentById(ID("x"), x, ctx) == ODLA_SUCCESS &&
              odla_BindToOutputById(ID("y"), y, ctx) == ODLA_SUCCESS &&
              odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "run %d", use);
    for (i = 0; i < LEN; ++i)
      CHECK(y[i] == (ADDS + 1) * x[i], "scratch %d: y[%d] = %g, not %g", use, i, (double)y[i],
            (double)((ADDS + 1) * x[i]));
    odla_DestroyContext(ctx);
    odla_DestroyExecutable(exec);
    odla_DestroyComputation(comp);
    odla_ExtSetMemory(NULL, 0);
    CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS, "release");
  }
  /* the lists (some of them fit holes that the growing lists of values and nodes left) */
  CHECK(peak[1] < peak[0], "with the scratch the region's peak is %lu bytes, without it %lu",
        (unsigned long)peak[1], (unsigned long)peak[0]);
}

/* ---- Values bound to a context ----------------------------------------------------------- */

static void test_bind_values(void) {
  odla_computation comp = build(&wa, 0), values;
  odla_context ctx;
  odla_value x, xi, y, yi, small, cst;
  float yd[B * N];
  int32_t yid[N];
  odla_CreateComputation(&values); /* interpret mode: values that hold data */
  x = odla_CreateValue(vt(ODLA_FLOAT32, B, K), ID("xv"));
  odla_SetValueData(x, x_data);
  xi = odla_CreateConstant(vt(ODLA_INT32, N, 0), xi_data, ID("xiv"));
  y = odla_CreateValue(vt(ODLA_FLOAT32, B, N), ID("yv"));
  yi = odla_CreateValue(vt(ODLA_INT32, N, 0), ID("yiv"));
  small = odla_CreateValue(vt(ODLA_FLOAT32, 1, K), ID("small"));
  odla_SetValueData(small, x_data);
  odla_CreateContext(&ctx);
  /* A result of ops not yet run (interpret mode runs them when its data is needed). */
  CHECK(odla_BindValueToArgumentById(ID("x"), odla_Neg(odla_Neg(x, ID("nx")), ID("xr")), ctx) ==
            ODLA_SUCCESS,
        "bind x");
  CHECK(odla_BindValueToArgumentById(ID("xi"), xi, ctx) == ODLA_SUCCESS, "bind a constant");
  CHECK(odla_BindValueToOutputById(ID("y"), y, ctx) == ODLA_SUCCESS, "bind y");
  CHECK(odla_BindValueToOutputById(ID("yi"), yi, ctx) == ODLA_SUCCESS, "bind yi");
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "execute with bound values");
  CHECK(odla_GetValueData(y, yd, NULL) == ODLA_SUCCESS &&
            odla_GetValueData(yi, yid, NULL) == ODLA_SUCCESS,
        "read the output values");
  check_outputs("bound values", &wa, yd, yid);
  /* A value smaller than the argument is refused when executing; a constant cannot be an
   * output; a value with no data cannot be an argument. */
  CHECK(odla_BindValueToArgumentById(ID("x"), small, ctx) == ODLA_SUCCESS, "bind small");
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_INVALID_PARAM,
        "execute with a value too small");
  CHECK(odla_BindValueToOutputById(ID("yi"), xi, ctx) == ODLA_INVALID_PARAM,
        "a constant bound as an output");
  cst = odla_CreateValue(vt(ODLA_FLOAT32, B, K), ID("empty"));
  CHECK(odla_BindValueToArgumentById(ID("x"), cst, ctx) == ODLA_INVALID_PARAM,
        "a value without data bound as an argument");
  odla_DestroyContext(ctx);
  odla_DestroyComputation(values);
  odla_DestroyComputation(comp);
}

/* y = (x + x) * x over n floats: the sum lives in the arena. */
static odla_computation build_sized(int64_t n) {
  odla_computation comp;
  odla_value x;
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vt(ODLA_FLOAT32, n, 0), ID("x"));
  odla_SetValueAsOutput(odla_Mul(odla_Add(x, x, ID("s")), x, ID("y")));
  return comp;
}

static void test_arena_between_computations(void) {
  static const int64_t sizes[] = {1000, 3000, 2000, 1 << 20, 7};
  odla_computation comp = NULL;
  odla_context ctx = NULL;
  float *x = (float *)malloc(sizeof(float) << 20), *y = (float *)malloc(sizeof(float) << 20);
  size_t k;
  int64_t i;
  CHECK(x && y, "malloc");
  for (k = 0; k < sizeof sizes / sizeof *sizes && x && y; ++k) {
    int64_t n = sizes[k], bad = -1;
    odla_computation next = build_sized(n); /* built while the last one is alive */
    odla_context next_ctx;
    odla_size_t arena = 0;
    odla_CreateContext(&next_ctx);
    if (ctx)
      odla_DestroyContext(ctx);
    if (comp)
      odla_DestroyComputation(comp);
    comp = next;
    ctx = next_ctx;
    CHECK(odla_ExtGetArenaBytes(comp, &arena) == ODLA_SUCCESS && arena >= (size_t)n * 4,
          "n %ld: arena %lu bytes", (long)n, (unsigned long)arena);
    for (i = 0; i < n; ++i) {
      x[i] = (float)(i % 97) - 40.0f;
      y[i] = -1.0f;
    }
    odla_BindToArgumentById(ID("x"), x, ctx);
    odla_BindToOutputById(ID("y"), y, ctx);
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "n %ld: execute", (long)n);
    for (i = 0; i < n && bad < 0; ++i)
      if (y[i] != 2.0f * x[i] * x[i])
        bad = i;
    CHECK(bad < 0, "n %ld: y[%ld] = %g, want %g", (long)n, (long)bad, bad < 0 ? 0.0 : y[bad],
          bad < 0 ? 0.0 : 2.0 * x[bad] * x[bad]);
  }
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp); /* the last computation: the spare arena is freed */
  free(x);
  free(y);
}

/* Concat of [R, 300] and [R, 500] floats along axis 1, and Gather of row 2 of a [3, R, 500]:
 * megabytes each, which the reference backend splits over the context's threads. */
static void test_large_copies(void) {
  enum { R = 1024, A = 300, C = 500 };
  float *a = (float *)malloc(sizeof(float) * R * A), *b = (float *)malloc(sizeof(float) * R * C),
        *t = (float *)malloc(sizeof(float) * 3 * R * C),
        *cat = (float *)malloc(sizeof(float) * R * (A + C)),
        *row = (float *)malloc(sizeof(float) * R * C);
  static const int64_t two = 2;
  int threads, bad;
  int64_t i, j;
  CHECK(a && b && t && cat && row, "malloc");
  if (!(a && b && t && cat && row))
    return;
  for (i = 0; i < R * A; ++i)
    a[i] = (float)(i % 1009);
  for (i = 0; i < R * C; ++i)
    b[i] = -(float)(i % 997);
  for (i = 0; i < 3 * R * C; ++i)
    t[i] = (float)(i % 4001) + 0.5f;
  for (threads = 1; threads <= 3; threads += 2) {
    odla_computation comp;
    odla_context ctx;
    odla_value va, vb, vtab;
    odla_value_type it;
    odla_values list;
    odla_int32 n = threads;
    odla_value_shape cs, gs;
    memset(&it, 0, sizeof it);
    it.element_type = ODLA_INT64;
    it.shape.size = 0;
    cs.size = 2;
    cs.dims[0] = R;
    cs.dims[1] = A + C;
    gs.size = 2;
    gs.dims[0] = R;
    gs.dims[1] = C;
    odla_CreateComputation(&comp);
    va = odla_CreateArgument(vt(ODLA_FLOAT32, R, A), ID("a"));
    vb = odla_CreateArgument(vt(ODLA_FLOAT32, R, C), ID("b"));
    {
      odla_value_type t3 = vt(ODLA_FLOAT32, 3, R);
      t3.shape.size = 3;
      t3.shape.dims[2] = C;
      vtab = odla_CreateArgument(t3, ID("t"));
    }
    memset(&list, 0, sizeof list);
    list.size = 2;
    list.values[0] = va;
    list.values[1] = vb;
    odla_SetValueAsOutput(odla_Concat(list, 1, cs, ID("cat")));
    odla_SetValueAsOutput(
        odla_Gather(vtab, odla_CreateConstant(it, &two, ID("two")), 0, gs, ID("row")));
    odla_CreateContext(&ctx);
    CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
          "ODLA_PROCESSOR_NUM %d", threads);
    odla_BindToArgumentById(ID("a"), a, ctx);
    odla_BindToArgumentById(ID("b"), b, ctx);
    odla_BindToArgumentById(ID("t"), t, ctx);
    memset(cat, 0xff, sizeof(float) * R * (A + C)); /* NaNs: what a run leaves unwritten */
    memset(row, 0xff, sizeof(float) * R * C);
    odla_BindToOutputById(ID("cat"), cat, ctx);
    odla_BindToOutputById(ID("row"), row, ctx);
    CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
          "%d threads: execute the copies", threads);
    bad = 0;
    for (i = 0; i < R && !bad; ++i)
      for (j = 0; j < A + C && !bad; ++j)
        bad = cat[i * (A + C) + j] != (j < A ? a[i * A + j] : b[i * C + j - A]);
    CHECK(!bad, "%d threads: Concat wrong at [%ld, %ld]", threads, (long)i - 1, (long)j - 1);
    CHECK(memcmp(row, t + 2 * R * C, sizeof(float) * R * C) == 0, "%d threads: Gather wrong",
          threads);
    odla_DestroyContext(ctx);
    odla_DestroyComputation(comp);
  }
  free(a);
  free(b);
  free(t);
  free(cat);
  free(row);
}

/* Runs `comp` once in a context of `threads` threads (ODLA_PROCESSOR_NUM) with the arguments
 * `ids` bound to `data` and output "y" to `y`, which is filled with NaNs first (bytes 0xff) so
 * that a part no thread wrote shows. */
static odla_status run_at_threads(odla_computation comp, int threads, int n, const char *const *ids,
                                  const void *const *data, float *y, size_t y_bytes) {
  odla_context ctx;
  odla_int32 count = threads;
  odla_status s;
  int i;
  odla_CreateContext(&ctx);
  odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&count);
  for (i = 0; i < n; ++i)
    odla_BindToArgumentById(ID(ids[i]), data[i], ctx);
  memset(y, 0xff, y_bytes);
  odla_BindToOutputById(ID("y"), y, ctx);
  s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL);
  odla_DestroyContext(ctx);
  return s;
}

/* One query row per head over K keys (the reference kernel's row path, split over the heads
 * from 3 threads), with a mask that hides the last keys of odd heads. */
static void test_one_row_attention(void) {
  enum { H = 16, K = 300, D = 64 };
  static float q[H * D], k[H * K * D], v[H * K * D], mask[H * K], y[H * D];
  static const float scale = 0.125f;
  odla_value_type tq, tk, tm, ts;
  int threads, h, j, t;
  double worst = 0;
  unsigned seed = 11;
  for (j = 0; j < H * D; ++j)
    q[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (j = 0; j < H * K * D; ++j) {
    k[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
    v[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  }
  for (h = 0; h < H; ++h)
    for (j = 0; j < K; ++j)
      mask[h * K + j] = h % 2 && j >= K - 40 ? -INFINITY : 0.0f;
  memset(&tq, 0, sizeof tq);
  tq.element_type = ODLA_FLOAT32;
  tq.shape.size = 3;
  tq.shape.dims[0] = H;
  tq.shape.dims[1] = 1;
  tq.shape.dims[2] = D;
  tk = tq;
  tk.shape.dims[1] = K;
  tm = tq;
  tm.shape.dims[2] = K;
  memset(&ts, 0, sizeof ts);
  ts.element_type = ODLA_FLOAT32;
  for (threads = 1; threads <= 3; threads += 2) {
    static const char *const ids[3] = {"q", "k", "v"};
    const void *const data[3] = {q, k, v};
    odla_computation comp;
    odla_CreateComputation(&comp);
    odla_SetValueAsOutput(odla_ExtAttention(
        odla_CreateArgument(tq, ID("q")), odla_CreateArgument(tk, ID("k")),
        odla_CreateArgument(tk, ID("v")), odla_CreateConstant(ts, &scale, ID("scale")),
        odla_CreateConstant(tm, mask, ID("mask")), ID("y")));
    CHECK(run_at_threads(comp, threads, 3, ids, data, y, sizeof y) == ODLA_SUCCESS,
          "%d threads: execute the attention", threads);
    for (h = 0; h < H; ++h) {
      double s[K], max = -INFINITY, sum = 0;
      for (j = 0; j < K; ++j) {
        double dot = 0;
        for (t = 0; t < D; ++t)
          dot += (double)q[h * D + t] * k[(h * K + j) * D + t];
        s[j] = dot * scale + mask[h * K + j];
        max = s[j] > max ? s[j] : max;
      }
      for (j = 0; j < K; ++j)
        sum += s[j] = exp(s[j] - max);
      for (t = 0; t < D; ++t) {
        double want = 0, e;
        for (j = 0; j < K; ++j)
          want += s[j] / sum * v[(h * K + j) * D + t];
        e = fabs(y[h * D + t] - want);
        worst = e > worst || e != e ? e : worst;
      }
    }
    CHECK(worst < 1e-5, "%d threads: attention off by %g", threads, worst);
    odla_DestroyComputation(comp);
  }
}

/* A product of one row over an untransposed constant B (a decoder step's every Gemm), which
 * reads B in place, its columns split over the threads from 2^21 multiply-adds on, with a
 * bias: at 1 and 3 threads (the output NaN-filled first, so a part left undone fails), equal
 * bit for bit to each other and within float rounding of a double-precision loop. */
static void test_one_row_product(void) {
  enum { KD = 1024, ND = 2100 };
  static float x[KD], w[KD * ND], bias[ND], y[ND], y1[ND];
  odla_value_type tx, tw, tb;
  int threads, j, p;
  double worst = 0;
  unsigned seed = 5;
  for (j = 0; j < KD; ++j)
    x[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
  for (j = 0; j < KD * ND; ++j)
    w[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 1024.0f - 0.5f;
  for (j = 0; j < ND; ++j)
    bias[j] = 0.001f * (float)j;
  tx = vt(ODLA_FLOAT32, 1, KD);
  tw = vt(ODLA_FLOAT32, KD, ND);
  tb = vt(ODLA_FLOAT32, ND, 0);
  for (threads = 1; threads <= 3; threads += 2) {
    static const char *const ids[1] = {"x"};
    const void *const data[1] = {x};
    odla_computation comp;
    odla_CreateComputation(&comp);
    odla_SetValueAsOutput(odla_Gemm(
        odla_CreateArgument(tx, ID("x")), 0, odla_CreateConstant(tw, w, ID("w")), 0, 1.0f, 1.0f,
        odla_CreateConstant(tb, bias, ID("b")), vt(ODLA_FLOAT32, 1, ND).shape, ID("y")));
    CHECK(run_at_threads(comp, threads, 1, ids, data, y, sizeof y) == ODLA_SUCCESS,
          "%d threads: execute the one-row product", threads);
    for (j = 0; j < ND; ++j) {
      double want = bias[j], e;
      for (p = 0; p < KD; ++p)
        want += (double)x[p] * w[p * ND + j];
      e = fabs(y[j] - want);
      worst = e > worst || e != e ? e : worst;
    }
    if (threads == 1)
      memcpy(y1, y, sizeof y);
    else
      CHECK(memcmp(y, y1, sizeof y) == 0, "%d threads: the one-row product differs from 1 thread's",
            threads);
    odla_DestroyComputation(comp);
  }
  CHECK(worst < 1e-3, "one-row product off by %g", worst);
}

/* ---- odla_Dump --------------------------------------------------------------------------- */

/* Results that are views of an argument's bytes (ref_plan_views): a Gather of one constant
 * index along the leading axis (a decoder's cache layer), a Reshape, a Reshape of that Gather,
 * read by Adds; a Gather that is itself a graph output still writes its output. The views take
 * no arena: the arena holds nothing (every Add's result is an output). */
static void test_argument_views(void) {
  enum { L = 3, R = 4, C = 5 };
  static const int64_t second = 1, last = -1;
  float x[L * R * C], g2[R * C], r2[L * R * C], rg2[R * C], gl[R * C];
  odla_computation comp;
  odla_context ctx;
  odla_value xa, g, r, rg, idx, idx_last;
  odla_value_type t3 = vt(ODLA_FLOAT32, L, R), scalar = vt(ODLA_INT64, 1, 0);
  odla_value_shape flat = vt(ODLA_FLOAT32, L * R * C, 0).shape,
                   row = vt(ODLA_FLOAT32, R * C, 0).shape;
  odla_size_t arena = 1;
  int i;
  t3.shape.size = 3;
  t3.shape.dims[2] = C;
  scalar.shape.size = 0;
  for (i = 0; i < L * R * C; ++i)
    x[i] = (float)(i % 13) - 6.0f + 0.25f * (float)i;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "views: CreateComputation");
  xa = odla_CreateArgument(t3, ID("x"));
  idx = odla_CreateConstant(scalar, &second, ID("second"));
  idx_last = odla_CreateConstant(scalar, &last, ID("last"));
  g = odla_Gather(xa, idx, 0, vt(ODLA_FLOAT32, R, C).shape, ID("g"));
  r = odla_Reshape(xa, flat, ID("r"));
  rg = odla_Reshape(g, row, ID("rg"));
  odla_SetValueAsOutput(odla_Add(g, g, ID("g2")));
  odla_SetValueAsOutput(odla_Add(r, r, ID("r2")));
  odla_SetValueAsOutput(odla_Add(rg, rg, ID("rg2")));
  odla_SetValueAsOutput(odla_Gather(xa, idx_last, 0, vt(ODLA_FLOAT32, R, C).shape, ID("gl")));
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "views: CreateContext");
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToOutputById(ID("g2"), g2, ctx);
  odla_BindToOutputById(ID("r2"), r2, ctx);
  odla_BindToOutputById(ID("rg2"), rg2, ctx);
  odla_BindToOutputById(ID("gl"), gl, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "views: execute");
  CHECK(odla_ExtGetArenaBytes(comp, &arena) == ODLA_SUCCESS && arena == 0,
        "views: the arena holds %lu bytes, want none", (unsigned long)arena);
  for (i = 0; i < R * C; ++i) {
    CHECK(g2[i] == 2.0f * x[R * C + i], "views: g2[%d] = %g, want %g", i, g2[i],
          2.0f * x[R * C + i]);
    CHECK(rg2[i] == 2.0f * x[R * C + i], "views: rg2[%d] = %g", i, rg2[i]);
    CHECK(gl[i] == x[2 * R * C + i], "views: gl[%d] = %g, want %g", i, gl[i], x[2 * R * C + i]);
  }
  for (i = 0; i < L * R * C; ++i)
    CHECK(r2[i] == 2.0f * x[i], "views: r2[%d] = %g, want %g", i, r2[i], 2.0f * x[i]);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

static void test_dump(void) {
  static const char want[] =
      "odla_Dump: 'b' float32[2] constant\n"
      "  data: 0.100000001 -0.200000003\n"
      "odla_Dump: 'x' float32[2,3] argument\n"
      "  data: none (compile mode: bind it as an output to see it)\n"
      "odla_Dump: NULL value\n"
      "odla_Dump: 'v' int32[100] argument\n"
      "  data: none (not set (odla_SetValueData))\n"
      "odla_Dump: 'v' int32[100] argument\n"
      "  data: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 "
      "30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 "
      "59 60 61 62 63 ... (36 more)\n"
      "odla_Dump: 'n' int32[100] result of Neg\n"
      "  data: 0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -10 -11 -12 -13 -14 -15 -16 -17 -18 -19 -20 -21 -22 "
      "-23 -24 -25 -26 -27 -28 -29 -30 -31 -32 -33 -34 -35 -36 -37 -38 -39 -40 -41 -42 -43 -44 "
      "-45 -46 -47 -48 -49 -50 -51 -52 -53 -54 -55 -56 -57 -58 -59 -60 -61 -62 -63 ... (36 "
      "more)\n";
  char path[512];
  unsigned char *text;
  int32_t data[100];
  odla_computation comp, interp;
  odla_value v, b;
  int fd, saved, i;
  long n;
  for (i = 0; i < 100; ++i)
    data[i] = i;
  sprintf(path, "%s/dump.txt", scratch);
  fflush(stdout);
  saved = dup(1);
  fd = fileno(fopen(path, "w"));
  dup2(fd, 1);
  comp = build(&wa, 0);
  odla_FindValueById(ID("b"), &b);
  odla_Dump(b);
  odla_FindValueById(ID("x"), &v);
  odla_Dump(v);
  odla_Dump(NULL);
  odla_CreateComputation(&interp);
  v = odla_CreateValue(vt(ODLA_INT32, 100, 0), ID("v"));
  odla_Dump(v);
  odla_SetValueData(v, data);
  odla_Dump(v);
  odla_Dump(odla_Neg(v, ID("n")));
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  odla_DestroyComputation(interp);
  odla_DestroyComputation(comp);
  n = read_file(path, &text);
  CHECK(n == (long)strlen(want) && memcmp(text, want, (size_t)n) == 0,
        "odla_Dump printed:\n%.*s\nwant:\n%s", (int)(n > 0 ? n : 0), (const char *)text, want);
  free(text);
}

int main(int argc, char **argv) {
  scratch = argc > 1 ? argv[1] : ".";
  test_stored_computation();
  test_constants_arrays();
  test_conv_packed_kernel();
  test_bind_values();
  test_static_ids();
  test_compile_scratch();
  test_arena_between_computations();
  test_large_copies();
  test_one_row_attention();
  test_one_row_product();
  test_argument_views();
  test_dump();
  if (!failures)
    printf("test_api_runtime: all checks passed\n");
  return failures != 0;
}
