// Import rules for the transformer ops: Attention (opsets 23, 24 and 25), RotaryEmbedding (23),
// TensorScatter (24, the KV-cache write), LinearAttention and CausalConvWithState (27) of ONNX's
// default domain and FlexAttention (1) of ai.onnx.preview, decomposed into IR ops that every
// backend has (Reshape, Transpose, Concat, Mul, MatMul, Tanh, Exp, Sigmoid, Conv, comparisons,
// Select, ReduceMax, IsInf, Softmax, Cast, Slice, Gather, GatherElements).
//
// Attention follows ONNX's reference implementation (onnx/reference/ops/op_attention.py) step
// by step, so that rounding matches it: Q and K are each scaled by sqrt(scale) before their
// product, softcap is applied to the product before the bias, the bias is the sum of the
// attention mask and the structural masks (causal, sliding window, key padding), softmax runs
// in softmax_precision, and a query row whose bias is -inf everywhere (no key attended) gets
// zero probabilities instead of softmax's NaN. Grouped-query attention does not repeat the
// keys: the r query heads that share a key head are stacked into one [r * Sq, D] matrix per key
// head, so one product serves them all.
#include "Rules.h"

#include "ir/Limits.h"
#include "ops/InferUtil.h"

#include <cmath>
#include <limits>

namespace odlac {
namespace {

// Emits the IR nodes of one decomposition. The first error sticks: from then on every call
// returns nullptr and emits nothing, and status() reports it, so a rule reads as the
// straight-line formula it implements and checks once at the end.
class Emitter {
public:
  explicit Emitter(ImportCtx &ctx) : ctx_(ctx) {}

  // A node with a temporary result named after `tag`, or the name `name` when not empty.
  Value *op(const char *irOp, std::vector<Value *> in, AttrMap attrs, const char *tag,
            const std::string &name = "") {
    if (!status_.isOk())
      return nullptr;
    for (Value *v : in)
      if (!v)
        return nullptr; // an earlier call failed
    auto r =
        ctx_.emit(irOp, std::move(in), std::move(attrs), name.empty() ? ctx_.tempName(tag) : name);
    if (!r) {
      status_ = r.takeStatus();
      return nullptr;
    }
    return *r;
  }
  Value *op(const char *irOp, std::vector<Value *> in, const char *tag) {
    return op(irOp, std::move(in), {}, tag);
  }
  Value *cast(Value *v, DType to, const char *tag) {
    if (v && v->dtype() == to)
      return v;
    return op("Cast", {v}, {{"to", std::string(dtypeName(to))}}, tag);
  }
  Value *reshape(Value *v, const Dims &dims, const char *tag, const std::string &name = "") {
    if (v && v->dims() == dims && name.empty())
      return v;
    return op("Reshape", {v}, {{"shape", dims}}, tag, name);
  }
  Value *transpose(Value *v, std::vector<int64_t> perm, const char *tag) {
    return op("Transpose", {v}, {{"perm", std::move(perm)}}, tag);
  }
  // Axis `axis` of `v` from `start` to `end` in steps of `step`; every other axis whole.
  Value *slice(Value *v, size_t axis, int64_t start, int64_t end, int64_t step, const char *tag,
               const std::string &name = "") {
    if (!v)
      return nullptr;
    std::vector<int64_t> starts(v->dims().size(), 0), ends = v->dims(), steps(starts.size(), 1);
    if (start == 0 && end == ends[axis] && step == 1 && name.empty())
      return v;
    starts[axis] = start;
    ends[axis] = end;
    steps[axis] = step;
    return op("Slice", {v}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}, tag, name);
  }
  // A constant of `dims` elements of `t`, each `value`.
  Value *filled(DType t, double value, const Dims &dims, const char *tag) {
    TensorType type{t, dims};
    return ctx_.constant(ctx_.tempName(tag), type,
                         filledBytes(t, value, type.numElements()).data());
  }
  Value *constant(TensorType type, const void *data, const char *tag) {
    return ctx_.constant(ctx_.tempName(tag), std::move(type), data);
  }
  // Binds ONNX output i (when the node wants it) to `v`, under the output's own name.
  void bind(int i, Value *v) {
    if (!ctx_.wantsOutput(i) || !v)
      return;
    if (v->name() != ctx_.outputName(i))
      v = op("Identity", {v}, {}, "copy", ctx_.outputName(i));
    ctx_.setOutput(i, v);
  }
  const Status &status() const { return status_; }

private:
  ImportCtx &ctx_;
  Status status_;
};

// ---- Attention ---------------------------------------------------------------------------

// The sizes of one Attention node. Q is [b, hq, sq, d], the keys [b, hkv, sk, d] and the values
// [b, hkv, sk, dv] once 3-D inputs are split into heads and the past cache is prepended.
struct AttentionDims {
  bool threeD = false;
  int64_t b = 0, hq = 0, hkv = 0, sq = 0, d = 0, dv = 0;
  int64_t past = 0; // the past cache's length
  int64_t sk = 0;   // past + the new keys
};

// Checks Q, K, V and the cache against each other and fills `a`.
Status attentionDims(ImportCtx &ctx, AttentionDims &a) {
  const Value *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2);
  const Dims &qd = q->dims(), &kd = k->dims(), &vd = v->dims();
  std::string shapes =
      "Q " + toString(q->type()) + ", K " + toString(k->type()) + ", V " + toString(v->type());
  size_t rank = qd.size();
  if ((rank != 3 && rank != 4) || kd.size() != rank || vd.size() != rank)
    return ctx.fail(shapes + " must all be 3-D or all 4-D");
  if (k->dtype() != q->dtype())
    return ctx.fail(shapes + ": Q and K must have one element type");
  bool hasQHeads = ctx.hasAttr("q_num_heads"), hasKvHeads = ctx.hasAttr("kv_num_heads");
  int64_t qHeads = ctx.attrInt("q_num_heads", 0), kvHeads = ctx.attrInt("kv_num_heads", 0);
  a.threeD = rank == 3;
  a.b = qd[0];
  if (a.threeD) {
    if (!hasQHeads || !hasKvHeads)
      return ctx.fail(shapes + " are 3-D: q_num_heads and kv_num_heads must both be given");
    if (qHeads <= 0 || kvHeads <= 0 || qd[2] % qHeads != 0 || kd[2] % kvHeads != 0 ||
        vd[2] % kvHeads != 0)
      return ctx.fail(shapes + ": q_num_heads " + str(qHeads) +
                      " must divide Q's hidden size and kv_num_heads " + str(kvHeads) +
                      " K's and V's");
    a.hq = qHeads;
    a.hkv = kvHeads;
    a.sq = qd[1];
    a.d = qd[2] / qHeads;
    a.dv = vd[2] / kvHeads;
    if (kd[2] / kvHeads != a.d)
      return ctx.fail(shapes + ": K's head size " + str(kd[2] / kvHeads) + " differs from Q's, " +
                      str(a.d));
    if (kd[0] != a.b || vd[0] != a.b || vd[1] != kd[1])
      return ctx.fail(shapes + " must be [batch, Sq, hidden], [batch, Sk, hidden] and "
                               "[batch, Sk, hidden_v]");
    a.sk = kd[1];
  } else {
    // Opset 25 forbids the head counts with 4-D inputs; before, the reference reads them as
    // the heads' counts, so they must agree with the shapes.
    if ((hasQHeads || hasKvHeads) && ctx.opset() >= 25)
      return ctx.fail(shapes + " are 4-D: q_num_heads and kv_num_heads must not be given");
    if ((hasQHeads && qHeads != qd[1]) || (hasKvHeads && kvHeads != kd[1]))
      return ctx.fail(shapes + " have " + str(qd[1]) + " query and " + str(kd[1]) +
                      " key heads, but q_num_heads is " + str(qHeads) + " and kv_num_heads " +
                      str(kvHeads));
    if (kd[0] != a.b || vd[0] != a.b || vd[1] != kd[1] || vd[2] != kd[2] || kd[3] != qd[3])
      return ctx.fail(shapes + " must be [batch, heads, Sq, D], [batch, kv_heads, Sk, D] and "
                               "[batch, kv_heads, Sk, Dv]");
    a.hq = qd[1];
    a.hkv = kd[1];
    a.sq = qd[2];
    a.d = qd[3];
    a.dv = vd[3];
    a.sk = kd[2];
  }
  if (a.hq % a.hkv != 0)
    return ctx.fail(shapes + ": the " + str(a.hq) + " query heads must be a multiple of the " +
                    str(a.hkv) + " key/value heads");
  const Value *pk = ctx.input(4), *pv = ctx.input(5);
  if (!pk != !pv)
    return ctx.fail("past_key and past_value must be given together");
  if (pk) {
    if (ctx.hasInput(6))
      return ctx.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
    const Dims &pkd = pk->dims(), &pvd = pv->dims();
    if (pkd.size() != 4 || pvd.size() != 4 || pkd[0] != a.b || pkd[1] != a.hkv || pkd[3] != a.d ||
        pvd[0] != a.b || pvd[1] != a.hkv || pvd[2] != pkd[2] || pvd[3] != a.dv ||
        pk->dtype() != k->dtype() || pv->dtype() != v->dtype())
      return ctx.fail("past_key " + toString(pk->type()) + " and past_value " +
                      toString(pv->type()) + " must be " + dtypeName(k->dtype()) + "[" + str(a.b) +
                      "," + str(a.hkv) + ",P," + str(a.d) + "] and " + dtypeName(v->dtype()) + "[" +
                      str(a.b) + "," + str(a.hkv) + ",P," + str(a.dv) + "]");
    a.past = pkd[2];
    a.sk += a.past;
  }
  if (a.sk == 0 || a.d == 0)
    return ctx.fail(shapes + ": attention over " + str(a.sk) + " keys of size " + str(a.d) +
                    " is not supported (every query row would attend nothing)");
  if (const Value *n = ctx.input(6); n && (n->dtype() != DType::I64 || n->dims() != Dims{a.b}))
    return ctx.fail("nonpad_kv_seqlen " + toString(n->type()) + " must be int64[" + str(a.b) + "]");
  return Status::ok();
}

