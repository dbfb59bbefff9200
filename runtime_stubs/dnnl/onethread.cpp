// Running a computation made for several threads on one: each primitive's twin for one thread
// (ThreadedPrimitive) and the per-computation choice of the count (ThreadChooser), both
// declared in dnnl_backend.h.
#include "dnnl_backend.h"

#include <algorithm>

namespace odla_dnnl {
namespace {

using Desc = dnnl::memory::desc;

/* The execution arguments whose layouts a twin must share with its original: data, weights,
 * results, normalization statistics and parameters. The attributes (post-ops' operands, zero
 * points, scales) are the original's own, copied. */
const int kSharedArgs[] = {DNNL_ARG_SRC,      DNNL_ARG_SRC_1, DNNL_ARG_WEIGHTS,
                           DNNL_ARG_BIAS,     DNNL_ARG_DST,   DNNL_ARG_MEAN,
                           DNNL_ARG_VARIANCE, DNNL_ARG_SCALE, DNNL_ARG_SHIFT};

const dnnl_memory_desc_t *argMd(const_dnnl_primitive_desc_t pd, int arg) {
  return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
}

size_t scratchBytes(const_dnnl_primitive_desc_t pd) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  return md ? dnnl_memory_desc_get_size(md) : 0;
}

/* Whether `twin` can run in `made`'s place: the same layout of every shared argument (both
 * absent, or equal; the weights' may differ where free_weights) and a scratchpad that fits in
 * `made`'s. */
bool interchangeable(const_dnnl_primitive_desc_t made, const_dnnl_primitive_desc_t twin,
                     bool free_weights) {
  for (int arg : kSharedArgs) {
    const dnnl_memory_desc_t *a = argMd(made, arg), *b = argMd(twin, arg);
    const bool a_none = !a || a->ndims == 0, b_none = !b || b->ndims == 0;
    if (a_none != b_none ||
        (!a_none && !dnnl_memory_desc_equal(a, b) && !(free_weights && arg == DNNL_ARG_WEIGHTS)))
      return false;
  }
  return scratchBytes(twin) <= scratchBytes(made);
}

dnnl::primitive firstInterchangeable(const_dnnl_primitive_desc_t made, const_dnnl_op_desc_t op,
                                     const_dnnl_primitive_attr_t attr, bool free_weights);

/* A primitive for the current thread count interchangeable with `p` (above) for the same
 * descriptor and attributes, or an empty one where oneDNN has none. Reorders are made again
 * for the same layouts. */
dnnl::primitive searchTwin(const dnnl::primitive &p, bool free_weights) {
  const_dnnl_primitive_desc_t made = nullptr;
  dnnl::error::wrap_c_api(dnnl_primitive_get_primitive_desc(p.get(), &made),
                          "could not get a primitive's descriptor");
  if (p.get_kind() == dnnl::primitive::kind::reorder) { /* the lowerings' have no attributes */
    dnnl::reorder::primitive_desc pd(cpuEngine(), Desc(*argMd(made, DNNL_ARG_FROM)), cpuEngine(),
                                     Desc(*argMd(made, DNNL_ARG_TO)), dnnl::primitive_attr(), true);
    return pd && scratchBytes(pd.get()) <= scratchBytes(made) ? dnnl::reorder(pd)
                                                              : dnnl::primitive();
  }
  const_dnnl_op_desc_t op = nullptr;
  const_dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_desc_query(made, dnnl_query_op_d, 0, &op) != dnnl_success || !op ||
      dnnl_primitive_desc_get_attr(made, &attr) != dnnl_success)
    return dnnl::primitive();
  return firstInterchangeable(made, op, attr, free_weights);
}

/* A primitive for one thread interchangeable with `p`: searchTwin's, and for a Winograd
 * convolution with constant weights where no Winograd one is (two of SqueezeNet's, made for 2
 * threads, wanted scratchpads 3 and 32 times larger at one), the direct algorithm's, which
 * lays the weights out otherwise (no reorder leaves Winograd's layout). */
dnnl::primitive oneThreadTwin(const dnnl::primitive &p, bool free_weights) {
  ThreadScope one(1);
  const_dnnl_primitive_desc_t made = nullptr;
  const dnnl_convolution_desc_t *conv = nullptr;
  dnnl::primitive same = searchTwin(p, free_weights);
  if (same || !free_weights || dnnl_primitive_get_primitive_desc(p.get(), &made) != dnnl_success ||
      dnnl_primitive_desc_query(made, dnnl_query_convolution_d, 0, &conv) != dnnl_success ||
      !conv || conv->alg_kind != dnnl_convolution_winograd)
    return same;
  const_dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_desc_get_attr(made, &attr) != dnnl_success)
    return dnnl::primitive();
  dnnl_convolution_desc_t direct = *conv;
  direct.alg_kind = dnnl_convolution_direct;
  return firstInterchangeable(made, &direct, attr, true);
}

/* The first implementation of `op` with `attr` (oneDNN's order of preference) interchangeable
 * with `made`, made for the current thread count; an empty primitive where none is. */
dnnl::primitive firstInterchangeable(const_dnnl_primitive_desc_t made, const_dnnl_op_desc_t op,
                                     const_dnnl_primitive_attr_t attr, bool free_weights) {
  dnnl_primitive_desc_iterator_t it = nullptr;
  if (dnnl_primitive_desc_iterator_create(&it, op, attr, cpuEngine().get(), nullptr) !=
      dnnl_success)
    return dnnl::primitive();
  dnnl::primitive twin;
  do {
    dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
    if (!pd)
      break;
    dnnl_primitive_t prim = nullptr;
    if (interchangeable(made, pd, free_weights) && dnnl_primitive_create(&prim, pd) == dnnl_success)
      twin = dnnl::primitive(prim);
    dnnl_primitive_desc_destroy(pd);
  } while (!twin && dnnl_primitive_desc_iterator_next(it) == dnnl_success);
  dnnl_primitive_desc_iterator_destroy(it);
  return twin;
}

