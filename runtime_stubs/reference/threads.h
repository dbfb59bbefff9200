/* threads.h: the reference backend's worker threads (threads.c). An execution with more than
 * one thread runs on a pool of POSIX threads, which the process keeps between executions
 * (ref_threads_prepare), so no op creates a thread. A kernel splits its work into independent
 * parts, typically disjoint blocks of its result, with ref_parallel; part 0 runs on the calling
 * thread, the others on the pool's workers, and the call returns when all are done.
 *
 * Scratch: thread 0 uses the node's arena scratch (ref_io.scratch). Each worker owns a
 * private buffer as large as the largest node scratch of the computation, in which a part
 * finds its own copy of any region of the node's scratch at the same offset. The arena plan is
 * therefore the same at every thread count: odlac's NET_ARENA_BYTES, a caller's ODLA_EXT_ITEM_ARENA
 * and stored executables do not depend on it.
 *
 * Thread count (ODLA_PROCESSOR_NUM, a pointer to an odla_int32 in 1..REF_MAX_THREADS): the
 * context item, else the computation item, else the OMP_NUM_THREADS environment variable
 * (its first number), else 1. Built with ODLA_REFERENCE_NO_THREADS (the CMake option
 * ODLA_REFERENCE_THREADS=OFF, for targets without POSIX threads) there is no pool: the item
 * accepts only 1 and everything runs on the calling thread. Built with REF_THREADS_OPENMP
 * (libodla_dnnl's copy) the pool starts no threads: ref_parallel runs the parts on the
 * calling thread's OpenMP team, the one oneDNN's primitives run on. */
#ifndef ODLA_REFERENCE_THREADS_H_
#define ODLA_REFERENCE_THREADS_H_

#include "ref.h"

enum { REF_MAX_THREADS = 256 };

typedef struct ref_threads ref_threads;

/* Process-wide locks of the backend's shared state (stored-executable key, custom-op
 * registry, profiler session): POSIX mutexes and condition variables, and nothing at all
 * built with ODLA_REFERENCE_NO_THREADS (no other thread can hold a lock or signal). */
#ifdef ODLA_REFERENCE_NO_THREADS
typedef int ref_mutex;
typedef int ref_cond;
#define REF_MUTEX_INITIALIZER 0
#define REF_COND_INITIALIZER 0
static inline void ref_mutex_lock(ref_mutex *m) { (void)m; }
static inline void ref_mutex_unlock(ref_mutex *m) { (void)m; }
static inline void ref_cond_wait(ref_cond *c, ref_mutex *m) { (void)c, (void)m; }
static inline void ref_cond_broadcast(ref_cond *c) { (void)c; }
#else
#include <pthread.h>
typedef pthread_mutex_t ref_mutex;
typedef pthread_cond_t ref_cond;
#define REF_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define REF_COND_INITIALIZER PTHREAD_COND_INITIALIZER
static inline void ref_mutex_lock(ref_mutex *m) { pthread_mutex_lock(m); }
static inline void ref_mutex_unlock(ref_mutex *m) { pthread_mutex_unlock(m); }
static inline void ref_cond_wait(ref_cond *c, ref_mutex *m) { pthread_cond_wait(c, m); }
static inline void ref_cond_broadcast(ref_cond *c) { pthread_cond_broadcast(c); }
#endif

/* Checks an ODLA_PROCESSOR_NUM item value for `func` (logging why it is refused) and
 * stores the count in *threads. */
odla_status ref_threads_item(const char *func, odla_item_value value, int *threads);

/* Before executing `comp` on `ctx`: a pool of the thread count in effect with room for comp's
 * largest node scratch, in *pool, or NULL for one thread. The pools are the process's, not a
 * context's: one that no execution runs on waits in a list for the next (of its thread count),
 * so a model run as several computations one after another (odlac's --dim stages) runs on one
 * pool's threads, where a pool per context would start threads with each new context and
 * leave each pool's workers spinning against the next one's. ref_threads_done gives it back;
 * the waiting pools are freed with the last computation (ref_threads_free_idle). */
odla_status ref_threads_prepare(odla_computation comp, odla_context ctx, ref_threads **pool);
void ref_threads_done(ref_threads *pool);
void ref_threads_free_idle(void);

/* The pool a kernel may use during this node's run, or NULL (one thread). */
ref_threads *ref_io_threads(const ref_io *io);
/* How many threads `pool` runs (1 for NULL). */
int ref_threads_count(const ref_threads *pool);

/* part(arg, index, parts, scratch) for index in [0, parts) (parts <= the pool's count),
 * each on its own thread; scratch is thread index's copy of the node's scratch `scratch0`
 * (scratch0 itself for index 0). Returns when every part has returned. */
typedef void (*ref_part_fn)(void *arg, int index, int parts, unsigned char *scratch);
void ref_parallel(ref_threads *pool, int parts, ref_part_fn part, void *arg,
                  unsigned char *scratch0);

/* memcpy of n bytes, split over the node's threads from REF_PARALLEL_COPY_MIN bytes on (a
 * decoder's key/value cache), on the calling thread below. (A GPT-2-sized decoder at context
 * 128, 2 threads: its Concats of a layer's cache, 396 KB each, took 0.73 ms a step on one
 * thread from 1 MiB on, 0.66 split.) */
#define REF_PARALLEL_COPY_MIN ((size_t)1 << 18)
void ref_parallel_copy(const ref_io *io, void *dst, const void *src, size_t n);

/* [*lo, *hi): part `index` of `parts` of [0, n) in whole units of `unit`, the parts as even
 * as the unit allows. */
void ref_split(int64_t n, int64_t unit, int index, int parts, int64_t *lo, int64_t *hi);

#endif /* ODLA_REFERENCE_THREADS_H_ */
