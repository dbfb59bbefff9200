/* dnnl_backend.h: internals of the oneDNN backend (libodla_dnnl).
 *
 * Model: libodla_dnnl contains the whole reference backend (runtime_stubs/reference), built a
 * second time with the public odla_* functions this backend overrides renamed odla_ref_*
 * (the list is ODLA_DNNL_OVERRIDES in CMakeLists.txt; ref_api.h, generated from it, declares
 * the renamed functions). Every op builder therefore validates its operands, infers its
 * result and records a node exactly as the reference backend does; the builders of the ops
 * oneDNN runs (builders.cpp, transformer.cpp) also record the op's attributes in a side table.
 *
 * Compiling (compile.cpp) rewrites the recorded node list once:
 *   0. first (transformer.cpp, lowerTransformerOps), ExtLayerNorm and ExtAttention, which
 *      read and write plain row-major data, keep their node and get a oneDNN kernel instead of
 *      the reference one: layer_normalization_forward; and for attention a batched matmul
 *      (query x key^T over all heads at once, the scale as output scale, the mask a binary
 *      post-op), an in-place softmax_forward on the node's scratch and a second matmul. An
 *      attention reads query, key and value through the Transposes that split the heads out
 *      of a Gemm's rows, and writes through the one that merges them back, as strided memory
 *      descriptors, when it is their only reader: those Transpose nodes are removed;
 *   1. each recorded op whose operands oneDNN takes becomes a oneDNN primitive with
 *      format_tag::any activations (oneDNN picks its blocked layout), its constant weights
 *      reordered once into that layout, and bias, residual sum and activation as post-ops;
 *      an ExtConv/ExtGemm epilogue node is then absorbed into the primitive; Add and Mul
 *      become binary primitives (operands swapped when only the first broadcasts, a
 *      broadcast [1,C,1,1] operand read in nChw16c like the other, as oneDNN's jit kernel
 *      needs: EfficientNet's squeeze-excite scale); a channel Concat at batch 1 of nChw16c
 *      parts with multiples of 16 channels runs no node at all: its parts are contiguous runs
 *      of its blocks, so their producers write them in place (SqueezeNet's fire modules);
 *      the integer-only products (odla_ExtQLinearConv, odla_ExtQLinearMatMul) become int8
 *      convolution and matmul primitives (u8 or s8 data, s8 weights with zero zero points, s32
 *      bias, their requantization factors as output scales, the zero points as run-time
 *      zero-point arguments, the clamp an eltwise_clip post-op); oneDNN's VNNI and AMX kernels
 *      then run them where the CPU has them;
 *   2. every other node keeps its reference kernel and reads plain row-major data;
 *   3. a reorder node is inserted wherever a consumer needs a value in another layout than
 *      its producer wrote (each conversion made once and shared by all its consumers); bound
 *      outputs are always written plain;
 *   4. the activation arena is planned with the reference planner (ref_plan_buffers) over the
 *      layouts' real sizes, a fused residual sharing its buffer with the result in place and
 *      a Reshape's result always sharing its operand's (a view: its kernel copies nothing),
 *      and a lowered Concat's buffer holding its parts at their offsets, alive from the first
 *      part's production to the last read of it or any part.
 * Executing is the reference executor: oneDNN nodes run through compile.cpp's nodeRun; a
 * run that the ThreadChooser (below) moved to one thread shares the column blocks of its
 * large products with blockpool.cpp's threads (blockpool.h). */
#ifndef ODLA_DNNL_DNNL_BACKEND_H_
#define ODLA_DNNL_DNNL_BACKEND_H_

extern "C" {
#include "ref.h"
}
#include "ref_api.h"

#include "blockpool.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace odla_dnnl {

enum class OpKind {
  Conv,
  Gemm,
  MaxPool,
  AvgPool,
  Eltwise,
  Binary,
  Concat,
  LayerNorm,
  Attention,
  Transpose, /* transformer.cpp */
  QConv,     /* odla_ExtQLinearConv */
  QMatMul    /* odla_ExtQLinearMatMul */
};

