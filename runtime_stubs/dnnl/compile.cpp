// compile.cpp: turns the recorded node list into oneDNN primitives, reorders and reference
// nodes, and plans the arena (the steps are listed in dnnl_backend.h).
#include "dnnl_backend.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace odla_dnnl {

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

using dnnl::memory;

bool isF32(odla_value v) { return !v || v->type.element_type == ODLA_FLOAT32; }

bool hasZeroDim(odla_value v) {
  if (!v)
    return false;
  for (int i = 0; i < v->type.shape.size; ++i)
    if (v->type.shape.dims[i] == 0)
      return true;
  return false;
}

memory::dims dimsOf(const odla_value_shape &s) {
  if (s.size == 0)
    return {1};
  return memory::dims(s.dims, s.dims + s.size);
}

/* Row-major strides for dims. */
memory::dims rowMajor(const memory::dims &dims) {
  memory::dims strides(dims.size());
  memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

size_t alignUp(size_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* Weights of 2 MiB and more (a transformer's matrices) start at a 2 MiB boundary and ask for
 * transparent huge pages (where the kernel grants them on request, Debian's default): a decoder
 * step streams all its weights once, and with 4 KiB pages every 4 KiB of them costs a TLB miss
 * (GPT-2-sized decoder, one token: ~4% faster on one thread, measured A/B). */
std::shared_ptr<void> alignedBuffer(size_t bytes) {
  const size_t huge = size_t{2} << 20;
  void *buf = nullptr;
  if (posix_memalign(&buf, bytes >= huge ? huge : REF_ALIGN, alignUp(bytes)) != 0)
    throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (bytes >= huge)
    madvise(buf, bytes / huge * huge, MADV_HUGEPAGE); /* advice: refused, the pages are small */
#endif
  return std::shared_ptr<void>(buf, std::free);
}

namespace {

using Desc = memory::desc;

/* One oneDNN primitive run as a node: where each argument's data is among the node's
 * operands (in) or results (out), and in which layout the primitive reads it. */
struct Arg {
  int dnnl_arg;
  bool is_output;
  int index;
  Desc md;
};

struct Step {
  ThreadedPrimitive prim;
  std::vector<Arg> args;
  Desc scratchpad;
  /* A residual summed by a sum post-op: operand residual_in is copied into result 0 before
   * the primitive runs, unless the planner gave both one buffer. */
  int residual_in = -1;
  size_t residual_bytes = 0;
  /* Floats of result 0 to apply swish to after the primitive (0: none; see epilogueAttr). */
  size_t swish_floats = 0;
  /* A global average pool of the swished result done by the same pass (Compiler::fusePool):
   * result pool_out gets the mean of each of pool_blocks nChw16c channel blocks over its
   * pool_hw positions (-1: none). */
  int pool_out = -1;
  size_t pool_blocks = 0, pool_hw = 0;
  /* Made for, and run on, one thread (kOneThreadProduct). */
  bool one_thread = false;
  /* A product with constant weights (Compiler::columnBlocks): the primitives of its column
   * blocks, made for one thread, which read the weights in place from the product's and
   * write a block of kBlockCols columns to a dense buffer of their thread's (threadBuffer);
   * runBlocks shares them among the threads of a run with pooledThreads() > 1. Empty: none. */
  struct Block {
    dnnl::primitive prim;
    memory::dim col, cols;
    size_t weights_offset; /* bytes into the product's weights */
    Desc weights, dst, bias;
    Desc scratchpad; /* its thread's (threadBuffer): a block may run on two threads at once */
  };
  std::vector<Block> blocks;
  bool blocks_sum = false; /* the product adds itself to the result (a residual) */
  /* The argument map of the last run and the buffers it was made for (args' order, then the
   * scratch): a run over the same buffers (every run of one context) reuses it rather than
   * creating a oneDNN memory object per argument, 2.4 us a node measured (0.28 ms of an
   * EfficientNet-B0 inference, on one thread whatever the thread count). A run that finds it
   * in use (one computation run by two threads at once) makes its own. */
  mutable std::mutex cache_mutex;
  mutable std::vector<void *> cached_buffers;
  mutable std::unordered_map<int, memory> cached_args;
};

struct CompState {
  std::unordered_map<ref_node *, OpRecord> records;
  std::vector<std::unique_ptr<Step>> steps;
  /* Constants of its own: weights reordered into oneDNN layouts (shared, see sharedReorder),
   * scaled weights, zero points. */
  std::vector<std::shared_ptr<void>> owned;
  std::vector<std::unique_ptr<NodeKernel>> kernels; /* transformer.cpp's */
  int threads = 0;
  bool compiled = false;
  std::mutex chooser_mutex;
  ThreadChooser chooser;
};

/* A constant's data in oneDNN layout `md`, shared by the computations that hold it: building
 * a computation again for other dims (odlac --dim) while the one before is alive reuses its
 * reorders of the same weights, which for a transformer is most of the build. An entry is
 * valid while some computation holds it, and so is its source (a caller's constant outlives
 * its computation): the same address and layouts are then the same data. */
struct SharedReorder {
  const void *src;
  Desc from, md;
  std::weak_ptr<void> copy;
};
std::mutex g_reorders_mutex;
std::vector<SharedReorder> g_reorders;

std::shared_ptr<void> sharedReorder(const void *src, const Desc &from, const Desc &md) {
  std::lock_guard<std::mutex> lock(g_reorders_mutex);
  g_reorders.erase(std::remove_if(g_reorders.begin(), g_reorders.end(),
                                  [](const SharedReorder &r) { return r.copy.expired(); }),
                   g_reorders.end());
  for (const SharedReorder &r : g_reorders)
    if (r.src == src && r.from == from && r.md == md)
      if (std::shared_ptr<void> copy = r.copy.lock())
        return copy;
  std::shared_ptr<void> copy = alignedBuffer(md.get_size());
  memory in(from, cpuEngine(), const_cast<void *>(src)), out(md, cpuEngine(), copy.get());
  dnnl::stream s(cpuEngine());
  dnnl::reorder(in, out).execute(s, in, out);
  s.wait();
  g_reorders.push_back({src, from, md, copy});
  return copy;
}

std::mutex g_mutex;
std::unordered_map<odla_computation, std::unique_ptr<CompState>> g_comps;
std::unordered_map<odla_context, int> g_context_threads;

CompState &stateOf(odla_computation comp) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::unique_ptr<CompState> &s = g_comps[comp];
  if (!s)
    s.reset(new CompState);
  return *s;
}

void *argBuffer(const Arg &a, const ref_io *io) {
  return a.is_output ? io->out[a.index] : const_cast<void *>(io->in[a.index]);
}

void makeArgs(const Step &s, const ref_io *io, std::unordered_map<int, memory> &args) {
  args.clear();
  args.reserve(s.args.size() + 1);
  for (const Arg &a : s.args)
    args.emplace(a.dnnl_arg, memory(a.md, cpuEngine(), argBuffer(a, io)));
  if (s.scratchpad.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, cpuEngine(), io->scratch));
}

/* Whether s's cached argument map was made for io's buffers; if not, remakes it. */
void refreshCachedArgs(const Step &s, const ref_io *io) {
  const size_t n = s.args.size();
  bool same = s.cached_buffers.size() == n + 1 && s.cached_buffers[n] == io->scratch;
  for (size_t i = 0; same && i < n; ++i)
    same = s.cached_buffers[i] == argBuffer(s.args[i], io);
  if (same)
    return;
  makeArgs(s, io, s.cached_args);
  s.cached_buffers.clear();
  for (const Arg &a : s.args)
    s.cached_buffers.push_back(argBuffer(a, io));
  s.cached_buffers.push_back(io->scratch);
}

/* The calling thread's buffer `slot` (0: a column block's result, 1: its primitive's scratchpad)
 * of at least `bytes` bytes. */
void *threadBuffer(int slot, size_t bytes) {
  thread_local std::shared_ptr<void> bufs[2];
  thread_local size_t sizes[2] = {0, 0};
  if (sizes[slot] < bytes) {
    bufs[slot] = alignedBuffer(bytes);
    sizes[slot] = bytes;
  }
  return bufs[slot].get();
}

/* Runs s's column blocks over `threads` threads (runBlocks): each computes its block into its
 * thread's buffer (oneDNN 2.6's brgemm matmul takes no strided result; a strided one ran its
 * reference kernel), after a copy of the residual there where the product adds itself, and
 * the block's first computation to finish is copied into the result's columns. What the blocks
 * use is captured by value: a helper may still compute a dropped block after this returns
 * (the step, operands and arena stay until the run's PooledScope ends). A block's error
 * (oneDNN's, no memory) is logged. */
odla_status blocksRun(const Step &s, const ref_io *io, int threads) {
  const Step *step = &s;
  void *src = argBuffer(s.args[0], io);
  const char *weights = static_cast<const char *>(io->in[1]);
  const float *bias = s.blocks[0].bias.get_size() ? static_cast<const float *>(io->in[2]) : nullptr;
  float *y = static_cast<float *>(io->out[0]);
  const memory::dim rows = s.blocks[0].dst.dims()[0],
                    stride = s.blocks.back().col + s.blocks.back().cols;
  auto compute = [=](int b) {
    const Step::Block &k = step->blocks[size_t(b)];
    float *t = static_cast<float *>(threadBuffer(0, rows * k.cols * sizeof(float)));
    if (step->blocks_sum)
      for (memory::dim i = 0; i < rows; ++i)
        std::memcpy(t + i * k.cols, y + i * stride + k.col, k.cols * sizeof(float));
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(step->args[0].md, cpuEngine(), src)},
        {DNNL_ARG_WEIGHTS,
         memory(k.weights, cpuEngine(), const_cast<char *>(weights + k.weights_offset))},
        {DNNL_ARG_DST, memory(k.dst, cpuEngine(), t)}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, memory(k.bias, cpuEngine(), const_cast<float *>(bias + k.col)));
    if (k.scratchpad.get_size())
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   memory(k.scratchpad, cpuEngine(), threadBuffer(1, k.scratchpad.get_size())));
    k.prim.execute(threadStream(), args);
  };
  auto publish = [=](int b) {
    const Step::Block &k = step->blocks[size_t(b)];
    const float *t = static_cast<const float *>(threadBuffer(0, 0));
    for (memory::dim i = 0; i < rows; ++i)
      std::memcpy(y + i * stride + k.col, t + i * k.cols, k.cols * sizeof(float));
  };
  std::string error;
  if (runBlocks(static_cast<int>(s.blocks.size()), threads, compute, publish, error))
    return ODLA_SUCCESS;
  logError("ExecuteComputation", error.c_str());
  return ODLA_FAILURE;
}

