// QuantizeStatic (--quantize=int8): static post-training quantization of a float model. The
// calibration inputs run through the float graph on the reference backend, which gives every
// float value's range (min/max, or clipped by a percentile of |x| or by the entropy method);
// each Conv, Gemm and MatMul with constant weights then gets the QDQ form ONNX Runtime's
// quantize_static writes: its data operand and its result (after a Relu or Clamp that is its
// only reader) quantized per tensor to uint8 over their ranges, the weights per output channel
// to symmetric int8, the bias to int32 at scale x_scale * w_scale; a value that a
// reshape/transpose/slice/max-pool (kSelectsElements) computes from a quantized one shares its
// quantization, so that it too runs on the integers; an Add of two quantized values has its
// result quantized (quantizeSum). fold-quantize-dequantize, run at the end,
// turns the QDQ form into the integer-only products, the same integer IR a QDQ model imports
// to. The float model's outputs on the calibration inputs are kept for the driver's error
// report.
#include "passes/Passes.h"

#include "evaluate/Evaluate.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"
#include "passes/PatternMatch.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace odlac {
namespace {

constexpr int kBins = 2048; // histogram of |x| for the percentile and entropy methods

// What the calibration inputs make one float value hold.
struct Observed {
  double lo = INFINITY, hi = -INFINITY;
  std::vector<double> hist; // nonzero |x| in kBins bins over [0, max(|lo|, |hi|)]
  double absMax() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

// The threshold T below which `percentile` percent of the histogram's mass lies.
double percentileThreshold(const Observed &o, double percentile) {
  double total = 0;
  for (double h : o.hist)
    total += h;
  double want = total * percentile / 100.0, sum = 0;
  double width = o.absMax() / kBins;
  for (int i = 0; i < kBins; ++i) {
    sum += o.hist[i];
    if (sum >= want)
      return (i + 1) * width;
  }
  return o.absMax();
}

// TensorRT's entropy calibration: the threshold T whose `levels`-level quantization of the |x|
// histogram (mass beyond T folded into the last bin) has the least KL divergence from it.
double entropyThreshold(const Observed &o, int levels) {
  double width = o.absMax() / kBins, best = INFINITY;
  int bestBins = kBins;
  for (int bins = levels; bins <= kBins; ++bins) {
    std::vector<double> p(o.hist.begin(), o.hist.begin() + bins);
    for (int i = bins; i < kBins; ++i)
      p[bins - 1] += o.hist[i];
    double total = 0;
    for (double v : p)
      total += v;
    if (total <= 0)
      continue;
    // q: p merged into `levels` groups, each spread evenly over the group's nonzero bins.
    std::vector<double> q(bins, 0.0);
    for (int l = 0; l < levels; ++l) {
      int begin = l * bins / levels, end = (l + 1) * bins / levels;
      double mass = 0;
      int nonzero = 0;
      for (int i = begin; i < end; ++i) {
        mass += o.hist[i];
        nonzero += o.hist[i] > 0;
      }
      for (int i = begin; i < end; ++i)
        if (o.hist[i] > 0)
          q[i] = mass / nonzero;
    }
    double qTotal = 0;
    for (double v : q)
      qTotal += v;
    double kl = 0;
    for (int i = 0; i < bins; ++i)
      if (p[i] > 0)
        kl += q[i] > 0 ? p[i] / total * std::log((p[i] / total) / (q[i] / qTotal)) : 1.0;
    if (kl < best) {
      best = kl;
      bestBins = bins;
    }
  }
  return bestBins * width;
}

// uint8 quantization of the range [lo, hi] (widened to hold 0).
struct UInt8Params {
  float scale;
  uint8_t zero;
};
UInt8Params uint8Params(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
  double zero = std::nearbyint(-lo / scale);
  return {static_cast<float>(scale), static_cast<uint8_t>(std::clamp(zero, 0.0, 255.0))};
}

class QuantizeStatic : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    if (!ctx.calibration)
      return false;
    cal_ = ctx.calibration;
    if (Status s = observe(g))
      return s;
    bool changed = false;
    for (Node *n : g.nodes()) {
      auto done = quantizeProduct(g, n);
      if (done && !*done)
        done = quantizeSum(g, n);
      if (!done)
        return done.status();
      changed |= *done;
    }
    if (!changed)
      return false;
    auto folded = createFoldQuantizeDequantize()->run(g, ctx);
    if (!folded)
      return folded.status();
    return true;
  }

private:
  const Calibration *cal_ = nullptr;
  std::map<const Value *, Observed> observed_;
  std::map<const Value *, UInt8Params> params_;  // the quantization chosen for a value
  std::map<const Value *, Value *> dequantized_; // its DQ(Q(v)), which v's readers now read
  std::map<const Value *, Value *> original_;    // DQ(Q(v)) -> v

