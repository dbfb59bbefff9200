/* odla_ext_memory.h: memory the application gives the backend in place of the heap (beyond
 * ODLA 0.5). Included by odla_ext.h.
 *
 * On a microcontroller there may be no heap, or none the application wants a library to use.
 * A region is memory the application owns (a static buffer) that the backend allocates from
 * while the region is current: computations, values, executables, contexts, arenas and every
 * structure of its own. A block is returned to the region it came from when freed, whichever
 * region is current then. Regions and the current one are the process's, like the log level:
 * set the region before the calls that should allocate from it (odlac's --no-heap code does,
 * around each call of its API). The reference backend built with ODLA_REFERENCE_NO_HEAP has no
 * other memory: an allocation with no current region, or one the region cannot hold, fails
 * with ODLA_MEM_ERROR. */
#ifndef _ODLA_EXT_MEMORY_H_
#define _ODLA_EXT_MEMORY_H_

#include <ODLA/odla_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes [base, base + bytes) the current region, setting it up the first time it is given (up
 * to 8 regions, which must not overlap; ODLA_MEM_ERROR when 8 are set). Given again with the
 * same base and bytes it becomes current with its blocks kept. NULL and 0: no region is
 * current, and the backend allocates from the heap where it has one. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtSetMemory(odla_void *base,
                                                                   odla_size_t bytes);

/* The region's bytes in blocks now and the most it has needed since it was set: the highest
 * end of a block, counted from base (the size a buffer for the same calls needs). */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetMemoryUse(const odla_void *base,
                                                                      odla_size_t *in_use,
                                                                      odla_size_t *peak);

/* Forgets a region whose blocks are all free (ODLA_FAILURE while one is in use), so that its
 * memory may be given again, with another size, or used for something else. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtReleaseMemory(odla_void *base);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_MEMORY_H_ */
