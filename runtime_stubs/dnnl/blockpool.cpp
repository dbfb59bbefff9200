// blockpool.cpp: the helper threads that share a product's column blocks on a busy machine.
// When a computation's ThreadChooser has moved it to one thread (other processes keep the CPUs
// busy), its large products still run on the default count of threads, here, and not on
// OpenMP: each thread claims the next block from a shared counter, so a thread the scheduler
// gave another process strands no work (an OpenMP team splits a oneDNN primitive's work
// statically, and its join waits for every thread of the team; BERT-base's products beside two
// spinning processes on 2 CPUs: 266-345 ms on two OpenMP threads, 280 on one, 217-267 here).
// The caller waits only for the blocks a helper has claimed, never for a helper that has not
// started. Helpers wait for work spinning ~100 us, then on a condition variable.
#include "dnnl_backend.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ODLA_DNNL_PAUSE() _mm_pause()
#else
#define ODLA_DNNL_PAUSE() std::this_thread::yield()
#endif

namespace odla_dnnl {

namespace {

thread_local int pooled_threads = 0;
std::atomic<uint64_t> jobs{0};

class BlockPool {
public:
  /* Runs fn(0), ..., fn(n - 1) over the caller and up to threads - 1 helpers; false (nothing
     run) where another call holds the pool. */
  bool run(int n, int threads, const std::function<void(int)> &fn) {
    std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
    if (!job.owns_lock())
      return false;
    const int wanted = std::min(threads, kMaxThreads) - 1;
    try {
      while (static_cast<int>(threads_.size()) < wanted)
        threads_.emplace_back([this, id = static_cast<int>(threads_.size())] { helperLoop(id); });
    } catch (const std::system_error &) { /* no more threads: those made share the blocks */
    }
    const int helpers = std::min(wanted, static_cast<int>(threads_.size()));
    const uint32_t gen = ++gen_;
    /* closed first: a helper's claim read from the last job fails from here on, before n_ and
       fn_ change (it compares the whole word) */
    next_.store(uint64_t{gen} << 32 | kClosed, std::memory_order_release);
    n_.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
    helpers_.store(helpers, std::memory_order_relaxed);
    fn_ = &fn;
    done_.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      next_.store(uint64_t{gen} << 32, std::memory_order_release);
      posted_.store(gen, std::memory_order_release);
    }
    wake_.notify_all();
    jobs.fetch_add(1, std::memory_order_relaxed);
    claim(gen);
    for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
      if (spins < 4096)
        ODLA_DNNL_PAUSE();
      else
        std::this_thread::yield(); /* a helper holding a block was descheduled */
    }
    return true;
  }

private:
  static constexpr int kMaxThreads = 256;
  static constexpr uint32_t kClosed = 0xffffffffu; /* no block of the job can be claimed yet */

  /* Claims and runs job `gen`'s blocks until none is left (or another job was posted). */
  void claim(uint32_t gen) {
    for (;;) {
      uint64_t cur = next_.load(std::memory_order_acquire);
      if (static_cast<uint32_t>(cur >> 32) != gen ||
          static_cast<uint32_t>(cur) >= n_.load(std::memory_order_relaxed))
        return;
      if (!next_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel))
        continue;
      (*fn_)(static_cast<int>(static_cast<uint32_t>(cur))); /* job gen stays until it is done */
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  void helperLoop(int id) {
    omp_set_num_threads(1); /* the blocks' primitives were made for one thread */
    uint32_t seen = 0;
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
      for (int spins = 1; posted_.load(std::memory_order_acquire) == seen; ++spins) {
        ODLA_DNNL_PAUSE();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
          std::unique_lock<std::mutex> lock(wake_mutex_);
          wake_.wait(lock, [&] { return posted_.load(std::memory_order_acquire) != seen; });
        }
      }
      seen = posted_.load(std::memory_order_acquire);
      if (id < helpers_.load(std::memory_order_relaxed))
        claim(seen);
    }
  }

  std::mutex job_mutex_; /* one job at a time */
  std::vector<std::thread> threads_;
  std::atomic<uint32_t> n_{0};
  std::atomic<int> helpers_{0}, done_{0};
  const std::function<void(int)> *fn_ = nullptr;
  std::atomic<uint64_t> next_{0}; /* the job's generation, then its next block */
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  uint32_t gen_ = 0; /* the last job's (under job_mutex_) */
  std::atomic<uint32_t> posted_{0};
};

} // namespace

PooledScope::PooledScope(int threads) : prev_(pooled_threads) { pooled_threads = threads; }
PooledScope::~PooledScope() { pooled_threads = prev_; }
int pooledThreads() { return pooled_threads; }
uint64_t blockJobs() { return jobs.load(std::memory_order_relaxed); }

void runBlocks(int n, int threads, const std::function<void(int)> &fn) {
  /* never destroyed: its helpers wait on it until the process exits */
  static BlockPool *pool = new BlockPool;
  if (threads > 1 && n > 1 && pool->run(n, threads, fn))
    return;
  for (int i = 0; i < n; ++i) /* alone: one thread, one block, or the pool is another call's */
    fn(i);
}

} // namespace odla_dnnl
