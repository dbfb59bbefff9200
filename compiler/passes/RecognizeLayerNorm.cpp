// RecognizeLayerNorm: PyTorch exports layer normalization at opsets below 17 as arithmetic,
//   mean = ReduceMean(x, trailing axes); d = x - mean; var = ReduceMean(d^2, same axes)
//   y = d / Sqrt(var + epsilon) [* gamma] [+ beta]
// (d^2 as Pow(d, 2) or d * d; the division also as d * Reciprocal(...); constants on either
// side of commutative ops). The chain reads each row five times and stores four intermediate
// tensors; one LayerNorm does two passes and stores nothing (ops/Transformer.cpp), and ONNX's
// own LayerNormalization imports to the same op.
#include "passes/Passes.h"

#include "passes/PatternMatch.h"

#include <set>

namespace odlac {
namespace {

using namespace match;

struct LayerNormMatch {
  Value *x = nullptr, *gamma = nullptr, *beta = nullptr;
  int64_t axis = 0;
  double epsilon = 0;
  std::vector<Node *> nodes; // in schedule order; the last one's result is the normalized one
};

// The first of the reduced axes when `n` reduces x's trailing axes with keepdims, else -1.
int64_t trailingAxis(const Node *n) {
  const auto &axes = n->ints("axes");
  int64_t rank = n->input(0)->type().rank();
  if (n->i("keepdims") == 0 || axes.empty() || axes.back() != rank - 1)
    return -1;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return -1;
  return axes.front();
}

// Whether `sq` squares `d`: Pow(d, 2) or Mul(d, d).
bool squares(const Node *sq, const Value *d) {
  if (is(sq, ops::Pow))
    return sq->input(0) == d && isScalar(sq->input(1), 2.0);
  return is(sq, ops::Mul) && sq->input(0) == d && sq->input(1) == d;
}

// A parameter (gamma or beta) that LayerNorm can take: x's element type, the normalized dims.
bool isNormParam(const Value *p, const Value *x, int64_t axis) {
  const Dims &xd = x->dims();
  return p->dtype() == x->dtype() && p->dims() == Dims(xd.begin() + axis, xd.end());
}

// Matches the chain that starts at `mean`; false (m partly filled) when it is not there.
bool matchLayerNorm(const Graph &g, Node *mean, LayerNormMatch &m) {
  if (!is(mean, ops::ReduceMean) ||
      (mean->output(0)->dtype() != DType::F32 && mean->output(0)->dtype() != DType::F64))
    return false; // the start of the chain, in a float type with one-element constants
  m.x = mean->input(0);
  m.axis = trailingAxis(mean);
  if (m.axis < 0)
    return false; // statistics over leading axes are not a layer norm
  Node *sub = onlyUserIs(g, mean->output(0), ops::Sub);
  if (!sub || sub->input(0) != m.x || sub->input(1) != mean->output(0))
    return false; // the mean is needed elsewhere, or is not subtracted from x
  Value *d = sub->output(0);
  // d has two readers: the square and the division (Mul(d, d) reads it twice).
  Node *sq = nullptr, *div = nullptr;
  for (const Use &u : d->uses()) {
    bool square =
        is(u.node, ops::Pow) || (is(u.node, ops::Mul) && u.node->input(0) == u.node->input(1));
    (square ? sq : div) = u.node;
  }
  size_t expectedUses = is(sq, ops::Mul) ? 3 : 2;
  if (!sq || !div || d->uses().size() != expectedUses || g.isGraphOutput(d) || !squares(sq, d))
    return false; // the deviation feeds something besides the variance and the division
  Node *var = onlyUserIs(g, sq->output(0), ops::ReduceMean);
  if (!var || var->ints("axes") != mean->ints("axes") || var->i("keepdims") == 0)
    return false; // the variance is over other axes than the mean
  Node *addEps = onlyUserIs(g, var->output(0), ops::Add);
  Value *varOperand = nullptr;
  auto eps = addEps ? constantOperand(addEps, &varOperand) : std::nullopt;
  if (!eps || varOperand != var->output(0) || *eps < 0)
    return false; // epsilon is not a non-negative one-element constant
  m.epsilon = *eps;
  Node *sqrt = onlyUserIs(g, addEps->output(0), ops::Sqrt);
  if (!sqrt)
    return false; // not a standard deviation
  m.nodes = {mean, sub, sq, var, addEps, sqrt};
  if (is(div, ops::Div)) {
    if (div->input(0) != d || div->input(1) != sqrt->output(0) ||
        onlyUser(g, sqrt->output(0)) != div)
      return false; // not d / stddev
  } else {
    Node *recip = onlyUserIs(g, sqrt->output(0), ops::Reciprocal);
    if (!recip || !is(div, ops::Mul) || otherOperand(div, d) != recip->output(0) ||
        onlyUser(g, recip->output(0)) != div)
      return false; // not d * (1 / stddev)
    m.nodes.push_back(recip);
  }
  m.nodes.push_back(div);
  if (div->output(0)->type() != m.x->type())
    return false; // the division broadcasts to a larger shape
  // Optional affine part: * gamma, then + beta, each with the normalized dims.
  Value *y = div->output(0);
  Node *mul = onlyUserIs(g, y, ops::Mul);
  if (mul && isNormParam(otherOperand(mul, y), m.x, m.axis)) {
    m.gamma = otherOperand(mul, y);
    m.nodes.push_back(mul);
    y = mul->output(0);
  }
  Node *add = onlyUserIs(g, y, ops::Add);
  if (add && isNormParam(otherOperand(add, y), m.x, m.axis)) {
    m.beta = otherOperand(add, y);
    m.nodes.push_back(add);
  }
  return true;
}

class RecognizeLayerNorm : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    if (!ctx.target->hasExtension("ExtLayerNorm") && !ctx.target->hasOp("InstanceNormalization"))
      return false; // LayerNorm would lower to neither: the backend runs the exported arithmetic
    bool changed = false;
    std::set<const Node *> erased; // matched nodes later in this walk's copy of the schedule
    for (Node *n : g.nodes()) {
      LayerNormMatch m;
      if (erased.count(n) || !matchLayerNorm(g, n, m))
        continue;
      Node *last = m.nodes.back();
      Value *result = last->output(0);
      std::vector<Value *> operands{m.x, m.gamma, m.beta};
      while (!operands.back())
        operands.pop_back(); // absent trailing operands are left out
      auto ln = replacePattern(g, result, m.nodes, ops::LayerNorm, operands,
                               {{"axis", m.axis}, {"epsilon", m.epsilon}}, "/layer_norm", erased);
      if (!ln)
        return ln.takeStatus();
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRecognizeLayerNorm() { return std::make_unique<RecognizeLayerNorm>(); }

} // namespace odlac