odla_status nodeRun(const ref_node *node, const ref_io *io) {
  const Step &s = **static_cast<Step *const *>(node->params);
  ThreadScope one(s.one_thread ? 1 : 0);
  try {
    if (s.residual_in >= 0 && io->out[0] != io->in[s.residual_in])
      std::memcpy(io->out[0], io->in[s.residual_in], s.residual_bytes);
    if (!s.blocks.empty() && pooledThreads() > 1)
      return blocksRun(s, io, pooledThreads());
    std::unique_lock<std::mutex> cache(s.cache_mutex, std::try_to_lock);
    if (cache.owns_lock()) {
      refreshCachedArgs(s, io);
      s.prim.execute(threadStream(), s.cached_args);
    } else {
      std::unordered_map<int, memory> args;
      makeArgs(s, io, args);
      s.prim.execute(threadStream(), args);
    }
    if (s.pool_out >= 0)
      swishPoolInPlace(static_cast<float *>(io->out[0]), static_cast<float *>(io->out[s.pool_out]),
                       s.pool_blocks, s.pool_hw);
    else if (s.swish_floats)
      swishInPlace(static_cast<float *>(io->out[0]), s.swish_floats);
  } catch (const dnnl::error &e) {
    logError("ExecuteComputation", e.what());
    return ODLA_FAILURE;
  }
  return ODLA_SUCCESS;
}

/* A row product's node kernel (Compiler::lowerRowProduct): the packed weights it holds. */
struct RowKernel : NodeKernel {
  std::shared_ptr<void> panels;
  RowProduct p;
  bool residual = false;
};

odla_status rowKernelRun(const ref_node *node, const ref_io *io) {
  const auto &k = kernelOf<RowKernel>(node);
  rowProduct(k.p, static_cast<const float *>(io->in[0]),
             k.p.bias_count ? static_cast<const float *>(io->in[1]) : nullptr,
             k.residual ? static_cast<const float *>(io->in[2]) : nullptr,
             static_cast<float *>(io->out[0]));
  return ODLA_SUCCESS;
}

Desc plainDesc(const memory::dims &dims, memory::data_type dt = memory::data_type::f32) {
  return Desc(dims, dt, rowMajor(dims));
}

/* oneDNN's name for the element types its primitives here take (float32 otherwise). */
memory::data_type dataType(odla_element_type t) {
  switch (t) {
  case ODLA_UINT8:
    return memory::data_type::u8;
  case ODLA_INT8:
    return memory::data_type::s8;
  case ODLA_INT32:
    return memory::data_type::s32;
  default:
    return memory::data_type::f32;
  }
}

Desc plainDesc(odla_value v) {
  return plainDesc(dimsOf(v->type.shape), dataType(v->type.element_type));
}

/* A product of fewer multiply-adds keeps the reference kernel (and its fused epilogue), and so
 * does a binary op of fewer than kSmallProduct / 16 elements: making the primitive and the
 * reorders around it costs more than oneDNN saves on it, and a computation built for every
 * step's dims (odlac --dim) pays that every step (the character decoder, products of 8k to 37k
 * multiply-adds on vectors of 96: 0.30 -> 0.21 ms a token with ExtLayerNorm's alike rule). */
constexpr memory::dim kSmallProduct = memory::dim{1} << 16;

/* A product of fewer multiply-adds, and an elementwise op of fewer elements, runs on one
 * thread: its primitive is made and executed under a one-thread OpenMP scope (Step::one_thread),
 * as a second thread's fork and join cost more than it takes over (a GPT-2 step at 2 threads,
 * when oneDNN still ran its products of one row: the 768 x 768 one 0.069 ms against 0.061 at 1,
 * the Gelu of 3072 elements 0.010 against 0.002 ms). Products of one row by constant weights
 * are rowproduct.cpp's, which splits from 2^16 weights up. */
constexpr memory::dim kOneThreadProduct = memory::dim{1} << 20;
constexpr memory::dim kOneThreadElements = memory::dim{1} << 16;

/* The columns of a product's blocks (Step::blocks), a multiple of the weights' column blocks
 * (16, 32 or 64 in oneDNN's BA16a<N>b): BERT-base's products on one thread took 1.5% longer
 * over blocks of 128 than whole, with each block's result copied into place. The products of
 * fewer than 2 blocks' columns or kBlockedProduct multiply-adds (0.6 ms on one thread) have
 * none: a helper the scheduler takes away while it holds a block holds up the caller for up
 * to another process's time slice (a few ms), which only a large product's share repays
 * (ResNet-50's convolutions of 12-100 million multiply-adds, in blocks of 32-64 channels,
 * took 100-120 ms a run beside two spinning processes where the caller alone took 68-92). */
constexpr memory::dim kBlockCols = 128;
constexpr memory::dim kBlockedProduct = memory::dim{1} << 26;

/* A per-channel operand ([1,C,1,1], plain) added to or multiplied into an nChw16c value whose
 * channels are no multiple of 16 (Compiler::lowerChannelOp): oneDNN 2.6 has only its
 * reference kernel for that broadcast, and the reference backend's Mul needs the value plain,
 * two reorders around it (MobileNetV3-Large's squeeze-and-excitation scales of 72 and 120
 * channels: 4 reorders a run). The padded lanes stay 0 (0 op 0). */
struct ChannelKernel : NodeKernel {
  int64_t planes = 0;   /* batch x channel blocks */
  int64_t blocks = 0;   /* channel blocks of 16 */
  int64_t hw = 0;       /* positions of a plane */
  int64_t channels = 0; /* C */
  bool add = false;     /* else multiply */
};

odla_status channelKernelRun(const ref_node *node, const ref_io *io) {
  const auto &k = kernelOf<ChannelKernel>(node);
  const float *x = static_cast<const float *>(io->in[0]);
  const float *s = static_cast<const float *>(io->in[1]);
  float *y = static_cast<float *>(io->out[0]);
  float *lanes = static_cast<float *>(io->scratch); /* s padded to the blocks with 0 */
  for (int64_t c = 0; c < k.blocks * 16; ++c)
    lanes[c] = c < k.channels ? s[c] : 0.0f;
  const int64_t hw = k.hw;
  const bool add = k.add;
#pragma omp parallel for schedule(static) if (k.planes * hw * 16 >= kOneThreadElements)
  for (int64_t p = 0; p < k.planes; ++p) {
    const float *v = lanes + (p % k.blocks) * 16;
    const float *a = x + p * hw * 16;
    float *out = y + p * hw * 16;
    for (int64_t i = 0; i < hw; ++i)
#pragma omp simd
      for (int l = 0; l < 16; ++l)
        out[i * 16 + l] = add ? a[i * 16 + l] + v[l] : a[i * 16 + l] * v[l];
  }
  return ODLA_SUCCESS;
}

} // namespace

bool smallStaysReference(int64_t work, int64_t limit) {
  static const bool all = [] {
    const char *v = std::getenv("ODLA_DNNL_LOWER_ALL");
    return v && !std::strcmp(v, "1");
  }();
  return !all && work < limit;
}

namespace {

dnnl::algorithm activationAlg(odla_ext_fused_activation act, float &alpha, float &beta) {
  using A = dnnl::algorithm;
  switch (act) {
  case ODLA_EXT_FUSED_RELU:
    alpha = 0.0f;
    beta = 0.0f;
    return A::eltwise_relu;
  case ODLA_EXT_FUSED_LEAKY_RELU:
    beta = 0.0f;
    return A::eltwise_relu;
  case ODLA_EXT_FUSED_CLAMP:
    return A::eltwise_clip;
  case ODLA_EXT_FUSED_SIGMOID:
    return A::eltwise_logistic;
  case ODLA_EXT_FUSED_TANH:
    return A::eltwise_tanh;
  case ODLA_EXT_FUSED_HARD_SWISH:
    return A::eltwise_hardswish;
  case ODLA_EXT_FUSED_SWISH:
    alpha = 1.0f;
    return A::eltwise_swish;
  case ODLA_EXT_FUSED_GELU:
    return A::eltwise_gelu_erf;
  default:
    return A::undef;
  }
}

/* The activation layout 2-D convolutions ask for. On AVX-512 it is nChw16c rather than
 * format_tag::any: oneDNN 2.6's own choice there (acdb with its brgconv kernels) measured
 * 82-84 CPU ms per ResNet-50 inference on this project's machine against 70.5 for nChw16c
 * (jit:avx512_core), ONNX Runtime 68-74. Convolutions with fewer than 16 input channels (the
 * first) keep `any` for their source; oneDNN always picks the weights' layout. */
memory::format_tag convActivationTag(int rank) {
  using isa = dnnl::cpu_isa;
  const isa have = dnnl::get_effective_cpu_isa();
  const bool avx512 = have == isa::avx512_core || have == isa::avx512_core_vnni ||
                      have == isa::avx512_core_bf16 || have == isa::avx512_core_amx;
  return rank == 4 && avx512 ? memory::format_tag::nChw16c : memory::format_tag::any;
}

/* Whether oneDNN's int8 kernels compute the exact products odla_ext_quant.h specifies on this
 * CPU: with VNNI or AMX. Without them oneDNN multiplies pairs of 8-bit values into saturating
 * 16-bit sums (pmaddubsw) and, against that, halves a convolution's weights (its weights'
 * scale_adjust 0.5): the digits CNN came out up to 25 output steps off on an AVX2 machine.
 * The reference kernels run the integer products there. */
bool exactInt8Isa() {
  using isa = dnnl::cpu_isa;
  const isa have = dnnl::get_effective_cpu_isa();
  return have == isa::avx512_core_vnni || have == isa::avx512_core_bf16 ||
         have == isa::avx512_core_amx || have == isa::avx2_vnni;
}

/* Whether a convolution asks oneDNN for Winograd first: 2-D 3x3, stride 1, undilated,
 * ungrouped, over nChw16c activations (a multiple of 16 input channels, AVX-512). oneDNN
 * 2.6's F(2x2,3x3) kernel (jit_fp32_wino_2x3) takes 2.25x fewer multiplications; measured on
 * this project's machine at 1 thread it runs ResNet-50's and SqueezeNet's 3x3 convolutions
 * 1.2-1.9x faster than the direct kernel, with results within 1e-6 relative of it (the
 * transforms round differently; the issue allows 1e-4). Where oneDNN has no Winograd kernel
 * for the case (post-ops, ISA) the direct one runs. */
bool winogradFits(const OpRecord &r, const odla_value_shape &xs, const odla_value_shape &ws) {
  if (xs.size != 4 || r.group != 1 || xs.dims[1] % 16 != 0 ||
      convActivationTag(4) != memory::format_tag::nChw16c)
    return false;
  for (int i = 0; i < 2; ++i)
    if (ws.dims[2 + i] != 3 || r.strides[i] != 1 || r.dilations[i] != 1)
      return false;
  return true;
}

/* Post-ops for y = act(product + residual); false when oneDNN has no such activation. With
 * swish_after (convolutions), a swish is left out when swish.cpp runs it faster after the
 * primitive: *swish_after says so (the caller sets Step::swish_floats). */
bool epilogueAttr(const OpRecord &r, dnnl::primitive_attr &attr, bool *swish_after = nullptr) {
  dnnl::post_ops ops;
  if (r.residual)
    ops.append_sum(1.0f);
  if (swish_after)
    *swish_after = r.act == ODLA_EXT_FUSED_SWISH && fastSwish();
  if (r.act != ODLA_EXT_FUSED_NONE && !(swish_after && *swish_after)) {
    float alpha = r.act_alpha, beta = r.act_beta;
    dnnl::algorithm alg = activationAlg(r.act, alpha, beta);
    if (alg == dnnl::algorithm::undef)
      return false;
    ops.append_eltwise(1.0f, alg, alpha, beta);
  }
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return true;
}

class Compiler {
public:
  Compiler(odla_computation comp, CompState &st) : comp_(comp), st_(st) {}

