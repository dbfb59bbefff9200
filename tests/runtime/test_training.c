/* test_training.c: odla_DifferentiateComputation and ODLA_COMPUTE_TRAINING of an ODLA backend,
 * through the ODLA headers only. An MLP (Gemm with a fused ReLU, Gemm, LogSoftmax and
 * NegativeLogLikeliHoodLoss) and a small CNN (Conv, ReLU, MaxPool, Reshape, Gemm, then
 * Sub, Mul and ReduceMean: a squared error), each in two spellings (fused ExtGemm / ExtConv
 * as odlac emits them, and the unfused ops with an Add for the bias), are differentiated
 * with respect to variables. Every gradient element is checked against central finite
 * differences of the loss in float64 (the loss evaluated by ODLA_COMPUTE_INFERENCE); float32
 * gradients are checked against the float64 ones; a few steps of SGD must lower the loss.
 * A third chain covers the rules' other cases (see build_zoo). Each executable is also
 * stored, loaded and launched (load mode), which must give the same gradients bit for bit.
 * Misuse must be refused: a loss that is not one element, two outputs, an op without a
 * gradient rule between a variable and the loss (the error names it), training a
 * computation that was not differentiated, differentiating twice or in interpret mode.
 * Usage: test_training SCRATCH_DIR [--dump DIR] (see dump_trainer) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "value_types.h"

#define ID(s) ((const odla_value_id)(s))

enum { kMaxVars = 8, kMaxElems = 512 };

/* A model: its variables' data (float64, the truth the typed buffers are made from), its
 * arguments' data, and a builder for one element type. */
typedef struct model {
  const char *name;
  const char *key; /* its folder under --dump */
  int num_vars;
  const char *var_id[kMaxVars];
  odla_value_shape var_shape[kMaxVars];
  double var[kMaxVars][kMaxElems];
  /* Arguments: x (float), and the target: labels (int64) or values (float). */
  odla_value_shape x_shape, t_shape;
  double x[kMaxElems], t[kMaxElems];
  int64_t labels[kMaxElems];
  int fused;
  odla_value (*build)(const struct model *m, odla_element_type et, odla_value *vars);
} model;

static odla_value_shape shape(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  odla_value_shape s;
  int64_t d[4];
  int i;
  memset(&s, 0, sizeof s);
  d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
  s.size = rank;
  for (i = 0; i < rank; ++i)
    s.dims[i] = d[i];
  return s;
}

static odla_value_type vtype(odla_element_type et, odla_value_shape s) {
  odla_value_type t;
  memset(&t, 0, sizeof t);
  t.element_type = et;
  t.shape = s;
  return t;
}

static int64_t count(const odla_value_shape *s) {
  int64_t n = 1;
  int i;
  for (i = 0; i < s->size; ++i)
    n *= s->dims[i];
  return n;
}

static const odla_uint32 both_axes[2] = {0, 1};

