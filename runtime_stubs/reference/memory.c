/* memory.c: where every byte the reference backend allocates comes from (ref.h's ref_malloc,
 * ref_calloc, ref_realloc, ref_free): the C library's heap, or a region of memory the
 * application gave with odla_ExtSetMemory (odla_ext_memory.h), a static buffer on a
 * microcontroller. Built with ODLA_REFERENCE_NO_HEAP the backend never calls malloc or free:
 * regions are its only memory.
 *
 * A region is a list of blocks in address order, each a header (its size, the size of the block
 * before it, whether it is in use) and its bytes, allocated first-fit and merged with free
 * neighbours when freed: small, deterministic, and no bookkeeping outside the region. A block
 * is freed into the region that holds its address, whatever region is current then. */
#include "ref.h"
#include "threads.h"

#include <string.h>
#ifndef ODLA_REFERENCE_NO_HEAP
#include <stdlib.h>
#endif

enum { REF_MAX_REGIONS = 8 };

/* Block sizes and addresses are multiples of REF_UNIT (8 bytes on 32-bit targets, 16 on 64-bit:
 * what malloc aligns to), and a header is one unit. */
#define REF_UNIT (2 * sizeof(size_t))
typedef struct {
  size_t size; /* of the whole block, header included; bit 0: in use */
  size_t prev; /* size of the block before it (0 for the first) */
} ref_block;

typedef struct {
  unsigned char *base, *end; /* the blocks, REF_UNIT-aligned */
  unsigned char *given;      /* what odla_ExtSetMemory was given */
  size_t given_bytes;
  size_t in_use, peak; /* bytes of blocks in use; the highest end of one, from `given` */
} ref_region;

static ref_region ref_regions[REF_MAX_REGIONS];
static ref_region *ref_current_region;
static ref_mutex ref_memory_lock = REF_MUTEX_INITIALIZER;

static size_t ref_block_size(const ref_block *b) { return b->size & ~(size_t)1; }
static int ref_block_used(const ref_block *b) { return (int)(b->size & 1); }
static ref_block *ref_block_next(ref_block *b) {
  return (ref_block *)((unsigned char *)b + ref_block_size(b));
}

static void ref_region_init(ref_region *r) {
  ref_block *b = (ref_block *)r->base;
  b->size = (size_t)(r->end - r->base);
  b->prev = 0;
  r->in_use = 0;
}

/* Splits a block that is larger than `need` by at least two units, the rest becoming free. */
static void ref_block_split(ref_region *r, ref_block *b, size_t need) {
  size_t size = ref_block_size(b);
  ref_block *rest, *next;
  if (size - need < 2 * REF_UNIT)
    return;
  rest = (ref_block *)((unsigned char *)b + need);
  rest->size = size - need;
  rest->prev = need;
  b->size = need | (b->size & 1);
  next = ref_block_next(rest);
  if ((unsigned char *)next < r->end && !ref_block_used(next)) {
    rest->size += next->size; /* a block shrunk in place, before a free one */
    next = ref_block_next(rest);
  }
  if ((unsigned char *)next < r->end)
    next->prev = rest->size;
}

static void *ref_region_alloc(ref_region *r, size_t bytes) {
  ref_block *b;
  size_t need;
  if (bytes > (size_t)(r->end - r->base))
    return NULL;
  need = (bytes + REF_UNIT - 1) / REF_UNIT * REF_UNIT + REF_UNIT;
  for (b = (ref_block *)r->base; (unsigned char *)b < r->end; b = ref_block_next(b)) {
    size_t top;
    if (ref_block_used(b) || ref_block_size(b) < need)
      continue;
    ref_block_split(r, b, need);
    b->size |= 1;
    r->in_use += ref_block_size(b);
    top = (size_t)((unsigned char *)ref_block_next(b) - r->given);
    if (top > r->peak)
      r->peak = top;
    return b + 1;
  }
  return NULL;
}

static void ref_region_free(ref_region *r, void *p) {
  ref_block *b = (ref_block *)p - 1, *next;
  r->in_use -= ref_block_size(b);
  b->size &= ~(size_t)1;
  next = ref_block_next(b);
  if ((unsigned char *)next < r->end && !ref_block_used(next))
    b->size += next->size;
  if (b->prev) {
    ref_block *prev = (ref_block *)((unsigned char *)b - b->prev);
    if (!ref_block_used(prev)) {
      prev->size += b->size;
      b = prev;
    }
  }
  next = ref_block_next(b);
  if ((unsigned char *)next < r->end)
    next->prev = ref_block_size(b);
}

static ref_region *ref_region_of(const void *p) {
  int i;
  for (i = 0; i < REF_MAX_REGIONS; ++i)
    if (ref_regions[i].base && (const unsigned char *)p >= ref_regions[i].base &&
        (const unsigned char *)p < ref_regions[i].end)
      return &ref_regions[i];
  return NULL;
}