  odla_status run() {
    lowerTransformerOps(comp_, st_.records, st_.kernels);
    std::vector<ref_node *> nodes(comp_->nodes, comp_->nodes + comp_->num_nodes);
    std::unordered_set<ref_node *> absorbed;
    for (ref_node *n : nodes) {
      if (absorbed.count(n))
        continue;
      auto it = st_.records.find(n);
      keep_epilogue_ = false;
      if (it != st_.records.end() && lower(n, it->second)) {
        if (it->second.epilogue && !keep_epilogue_)
          absorbed.insert(it->second.epilogue);
        continue;
      }
      if (keepsLayout(n)) {
        order_.push_back(n);
        continue;
      }
      for (int i = 0; i < n->num_inputs; ++i)
        if (n->inputs[i] && layout_.count(n->inputs[i]))
          n->inputs[i] = convert(n->inputs[i], plainDesc(n->inputs[i]));
      if (!std::strcmp(n->op, "Reshape"))
        inplace_.emplace_back(n, 0); /* a view: see plan() */
      order_.push_back(n);
    }
    for (ref_node *e : dropped_)
      absorbed.insert(e);
    for (ref_node *e : absorbed)
      ref_node_free(e);
    return plan();
  }

private:
  odla_computation comp_;
  CompState &st_;
  std::vector<ref_node *> order_;
  std::unordered_map<odla_value, Desc> layout_; /* values not in plain row-major layout */
  /* Set by a lowering that computes the product alone: the fused epilogue node keeps its
   * reference kernel, on the product's plain result. */
  bool keep_epilogue_ = false;
  struct Conversion {
    odla_value from;
    Desc md;
    odla_value to;
  };
  std::vector<Conversion> conversions_;
  /* (node, operand): the node's result may take the operand's buffer when the operand dies
   * there (a summed residual; the source of an elementwise primitive), or always for a
   * reference Reshape (its kernel then copies nothing). */
  std::vector<std::pair<ref_node *, int>> inplace_;
  /* A concatenation's part: where it lives inside the concatenation's buffer (byte offset). */
  struct Slice {
    odla_value whole;
    size_t offset;
  };
  std::unordered_map<odla_value, Slice> slices_;
  std::unordered_set<odla_value> wholes_;
  /* nodes whose work is done elsewhere: by the layout (a concatenation), by a swish pass (a
   * global average pool, fusePool) */
  std::vector<ref_node *> dropped_;
  /* Convolutions whose swish pass runs after the primitive, by their result (fusePool). */
  std::unordered_map<odla_value, std::pair<ref_node *, Step *>> swished_;

  Desc descOf(odla_value v) const {
    auto it = layout_.find(v);
    return it != layout_.end() ? it->second : plainDesc(v);
  }

  size_t bytesOf(odla_value v) const {
    auto it = layout_.find(v);
    return std::max(it != layout_.end() ? it->second.get_size() : 0, ref_bytes(&v->type));
  }

  odla_value newValue(odla_value like, const char *suffix, ref_value_kind kind) {
    if (comp_->num_values >= REF_MAX_VALUES)
      throw std::bad_alloc(); // a value's index holds no more
    if (comp_->num_values == comp_->cap_values) {
      int cap = comp_->cap_values ? 2 * comp_->cap_values : 64;
      auto *vs = static_cast<odla_value *>(
          std::realloc(comp_->values, static_cast<size_t>(cap) * sizeof(odla_value)));
      if (!vs)
        throw std::bad_alloc();
      comp_->values = vs;
      comp_->cap_values = cap;
    }
    odla_value v = ref_value_alloc(kind, like->type.shape.size); // freed as the others are
    std::string id = std::string(like->id) + suffix;
    char *copy = v ? static_cast<char *>(std::malloc(id.size() + 1)) : nullptr;
    if (!copy) {
      ref_value_free(v);
      throw std::bad_alloc();
    }
    std::memcpy(copy, id.c_str(), id.size() + 1);
    v->id = copy; // freed with the computation's values (api.cpp refuses static ids)
    std::memcpy(&v->type, &like->type,
                offsetof(odla_value_type, shape.dims) +
                    static_cast<size_t>(like->type.shape.size) * sizeof v->type.shape.dims[0]);
    v->index = static_cast<unsigned>(comp_->num_values);
    comp_->values[comp_->num_values++] = v;
    return v;
  }

  /* Replaces a node's operand and result lists by one allocation of their own. */
  static void setOperands(ref_node *n, const std::vector<odla_value> &ins,
                          const std::vector<odla_value> &outs) {
    auto *list =
        static_cast<odla_value *>(std::calloc(ins.size() + outs.size() + 1, sizeof(odla_value)));
    if (!list)
      throw std::bad_alloc();
    std::copy(ins.begin(), ins.end(), list);
    std::copy(outs.begin(), outs.end(), list + ins.size());
    ref_node_free_lists(n);
    n->inputs = list;
    n->num_inputs = static_cast<int>(ins.size());
    n->outputs = list + ins.size();
    n->num_outputs = static_cast<int>(outs.size());
    for (odla_value v : outs)
      v->node = n;
  }

  ref_node *newNode(const char *op, const std::vector<odla_value> &ins,
                    const std::vector<odla_value> &outs) {
    auto *n = static_cast<ref_node *>(std::calloc(1, sizeof(ref_node)));
    if (!n)
      throw std::bad_alloc();
    n->op = op;
    n->inplace_input = -1;
    n->view_input = -1;
    setOperands(n, ins, outs);
    return n;
  }

  void attach(ref_node *n, std::unique_ptr<Step> step) {
    // NOLINTNEXTLINE(bugprone-sizeof-expression): the params hold a pointer to the step
    auto *slot = static_cast<Step **>(std::malloc(sizeof(Step *)));
    if (!slot)
      throw std::bad_alloc();
    *slot = step.get();
    ref_node_free_params(n);
    n->params = slot;
    n->params_size = sizeof *slot; // NOLINT(bugprone-sizeof-expression): one pointer
    n->run = nodeRun;
    n->engine = "dnnl"; /* the device profiler reports "Conv(dnnl)", "Reorder(dnnl)" */
    n->scratch_bytes = step->scratchpad.get_size();
    st_.steps.push_back(std::move(step));
  }

