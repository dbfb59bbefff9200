// FoldQuantizeDequantize: in a QDQ model (ONNX Runtime's quantize_static writes one), the float
// ops between DequantizeLinear and QuantizeLinear compute on the quantized integers themselves:
//   - Quantize(Conv | MatMul | Gemm(Dequantize(x), Dequantize(w), bias) [-> Relu | Clamp]) is
//     the integer-only QLinearConv or QLinearMatMul: x and the result quantized per tensor, w
//     per tensor or per output channel, the bias an int32 at scale x_scale * w_scale (or a
//     float bias, rounded to it), the activation the requantization's clamp;
//   - Quantize(Add | Mul(Dequantize(a), Dequantize(b)) [-> Relu | Clamp]), a, b and the
//     result quantized per tensor, is the integer-only QLinearAdd or QLinearMul (ResNet's
//     residual sums, ONNX Runtime's QLinearAdd and QLinearMul once imported);
//   - Quantize(AveragePool(Dequantize(x)) [-> Relu | Clamp]), x and the result quantized per
//     tensor, without padding or counting it, is a depthwise QLinearConv by a kernel of ones
//     whose requantization divides by the window's size (ONNX Runtime's QLinearAveragePool;
//     the classifier's GlobalAveragePool of a CNN then needs no float copy of the last map);
//   - Quantize(op(Dequantize(x)...)) with the same scale and zero point on every side, where
//     op selects elements (kSelectsElements: reshapes, transposes, slices, concatenations, max
//     pooling), is op(x...);
//   - Quantize(Dequantize(x)) with the same parameters is x;
//   - Gather | GatherElements | GatherND(Dequantize(x), indices), x quantized per tensor, is
//     Dequantize(Gather...(x, indices)): an embedding table stays 8-bit and only the rows
//     gathered are dequantized (else every run dequantizes the whole table); a Quantize with
//     the same parameters after it then folds away too.
// Each rewrite computes what the QDQ graph specifies up to the float rounding of its float form,
// as ONNX Runtime's integer kernels do. It runs before constant folding, which would otherwise
// compute the dequantized weights.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "ops/Ops.h"
#include "ops/Requantize.h"
#include "passes/PatternMatch.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

namespace odlac {
namespace {

using match::onlyUser;
using match::producedBy;

bool is8Bit(DType t) { return t == DType::U8 || t == DType::I8; }

// The quantization of one Quantize or Dequantize node: its integer side, its scales and zero
// point (constants), and the axis they run along when per axis.
struct QParams {
  Node *node;
  Value *quantized;           // Dequantize's operand, Quantize's result
  Value *scale, *zeroPoint;   // zeroPoint may be null (zero)
  std::vector<double> scales; // one, or one per slice along axis
  std::vector<int64_t> zeros; // as many as scales, or empty when zeroPoint is null
  int64_t axis;

