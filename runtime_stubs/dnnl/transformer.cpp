// transformer.cpp: the transformer ops of odla_ext_transformer.h on oneDNN. ExtLayerNorm runs
// as layer_normalization_forward; ExtAttention as a batched matmul (query x key^T, the scale
// as its output scale, the mask as a binary-add post-op), an in-place softmax_forward and a
// second batched matmul (x value), every head at once. Both read and write plain row-major
// data, so they replace the reference kernel of their node before compile.cpp lowers the rest
// (lowerTransformerOps). An attention also reads its query, key and value through the
// Transposes that make them (the heads split out of a Gemm's rows) and writes its result
// through the Transpose that merges the heads back, as strided memory descriptors: those
// Transpose nodes are removed, so the heads never get copied.
#include "dnnl_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace odla_dnnl {

void install(ref_node *n, NodeKernel *k, ref_kernel run, size_t scratch) {
  // NOLINTNEXTLINE(bugprone-sizeof-expression): the params hold a pointer to the kernel
  auto *slot = static_cast<NodeKernel **>(std::malloc(sizeof(NodeKernel *)));
  if (!slot)
    throw std::bad_alloc();
  *slot = k;
  ref_node_free_params(n);
  n->params = slot;
  n->params_size = sizeof *slot; // NOLINT(bugprone-sizeof-expression): one pointer
  n->run = run;
  n->engine = "dnnl";
  n->scratch_bytes = scratch;
}

namespace {

using dnnl::memory;
using Desc = memory::desc;

memory mem(const Desc &md, const void *data) {
  return memory(md, cpuEngine(), const_cast<void *>(data));
}

/* ---- ExtLayerNorm ---------------------------------------------------------------------- */

struct LayerNormKernel : NodeKernel {
  ThreadedPrimitive prim;
  Desc data, param, stats, scratchpad;
  bool scale = false, shift = false;
  size_t stats_bytes = 0; /* mean and variance, when the primitive wants them, then scratchpad */
};

odla_status layerNormRun(const ref_node *node, const ref_io *io) {
  const auto &k = kernelOf<LayerNormKernel>(node);
  try {
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, mem(k.data, io->in[0])},
                                            {DNNL_ARG_DST, mem(k.data, io->out[0])}};
    if (k.scale)
      args.emplace(DNNL_ARG_SCALE, mem(k.param, io->in[1]));
    if (k.shift)
      args.emplace(DNNL_ARG_SHIFT, mem(k.param, io->in[2]));
    char *scratch = static_cast<char *>(io->scratch);
    if (k.stats_bytes) {
      args.emplace(DNNL_ARG_MEAN, mem(k.stats, scratch));
      args.emplace(DNNL_ARG_VARIANCE, mem(k.stats, scratch + alignUp(k.stats.get_size())));
    }
    if (k.scratchpad.get_size())
      args.emplace(DNNL_ARG_SCRATCHPAD, mem(k.scratchpad, scratch + k.stats_bytes));
    k.prim.execute(threadStream(), args);
  } catch (const dnnl::error &e) {
    logError("ExecuteComputation", e.what());
    return ODLA_FAILURE;
  }
  return ODLA_SUCCESS;
}

/* x viewed as [rows, D] (D: the normalized dims), scale and bias as [D]. */
std::unique_ptr<NodeKernel> lowerLayerNorm(ref_node *n, const OpRecord &r) {
  odla_value x = n->inputs[0];
  if (!isF32(x) || !isF32(r.weights) || !isF32(r.bias) || hasZeroDim(x) || x->type.shape.size == 0)
    return nullptr;
  memory::dim cols = 1;
  for (int d = r.axis; d < x->type.shape.size; ++d)
    cols *= x->type.shape.dims[d];
  memory::dim rows = ref_count(&x->type.shape) / cols;
  if (smallStaysReference(rows * cols, 4096))
    return nullptr; /* a decoder step's few rows: the reference kernel costs less than the
                       primitive, made at every step of a computation built per dims */
  auto k = std::unique_ptr<LayerNormKernel>(new LayerNormKernel);
  const auto f32 = memory::data_type::f32;
  k->data = Desc({rows, cols}, f32, memory::format_tag::ab);
  k->param = Desc({cols}, f32, memory::format_tag::a);
  k->scale = r.weights != nullptr;
  k->shift = r.bias != nullptr;
  auto flags = dnnl::normalization_flags::none;
  if (k->scale)
    flags |= dnnl::normalization_flags::use_scale;
  if (k->shift)
    flags |= dnnl::normalization_flags::use_shift;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, k->data, r.epsilon,
                                            flags);
  auto pd = cachedPd<dnnl::layer_normalization_forward::primitive_desc>(d, attr);
  k->prim = dnnl::layer_normalization_forward(pd);
  k->stats = pd.mean_desc();
  k->stats_bytes = k->stats.get_size() ? 2 * alignUp(k->stats.get_size()) : 0;
  k->scratchpad = pd.scratchpad_desc();
  install(n, k.get(), layerNormRun, k->stats_bytes + k->scratchpad.get_size());
  return std::unique_ptr<NodeKernel>(k.release());
}