Desc weightsDesc(const dnnl::primitive &p) {
  const_dnnl_primitive_desc_t pd = nullptr;
  dnnl::error::wrap_c_api(dnnl_primitive_get_primitive_desc(p.get(), &pd),
                          "could not get a primitive's descriptor");
  const dnnl_memory_desc_t *md = argMd(pd, DNNL_ARG_WEIGHTS);
  return md ? Desc(*md) : Desc();
}

} // namespace

std::string ThreadedPrimitive::oneImplementation() const {
  const_dnnl_primitive_desc_t pd = nullptr;
  const char *name = nullptr;
  if (!one_ || dnnl_primitive_get_primitive_desc(one_.get(), &pd) != dnnl_success ||
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name)
    return std::string();
  return name;
}

void ThreadedPrimitive::executeOne(const dnnl::stream &s,
                                   const std::unordered_map<int, dnnl::memory> &args) const {
  std::call_once(once_, [&] {
    dnnl::primitive twin = oneThreadTwin(made_, weights_data_ != nullptr);
    if (!twin) {
      one_ = made_;
      return;
    }
    const Desc want = weightsDesc(twin);
    if (weights_data_ && !(want == weightsDesc(made_)))
      try {
        dnnl::memory plain(weights_plain_, cpuEngine(), const_cast<void *>(weights_data_));
        one_weights_data_ = alignedBuffer(want.get_size());
        one_weights_ = dnnl::memory(want, cpuEngine(), one_weights_data_.get());
        dnnl::stream local(cpuEngine());
        dnnl::reorder(plain, one_weights_).execute(local, plain, one_weights_);
        local.wait();
      } catch (const dnnl::error &) { /* no reorder into the twin's layout */
        one_weights_ = dnnl::memory();
        one_weights_data_.reset();
        one_ = made_;
        return;
      }
    one_ = twin;
  });
  if (!one_weights_) {
    one_.execute(s, args);
    return;
  }
  std::unordered_map<int, dnnl::memory> own = args;
  own[DNNL_ARG_WEIGHTS] = one_weights_;
  one_.execute(s, own);
}

double ThreadChooser::Recent::sum() const {
  double sum = 0;
  for (double s : t)
    sum += s;
  return sum;
}

double ThreadChooser::Recent::mean() const { return n ? sum() / std::min(n, kRuns) : 0; }

bool ThreadChooser::preempted(double seconds, long preemptions) {
  window_seconds_ += seconds;
  window_preemptions_ += preemptions;
  if (window_seconds_ < kPreemptWindow)
    return false;
  const bool many = window_preemptions_ >= kPreempted * window_seconds_;
  window_seconds_ = 0;
  window_preemptions_ = 0;
  return many;
}

void ThreadChooser::record(bool ran_one, double seconds, long preemptions) {
  if (ran_one != oneNext())
    return; /* another thread's run changed the choice meanwhile */
  if (!warm_) {
    warm_ = true; /* the first run pages the arena and the weights in */
    return;
  }
  if (ran_one && !twins_made_) {
    twins_made_ = true;
    return;
  }
  Recent &r = recent_[ran_one];
  r.add(seconds);
  if (!ran_one && r.full())
    best_default_ = best_default_ > 0 ? std::min(best_default_, r.mean()) : r.mean();
  const bool starved = !ran_one && preempted(seconds, preemptions);
  if (trial_left_ > 0) {
    /* the trial's count wins by a mean under `bar`; once its runs so far sum to kRuns x bar it
       has lost, and the trial ends (on a busy machine a default-count run can take several
       times the mean of one thread's, which the trial's other runs would repeat) */
    if (!ran_one) {
      trial_seconds_ += seconds;
      trial_preemptions_ += preemptions;
    }
    /* where the default count's runs show other processes (its trial's, or those that
       started one thread's), its mean is a lucky draw as often as not: the default count wins
       only by kDefaultWins, one thread within 1 / kDefaultWins; idle, the faster count wins */
    double margin = 1.0;
    if (!ran_one && trial_preemptions_ >= kPreempted * trial_seconds_)
      margin = kDefaultWins;
    else if (ran_one && trial_starved_)
      margin = 1.0 / kDefaultWins;
    const double bar = recent_[one_].mean() * margin;
    const bool lost = r.sum() >= kRuns * bar;
    if (--trial_left_ > 0 && !lost)
      return;
    trial_left_ = 0;
    if (!lost && r.mean() < bar) {
      one_ = ran_one;
      retry_ = kFirstRetry;
    } else {
      retry_ = std::min(2 * retry_, kMaxRetry);
    }
    until_retry_ = retry_;
    window_seconds_ = 0; /* a verdict on the default count's own runs only */
    window_preemptions_ = 0;
    return;
  }
  if (until_retry_ > 0)
    --until_retry_;
  if (until_retry_ <= 0 &&
      (starved || (r.full() && (one_ || !twins_made_ || r.mean() > kSlower * best_default_)))) {
    trial_left_ = kRuns;
    trial_starved_ = starved;
    trial_seconds_ = 0;
    trial_preemptions_ = 0;
    recent_[!one_] = Recent();
  }
}

} // namespace odla_dnnl