  bool perTensor() const { return scales.size() == 1; }
  int32_t zero() const { return zeros.empty() ? 0 : static_cast<int32_t>(zeros[0]); }
};

std::optional<std::vector<int64_t>> constantInts(const Value *v) {
  if (!v->isConstant())
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < v->type().numElements(); ++i)
    switch (v->dtype()) {
    case DType::U8:
      out.push_back(v->data()->as<uint8_t>()[i]);
      break;
    case DType::I8:
      out.push_back(v->data()->as<int8_t>()[i]);
      break;
    case DType::I32:
      out.push_back(v->data()->as<int32_t>()[i]);
      break;
    default:
      return std::nullopt;
    }
  return out;
}

// The parameters of `n` (a Quantize or Dequantize) when they are constants, not blocked, and
// its integer side is 8-bit.
std::optional<QParams> paramsOf(Node *n) {
  if (!n || n->i("block_size") != 0)
    return std::nullopt;
  Value *q = n->is(ops::Quantize) ? n->output(0) : n->input(0);
  auto scales = constantFloats(*n->input(1));
  if (!is8Bit(q->dtype()) || !scales || scales->empty())
    return std::nullopt;
  QParams p{n, q, n->input(1), n->input(2), *scales, {}, n->i("axis")};
  if (p.zeroPoint) {
    auto zeros = constantInts(p.zeroPoint);
    if (!zeros || zeros->size() != scales->size())
      return std::nullopt;
    p.zeros = *zeros;
  }
  for (double s : p.scales)
    if (!(s > 0) || !std::isfinite(s))
      return std::nullopt; // a zero or negative scale is not an increasing map
  return p;
}

std::optional<QParams> dequantized(Value *v) { return paramsOf(producedBy(v, ops::Dequantize)); }

// Whether two quantizations map the same reals to the same integers.
bool sameQuantization(const QParams &a, const QParams &b) {
  if (a.quantized->dtype() != b.quantized->dtype() || a.scales.size() != b.scales.size() ||
      a.scale->dtype() != b.scale->dtype())
    return false;
  if (!a.perTensor() && a.axis != b.axis)
    return false;
  for (size_t i = 0; i < a.scales.size(); ++i) {
    int64_t za = a.zeros.empty() ? 0 : a.zeros[i], zb = b.zeros.empty() ? 0 : b.zeros[i];
    if (a.scales[i] != b.scales[i] || za != zb)
      return false;
  }
  return true;
}

// The integer the Quantize of `q` gives a real `v`: round half to even, plus the zero point,
// saturated.
int64_t quantizeReal(const QParams &q, double v) {
  double r = std::nearbyint(v / q.scales[0]) + q.zero();
  DType t = q.quantized->dtype();
  return static_cast<int64_t>(std::fmin(std::fmax(r, quantMin(t)), quantMax(t)));
}

class FoldQuantizeDequantize : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    std::set<const Node *> erased;
    for (Node *n : g.nodes())
      if (n->is(ops::Gather) || n->is(ops::GatherElements) || n->is(ops::GatherND)) {
        auto done = sinkDequantize(g, n, erased);
        if (!done)
          return done.status();
        changed |= *done;
      }
    for (Node *n : g.nodes()) {
      if (erased.count(n) || !n->is(ops::Quantize))
        continue;
      auto q = paramsOf(n);
      if (!q || !q->perTensor())
        continue; // results are quantized per tensor
      auto done = foldProduct(g, *q, erased);
      if (!done)
        return done.status();
      if (!*done) {
        done = foldBinary(g, *q, erased);
        if (!done)
          return done.status();
      }
      if (!*done) {
        done = foldAveragePool(g, *q, erased);
        if (!done)
          return done.status();
      }
      if (!*done) {
        done = foldSelection(g, *q, erased);
        if (!done)
          return done.status();
      }
      changed |= *done;
    }
    g.eraseUnusedConstants();
    return changed;
  }