  /* `v` in layout md: v itself, or a converted copy made once (a constant converted now, an
   * activation by a reorder node placed before the consumer). `view` describes v's data when
   * the consumer reads it under other dims (grouped convolution weights). */
  odla_value convert(odla_value v, const Desc &md, const Desc *view = nullptr) {
    Desc from = view ? *view : descOf(v);
    if (from == md)
      return v;
    for (const Conversion &c : conversions_)
      if (c.from == v && c.md == md)
        return c.to;
    odla_value w;
    if (v->kind == REF_CONSTANT) {
      st_.owned.push_back(sharedReorder(v->data, from, md));
      w = newValue(v, "/dnnl", REF_CONSTANT);
      w->data = st_.owned.back().get();
    } else {
      w = newValue(v, "/reorder", REF_RESULT);
      ref_node *r = newNode("Reorder", {v}, {w});
      auto step = std::unique_ptr<Step>(new Step);
      step->prim = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), md));
      step->args = {{DNNL_ARG_FROM, false, 0, from}, {DNNL_ARG_TO, true, 0, md}};
      attach(r, std::move(step));
      order_.push_back(r);
    }
    if (!(md == plainDesc(w)))
      layout_[w] = md;
    conversions_.push_back({v, md, w});
    return w;
  }

  /* Whether reference node n runs on its operands in the layout a oneDNN producer gave one of
   * them: an integer Add or Mul (odla_ExtQLinearAdd/Mul, elementwise: the same computation on
   * each byte whatever the order) of two operands of its result's shape and element type, one
   * in a dense layout (no padding: the int8 convolutions' channels-last), the other converted
   * to it. The result keeps that layout, so a residual block's sum costs no reorder out of and
   * back into the convolutions' layout (ResNet-50 int8: 37 reorders, 17% of its time). */
  bool keepsLayout(ref_node *n) {
    if ((std::strcmp(n->op, "ExtQLinearAdd") != 0 && std::strcmp(n->op, "ExtQLinearMul") != 0) ||
        n->num_inputs != 2 || n->num_outputs != 1 || n->outputs[0]->is_output)
      return false;
    odla_value y = n->outputs[0];
    auto it = layout_.find(n->inputs[0]);
    if (it == layout_.end())
      it = layout_.find(n->inputs[1]);
    if (it == layout_.end() || it->second.get_size() != ref_bytes(&y->type))
      return false;
    const Desc md = it->second;
    for (int i = 0; i < 2; ++i) {
      const odla_value_type &t = n->inputs[i]->type;
      if (t.element_type != y->type.element_type || t.shape.size != y->type.shape.size ||
          !std::equal(t.shape.dims, t.shape.dims + t.shape.size, y->type.shape.dims))
        return false;
    }
    for (int i = 0; i < 2; ++i)
      n->inputs[i] = convert(n->inputs[i], md);
    layout_[y] = md;
    return true;
  }

  /* The value a primitive writes for the op's final result `y` in layout dst: y itself, or,
   * for a bound output that oneDNN writes blocked, a temporary reordered into it (emit). */
  odla_value placeResult(odla_value y, const Desc &dst) {
    if (dst == plainDesc(y))
      return y;
    if (!y->is_output) {
      layout_[y] = dst;
      return y;
    }
    odla_value t = newValue(y, "/dnnl", REF_RESULT);
    layout_[t] = dst;
    return t;
  }

  /* Emits node n (whose step is attached) and, for a bound output produced blocked, the
   * reorder into it. */
  void emit(ref_node *n, odla_value produced, odla_value y) {
    order_.push_back(n);
    if (produced == y)
      return;
    ref_node *r = newNode("Reorder", {produced}, {y});
    auto step = std::unique_ptr<Step>(new Step);
    Desc from = descOf(produced), to = plainDesc(y);
    step->prim = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), to));
    step->args = {{DNNL_ARG_FROM, false, 0, from}, {DNNL_ARG_TO, true, 0, to}};
    attach(r, std::move(step));
    order_.push_back(r);
  }

  bool lower(ref_node *n, const OpRecord &r) {
    odla_value y = r.epilogue ? r.epilogue->outputs[0] : n->outputs[0];
    if (r.kind == OpKind::QConv || r.kind == OpKind::QMatMul) {
      try {
        return exactInt8Isa() && !hasZeroDim(r.input) && !hasZeroDim(r.weights) && !hasZeroDim(y) &&
               lowerQuantized(n, r, y);
      } catch (const dnnl::error &e) {
        if (e.status != dnnl_unimplemented)
          logError("CompileComputation", e.what()); /* the node keeps its reference kernel */
        return false;
      }
    }
    /* Max pooling of 8-bit data (a quantized model's) runs as is: its maxima are elements. */
    const odla_element_type xt = r.input ? r.input->type.element_type : ODLA_FLOAT32;
    const bool int8Pool = r.kind == OpKind::MaxPool && (xt == ODLA_UINT8 || xt == ODLA_INT8) &&
                          y->type.element_type == xt; /* (a Concat records no input) */
    if ((!int8Pool && (!isF32(r.input) || !isF32(r.weights) || !isF32(r.bias) ||
                       !isF32(r.residual) || !isF32(y))) ||
        hasZeroDim(r.input) || hasZeroDim(r.weights) || hasZeroDim(y))
      return false;
    try {
      switch (r.kind) {
      case OpKind::Conv:
        return lowerConv(n, r, y);
      case OpKind::Gemm:
        return lowerGemm(n, r, y);
      case OpKind::MaxPool:
      case OpKind::AvgPool:
        return lowerPool(n, r, y);
      case OpKind::Eltwise:
        return lowerEltwise(n, r, y);
      case OpKind::Binary:
        return lowerBinary(n, r, y);
      case OpKind::Concat:
        return lowerConcat(n, r, y);
      case OpKind::LayerNorm:
      case OpKind::Attention:
      case OpKind::Transpose:
        return false; /* plain operands: lowerTransformerOps */
      case OpKind::QConv:
      case OpKind::QMatMul:
        return false; /* above */
      }
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_unimplemented)
        logError("CompileComputation", e.what()); /* the node keeps its reference kernel */
    }
    return false;
  }

  /* Finishes a lowered product op: operands, result, residual and step. */
  void finish(ref_node *n, const OpRecord &r, odla_value y, std::vector<odla_value> ins,
              std::unique_ptr<Step> step, const Desc &dst) {
    odla_value produced = placeResult(y, dst);
    if (r.residual) {
      step->residual_in = static_cast<int>(ins.size());
      step->residual_bytes = dst.get_size();
      ins.push_back(convert(r.residual, dst));
      inplace_.emplace_back(n, step->residual_in);
    }
    step->args.push_back({DNNL_ARG_DST, true, 0, dst});
    setOperands(n, ins, {produced});
    if (r.epilogue)
      n->op = r.kind == OpKind::Conv ? "ExtConv" : "ExtGemm";
    attach(n, std::move(step));
    emit(n, produced, y);
  }

  /* Whether a convolution is one row by constant weights: batch 1, every extent of the input,
   * kernel and result 1, one group, no padding. */
  static bool rowProductFits(const OpRecord &r, const odla_value_shape &xs,
                             const odla_value_shape &ws, odla_value y) {
    if (r.group != 1 || xs.dims[0] != 1 || r.weights->kind != REF_CONSTANT ||
        !rowProductAvailable())
      return false;
    for (int i = 2; i < xs.size; ++i)
      if (xs.dims[i] != 1 || ws.dims[i] != 1 || y->type.shape.dims[i] != 1)
        return false;
    for (size_t i = 0; i < r.pad_front.size(); ++i)
      if (r.pad_front[i] != 0 || r.pad_back[i] != 0)
        return false;
    return true;
  }

  bool lowerConv(ref_node *n, const OpRecord &r, odla_value y) {
    const odla_value_shape &xs = r.input->type.shape, &ws = r.weights->type.shape;
    if (r.input_layout != ODLA_CHANNELS_FIRST || r.kernel_layout != ODLA_OIS || xs.size < 3 ||
        xs.size > 5)
      return false;
    const memory::dim g = r.group, o = ws.dims[0];
    memory::dims wdims = dimsOf(ws);
    Desc wview = plainDesc(wdims);
    if (g > 1) {
      wdims.insert(wdims.begin(), g);
      wdims[1] = o / g;
      wview = plainDesc(wdims);
    }
    memory::dims strides(r.strides.begin(), r.strides.end());
    memory::dims dil, pl(r.pad_front.begin(), r.pad_front.end()),
        pr(r.pad_back.begin(), r.pad_back.end());
    for (int64_t d : r.dilations)
      dil.push_back(d - 1);
    if (rowProductFits(r, xs, ws, y)) {
      OpRecord row = r; /* y = x W^T: the weights are O x I */
      row.trans_b = true;
      return lowerRowProduct(n, row, y, ws.dims[1], o);
    }
    dnnl::primitive_attr attr;
    bool swish_after = false;
    if (!epilogueAttr(r, attr, &swish_after))
      return false;
    const auto any = memory::format_tag::any;
    const auto f32 = memory::data_type::f32;
    const memory::format_tag act = convActivationTag(xs.size);
    /* A depthwise convolution reads its input blocked too where the channels are no multiple
     * of 16 (padded): any, oneDNN took MobileNetV3's plain producers and ran its reference
     * kernel (16 ms for a 72-channel 56x56 layer). */
    const bool src_blocked = xs.dims[1] % 16 == 0 || (g > 1 && g == xs.dims[1] && g == o);
    Desc src_any(dimsOf(xs), f32, src_blocked ? act : any), wei_any(wdims, f32, any),
        dst_any(dimsOf(y->type.shape), f32, act);
    Desc bias_md = r.bias ? plainDesc(memory::dims{o}) : Desc();
    auto conv_pd = [&](dnnl::algorithm alg) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src_any, wei_any,
                                        bias_md, dst_any, strides, dil, pl, pr);
      return dnnl::convolution_forward::primitive_desc(d, attr, cpuEngine());
    };
    dnnl::convolution_forward::primitive_desc pd;
    if (winogradFits(r, xs, ws))
      try {
        pd = conv_pd(dnnl::algorithm::convolution_winograd);
      } catch (const dnnl::error &e) {
        if (e.status != dnnl_unimplemented)
          throw;
      }
    if (!pd)
      pd = conv_pd(dnnl::algorithm::convolution_direct);
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0)
      return false; /* oneDNN's reference convolution: the reference backend's is faster */

    auto step = std::unique_ptr<Step>(new Step);
    step->prim = dnnl::convolution_forward(pd);
    if (r.weights->kind == REF_CONSTANT)
      step->prim.constantWeights(wview, r.weights->data);
    step->scratchpad = pd.scratchpad_desc();
    step->swish_floats = swish_after ? pd.dst_desc().get_size() / sizeof(float) : 0;
    std::vector<odla_value> ins = {convert(r.input, pd.src_desc()),
                                   convert(r.weights, pd.weights_desc(), &wview)};
    step->args = {{DNNL_ARG_SRC, false, 0, pd.src_desc()},
                  {DNNL_ARG_WEIGHTS, false, 1, pd.weights_desc()}};
    if (r.bias) {
      ins.push_back(convert(r.bias, pd.bias_desc()));
      step->args.push_back({DNNL_ARG_BIAS, false, 2, pd.bias_desc()});
    }
    Step *raw = step.get();
    finish(n, r, y, ins, std::move(step), pd.dst_desc());
    if (raw->swish_floats && n->outputs[0] == y)
      swished_[y] = {n, raw};
    return true;
  }

  bool lowerGemm(ref_node *n, const OpRecord &r, odla_value y) {
    const odla_value_shape &as = r.input->type.shape;
    if (as.size != 2 || r.weights->type.shape.size != 2)
      return false;
    /* oneDNN scales the bias with the product; Gemm scales only the product by alpha. */
    if (r.bias && r.alpha != 1.0f)
      return false;
    if (r.bias && r.beta != 1.0f && r.bias->kind != REF_CONSTANT)
      return false;
    const memory::dim m = y->type.shape.dims[0], nn = y->type.shape.dims[1],
                      k = as.dims[r.trans_a ? 0 : 1];
    if (smallStaysReference(m * nn * k, kSmallProduct))
      return false;
    if (m == 1 && r.weights->kind == REF_CONSTANT && rowProductAvailable())
      return lowerRowProduct(n, r, y, k, nn);
    const auto f32 = memory::data_type::f32;
    Desc src_md({m, k}, f32, r.trans_a ? memory::dims{1, m} : memory::dims{k, 1});
    Desc wview({k, nn}, f32, r.trans_b ? memory::dims{1, k} : memory::dims{nn, 1});
    bool const_b = r.weights->kind == REF_CONSTANT;
    Desc wei_md = const_b ? Desc({k, nn}, f32, memory::format_tag::any) : wview;
    Desc bias_md;
    if (r.bias) {
      const odla_value_shape &cs = r.bias->type.shape;
      memory::dim rows = cs.size >= 2 ? cs.dims[cs.size - 2] : 1;
      memory::dim cols = cs.size >= 1 ? cs.dims[cs.size - 1] : 1;
      bias_md = plainDesc(memory::dims{rows, cols});
    }
    dnnl::primitive_attr attr;
    if (!epilogueAttr(r, attr))
      return false;
    if (r.alpha != 1.0f)
      attr.set_output_scales(0, {r.alpha});
    dnnl::matmul::desc d(src_md, wei_md, bias_md, plainDesc(memory::dims{m, nn}));
    const bool one_thread = m * nn * k < kOneThreadProduct;
    ThreadScope scope(one_thread ? 1 : 0);
    auto pd = cachedPd<dnnl::matmul::primitive_desc>(d, attr);

    auto step = std::unique_ptr<Step>(new Step);
    step->one_thread = one_thread;
    step->prim = dnnl::matmul(pd);
    if (r.weights->kind == REF_CONSTANT)
      step->prim.constantWeights(wview, r.weights->data);
    step->scratchpad = pd.scratchpad_desc();
    if (const_b && !one_thread && (!r.bias || bias_md.dims()[0] == 1))
      columnBlocks(*step, r, pd, src_md, bias_md, m, k, nn);
    std::vector<odla_value> ins = {convert(r.input, plainDesc(r.input)),
                                   const_b ? convert(r.weights, pd.weights_desc(), &wview)
                                           : convert(r.weights, plainDesc(r.weights))};
    step->args = {{DNNL_ARG_SRC, false, 0, src_md},
                  {DNNL_ARG_WEIGHTS, false, 1, pd.weights_desc()}};
    if (r.bias) {
      ins.push_back(r.beta != 1.0f ? scaledConstant(r.bias, r.beta)
                                   : convert(r.bias, plainDesc(r.bias)));
      step->args.push_back({DNNL_ARG_BIAS, false, 2, bias_md});
    }
    finish(n, r, y, ins, std::move(step), pd.dst_desc());
    return true;
  }

  /* Gives a product by constant weights its column blocks (Step::blocks) where its weights'
   * layout is oneDNN's BA16a<N>b (N-column blocks of K x N, one after another, so a block's
   * weights are the layout's own for its columns, at an offset) and every block's one-thread
   * primitive is oneDNN's brgemm one; otherwise none. */
  void columnBlocks(Step &step, const OpRecord &r, const dnnl::matmul::primitive_desc &pd,
                    const Desc &src_md, const Desc &bias_md, memory::dim m, memory::dim k,
                    memory::dim nn) {
    if (nn < 2 * kBlockCols || m * nn * k < kBlockedProduct)
      return;
    const auto f32 = memory::data_type::f32;
    memory::format_tag tag = memory::format_tag::undef;
    for (auto t :
         {memory::format_tag::BA16a64b, memory::format_tag::BA16a32b, memory::format_tag::BA16a16b})
      if (Desc({k, nn}, f32, t) == pd.weights_desc())
        tag = t;
    if (tag == memory::format_tag::undef)
      return;
    dnnl::primitive_attr attr; /* the product's, with a scratchpad of the running thread's */
    if (!epilogueAttr(r, attr))
      return;
    if (r.alpha != 1.0f)
      attr.set_output_scales(0, {r.alpha});
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    ThreadScope one(1);
    std::vector<Step::Block> blocks;
    for (memory::dim j = 0; j < nn; j += kBlockCols) {
      Step::Block b;
      b.col = j;
      b.cols = std::min(kBlockCols, nn - j);
      b.weights = Desc({k, b.cols}, f32, tag);
      b.dst = plainDesc(memory::dims{m, b.cols});
      b.bias = bias_md.get_size() ? plainDesc(memory::dims{1, b.cols}) : Desc();
      b.weights_offset =
          pd.weights_desc().submemory_desc({k, b.cols}, {0, j}).data.offset0 * sizeof(float);
      auto bpd = cachedPd<dnnl::matmul::primitive_desc>(
          dnnl::matmul::desc(src_md, b.weights, b.bias, b.dst), attr);
      if (std::strncmp(bpd.impl_info_str(), "brg", 3) != 0)
        return;
      b.prim = dnnl::matmul(bpd);
      b.scratchpad = bpd.scratchpad_desc();
      blocks.push_back(std::move(b));
    }
    step.blocks = std::move(blocks);
    step.blocks_sum = r.residual != nullptr;
  }

  /* A Gemm of one row by constant weights (a decoder step's, a classifier's), or a 1x1
   * convolution of a batch-1 1x1 map (squeeze-and-excitation's): rowproduct.cpp's kernel on
   * the weights packed into its panels, the bias, residual and ReLU in the same pass; another
   * activation stays in the epilogue node, on the product (a few thousand floats). Operands:
   * the row, the bias (scaled by beta), the residual (its buffer may become the result's). */
  bool lowerRowProduct(ref_node *n, const OpRecord &r, odla_value y, memory::dim k,
                       memory::dim nn) {
    const bool fused = r.act == ODLA_EXT_FUSED_NONE || r.act == ODLA_EXT_FUSED_RELU;
    if (!fused) {
      keep_epilogue_ = true;
      y = n->outputs[0];
    }
    auto kernel = std::unique_ptr<RowKernel>(new RowKernel);
    kernel->panels = rowPanels(static_cast<const float *>(r.weights->data), k, nn, r.trans_b);
    kernel->p.panels = static_cast<const float *>(kernel->panels.get());
    kernel->p.k = k;
    kernel->p.n = nn;
    kernel->p.alpha = r.alpha;
    kernel->p.relu = r.act == ODLA_EXT_FUSED_RELU;
    std::vector<odla_value> ins = {convert(r.input, plainDesc(r.input)), nullptr, nullptr};
    if (r.bias) {
      kernel->p.bias_count = ref_count(&r.bias->type.shape);
      ins[1] = r.beta != 1.0f ? scaledConstant(r.bias, r.beta) : convert(r.bias, plainDesc(r.bias));
    }
    if (r.residual && fused) {
      kernel->residual = true;
      ins[2] = convert(r.residual, plainDesc(r.residual));
      inplace_.emplace_back(n, 2); /* each column's residual is read before it is written */
    }
    setOperands(n, ins, {y});
    if (r.epilogue && fused)
      n->op = r.kind == OpKind::Conv ? "ExtConv" : "ExtGemm";
    install(n, kernel.get(), rowKernelRun, 0);
    st_.kernels.push_back(std::move(kernel));
    order_.push_back(n);
    return true;
  }

  /* A constant's elements as int64 (an 8-bit or int32 integer constant); empty when `v` is
   * not one. */
  static std::vector<int64_t> constantInts(odla_value v) {
    std::vector<int64_t> out;
    if (!v || v->kind != REF_CONSTANT)
      return out;
    int64_t count = ref_count(&v->type.shape);
    for (int64_t i = 0; i < count; ++i)
      switch (v->type.element_type) {
      case ODLA_UINT8:
        out.push_back(static_cast<const uint8_t *>(v->data)[i]);
        break;
      case ODLA_INT8:
        out.push_back(static_cast<const int8_t *>(v->data)[i]);
        break;
      case ODLA_INT32:
        out.push_back(static_cast<const int32_t *>(v->data)[i]);
        break;
      default:
        return {};
      }
    return out;
  }

  /* A new one-element int32 constant holding `value`, for a run-time zero-point argument. */
  odla_value int32Constant(odla_value like, int32_t value) {
    st_.owned.push_back(alignedBuffer(sizeof value));
    void *buf = st_.owned.back().get();
    std::memcpy(buf, &value, sizeof value);
    odla_value w = newValue(like, "/s32", REF_CONSTANT);
    w->type.element_type = ODLA_INT32;
    w->type.shape.size = 0;
    w->data = buf;
    return w;
  }

  /* An integer-only product (odla_ext_quant.h) as a oneDNN int8 primitive, when oneDNN takes
   * its operands: u8 or s8 data, s8 weights with zero zero points (constant for convolutions),
   * constant requantization and zero points, a constant bias. The factor multiplier / 2^shift
   * becomes the output scale (float32: within one output step of the exact fixed-point rounding),
   * the zero points run-time zero-point arguments, the clamp an eltwise_clip post-op below the
   * destination zero point. oneDNN 2.x adds the s32 bias before scaling, as the accumulator
   * does. */
  bool lowerQuantized(ref_node *n, const OpRecord &r, odla_value y) {
    const odla_element_type xt = r.input->type.element_type, yt = y->type.element_type;
    const bool constWeights = r.weights->kind == REF_CONSTANT, conv = r.kind == OpKind::QConv;
    if (!r.multiplier || !r.shift || !r.output_zero_point)
      return false; /* an int32 result (no requantization): the reference kernel */
    if ((xt != ODLA_UINT8 && xt != ODLA_INT8) || r.weights->type.element_type != ODLA_INT8 ||
        (!constWeights && r.kind == OpKind::QConv) || (r.bias && r.bias->kind != REF_CONSTANT))
      return false;
    std::vector<int64_t> wz = constantInts(r.weights_zero_point),
                         xz = constantInts(r.input_zero_point),
                         yz = constantInts(r.output_zero_point), mult = constantInts(r.multiplier),
                         shift = constantInts(r.shift);
    /* Weight zero points: none for constant weights (oneDNN's int8 convolutions and fast
     * matmuls take none); one common to all of a computed matmul operand's elements (an
     * attention product's) is a run-time zero-point argument, if the matmul oneDNN then picks
     * is not its reference one. */
    const int32_t w0 = wz.empty() ? 0 : int32_t(wz[0]);
    for (int64_t z : wz)
      if (z != w0 || (w0 && (constWeights || conv)))
        return false;
    if ((r.weights_zero_point && wz.empty()) || (r.input_zero_point && xz.empty()) || yz.empty() ||
        mult.empty() || mult.size() != shift.size())
      return false;
    std::vector<float> scales;
    for (size_t c = 0; c < mult.size(); ++c)
      scales.push_back(static_cast<float>(std::ldexp(double(mult[c]), -int(shift[c]))));
    const int yRank = y->type.shape.size;
    dnnl::primitive_attr attr;
    attr.set_output_scales(scales.size() > 1 ? (conv ? 1 << 1 : 1 << (yRank - 1)) : 0, scales);
    const int32_t x0 = xz.empty() ? 0 : int32_t(xz[0]), y0 = int32_t(yz[0]);
    if (x0)
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (w0)
      attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {DNNL_RUNTIME_S32_VAL});
    if (y0)
      attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    const int32_t lo = yt == ODLA_UINT8 ? 0 : -128, hi = yt == ODLA_UINT8 ? 255 : 127;
    if (r.output_min > lo || r.output_max < hi) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, float(r.output_min - y0),
                         float(r.output_max - y0));
      attr.set_post_ops(ops);
    }
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const memory::data_type xdt = dataType(xt), ydt = dataType(yt), s8 = memory::data_type::s8,
                            s32 = memory::data_type::s32;
    const auto any = memory::format_tag::any;
    std::vector<odla_value> ins;
    auto step = std::unique_ptr<Step>(new Step);
    Desc dst;
    if (conv) {
      const odla_value_shape &xs = r.input->type.shape, &ws = r.weights->type.shape;
      if (r.input_layout != ODLA_CHANNELS_FIRST || r.kernel_layout != ODLA_OIS || xs.size < 3 ||
          xs.size > 5)
        return false;
      const memory::dim g = r.group, o = ws.dims[0];
      memory::dims wdims = dimsOf(ws);
      if (g > 1) {
        wdims.insert(wdims.begin(), g);
        wdims[1] = o / g;
      }
      Desc wview = plainDesc(wdims, s8);
      memory::dims strides(r.strides.begin(), r.strides.end()), dil,
          pl(r.pad_front.begin(), r.pad_front.end()), pr(r.pad_back.begin(), r.pad_back.end());
      for (int64_t d : r.dilations)
        dil.push_back(d - 1);
      Desc bias_md = r.bias ? plainDesc(memory::dims{o}, s32) : Desc();
      dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          Desc(dimsOf(xs), xdt, any), Desc(wdims, s8, any), bias_md,
          Desc(dimsOf(y->type.shape), ydt, any), strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(d, attr, cpuEngine());
      step->prim = dnnl::convolution_forward(pd);
      if (r.weights->kind == REF_CONSTANT)
        step->prim.constantWeights(wview, r.weights->data);
      step->scratchpad = pd.scratchpad_desc();
      ins = {convert(r.input, pd.src_desc()), convert(r.weights, pd.weights_desc(), &wview)};
      step->args = {{DNNL_ARG_SRC, false, 0, pd.src_desc()},
                    {DNNL_ARG_WEIGHTS, false, 1, pd.weights_desc()}};
      if (r.bias) {
        ins.push_back(convert(r.bias, pd.bias_desc()));
        step->args.push_back({DNNL_ARG_BIAS, false, 2, pd.bias_desc()});
      }
      dst = pd.dst_desc();
    } else {
      /* Constant weights: [K, N] (read as [1, ..., K, N]), reordered once into oneDNN's
       * layout; computed ones (attention's products): plain, of the data's rank. */
      const odla_value_shape &xs = r.input->type.shape, &ws = r.weights->type.shape;
      if (xs.size < 2 || xs.size > 4 || (constWeights ? ws.size != 2 : ws.size != xs.size))
        return false;
      memory::dims wdims = dimsOf(ws), bdims(xs.size, 1);
      wdims.insert(wdims.begin(), xs.size - ws.size, 1);
      bdims[xs.size - 1] = ws.dims[ws.size - 1];
      Desc wview = plainDesc(wdims, s8);
      Desc src_md = plainDesc(r.input), bias_md = r.bias ? plainDesc(bdims, s32) : Desc();
      dnnl::matmul::desc d(src_md, constWeights ? Desc(wdims, s8, any) : wview, bias_md,
                           plainDesc(y));
      dnnl::matmul::primitive_desc pd(d, attr, cpuEngine());
      if (w0 && std::strncmp(pd.impl_info_str(), "ref", 3) == 0)
        return false; /* the reference kernel is faster than oneDNN's */
      step->prim = dnnl::matmul(pd);
      if (r.weights->kind == REF_CONSTANT)
        step->prim.constantWeights(wview, r.weights->data);
      step->scratchpad = pd.scratchpad_desc();
      ins = {convert(r.input, src_md), constWeights ? convert(r.weights, pd.weights_desc(), &wview)
                                                    : convert(r.weights, plainDesc(r.weights))};
      step->args = {{DNNL_ARG_SRC, false, 0, src_md},
                    {DNNL_ARG_WEIGHTS, false, 1, pd.weights_desc()}};
      if (r.bias) {
        ins.push_back(r.bias); /* [N] read as [1, ..., N]: the same bytes */
        step->args.push_back({DNNL_ARG_BIAS, false, 2, bias_md});
      }
      dst = pd.dst_desc();
    }
    const Desc zp_md = plainDesc(memory::dims{1}, s32);
    if (x0) {
      step->args.push_back(
          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, false, static_cast<int>(ins.size()), zp_md});
      ins.push_back(int32Constant(r.input, x0));
    }
    if (w0) {
      step->args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, false,
                            static_cast<int>(ins.size()), zp_md});
      ins.push_back(int32Constant(r.weights, w0));
    }
    if (y0) {
      step->args.push_back(
          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, false, static_cast<int>(ins.size()), zp_md});
      ins.push_back(int32Constant(y, y0));
    }
    finish(n, r, y, ins, std::move(step), dst);
    return true;
  }

  odla_value scaledConstant(odla_value c, float scale) {
    size_t count = static_cast<size_t>(ref_count(&c->type.shape));
    st_.owned.push_back(alignedBuffer(count * sizeof(float) + 1));
    void *buf = st_.owned.back().get();
    const float *src = static_cast<const float *>(c->data);
    float *dst = static_cast<float *>(buf);
    for (size_t i = 0; i < count; ++i)
      dst[i] = src[i] * scale;
    odla_value w = newValue(c, "/scaled", REF_CONSTANT);
    w->data = buf;
    return w;
  }

  /* A global average pool of an nChw16c convolution result that a swish pass finishes
   * (EfficientNet's squeeze-and-excitation blocks): the pass sums each channel while it writes
   * it, so the pool's node is dropped and its result becomes the convolution's second one
   * (in nChw16c), saving a read of the tensor and, at 2 threads, a primitive that scaled
   * 1.2x. */
  bool fusePool(ref_node *n, const OpRecord &r, odla_value y) {
    auto it = swished_.find(r.input);
    const odla_value_shape &xs = r.input->type.shape, &ys = y->type.shape;
    const auto f32 = memory::data_type::f32;
    const auto blocked = memory::format_tag::nChw16c;
    if (it == swished_.end() || r.kind != OpKind::AvgPool || xs.size != 4 || y->is_output ||
        it->second.second->pool_out >= 0 || !(descOf(r.input) == Desc(dimsOf(xs), f32, blocked)))
      return false;
    for (int i = 0; i < 2; ++i)
      if (r.window[i] != xs.dims[2 + i] || ys.dims[2 + i] != 1 || r.pad_front[i] != 0 ||
          r.pad_back[i] != 0)
        return false;
    ref_node *conv = it->second.first;
    Step *step = it->second.second;
    std::vector<odla_value> outs(conv->outputs, conv->outputs + conv->num_outputs);
    step->pool_out = static_cast<int>(outs.size());
    step->pool_blocks = static_cast<size_t>(xs.dims[0] * ((xs.dims[1] + 15) / 16));
    step->pool_hw = static_cast<size_t>(xs.dims[2] * xs.dims[3]);
    outs.push_back(y);
    setOperands(conv, std::vector<odla_value>(conv->inputs, conv->inputs + conv->num_inputs), outs);
    layout_[y] = Desc(dimsOf(ys), f32, blocked);
    dropped_.push_back(n);
    return true;
  }

  bool lowerPool(ref_node *n, const OpRecord &r, odla_value y) {
    const odla_value_shape &xs = r.input->type.shape, &ys = y->type.shape;
    if (r.input_layout != ODLA_CHANNELS_FIRST || xs.size < 3 || xs.size > 5)
      return false;
    if (fusePool(n, r, y))
      return true;
    memory::dims kernel(r.window.begin(), r.window.end()),
        strides(r.strides.begin(), r.strides.end()), pl(r.pad_front.begin(), r.pad_front.end()),
        pr(kernel.size());
    for (size_t i = 0; i < kernel.size(); ++i) {
      /* The back padding that gives the result's extent (ceil rounding may need more). */
      pr[i] = (ys.dims[i + 2] - 1) * strides[i] + kernel[i] - xs.dims[i + 2] - pl[i];
      if (pr[i] < 0 || (r.include_pad && pr[i] != r.pad_back[i]))
        return false;
    }
    dnnl::algorithm alg = r.kind == OpKind::MaxPool ? dnnl::algorithm::pooling_max
                          : r.include_pad           ? dnnl::algorithm::pooling_avg_include_padding
                                                    : dnnl::algorithm::pooling_avg_exclude_padding;
    Desc src = descOf(r.input);
    Desc dst_any(dimsOf(ys), dataType(y->type.element_type), memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst_any, strides,
                                  kernel, pl, pr);
    dnnl::pooling_forward::primitive_desc pd(d, attr, cpuEngine());
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0)
      return false; /* oneDNN's reference pooling (ResNet-50's int8 stem on plain data without
                       VNNI kernels around it: 62 ms) is slower than the reference backend's */

    auto step = std::unique_ptr<Step>(new Step);
    step->prim = dnnl::pooling_forward(pd);
    step->scratchpad = pd.scratchpad_desc();
    step->args = {{DNNL_ARG_SRC, false, 0, pd.src_desc()}};
    finish(n, r, y, {convert(r.input, pd.src_desc())}, std::move(step), pd.dst_desc());
    return true;
  }

  bool lowerEltwise(ref_node *n, const OpRecord &r, odla_value y) {
    float alpha = r.act_alpha, beta = r.act_beta;
    dnnl::algorithm alg =
        r.eltwise_alg != dnnl::algorithm::undef ? r.eltwise_alg : activationAlg(r.act, alpha, beta);
    Desc src = descOf(r.input);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, alpha, beta);
    const bool one_thread = ref_count(&y->type.shape) < kOneThreadElements;
    ThreadScope scope(one_thread ? 1 : 0);
    auto pd = cachedPd<dnnl::eltwise_forward::primitive_desc>(d, attr);

    auto step = std::unique_ptr<Step>(new Step);
    step->one_thread = one_thread;
    step->prim = dnnl::eltwise_forward(pd);
    step->scratchpad = pd.scratchpad_desc();
    step->args = {{DNNL_ARG_SRC, false, 0, src}};
    inplace_.emplace_back(n, 0);
    finish(n, r, y, {r.input}, std::move(step), pd.dst_desc());
    return true;
  }

  /* lhs op rhs where rhs broadcasts to lhs (numpy rules, lhs has the result's shape; Add and
   * Mul commute, so a broadcast lhs swaps with rhs: EfficientNet's scale * x); rhs is read in
   * lhs's layout when it has lhs's shape, or when it is a [1,C,1,1] per-channel operand of
   * an nChw16c lhs with C a multiple of 16 (oneDNN's jit kernel broadcasts only within one
   * layout; a [1,C,1,1] product already has it; test_qlinearconv's padded scalar read
   * blocked came out wrong), else plain under lhs's rank. */
  bool lowerBinary(ref_node *n, const OpRecord &r, odla_value y) {
    odla_value lhs = r.input, rhs = r.weights;
    if (!ref_same_shape(&lhs->type.shape, &y->type.shape) &&
        ref_same_shape(&rhs->type.shape, &y->type.shape))
      std::swap(lhs, rhs);
    const odla_value_shape &as = lhs->type.shape, &bs = rhs->type.shape;
    if (!ref_same_shape(&as, &y->type.shape) || bs.size > as.size || as.size == 0 ||
        smallStaysReference(ref_count(&y->type.shape), kSmallProduct / 16))
      return false; /* (a few thousand elements: the reference loop, as kSmallProduct says) */
    memory::dims bdims(static_cast<size_t>(as.size), 1);
    for (int i = 0; i < bs.size; ++i) {
      int64_t d = bs.dims[i], at = as.dims[i + as.size - bs.size];
      if (d != at && d != 1)
        return false;
      bdims[static_cast<size_t>(i + as.size - bs.size)] = d;
    }
    bool same = ref_same_shape(&as, &bs);
    if (!same && layout_.count(rhs) && bs.size != as.size)
      return false;                   /* a blocked rhs of another rank */
    Desc rhs_view = plainDesc(bdims); /* plain rhs data under lhs's rank */
    const auto blocked = memory::format_tag::nChw16c;
    Desc src0 = descOf(lhs), src1 = same ? src0 : plainDesc(bdims);
    const bool per_channel = !same && as.size == 4 && bdims[1] == as.dims[1] &&
                             bdims[0] * bdims[2] * bdims[3] == 1 &&
                             src0 == Desc(dimsOf(as), memory::data_type::f32, blocked);
    if (per_channel && as.dims[1] % 16 != 0 &&
        (r.binary_alg == dnnl::algorithm::binary_mul ||
         r.binary_alg == dnnl::algorithm::binary_add))
      return lowerChannelOp(n, r, y, lhs,
                            convert(rhs, src1, layout_.count(rhs) ? nullptr : &rhs_view));
    if (per_channel)
      src1 = Desc(bdims, memory::data_type::f32, blocked);
    Desc dst_any(dimsOf(as), memory::data_type::f32, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::binary::desc d(r.binary_alg, src0, src1, dst_any);
    auto pd = cachedPd<dnnl::binary::primitive_desc>(d, attr);
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0)
      return false; /* oneDNN's reference kernel (a [1,C,1,1] scale of a padded blocked C:
                       MobileNetV3-Large's 3.7 ms against the reference backend's ~0.1) */

    auto step = std::unique_ptr<Step>(new Step);
    step->prim = dnnl::binary(pd);
    step->scratchpad = pd.scratchpad_desc();
    step->args = {{DNNL_ARG_SRC_0, false, 0, src0}, {DNNL_ARG_SRC_1, false, 1, src1}};
    inplace_.emplace_back(n, 0);
    finish(n, r, y, {lhs, convert(rhs, src1, same || layout_.count(rhs) ? nullptr : &rhs_view)},
           std::move(step), pd.dst_desc());
    return true;
  }

  /* lhs (nChw16c, channels no multiple of 16) op rhs (plain [1,C,1,1]): ChannelKernel. */
  bool lowerChannelOp(ref_node *n, const OpRecord &r, odla_value y, odla_value lhs,
                      odla_value rhs) {
    const odla_value_shape &as = lhs->type.shape;
    auto kernel = std::unique_ptr<ChannelKernel>(new ChannelKernel);
    kernel->channels = as.dims[1];
    kernel->blocks = (as.dims[1] + 15) / 16;
    kernel->planes = as.dims[0] * kernel->blocks;
    kernel->hw = as.dims[2] * as.dims[3];
    kernel->add = r.binary_alg == dnnl::algorithm::binary_add;
    odla_value produced = placeResult(y, descOf(lhs));
    setOperands(n, {lhs, rhs}, {produced});
    install(n, kernel.get(), channelKernelRun,
            static_cast<size_t>(kernel->blocks) * 16 * sizeof(float));
    st_.kernels.push_back(std::move(kernel));
    inplace_.emplace_back(n, 0);
    emit(n, produced, y);
    return true;
  }

  /* Concat along the channels of batch-1 nChw16c values whose channels are multiples of 16:
   * each part is then a contiguous run of the result's blocks, so its producer writes it in
   * place there and no node runs (SqueezeNet's fire modules). Parts must be results not yet
   * placed in another concatenation; anything else keeps the reference kernel. */
  bool lowerConcat(ref_node *n, const OpRecord &r, odla_value y) {
    const odla_value_shape &ys = y->type.shape;
    const auto blocked = memory::format_tag::nChw16c;
    if (r.axis != 1 || ys.size != 4 || ys.dims[0] != 1 || y->is_output ||
        convActivationTag(4) != blocked)
      return false;
    for (int i = 0; i < n->num_inputs; ++i) {
      odla_value p = n->inputs[i];
      auto it = layout_.find(p);
      if (p->kind != REF_RESULT || p->is_output || p->type.shape.dims[1] % 16 != 0 ||
          it == layout_.end() ||
          !(it->second == Desc(dimsOf(p->type.shape), memory::data_type::f32, blocked)) ||
          slices_.count(p) || wholes_.count(p))
        return false;
      for (int j = 0; j < i; ++j)
        if (n->inputs[j] == p)
          return false;
    }
    size_t offset = 0;
    for (int i = 0; i < n->num_inputs; ++i) {
      slices_[n->inputs[i]] = {y, offset};
      offset += layout_[n->inputs[i]].get_size();
    }
    layout_[y] = Desc(dimsOf(ys), memory::data_type::f32, blocked);
    wholes_.insert(y);
    dropped_.push_back(n);
    return true;
  }

  /* Step 4: the node order, lifetimes, in-place residuals and the arena. */
  odla_status plan() {
    const int count = static_cast<int>(order_.size());
    auto *nodes = static_cast<ref_node **>(
        std::realloc(comp_->nodes, static_cast<size_t>(count ? count : 1) * sizeof(ref_node *)));
    if (!nodes)
      return ODLA_MEM_ERROR;
    comp_->nodes = nodes;
    comp_->num_nodes = comp_->cap_nodes = count;
    /* Node indices of each value's first and last use, by value index (-1: none). */
    std::vector<int> first_use(static_cast<size_t>(comp_->num_values), -1),
        last_use(first_use.size(), -1);
    auto first = [&](odla_value v) -> int & { return first_use[static_cast<size_t>(v->index)]; };
    auto last = [&](odla_value v) -> int & { return last_use[static_cast<size_t>(v->index)]; };
    for (int i = 0; i < count; ++i) {
      ref_node *n = order_[static_cast<size_t>(i)];
      comp_->nodes[i] = n;
      n->index = i;
      for (int k = 0; k < n->num_inputs; ++k)
        if (n->inputs[k])
          last(n->inputs[k]) = i;
      for (int k = 0; k < n->num_outputs; ++k) {
        first(n->outputs[k]) = i;
        if (last(n->outputs[k]) < 0)
          last(n->outputs[k]) = i;
      }
    }
    /* A concatenation lives from its first part's production to its own or its parts' last
     * use; the parts are planned inside it. */
    for (const auto &s : slices_) {
      odla_value p = s.first, w = s.second.whole;
      first(w) = first(w) >= 0 ? std::min(first(w), first(p)) : first(p);
      last(w) = last(w) >= 0 ? std::max(last(w), last(p)) : last(p);
    }
    /* Buffers: values sharing one are grouped under the first value (its root). */
    std::unordered_map<odla_value, odla_value> root;
    auto rootOf = [&](odla_value v) {
      auto it = root.find(v);
      return it == root.end() ? v : it->second;
    };
    ref_plan_views(comp_); /* results that are views of arguments take no buffer */
    for (const auto &s : slices_)
      ref_set_view(s.first, nullptr);
    for (odla_value w : wholes_)
      ref_set_view(w, nullptr);
    auto planned = [&](odla_value v) {
      return v && v->kind == REF_RESULT && !v->is_output && !ref_view_source(v) && first(v) >= 0 &&
             bytesOf(v) > 0 && !slices_.count(v);
    };
    auto sliced = [&](odla_value v) { return slices_.count(v) || wholes_.count(v); };
    std::unordered_map<odla_value, int> group_last;
    for (const auto &cand : inplace_) {
      ref_node *n = cand.first;
      odla_value res = n->inputs[cand.second], y = n->outputs[0];
      odla_value rr = rootOf(res);
      int rlast = group_last.count(rr) ? group_last[rr] : last(res);
      bool shared_input = false;
      for (int k = 0; k < n->num_inputs; ++k)
        shared_input |= k != cand.second && n->inputs[k] && rootOf(n->inputs[k]) == rr;
      /* A Reshape's result is a view of its (plain) operand's bytes: it shares the buffer even
       * while the operand is still read, the group's lifetime spanning both, so an in-place
       * primitive later writes the group only where all its values die. */
      const bool view = !std::strcmp(n->op, "Reshape");
      if (!planned(res) || !planned(y) || sliced(res) || sliced(y) ||
          (!view && (rlast != n->index || shared_input || !(descOf(res) == descOf(y)))))
        continue;
      root[y] = rr;
      group_last[rr] = std::max(rlast, last(y));
    }
    std::unordered_map<odla_value, ref_buffer> groups;
    std::vector<odla_value> group_order;
    for (int i = 0; i < comp_->num_values; ++i) {
      odla_value v = comp_->values[i];
      if (!planned(v))
        continue;
      ref_where(v)->first_use = first(v);
      ref_where(v)->last_use = last(v);
      odla_value g = rootOf(v);
      auto it = groups.find(g);
      if (it == groups.end()) {
        ref_buffer b = {};
        b.size = alignUp(bytesOf(v));
        b.first = first(v);
        b.last = last(v);
        b.order = static_cast<int>(group_order.size());
        groups.emplace(g, b);
        group_order.push_back(g);
      } else {
        it->second.size = std::max(it->second.size, alignUp(bytesOf(v)));
        it->second.first = std::min(it->second.first, first(v));
        it->second.last = std::max(it->second.last, last(v));
      }
    }
    std::vector<size_t> offsets(group_order.size() + static_cast<size_t>(count));
    std::vector<ref_buffer> bufs;
    for (size_t i = 0; i < group_order.size(); ++i) {
      ref_buffer b = groups[group_order[i]];
      b.offset = &offsets[i];
      bufs.push_back(b);
    }
    for (int i = 0; i < count; ++i) {
      ref_node *n = comp_->nodes[i];
      if (!n->scratch_bytes)
        continue;
      ref_buffer b = {};
      b.size = alignUp(n->scratch_bytes);
      b.first = b.last = i;
      b.order = static_cast<int>(bufs.size());
      b.offset = &n->scratch_offset;
      bufs.push_back(b);
    }
    size_t arena = ref_plan_buffers(bufs.data(), static_cast<int>(bufs.size()), nullptr);
    if (arena == static_cast<size_t>(-1))
      return ODLA_MEM_ERROR;
    for (ref_buffer &b : bufs)
      *b.offset = b.placed;
    std::unordered_map<odla_value, size_t> group_offset;
    for (size_t i = 0; i < group_order.size(); ++i)
      group_offset[group_order[i]] = offsets[i];
    for (int i = 0; i < comp_->num_values; ++i) {
      odla_value v = comp_->values[i];
      if (planned(v))
        ref_where(v)->offset = group_offset[rootOf(v)];
    }
    for (const auto &s : slices_) {
      odla_value p = s.first;
      ref_where(p)->first_use = first(p);
      ref_where(p)->last_use = last(p);
      ref_where(p)->offset = ref_where(s.second.whole)->offset + s.second.offset;
    }
    comp_->arena_bytes = arena;
    comp_->compiled = 1;
    return ODLA_SUCCESS;
  }
};

