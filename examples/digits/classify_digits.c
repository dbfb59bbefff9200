/* classify_digits.c: the demo program. It uses the C API odlac generated for the digits
 * classifier (digits.h) to classify the held-out handwritten digits of models/digits,
 * prints a few of them with their predictions, the accuracy, and the time per inference.
 * Build: see scripts/demo.sh. Run: classify_digits models/digits/heldout.csv */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits.h"

#define MAX_IMAGES 2000
#define PIXELS 64
#define CLASSES 10
#define SHOWN 6

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Reads "label,p0,...,p63" lines (after a header line); returns the number of images. */
static int read_heldout(const char *path, int *labels, float (*pixels)[PIXELS]) {
  char line[1024];
  int n = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    return -1;
  }
  if (!fgets(line, sizeof line, f)) { /* header */
    fclose(f);
    return 0;
  }
  while (n < MAX_IMAGES && fgets(line, sizeof line, f)) {
    char *p = line, *end;
    int i;
    labels[n] = (int)strtol(p, &end, 10);
    for (i = 0; i < PIXELS && *end == ','; ++i) {
      p = end + 1;
      pixels[n][i] = strtof(p, &end);
    }
    if (i != PIXELS) {
      fprintf(stderr, "%s: line %d: expected %d pixels\n", path, n + 2, PIXELS);
      fclose(f);
      return -1;
    }
    ++n;
  }
  fclose(f);
  return n;
}

/* Prints an 8x8 image (values 0..16) as ASCII shades. */
static void draw(const float *img, int label, int predicted, float p) {
  static const char shades[] = " .:-=+*#%@";
  int r, c;
  printf("  true %d, predicted %d (p=%.3f)%s\n", label, predicted, p,
         label == predicted ? "" : "   <-- wrong");
  for (r = 0; r < 8; ++r) {
    printf("    ");
    for (c = 0; c < 8; ++c) {
      int s = (int)(img[r * 8 + c] / 16.0f * 9.0f + 0.5f);
      putchar(shades[s < 0 ? 0 : s > 9 ? 9 : s]);
      putchar(shades[s < 0 ? 0 : s > 9 ? 9 : s]);
    }
    putchar('\n');
  }
}

int main(int argc, char **argv) {
  static int labels[MAX_IMAGES];
  static float pixels[MAX_IMAGES][PIXELS];
  static double ms[MAX_IMAGES];
  float probs[CLASSES];
  digits_instance *net = NULL;
  int n, i, k, correct = 0, status;
  double total = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s heldout.csv\n", argv[0]);
    return 2;
  }
  n = read_heldout(argv[1], labels, pixels);
  if (n <= 0)
    return 1;
  status = digits_create(&net);
  if (status != 0) {
    fprintf(stderr, "digits_create failed: odla_status %d\n", status);
    return 1;
  }
  printf("Classifying %d held-out digits with the compiled model (%d bytes of weights, "
         "%d-byte arena):\n\n",
         n, DIGITS_WEIGHTS_BYTES, DIGITS_ARENA_BYTES);
  for (i = 0; i < n; ++i) {
    int best = 0;
    double t0 = now_ms();
    status = digits_run(net, pixels[i], probs);
    ms[i] = now_ms() - t0;
    total += ms[i];
    if (status != 0) {
      fprintf(stderr, "digits_run failed on image %d: odla_status %d\n", i, status);
      digits_destroy(net);
      return 1;
    }
    for (k = 1; k < CLASSES; ++k)
      if (probs[k] > probs[best])
        best = k;
    correct += best == labels[i];
    if (i < SHOWN)
      draw(pixels[i], labels[i], best, probs[best]);
  }
  digits_destroy(net);
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  printf("\naccuracy: %d/%d = %.2f%%\n", correct, n, 100.0 * correct / n);
  printf("time per inference: median %.4f ms, mean %.4f ms (reference backend, batch 1)\n",
         ms[n / 2], total / n);
  return 0;
}