/* ---- ExtAttention ---------------------------------------------------------------------- */

struct AttentionKernel : NodeKernel {
  ThreadedPrimitive scores_prim, values_prim, softmax;
  Desc query, key_t, value, scores, mask, dst, qk_pad, softmax_pad, pv_pad;
  bool has_mask = false;
  size_t scores_bytes = 0; /* the scores' share of the node's scratch, before the scratchpad */
};

odla_status attentionRun(const ref_node *node, const ref_io *io) {
  const auto &k = kernelOf<AttentionKernel>(node);
  try {
    char *scratch = static_cast<char *>(io->scratch);
    memory scores = mem(k.scores, scratch);
    std::unordered_map<int, memory> qk = {{DNNL_ARG_SRC, mem(k.query, io->in[0])},
                                          {DNNL_ARG_WEIGHTS, mem(k.key_t, io->in[1])},
                                          {DNNL_ARG_DST, scores}};
    if (k.has_mask)
      qk.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mem(k.mask, io->in[4]));
    if (k.qk_pad.get_size())
      qk.emplace(DNNL_ARG_SCRATCHPAD, mem(k.qk_pad, scratch + k.scores_bytes));
    k.scores_prim.execute(threadStream(), qk);
    std::unordered_map<int, memory> sm = {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}};
    if (k.softmax_pad.get_size())
      sm.emplace(DNNL_ARG_SCRATCHPAD, mem(k.softmax_pad, scratch + k.scores_bytes));
    k.softmax.execute(threadStream(), sm);
    std::unordered_map<int, memory> pv = {{DNNL_ARG_SRC, scores},
                                          {DNNL_ARG_WEIGHTS, mem(k.value, io->in[2])},
                                          {DNNL_ARG_DST, mem(k.dst, io->out[0])}};
    if (k.pv_pad.get_size())
      pv.emplace(DNNL_ARG_SCRATCHPAD, mem(k.pv_pad, scratch + k.scores_bytes));
    k.values_prim.execute(threadStream(), pv);
  } catch (const dnnl::error &e) {
    logError("ExecuteComputation", e.what());
    return ODLA_FAILURE;
  }
  return ODLA_SUCCESS;
}

/* The graph around the attentions: who reads each value, and what the Transposes record. */
struct Graph {
  const std::unordered_map<ref_node *, OpRecord> &records;
  std::unordered_map<odla_value, int> readers;
  std::unordered_map<odla_value, ref_node *> reader; /* the last one */
  std::unordered_set<ref_node *> removed;

  const OpRecord *transposeOf(ref_node *n) const {
    if (!n || std::strcmp(n->op, "Transpose") != 0 || removed.count(n))
      return nullptr;
    auto it = records.find(n);
    return it != records.end() && it->second.kind == OpKind::Transpose ? &it->second : nullptr;
  }

  /* Whether v is an intermediate result read by one node only. */
  bool readOnce(odla_value v) const {
    auto it = readers.find(v);
    return v->kind == REF_RESULT && !v->is_output && it != readers.end() && it->second == 1;
  }
};

/* An operand of the attention as a strided view: the value read and its element strides
 * under the operand's dims. `through` is the Transpose read through, or NULL. */
struct View {
  odla_value source;
  memory::dims strides;
  ref_node *through = nullptr;
};

/* v itself, or, when v is a Transpose's result read only here, the Transpose's operand seen
 * under v's dims: v's axis i is the operand's axis perm[i]. */