/* Deterministic data in [-1, 1). */
static uint32_t rng = 12345;
static double uniform(void) {
  rng = rng * 1664525u + 1013904223u;
  return (double)(rng >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

/* ---- The models ------------------------------------------------------------------------ */

enum { MB = 4, MIN = 5, MH = 8, MOUT = 3 };

/* logits = Gemm(relu(Gemm(x, W1^T) + b1), W2^T) + b2; loss = NLL(LogSoftmax(logits), labels). */
static odla_value build_mlp(const model *m, odla_element_type et, odla_value *v) {
  odla_value x = odla_CreateArgument(vtype(et, m->x_shape), ID("x"));
  odla_value labels = odla_CreateArgument(vtype(ODLA_INT64, m->t_shape), ID("labels"));
  odla_value h, logits;
  int i;
  for (i = 0; i < m->num_vars; ++i)
    v[i] = odla_CreateVariable(vtype(et, m->var_shape[i]), ID(m->var_id[i]));
  if (m->fused)
    h = odla_ExtGemm(x, 0, v[0], 1, 1.0f, 1.0f, v[1], NULL, ODLA_EXT_FUSED_RELU, 0.0f, 0.0f,
                     shape(2, MB, MH, 0, 0), ID("h"));
  else
    h = odla_Relu(odla_Add(odla_Gemm(x, 0, v[0], 1, 1.0f, 0.0f, NULL, any_shape(), ID("xw")), v[1],
                           ID("xwb")),
                  ID("h"));
  logits = odla_Gemm(h, 0, v[2], 1, 1.0f, 1.0f, v[3], shape(2, MB, MOUT, 0, 0), ID("logits"));
  return odla_NegativeLogLikeliHoodLoss(odla_LogSoftmax(logits, 1, ID("logp")), labels, INT32_MIN,
                                        ODLA_REDUCE_MEAN, NULL, shape(0, 0, 0, 0, 0), ID("loss"));
}

enum { CN = 2, CC = 1, CHW = 6, CM = 3, CK = 3, CP = 3 /* pooled extent */, COUT = 2 };

/* y = Gemm(flatten(maxpool(relu(conv(x, K) + kb))), W) + fb; loss = mean((y - t)^2). */
static odla_value build_cnn(const model *m, odla_element_type et, odla_value *v) {
  static const odla_uint32 one[2] = {1, 1}, two[2] = {2, 2};
  odla_value x = odla_CreateArgument(vtype(et, m->x_shape), ID("x"));
  odla_value t = odla_CreateArgument(vtype(et, m->t_shape), ID("t"));
  odla_value c, p, f, y, d;
  int i;
  for (i = 0; i < m->num_vars; ++i)
    v[i] = odla_CreateVariable(vtype(et, m->var_shape[i]), ID(m->var_id[i]));
  if (m->fused)
    c = odla_ExtConv(x, ODLA_CHANNELS_FIRST, 1, v[0], ODLA_OIS, one, one, one, one, v[1], NULL,
                     ODLA_EXT_FUSED_RELU, 0.0f, 0.0f, shape(4, CN, CM, CHW, CHW), ID("c"));
  else
    c = odla_Relu(odla_Conv(x, ODLA_CHANNELS_FIRST, 1, v[0], ODLA_OIS, one, one, one, one, v[1],
                            shape(4, CN, CM, CHW, CHW), ID("conv")),
                  ID("c"));
  p = odla_MaxPool(c, ODLA_CHANNELS_FIRST, two, two, NULL, NULL, shape(4, CN, CM, CP, CP), ID("p"));
  f = odla_Reshape(p, shape(2, CN, CM * CP * CP, 0, 0), ID("f"));
  if (m->fused)
    y = odla_Gemm(f, 0, v[2], 0, 1.0f, 1.0f, v[3], any_shape(), ID("y"));
  else
    y = odla_Add(odla_Gemm(f, 0, v[2], 0, 1.0f, 0.0f, NULL, any_shape(), ID("fw")), v[3], ID("y"));
  d = odla_Sub(y, t, ID("d"));
  return odla_ReduceMean(odla_Mul(d, d, ID("d2")), 2, both_axes, 0, shape(0, 0, 0, 0, 0),
                         ID("loss"));
}

/* The rules' other cases, on one chain whose input X is a variable too (so the Conv's input
 * gradient, a DeConv, is checked): Conv with groups, strides, dilations and asymmetric
 * padding, ExtConv's residual, ExtMaxPool with padding and overlapping windows, Reshape,
 * Gemm with A transposed, alpha, beta and a column C, Mul broadcasting a row, ReduceSum of
 * one axis, LogSoftmax, NegativeLogLikeliHoodLoss per element with class weights and an
 * ignored target, and ReduceMean. */
static odla_value build_zoo(const model *m, odla_element_type et, odla_value *v) {
  static const odla_uint32 st[2] = {2, 1}, dil[2] = {1, 2}, pf[2] = {1, 0}, pb[2] = {0, 1};
  static const odla_uint32 win[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0}, ax1 = 1, ax0 = 0;
  static const int32_t targets[3] = {1, 2, 3};
  static const float wf[4] = {0.5f, 1.0f, 2.0f, 1.5f};
  static const double wd[4] = {0.5, 1.0, 2.0, 1.5};
  odla_value c, p, r, g, y, nll;
  int i;
  for (i = 0; i < m->num_vars; ++i)
    v[i] = odla_CreateVariable(vtype(et, m->var_shape[i]), ID(m->var_id[i]));
  c = odla_ExtConv(v[0], ODLA_CHANNELS_FIRST, 2, v[1], ODLA_OIS, st, dil, pf, pb, v[2], v[3],
                   ODLA_EXT_FUSED_RELU, 0.0f, 0.0f, shape(4, 2, 4, 3, 4), ID("c"));
  p = odla_ExtMaxPool(c, ODLA_CHANNELS_FIRST, win, one, one, one, zero, shape(4, 2, 4, 3, 4),
                      ID("p"));
  r = odla_Reshape(p, shape(2, 8, 12, 0, 0), ID("r"));
  g = odla_Gemm(r, 1, v[4], 0, 0.7f, 1.3f, v[5], shape(2, 12, 5, 0, 0), ID("g"));
  y = odla_ReduceSum(odla_Mul(g, v[6], ID("gs")), 1, &ax1, 0, shape(1, 12, 0, 0, 0), ID("y"));
  y = odla_LogSoftmax(odla_Reshape(y, shape(2, 3, 4, 0, 0), ID("y2")), 1, ID("logp"));
  nll = odla_NegativeLogLikeliHoodLoss(
      y, odla_CreateConstant(vtype(ODLA_INT32, shape(1, 3, 0, 0, 0)), targets, ID("targets")), 2,
      ODLA_REDUCE_NONE,
      odla_CreateConstant(vtype(et, shape(1, 4, 0, 0, 0)),
                          et == ODLA_FLOAT64 ? (const void *)wd : (const void *)wf,
                          ID("class_weights")),
      shape(1, 3, 0, 0, 0), ID("nll"));
  return odla_ReduceMean(nll, 1, &ax0, 0, shape(0, 0, 0, 0, 0), ID("loss"));
}

static void init_zoo(model *m) {
  static const char *ids[] = {"X", "K", "kb", "R", "Wt", "C", "s"};
  int i;
  int64_t k;
  memset(m, 0, sizeof *m);
  m->name = "zoo (strides, groups, ...)";
  m->key = "zoo";
  m->num_vars = 7;
  m->var_shape[0] = shape(4, 2, 4, 7, 7);
  m->var_shape[1] = shape(4, 4, 2, 3, 3);
  m->var_shape[2] = shape(1, 4, 0, 0, 0);
  m->var_shape[3] = shape(4, 2, 4, 3, 4);
  m->var_shape[4] = shape(2, 8, 5, 0, 0);
  m->var_shape[5] = shape(2, 12, 1, 0, 0);
  m->var_shape[6] = shape(1, 5, 0, 0, 0);
  for (i = 0; i < m->num_vars; ++i) {
    m->var_id[i] = ids[i];
    for (k = 0; k < count(&m->var_shape[i]); ++k)
      m->var[i][k] = 0.5 * uniform();
  }
  m->build = build_zoo;
}

static void init_model(model *m, int cnn, int fused) {
  int i;
  int64_t k;
  memset(m, 0, sizeof *m);
  m->fused = fused;
  if (!cnn) {
    static const char *ids[] = {"W1", "b1", "W2", "b2"};
    m->name = fused ? "mlp (ExtGemm)" : "mlp (Gemm, Add, Relu)";
    m->key = fused ? "mlp_fused" : "mlp";
    m->num_vars = 4;
    m->var_shape[0] = shape(2, MH, MIN, 0, 0);
    m->var_shape[1] = shape(1, MH, 0, 0, 0);
    m->var_shape[2] = shape(2, MOUT, MH, 0, 0);
    m->var_shape[3] = shape(1, MOUT, 0, 0, 0);
    for (i = 0; i < 4; ++i)
      m->var_id[i] = ids[i];
    m->x_shape = shape(2, MB, MIN, 0, 0);
    m->t_shape = shape(1, MB, 0, 0, 0);
    for (k = 0; k < MB; ++k)
      m->labels[k] = k % MOUT;
    m->build = build_mlp;
  } else {
    static const char *ids[] = {"K", "kb", "W", "fb"};
    m->name = fused ? "cnn (ExtConv, Gemm with C)" : "cnn (Conv, Relu, Gemm, Add)";
    m->key = fused ? "cnn_fused" : "cnn";
    m->num_vars = 4;
    m->var_shape[0] = shape(4, CM, CC, CK, CK);
    m->var_shape[1] = shape(1, CM, 0, 0, 0);
    m->var_shape[2] = shape(2, CM * CP * CP, COUT, 0, 0);
    m->var_shape[3] = fused ? shape(1, COUT, 0, 0, 0) : shape(2, 1, COUT, 0, 0);
    for (i = 0; i < 4; ++i)
      m->var_id[i] = ids[i];
    m->x_shape = shape(4, CN, CC, CHW, CHW);
    m->t_shape = shape(2, CN, COUT, 0, 0);
    for (k = 0; k < count(&m->t_shape); ++k)
      m->t[k] = uniform();
    m->build = build_cnn;
  }
  for (i = 0; i < m->num_vars; ++i)
    for (k = 0; k < count(&m->var_shape[i]); ++k)
      m->var[i][k] = 0.5 * uniform();
  for (k = 0; k < count(&m->x_shape); ++k)
    m->x[k] = uniform();
}

/* ---- Running a model ------------------------------------------------------------------- */

/* A differentiated, compiled model with its bound buffers. */
typedef struct {
  const model *m;
  odla_element_type et;
  odla_computation comp;
  odla_executable exe;
  odla_context ctx;
  void *var[kMaxVars], *grad[kMaxVars], *x, *t, *loss;
} trainer;

static double get(odla_element_type et, const void *p, int64_t i) {
  return et == ODLA_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void set(odla_element_type et, void *p, int64_t i, double v) {
  if (et == ODLA_FLOAT64)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}

static void *typed(odla_element_type et, const double *src, int64_t n) {
  void *p = calloc((size_t)(n ? n : 1), 8);
  int64_t i;
  for (i = 0; src && i < n; ++i)
    set(et, p, i, src[i]);
  return p;
}

/* Binds the trainer's buffers to `ctx`: variables and data as arguments, the loss and the
 * gradients ("<variable>:grad") as outputs. */
static void trainer_bind(const trainer *tr, odla_context ctx) {
  char id[64];
  int i;
  for (i = 0; i < tr->m->num_vars; ++i) {
    odla_BindToArgumentById(ID(tr->m->var_id[i]), tr->var[i], ctx);
    snprintf(id, sizeof id, "%s:grad", tr->m->var_id[i]);
    odla_BindToOutputById(ID(id), tr->grad[i], ctx);
  }
  odla_BindToArgumentById(ID("x"), tr->x, ctx);
  if (tr->m->build == build_mlp)
    odla_BindToArgumentById(ID("labels"), tr->m->labels, ctx);
  else
    odla_BindToArgumentById(ID("t"), tr->t, ctx);
  odla_BindToOutputById(ID("loss"), tr->loss, ctx);
}

static int trainer_open(trainer *tr, const model *m, odla_element_type et) {
  odla_value vars[kMaxVars], loss;
  const int failures_before = failures;
  int i;
  memset(tr, 0, sizeof *tr);
  tr->m = m;
  tr->et = et;
  CHECK(odla_CreateComputation(&tr->comp) == ODLA_SUCCESS, "CreateComputation");
  loss = m->build(m, et, vars);
  CHECK(loss != NULL, "%s: building failed", m->name);
  if (!loss)
    return 0;
  CHECK(odla_SetValueAsOutput(loss) == ODLA_SUCCESS, "SetValueAsOutput");
  CHECK(odla_DifferentiateComputation(tr->comp) == ODLA_SUCCESS, "%s: differentiating failed",
        m->name);
  CHECK(odla_CompileComputation(tr->comp, NULL, &tr->exe) == ODLA_SUCCESS, "%s: compiling failed",
        m->name);
  CHECK(odla_CreateContext(&tr->ctx) == ODLA_SUCCESS, "CreateContext");
  for (i = 0; i < m->num_vars; ++i) {
    tr->var[i] = typed(et, m->var[i], count(&m->var_shape[i]));
    tr->grad[i] = typed(et, NULL, count(&m->var_shape[i]));
  }
  tr->x = typed(et, m->x, count(&m->x_shape));
  tr->t = typed(et, m->t, count(&m->t_shape));
  tr->loss = typed(et, NULL, 1);
  trainer_bind(tr, tr->ctx);
  return failures == failures_before;
}

static void trainer_close(trainer *tr) {
  int i;
  odla_DestroyContext(tr->ctx);
  odla_DestroyExecutable(tr->exe);
  odla_DestroyComputation(tr->comp);
  for (i = 0; i < kMaxVars; ++i) {
    free(tr->var[i]);
    free(tr->grad[i]);
  }
  free(tr->x);
  free(tr->t);
  free(tr->loss);
}

static double run(trainer *tr, odla_compute_mode mode) {
  odla_status s = odla_ExecuteComputation(tr->comp, tr->ctx, mode, NULL);
  CHECK(s == ODLA_SUCCESS, "%s: execution (mode %d) failed: %d", tr->m->name, (int)mode, (int)s);
  return get(tr->et, tr->loss, 0);
}

/* Load mode: the trainer's executable stored to a file and loaded back, launched (a launch
 * has no mode: both passes run), gives the compile-mode loss and gradients bit for bit. */
static const char *scratch_dir = ".";
static void check_stored(trainer *tr) {
  odla_resource_location loc;
  odla_executable exe;
  odla_context ctx;
  char path[4096];
  void *want[kMaxVars], *want_loss = typed(tr->et, NULL, 1);
  size_t bytes[kMaxVars], elem = tr->et == ODLA_FLOAT64 ? 8 : 4;
  int i;
  run(tr, ODLA_COMPUTE_TRAINING);
  memcpy(want_loss, tr->loss, elem);
  for (i = 0; i < tr->m->num_vars; ++i) {
    bytes[i] = elem * (size_t)count(&tr->m->var_shape[i]);
    want[i] = malloc(bytes[i]);
    memcpy(want[i], tr->grad[i], bytes[i]);
    memset(tr->grad[i], 0, bytes[i]);
  }
  memset(tr->loss, 0, elem);
  snprintf(path, sizeof path, "%s/trained.odlx", scratch_dir);
  memset(&loc, 0, sizeof loc);
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  CHECK(odla_StoreExecutable(loc, tr->exe) == ODLA_SUCCESS, "%s: storing failed", tr->m->name);
  CHECK(odla_LoadExecutable(loc, NULL, &exe) == ODLA_SUCCESS, "%s: loading failed", tr->m->name);
  odla_CreateContext(&ctx);
  trainer_bind(tr, ctx);
  CHECK(odla_LaunchExecutable(exe, ctx) == ODLA_SUCCESS, "%s: launching failed", tr->m->name);
  CHECK(memcmp(want_loss, tr->loss, elem) == 0, "%s: the loaded executable's loss differs",
        tr->m->name);
  for (i = 0; i < tr->m->num_vars; ++i) {
    CHECK(memcmp(want[i], tr->grad[i], bytes[i]) == 0,
          "%s: the loaded executable's gradient of %s differs", tr->m->name, tr->m->var_id[i]);
    free(want[i]);
  }
  free(want_loss);
  odla_DestroyContext(ctx);
  odla_DestroyExecutable(exe);
}

/* --dump DIR: each float64 model's data and ODLA's loss and gradients as raw files in
 * DIR/<key>/ (<name>.bin, <variable>.grad.bin), for tests/e2e/test_training_torch.py. */
static const char *dump_dir;
static void dump(const char *key, const char *name, const void *p, size_t bytes) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s/%s.bin", dump_dir, key, name);
  f = fopen(path, "wb");
  CHECK(f && fwrite(p, 1, bytes, f) == bytes && fclose(f) == 0, "cannot write %s", path);
}

static void dump_trainer(const trainer *tr) {
  const model *m = tr->m;
  char name[64];
  int i;
  for (i = 0; i < m->num_vars; ++i) {
    const size_t bytes = 8 * (size_t)count(&m->var_shape[i]);
    dump(m->key, m->var_id[i], tr->var[i], bytes);
    snprintf(name, sizeof name, "%s.grad", m->var_id[i]);
    dump(m->key, name, tr->grad[i], bytes);
  }
  dump(m->key, "x", tr->x, 8 * (size_t)count(&m->x_shape));
  dump(m->key, "t", tr->t, 8 * (size_t)count(&m->t_shape));
  dump(m->key, "labels", m->labels, 8 * (size_t)count(&m->t_shape));
  dump(m->key, "loss", tr->loss, 8);
}

/* Every gradient element of a float64 model against central differences of the loss. */
static void check_gradients(const model *m) {
  trainer tr;
  double loss, worst = 0.0;
  const double h = 1e-6;
  int i, bad = 0;
  int64_t k;
  if (!trainer_open(&tr, m, ODLA_FLOAT64))
    return;
  loss = run(&tr, ODLA_COMPUTE_TRAINING);
  if (dump_dir)
    dump_trainer(&tr);
  CHECK(fabs(run(&tr, ODLA_COMPUTE_INFERENCE) - loss) == 0.0,
        "%s: inference gives another loss than training", m->name);
  for (i = 0; i < m->num_vars; ++i) {
    const size_t bytes = sizeof(double) * (size_t)count(&m->var_shape[i]);
    double *w = (double *)tr.var[i], *g = (double *)tr.grad[i], *g0 = (double *)malloc(bytes);
    memcpy(g0, g, bytes);
    for (k = 0; k < count(&m->var_shape[i]); ++k) {
      const double w0 = w[k];
      double up, down, fd, err;
      w[k] = w0 + h;
      up = run(&tr, ODLA_COMPUTE_INFERENCE);
      w[k] = w0 - h;
      down = run(&tr, ODLA_COMPUTE_INFERENCE);
      w[k] = w0;
      fd = (up - down) / (2 * h);
      err = fabs(fd - g0[k]) / (1.0 + fabs(fd));
      worst = err > worst ? err : worst;
      if (err > 1e-6 && bad++ < 10)
        CHECK(0, "%s: d loss / d %s[%lld] = %.10g, finite differences %.10g", m->name, m->var_id[i],
              (long long)k, g0[k], fd);
    }
    CHECK(memcmp(g0, g, bytes) == 0, "%s: inference mode overwrote the gradient of %s", m->name,
          m->var_id[i]);
    free(g0);
  }
  printf("%-28s float64: loss %.6f, worst gradient error vs central differences %.2e\n", m->name,
         loss, worst);
  check_stored(&tr);
  trainer_close(&tr);
}

/* float32 gradients against float64 ones, then SGD: the loss must fall. */
static void check_float32_and_sgd(const model *m, int steps, double lr) {
  trainer t32, t64;
  double first, last = 0.0, worst = 0.0;
  int i, s;
  int64_t k;
  if (!trainer_open(&t32, m, ODLA_FLOAT32) || !trainer_open(&t64, m, ODLA_FLOAT64))
    return;
  for (i = 0; i < m->num_vars; ++i) /* the float64 model at the float32 weights */
    for (k = 0; k < count(&m->var_shape[i]); ++k)
      set(ODLA_FLOAT64, t64.var[i], k, get(ODLA_FLOAT32, t32.var[i], k));
  for (k = 0; k < count(&m->x_shape); ++k)
    set(ODLA_FLOAT64, t64.x, k, get(ODLA_FLOAT32, t32.x, k));
  for (k = 0; t64.t && k < count(&m->t_shape); ++k)
    set(ODLA_FLOAT64, t64.t, k, get(ODLA_FLOAT32, t32.t, k));
  first = run(&t32, ODLA_COMPUTE_TRAINING);
  CHECK(fabs(first - run(&t64, ODLA_COMPUTE_TRAINING)) < 1e-5, "%s: float32 loss differs", m->name);
  for (i = 0; i < m->num_vars; ++i)
    for (k = 0; k < count(&m->var_shape[i]); ++k) {
      double a = get(ODLA_FLOAT32, t32.grad[i], k), b = get(ODLA_FLOAT64, t64.grad[i], k);
      double err = fabs(a - b) / (1e-3 + fabs(b));
      worst = err > worst ? err : worst;
      CHECK(err < 1e-3, "%s: float32 d loss / d %s[%lld] = %g, float64 %g", m->name, m->var_id[i],
            (long long)k, a, b);
    }
  for (s = 0; s < steps; ++s) {
    last = run(&t32, ODLA_COMPUTE_TRAINING);
    for (i = 0; i < m->num_vars; ++i) /* the application's optimizer step, in place */
      for (k = 0; k < count(&m->var_shape[i]); ++k)
        set(ODLA_FLOAT32, t32.var[i], k,
            get(ODLA_FLOAT32, t32.var[i], k) - lr * get(ODLA_FLOAT32, t32.grad[i], k));
  }
  last = run(&t32, ODLA_COMPUTE_INFERENCE);
  printf("%-28s float32: gradients vs float64 %.2e; SGD %d steps: loss %.6f -> %.6f\n", m->name,
         worst, steps, first, last);
  CHECK(last < 0.5 * first, "%s: %d SGD steps took the loss from %g to %g only", m->name, steps,
        first, last);
  trainer_close(&t32);
  trainer_close(&t64);
}

/* ---- Misuse ---------------------------------------------------------------------------- */

static char last_error[512];
static void keep_error(const char *file, int line, const char *func, odla_log_level level,
                       const char *msg) {
  (void)file, (void)line, (void)level;
  snprintf(last_error, sizeof last_error, "%s: %s", func, msg);
}

static void check_refusals(void) {
  odla_computation comp;
  odla_context ctx;
  odla_value w, x, y;
  odla_executable exe;
  float xd[6] = {1, 2, 3, 4, 5, 6}, wd[6] = {1, 0, 0, 1, 1, 1}, yd[4], gd[6];
  odla_SetLogger(keep_error);

  /* A loss of several elements. */
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  w = odla_CreateVariable(vtype(ODLA_FLOAT32, shape(2, 3, 2, 0, 0)), ID("w"));
  y = odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y"));
  odla_SetValueAsOutput(y);
  CHECK(odla_DifferentiateComputation(comp) != ODLA_SUCCESS, "a [2,2] loss was accepted");
  CHECK(strstr(last_error, "one float32 or float64 element") != NULL, "message: %s", last_error);
  odla_DestroyComputation(comp);

  /* Two outputs. */
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  w = odla_CreateVariable(vtype(ODLA_FLOAT32, shape(2, 3, 2, 0, 0)), ID("w"));
  y = odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y"));
  odla_SetValueAsOutput(odla_ReduceSum(y, 2, both_axes, 0, any_shape(), ID("a")));
  odla_SetValueAsOutput(odla_ReduceMean(y, 2, both_axes, 0, any_shape(), ID("b")));
  CHECK(odla_DifferentiateComputation(comp) != ODLA_SUCCESS, "two outputs were accepted");
  CHECK(strstr(last_error, "2 outputs") != NULL, "message: %s", last_error);
  odla_DestroyComputation(comp);

  /* An op without a gradient rule between the variable and the loss. */
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  w = odla_CreateVariable(vtype(ODLA_FLOAT32, shape(2, 3, 2, 0, 0)), ID("w"));
  y = odla_Sigmoid(odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y")), ID("s"));
  odla_SetValueAsOutput(odla_ReduceSum(y, 2, both_axes, 0, any_shape(), ID("loss")));
  CHECK(odla_DifferentiateComputation(comp) == ODLA_UNSUPPORTED_OP,
        "Sigmoid without a gradient rule was accepted");
  CHECK(strstr(last_error, "op Sigmoid has no gradient rule") != NULL &&
            strstr(last_error, "'s'") != NULL,
        "message: %s", last_error);
  CHECK(odla_CompileComputation(comp, NULL, &exe) != ODLA_SUCCESS,
        "a computation whose differentiation failed compiled");
  odla_DestroyComputation(comp);

  /* Training a computation that was not differentiated; inference of one that was, with the
   * gradients unbound. */
  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  w = odla_CreateVariable(vtype(ODLA_FLOAT32, shape(2, 3, 2, 0, 0)), ID("w"));
  y = odla_ReduceSum(odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y")), 2, both_axes, 0,
                     any_shape(), ID("loss"));
  odla_SetValueAsOutput(y);
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), xd, ctx);
  odla_BindToArgumentById(ID("w"), wd, ctx);
  odla_BindToOutputById(ID("loss"), yd, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_TRAINING, NULL) != ODLA_SUCCESS,
        "training without odla_DifferentiateComputation was accepted");
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);

  odla_CreateComputation(&comp);
  x = odla_CreateArgument(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  w = odla_CreateVariable(vtype(ODLA_FLOAT32, shape(2, 3, 2, 0, 0)), ID("w"));
  y = odla_ReduceSum(odla_Gemm(x, 0, w, 0, 1.0f, 0.0f, NULL, any_shape(), ID("y")), 2, both_axes, 0,
                     any_shape(), ID("loss"));
  odla_SetValueAsOutput(y);
  CHECK(odla_DifferentiateComputation(comp) == ODLA_SUCCESS, "differentiating failed");
  CHECK(odla_DifferentiateComputation(comp) != ODLA_SUCCESS, "differentiated twice");
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), xd, ctx);
  odla_BindToArgumentById(ID("w"), wd, ctx);
  odla_BindToOutputById(ID("loss"), yd, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS &&
            yd[0] == 30, /* x w = [[4, 5], [10, 11]] */
        "inference of a differentiated computation: loss %g", yd[0]);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_TRAINING, NULL) != ODLA_SUCCESS,
        "training with the gradient output unbound was accepted");
  odla_BindToOutputById(ID("w:grad"), gd, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_TRAINING, NULL) == ODLA_SUCCESS,
        "training failed");
  /* d sum(x w) / d w[k][j] = sum over rows i of x[i][k]: 5, 7, 9 for each column. */
  CHECK(gd[0] == 5 && gd[1] == 5 && gd[2] == 7 && gd[3] == 7 && gd[4] == 9 && gd[5] == 9,
        "w:grad = %g %g %g %g %g %g", gd[0], gd[1], gd[2], gd[3], gd[4], gd[5]);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);

  /* Interpret mode: its ops ran as they were built. */
  odla_CreateComputation(&comp);
  x = odla_CreateValue(vtype(ODLA_FLOAT32, shape(2, 2, 3, 0, 0)), ID("x"));
  odla_SetValueData(x, xd);
  odla_ReduceSum(odla_Relu(x, ID("r")), 2, both_axes, 0, any_shape(), ID("loss"));
  CHECK(odla_DifferentiateComputation(comp) == ODLA_INVALID_PARAM,
        "interpret mode was differentiated");
  CHECK(strstr(last_error, "interpret mode") != NULL, "message: %s", last_error);
  odla_DestroyComputation(comp);
  odla_SetLogger(NULL);
}

int main(int argc, char **argv) {
  static model m;
  int cnn, fused;
  if (argc >= 2)
    scratch_dir = argv[1];
  if (argc == 4 && strcmp(argv[2], "--dump") == 0)
    dump_dir = argv[3];
  for (cnn = 0; cnn < 2; ++cnn)
    for (fused = 0; fused < 2; ++fused) {
      init_model(&m, cnn, fused);
      check_gradients(&m);
      check_float32_and_sgd(&m, 30, cnn ? 0.1 : 0.5);
    }
  init_zoo(&m);
  check_gradients(&m);
  check_refusals();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  return failures != 0;
}