/* If and Loop regions address nodes by position and keep values live across iterations;
 * this backend leaves computations that hold them to the reference planner and kernels. */
bool hasControlFlow(odla_computation comp) {
  for (int i = 0; i < comp->num_nodes; ++i)
    if (!std::strcmp(comp->nodes[i]->op, "BeginIf") ||
        !std::strcmp(comp->nodes[i]->op, "BeginLoop"))
      return true;
  return false;
}

} // namespace

bool attrKey(const dnnl::primitive_attr &attr, std::string &key) {
  auto put = [&key](const void *p, size_t n) { key.append(static_cast<const char *>(p), n); };
  const_dnnl_primitive_attr_t a = attr.get();
  dnnl_scratchpad_mode_t mode = dnnl_scratchpad_mode_library;
  dnnl_dim_t count = 0;
  int mask = 0;
  const float *scales = nullptr;
  if (dnnl_primitive_attr_get_scratchpad_mode(a, &mode) != dnnl_success ||
      dnnl_primitive_attr_get_output_scales(a, &count, &mask, &scales) != dnnl_success)
    return false;
  put(&mode, sizeof mode);
  put(&count, sizeof count);
  put(&mask, sizeof mask);
  put(scales, static_cast<size_t>(count) * sizeof *scales);
  for (int arg : {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}) {
    const int32_t *zps = nullptr;
    if (dnnl_primitive_attr_get_zero_points(a, arg, &count, &mask, &zps) != dnnl_success)
      return false;
    put(&count, sizeof count);
    put(&mask, sizeof mask);
    put(zps, static_cast<size_t>(count) * sizeof *zps);
  }
  const_dnnl_post_ops_t po = nullptr;
  if (dnnl_primitive_attr_get_post_ops(a, &po) != dnnl_success)
    return false;
  const int len = dnnl_post_ops_len(po);
  put(&len, sizeof len);
  for (int i = 0; i < len; ++i) {
    dnnl_primitive_kind_t kind = dnnl_post_ops_get_kind(po, i);
    put(&kind, sizeof kind);
    float scale = 0, alpha = 0, beta = 0;
    dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
    if (kind == dnnl_eltwise) {
      if (dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta) != dnnl_success)
        return false;
      put(&scale, sizeof scale);
      put(&alg, sizeof alg);
      put(&alpha, sizeof alpha);
      put(&beta, sizeof beta);
    } else if (kind == dnnl_sum) {
      int32_t zero_point = 0;
      dnnl_data_type_t type = dnnl_data_type_undef;
      if (dnnl_post_ops_get_params_sum_v3(po, i, &scale, &zero_point, &type) != dnnl_success)
        return false;
      put(&scale, sizeof scale);
      put(&zero_point, sizeof zero_point);
      put(&type, sizeof type);
    } else if (kind == dnnl_binary) {
      const dnnl_memory_desc_t *src1 = nullptr;
      if (dnnl_post_ops_get_params_binary(po, i, &alg, &src1) != dnnl_success || !src1)
        return false;
      put(&alg, sizeof alg);
      put(src1, sizeof *src1);
    } else {
      return false;
    }
  }
  return true;
}

