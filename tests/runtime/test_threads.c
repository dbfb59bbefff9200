/* test_threads.c: ODLA_PROCESSOR_NUM on an ODLA backend, through the ODLA headers only.
 * One computation holds a convolution chain (3x3 Conv with bias, depthwise 3x3 Conv, 1x1
 * Conv) and a Gemm (B transposed, bias row), each large enough to be split. It runs at 1, 2
 * and 3 threads, set as a computation item and as a context item overriding it; every result
 * must equal the 1-thread result (bit for bit on the reference backend, within float32
 * rounding on others), and the 1-thread result must match plain C
 * loops in double written here. Then several contexts at different thread counts run the
 * computation at once from their own threads, a stored executable runs at 2 threads (where
 * the backend stores executables), a computation compiled at 3 threads runs at 1, one without
 * the item runs 12 times, and the item's error cases are refused. On the reference
 * backend the test also counts the process's threads (/proc/self/task): the first execution at
 * T threads starts a pool of T - 1 workers, which the next execution at T threads reuses,
 * another context's too, and which stays after the context is destroyed, until the last
 * computation is. */
#define _POSIX_C_SOURCE 200809L
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "value_types.h"

enum { C0 = 16, C1 = 32, C2 = 48, H = 40, W = 40, KS = 3 }; /* the convolutions */
enum { GM = 150, GK = 300, GN = 70 };                       /* the Gemm */
enum { YC = C2 * H * W, YG = GM * GN, RUNNERS = 4 };

static float x[C0 * H * W], w1[C1 * C0 * KS * KS], b1[C1], w2[C1 * KS * KS], w3[C2 * C1];
static float a[GM * GK], bt[GN * GK], gc[GN];
static double want_c[YC], want_g[YG];

static odla_value constant(int rank, const int64_t *dims, const float *data, const char *id) {
  return odla_CreateConstant(vt(ODLA_FLOAT32, rank, dims), data, (const odla_value_id)id);
}

static odla_computation build(void) {
  static const int64_t dx[4] = {1, C0, H, W}, dw1[4] = {C1, C0, KS, KS}, db1[1] = {C1};
  static const int64_t dw2[4] = {C1, 1, KS, KS}, dw3[4] = {C2, C1, 1, 1};
  static const int64_t da[2] = {GM, GK}, dbt[2] = {GN, GK}, dc[1] = {GN}, dy[2] = {GM, GN};
  static const odla_uint32 one[2] = {1, 1}, zero[2] = {0, 0};
  odla_computation comp;
  odla_value_shape any;
  odla_value h1, h2, yc, yg;
  memset(&any, 0, sizeof any);
  any.size = -1;
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  h1 = odla_Conv(odla_CreateArgument(vt(ODLA_FLOAT32, 4, dx), (const odla_value_id) "x"),
                 ODLA_CHANNELS_FIRST, 1, constant(4, dw1, w1, "w1"), ODLA_OIS, one, one, one, one,
                 constant(1, db1, b1, "b1"), any, (const odla_value_id) "h1");
  h2 = odla_Conv(h1, ODLA_CHANNELS_FIRST, C1, constant(4, dw2, w2, "w2"), ODLA_OIS, one, one, one,
                 one, NULL, any, (const odla_value_id) "h2");
  yc = odla_Conv(h2, ODLA_CHANNELS_FIRST, 1, constant(4, dw3, w3, "w3"), ODLA_OIS, one, one, zero,
                 zero, NULL, any, (const odla_value_id) "yc");
  yg = odla_Gemm(odla_CreateArgument(vt(ODLA_FLOAT32, 2, da), (const odla_value_id) "a"), 0,
                 constant(2, dbt, bt, "bt"), 1, 1.0f, 1.0f, constant(1, dc, gc, "c"),
                 vt(ODLA_FLOAT32, 2, dy).shape, (const odla_value_id) "yg");
  CHECK(yc && odla_SetValueAsOutput(yc) == ODLA_SUCCESS, "building the convolutions");
  CHECK(yg && odla_SetValueAsOutput(yg) == ODLA_SUCCESS, "building the Gemm");
  return comp;
}