// Q, K or V as [b, heads, s, size]: 3-D [b, s, heads * size] is split into heads.
Value *heads(Emitter &em, Value *x, const AttentionDims &a, int64_t heads, const char *tag) {
  if (!a.threeD)
    return x;
  const Dims &d = x->dims();
  Value *split = em.reshape(x, {d[0], d[1], heads, d[2] / heads}, tag);
  return em.transpose(split, {0, 2, 1, 3}, tag);
}

// The structural masks (causal and sliding window, with the offset of the queries among the
// keys; key padding), as a bool "allowed" tensor that broadcasts onto the scores, or nullptr
// when they allow every key. `mayBeEmpty` is set when a query row may attend no key.
Value *structuralMask(ImportCtx &ctx, Emitter &em, const AttentionDims &a, bool causal,
                      int64_t left, int64_t right, bool &mayBeEmpty) {
  bool window = causal || left >= 0 || right >= 0;
  Value *nonpad = ctx.input(6);
  // diff = (i + offset) - j for query i and key j: causal allows diff >= 0, the left window
  // diff <= left, the right window -diff <= right.
  auto allows = [&](int64_t diff) {
    return (!causal || diff >= 0) && (left < 0 || diff <= left) && (right < 0 || -diff <= right);
  };
  if (!nonpad) {
    // The offset is the past cache's length: the mask is a constant.
    if (!window)
      return nullptr;
    std::vector<uint8_t> allowed(static_cast<size_t>(a.sq * a.sk));
    bool all = true;
    for (int64_t i = 0; i < a.sq; ++i) {
      bool any = false;
      for (int64_t j = 0; j < a.sk; ++j) {
        bool ok = allows(i + a.past - j);
        allowed[static_cast<size_t>(i * a.sk + j)] = ok;
        any |= ok;
        all &= ok;
      }
      mayBeEmpty |= !any;
    }
    return all ? nullptr : em.constant({DType::Bool, {a.sq, a.sk}}, allowed.data(), "structural");
  }
  // An external cache: offset = nonpad_kv_seqlen[b] - Sq per batch, and keys from
  // nonpad_kv_seqlen[b] on are padding.
  mayBeEmpty = true;
  Value *valid = em.reshape(nonpad, {a.b, 1, 1, 1}, "nonpad");
  std::vector<int64_t> keys(static_cast<size_t>(a.sk));
  for (int64_t j = 0; j < a.sk; ++j)
    keys[static_cast<size_t>(j)] = j;
  Value *keyIndex = em.constant({DType::I64, {a.sk}}, keys.data(), "key_index");
  Value *allowed = em.op("Less", {keyIndex, valid}, "unpadded");
  if (!window)
    return allowed;
  std::vector<int64_t> base(static_cast<size_t>(a.sq * a.sk));
  for (int64_t i = 0; i < a.sq; ++i)
    for (int64_t j = 0; j < a.sk; ++j)
      base[static_cast<size_t>(i * a.sk + j)] = i - j - a.sq;
  Value *diff = em.op(
      "Add", {em.constant({DType::I64, {a.sq, a.sk}}, base.data(), "diff_base"), valid}, "diff");
  auto bound = [&](const char *cmp, int64_t limit, const char *tag) {
    Value *ok = em.op(cmp, {diff, em.filled(DType::I64, static_cast<double>(limit), {}, tag)}, tag);
    allowed = em.op("And", {allowed, ok}, tag);
  };
  if (causal)
    bound("GreaterOrEqual", 0, "causal");
  if (left >= 0)
    bound("LessOrEqual", left, "left_window");
  if (right >= 0)
    bound("GreaterOrEqual", -right, "right_window");
  return allowed;
}