View operandView(const Graph &g, odla_value v) {
  const OpRecord *t = g.transposeOf(v->node);
  if (!t || !g.readOnce(v) || t->perm.size() != static_cast<size_t>(v->type.shape.size))
    return {v, rowMajor(dimsOf(v->type.shape))};
  odla_value src = v->node->inputs[0];
  memory::dims s = rowMajor(dimsOf(src->type.shape)), strides(t->perm.size());
  for (size_t i = 0; i < t->perm.size(); ++i)
    strides[i] = s[static_cast<size_t>(t->perm[i])];
  return {src, strides, v->node};
}

/* y itself, or, when y is read only by a Transpose, that Transpose's result seen under y's
 * dims: the result's axis i is y's axis perm[i]. */
View resultView(const Graph &g, odla_value y) {
  View plain = {y, rowMajor(dimsOf(y->type.shape))};
  if (!g.readOnce(y))
    return plain;
  ref_node *c = g.reader.at(y);
  const OpRecord *t = g.transposeOf(c);
  if (!t || t->perm.size() != static_cast<size_t>(y->type.shape.size))
    return plain;
  odla_value out = c->outputs[0];
  memory::dims s = rowMajor(dimsOf(out->type.shape)), strides(t->perm.size());
  for (size_t i = 0; i < t->perm.size(); ++i)
    strides[static_cast<size_t>(t->perm[i])] = s[i];
  return {out, strides, c};
}

std::unique_ptr<NodeKernel> lowerAttention(ref_node *n, Graph &g) {
  odla_value q = n->inputs[0], key = n->inputs[1], v = n->inputs[2], scale = n->inputs[3],
             mask = n->inputs[4], y = n->outputs[0];
  for (odla_value x : {q, key, v, mask, y})
    if (!isF32(x) || hasZeroDim(x))
      return nullptr;
  const int rank = q->type.shape.size;
  if (scale->kind != REF_CONSTANT || !isF32(scale) || rank < 2 || rank > DNNL_MAX_NDIMS)
    return nullptr;
  /* One query row (a decoder's step): the reference kernel's dot products straight from the
   * keys, split over the heads, beat making the three primitives, which a computation built
   * for every step's dims (odlac --dim: the keys grow by one) would make again at every step
   * (GPT-2-sized decoder at context 512: ~0.2 ms a layer). */
  if (q->type.shape.dims[rank - 2] == 1)
    return nullptr;
  const float alpha = *static_cast<const float *>(scale->data);
  View vq = operandView(g, q), vk = operandView(g, key), vv = operandView(g, v),
       vy = resultView(g, y);
  const auto f32 = memory::data_type::f32;
  auto k = std::unique_ptr<AttentionKernel>(new AttentionKernel);
  k->query = Desc(dimsOf(q->type.shape), f32, vq.strides);
  /* key^T: the key's last two axes swapped. */
  memory::dims kt_dims = dimsOf(key->type.shape), kt_strides = vk.strides;
  std::swap(kt_dims[rank - 2], kt_dims[rank - 1]);
  std::swap(kt_strides[rank - 2], kt_strides[rank - 1]);
  k->key_t = Desc(kt_dims, f32, kt_strides);
  k->value = Desc(dimsOf(v->type.shape), f32, vv.strides);
  k->dst = Desc(dimsOf(y->type.shape), f32, vy.strides);
  memory::dims sdims = dimsOf(q->type.shape);
  sdims[rank - 1] = key->type.shape.dims[rank - 2];
  k->scores = Desc(sdims, f32, rowMajor(sdims));

  dnnl::primitive_attr qk_attr, attr;
  qk_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f)
    qk_attr.set_output_scales(0, {alpha});
  if (mask) {
    /* Right-aligned onto the scores, as numpy broadcasts. */
    memory::dims mdims(static_cast<size_t>(rank), 1);
    for (int i = 0; i < mask->type.shape.size; ++i)
      mdims[static_cast<size_t>(rank) - static_cast<size_t>(mask->type.shape.size) +
            static_cast<size_t>(i)] = mask->type.shape.dims[i];
    k->mask = Desc(mdims, f32, rowMajor(mdims));
    k->has_mask = true;
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, k->mask);
    qk_attr.set_post_ops(ops);
  }
  auto qk = cachedPd<dnnl::matmul::primitive_desc>(
      dnnl::matmul::desc(k->query, k->key_t, k->scores), qk_attr);
  auto sm = cachedPd<dnnl::softmax_forward::primitive_desc>(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, k->scores, rank - 1), attr);
  auto pv =
      cachedPd<dnnl::matmul::primitive_desc>(dnnl::matmul::desc(k->scores, k->value, k->dst), attr);
  k->scores_prim = dnnl::matmul(qk);
  k->softmax = dnnl::softmax_forward(sm);
  k->values_prim = dnnl::matmul(pv);
  k->qk_pad = qk.scratchpad_desc();
  k->softmax_pad = sm.scratchpad_desc();
  k->pv_pad = pv.scratchpad_desc();
  k->scores_bytes = alignUp(k->scores.get_size());
  size_t pad =
      std::max(k->qk_pad.get_size(), std::max(k->softmax_pad.get_size(), k->pv_pad.get_size()));

  /* Lowered: read and write through the Transposes, which are then gone. */
  n->inputs[0] = vq.source;
  n->inputs[1] = vk.source;
  n->inputs[2] = vv.source;
  for (const View *w : {&vq, &vk, &vv})
    if (w->through) {
      g.removed.insert(w->through);
      w->through->outputs[0]->node = nullptr;
    }
  if (vy.through) {
    g.removed.insert(vy.through);
    n->outputs[0] = vy.source;
    vy.source->node = n;
    y->node = nullptr;
  }
  install(n, k.get(), attentionRun, k->scores_bytes + pad);
  return std::unique_ptr<NodeKernel>(k.release());
}

} // namespace