private:
  // The clamp [lo, hi] that a Relu or Clamp between the product and `q` becomes.
  static std::optional<std::pair<int64_t, int64_t>> activationClamp(const Node *act,
                                                                    const QParams &q) {
    DType t = q.quantized->dtype();
    if (!act)
      return std::make_pair(int64_t{quantMin(t)}, int64_t{quantMax(t)});
    if (act->is(ops::Relu))
      return std::make_pair(quantizeReal(q, 0.0), int64_t{quantMax(t)});
    if (act->is(ops::Clamp))
      return std::make_pair(quantizeReal(q, act->f("min")), quantizeReal(q, act->f("max")));
    return std::nullopt;
  }

  // The op under q, through a Relu or Clamp (*act, else null), when q alone reads their float
  // results; null when there is none.
  static Node *opUnder(Graph &g, const QParams &q, Node **act) {
    Node *op = q.node->input(0)->producer();
    *act = nullptr;
    if (op && (op->is(ops::Relu) || op->is(ops::Clamp))) {
      if (onlyUser(g, op->output(0)) != q.node)
        return nullptr; // the activation's float result is needed elsewhere
      *act = op;
      op = op->input(0)->producer();
    }
    if (!op || onlyUser(g, op->output(0)) != (*act ? *act : q.node))
      return nullptr; // no op, or its float result is needed elsewhere
    return op;
  }

  // q's zero point, or a zero of its type.
  static Value *outputZero(Graph &g, const QParams &q) {
    if (q.zeroPoint)
      return q.zeroPoint;
    uint8_t zero = 0;
    return g.addConstant(g.uniqueName(q.quantized->name() + "/zero_point"),
                         {q.quantized->dtype(), {}}, Buffer::copyOf(&zero, 1));
  }

  // Q(Add | Mul(DQ(a), DQ(b)) [-> activation]) -> QLinearAdd / QLinearMul. Add's two factors
  // a_scale / y_scale and b_scale / y_scale share the shift of the larger one.
  static Expected<bool> foldBinary(Graph &g, const QParams &q, std::set<const Node *> &erased) {
    Node *act = nullptr;
    Node *op = opUnder(g, q, &act);
    if (!op || (!op->is(ops::Add) && !op->is(ops::Mul)))
      return false;
    auto a = dequantized(op->input(0)), b = dequantized(op->input(1));
    if (!a || !b || !a->perTensor() || !b->perTensor())
      return false;
    auto clamp = activationClamp(act, q);
    if (!clamp || clamp->first > clamp->second)
      return false;
    bool add = op->is(ops::Add);
    double ra = a->scales[0] / q.scales[0], rb = b->scales[0] / q.scales[0];
    auto fp = fixedPoint(add ? std::max(ra, rb) : a->scales[0] * b->scales[0] / q.scales[0]);
    if (!fp || fp->multiplier == 0)
      return false; // beyond the fixed-point range, or no factor: the float form stays
    AttrMap attrs = {
        {"shift", int64_t{fp->shift}}, {"output_min", clamp->first}, {"output_max", clamp->second}};
    if (add) {
      double unit = std::ldexp(1.0, fp->shift); // the smaller factor at the larger's shift
      attrs["a_multiplier"] =
          ra >= rb ? int64_t{fp->multiplier} : static_cast<int64_t>(std::nearbyint(ra * unit));
      attrs["b_multiplier"] =
          ra >= rb ? static_cast<int64_t>(std::nearbyint(rb * unit)) : int64_t{fp->multiplier};
    } else {
      attrs["multiplier"] = int64_t{fp->multiplier};
    }
    std::vector<Node *> nodes{q.node, op};
    if (act)
      nodes.push_back(act);
    std::vector<Node *> dequantizes{a->node, b->node};
    auto folded = match::replacePattern(
        g, q.quantized, nodes, add ? ops::QLinearAdd : ops::QLinearMul,
        {a->quantized, b->quantized, a->zeroPoint, b->zeroPoint, outputZero(g, q)}, attrs, "/int",
        erased);
    if (!folded)
      return folded.status();
    for (Node *dq : dequantizes)
      eraseIfUnused(g, dq, erased);
    return true;
  }

  // Q(AveragePool(DQ(x)) [-> activation]) -> QLinearConv(x, ones) with group = channels: the
  // sum of the window's x - x_zero_point requantized by x_scale / (window size * y_scale).
  // Channels first, floor-rounded windows that hold no padding or count it (ONNX pads the
  // quantized input with its zero point, which adds nothing to the sum).
  static Expected<bool> foldAveragePool(Graph &g, const QParams &q,
                                        std::set<const Node *> &erased) {
    Node *act = nullptr;
    Node *pool = opUnder(g, q, &act);
    if (!pool || !pool->is(ops::AveragePool) || isChannelsLast(*pool) || pool->i("ceil_mode") != 0)
      return false;
    auto x = dequantized(pool->input(0));
    if (!x || !x->perTensor())
      return false;
    const std::vector<int64_t> &kernel = pool->ints("kernel_shape");
    bool padded = false;
    for (int64_t p : pool->ints("pads"))
      padded |= p != 0;
    if (padded && pool->i("count_include_pad") == 0)
      return false; // the divisor would be the window's part inside the input
    const Dims &xd = x->quantized->dims();
    if (xd.size() != kernel.size() + 2)
      return false;
    int64_t channels = xd[1], terms = 1;
    for (int64_t k : kernel)
      terms *= k;
    auto clamp = activationClamp(act, q);
    if (!clamp || clamp->first > clamp->second || terms <= 0 || !accumulatorFits(terms, 0))
      return false;
    auto r = requantization(x->scales[0], {1.0 / double(terms)}, q.scales[0], pool->name());
    if (!r)
      return false; // a factor beyond the fixed-point range keeps the float form
    const std::string base = q.quantized->name();
    Dims wDims{channels, 1};
    wDims.insert(wDims.end(), kernel.begin(), kernel.end());
    std::vector<int8_t> ones(static_cast<size_t>(channels * terms), 1);
    Value *w = g.addConstant(g.uniqueName(base + "/window"), {DType::I8, wDims},
                             Buffer::copyOf(ones.data(), ones.size()));
    Value *multiplier = g.addConstant(g.uniqueName(base + "/multiplier"), {DType::I32, {}},
                                      Buffer::copyOf(r->multiplier.data(), 4));
    Value *shift = g.addConstant(g.uniqueName(base + "/shift"), {DType::I32, {}},
                                 Buffer::copyOf(r->shift.data(), 4));
    std::vector<int64_t> dilations = pool->ints("dilations");
    if (dilations.empty())
      dilations.assign(kernel.size(), 1);
    AttrMap attrs = {{"output_min", clamp->first},
                     {"output_max", clamp->second},
                     {"group", channels},
                     {"strides", pool->ints("strides")},
                     {"dilations", dilations},
                     {"pads", pool->ints("pads")},
                     {kLayoutAttr, pool->attrs().at(kLayoutAttr)}};
    std::vector<Node *> nodes{q.node, pool};
    if (act)
      nodes.push_back(act);
    auto folded = match::replacePattern(
        g, q.quantized, nodes, ops::QLinearConv,
        {x->quantized, w, nullptr, x->zeroPoint, nullptr, multiplier, shift, outputZero(g, q)},
        attrs, "/int", erased);
    if (!folded)
      return folded.status();
    eraseIfUnused(g, x->node, erased);
    return true;
  }

  // Q(product(DQ(x), DQ(w), bias) [-> activation]) -> QLinearConv / QLinearMatMul.
  static Expected<bool> foldProduct(Graph &g, const QParams &q, std::set<const Node *> &erased) {
    Node *act = nullptr;
    Node *product = opUnder(g, q, &act);
    if (!product)
      return false;
    bool conv = product->is(ops::Conv), gemm = product->is(ops::Gemm);
    if (!conv && !gemm && !product->is(ops::MatMul))
      return false;
    auto x = dequantized(product->input(0));
    auto w = dequantized(product->input(1));
    if (!x || !w || !x->perTensor())
      return false; // operands not dequantized 8-bit data, or x quantized per axis
    const Dims &wd = w->quantized->dims();
    double alpha = 1.0, beta = 1.0;
    bool transposeW = false;
    int64_t channelAxis = static_cast<int64_t>(wd.size()) - 1; // MatMul: w [..., K, N]
    if (conv) {
      channelAxis = 0; // OIS
    } else if (gemm) {
      if (product->i("transA") != 0)
        return false; // a transposed A would need its own transpose of the data
      alpha = product->f("alpha");
      beta = product->f("beta");
      transposeW = product->i("transB") != 0;
      channelAxis = transposeW ? 0 : 1;
    }
    int64_t channels = wd[channelAxis];
    if (!w->perTensor() && (w->axis != channelAxis || w->scales.size() != size_t(channels)))
      return false; // w quantized along another axis than its output channels
    auto clamp = activationClamp(act, q);
    if (!clamp || clamp->first > clamp->second)
      return false;
    int64_t terms = conv ? w->quantized->type().numElements() / std::max<int64_t>(channels, 1)
                         : wd[wd.size() - (transposeW ? 1 : 2)];
    // Requantization factors: x_scale * w_scale[c] * alpha / y_scale.
    std::vector<double> wScales = w->scales;
    for (double &s : wScales)
      s *= alpha;
    auto bias = integerBias(g, product, channels, x->scales[0], wScales, beta);
    if (!bias)
      return false;
    double maxBias = 0;
    if (*bias)
      for (int64_t c = 0; c < channels; ++c)
        maxBias = std::max(maxBias, std::fabs(double((*bias)->data()->as<int32_t>()[c])));
    if (!accumulatorFits(terms, maxBias))
      return false; // the float form is needed for so long a sum
    auto r = requantization(x->scales[0], wScales, q.scales[0], product->name());
    if (!r)
      return false; // a factor beyond the fixed-point range keeps the float form
    Dims paramDims = wScales.size() == 1 ? Dims{} : Dims{channels};
    const std::string base = q.quantized->name();
    Value *multiplier =
        g.addConstant(g.uniqueName(base + "/multiplier"), {DType::I32, paramDims},
                      Buffer::copyOf(r->multiplier.data(), r->multiplier.size() * 4));
    Value *shift = g.addConstant(g.uniqueName(base + "/shift"), {DType::I32, paramDims},
                                 Buffer::copyOf(r->shift.data(), r->shift.size() * 4));
    Value *yZero = outputZero(g, q);
    Value *kernel = w->quantized;
    if (transposeW) {
      Value *t = g.addValue(g.uniqueName(kernel->name() + "/transposed"), {});
      Node *tn = g.addNodeBefore(product, ops::Transpose, t->name(), {kernel}, {t},
                                 {{"perm", std::vector<int64_t>{1, 0}}});
      if (Status s = verifyAndInfer(*tn))
        return s;
      kernel = t;
    }
    AttrMap attrs = {{"output_min", clamp->first}, {"output_max", clamp->second}};
    if (conv)
      for (const char *a : {"group", "strides", "dilations", "pads", kLayoutAttr})
        if (product->hasAttr(a))
          attrs[a] = product->attrs().at(a);
    std::vector<Node *> nodes{q.node, product};
    if (act)
      nodes.push_back(act);
    Node *biasNode = product->input(2) ? product->input(2)->producer() : nullptr;
    auto folded = match::replacePattern(
        g, q.quantized, nodes, conv ? ops::QLinearConv : ops::QLinearMatMul,
        {x->quantized, kernel, *bias, x->zeroPoint, w->zeroPoint, multiplier, shift, yZero}, attrs,
        "/int", erased);
    if (!folded)
      return folded.status();
    for (Node *dq : {x->node, w->node, biasNode})
      eraseIfUnused(g, dq, erased);
    return true;
  }

  // gather(DQ(x), indices) -> DQ(gather(x, indices)), x quantized per tensor.
  static Expected<bool> sinkDequantize(Graph &g, Node *gather, std::set<const Node *> &erased) {
    auto x = dequantized(gather->input(0));
    Value *y = gather->output(0);
    if (!x || !x->perTensor())
      return false;
    Value *yq = g.addValue(g.uniqueName(y->name() + "/int"), {});
    Node *gi = g.addNodeBefore(gather, gather->op(), gather->name(),
                               {x->quantized, gather->input(1)}, {yq}, gather->attrs());
    if (Status s = verifyAndInfer(*gi))
      return s;
    Value *yf = g.addValue(g.uniqueName(y->name() + "/dequantized"), {});
    Node *dq = g.addNodeBefore(gather, ops::Dequantize, gather->name() + "/dequantize",
                               {yq, x->scale, x->zeroPoint}, {yf}, x->node->attrs());
    if (Status s = verifyAndInfer(*dq))
      return s;
    g.replaceAllUses(y, yf);
    erased.insert(gather);
    g.eraseNode(gather);
    eraseIfUnused(g, x->node, erased);
    return true;
  }

  // Erases a Dequantize the fold left without readers.
  static void eraseIfUnused(Graph &g, Node *n, std::set<const Node *> &erased) {
    if (!n || erased.count(n) || !n->output(0)->uses().empty() || g.isGraphOutput(n->output(0)))
      return;
    erased.insert(n);
    g.eraseNode(n);
  }

  // The product's bias (Conv's b, Gemm's C times beta) as int32 at scale x_scale * w_scale[c]:
  // a Dequantize of int32 data at that very scale gives its data; a constant bias, float or a
  // Dequantize of constants, is rounded to it. nullptr without a bias; nullopt when the bias
  // is computed, not one per output channel, or too large.
  static std::optional<Value *> integerBias(Graph &g, const Node *product, int64_t channels,
                                            double xScale, const std::vector<double> &wScales,
                                            double beta) {
    Value *b = product->input(2);
    if (!b)
      return static_cast<Value *>(nullptr);
    if (b->dims() != Dims{channels})
      return std::nullopt; // a bias per row, or broadcast from one element
    auto scaleOf = [&](int64_t c) { return xScale * wScales[wScales.size() == 1 ? 0 : c]; };
    std::vector<double> real(static_cast<size_t>(channels));
    Node *dqNode = producedBy(b, ops::Dequantize);
    if (dqNode && dqNode->input(0)->dtype() == DType::I32 && dqNode->i("block_size") == 0) {
      auto sb = constantFloats(*dqNode->input(1));
      auto zb = dqNode->input(2) ? constantInts(dqNode->input(2)) : std::vector<int64_t>{};
      if (!sb || !zb)
        return std::nullopt;
      bool atProductScale = beta == 1.0;
      for (int64_t c = 0; atProductScale && c < channels; ++c) {
        double s = (*sb)[sb->size() == 1 ? 0 : c];
        atProductScale = (zb->empty() || (*zb)[zb->size() == 1 ? 0 : c] == 0) &&
                         std::fabs(s - scaleOf(c)) <= 1e-6 * scaleOf(c);
      }
      if (atProductScale)
        return dqNode->input(0); // ORT's quantized bias, used as it is (computed or not)
      auto data = constantInts(dqNode->input(0));
      if (!data)
        return std::nullopt;
      for (int64_t c = 0; c < channels; ++c)
        real[c] = double((*data)[c] - (zb->empty() ? 0 : (*zb)[zb->size() == 1 ? 0 : c])) *
                  (*sb)[sb->size() == 1 ? 0 : c];
    } else if (auto f = constantFloats(*b)) {
      real = *f;
    } else {
      return std::nullopt;
    }
    std::vector<int32_t> bias(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      double v = std::nearbyint(real[c] * beta / scaleOf(c));
      if (!(std::fabs(v) < 1073741824.0))
        return std::nullopt; // beyond what an int32 accumulator holds with room for the sum
      bias[c] = static_cast<int32_t>(v);
    }
    return g.addConstant(g.uniqueName(b->name() + "/int32"), {DType::I32, {channels}},
                         Buffer::copyOf(bias.data(), bias.size() * sizeof(int32_t)));
  }

  // Q(op(DQ(x)...)) -> op(x...) for an op that selects elements, and Q(DQ(x)) -> x, all
  // quantizations equal.
  static Expected<bool> foldSelection(Graph &g, const QParams &q, std::set<const Node *> &erased) {
    Value *real = q.node->input(0);
    Node *op = real->producer();
    if (!op)
      return false;
    if (op->is(ops::Dequantize)) {
      auto x = paramsOf(op);
      if (!x || !sameQuantization(*x, q))
        return false;
      if (g.isGraphOutput(q.quantized) &&
          (!x->quantized->producer() || g.isGraphOutput(x->quantized)))
        return false; // a graph output stays a node's own result
      g.replaceAllUses(q.quantized, x->quantized);
      erased.insert(q.node);
      g.eraseNode(q.node);
      eraseIfUnused(g, op, erased);
      return true;
    }
    if (!op->op().has(kSelectsElements) || onlyUser(g, real) != q.node)
      return false;
    std::vector<Value *> operands;
    for (Value *in : op->inputs()) {
      auto x = dequantized(in);
      if (!x || !sameQuantization(*x, q))
        return false; // an operand not dequantized the way the result is quantized
      operands.push_back(x->quantized);
    }
    std::vector<Node *> dequantizes;
    for (Value *in : op->inputs())
      dequantizes.push_back(in->producer());
    auto folded = match::replacePattern(g, q.quantized, {q.node, op}, op->op(), operands,
                                        op->attrs(), "/int", erased);
    if (!folded)
      return folded.status();
    for (Node *dq : dequantizes)
      eraseIfUnused(g, dq, erased);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldQuantizeDequantize() {
  return std::make_unique<FoldQuantizeDequantize>();
}

} // namespace odlac