/* The attributes of one op a oneDNN primitive may run, recorded by its builder. */
struct OpRecord {
  OpKind kind;
  /* conv: x, W, B; gemm: A, B, C; pooling and eltwise: x; binary: lhs, rhs. */
  odla_value input = nullptr, weights = nullptr, bias = nullptr;
  odla_value residual = nullptr;
  odla_ext_fused_activation act = ODLA_EXT_FUSED_NONE; /* also the eltwise op */
  float act_alpha = 0.0f, act_beta = 0.0f;
  /* Eltwise: the algorithm where no fused activation names it (Gelu's tanh form). */
  dnnl::algorithm eltwise_alg = dnnl::algorithm::undef;
  ref_node *epilogue = nullptr; /* the reference epilogue node of ExtConv/ExtGemm */
  /* Conv and pooling: one entry per spatial axis. */
  odla_memory_layout input_layout = ODLA_CHANNELS_FIRST, kernel_layout = ODLA_OIS;
  unsigned group = 1;
  std::vector<int64_t> window, strides, dilations, pad_front, pad_back;
  bool include_pad = false;
  /* Gemm. */
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  /* Binary. */
  dnnl::algorithm binary_alg = dnnl::algorithm::undef;
  /* ExtLayerNorm: the first normalized axis and epsilon (scale in weights, bias in bias).
   * Transpose: the permutation. (transformer.cpp) Concat: its axis (the parts are the
   * node's operands). */
  int axis = 0;
  float epsilon = 0.0f;
  std::vector<int64_t> perm;
  /* QConv, QMatMul (odla_ext_quant.h): input and weights as for Conv and Gemm, then the zero
   * points, the requantization (multiplier / 2^shift per output channel) and the clamp. */
  odla_value input_zero_point = nullptr, weights_zero_point = nullptr;
  odla_value multiplier = nullptr, shift = nullptr, output_zero_point = nullptr;
  int32_t output_min = 0, output_max = 0;
};

/* Records `rec` for the node producing `result` (or, for fused ops, for the product node
 * feeding the epilogue that produces `result`). A NULL result records nothing. */
void recordOp(odla_value result, OpRecord rec, bool fused);

/* A kernel object that transformer.cpp or compile.cpp's row products gave a node in place of
 * its reference kernel (the node's params point at it); the compile state owns it. */
struct NodeKernel {
  virtual ~NodeKernel() = default;
};
/* Makes k node n's kernel: its params point at k, run runs it (the profiler names the node
 * "OP(dnnl)"), with `scratch` bytes of the node's scratch (transformer.cpp). */
void install(ref_node *n, NodeKernel *k, ref_kernel run, size_t scratch);
template <class K> const K &kernelOf(const ref_node *n) {
  return *static_cast<const K *>(*static_cast<NodeKernel *const *>(n->params));
}
/* transformer.cpp, before the lowering in compile.cpp: gives the recorded ExtLayerNorm and
 * ExtAttention nodes oneDNN kernels over plain row-major operands (so compile.cpp treats
 * them as reference nodes), an attention reading and writing through the Transposes around
 * it, which are removed from the node list (and from `records`). */
void lowerTransformerOps(odla_computation comp, std::unordered_map<ref_node *, OpRecord> &records,
                         std::vector<std::unique_ptr<NodeKernel>> &kernels);

/* Compiles `comp` (once); returns the status (the first builder error, if any). */
odla_status compile(odla_computation comp);
/* Whether compile has rewritten `comp` for oneDNN: its nodes then hold oneDNN primitives and
 * its constants' data may be reordered copies, so it cannot be stored or give a constants
 * array. */
bool rewritten(odla_computation comp);
/* Frees what compile and the builders attached to `comp`. */
void forget(odla_computation comp);

/* Threads: the computation's and the context's ODLA_PROCESSOR_NUM (0: unset). */
void setComputationThreads(odla_computation comp, int threads);
int computationThreads(odla_computation comp);
void setContextThreads(odla_context ctx, int threads);
int contextThreads(odla_context ctx);
void forgetContext(odla_context ctx);
/* The computation's ThreadChooser (below): whether its next run takes one thread, and the time
 * of a run with the process's involuntary context switches during it (getrusage). */
bool oneThreadNext(odla_computation comp);
void recordRun(odla_computation comp, bool one, double seconds, long preemptions);