// The additive bias of the scores (in Q's type), or nullptr when there is none: attn_mask
// (bool: allowed keys; otherwise added), padded to Sk keys with disallowed ones, composed with
// the structural masks. `mayBeEmpty`: a query row may attend no key.
Expected<Value *> attentionBias(ImportCtx &ctx, Emitter &em, const AttentionDims &a, bool causal,
                                int64_t left, int64_t right, bool &mayBeEmpty) {
  DType t = ctx.input(0)->dtype();
  Value *allowed = structuralMask(ctx, em, a, causal, left, right, mayBeEmpty);
  Value *added = nullptr;
  if (Value *mask = ctx.input(3)) {
    const Dims &md = mask->dims();
    Dims scores{a.b, a.hq, a.sq, a.sk};
    std::string what = "attn_mask " + toString(mask->type());
    if (md.empty() || md.back() > a.sk)
      return ctx.fail(what + " must have rank >= 1 and at most " + str(a.sk) + " keys");
    Dims padded = md;
    padded.back() = a.sk;
    auto b = broadcastDims(padded, scores);
    if (!b || *b != scores)
      return ctx.fail(what + " (padded to " + str(a.sk) + " keys) must broadcast onto the scores " +
                      dimsToString(scores));
    bool isBool = mask->dtype() == DType::Bool;
    Value *m = isBool ? mask : em.cast(mask, t, "mask");
    if (md.back() < a.sk) {
      Dims rest = md;
      rest.back() = a.sk - md.back();
      Value *pad = em.filled(m ? m->dtype() : t, isBool ? 0.0 : -INFINITY, rest, "mask_pad");
      m = em.op("Concat", {m, pad}, {{"axis", static_cast<int64_t>(md.size() - 1)}}, "mask_padded");
    }
    mayBeEmpty = true;
    if (isBool)
      allowed = allowed ? em.op("And", {allowed, m}, "allowed") : m;
    else
      added = m;
  }
  if (!allowed)
    return added;
  Value *blocked = em.filled(t, -INFINITY, {}, "neg_inf");
  return em.op("Select", {allowed, added ? added : em.filled(t, 0.0, {}, "zero"), blocked}, "bias");
}

// The scale of an attention node (the attribute, else 1/sqrt(d) for heads of size d) and its
// softmax_precision (the attribute, else what `precision` holds), checked.
Status scaleAndPrecision(ImportCtx &ctx, int64_t d, double &scale, DType &precision) {
  scale =
      ctx.hasAttr("scale") ? ctx.attrFloat("scale", 0.0) : 1.0 / std::sqrt(static_cast<double>(d));
  if (!(scale > 0) || !std::isfinite(scale))
    return ctx.fail("scale " + std::to_string(scale) +
                    " must be finite and > 0: Q and K are each multiplied by sqrt(scale)");
  if (ctx.hasAttr("softmax_precision")) {
    int64_t p = ctx.attrInt("softmax_precision", 0);
    auto pt = dtypeFromOnnx(static_cast<int>(p));
    if (!pt || !isFloat(*pt))
      return ctx.fail("softmax_precision " + str(p) +
                      " is not one of 1 (float), 10 (float16), 11 (double), 16 (bfloat16)");
    precision = *pt;
  }
  return Status::ok();
}

// The scores (Q * rootScale) x (K * rootScale)^T of [b, hq, sq, d] Q and [b, hkv, sk, d] K as
// [b, hq, sq, sk], in Q's type: the r = hq / hkv query heads of a key head stacked as
// [b, hkv, r * sq, d], so that one product serves them.
Value *scaledScores(Emitter &em, Value *q, Value *k, const AttentionDims &a, double rootScale) {
  Value *root = em.filled(q->dtype(), rootScale, {}, "sqrt_scale");
  Value *qs = em.reshape(em.op("Mul", {q, root}, "q_scaled"),
                         {a.b, a.hkv, a.hq / a.hkv * a.sq, a.d}, "q_grouped");
  Value *kt = em.transpose(em.op("Mul", {k, root}, "k_scaled"), {0, 1, 3, 2}, "k_t");
  return em.reshape(em.op("MatMul", {qs, kt}, "scores_grouped"), {a.b, a.hq, a.sq, a.sk}, "scores");
}

