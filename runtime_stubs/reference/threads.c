/* threads.c: the reference backend's worker pools (see threads.h), kept by the process between
 * the executions that run with more than one thread, their workers parked on a condition variable
 * between parallel parts. Before parking, a worker waiting for the next part and the caller waiting
 * for the workers spin a short while (REF_SPIN_ROUNDS pauses, tens of microseconds): a model's next
 * parallel op usually comes within microseconds, and a parked thread's wake-up costs about as
 * long as a small op (on a 2-core VM, an int8 convolution of 1 ms took 1.4 ms at 2 threads).
 * The spin is bounded, so that the backend still behaves on machines shared with other
 * processes: a thread that finds no work soon sleeps.
 * Built with REF_THREADS_OPENMP (inside libodla_dnnl) the pool starts no threads: the parts
 * run on the OpenMP team oneDNN uses, and the pool holds only their scratch. */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

odla_status ref_threads_item(const char *func, odla_item_value value, int *threads) {
  const odla_int32 *n = (const odla_int32 *)value;
  if (!n) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func, "ODLA_PROCESSOR_NUM needs a pointer to an odla_int32");
    return ODLA_INVALID_PARAM;
  }
#ifdef ODLA_REFERENCE_NO_THREADS
  if (*n != 1) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func,
               "ODLA_PROCESSOR_NUM %d: this build of the backend has no threads "
               "(ODLA_REFERENCE_THREADS=OFF), only 1 is accepted",
               (int)*n);
    return ODLA_UNSUPPORTED_DATATYPE;
  }
#else
  if (*n < 1 || *n > REF_MAX_THREADS) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func, "ODLA_PROCESSOR_NUM %d is outside 1..%d", (int)*n,
               (int)REF_MAX_THREADS);
    return ODLA_INVALID_PARAM;
  }
#endif
  *threads = (int)*n;
  return ODLA_SUCCESS;
}

void ref_split(int64_t n, int64_t unit, int index, int parts, int64_t *lo, int64_t *hi) {
  const int64_t units = (n + unit - 1) / unit;
  *lo = units * index / parts * unit;
  *hi = units * (index + 1) / parts * unit;
  if (*lo > n)
    *lo = n;
  if (*hi > n)
    *hi = n;
}

ref_threads *ref_io_threads(const ref_io *io) { return io->exec ? io->exec->threads : NULL; }

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
} ref_copy_job;

static void ref_copy_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_copy_job *job = (const ref_copy_job *)arg;
  int64_t lo, hi;
  (void)scratch;
  ref_split((int64_t)job->n, 64, index, parts, &lo, &hi);
  if (hi > lo)
    memcpy(job->dst + lo, job->src + lo, (size_t)(hi - lo));
}

void ref_parallel_copy(const ref_io *io, void *dst, const void *src, size_t n) {
  ref_threads *pool = ref_io_threads(io);
  ref_copy_job job;
  if (n < REF_PARALLEL_COPY_MIN || ref_threads_count(pool) < 2) {
    memcpy(dst, src, n);
    return;
  }
  job.dst = (unsigned char *)dst;
  job.src = (const unsigned char *)src;
  job.n = n;
  ref_parallel(pool, ref_threads_count(pool), ref_copy_part, &job, (unsigned char *)io->scratch);
}

#ifdef ODLA_REFERENCE_NO_THREADS

odla_status ref_threads_prepare(odla_computation comp, odla_context ctx, ref_threads **pool) {
  (void)comp;
  (void)ctx;
  *pool = NULL;
  return ODLA_SUCCESS;
}

void ref_threads_done(ref_threads *pool) { (void)pool; }

void ref_threads_free_idle(void) {}

int ref_threads_count(const ref_threads *pool) {
  (void)pool;
  return 1;
}

void ref_parallel(ref_threads *pool, int parts, ref_part_fn part, void *arg,
                  unsigned char *scratch0) {
  (void)pool;
  (void)parts; /* always 1: ref_threads_count is 1 */
  part(arg, 0, 1, scratch0);
}

#else /* POSIX threads */

#include <pthread.h>
#ifdef REF_THREADS_OPENMP
#include <omp.h>
#endif

/* The spin before parking, where the compiler has atomic builtins (GCC, Clang): the waiting
 * thread reads the shared counter without the lock, then takes the lock as it would have. */
#if defined(__GNUC__)
#define REF_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define REF_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define REF_LOAD(p) (*(p))
#define REF_STORE(p, v) (*(p) = (v))
#endif
#ifndef REF_THREADS_OPENMP
#if defined(__GNUC__)
enum { REF_SPIN_ROUNDS = 4000 };
static void ref_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}
#else
enum { REF_SPIN_ROUNDS = 0 };
static void ref_pause(void) {}
#endif
#endif