/* The CPU quota of the process's cgroup and its ancestors (cgroup v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us), rounded up to whole CPUs; 0 where none limits.
 * `procCgroup` is /proc/self/cgroup's path, `root` where the cgroup filesystems are mounted
 * (cpus.cpp; tests pass a folder of their own). */
int cgroupCpus(const std::string &procCgroup, const std::string &root);
/* The threads to run with where no item sets them: 0 (OpenMP's default: OMP_NUM_THREADS, else
 * the CPUs of the affinity mask) unless the cgroup's quota allows fewer CPUs than that. */
int defaultThreads();
/* Whether runs with no item setting their threads choose between that default and one
 * (ThreadChooser): where OMP_NUM_THREADS is unset and the default is more than one. */
bool chosenThreads();

/* Runs the enclosed code with `threads` OpenMP threads (0: leave the current count). oneDNN
 * here uses OpenMP, so OMP_NUM_THREADS sets the default. */
class ThreadScope {
public:
  explicit ThreadScope(int threads) {
    if (threads > 0 && threads != omp_get_max_threads()) {
      prev_ = omp_get_max_threads();
      omp_set_num_threads(threads);
    }
  }
  ~ThreadScope() {
    if (prev_ > 0)
      omp_set_num_threads(prev_);
  }
  ThreadScope(const ThreadScope &) = delete;
  ThreadScope &operator=(const ThreadScope &) = delete;

private:
  int prev_ = 0;
};

/* A oneDNN primitive made for the OpenMP thread count of its creation (some implementations
 * plan their threads then: a convolution made for 2 forks 2 whatever the caller's count) and,
 * made when a thread with a count of 1 first runs it, its twin for one thread (onethread.cpp):
 * an implementation for the same descriptor and attributes with the same layout of every
 * argument and no larger a scratchpad, so the arena plan serves both; where the weights are
 * constant (constantWeights) the twin may want them in a layout of its own, reordered then
 * from the constant (a one-thread 1 x 1 convolution may block them otherwise, and a Winograd
 * one's twin is a direct convolution). None found: the primitive itself runs. A computation a
 * ThreadChooser moves to one thread, or a context given ODLA_PROCESSOR_NUM 1, then runs on one
 * thread. */
class ThreadedPrimitive {
public:
  ThreadedPrimitive &operator=(const dnnl::primitive &p) {
    made_ = p;
    made_threads_ = omp_get_max_threads();
    return *this;
  }
  /* The weights are a constant: `plain` over `data` (which outlives the primitive). */
  void constantWeights(const dnnl::memory::desc &plain, const void *data) {
    weights_plain_ = plain;
    weights_data_ = data;
  }
  void execute(const dnnl::stream &s, const std::unordered_map<int, dnnl::memory> &args) const {
    if (made_threads_ > 1 && omp_get_max_threads() == 1)
      executeOne(s, args);
    else
      made_.execute(s, args);
  }
  /* oneDNN's name of the implementation a one-thread run takes (the twin, once made; for
   * tests/runtime). */
  std::string oneImplementation() const;

private:
  void executeOne(const dnnl::stream &s, const std::unordered_map<int, dnnl::memory> &args) const;
  dnnl::primitive made_;
  int made_threads_ = 0;
  dnnl::memory::desc weights_plain_;
  const void *weights_data_ = nullptr;
  mutable std::once_flag once_;
  mutable dnnl::primitive one_;
  mutable dnnl::memory one_weights_; /* the twin's own copy of the weights, if it needs one */
  mutable std::shared_ptr<void> one_weights_data_;
};

