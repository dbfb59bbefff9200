// RecognizeGelu: PyTorch exports GELU at opsets below 20 as arithmetic around a gate
// g = 1 + Erf(x / sqrt(2))                                   (exact; x * (1/sqrt(2)) too), or
// g = 1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))           (approximate; x^3 as Pow(x, 3)
//                                                             or x * (x * x)),
// then y = x * g * 0.5 in any association: (x * g) * 0.5, (x * 0.5) * g, x * (g * 0.5), with
// constants on either side. Six to ten elementwise passes become one Gelu (odla_Gelu), which
// FuseActivations can then compute in the epilogue of the preceding matrix product.
#include "passes/Passes.h"

#include "passes/PatternMatch.h"

#include <cmath>
#include <set>

namespace odlac {
namespace {

using namespace match;

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kTanhCubic = 0.044715;

struct GeluMatch {
  Value *x = nullptr;
  bool approximate = false;
  std::vector<Node *> nodes; // in the order they are erased: consumers before producers
};

// x for the exact form's Erf argument: x / sqrt(2) or x * (1/sqrt(2)).
Value *matchErfArgument(const Graph &g, Node *erf, GeluMatch &m) {
  Node *scale = erf->input(0)->producer();
  if (!scale || onlyUser(g, scale->output(0)) != erf)
    return nullptr; // the argument is needed elsewhere
  Value *x = nullptr;
  auto c = constantOperand(scale, &x);
  bool div = is(scale, ops::Div) && scale->input(1) != x && c && std::fabs(*c - kSqrt2) <= 1e-6;
  bool mul = is(scale, ops::Mul) && c && std::fabs(*c - 1 / kSqrt2) <= 1e-6;
  if (!div && !mul)
    return nullptr; // not x scaled by 1/sqrt(2)
  m.nodes.push_back(scale);
  return x;
}

// Whether `v` is x^3 (Pow(x, 3) or x * (x * x)), read only by the pattern.
bool matchCube(const Graph &g, Value *v, Value *x, GeluMatch &m) {
  Node *n = v->producer();
  if (onlyUser(g, v) == nullptr || !n)
    return false;
  if (is(n, ops::Pow) && n->input(0) == x && isScalar(n->input(1), 3.0)) {
    m.nodes.push_back(n);
    return true;
  }
  if (!is(n, ops::Mul) || !otherOperand(n, x))
    return false;
  Value *sq = otherOperand(n, x);
  Node *sqNode = producedBy(sq, ops::Mul);
  if (!sqNode || sqNode->input(0) != x || sqNode->input(1) != x || onlyUser(g, sq) != n)
    return false;
  m.nodes.push_back(n);
  m.nodes.push_back(sqNode);
  return true;
}

// x for the approximate form's Tanh argument: sqrt(2/pi) * (x + 0.044715 * x^3).
Value *matchTanhArgument(const Graph &g, Node *tanh, GeluMatch &m) {
  Node *outer = producedBy(tanh->input(0), ops::Mul);
  Value *sum = nullptr;
  if (!outer || onlyUser(g, outer->output(0)) != tanh)
    return nullptr;
  auto beta = constantOperand(outer, &sum);
  Node *add = producedBy(sum, ops::Add);
  if (!beta || std::fabs(*beta - kSqrt2OverPi) > 1e-6 || !add || onlyUser(g, sum) != outer)
    return nullptr; // not sqrt(2/pi) * (...)
  m.nodes.push_back(outer);
  m.nodes.push_back(add);
  for (int side = 0; side < 2; ++side) {
    Value *x = add->input(side);
    Node *cubic = producedBy(add->input(1 - side), ops::Mul);
    Value *cube = nullptr;
    auto kappa = cubic ? constantOperand(cubic, &cube) : std::nullopt;
    if (!kappa || std::fabs(*kappa - kTanhCubic) > 1e-6 || onlyUser(g, cubic->output(0)) != add)
      continue; // this operand is not 0.044715 * (...)
    m.nodes.push_back(cubic);
    if (matchCube(g, cube, x, m))
      return x;
    return nullptr; // the cubic term is not x^3
  }
  return nullptr;
}

// Matches the pattern around the Erf or Tanh node `core`.
bool matchGelu(const Graph &g, Node *core, GeluMatch &m) {
  bool erf = is(core, ops::Erf), tanh = is(core, ops::Tanh);
  if (!erf && !tanh)
    return false;
  DType t = core->output(0)->dtype();
  if (t != DType::F32 && t != DType::F64)
    return false; // the constants are read as float32 or float64
  // The gate: 1 + core(...).
  Node *gate = onlyUserIs(g, core->output(0), ops::Add);
  Value *coreOut = nullptr;
  auto one = gate ? constantOperand(gate, &coreOut) : std::nullopt;
  if (!one || *one != 1.0 || coreOut != core->output(0))
    return false; // not 1 + erf(...) or 1 + tanh(...)
  GeluMatch arg;
  Value *x = erf ? matchErfArgument(g, core, arg) : matchTanhArgument(g, core, arg);
  if (!x || x->type() != core->output(0)->type())
    return false; // the argument is not x scaled as GELU scales it
  // The product x * gate * 0.5 in one of its associations.
  Value *a = gate->output(0);
  Node *m1 = onlyUserIs(g, a, ops::Mul);
  if (!m1)
    return false; // the gate is not multiplied
  Value *o = otherOperand(m1, a);
  Node *last = nullptr, *half = nullptr;
  if (o == x || isScalar(o, 0.5)) { // (x * g) * 0.5 or (g * 0.5) * x
    Node *m2 = onlyUserIs(g, m1->output(0), ops::Mul);
    Value *o2 = m2 ? otherOperand(m2, m1->output(0)) : nullptr;
    if (!o2 || !(o == x ? isScalar(o2, 0.5) : o2 == x))
      return false; // the second factor is missing
    last = m2;
  } else { // (x * 0.5) * g
    half = producedBy(o, ops::Mul);
    if (!half || onlyUser(g, o) != m1 || otherOperand(half, x) == nullptr ||
        !isScalar(otherOperand(half, x), 0.5))
      return false; // not x * 0.5
    last = m1;
  }
  if (last->output(0)->type() != x->type())
    return false; // a factor broadcasts the result to a larger shape
  m.x = x;
  m.approximate = tanh;
  if (last != m1)
    m.nodes.push_back(last);
  m.nodes.push_back(m1);
  if (half)
    m.nodes.push_back(half);
  m.nodes.push_back(gate);
  m.nodes.push_back(core);
  m.nodes.insert(m.nodes.end(), arg.nodes.begin(), arg.nodes.end());
  return true;
}

class RecognizeGelu : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    if (!ctx.target->hasOp("Gelu") && !ctx.target->hasExtension("ExtGemm"))
      return false; // Gelu would lower to neither: the backend runs the exported arithmetic
    bool changed = false;
    std::set<const Node *> erased; // matched nodes later in this walk's copy of the schedule
    for (Node *n : g.nodes()) {
      GeluMatch m;
      if (erased.count(n) || !matchGelu(g, n, m))
        continue;
      auto gelu = replacePattern(g, m.nodes.front()->output(0), m.nodes, ops::Gelu, {m.x},
                                 {{"approximate", int64_t{m.approximate}}}, "/gelu", erased);
      if (!gelu)
        return gelu.takeStatus();
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRecognizeGelu() { return std::make_unique<RecognizeGelu>(); }

} // namespace odlac