  // Runs the calibration inputs through the graph with every float result as an output.
  Status observe(Graph &g) {
    const std::vector<Value *> outputs = g.outputs();
    std::vector<Value *> watched = outputs;
    for (Node *n : g.nodes())
      for (Value *v : n->outputs())
        if (v->dtype() == DType::F32 && !g.isGraphOutput(v))
          watched.push_back(v);
    for (int pass = 0; pass < (cal_->method == Calibration::Method::MinMax ? 1 : 2); ++pass) {
      cal_->floatOutputs.clear();
      for (const auto &set : cal_->sets) {
        g.setOutputs(watched);
        auto got = executeGraph(g, set);
        g.setOutputs(outputs);
        if (!got)
          return Status::error("quantization: the float model fails on a calibration input: " +
                               got.status().message());
        cal_->floatOutputs.emplace_back(got->begin(), got->begin() + outputs.size());
        for (size_t i = 0; i < watched.size(); ++i)
          record(watched[i], *(*got)[i], pass);
        for (size_t i = 0; i < g.inputs().size(); ++i)
          record(g.inputs()[i], *set[i], pass);
      }
    }
    return Status::ok();
  }

  void record(const Value *v, const Buffer &b, int pass) {
    if (v->dtype() != DType::F32)
      return;
    Observed &o = observed_[v];
    const float *x = b.as<float>();
    int64_t n = v->type().numElements();
    if (pass == 0) {
      for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(x[i])) {
          o.lo = std::min(o.lo, double(x[i]));
          o.hi = std::max(o.hi, double(x[i]));
        }
      return;
    }
    // Zeros (a Relu's, padding) are left out: the quantization holds 0 exactly whatever the
    // range, and their mass would make the entropy method clip the rest.
    o.hist.resize(kBins, 0.0);
    double scale = o.absMax() > 0 ? kBins / o.absMax() : 0;
    for (int64_t i = 0; i < n; ++i)
      if (std::isfinite(x[i]) && x[i] != 0.0f)
        o.hist[std::min(kBins - 1, int(std::fabs(x[i]) * scale))] += 1;
  }

  // The range calibration gives `v`: its observed one, clipped by the method's threshold
  // where only products read it (through selecting ops): a clipped value that reaches
  // anything else (a Softmax over class scores, a graph output) would change the result
  // beyond what rounding does.
  std::pair<double, double> rangeOf(const Graph &g, const Value *v, const Observed &o) const {
    if (cal_->method == Calibration::Method::MinMax || o.absMax() == 0 || !onlyProductsRead(g, v))
      return {o.lo, o.hi};
    // uint8 holds 256 levels of a range that does not cross zero, about 128 on either side
    // of one that does.
    int levels = o.lo >= 0 || o.hi <= 0 ? 256 : 128;
    double t = cal_->method == Calibration::Method::Percentile
                   ? percentileThreshold(o, cal_->percentile)
                   : entropyThreshold(o, levels);
    return {std::max(o.lo, -t), std::min(o.hi, t)};
  }

  static bool isProduct(const Node *n) {
    return n->is(ops::Conv) || n->is(ops::Gemm) || n->is(ops::MatMul);
  }

  // Whether every reader of v is a product reading it as data, or a selecting op whose
  // result only such readers read.
  static bool onlyProductsRead(const Graph &g, const Value *v) {
    if (g.isGraphOutput(v) || v->uses().empty())
      return false;
    for (const Use &u : v->uses()) {
      if (isProduct(u.node) && u.operand == 0)
        continue;
      if (!selectsFromOne(u.node) || !onlyProductsRead(g, u.node->output(0)))
        return false;
    }
    return true;
  }

  static bool selectsFromOne(const Node *p) {
    return p && p->op().has(kSelectsElements) && p->numInputs() == 1 &&
           p->input(0)->dtype() == DType::F32 && !p->input(0)->isConstant();
  }

  // The DQ(Q(v)) that v's readers read from now on, made on first use: quantized with v's
  // calibrated range, or, when a selecting op makes v from one value, with that value's
  // quantization (which is then applied too). nullptr when v has no observed range.
  Expected<Value *> quantized(Graph &g, Value *v) {
    v = original(v);
    if (auto it = dequantized_.find(v); it != dequantized_.end())
      return it->second;
    UInt8Params p;
    if (Node *prod = v->producer(); selectsFromOne(prod)) {
      Value *operand = original(prod->input(0)); // read by DQ(Q(operand)) once quantized
      auto in = quantized(g, operand);
      if (!in || !*in)
        return in;
      p = params_.at(operand);
    } else {
      auto it = observed_.find(v);
      if (it == observed_.end() || !std::isfinite(it->second.lo))
        return nullptr;
      auto [lo, hi] = rangeOf(g, v, it->second);
      p = uint8Params(lo, hi);
    }
    params_[v] = p;
    Value *scale = g.addConstant(g.uniqueName(v->name() + "/scale"), {DType::F32, {}},
                                 Buffer::copyOf(&p.scale, sizeof p.scale));
    Value *zero = g.addConstant(g.uniqueName(v->name() + "/zero_point"), {DType::U8, {}},
                                Buffer::copyOf(&p.zero, 1));
    Node *first = firstReader(g, v);
    Value *q = g.addValue(g.uniqueName(v->name() + "/quantized"), {});
    Value *dq = g.addValue(g.uniqueName(v->name() + "/dequantized"), {});
    AttrMap toU8 = quantAttrs("u8"), toF32 = quantAttrs("f32");
    Node *qn = first ? g.addNodeBefore(first, ops::Quantize, q->name(), {v, scale, zero}, {q}, toU8)
                     : g.addNode(ops::Quantize, q->name(), {v, scale, zero}, {q}, toU8);
    Node *dn =
        first ? g.addNodeBefore(first, ops::Dequantize, dq->name(), {q, scale, zero}, {dq}, toF32)
              : g.addNode(ops::Dequantize, dq->name(), {q, scale, zero}, {dq}, toF32);
    for (Node *n : {qn, dn})
      if (Status s = verifyAndInfer(*n))
        return s;
    if (g.isGraphOutput(v)) {
      g.replaceAllUses(v, dq); // the output becomes DQ(Q(v)), keeping v's name
      qn->setInput(0, v);
    } else {
      std::vector<Use> uses = v->uses();
      for (const Use &u : uses)
        if (u.node != qn)
          u.node->setInput(u.operand, dq);
    }
    dequantized_[v] = dq;
    original_[dq] = v;
    return dq;
  }

  // The value whose DQ(Q(...)) v is, else v: a reader of a quantized value reads its DQ.
  Value *original(Value *v) const {
    auto it = original_.find(v);
    return it == original_.end() ? v : it->second;
  }

  static AttrMap quantAttrs(const char *to) {
    return {{"axis", int64_t{0}},
            {"to", std::string(to)},
            {"block_size", int64_t{0}},
            {"saturate", int64_t{1}}};
  }

  // The first node in schedule order that reads v.
  static Node *firstReader(const Graph &g, const Value *v) {
    for (Node *n : g.nodes())
      for (Value *in : n->inputs())
        if (in == v)
          return n;
    return nullptr;
  }

  // A Conv (channels-first), Gemm (A not transposed) or MatMul (2-D B) of float data by constant
  // float weights gets its QDQ form.
  Expected<bool> quantizeProduct(Graph &g, Node *n) {
    bool conv = n->is(ops::Conv), gemm = n->is(ops::Gemm);
    if (!conv && !gemm && !n->is(ops::MatMul))
      return false;
    Value *x = n->input(0), *w = n->input(1), *b = n->input(2);
    if (x->dtype() != DType::F32 || x->isConstant() || !w->isConstant() ||
        w->dtype() != DType::F32 || (b && !b->isConstant()))
      return false; // not float data by constant float weights
    if (conv && isChannelsLast(*n))
      return false;
    if (gemm && n->i("transA") != 0)
      return false;
    if (!conv && (w->dims().size() != 2 || x->dims().size() < 2))
      return false;
    int64_t axis = conv ? 0 : gemm && n->i("transB") != 0 ? 0 : 1;
    int64_t channels = w->dims()[axis];
    if (b && b->dims() != Dims{channels})
      return false; // a bias per row: not one int32 per output channel
    auto dx = quantized(g, x);
    if (!dx)
      return dx.status();
    if (!*dx)
      return false; // no range observed for the data
    float sx = params_.at(original(x)).scale;
    // Weights: symmetric int8 per output channel, [-127, 127].
    const float *wf = w->data()->as<float>();
    int64_t count = w->type().numElements();
    std::vector<float> ws(channels, 0.0f);
    auto channelOf = [&](int64_t i) {
      if (axis == 0)
        return i / (count / channels);
      return i % channels; // axis 1 of a matrix
    };
    for (int64_t i = 0; i < count; ++i)
      ws[channelOf(i)] = std::max(ws[channelOf(i)], std::fabs(wf[i]));
    for (float &s : ws)
      s = s > 0 ? s / 127.0f : 1.0f;
    std::vector<int8_t> wq(count);
    for (int64_t i = 0; i < count; ++i)
      wq[i] = static_cast<int8_t>(
          std::clamp(std::nearbyint(wf[i] / ws[channelOf(i)]), -127.0f, 127.0f));
    std::vector<int8_t> wz(channels, 0);
    const std::string base = n->output(0)->name();
    Value *wqv = g.addConstant(g.uniqueName(w->name() + "/int8"), {DType::I8, w->dims()},
                               Buffer::copyOf(wq.data(), wq.size()));
    Value *wsv = g.addConstant(g.uniqueName(w->name() + "/scale"), {DType::F32, {channels}},
                               Buffer::copyOf(ws.data(), ws.size() * sizeof(float)));
    Value *wzv = g.addConstant(g.uniqueName(w->name() + "/zero_point"), {DType::I8, {channels}},
                               Buffer::copyOf(wz.data(), wz.size()));
    AttrMap wAttrs = quantAttrs("f32");
    wAttrs["axis"] = axis;
    auto dw = dequantize(g, n, wqv, wsv, wzv, wAttrs, w->name() + "/dequantized");
    if (!dw)
      return dw.status();
    n->setInput(0, *dx);
    n->setInput(1, *dw);
    if (b) {
      // Bias: int32 at the product's scale, x_scale * w_scale[c].
      std::vector<int32_t> bq(channels);
      std::vector<float> bs(channels);
      for (int64_t c = 0; c < channels; ++c) {
        bs[c] = sx * ws[c];
        double v = std::nearbyint(double(b->data()->as<float>()[c]) / bs[c]);
        bq[c] = static_cast<int32_t>(std::clamp(v, -1073741824.0, 1073741823.0));
      }
      Value *bqv = g.addConstant(g.uniqueName(b->name() + "/int32"), {DType::I32, {channels}},
                                 Buffer::copyOf(bq.data(), bq.size() * sizeof(int32_t)));
      Value *bsv = g.addConstant(g.uniqueName(b->name() + "/scale"), {DType::F32, {channels}},
                                 Buffer::copyOf(bs.data(), bs.size() * sizeof(float)));
      AttrMap bAttrs = quantAttrs("f32");
      bAttrs["axis"] = int64_t{0};
      auto db = dequantize(g, n, bqv, bsv, nullptr, bAttrs, b->name() + "/dequantized");
      if (!db)
        return db.status();
      n->setInput(2, *db);
    }
    auto dy = quantizedResult(g, n);
    if (!dy)
      return dy.status();
    return true;
  }

  // quantized() of n's result, after the Relu or Clamp that alone reads it.
  Expected<Value *> quantizedResult(Graph &g, Node *n) {
    Value *y = n->output(0);
    if (Node *act = match::onlyUser(g, y); act && (act->is(ops::Relu) || act->is(ops::Clamp)))
      y = act->output(0);
    return quantized(g, y);
  }

  // An Add of two quantized values (a residual sum of products' results) gets its result
  // quantized, after the Relu or Clamp that alone reads it: fold-quantize-dequantize makes it a
  // QLinearAdd. A product reading the sum quantizes it anyway; this keeps in integers the last
  // stage of a residual network, whose sum a pool reads (Add -> Relu -> GlobalAveragePool ->
  // Gemm: the pool then folds into a QLinearConv too) instead of three float copies of the map.
  Expected<bool> quantizeSum(Graph &g, Node *n) {
    if (!n->is(ops::Add) || n->numInputs() != 2 || n->output(0)->dtype() != DType::F32)
      return false;
    for (Value *in : n->inputs())
      if (!original_.count(in))
        return false; // an operand not read through its DQ(Q(...))
    auto dy = quantizedResult(g, n);
    if (!dy)
      return dy.status();
    return *dy != nullptr;
  }

  static Expected<Value *> dequantize(Graph &g, Node *before, Value *x, Value *scale, Value *zero,
                                      const AttrMap &attrs, const std::string &name) {
    Value *v = g.addValue(g.uniqueName(name), {});
    Node *n = g.addNodeBefore(before, ops::Dequantize, v->name(), {x, scale, zero}, {v}, attrs);
    if (Status s = verifyAndInfer(*n))
      return s;
    return v;
  }
};

} // namespace

std::unique_ptr<Pass> createQuantizeStatic() { return std::make_unique<QuantizeStatic>(); }

} // namespace odlac