void *ref_malloc(size_t bytes) {
  void *p = NULL;
  ref_mutex_lock(&ref_memory_lock);
  if (ref_current_region)
    p = ref_region_alloc(ref_current_region, bytes ? bytes : 1);
#ifndef ODLA_REFERENCE_NO_HEAP
  else
    p = malloc(bytes ? bytes : 1);
#endif
  ref_mutex_unlock(&ref_memory_lock);
  return p;
}

int ref_memory_in_region(void) {
  int in;
  ref_mutex_lock(&ref_memory_lock);
  in = ref_current_region != NULL;
  ref_mutex_unlock(&ref_memory_lock);
  return in;
}

void *ref_temp_alloc(ref_temp *t, size_t count, size_t size) {
  const size_t room = t ? (size_t)(t->end - t->at) : 0;
  if (t && size && count <= room / size) {
    unsigned char *p = t->at;
    size_t bytes = (count * size + 15) / 16 * 16;
    t->at += bytes < room ? bytes : room;
    memset(p, 0, count * size);
    return p;
  }
  return ref_calloc(count, size);
}

void ref_temp_free(const ref_temp *t, void *p) {
  if (!t || (uintptr_t)p < (uintptr_t)t->base || (uintptr_t)p >= (uintptr_t)t->end)
    ref_free(p);
}

void *ref_calloc(size_t count, size_t size) {
  void *p;
  if (size && count > ((size_t)-1) / size)
    return NULL;
  if ((p = ref_malloc(count * size)) != NULL)
    memset(p, 0, count * size);
  return p;
}

void ref_free(void *p) {
  ref_region *r;
  if (!p)
    return;
  ref_mutex_lock(&ref_memory_lock);
  if ((r = ref_region_of(p)) != NULL)
    ref_region_free(r, p);
#ifndef ODLA_REFERENCE_NO_HEAP
  else
    free(p);
#endif
  ref_mutex_unlock(&ref_memory_lock);
}

void *ref_realloc(void *p, size_t bytes) {
  ref_region *r;
  void *q;
  size_t old;
  if (!p)
    return ref_malloc(bytes);
  ref_mutex_lock(&ref_memory_lock);
  r = ref_region_of(p);
  if (!r) {
#ifndef ODLA_REFERENCE_NO_HEAP
    q = realloc(p, bytes ? bytes : 1);
#else
    q = NULL; /* not a block of any region: nothing to grow */
#endif
    ref_mutex_unlock(&ref_memory_lock);
    return q;
  }
  {
    /* Grow in place into a free block after it where there is one. */
    ref_block *b = (ref_block *)p - 1, *next = ref_block_next(b);
    size_t need = (bytes + REF_UNIT - 1) / REF_UNIT * REF_UNIT + REF_UNIT;
    old = ref_block_size(b) - REF_UNIT;
    if (need > ref_block_size(b) && (unsigned char *)next < r->end && !ref_block_used(next) &&
        ref_block_size(b) + next->size >= need) {
      r->in_use += next->size;
      b->size += next->size;
      next = ref_block_next(b);
      if ((unsigned char *)next < r->end)
        next->prev = ref_block_size(b);
    }
    if (need <= ref_block_size(b)) {
      size_t before = ref_block_size(b), top;
      ref_block_split(r, b, need);
      r->in_use -= before - ref_block_size(b);
      top = (size_t)((unsigned char *)ref_block_next(b) - r->given);
      if (top > r->peak)
        r->peak = top;
      ref_mutex_unlock(&ref_memory_lock);
      return p;
    }
  }
  ref_mutex_unlock(&ref_memory_lock);
  /* Elsewhere in the current region (or the heap), then the old block is freed. */
  if ((q = ref_malloc(bytes)) != NULL) {
    memcpy(q, p, old < bytes ? old : bytes);
    ref_free(p);
  }
  return q;
}

/* The spare arena (ref.h): a block of the heap, never of a region. */
static void *ref_spare_arena;
static size_t ref_spare_bytes;
static long ref_live_computations;

void ref_arena_release(void *alloc, size_t bytes) {
  void *drop = alloc;
  if (!alloc)
    return;
  ref_mutex_lock(&ref_memory_lock);
  if (!ref_region_of(alloc) && ref_live_computations > 0 && bytes > ref_spare_bytes) {
    drop = ref_spare_arena;
    ref_spare_arena = alloc;
    ref_spare_bytes = bytes;
  }
  ref_mutex_unlock(&ref_memory_lock);
  ref_free(drop);
}