/* Which thread count a computation's next execution takes where no item or OMP_NUM_THREADS
 * sets one (api.cpp): the default, or one where runs on one thread measured faster (a machine
 * other processes keep busy: primitives split over threads wait at each join for a thread
 * the scheduler gave another process). Runs are timed and compared kRuns at a time, by their
 * mean (on a busy machine the default count's runs vary several fold: SqueezeNet beside one
 * spinning process 1.8 ms when both threads run, 6 ms and more when not). After the first
 * (warm-up) run and kRuns at the default count, a trial of kRuns at one thread decides (a run
 * that makes the twins goes before it, uncompared), the faster mean winning, but where the
 * default count's runs were preempted (below) it wins only by a mean under kDefaultWins times
 * one thread's: tried while one thread is chosen, if its trial's runs were, and against one
 * thread's trial that its preempted runs started (its runs beside busy processes swing between
 * fast, when no other process holds a CPU, and several times slower: GPT-2's block 10 to 72
 * ms against 12 on one thread, ResNet-50 64 to 600 ms against 68-92); a trial ends at the run after
 * which its count cannot win (its runs' sum reached kRuns times the mean it had to beat); then the
 * other count is tried again after `retry` runs, doubled after each trial it loses up to kMaxRetry,
 * while one thread is chosen, or the default count's last kRuns have a mean over kSlower times its
 * best, or its threads were preempted: its runs since the last verdict, at least kPreemptWindow
 * seconds of them, had kPreempted involuntary context switches a second or more (other
 * processes want the CPUs: 150-250 a second beside one or two spinning processes on a 2-core
 * VM, 30-50 idle). That also starts the first trial before kRuns default runs are made (ViT-B/16
 * beside two spinning processes: a run on 2 threads took 1.16 s, on one 0.45 s). A run on
 * one thread still runs its large products' column blocks on the default count (PooledScope,
 * runBlocks), whose threads claim blocks from a shared counter, the caller computing again a
 * block a descheduled helper holds: ViT-B/16 beside two spinning processes 0.36-0.43 s a run
 * (medians of 8) against 0.44-0.50 on one thread alone; idle, 1.06x-1.10x the
 * default count's BERT-base, ViT-B/16 and GPT-2 block runs (so an idle machine keeps the
 * default count).
 * Not thread-safe: the caller locks (oneThreadNext, recordRun). */
class ThreadChooser {
public:
  static constexpr double kSlower = 1.5, kDefaultWins = 0.8;
  static constexpr double kPreempted = 100, kPreemptWindow = 0.05;
  static constexpr int kRuns = 4, kFirstRetry = 8, kMaxRetry = 256;
  /* Whether the next run takes one thread. */
  bool oneNext() const { return trial_left_ > 0 ? !one_ : one_; }
  /* The time of a run and the involuntary context switches during it; ignored unless it took
   * the count oneNext() gives (runs of the computation on several threads at once). */
  void record(bool ran_one, double seconds, long preemptions = 0);

private:
  struct Recent { /* the last kRuns times of one count */
    double t[kRuns] = {};
    int n = 0;
    void add(double s) { t[n++ % kRuns] = s; }
    bool full() const { return n >= kRuns; }
    double sum() const;  /* of the runs so far */
    double mean() const; /* of the runs so far, up to the last kRuns */
  };
  /* Whether the default count's runs since the last verdict, once they reach kPreemptWindow
   * seconds, were preempted kPreempted times a second or more (false until then). */
  bool preempted(double seconds, long preemptions);
  bool one_ = false;        /* the chosen count: one thread, or the default */
  int trial_left_ = 0;      /* runs of the other count still to make */
  bool warm_ = false;       /* the first run was made */
  bool twins_made_ = false; /* a run at one thread was made, and its twins with it */
  int until_retry_ = 0, retry_ = kFirstRetry;
  Recent recent_[2];          /* [one thread] */
  double best_default_ = 0;   /* the default count's smallest mean */
  double window_seconds_ = 0; /* the default count's runs since the last verdict */
  long window_preemptions_ = 0;
  bool trial_starved_ = false; /* the trial started as the default count's runs were preempted */
  double trial_seconds_ = 0;   /* the default count's runs in its trial */
  long trial_preemptions_ = 0;
};

/* Whether an op of `work` (multiply-adds or elements) under `limit` keeps its reference kernel
 * (compile.cpp, kSmallProduct): false for every op with ODLA_DNNL_LOWER_ALL=1 in the
 * environment, which the ONNX 1.23 conformance run on this backend sets so that the node tests'
 * small shapes reach the lowerings. */
bool smallStaysReference(int64_t work, int64_t limit);

/* Helpers shared by the lowerings (compile.cpp): whether a value is float32 (or absent),
 * has a zero-size dim; its dims (a scalar as {1}); row-major strides; REF_ALIGN rounding. */