Status importAttention(ImportCtx &ctx) {
  AttentionDims a;
  if (Status s = attentionDims(ctx, a))
    return s;
  DType t = ctx.input(0)->dtype();
  int64_t causalAttr = ctx.attrInt("is_causal", 0), mode = ctx.attrInt("qk_matmul_output_mode", 0);
  int64_t left = ctx.attrInt("left_window_size", -1), right = ctx.attrInt("right_window_size", -1);
  double softcap = ctx.attrFloat("softcap", 0.0);
  if (causalAttr != 0 && causalAttr != 1)
    return ctx.fail("is_causal " + str(causalAttr) + " is not 0 or 1");
  if (mode < 0 || mode > 3)
    return ctx.fail("qk_matmul_output_mode " + str(mode) + " is not one of 0, 1, 2, 3");
  if (left < -1 || right < -1)
    return ctx.fail("left_window_size " + str(left) + " and right_window_size " + str(right) +
                    " must be -1 (unbounded) or >= 0");
  if (!(softcap >= 0) || !std::isfinite(softcap))
    return ctx.fail("softcap " + std::to_string(softcap) + " must be finite and >= 0");
  double scale = 0;
  DType precision = t;
  if (Status s = scaleAndPrecision(ctx, a.d, scale, precision))
    return s;

  Emitter em(ctx);
  Value *q = heads(em, ctx.input(0), a, a.hq, "q_heads");
  Value *k = heads(em, ctx.input(1), a, a.hkv, "k_heads");
  Value *v = heads(em, ctx.input(2), a, a.hkv, "v_heads");
  if (ctx.input(4)) {
    k = em.op("Concat", {ctx.input(4), k}, {{"axis", int64_t{2}}}, "present_key",
              ctx.wantsOutput(1) ? ctx.outputName(1) : "");
    v = em.op("Concat", {ctx.input(5), v}, {{"axis", int64_t{2}}}, "present_value",
              ctx.wantsOutput(2) ? ctx.outputName(2) : "");
  }
  em.bind(1, k);
  em.bind(2, v);

  // Scores: (Q * sqrt(scale)) x (K * sqrt(scale))^T, the r = hq / hkv query heads of a key
  // head stacked as [b, hkv, r * sq, d].
  int64_t r = a.hq / a.hkv;
  Value *raw = scaledScores(em, q, k, a, std::sqrt(scale));
  Value *capped = raw;
  if (softcap > 0) {
    Value *cap = em.filled(t, softcap, {}, "softcap");
    Value *tanh = em.op("Tanh", {em.op("Div", {raw, cap}, "scores_over_cap")}, "scores_tanh");
    capped = em.op("Mul", {tanh, cap}, "scores_capped");
  }
  bool mayBeEmpty = false;
  auto bias = attentionBias(ctx, em, a, causalAttr != 0, left, right, mayBeEmpty);
  if (!bias)
    return bias.takeStatus();
  Value *biased = *bias ? em.op("Add", {capped, *bias}, "scores_biased") : capped;

  // Softmax over the keys in softmax_precision; a row whose bias is -inf everywhere gets 0.
  Value *probs = em.op("Softmax", {em.cast(biased, precision, "scores_precise")},
                       {{"axis", int64_t{3}}}, "probs");
  if (mayBeEmpty) {
    Value *rowMax =
        em.op("ReduceMax", {*bias},
              {{"axes", std::vector<int64_t>{static_cast<int64_t>((*bias)->type().rank()) - 1}},
               {"keepdims", int64_t{1}}},
              "bias_row_max");
    Value *empty =
        em.op("IsInf", {rowMax}, {{"detect_positive", int64_t{0}}, {"detect_negative", int64_t{1}}},
              "row_attends_nothing");
    probs = em.op("Select", {empty, em.filled(precision, 0.0, {}, "zero_prob"), probs},
                  "probs_guarded");
  }
  probs = em.cast(probs, t, "probs_out");
  Value *qk[] = {raw, capped, biased, probs};
  em.bind(3, qk[mode]);

  // Y = P x V, grouped like the scores, then merged back to [b, sq, hq * dv] for 3-D inputs.
  Value *pv = em.op(
      "MatMul",
      {em.reshape(probs, {a.b, a.hkv, r * a.sq, a.sk}, "probs_grouped"), em.cast(v, t, "v_cast")},
      "y_grouped");
  std::string yName = ctx.wantsOutput(0) ? ctx.outputName(0) : "";
  Value *y;
  if (a.threeD)
    y = em.reshape(
        em.transpose(em.reshape(pv, {a.b, a.hq, a.sq, a.dv}, "y_heads"), {0, 2, 1, 3}, "y_seq"),
        {a.b, a.sq, a.hq * a.dv}, "y", yName);
  else
    y = em.reshape(pv, {a.b, a.hq, a.sq, a.dv}, "y", yName);
  em.bind(0, y);
  return em.status();
}

// ---- FlexAttention -----------------------------------------------------------------------

// `x` (emitted by `em`), with the graph attribute `attr` (FlexAttention's score_mod or
// prob_mod) applied when the node has it: the body is imported with `x`'s type for its one
// input and its nodes are inlined into the graph.
Expected<Value *> applyModifier(ImportCtx &ctx, const Emitter &em, const char *attr, Value *x) {
  if (!em.status().isOk())
    return em.status();
  if (!ctx.hasAttr(attr))
    return x;
  auto body = ctx.importBody(attr, {x->type()});
  if (!body)
    return body.takeStatus();
  const std::vector<Value *> &outs = body->graph->outputs();
  if (outs.size() != 1 || outs[0]->type() != x->type())
    return ctx.fail(std::string(attr) + " must return one tensor of its input's type " +
                    toString(x->type()) + ", but returns " +
                    str(static_cast<int64_t>(outs.size())) +
                    (outs.size() == 1 ? " of type " + toString(outs[0]->type()) : ""));
  std::vector<Value *> operands{x};
  operands.insert(operands.end(), body->captures.begin(), body->captures.end());
  return ctx.graph().inlineBody(*body->graph, operands)[0];
}

