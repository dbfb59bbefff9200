/* The reference backend's memory regions (memory.c, odla_ext_memory.h) and its own message
 * formatter (format.c), both compiled here as a microcontroller build compiles them
 * (ODLA_REFERENCE_NO_HEAP, ODLA_REFERENCE_NO_STDIO, no threads):
 * - random allocations, reallocations and frees against a model of the live blocks: every
 *   block inside its region, aligned, disjoint from the others and keeping its bytes; all
 *   freed, the region is one free block again (one allocation of nearly all of it succeeds);
 *   the reported peak is the highest end of a block; no region and a full one fail;
 * - region rules: overlap and a ninth region refused, a region given again keeps its blocks,
 *   blocks go back to their own region whatever region is current, release only when empty;
 * - the formatter against the C library's snprintf on every conversion the backend uses. */
#include "check.h"

#include <ODLA/odla_ext.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *ref_malloc(size_t bytes);
void *ref_calloc(size_t count, size_t size);
void *ref_realloc(void *p, size_t bytes);
void ref_free(void *p);
int ref_snprintf(char *buf, size_t cap, const char *fmt, ...);

enum { BYTES = 1 << 16, LIVE = 64 };

static unsigned char region[BYTES + 8], other[4096];

typedef struct {
  unsigned char *p;
  size_t n;
  unsigned char tag;
} block;

static void fill(block *b) {
  size_t i;
  for (i = 0; i < b->n; ++i)
    b->p[i] = (unsigned char)(b->tag + i * 7);
}

static int intact(const block *b, size_t n) {
  size_t i;
  for (i = 0; i < n && i < b->n; ++i)
    if (b->p[i] != (unsigned char)(b->tag + i * 7))
      return 0;
  return 1;
}

static void random_use(unsigned char *base, size_t bytes) {
  block live[LIVE];
  size_t in_use, peak, highest = 0;
  int i, j, step;
  unsigned seed = 12345;
  void *big;
  memset(live, 0, sizeof live);
  CHECK(odla_ExtSetMemory(base, bytes) == ODLA_SUCCESS, "set region");
  for (step = 0; step < 20000; ++step) {
    block *b;
    seed = seed * 1103515245u + 12345u;
    b = &live[(seed >> 8) % LIVE];
    if (!b->p || (seed >> 20) % 3 == 0) {
      size_t n = 1 + (seed >> 4) % ((seed >> 24) % 4 == 0 ? 4000 : 200);
      if (b->p) {
        CHECK(intact(b, b->n), "step %d: a block lost its bytes before realloc", step);
        {
          unsigned char *q = (unsigned char *)ref_realloc(b->p, n);
          if (!q)
            continue; /* full: the old block stays */
          b->p = q;
        }
        CHECK(intact(b, n), "step %d: realloc from %lu to %lu bytes lost bytes", step,
              (unsigned long)b->n, (unsigned long)n);
      } else if (!(b->p = (unsigned char *)ref_malloc(n))) {
        continue;
      }
      b->n = n;
      b->tag = (unsigned char)(seed >> 13);
      fill(b);
      CHECK((uintptr_t)b->p % (2 * sizeof(size_t)) == 0, "step %d: misaligned block", step);
      CHECK(b->p >= base && b->p + n <= base + bytes, "step %d: block outside the region", step);
      if ((size_t)(b->p + n - base) > highest)
        highest = (size_t)(b->p + n - base);
    } else {
      CHECK(intact(b, b->n), "step %d: a block lost its bytes", step);
      ref_free(b->p);
      b->p = NULL;
    }
    if (step % 997 == 0)
      for (i = 0; i < LIVE; ++i)
        for (j = i + 1; j < LIVE; ++j)
          if (live[i].p && live[j].p)
            CHECK(live[i].p + live[i].n <= live[j].p || live[j].p + live[j].n <= live[i].p,
                  "step %d: blocks %d and %d overlap", step, i, j);
  }
  CHECK(odla_ExtGetMemoryUse(base, &in_use, &peak) == ODLA_SUCCESS, "use");
  CHECK(peak >= highest && peak <= bytes, "peak %lu, highest block end %lu", (unsigned long)peak,
        (unsigned long)highest);
  for (i = 0; i < LIVE; ++i)
    if (live[i].p) {
      CHECK(intact(&live[i], live[i].n), "block %d lost its bytes", i);
      ref_free(live[i].p);
    }
  CHECK(odla_ExtGetMemoryUse(base, &in_use, &peak) == ODLA_SUCCESS && in_use == 0,
        "%lu bytes in use after freeing all", (unsigned long)in_use);
  big = ref_malloc(bytes - 64);
  CHECK(big != NULL, "the emptied region is not one free block again");
  CHECK(ref_malloc(bytes) == NULL, "an allocation larger than the region succeeded");
  ref_free(big);
  CHECK(odla_ExtReleaseMemory(base) == ODLA_SUCCESS, "release");
}

