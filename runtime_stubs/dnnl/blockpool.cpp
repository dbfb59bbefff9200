// blockpool.cpp: the helper threads that share a product's column blocks on a busy machine.
// When a computation's ThreadChooser has moved it to one thread (other processes keep the CPUs
// busy), its large products still run on the default count of threads, here, and not on
// OpenMP: each thread takes the next block from a shared counter, so a thread the scheduler
// gave another process strands no block it has not taken (an OpenMP team splits a oneDNN
// primitive's work statically, and its join waits for every thread of the team; BERT-base's
// products beside two spinning processes on 2 CPUs: 266-345 ms on two OpenMP threads, 280 on
// one, 217-267 here). A block a helper took and was then descheduled in is computed again by
// the caller once it has waited twice its own fastest block's time; the first computation to
// finish is published (ViT-B/16 beside two spinning processes: the caller had waited 40-200 ms
// a run for such blocks). Helpers wait for work spinning ~100 us, then on a condition variable.
#include "dnnl_backend.h"

#include <algorithm>
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
thread_local int64_t pooled_patience_ns = -1;
std::atomic<uint64_t> jobs{0}, recomputed{0};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/* One round of a wait: a pause for the first 4096, then a yield (the thread waited for was
   descheduled). */
void backOff(int spins) {
  if (spins < 4096)
    ODLA_DNNL_PAUSE();
  else
    std::this_thread::yield();
}

/* One runBlocks call's blocks, held by its caller and by each helper that took part (a helper
 * still computing a block whose result will be dropped keeps it alive). */
struct Job {
  Job(int n, int helpers, const std::function<void(int)> &compute,
      const std::function<void(int)> &publish)
      : n(n), helpers(helpers), compute(compute), publish(publish), state(size_t(n)),
        taken_ns(size_t(n)) {}

  enum : int { kFree, kComputing, kPublishing, kDone };
  const int n;
  int helpers;                                     /* (set before the job is posted) */
  const std::function<void(int)> compute, publish; /* compute throws on failure */
  std::vector<std::atomic<int>> state;             /* each block's */
  std::vector<std::atomic<int64_t>> taken_ns;      /* when a helper took it */
  std::atomic<uint32_t> next{0};                   /* the next block to take */
  std::atomic<int> done{0}, inside{0};             /* blocks published; helpers in it */
  std::atomic<bool> failed{false};
  std::string error; /* the first failed block's, written before its done increment */

  /* Computes block b on the calling thread and publishes it where no other computation of it
     finished first. */
  void finish(int b) {
    std::string what; /* the failure's message; empty: none */
    try {
      compute(b);
    } catch (const std::exception &e) { /* nothing may leave a helper thread */
      what = *e.what() ? e.what() : "a block failed";
    } catch (...) {
      what = "a block failed";
    }
    int computing = kComputing;
    if (!state[size_t(b)].compare_exchange_strong(computing, kPublishing))
      return; /* another thread's computation of it finished first */
    if (what.empty())
      publish(b);
    else if (!failed.exchange(true))
      error = what;
    state[size_t(b)].store(kDone);
    done.fetch_add(1);
  }

  /* Takes and computes blocks until none is left; the time of the calling thread's fastest
     block before the last (which may be narrower), or of the last where it took only that. */
  int64_t take() {
    int64_t fastest = 0;
    for (;;) {
      const uint32_t b = next.fetch_add(1);
      if (b >= uint32_t(n))
        return fastest;
      const int64_t start = nowNs();
      taken_ns[b].store(start, std::memory_order_relaxed);
      int free = kFree;
      if (!state[b].compare_exchange_strong(free, kComputing))
        continue; /* taken over by the caller while this thread was descheduled */
      finish(int(b));
      const int64_t ns = nowNs() - start;
      if (!fastest || (ns < fastest && b + 1 < uint32_t(n)))
        fastest = ns;
    }
  }
};

class BlockPool {
public:
  /* Runs job's blocks over the caller and its helpers; false (nothing run) where another call
     holds the pool. */
  bool run(const std::shared_ptr<Job> &job, int threads) {
    std::unique_lock<std::mutex> lock(job_mutex_, std::try_to_lock);
    if (!lock.owns_lock())
      return false;
    try {
      while (static_cast<int>(threads_.size()) < std::min(threads, kMaxThreads) - 1)
        threads_.emplace_back([this, id = static_cast<int>(threads_.size())] { helperLoop(id); });
    } catch (const std::system_error &) { /* no more threads: those made share the blocks */
    }
    job->helpers = std::min(job->helpers, static_cast<int>(threads_.size()));
    {
      std::lock_guard<std::mutex> wake(wake_mutex_);
      job_ = job;
      ++posted_;
    }
    wake_.notify_all();
    jobs.fetch_add(1, std::memory_order_relaxed);
    if (pooled_patience_ns == 0 && job->helpers) /* tests': every block on two threads */
      awaitBlocks(*job, 0);
    else
      awaitBlocks(*job, job->take());
    std::lock_guard<std::mutex> wake(wake_mutex_);
    job_.reset(); /* helpers that have not looked at it yet never will */
    return true;
  }

private:
  static constexpr int kMaxThreads = 256;
  static constexpr int64_t kPatienceNs = 1000000; /* where the caller computed no block */