void *ref_arena_take(size_t bytes, size_t *got) {
  void *p = NULL, *q;
  size_t have = 0;
  ref_mutex_lock(&ref_memory_lock);
  if (ref_spare_arena && !ref_current_region) {
    p = ref_spare_arena;
    have = ref_spare_bytes;
    ref_spare_arena = NULL;
    ref_spare_bytes = 0;
  }
  ref_mutex_unlock(&ref_memory_lock);
  if (p && have < bytes) {
    /* Dims that grow a step at a time (a decoder's past length): an eighth more than asked,
     * and realloc keeps the pages it had (glibc moves a large block with mremap). */
    have = bytes + bytes / 8;
    if ((q = ref_realloc(p, have)) == NULL)
      ref_free(p);
    p = q;
  }
  if (!p && (p = ref_malloc(bytes)) != NULL)
    have = bytes;
  *got = have;
  return p;
}

int ref_count_computation(int delta) {
  void *drop = NULL;
  int last;
  ref_mutex_lock(&ref_memory_lock);
  ref_live_computations += delta;
  last = ref_live_computations <= 0;
  if (last) {
    drop = ref_spare_arena;
    ref_spare_arena = NULL;
    ref_spare_bytes = 0;
  }
  ref_mutex_unlock(&ref_memory_lock);
  ref_free(drop);
  return last;
}

odla_status odla_ExtSetMemory(odla_void *base, odla_size_t bytes) {
  ref_region *r = NULL;
  unsigned char *lo, *hi;
  int i;
  if (!base) {
    if (bytes)
      return ODLA_INVALID_PARAM;
    ref_mutex_lock(&ref_memory_lock);
    ref_current_region = NULL;
    ref_mutex_unlock(&ref_memory_lock);
    return ODLA_SUCCESS;
  }
  lo = (unsigned char *)(((uintptr_t)base + REF_UNIT - 1) / REF_UNIT * REF_UNIT);
  if ((uintptr_t)bytes < (uintptr_t)(lo - (unsigned char *)base) + 4 * REF_UNIT ||
      (uintptr_t)base + bytes < (uintptr_t)base)
    return ODLA_INVALID_PARAM; /* too small for one block, or past the end of memory */
  hi = lo + ((uintptr_t)base + bytes - (uintptr_t)lo) / REF_UNIT * REF_UNIT;
  ref_mutex_lock(&ref_memory_lock);
  for (i = 0; i < REF_MAX_REGIONS; ++i) {
    ref_region *x = &ref_regions[i];
    if (!x->base) {
      if (!r)
        r = x;
    } else if (x->given == (unsigned char *)base && x->given_bytes == bytes) {
      r = x; /* set again: its blocks stay */
      break;
    } else if (lo < x->end && x->base < hi) {
      ref_mutex_unlock(&ref_memory_lock);
      return ODLA_INVALID_PARAM; /* overlaps another region */
    }
  }
  if (!r) {
    ref_mutex_unlock(&ref_memory_lock);
    return ODLA_MEM_ERROR; /* REF_MAX_REGIONS are set */
  }
  if (!r->base) {
    r->base = lo;
    r->end = hi;
    r->given = (unsigned char *)base;
    r->given_bytes = bytes;
    r->peak = 0;
    ref_region_init(r);
  }
  ref_current_region = r;
  ref_mutex_unlock(&ref_memory_lock);
  return ODLA_SUCCESS;
}

odla_status odla_ExtGetMemoryUse(const odla_void *base, odla_size_t *in_use, odla_size_t *peak) {
  int i;
  odla_status s = ODLA_INVALID_PARAM;
  if (!base || !in_use || !peak)
    return ODLA_INVALID_PARAM;
  ref_mutex_lock(&ref_memory_lock);
  for (i = 0; i < REF_MAX_REGIONS; ++i)
    if (ref_regions[i].base && ref_regions[i].given == (const unsigned char *)base) {
      *in_use = ref_regions[i].in_use;
      *peak = ref_regions[i].peak;
      s = ODLA_SUCCESS;
    }
  ref_mutex_unlock(&ref_memory_lock);
  return s;
}

odla_status odla_ExtReleaseMemory(odla_void *base) {
  int i;
  odla_status s = ODLA_INVALID_PARAM;
  ref_mutex_lock(&ref_memory_lock);
  for (i = 0; i < REF_MAX_REGIONS; ++i) {
    ref_region *r = &ref_regions[i];
    if (!r->base || r->given != (unsigned char *)base)
      continue;
    if (r->in_use) {
      s = ODLA_FAILURE; /* blocks in use */
      break;
    }
    if (ref_current_region == r)
      ref_current_region = NULL;
    memset(r, 0, sizeof *r);
    s = ODLA_SUCCESS;
  }
  ref_mutex_unlock(&ref_memory_lock);
  return s;
}
