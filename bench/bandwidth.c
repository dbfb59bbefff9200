/* Memory read bandwidth of this machine at a given thread count, for bench/decode.py's floor:
 * a decoding step that streams the weights can take no less than their bytes over this rate.
 *
 * Sums a 512 MiB float32 buffer of ones (not zeros: a hypervisor may map zero pages to one
 * page, which then reads from the cache), on transparent huge pages where the kernel gives
 * them, as libodla_dnnl's reordered weights are, split evenly over THREADS OpenMP threads, in
 * the widest vectors -march=native allows, 7 times; prints the best pass as
 * `read_gb_per_s=N threads=T` on stdout. Build and run:
 *   cc -O2 -march=native -fopenmp bench/bandwidth.c -o bw && ./bw THREADS */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define BYTES ((size_t)512 << 20)
#define PASSES 7
#define CHAINS 4 /* independent vector sums, so that the loads, not the adds, bound a pass */

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
typedef float vf __attribute__((vector_size(VBYTES)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  const size_t count = BYTES / sizeof(vf);
  vf *a = (vf *)aligned_alloc((size_t)2 << 20, BYTES);
  float sink = 0.0f;
  double best = 1e30;
  int pass;
  if (!a || threads < 1) {
    fprintf(stderr, "usage: bandwidth THREADS (and 512 MiB of memory)\n");
    return 1;
  }
  madvise(a, BYTES, MADV_HUGEPAGE);
  {
    float *f = (float *)a;
    size_t i;
    for (i = 0; i < BYTES / sizeof(float); ++i)
      f[i] = 1.0f;
  }
  for (pass = 0; pass < PASSES; ++pass) {
    double t0 = now(), t;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
      const size_t per = count / (size_t)omp_get_num_threads();
      const vf *p = a + per * (size_t)omp_get_thread_num();
      vf acc[CHAINS] = {{0}};
      size_t i;
      int c, l;
      for (i = 0; i + CHAINS <= per; i += CHAINS)
        for (c = 0; c < CHAINS; ++c)
          acc[c] += p[i + c];
      for (c = 0; c < CHAINS; ++c)
        for (l = 0; l < (int)(VBYTES / sizeof(float)); ++l)
          sink += acc[c][l];
    }
    t = now() - t0;
    best = t < best ? t : best;
  }
  printf("read_gb_per_s=%.1f threads=%d sink=%g\n", (double)BYTES / best / 1e9, threads, sink);
  free(a);
  return 0;
}