void logError(const char *func, const char *msg) {
  odla_logging_func logger = odla_GetLogger();
  if (logger)
    logger(__FILE__, __LINE__, func, ODLA_LOG_LEVEL_ERROR, msg);
  else
    std::fprintf(stderr, "odla_dnnl: %s: %s\n", func, msg);
}

void recordOp(odla_value result, OpRecord rec, bool fused) {
  if (!result || !result->node || ref_current()->interpret)
    return;
  ref_node *n = result->node;
  if (fused) {
    rec.epilogue = n;
    n = n->inputs[0]->node;
  }
  stateOf(ref_current()).records[n] = std::move(rec);
}

odla_status compile(odla_computation comp) {
  if (comp->error != ODLA_SUCCESS || comp->interpret)
    return comp->error; /* interpret mode: the reference backend runs the ops as built */
  CompState &st = stateOf(comp);
  if (st.compiled)
    return ODLA_SUCCESS;
  st.compiled = true;
  if (hasControlFlow(comp))
    return ODLA_SUCCESS; /* the reference backend compiles it when first asked */
  ThreadScope threads(st.threads ? st.threads : defaultThreads());
  odla_status s;
  try {
    s = Compiler(comp, st).run();
  } catch (const dnnl::error &e) {
    logError("CompileComputation", e.what());
    s = ODLA_FAILURE;
  } catch (const std::bad_alloc &) {
    logError("CompileComputation", "out of memory");
    s = ODLA_MEM_ERROR;
  }
  if (s != ODLA_SUCCESS)
    comp->error = s; /* the node list may be half rewritten: never run it */
  return s;
}

bool rewritten(odla_computation comp) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_comps.find(comp);
  return it != g_comps.end() && it->second->compiled && !hasControlFlow(comp);
}

void forget(odla_computation comp) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_comps.erase(comp);
}

void setComputationThreads(odla_computation comp, int threads) { stateOf(comp).threads = threads; }

int computationThreads(odla_computation comp) { return stateOf(comp).threads; }

void setContextThreads(odla_context ctx, int threads) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_context_threads[ctx] = threads;
}

int contextThreads(odla_context ctx) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_context_threads.find(ctx);
  return it == g_context_threads.end() ? 0 : it->second;
}

void forgetContext(odla_context ctx) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_context_threads.erase(ctx);
}

bool oneThreadNext(odla_computation comp) {
  CompState &st = stateOf(comp);
  std::lock_guard<std::mutex> lock(st.chooser_mutex);
  return st.chooser.oneNext();
}

void recordRun(odla_computation comp, bool one, double seconds, long preemptions) {
  CompState &st = stateOf(comp);
  std::lock_guard<std::mutex> lock(st.chooser_mutex);
  st.chooser.record(one, seconds, preemptions);
}

} // namespace odla_dnnl
