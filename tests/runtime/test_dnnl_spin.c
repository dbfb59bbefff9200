/* libodla_dnnl's default OpenMP spin (runtime_stubs/dnnl/gomp_env.c): the getenv it defines
 * answers every name as the environment does, and GOMP_SPINCOUNT with 10000 while neither it
 * nor OMP_WAIT_POLICY is set. argv[1]: what getenv("GOMP_SPINCOUNT") must give ("unset" for
 * NULL). CTest runs it linked with the static and the shared library, under several
 * environments, with OMP_DISPLAY_ENV=verbose, and checks in libgomp's own report that it took
 * that value (tests/runtime/CMakeLists.txt). */
#include <ODLA/odla.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int failures;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

int main(int argc, char **argv) {
  const char *spin = getenv("GOMP_SPINCOUNT");
  const char *want = argc > 1 ? argv[1] : "10000";
  char **e;
  int threads = 0;
  odla_computation comp = NULL;
  /* Every variable reads as it is set (its first definition), and a missing one as NULL. */
  for (e = environ; *e; ++e) {
    char name[256];
    const char *eq = strchr(*e, '=');
    char **first;
    size_t n = eq ? (size_t)(eq - *e) : 0;
    if (!eq || n == 0 || n >= sizeof name)
      continue;
    memcpy(name, *e, n);
    name[n] = '\0';
    for (first = environ; strncmp(*first, name, n) != 0 || (*first)[n] != '='; ++first) {
    }
    check(getenv(name) == *first + n + 1, name);
  }
  check(getenv("ODLA_SPIN_TEST_SURELY_UNSET") == NULL, "an unset name reads NULL");
  check(strcmp(want, "unset") == 0 ? spin == NULL : spin && strcmp(spin, want) == 0,
        "GOMP_SPINCOUNT");
  /* The library's own code runs in this program: a computation, and an OpenMP region. */
  check(odla_CreateComputation(&comp) == ODLA_SUCCESS && comp, "odla_CreateComputation");
  if (comp)
    odla_DestroyComputation(comp);
#pragma omp parallel
  {
#pragma omp atomic
    ++threads;
  }
  check(threads >= 1, "an OpenMP region ran");
  printf("getenv(\"GOMP_SPINCOUNT\") = %s; %s\n", spin ? spin : "NULL",
         failures ? "failures" : "every check passed");
  return failures != 0;
}