typedef struct {
  ref_threads *pool;
  int index; /* the part it runs: 1..count-1 */
  pthread_t thread;
  unsigned char *scratch; /* REF_ALIGN-aligned, pool->scratch_bytes */
  void *scratch_alloc;
} ref_worker;

struct ref_threads {
  ref_threads *next_idle; /* the next pool no execution runs on (ref_idle_pools) */
  int count;              /* threads, the calling one included */
  int started;            /* workers running */
  ref_worker *workers;
  size_t scratch_bytes;
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  /* The current job, under `lock`: a new one increments `job`; `running` counts the workers
   * that have not finished their part. */
  unsigned long job;
  int parts, running, quit;
  ref_part_fn part;
  void *arg;
};

#ifndef REF_THREADS_OPENMP
static void *ref_worker_main(void *arg) {
  ref_worker *w = (ref_worker *)arg;
  ref_threads *t = w->pool;
  unsigned long seen = 0;
  pthread_mutex_lock(&t->lock);
  for (;;) {
    if (!t->quit && t->job == seen && REF_SPIN_ROUNDS > 0) { /* spin a while, then park */
      int round;
      pthread_mutex_unlock(&t->lock);
      for (round = 0; round < REF_SPIN_ROUNDS && REF_LOAD(&t->job) == seen && !REF_LOAD(&t->quit);
           ++round)
        ref_pause();
      pthread_mutex_lock(&t->lock);
    }
    while (!t->quit && t->job == seen)
      pthread_cond_wait(&t->wake, &t->lock);
    if (t->quit)
      break;
    seen = t->job;
    if (w->index < t->parts) {
      ref_part_fn part = t->part;
      void *part_arg = t->arg;
      int parts = t->parts;
      pthread_mutex_unlock(&t->lock);
      part(part_arg, w->index, parts, w->scratch);
      pthread_mutex_lock(&t->lock);
      REF_STORE(&t->running, t->running - 1);
      if (t->running == 0)
        pthread_cond_signal(&t->done);
    }
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}
#endif

static void ref_threads_free(ref_threads *t) {
  int i;
  pthread_mutex_lock(&t->lock);
  REF_STORE(&t->quit, 1);
  pthread_cond_broadcast(&t->wake);
  pthread_mutex_unlock(&t->lock);
  for (i = 0; i < t->started; ++i)
    pthread_join(t->workers[i].thread, NULL);
  for (i = 0; i < t->count - 1; ++i)
    ref_free(t->workers[i].scratch_alloc);
  pthread_cond_destroy(&t->done);
  pthread_cond_destroy(&t->wake);
  pthread_mutex_destroy(&t->lock);
  ref_free(t->workers);
  ref_free(t);
}

static odla_status ref_threads_create(int count, ref_threads **pool) {
  ref_threads *t = (ref_threads *)ref_calloc(1, sizeof *t);
  int i, rc = 0;
  *pool = NULL;
  if (!t || !(t->workers = (ref_worker *)ref_calloc((size_t)count - 1, sizeof *t->workers))) {
    ref_free(t);
    return ODLA_MEM_ERROR;
  }
  t->count = count;
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->wake, NULL);
  pthread_cond_init(&t->done, NULL);
  for (i = 0; i < count - 1 && rc == 0; ++i) {
    t->workers[i].pool = t;
    t->workers[i].index = i + 1;
#ifndef REF_THREADS_OPENMP /* there the parts run on OpenMP's threads: no workers of its own */
    if ((rc = pthread_create(&t->workers[i].thread, NULL, ref_worker_main, &t->workers[i])) == 0)
      ++t->started;
#endif
  }
  if (rc != 0) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
               "cannot start worker thread %d of %d (error %d)", t->started + 2, count, rc);
    ref_threads_free(t);
    return ODLA_FAILURE;
  }
  *pool = t;
  return ODLA_SUCCESS;
}

/* Gives every worker a scratch buffer of at least `bytes`. Workers are parked: no part runs
 * between executions. */
static odla_status ref_threads_reserve(ref_threads *t, size_t bytes) {
  int i;
  if (bytes <= t->scratch_bytes)
    return ODLA_SUCCESS;
  for (i = 0; i < t->count - 1; ++i) {
    ref_worker *w = &t->workers[i];
    void *mem = ref_malloc(bytes + REF_ALIGN);
    if (!mem)
      return ODLA_MEM_ERROR;
    ref_free(w->scratch_alloc);
    w->scratch_alloc = mem;
    w->scratch = (unsigned char *)mem + (REF_ALIGN - (uintptr_t)mem % REF_ALIGN) % REF_ALIGN;
  }
  t->scratch_bytes = bytes;
  return ODLA_SUCCESS;
}