  /* Waits until every block of the job is published, computing again a block a helper has
     held for the patience (twice the caller's fastest block: a descheduled helper's), or taken
     and not yet marked for as long. */
  static void awaitBlocks(Job &job, int64_t fastest_ns) {
    const int64_t patience = pooled_patience_ns >= 0 ? pooled_patience_ns
                             : fastest_ns            ? 2 * fastest_ns
                                                     : kPatienceNs;
    std::vector<int64_t> seen_free(size_t(job.n), 0);
    std::vector<char> mine(size_t(job.n), 0);
    for (int spins = 0; job.done.load() < job.n; ++spins) {
      const int64_t now = nowNs();
      const int taken = static_cast<int>(std::min<uint32_t>(job.next.load(), uint32_t(job.n)));
      int stale = -1;
      for (int b = 0; b < taken && stale < 0; ++b) {
        if (mine[size_t(b)])
          continue;
        int state = job.state[size_t(b)].load();
        if (state == Job::kFree) { /* taken, its taker descheduled before it marked it */
          if (!seen_free[size_t(b)])
            seen_free[size_t(b)] = now;
          else if (now - seen_free[size_t(b)] > patience &&
                   job.state[size_t(b)].compare_exchange_strong(state, Job::kComputing))
            stale = b;
        } else if (state == Job::kComputing &&
                   now - job.taken_ns[size_t(b)].load(std::memory_order_relaxed) > patience) {
          stale = b;
          recomputed.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (stale >= 0) {
        mine[size_t(stale)] = 1;
        job.finish(stale);
      } else {
        backOff(spins);
      }
    }
  }

  void helperLoop(int id) {
    omp_set_num_threads(1); /* the blocks' primitives were made for one thread */
    uint64_t seen = 0;
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
      for (int spins = 1; posted_.load(std::memory_order_acquire) == seen; ++spins) {
        ODLA_DNNL_PAUSE();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > until) {
          std::unique_lock<std::mutex> lock(wake_mutex_);
          wake_.wait(lock, [&] { return posted_.load(std::memory_order_acquire) != seen; });
        }
      }
      std::shared_ptr<Job> job;
      {
        std::lock_guard<std::mutex> lock(wake_mutex_);
        seen = posted_.load(std::memory_order_relaxed);
        job = job_;
        if (job)
          job->inside.fetch_add(1);
      }
      if (job && id < job->helpers)
        job->take();
      if (job)
        job->inside.fetch_sub(1);
    }
  }

  std::mutex job_mutex_; /* one job at a time */
  std::vector<std::thread> threads_;
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> job_; /* the job running (under wake_mutex_) */
  std::atomic<uint64_t> posted_{0};
};

/* The calling thread's jobs that helpers may still be computing blocks of (PooledScope). */
thread_local std::vector<std::shared_ptr<Job>> unfinished;

} // namespace

PooledScope::PooledScope(int threads, int64_t patience_ns)
    : prev_(pooled_threads), prev_patience_(pooled_patience_ns) {
  pooled_threads = threads;
  pooled_patience_ns = patience_ns;
}
PooledScope::~PooledScope() {
  for (const auto &job : unfinished)
    for (int spins = 0; job->inside.load() > 0; ++spins)
      backOff(spins);
  unfinished.clear();
  pooled_threads = prev_;
  pooled_patience_ns = prev_patience_;
}
int pooledThreads() { return pooled_threads; }
uint64_t blockJobs() { return jobs.load(std::memory_order_relaxed); }
uint64_t blocksRecomputed() { return recomputed.load(std::memory_order_relaxed); }

bool runBlocks(int n, int threads, const std::function<void(int)> &compute,
               const std::function<void(int)> &publish, std::string &error) {
  /* never destroyed: its helpers wait on it until the process exits */
  static BlockPool *pool = new BlockPool;
  unfinished.erase(std::remove_if(unfinished.begin(), unfinished.end(),
                                  [](const std::shared_ptr<Job> &j) { return !j->inside.load(); }),
                   unfinished.end());
  auto job = std::make_shared<Job>(n, std::min(threads, n) - 1, compute, publish);
  if (threads > 1 && n > 1 && pool->run(job, threads)) {
    if (job->inside.load() > 0)
      unfinished.push_back(job);
  } else { /* alone: one thread, one block, or the pool is another call's */
    for (int b = 0; b < n; ++b)
      job->state[size_t(b)].store(Job::kComputing);
    for (int b = 0; b < n && !job->failed; ++b)
      job->finish(b);
  }
  if (job->failed)
    error = job->error;
  return !job->failed;
}

} // namespace odla_dnnl