void lowerTransformerOps(odla_computation comp, std::unordered_map<ref_node *, OpRecord> &records,
                         std::vector<std::unique_ptr<NodeKernel>> &kernels) {
  Graph g{records, {}, {}, {}};
  for (int i = 0; i < comp->num_nodes; ++i) {
    ref_node *n = comp->nodes[i];
    for (int k = 0; k < n->num_inputs; ++k)
      if (n->inputs[k]) {
        ++g.readers[n->inputs[k]];
        g.reader[n->inputs[k]] = n;
      }
  }
  for (int i = 0; i < comp->num_nodes; ++i) {
    ref_node *n = comp->nodes[i];
    auto it = records.find(n);
    if (it == records.end() || g.removed.count(n))
      continue;
    std::unique_ptr<NodeKernel> k;
    try {
      if (it->second.kind == OpKind::LayerNorm && !std::strcmp(n->op, "ExtLayerNorm"))
        k = lowerLayerNorm(n, it->second);
      else if (it->second.kind == OpKind::Attention && !std::strcmp(n->op, "ExtAttention"))
        k = lowerAttention(n, g);
    } catch (const dnnl::error &e) {
      if (e.status != dnnl_unimplemented)
        logError("CompileComputation", e.what()); /* the node keeps its reference kernel */
    }
    if (k)
      kernels.push_back(std::move(k));
  }
  if (g.removed.empty())
    return;
  int kept = 0;
  for (int i = 0; i < comp->num_nodes; ++i) {
    ref_node *n = comp->nodes[i];
    if (!g.removed.count(n)) {
      comp->nodes[kept++] = n;
      continue;
    }
    records.erase(n);
    ref_node_free(n);
  }
  comp->num_nodes = kept;
}

} // namespace odla_dnnl

/* ---- Builders: the reference builder, then the op's attributes for lowerTransformerOps ---- */

using odla_dnnl::OpKind;
using odla_dnnl::OpRecord;

extern "C" {

odla_value odla_ExtLayerNorm(odla_value input, odla_int32 axis, odla_float32 epsilon,
                             odla_value scale, odla_value bias, const odla_value_id value_id) {
  odla_value v = odla_ref_ExtLayerNorm(input, axis, epsilon, scale, bias, value_id);
  OpRecord r;
  r.kind = OpKind::LayerNorm;
  r.input = input;
  r.weights = scale;
  r.bias = bias;
  r.axis = axis;
  r.epsilon = epsilon;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_ExtAttention(odla_value query, odla_value key, odla_value value, odla_value scale,
                             odla_value mask, const odla_value_id value_id) {
  odla_value v = odla_ref_ExtAttention(query, key, value, scale, mask, value_id);
  OpRecord r;
  r.kind = OpKind::Attention;
  r.input = query;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_Transpose(odla_value input, odla_value_shape permutations,
                          odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value v = odla_ref_Transpose(input, permutations, output_dims, value_id);
  OpRecord r;
  r.kind = OpKind::Transpose;
  r.input = input;
  r.perm.assign(permutations.dims, permutations.dims + permutations.size);
  odla_dnnl::recordOp(v, r, false);
  return v;
}

} // extern "C"
