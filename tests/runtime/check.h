/* check.h: the assertion the runtime test programs share. CHECK(cond, printf-args) reports a
 * failed condition with its place and counts it in `failures`; main returns failures != 0. */
#ifndef ODLAC_TESTS_RUNTIME_CHECK_H
#define ODLAC_TESTS_RUNTIME_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#endif
