/* gomp_env.c: how long libodla_dnnl's OpenMP threads spin before they sleep, by default.
 *
 * oneDNN runs on libgomp, whose threads spin GOMP_SPINCOUNT rounds (300,000 unless the
 * environment says otherwise) after each parallel region before they sleep on a futex. On a
 * machine other processes keep busy that spinning takes the CPUs those processes and this
 * one's own main thread need: BERT-base at 2 threads beside two spinning processes ran
 * 360-449 ms by default, 181-196 ms with GOMP_SPINCOUNT=10000, at no cost on an idle machine
 * (docs/backends.md, "Threads"). libgomp reads its environment once, in its constructor, which
 * runs before any code of this library, so no function here can set it; it reads it with
 * getenv, which this library therefore defines: the environment's value, looked up as the C
 * library's getenv does, except that GOMP_SPINCOUNT reads "10000" while neither it nor
 * OMP_WAIT_POLICY is set. Whatever links libodla_dnnl (the shared library, found before the
 * C library, or the static one, whose members call getenv) gets the shorter spin; setting
 * either variable gives libgomp's own behaviour back. */
#include <string.h>

extern char **environ;

/* The spin count this library's programs default to. */
#define ODLA_DNNL_SPINCOUNT "10000"

static char *odla_dnnl_lookup(const char *name) {
  const size_t n = strlen(name);
  char **e;
  for (e = environ; e && *e; ++e)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
      return *e + n + 1;
  return NULL;
}

char *getenv(const char *name) {
  char *value = odla_dnnl_lookup(name);
  if (!value && strcmp(name, "GOMP_SPINCOUNT") == 0 && !odla_dnnl_lookup("OMP_WAIT_POLICY"))
    return (char *)ODLA_DNNL_SPINCOUNT;
  return value;
}
