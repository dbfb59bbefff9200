/* blockpool.h: the threads a libodla_dnnl run on one OpenMP thread still gives its large
 * products (blockpool.cpp). A header of its own, without dnnl_backend.h's reference headers
 * (which rename the ODLA builders), so that tests/runtime can use it beside the ODLA API. */
#ifndef ODLA_DNNL_BLOCKPOOL_H_
#define ODLA_DNNL_BLOCKPOOL_H_

#include <cstdint>
#include <functional>

namespace odla_dnnl {

/* The threads a run on one OpenMP thread still gives its large products with constant weights
 * (their column blocks, compile.cpp): set by api.cpp, for the runs its ThreadChooser moved to
 * one thread, to the default count; 0 elsewhere (a count set by an item or OMP_NUM_THREADS is
 * kept). For the calling thread, while the scope lives. */
class PooledScope {
public:
  explicit PooledScope(int threads);
  ~PooledScope();
  PooledScope(const PooledScope &) = delete;
  PooledScope &operator=(const PooledScope &) = delete;

private:
  int prev_;
};
int pooledThreads();
/* Runs fn(0), ..., fn(n - 1), each once, on the calling thread and up to threads - 1 helper
 * threads of a pool (blockpool.cpp), each thread taking the next index from a shared counter
 * (a thread descheduled by a busy machine leaves its share to the others); returns when all
 * have run. Where another call holds the pool, the caller runs them all. The helpers run with
 * an OpenMP thread count of 1. */
void runBlocks(int n, int threads, const std::function<void(int)> &fn);
/* The calls of runBlocks so far that shared their blocks with the pool's helpers (for
 * tests/runtime). */
uint64_t blockJobs();

} // namespace odla_dnnl

#endif /* ODLA_DNNL_BLOCKPOOL_H_ */