// FlexAttention-1 of ai.onnx.preview, as ONNX's reference computes it: Q and K each scaled by
// sqrt(scale) (the root taken in float32) in the inputs' type, their product cast to
// softmax_precision (float32, or double for double inputs, by default), score_mod applied,
// Softmax over the keys, prob_mod applied, then the product with V cast to that precision, cast
// back. Grouped-query attention stacks the query heads of a key head as Attention does.
Status importFlexAttention(ImportCtx &ctx) {
  Value *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2);
  const Dims &qd = q->dims(), &kd = k->dims(), &vd = v->dims();
  DType t = q->dtype();
  std::string shapes =
      "Q " + toString(q->type()) + ", K " + toString(k->type()) + ", V " + toString(v->type());
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4 || k->dtype() != t || v->dtype() != t ||
      !isFloat(t))
    return ctx.fail(shapes + " must be 4-D tensors of one floating-point type");
  int64_t b = qd[0], hq = qd[1], sq = qd[2], e = qd[3], hkv = kd[1], sk = kd[2], dv = vd[3];
  if (kd[0] != b || vd[0] != b || vd[1] != hkv || vd[2] != sk || kd[3] != e)
    return ctx.fail(shapes + " must be [batch, q_heads, Sq, E], [batch, kv_heads, Sk, E] and "
                             "[batch, kv_heads, Sk, Ev]");
  if (hkv == 0 || hq % hkv != 0)
    return ctx.fail(shapes + ": the " + str(hq) + " query heads must be a multiple of the " +
                    str(hkv) + " key/value heads");
  if (sk == 0 || e == 0)
    return ctx.fail(shapes + ": attention over " + str(sk) + " keys of size " + str(e) +
                    " is not supported (every query row would attend nothing)");
  double scale = 0;
  DType precision = t == DType::F64 ? DType::F64 : DType::F32;
  if (Status s = scaleAndPrecision(ctx, e, scale, precision))
    return s;

  Emitter em(ctx);
  AttentionDims a;
  a.b = b, a.hq = hq, a.hkv = hkv, a.sq = sq, a.d = e, a.dv = dv, a.sk = sk;
  // The root is taken in float32, as the reference does.
  auto scores = applyModifier(
      ctx, em, "score_mod",
      em.cast(scaledScores(em, q, k, a, static_cast<double>(std::sqrt(static_cast<float>(scale)))),
              precision, "scores_precise"));
  if (!scores)
    return scores.takeStatus();
  auto probs = applyModifier(ctx, em, "prob_mod",
                             em.op("Softmax", {*scores}, {{"axis", int64_t{3}}}, "probs"));
  if (!probs)
    return probs.takeStatus();
  Value *y = em.op("MatMul",
                   {em.reshape(*probs, {b, hkv, hq / hkv * sq, sk}, "probs_grouped"),
                    em.cast(v, precision, "v_precise")},
                   "y_grouped");
  em.bind(0, em.cast(em.reshape(y, {b, hq, sq, dv}, "y_heads"), t, "y"));
  return em.status();
}

// ---- RotaryEmbedding ---------------------------------------------------------------------

// The last axis of a rank-4 `x` from `start` to `end` in steps of `step`.
Value *lastAxis(Emitter &em, Value *x, int64_t start, int64_t end, int64_t step, const char *tag) {
  return em.slice(x, 3, start, end, step, tag);
}