/* The same computation in plain C, in double. */
static void naive(void) {
  static double h1[C1 * H * W], h2[C1 * H * W];
  int o, c, i, j, ki, kj, p;
  for (o = 0; o < C1; ++o)
    for (i = 0; i < H; ++i)
      for (j = 0; j < W; ++j) {
        double s = b1[o];
        for (c = 0; c < C0; ++c)
          for (ki = 0; ki < KS; ++ki)
            for (kj = 0; kj < KS; ++kj) {
              int ii = i + ki - 1, jj = j + kj - 1;
              if (ii >= 0 && ii < H && jj >= 0 && jj < W)
                s += (double)w1[((o * C0 + c) * KS + ki) * KS + kj] * x[(c * H + ii) * W + jj];
            }
        h1[(o * H + i) * W + j] = s;
      }
  for (o = 0; o < C1; ++o)
    for (i = 0; i < H; ++i)
      for (j = 0; j < W; ++j) {
        double s = 0;
        for (ki = 0; ki < KS; ++ki)
          for (kj = 0; kj < KS; ++kj) {
            int ii = i + ki - 1, jj = j + kj - 1;
            if (ii >= 0 && ii < H && jj >= 0 && jj < W)
              s += (double)w2[(o * KS + ki) * KS + kj] * h1[(o * H + ii) * W + jj];
          }
        h2[(o * H + i) * W + j] = s;
      }
  for (o = 0; o < C2; ++o)
    for (p = 0; p < H * W; ++p) {
      double s = 0;
      for (c = 0; c < C1; ++c)
        s += (double)w3[o * C1 + c] * h2[c * H * W + p];
      want_c[o * H * W + p] = s;
    }
  for (i = 0; i < GM; ++i)
    for (j = 0; j < GN; ++j) {
      double s = gc[j];
      for (p = 0; p < GK; ++p)
        s += (double)a[i * GK + p] * bt[j * GK + p];
      want_g[i * GN + j] = s;
    }
}

/* Whether got[0..n) matches want within float rounding of the sums' magnitude. */
static int close_to(const float *got, const double *want, int n, const char *what) {
  double scale = 0;
  int i;
  for (i = 0; i < n; ++i)
    scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
  for (i = 0; i < n; ++i)
    if (fabs(got[i] - want[i]) > 1e-5 * scale + 1e-6) {
      CHECK(0, "%s[%d] = %.9g, plain C says %.9g", what, i, got[i], want[i]);
      return 0;
    }
  return 1;
}

/* Threads of this process, or -1 where /proc/self/task does not exist. */
static int process_threads(void) {
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int n = 0;
  if (!d)
    return -1;
  while ((e = readdir(d)))
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Threads of this process once it is `want` (a joined thread may linger in /proc for a
 * moment after pthread_join), or after 2 s. */
static int process_threads_settled(int want) {
  struct timespec ms = {0, 1000000};
  int i, n = process_threads();
  for (i = 0; i < 2000 && n != want; ++i) {
    nanosleep(&ms, NULL);
    n = process_threads();
  }
  return n;
}

/* A context with the bindings of `yc`, `yg`; `threads` > 0 sets its ODLA_PROCESSOR_NUM. */
static odla_context context(int threads, float *yc, float *yg) {
  odla_context ctx;
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  if (threads > 0) {
    odla_int32 n = threads;
    CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
          "SetContextItem(ODLA_PROCESSOR_NUM, %d)", threads);
  }
  odla_BindToArgumentById((const odla_value_id) "x", x, ctx);
  odla_BindToArgumentById((const odla_value_id) "a", a, ctx);
  odla_BindToOutputById((const odla_value_id) "yc", yc, ctx);
  odla_BindToOutputById((const odla_value_id) "yg", yg, ctx);
  return ctx;
}

static float base_c[YC], base_g[YG];
/* Whether other thread counts must give the 1-thread result bit for bit: the reference
 * backend's promise (docs/backends.md). oneDNN chooses its kernels' reduction order by thread
 * count and CPU (on a 2-core AMD EPYC its 3-thread results differ in the last bits), so
 * another backend must agree within float32 rounding of the sums. */
static int exact;

static int agrees(const float *got, const float *base, int n) {
  int i;
  if (exact)
    return memcmp(got, base, (size_t)n * sizeof *got) == 0;
  for (i = 0; i < n; ++i)
    if (!(fabsf(got[i] - base[i]) <= 1e-5f * (fabsf(base[i]) + 1.0f)))
      return 0;
  return 1;
}

static int same(const float *yc, const float *yg) {
  return agrees(yc, base_c, YC) && agrees(yg, base_g, YG);
}

typedef struct {
  odla_computation comp;
  int threads, repeats;
  float yc[YC], yg[YG];
  int ok;
} runner;