/* OMP_NUM_THREADS's first number, read once: the thread count where no item sets one. */
static int ref_env_threads_value = 1;
static pthread_once_t ref_env_once = PTHREAD_ONCE_INIT;

static void ref_read_env_threads(void) {
  const char *s = getenv("OMP_NUM_THREADS");
  char *end;
  long n;
  if (!s || !*s)
    return;
  n = strtol(s, &end, 10);
  if (end == s || (*end && *end != ',') || n < 1 || n > REF_MAX_THREADS) {
    ref_report(ODLA_LOG_LEVEL_WARN, "ExecuteComputation",
               "OMP_NUM_THREADS=\"%s\" is not a thread count in 1..%d: using 1 thread", s,
               (int)REF_MAX_THREADS);
    return;
  }
  ref_env_threads_value = (int)n;
}

/* The pools no execution runs on (threads.h), linked by next_idle. */
static ref_threads *ref_idle_pools;
static ref_mutex ref_idle_lock = REF_MUTEX_INITIALIZER;

odla_status ref_threads_prepare(odla_computation comp, odla_context ctx, ref_threads **pool) {
  ref_threads **at, *t = NULL;
  size_t need = 0;
  int want, i;
  odla_status s;
  pthread_once(&ref_env_once, ref_read_env_threads);
  want = ctx->threads ? ctx->threads : comp->threads ? comp->threads : ref_env_threads_value;
  *pool = NULL;
  if (want <= 1)
    return ODLA_SUCCESS;
  ref_mutex_lock(&ref_idle_lock);
  for (at = &ref_idle_pools; *at; at = &(*at)->next_idle)
    if ((*at)->count == want) {
      t = *at;
      *at = t->next_idle;
      break;
    }
  ref_mutex_unlock(&ref_idle_lock);
  if (!t && (s = ref_threads_create(want, &t)) != ODLA_SUCCESS)
    return s;
  for (i = 0; i < comp->num_nodes; ++i)
    if (comp->nodes[i]->scratch_bytes > need)
      need = comp->nodes[i]->scratch_bytes;
  if ((s = ref_threads_reserve(t, need)) != ODLA_SUCCESS) {
    ref_threads_done(t);
    return s;
  }
  *pool = t;
  return ODLA_SUCCESS;
}

void ref_threads_done(ref_threads *t) {
  if (!t)
    return;
  ref_mutex_lock(&ref_idle_lock);
  t->next_idle = ref_idle_pools;
  ref_idle_pools = t;
  ref_mutex_unlock(&ref_idle_lock);
}

void ref_threads_free_idle(void) {
  ref_threads *t;
  ref_mutex_lock(&ref_idle_lock);
  t = ref_idle_pools;
  ref_idle_pools = NULL;
  ref_mutex_unlock(&ref_idle_lock);
  while (t) {
    ref_threads *next = t->next_idle;
    ref_threads_free(t);
    t = next;
  }
}

int ref_threads_count(const ref_threads *pool) { return pool ? pool->count : 1; }

void ref_parallel(ref_threads *t, int parts, ref_part_fn part, void *arg, unsigned char *scratch0) {
  if (!t || parts <= 1) {
    part(arg, 0, 1, scratch0);
    return;
  }
  if (parts > t->count)
    parts = t->count;
#ifdef REF_THREADS_OPENMP
    /* Inside libodla_dnnl: on the OpenMP threads oneDNN runs on, which would otherwise spin
     * against workers of our own for the same cores. A team smaller than asked for runs several
     * parts per thread, each thread with its own scratch. */
#pragma omp parallel num_threads(parts)
  {
    const int thread = omp_get_thread_num(), team = omp_get_num_threads();
    unsigned char *scratch = thread == 0 ? scratch0 : t->workers[thread - 1].scratch;
    int index;
    for (index = thread; index < parts; index += team)
      part(arg, index, parts, scratch);
  }
#else
  pthread_mutex_lock(&t->lock);
  t->part = part;
  t->arg = arg;
  t->parts = parts;
  t->running = parts - 1;
  REF_STORE(&t->job, t->job + 1);
  pthread_cond_broadcast(&t->wake);
  pthread_mutex_unlock(&t->lock);
  part(arg, 0, parts, scratch0);
  {
    int round;
    for (round = 0; round < REF_SPIN_ROUNDS && REF_LOAD(&t->running) > 0; ++round)
      ref_pause();
  }
  pthread_mutex_lock(&t->lock);
  while (t->running > 0)
    pthread_cond_wait(&t->done, &t->lock);
  pthread_mutex_unlock(&t->lock);
#endif
}

#endif /* ODLA_REFERENCE_NO_THREADS */
