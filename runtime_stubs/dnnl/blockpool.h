/* blockpool.h: the threads a libodla_dnnl run on one OpenMP thread still gives its large
 * products (blockpool.cpp). A header of its own, without dnnl_backend.h's reference headers
 * (which rename the ODLA builders), so that tests/runtime can use it beside the ODLA API. */
#ifndef ODLA_DNNL_BLOCKPOOL_H_
#define ODLA_DNNL_BLOCKPOOL_H_

#include <cstdint>
#include <functional>
#include <string>

namespace odla_dnnl {

/* The threads a run on one OpenMP thread still gives its large products with constant weights
 * (their column blocks, compile.cpp): set by api.cpp, for the runs its ThreadChooser moved to
 * one thread, to the default count; 0 elsewhere (a count set by an item or OMP_NUM_THREADS is
 * kept). For the calling thread, while the scope lives; its end waits until no helper is still
 * computing a block of the scope's runBlocks calls (see there), so that what the blocks read
 * (a run's operands, arena, weights) may go once it has ended. */
class PooledScope {
public:
  /* patience_ns: how long a helper may hold a block before the caller computes it again; -1:
     twice the caller's fastest block of the call. 0 (tests/runtime's): the caller leaves every
     block to the helpers and computes each again as soon as a helper holds it, so that each
     block runs on two threads at once. */
  explicit PooledScope(int threads, int64_t patience_ns = -1);
  ~PooledScope();
  PooledScope(const PooledScope &) = delete;
  PooledScope &operator=(const PooledScope &) = delete;

private:
  int prev_;
  int64_t prev_patience_;
};
int pooledThreads();
/* Runs a job of n blocks on the calling thread and up to threads - 1 helper threads of a pool
 * (blockpool.cpp): compute(b) computes block b into a buffer of the calling thread's (throwing
 * on failure) and publish(b) copies that buffer into the result, on the thread that computed
 * it, after the block's first computation to finish; each block is published once. Each
 * thread takes the next block from a shared counter (a thread descheduled by a busy machine
 * leaves the blocks it has not taken to the others), and a block a helper has held for twice
 * as long as the caller's fastest took is computed again by the caller, whose copy is
 * published if it finishes first (a helper descheduled in a block holds the caller up for no
 * more than that). Returns when every block is published: true, or false with the message of
 * a block whose failed computation finished first. A helper may then still be computing a
 * block whose result will be dropped: compute and publish are copied into the pool, so they
 * must capture by value, and what they read must stay until the calling thread's PooledScope
 * ends. Where another call holds the pool, the caller runs every block. The helpers run with
 * an OpenMP thread count of 1. */
bool runBlocks(int n, int threads, const std::function<void(int)> &compute,
               const std::function<void(int)> &publish, std::string &error);
/* The calls of runBlocks so far that shared their blocks with the pool's helpers, and the
 * blocks the callers computed again (for tests/runtime). */
uint64_t blockJobs();
uint64_t blocksRecomputed();

} // namespace odla_dnnl

#endif /* ODLA_DNNL_BLOCKPOOL_H_ */
