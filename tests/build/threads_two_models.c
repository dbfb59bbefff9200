/* Two models, and two instances of one of them, in one program, running from two threads at
 * once (tests/build/test_build.py). Models: `cnn` and `mlp`, compiled by odlac with those
 * names. Thread t creates its own instance of each model and runs both REPEAT times on its
 * inputs; every run must agree with the first within float32 rounding (bit for bit on the
 * reference backend; libodla_dnnl, with no thread count set, may move a computation between its
 * default count and one thread, whose kernels sum in another order). The last outputs are written
 * to OUTDIR/{cnn,mlp}_<t>.bin for the test to compare with PyTorch.
 *
 *   threads_two_models CNN_IN_0 MLP_IN_0 CNN_IN_1 MLP_IN_1 OUTDIR */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "mlp.h"

#define REPEAT 40

struct job {
  int index;
  float cnn_in[CNN_INPUT_0_COUNT], cnn_out[CNN_OUTPUT_0_COUNT];
  float mlp_in[MLP_INPUT_0_COUNT], mlp_out[MLP_OUTPUT_0_COUNT];
  int status;
};

static int read_floats(const char *path, float *out, size_t count) {
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(out, sizeof *out, count, f) : 0;
  if (f)
    fclose(f);
  return got == count ? 0 : -1;
}

/* Whether got agrees with first within float32 rounding. */
static int agrees(const float *first, const float *got, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (!(fabsf(got[i] - first[i]) <= 1e-5f * (fabsf(first[i]) + 1.0f)))
      return 0;
  return 1;
}

static void *run_job(void *arg) {
  struct job *j = (struct job *)arg;
  float cnn_first[CNN_OUTPUT_0_COUNT], mlp_first[MLP_OUTPUT_0_COUNT];
  cnn_instance *cnn_model = NULL;
  mlp_instance *mlp_model = NULL;
  int r;
  j->status = cnn_create(&cnn_model);
  if (j->status == 0)
    j->status = mlp_create(&mlp_model);
  for (r = 0; r < REPEAT && j->status == 0; ++r) {
    j->status = cnn_run(cnn_model, j->cnn_in, j->cnn_out);
    if (j->status == 0)
      j->status = mlp_run(mlp_model, j->mlp_in, j->mlp_out);
    if (j->status != 0)
      break;
    if (r == 0) {
      memcpy(cnn_first, j->cnn_out, sizeof cnn_first);
      memcpy(mlp_first, j->mlp_out, sizeof mlp_first);
    } else if (!agrees(cnn_first, j->cnn_out, CNN_OUTPUT_0_COUNT) ||
               !agrees(mlp_first, j->mlp_out, MLP_OUTPUT_0_COUNT)) {
      fprintf(stderr, "thread %d: run %d differs from the first\n", j->index, r);
      j->status = -1;
    }
  }
  mlp_destroy(mlp_model);
  cnn_destroy(cnn_model);
  return NULL;
}

static int write_floats(const char *dir, const char *model, int t, const float *v, size_t n) {
  char path[4096];
  FILE *f;
  int ok;
  snprintf(path, sizeof path, "%s/%s_%d.bin", dir, model, t);
  f = fopen(path, "wb");
  ok = f && fwrite(v, sizeof *v, n, f) == n;
  if (f)
    ok &= fclose(f) == 0;
  return ok ? 0 : -1;
}

int main(int argc, char **argv) {
  static struct job jobs[2];
  pthread_t threads[2];
  int t, status = 0;
  if (argc != 6) {
    fprintf(stderr, "usage: %s CNN_IN_0 MLP_IN_0 CNN_IN_1 MLP_IN_1 OUTDIR\n", argv[0]);
    return 2;
  }
  for (t = 0; t < 2; ++t) {
    jobs[t].index = t;
    if (read_floats(argv[1 + 2 * t], jobs[t].cnn_in, CNN_INPUT_0_COUNT) != 0 ||
        read_floats(argv[2 + 2 * t], jobs[t].mlp_in, MLP_INPUT_0_COUNT) != 0) {
      fprintf(stderr, "cannot read the inputs of thread %d\n", t);
      return 1;
    }
  }
  for (t = 0; t < 2; ++t)
    if (pthread_create(&threads[t], NULL, run_job, &jobs[t]) != 0)
      return 1;
  for (t = 0; t < 2; ++t)
    pthread_join(threads[t], NULL);
  for (t = 0; t < 2; ++t) {
    if (jobs[t].status != 0) {
      fprintf(stderr, "thread %d failed with status %d\n", t, jobs[t].status);
      status = 1;
    } else if (write_floats(argv[5], "cnn", t, jobs[t].cnn_out, CNN_OUTPUT_0_COUNT) != 0 ||
               write_floats(argv[5], "mlp", t, jobs[t].mlp_out, MLP_OUTPUT_0_COUNT) != 0) {
      status = 1;
    }
  }
  return status;
}