static void *run_concurrently(void *arg) {
  runner *r = (runner *)arg;
  odla_context ctx = context(r->threads, r->yc, r->yg);
  int i;
  r->ok = 1;
  for (i = 0; i < r->repeats && r->ok; ++i) {
    memset(r->yc, 0, sizeof r->yc);
    r->ok = odla_ExecuteComputation(r->comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS &&
            same(r->yc, r->yg);
  }
  odla_DestroyContext(ctx);
  return NULL;
}

static float yc[YC], yg[YG];

int main(void) {
  static runner runners[RUNNERS];
  pthread_t tids[RUNNERS];
  odla_computation comp;
  odla_executable exe;
  odla_context ctx;
  odla_int32 n;
  odla_size_t bytes = 0;
  odla_status stored;
  int i, t, before, first;
  const int reference = strstr(odla_GetVersionString(), "odla_reference") != NULL;
  exact = reference;
  for (i = 0; i < C0 * H * W; ++i)
    x[i] = (float)((i * 37) % 29) / 14.0f - 1.0f;
  for (i = 0; i < C1 * C0 * KS * KS; ++i)
    w1[i] = (float)((i * 13) % 19) / 40.0f - 0.2f;
  for (i = 0; i < C1; ++i)
    b1[i] = 0.05f * (float)i - 0.7f;
  for (i = 0; i < C1 * KS * KS; ++i)
    w2[i] = (float)((i * 7) % 11) / 10.0f - 0.4f;
  for (i = 0; i < C2 * C1; ++i)
    w3[i] = (float)((i * 17) % 23) / 20.0f - 0.5f;
  for (i = 0; i < GM * GK; ++i)
    a[i] = (float)((i * 31) % 41) / 20.0f - 1.0f;
  for (i = 0; i < GN * GK; ++i)
    bt[i] = (float)((i * 11) % 37) / 36.0f - 0.5f;
  for (i = 0; i < GN; ++i)
    gc[i] = 0.01f * (float)i;
  naive();

  first = process_threads(); /* no computation alive: no pool */
  comp = build();
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "CompileComputation");

  /* The item's refusals: a missing value, zero, a negative count. */
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, NULL) == ODLA_INVALID_PARAM,
        "SetComputationItem(ODLA_PROCESSOR_NUM, NULL) must be refused");
  n = 0;
  CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, (odla_item_value)&n) ==
            ODLA_INVALID_PARAM,
        "ODLA_PROCESSOR_NUM 0 must be refused");
  n = -3;
  CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, (odla_item_value)&n) ==
            ODLA_INVALID_PARAM,
        "ODLA_PROCESSOR_NUM -3 must be refused");
  CHECK(odla_SetComputationItem(NULL, ODLA_PROCESSOR_NUM, (odla_item_value)&n) ==
            ODLA_INVALID_PARAM,
        "a NULL computation must be refused");
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, NULL) == ODLA_INVALID_PARAM,
        "SetContextItem(ODLA_PROCESSOR_NUM, NULL) must be refused");
  n = 0;
  CHECK(odla_SetContextItem(ctx, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_INVALID_PARAM,
        "context ODLA_PROCESSOR_NUM 0 must be refused");
  odla_DestroyContext(ctx);
  if (reference) { /* the reference backend caps the count at 256 */
    n = 100000;
    CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, (odla_item_value)&n) ==
              ODLA_INVALID_PARAM,
          "ODLA_PROCESSOR_NUM 100000 must be refused");
  }
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);

  /* 1 thread: the baseline, checked against plain C. */
  n = 1;
  CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
        "SetComputationItem(ODLA_PROCESSOR_NUM, 1)");
  ctx = context(0, base_c, base_g);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "1 thread: ExecuteComputation");
  odla_DestroyContext(ctx);
  close_to(base_c, want_c, YC, "1 thread: yc");
  close_to(base_g, want_g, YG, "1 thread: yg");

  /* 2 and 3 threads as the computation item, then 3 and 2 as a context item over it. */
  for (t = 2; t <= 3; ++t) {
    int items[2][2] = {{0, 0}, {0, 0}};
    int k;
    items[0][0] = t;     /* computation item, no context item */
    items[1][0] = 5 - t; /* computation item 3 or 2, overridden by the context's t */
    items[1][1] = t;
    for (k = 0; k < 2; ++k) {
      n = items[k][0];
      CHECK(odla_SetComputationItem(comp, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS,
            "SetComputationItem(ODLA_PROCESSOR_NUM, %d)", items[k][0]);
      before = process_threads();
      memset(yc, 0, sizeof yc);
      memset(yg, 0, sizeof yg);
      ctx = context(items[k][1], yc, yg);
      CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
            "%d threads: ExecuteComputation", t);
      CHECK(same(yc, yg), "%d threads (%s item): the result differs from 1 thread's", t,
            k ? "context" : "computation");
      if (reference && before > 0) {
        /* k = 0: a new pool of t threads; k = 1: the one k = 0 left */
        int during = process_threads(), want = k ? 0 : t - 1;
        CHECK(during - before == want, "%d threads (%s item): %d workers started, expected %d", t,
              k ? "context" : "computation", during - before, want);
        CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS &&
                  process_threads() == during && same(yc, yg),
              "%d threads: a second execution must reuse the workers", t);
        odla_DestroyContext(ctx);
        CHECK(process_threads() == during, "%d threads: DestroyContext stopped the pool's workers",
              t);
      } else {
        odla_DestroyContext(ctx);
      }
    }
  }

  /* Contexts at 1, 2, 3 and 2 threads running the computation at once. */
  for (i = 0; i < RUNNERS; ++i) {
    runners[i].comp = comp;
    runners[i].threads = i % 3 + 1;
    runners[i].repeats = 3;
    CHECK(pthread_create(&tids[i], NULL, run_concurrently, &runners[i]) == 0, "pthread_create");
  }
  for (i = 0; i < RUNNERS; ++i) {
    pthread_join(tids[i], NULL);
    CHECK(runners[i].ok, "concurrent context %d (%d threads): failed or differs", i,
          runners[i].threads);
  }

  /* A computation compiled at 3 threads run by a context at 1 (libodla_dnnl: on its
   * primitives' one-thread twins), and one with no item run 12 times in a row (libodla_dnnl
   * times the runs at its default count and, where that is more than one, tries one thread on
   * runs 6 to 10: the first makes the one-thread twins). */
  {
    odla_computation again = build(), plain = build();
    odla_executable again_exe, plain_exe;
    n = 3;
    CHECK(odla_SetComputationItem(again, ODLA_PROCESSOR_NUM, (odla_item_value)&n) == ODLA_SUCCESS &&
              odla_CompileComputation(again, NULL, &again_exe) == ODLA_SUCCESS,
          "a computation compiled at 3 threads");
    memset(yc, 0, sizeof yc);
    ctx = context(1, yc, yg);
    CHECK(odla_ExecuteComputation(again, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS &&
              same(yc, yg),
          "compiled at 3 threads, run at 1: failed or differs from 1 thread's result");
    odla_DestroyContext(ctx);
    CHECK(odla_CompileComputation(plain, NULL, &plain_exe) == ODLA_SUCCESS,
          "a computation without the item");
    ctx = context(0, yc, yg);
    for (i = 0; i < 12; ++i) {
      memset(yc, 0, sizeof yc);
      CHECK(odla_ExecuteComputation(plain, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS &&
                same(yc, yg),
            "run %d without the item: failed or differs from 1 thread's result", i + 1);
    }
    odla_DestroyContext(ctx);
    odla_DestroyExecutable(again_exe);
    odla_DestroyExecutable(plain_exe);
    odla_DestroyComputation(again);
    odla_DestroyComputation(plain);
  }

  /* A stored executable at 2 threads, where the backend stores executables. */
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  stored = odla_ExtGetStoredExecutableBytes(exe, &bytes);
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  if (stored == ODLA_SUCCESS) {
    unsigned char *image = (unsigned char *)malloc(bytes);
    odla_resource_location loc;
    odla_executable loaded = NULL;
    loc.location_type = ODLA_LOCATION_MEMORY;
    loc.location = image;
    loc.size = bytes;
    CHECK(image && odla_StoreExecutable(loc, exe) == ODLA_SUCCESS, "StoreExecutable");
    CHECK(odla_LoadExecutable(loc, NULL, &loaded) == ODLA_SUCCESS, "LoadExecutable");
    memset(yc, 0, sizeof yc);
    ctx = context(2, yc, yg);
    CHECK(loaded && odla_LaunchExecutable(loaded, ctx) == ODLA_SUCCESS,
          "LaunchExecutable at 2 threads");
    CHECK(same(yc, yg), "the loaded executable at 2 threads differs from 1 thread's result");
    odla_DestroyContext(ctx);
    if (loaded)
      odla_DestroyExecutable(loaded);
    free(image);
  } else {
    printf("threads: this backend does not store executables; load mode not checked\n");
  }

  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  if (reference && first > 0) {
    int left = process_threads_settled(first);
    CHECK(left == first, "the last computation destroyed left %d worker threads", left - first);
  }
  if (failures == 0)
    printf("threads: 1, 2 and 3 threads (computation and context items) %s, "
           "matching plain C; %d concurrent contexts%s\n",
           exact ? "bit-identical" : "agreeing within rounding", RUNNERS,
           reference ? "; workers counted" : "");
  return failures ? 1 : 0;
}