bool isF32(odla_value v);
bool hasZeroDim(odla_value v);
dnnl::memory::dims dimsOf(const odla_value_shape &s);
dnnl::memory::dims rowMajor(const dnnl::memory::dims &dims);
size_t alignUp(size_t n);

/* swish.cpp: whether swishInPlace runs here (x86-64 with AVX-512), and x[i] *= sigmoid(x[i])
 * over n floats with the current OpenMP thread count. A convolution whose fused activation
 * is swish leaves it out of its post-ops and runs this after itself when fastSwish(). */
bool fastSwish();
void swishInPlace(float *x, size_t n);
/* The same over x, batch x ceil(C / 16) = blocks nChw16c channel blocks of hw positions each,
 * also writing each channel's mean over its positions to mean (blocks x 16 floats): a global
 * average pool of the result in nChw16c. */
void swishPoolInPlace(float *x, float *mean, size_t blocks, size_t hw);

/* rowproduct.cpp: the product of one row by constant float32 weights on AVX-512, a decoder
 * step's Gemm: y = alpha x W (+ bias: bias_count 1 or n floats) (+ residual), then a ReLU where
 * relu; W k x n packed by rowPanels into 64-column panels. rowProduct runs on the current
 * OpenMP thread count; rowProductAvailable says whether the CPU has AVX-512 (elsewhere oneDNN
 * runs these products). rowPanels packs w (k x n, or n x k with trans_b) once a process for
 * the computations that hold the result at the same time. */
struct RowProduct {
  const float *panels = nullptr;
  int64_t k = 0, n = 0;
  float alpha = 1.0f;
  int64_t bias_count = 0;
  bool relu = false;
};
bool rowProductAvailable();
std::shared_ptr<void> rowPanels(const float *w, int64_t k, int64_t n, bool trans_b);
void rowProduct(const RowProduct &p, const float *x, const float *bias, const float *residual,
                float *y);

/* `bytes` of memory at REF_ALIGN, or at 2 MiB on transparent huge pages from 2 MiB on
 * (compile.cpp). */
std::shared_ptr<void> alignedBuffer(size_t bytes);

/* The CPU engine every primitive is created on, and the calling thread's stream on it. */
dnnl::engine &cpuEngine();
dnnl::stream &threadStream();

/* Appends to `key` every attribute the lowerings set on `attr` (scratchpad mode, output scales,
 * zero points, post-ops: eltwise, sum, binary); false where it holds a post-op of another
 * kind, which no key then describes. */
bool attrKey(const dnnl::primitive_attr &attr, std::string &key);

/* PD(d, attr) on the CPU engine, made once a process for equal op descriptors and attributes:
 * a computation built again for other dims (odlac --dim, a decoder's every token) asks again
 * for the same descriptors of every product whose shapes did not change, and oneDNN's primitive
 * cache keys primitives by descriptor, after the descriptor is made (its implementation search,
 * ~13% of a GPT-2 build). The key is the op descriptor's bytes (zero-initialized by oneDNN),
 * the OpenMP thread count and attrKey's; PD handles share the immutable descriptor. The cache is
 * emptied at 4096 entries. */
template <typename PD, typename D> PD cachedPd(const D &d, const dnnl::primitive_attr &attr) {
  static std::mutex mutex;
  static std::unordered_map<std::string, PD> made;
  std::string key(reinterpret_cast<const char *>(&d.data), sizeof d.data);
  const int threads = omp_get_max_threads(); /* some implementations plan their threads */
  key.append(reinterpret_cast<const char *>(&threads), sizeof threads);
  if (!attrKey(attr, key))
    return PD(d, attr, cpuEngine());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = made.find(key);
    if (it != made.end())
      return it->second;
  }
  PD pd(d, attr, cpuEngine());
  std::lock_guard<std::mutex> lock(mutex);
  if (made.size() >= 4096)
    made.clear();
  made.emplace(std::move(key), pd);
  return pd;
}

/* Logs an error through the ODLA logger (or stderr). */
void logError(const char *func, const char *msg);

} // namespace odla_dnnl

#endif /* ODLA_DNNL_DNNL_BACKEND_H_ */
