/* two_models: runs two odlac-compiled models in one program. Each model's library comes
 * from odlac_add_model() (see CMakeLists.txt); the symbols carry the model's name, so the
 * two live side by side.
 *
 *   two_models DIGITS_INPUT MLP_INPUT OUTDIR
 *
 * Inputs are raw little-endian float32 files of DIGITS_INPUT_0_COUNT and MLP_INPUT_0_COUNT
 * values; OUTDIR/digits_output.bin and OUTDIR/mlp_output.bin receive the raw outputs, and
 * each model's top class is printed. */
#include <stdio.h>
#include <stdlib.h>

#include "digits.h"
#include "mlp.h"

static int read_floats(const char *path, float *out, size_t count) {
  FILE *f = fopen(path, "rb");
  size_t got = 0;
  if (f) {
    got = fread(out, sizeof *out, count, f);
    if (fgetc(f) != EOF)
      got = 0; /* longer than the model's input */
    fclose(f);
  }
  if (got != count)
    fprintf(stderr, "%s: expected %lu float32 values\n", path, (unsigned long)count);
  return got == count ? 0 : -1;
}

static int write_floats(const char *dir, const char *name, const float *v, size_t count) {
  char path[4096];
  FILE *f;
  int ok;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  ok = f && fwrite(v, sizeof *v, count, f) == count;
  if (f)
    ok &= fclose(f) == 0;
  if (!ok)
    fprintf(stderr, "%s: cannot write\n", path);
  return ok ? 0 : -1;
}

static size_t argmax(const float *v, size_t n) {
  size_t best = 0, i;
  for (i = 1; i < n; ++i)
    if (v[i] > v[best])
      best = i;
  return best;
}

int main(int argc, char **argv) {
  static float digits_in[DIGITS_INPUT_0_COUNT], digits_out[DIGITS_OUTPUT_0_COUNT];
  static float mlp_in[MLP_INPUT_0_COUNT], mlp_out[MLP_OUTPUT_0_COUNT];
  digits_instance *digits_model = NULL;
  mlp_instance *mlp_model = NULL;
  int status;

  if (argc != 4) {
    fprintf(stderr, "usage: %s DIGITS_INPUT MLP_INPUT OUTDIR\n", argv[0]);
    return 2;
  }
  if (read_floats(argv[1], digits_in, DIGITS_INPUT_0_COUNT) != 0 ||
      read_floats(argv[2], mlp_in, MLP_INPUT_0_COUNT) != 0)
    return 1;

  status = digits_create(&digits_model);
  if (status == 0)
    status = mlp_create(&mlp_model);
  if (status == 0)
    status = digits_run(digits_model, digits_in, digits_out);
  if (status == 0)
    status = mlp_run(mlp_model, mlp_in, mlp_out);
  mlp_destroy(mlp_model);
  digits_destroy(digits_model);
  if (status != 0) {
    fprintf(stderr, "inference failed with odla_status %d\n", status);
    return 1;
  }

  printf("digits: class %lu\n", (unsigned long)argmax(digits_out, DIGITS_OUTPUT_0_COUNT));
  printf("mlp: class %lu\n", (unsigned long)argmax(mlp_out, MLP_OUTPUT_0_COUNT));
  if (write_floats(argv[3], "digits_output.bin", digits_out, DIGITS_OUTPUT_0_COUNT) != 0 ||
      write_floats(argv[3], "mlp_output.bin", mlp_out, MLP_OUTPUT_0_COUNT) != 0)
    return 1;
  return 0;
}