static void region_rules(void) {
  static unsigned char many[9][256];
  size_t in_use, peak;
  void *a, *b;
  int i;
  CHECK(odla_ExtSetMemory(NULL, 0) == ODLA_SUCCESS, "no region");
  CHECK(ref_malloc(16) == NULL, "built without a heap, an allocation with no region succeeded");
  CHECK(odla_ExtSetMemory(NULL, 16) == ODLA_INVALID_PARAM, "NULL with bytes accepted");
  CHECK(odla_ExtSetMemory(other, 8) == ODLA_INVALID_PARAM, "an 8-byte region accepted");

  CHECK(odla_ExtSetMemory(region, 1024) == ODLA_SUCCESS, "set region");
  CHECK(odla_ExtSetMemory(region + 512, 1024) == ODLA_INVALID_PARAM, "overlap accepted");
  a = ref_calloc(10, 10);
  CHECK(a && ((unsigned char *)a)[99] == 0, "calloc");
  CHECK(ref_calloc((size_t)-1, 16) == NULL, "calloc overflow");
  CHECK(odla_ExtSetMemory(other, sizeof other) == ODLA_SUCCESS, "second region");
  b = ref_malloc(100);
  CHECK((unsigned char *)b >= other && (unsigned char *)b < other + sizeof other,
        "allocated outside the current region");
  ref_free(a); /* into `region`, though `other` is current */
  CHECK(odla_ExtGetMemoryUse(region, &in_use, &peak) == ODLA_SUCCESS && in_use == 0,
        "a block went back to the current region, not its own");
  CHECK(odla_ExtReleaseMemory(other) == ODLA_FAILURE, "released a region with a block in use");
  ref_free(b);
  CHECK(odla_ExtSetMemory(region, 1024) == ODLA_SUCCESS, "region given again");
  a = ref_malloc(900);
  CHECK(odla_ExtSetMemory(region, 1024) == ODLA_SUCCESS && ref_malloc(900) == NULL,
        "a region given again lost its blocks");
  ref_free(a);
  CHECK(odla_ExtSetMemory(region, 2048) == ODLA_INVALID_PARAM, "a region resized while set");
  CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS &&
            odla_ExtReleaseMemory(other) == ODLA_SUCCESS,
        "release");
  for (i = 0; i < 9; ++i)
    CHECK(odla_ExtSetMemory(many[i], sizeof many[i]) == (i < 8 ? ODLA_SUCCESS : ODLA_MEM_ERROR),
          "region %d", i + 1);
  for (i = 0; i < 8; ++i)
    odla_ExtReleaseMemory(many[i]);
  CHECK(odla_ExtSetMemory(NULL, 0) == ODLA_SUCCESS, "no region");
}

static void same(const char *fmt, ...) {
  char want[256], got[256];
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  vsnprintf(want, sizeof want, fmt, ap);
  /* ref_snprintf is variadic; the cases pass through one va_list with the same arguments. */
  {
    extern int ref_vsnprintf(char *, size_t, const char *, va_list);
    ref_vsnprintf(got, sizeof got, fmt, ap2);
  }
  va_end(ap2);
  va_end(ap);
  CHECK(strcmp(want, got) == 0, "format '%s': the C library gives '%s', the backend '%s'", fmt,
        want, got);
}

static void formats(void) {
  char small[8];
  int n;
  same("plain text, no conversion");
  same("%d %d %d %i", 0, -1, 2147483647, -2147483647 - 1);
  same("%u %u %x %x", 0u, 4294967295u, 255u, 0xdeadbeefu);
  same("%ld %lu %lld %llu", -123456789L, 123456789UL, -9223372036854775807LL - 1,
       18446744073709551615ULL);
  same("%s and %.3s and %.64s", "words", "truncated", "short");
  same("'%c' 100%%", 'q');
  same("%g %g %g %g %g %g", 0.0, 1.0, -2.5, 0.1, 1e-5, 123456.0);
  same("%g %g %g %g", 1234567.0, 3.14159265358979, 1e30, -7.25e-12);
  same("%.9g %.9g %.9g", 0.1f * 1.0, 16777217.0, 1.0 / 3.0);
  same("%.0f %.0f %.0f %.0f %.0f", 0.0, 12345.0, 0.5, 2.5, 3.5);
  n = ref_snprintf(small, sizeof small, "%s", "longer than eight");
  CHECK(n == 17 && strcmp(small, "longer ") == 0, "truncation: %d, '%s'", n, small);
  n = ref_snprintf(NULL, 0, "%d", 12345);
  CHECK(n == 5, "length without a buffer: %d", n);
}

int main(void) {
  random_use(region + 8, BYTES);
  random_use(region + 3, 5000); /* unaligned and small: most allocations fail for room */
  region_rules();
  formats();
  return failures != 0;
}
