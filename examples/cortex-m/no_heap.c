/* no_heap.c: the heap of this firmware, which must never be used: malloc and the rest (and
 * newlib's reentrant forms) report the call and end the run with status 4. The application,
 * the generated code and the reference backend built with ODLA_REFERENCE_NO_HEAP allocate
 * nothing; a call here would be a fault of one of them. */
#include "board.h"

#include <stddef.h>

void semihost_exit(int status);
struct _reent;

static void *heap_call(const char *name) {
  board_write("heap call: ");
  board_write(name);
  board_write("\n");
  semihost_exit(4);
  return NULL;
}

void *malloc(size_t n) { return (void)n, heap_call("malloc"); }
void *calloc(size_t n, size_t m) { return (void)n, (void)m, heap_call("calloc"); }
void *realloc(void *p, size_t n) { return (void)p, (void)n, heap_call("realloc"); }
void free(void *p) { (void)p, heap_call("free"); }
void *_malloc_r(struct _reent *r, size_t n) { return (void)r, (void)n, heap_call("_malloc_r"); }
void *_calloc_r(struct _reent *r, size_t n, size_t m) {
  return (void)r, (void)n, (void)m, heap_call("_calloc_r");
}
void *_realloc_r(struct _reent *r, void *p, size_t n) {
  return (void)r, (void)p, (void)n, heap_call("_realloc_r");
}
void _free_r(struct _reent *r, void *p) { (void)r, (void)p, heap_call("_free_r"); }
void *_sbrk(ptrdiff_t n) { return (void)n, heap_call("_sbrk"); }