// RotaryEmbedding-23, in the reference's [b, s, heads, d] layout: the first rotary_dim
// features of each head, as pairs (x1, x2) (halves, or even and odd features when
// interleaved), become (cos x1 - sin x2, sin x1 + cos x2) with cos and sin of the token's
// position (cos_cache[position_ids], or the caches as [b, s, rotary_dim / 2] without
// position_ids); the rest pass unchanged.
Status importRotaryEmbedding(ImportCtx &ctx) {
  Value *x = ctx.input(0), *cosCache = ctx.input(1), *sinCache = ctx.input(2);
  Value *positions = ctx.input(3);
  const Dims &xd = x->dims();
  bool interleaved = ctx.attrInt("interleaved", 0) != 0;
  int64_t numHeads = ctx.attrInt("num_heads", 0), rotary = ctx.attrInt("rotary_embedding_dim", 0);
  std::string what = "X " + toString(x->type());
  if (xd.size() != 3 && xd.size() != 4)
    return ctx.fail(what + " must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head]");
  if (xd.size() == 3 && (numHeads <= 0 || xd[2] % numHeads != 0))
    return ctx.fail(what + " is 3-D: num_heads " + str(numHeads) +
                    " must be > 0 and divide its hidden size");
  if (xd.size() == 4 && ctx.hasAttr("num_heads") && numHeads != xd[1])
    return ctx.fail(what + " has " + str(xd[1]) + " heads, but num_heads is " + str(numHeads));
  int64_t b = xd[0], seq = xd.size() == 3 ? xd[1] : xd[2];
  int64_t heads = xd.size() == 3 ? numHeads : xd[1], d = xd.back() / (xd.size() == 3 ? heads : 1);
  if (rotary == 0)
    rotary = d;
  if (rotary < 0 || rotary > d || rotary % 2 != 0)
    return ctx.fail("rotary_embedding_dim " + str(rotary) +
                    " must be even and at most the head "
                    "size " +
                    str(d));
  int64_t half = rotary / 2;
  Dims cacheDims = positions ? Dims{cosCache->dims()[0], half} : Dims{b, seq, half};
  if (cosCache->dims() != cacheDims || sinCache->dims() != cacheDims ||
      cosCache->dtype() != x->dtype() || sinCache->dtype() != x->dtype())
    return ctx.fail("cos_cache " + toString(cosCache->type()) + " and sin_cache " +
                    toString(sinCache->type()) + " must both be " + dtypeName(x->dtype()) +
                    (positions ? "[max_position, " : "[" + str(b) + ", " + str(seq) + ", ") +
                    str(half) + "]");
  if (positions && positions->dims() != Dims{b, seq})
    return ctx.fail("position_ids " + toString(positions->type()) + " must be [" + str(b) + ", " +
                    str(seq) + "]");

  Emitter em(ctx);
  Value *rows = xd.size() == 3 ? em.reshape(x, {b, seq, heads, d}, "heads")
                               : em.transpose(x, {0, 2, 1, 3}, "heads");
  auto angle = [&](Value *cache, const char *tag) {
    Value *v = positions ? em.op("Gather", {cache, positions}, {{"axis", int64_t{0}}}, tag) : cache;
    return em.reshape(v, {b, seq, 1, half}, tag);
  };
  Value *cos = angle(cosCache, "cos"), *sin = angle(sinCache, "sin");
  Value *rot = rotary == d ? rows : lastAxis(em, rows, 0, rotary, 1, "rotated_part");
  Value *x1 =
      interleaved ? lastAxis(em, rot, 0, rotary, 2, "x1") : lastAxis(em, rot, 0, half, 1, "x1");
  Value *x2 = interleaved ? lastAxis(em, rot, 1, rotary, 2, "x2")
                          : lastAxis(em, rot, half, rotary, 1, "x2");
  Value *real =
      em.op("Sub", {em.op("Mul", {cos, x1}, "cos_x1"), em.op("Mul", {sin, x2}, "sin_x2")}, "real");
  Value *imag =
      em.op("Add", {em.op("Mul", {sin, x1}, "sin_x1"), em.op("Mul", {cos, x2}, "cos_x2")}, "imag");
  Dims pairs{b, seq, heads, half, 1};
  Value *y = interleaved ? em.reshape(em.op("Concat",
                                            {em.reshape(real, pairs, "real_pairs"),
                                             em.reshape(imag, pairs, "imag_pairs")},
                                            {{"axis", int64_t{4}}}, "pairs"),
                                      {b, seq, heads, rotary}, "rotated")
                         : em.op("Concat", {real, imag}, {{"axis", int64_t{3}}}, "rotated");
  if (rotary < d)
    y = em.op("Concat", {y, lastAxis(em, rows, rotary, d, 1, "passed")}, {{"axis", int64_t{3}}},
              "joined");
  std::string name = ctx.outputName(0);
  y = xd.size() == 3
          ? em.reshape(y, xd, "y", name)
          : em.op("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, "y", name);
  em.bind(0, y);
  return em.status();
}

// ---- TensorScatter -----------------------------------------------------------------------

// TensorScatter-24, a KV-cache write: update's S rows along `axis` go to the cache's rows
// write_indices[b] + s (mod M in circular mode). Computed per cache row c instead: it takes
// update's row u = c - write_indices[b] (mod M) when 0 <= u < S, else keeps its own
// (GatherElements, Select). In linear mode rows written past the cache's M fall outside it and
// are dropped (ONNX leaves those writes undefined).
Status importTensorScatter(ImportCtx &ctx) {
  Value *past = ctx.input(0), *update = ctx.input(1), *write = ctx.input(2);
  std::string mode = ctx.attrString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.fail("mode '" + mode + "' is not one of linear, circular");
  const Dims &pd = past->dims(), &ud = update->dims();
  auto rank = static_cast<int64_t>(pd.size());
  auto axis = normalizeAxis(ctx.attrInt("axis", -2), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  int64_t a = *axis;
  std::string shapes =
      "past_cache " + toString(past->type()) + " and update " + toString(update->type());
  bool fits = a > 0 && ud.size() == pd.size() && update->dtype() == past->dtype();
  for (int64_t i = 0; fits && i < rank; ++i)
    fits = i == a ? ud[i] <= pd[i] : ud[i] == pd[i];
  if (!fits)
    return ctx.fail(shapes +
                    " must have one element type and differ only along the sequence "
                    "axis " +
                    str(a) +
                    " (not the batch axis 0), where update has at "
                    "most the cache's length");
  if (write && (write->dtype() != DType::I64 || write->dims() != Dims{pd[0]}))
    return ctx.fail("write_indices " + toString(write->type()) + " must be int64[" + str(pd[0]) +
                    "]");
  int64_t maxLen = pd[a], len = ud[a];
  Emitter em(ctx);
  Dims along(pd.size(), 1), batch(pd.size(), 1);
  along[a] = maxLen;
  batch[0] = pd[0];
  std::vector<int64_t> rows(static_cast<size_t>(maxLen));
  for (int64_t c = 0; c < maxLen; ++c)
    rows[static_cast<size_t>(c)] = c;
  Value *row = em.constant({DType::I64, along}, rows.data(), "cache_row");
  if (write)
    row = em.op("Sub", {row, em.reshape(write, batch, "write_index")}, "update_row");
  if (mode == "circular")
    row = em.op("Mod", {row, em.filled(DType::I64, static_cast<double>(maxLen), {}, "length")},
                "update_row_mod");
  Value *zero = em.filled(DType::I64, 0.0, {}, "zero");
  Value *written =
      em.op("And",
            {em.op("GreaterOrEqual", {row, zero}, "from_start"),
             em.op("Less", {row, em.filled(DType::I64, static_cast<double>(len), {}, "count")},
                   "before_end")},
            "written");
  Value *index = em.op("Broadcast", {em.op("Select", {written, row, zero}, "index")},
                       {{"shape", pd}}, "index_full");
  Value *gathered = em.op("GatherElements", {update, index}, {{"axis", a}}, "gathered");
  em.bind(0, em.op("Select", {written, gathered, past}, {}, "present", ctx.outputName(0)));
  return em.status();
}

// ---- CausalConvWithState -----------------------------------------------------------------

// CausalConvWithState-27, as ONNX's reference computes it: the input [b, c, l] is prepended
// with past_state [b, c, k - 1] (zeros without it), a depthwise Conv (group c, no padding)
// with the optional bias runs over the result in the input's type, the optional SiLU (alias
// swish) runs in float32, and present_state is the last k - 1 positions of the padded input.
Status importCausalConvWithState(ImportCtx &ctx) {
  Value *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.input(2), *past = ctx.input(3);
  std::string activation = ctx.attrString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.fail("activation '" + activation + "' is not one of none, silu, swish");
  const Dims &xd = x->dims(), &wd = w->dims();
  if (xd.size() != 3 || wd.size() != 3 || w->dtype() != x->dtype())
    return ctx.fail("input " + toString(x->type()) + " and weight " + toString(w->type()) +
                    " must be [batch, channels, length] and [channels, 1, k] of one element type");
  int64_t b = xd[0], c = xd[1], l = xd[2], k = wd[2];
  if (c == 0 || wd[0] != c || wd[1] != 1 || k == 0)
    return ctx.fail("weight " + toString(w->type()) + " must be [" + str(c) +
                    ", 1, k] with k >= 1 for input " + toString(x->type()) +
                    " (at least one channel)");
  if (bias && (bias->dtype() != x->dtype() || bias->dims() != Dims{c}))
    return ctx.fail("bias " + toString(bias->type()) + " must be " + dtypeName(x->dtype()) + "[" +
                    str(c) + "]");
  Dims stateDims{b, c, k - 1};
  if (past && (past->dtype() != x->dtype() || past->dims() != stateDims))
    return ctx.fail("past_state " + toString(past->type()) + " must be " +
                    toString(TensorType{x->dtype(), stateDims}));
  Emitter em(ctx);
  Value *padded = x;
  if (k > 1) {
    Value *pad = past ? past : em.filled(x->dtype(), 0.0, stateDims, "zero_state");
    padded = em.op("Concat", {pad, x}, {{"axis", int64_t{2}}}, "padded");
  }
  std::vector<Value *> convIns{padded, w};
  if (bias)
    convIns.push_back(bias);
  bool silu = activation != "none";
  std::string yName = ctx.wantsOutput(0) ? ctx.outputName(0) : "";
  // An empty input has an empty output (no window of k positions fits the k - 1 carried).
  Value *y = l == 0 ? em.filled(x->dtype(), 0.0, xd, "empty_output")
                    : em.op("Conv", convIns,
                            {{"group", c},
                             {"strides", std::vector<int64_t>{1}},
                             {"dilations", std::vector<int64_t>{1}},
                             {"pads", std::vector<int64_t>{0, 0}}},
                            "conv", silu ? "" : yName);
  if (silu) {
    Value *yf = em.cast(y, DType::F32, "conv_f32");
    y = em.cast(em.op("Mul", {yf, em.op("Sigmoid", {yf}, "sigmoid")}, "silu"), x->dtype(), "y");
  }
  em.bind(0, y);
  em.bind(1, em.slice(padded, 2, l, l + k - 1, 1, "present_state",
                      ctx.wantsOutput(1) ? ctx.outputName(1) : ""));
  return em.status();
}

// ---- LinearAttention ---------------------------------------------------------------------

// Whether `t` is one of LinearAttention's element types (float16, bfloat16, float32).
bool isLinearAttentionType(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32;
}

// LinearAttention-27, ONNX's reference recurrence unrolled over the sequence (its length is
// static), in float32 whatever the inputs' type: per token t, with the [b, hkv, dk, dv] state S,
//   S = exp(g_t) * S                          (gated, gated_delta)
//   v_t = beta_t * (v_t - k_t^T S)            (delta, gated_delta)
//   S = S + k_t (x) v_t;  o_t = scale * q_t^T S
// The r = q_num_heads / kv_num_heads query heads that share a key head are stacked as one
// [r, dk] matrix per key head, so one product reads the state for all of them. chunk_size
// selects a chunk-parallel evaluation order for prefill, which gives the sequential result: it
// cannot change the output.
Status importLinearAttention(ImportCtx &ctx) {
  Value *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *past = ctx.input(3);
  Value *decay = ctx.input(4), *beta = ctx.input(5);
  std::string rule = ctx.attrString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return ctx.fail("update_rule '" + rule + "' is not one of linear, gated, delta, gated_delta");
  int64_t hq = ctx.attrInt("q_num_heads", 0), hkv = ctx.attrInt("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return ctx.fail("q_num_heads " + str(hq) + " must be a positive multiple of kv_num_heads " +
                    str(hkv));
  bool gating = rule == "gated" || rule == "gated_delta";
  bool correcting = rule == "delta" || rule == "gated_delta";
  if (gating != (decay != nullptr))
    return ctx.fail("update_rule '" + rule + "' " + (gating ? "requires" : "forbids") +
                    " the decay input");
  if (correcting != (beta != nullptr))
    return ctx.fail("update_rule '" + rule + "' " + (correcting ? "requires" : "forbids") +
                    " the beta input");
  DType t = q->dtype();
  const Dims &qd = q->dims(), &kd = k->dims(), &vd = v->dims();
  std::string shapes = "query " + toString(q->type()) + ", key " + toString(k->type()) +
                       ", value " + toString(v->type());
  if (!isLinearAttentionType(t) || k->dtype() != t || v->dtype() != t || qd.size() != 3 ||
      kd.size() != 3 || vd.size() != 3)
    return ctx.fail(shapes + " must be 3-D [batch, seq, heads * size] of one element type, "
                             "float16, bfloat16 or float32");
  int64_t b = qd[0], seq = qd[1];
  if (kd[0] != b || vd[0] != b || kd[1] != seq || vd[1] != seq || qd[2] % hq != 0 ||
      kd[2] != qd[2] / hq * hkv || vd[2] % hkv != 0)
    return ctx.fail(shapes + " must be [b, T, " + str(hq) + " * dk], [b, T, " + str(hkv) +
                    " * dk] and [b, T, " + str(hkv) + " * dv] (q_num_heads " + str(hq) +
                    ", kv_num_heads " + str(hkv) + ")");
  int64_t dk = qd[2] / hq, dv = vd[2] / hkv;
  if (dk == 0 || dv == 0)
    return ctx.fail(shapes + ": heads of size 0 (dk " + str(dk) + ", dv " + str(dv) +
                    ") are not supported");
  // decay: one gate per key feature or per head; beta: one rate per key head or one for all.
  int64_t gateWidth = 0, betaHeads = 0;
  if (decay) {
    const Dims &gd = decay->dims();
    if (decay->dtype() != t || gd.size() != 3 || gd[0] != b || gd[1] != seq ||
        (gd[2] != hkv && gd[2] != hkv * dk))
      return ctx.fail("decay " + toString(decay->type()) + " must be " + dtypeName(t) + "[" +
                      str(b) + ", " + str(seq) + ", " + str(hkv) + "] or [" + str(b) + ", " +
                      str(seq) + ", " + str(hkv * dk) + "]");
    gateWidth = gd[2] / hkv;
  }
  if (beta) {
    const Dims &bd = beta->dims();
    if (beta->dtype() != t || bd.size() != 3 || bd[0] != b || bd[1] != seq ||
        (bd[2] != hkv && bd[2] != 1))
      return ctx.fail("beta " + toString(beta->type()) + " must be " + dtypeName(t) + "[" + str(b) +
                      ", " + str(seq) + ", " + str(hkv) + "] or [" + str(b) + ", " + str(seq) +
                      ", 1]");
    betaHeads = bd[2];
  }
  Dims stateDims{b, hkv, dk, dv};
  if (past && (!isLinearAttentionType(past->dtype()) || past->dims() != stateDims))
    return ctx.fail("past_state " + toString(past->type()) + " must be [" + str(b) + ", " +
                    str(hkv) + ", " + str(dk) + ", " + str(dv) +
                    "] of float16, bfloat16 or float32");
  // The unrolled recurrence emits at most 19 nodes per token (gated_delta: 2 per slice of a
  // token's q, k, v, decay and beta, 9 of arithmetic); the graph is bounded as inlined functions
  // bound it.
  constexpr int64_t kNodesPerToken = 20;
  if (seq > kMaxInlinedNodes / kNodesPerToken)
    return ctx.fail(shapes + ": the recurrence over " + str(seq) + " tokens would unroll into " +
                    "more than " + str(kMaxInlinedNodes) + " nodes (at most " +
                    str(kMaxInlinedNodes / kNodesPerToken) + " tokens)");
  double scale = ctx.attrFloat("scale", 0.0);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt(static_cast<double>(dk));

  Emitter em(ctx);
  // [b, T, heads, size] in float32, read one token (axis 1) at a time.
  auto tokens = [&](Value *x, int64_t heads, int64_t size, const char *tag) {
    return em.reshape(em.cast(x, DType::F32, tag), {b, seq, heads, size}, tag);
  };
  Value *q4 = tokens(q, hq, dk, "q_tokens"), *k4 = tokens(k, hkv, dk, "k_tokens");
  Value *v4 = tokens(v, hkv, dv, "v_tokens");
  Value *gate =
      decay ? em.op("Exp", {tokens(decay, hkv, gateWidth, "decay_tokens")}, "gate") : nullptr;
  Value *rate = beta ? tokens(beta, betaHeads, 1, "beta_tokens") : nullptr;
  Value *state = past ? em.cast(past, DType::F32, "past_f32")
                      : em.filled(DType::F32, 0.0, stateDims, "zero_state");
  int64_t r = hq / hkv;
  std::vector<Value *> outs;
  for (int64_t i = 0; i < seq; ++i) {
    auto at = [&](Value *x, const Dims &dims, const char *tag) {
      return em.reshape(em.slice(x, 1, i, i + 1, 1, tag), dims, tag);
    };
    Value *kCol = at(k4, {b, hkv, dk, 1}, "k_t");
    Value *vRow = at(v4, {b, hkv, 1, dv}, "v_t");
    if (gate)
      state = em.op("Mul", {state, at(gate, {b, hkv, gateWidth, 1}, "gate_t")}, "state_decayed");
    if (rate) {
      Value *retrieved =
          em.op("MatMul", {em.reshape(kCol, {b, hkv, 1, dk}, "k_row"), state}, "retrieved");
      vRow = em.op(
          "Mul",
          {at(rate, {b, betaHeads, 1, 1}, "beta_t"), em.op("Sub", {vRow, retrieved}, "v_error")},
          "v_delta");
    }
    state = em.op("Add", {state, em.op("Mul", {kCol, vRow}, "write")}, "state");
    Value *read = em.op("MatMul", {at(q4, {b, hkv, r, dk}, "q_t"), state}, "read");
    outs.push_back(em.reshape(read, {b, 1, hq * dv}, "o_t"));
  }
  Dims outDims{b, seq, hq * dv};
  Value *o = outs.empty()       ? em.filled(DType::F32, 0.0, outDims, "empty_output")
             : outs.size() == 1 ? outs[0]
                                : em.op("Concat", outs, {{"axis", int64_t{1}}}, "outputs");
  Value *scaled = em.op("Mul", {o, em.filled(DType::F32, scale, {}, "scale")}, "scaled");
  em.bind(0, em.cast(scaled, t, "output"));
  em.bind(1, em.cast(state, past ? past->dtype() : t, "present_state"));
  return em.status();
}

const std::vector<ImportRule> kRules = {
    {"Attention", 23, nullptr,
     reads({"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap",
            "softmax_precision"}),
     importAttention},
    {"Attention", 25, nullptr,
     reads({"is_causal", "kv_num_heads", "left_window_size", "q_num_heads", "qk_matmul_output_mode",
            "right_window_size", "scale", "softcap", "softmax_precision"}),
     importAttention},
    {"RotaryEmbedding", 23, nullptr, reads({"interleaved", "num_heads", "rotary_embedding_dim"}),
     importRotaryEmbedding},
    {"TensorScatter", 24, nullptr, reads({"axis", "mode"}), importTensorScatter},
    {"FlexAttention", 1, nullptr, reads({"prob_mod", "scale", "score_mod", "softmax_precision"}),
     importFlexAttention, nullptr, "ai.onnx.preview"},
    {"CausalConvWithState", 27, nullptr, reads({"activation"}), importCausalConvWithState},
    {"LinearAttention", 27, nullptr,
     reads({"kv_num_heads", "q_num_heads", "scale", "update_rule"},
           {noEffect("chunk_size", "a tuning hint for chunk-parallel prefill, whose result is "
                                   "the sequential recurrence's")}),
     importLinearAttention},
};

} // namespace

const std::vector<ImportRule> &transformerRules() { return kRules; }

} // namespace odlac
