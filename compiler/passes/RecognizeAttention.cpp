// RecognizeAttention: scaled dot-product attention as exported by PyTorch,
//   scores = MatMul(q, Transpose(k')) [/ c or * c] [+ mask, or masked_fill's Select]
//   y = MatMul(Softmax(scores, last axis), v)
// becomes one Attention op. The decomposed form stores the [..., Sq, Sk] scores four times
// (product, scaled, masked, probabilities); odla_ExtAttention computes them a few query rows
// at a time and stores none whole (ops/Transformer.cpp). The Transpose of the keys is replaced
// by one to [..., Sk, D] (none when that is k' itself): the op takes keys row by row.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "passes/PatternMatch.h"

#include <set>

namespace odlac {
namespace {

using namespace match;

struct AttentionMatch {
  Value *q = nullptr, *keySource = nullptr, *v = nullptr, *mask = nullptr;
  // A mask as PyTorch's masked_fill exports it, Select(cond, fill, scores) or
  // Select(cond, scores, fill) with a one-element constant fill: the op's additive mask is
  // then Select(cond, fill, 0) or Select(cond, 0, fill), computed where the Select was.
  Value *maskCond = nullptr, *fill = nullptr;
  bool fillWhere = true;        // the fill applies where cond holds
  std::vector<int64_t> keyPerm; // Transpose(keySource, keyPerm) gives the keys [..., Sk, D]
  double scale = 1.0;
  std::vector<Node *> nodes; // consumers before producers
};

bool isIdentity(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

// Whether `v` is [scale *] MatMul(q, Transpose(...)) read only by the pattern; fills q, the
// keys and the scale.
bool matchScores(const Graph &g, Value *v, AttentionMatch &m) {
  if (Node *n = v->producer(); is(n, ops::Div) || is(n, ops::Mul)) {
    Value *product = nullptr;
    auto c = constantOperand(n, &product);
    if (!c || *c == 0 || (is(n, ops::Div) && n->input(0) != product) || onlyUser(g, v) == nullptr)
      return false; // not scores scaled by a one-element constant
    m.scale = is(n, ops::Div) ? 1.0 / *c : *c;
    m.nodes.push_back(n);
    v = product;
  }
  Node *mm = producedBy(v, ops::MatMul);
  if (!mm || !onlyUser(g, v))
    return false; // not a product, or the product is needed elsewhere
  Node *kt = producedBy(mm->input(1), ops::Transpose);
  if (!kt)
    return false; // the keys are not transposed in the graph
  m.q = mm->input(0);
  m.keySource = kt->input(0);
  m.keyPerm = kt->ints("perm");
  std::swap(m.keyPerm[m.keyPerm.size() - 2], m.keyPerm.back());
  m.nodes.push_back(mm);
  if (onlyUser(g, kt->output(0)) == mm)
    m.nodes.push_back(kt);
  return true;
}

bool matchAttention(const Graph &g, Node *softmax, AttentionMatch &m) {
  if (!is(softmax, ops::Softmax))
    return false;
  Value *p = softmax->output(0);
  int64_t rank = p->type().rank();
  if (softmax->i("axis") != rank - 1 || rank < 2)
    return false; // attention normalizes each query's scores along the keys
  if (p->dtype() != DType::F32 && p->dtype() != DType::F64)
    return false; // the types odla_ExtAttention and the scale constant support
  Node *out = onlyUserIs(g, p, ops::MatMul);
  if (!out || out->input(0) != p)
    return false; // the probabilities are not applied to values
  m.v = out->input(1);
  m.nodes.push_back(out);
  m.nodes.push_back(softmax);
  Value *s = softmax->input(0);
  Node *add = producedBy(s, ops::Add);
  if (add && onlyUser(g, s) == softmax) {
    for (int side = 0; side < 2; ++side) {
      AttentionMatch scores = m;
      scores.nodes.push_back(add);
      if (!matchScores(g, add->input(side), scores))
        continue;
      scores.mask = add->input(1 - side);
      m = scores;
      break;
    }
    if (!m.mask)
      return false; // neither side of the Add is the scores
  } else if (Node *sel = producedBy(s, ops::Select); sel && onlyUser(g, s) == softmax) {
    for (int side = 1; side <= 2; ++side) {
      Value *fill = sel->input(3 - side);
      if (!fill->isConstant() || fill->type().numElements() != 1 || fill->dtype() != p->dtype())
        continue;
      AttentionMatch scores = m;
      scores.nodes.push_back(sel);
      if (!matchScores(g, sel->input(side), scores))
        continue;
      scores.maskCond = sel->input(0);
      scores.fill = fill;
      scores.fillWhere = side == 2;
      m = scores;
      break;
    }
    if (!m.maskCond)
      return false; // neither branch of the Select is the scores, the other a fill
  } else if (!matchScores(g, s, m)) {
    return false; // the Softmax's operand is not scores
  }
  // Shapes: q, keys and v of one rank with the same leading dims; the mask broadcasts onto
  // the scores without enlarging them.
  const Dims &q = m.q->dims(), &v = m.v->dims(), &ks = m.keySource->dims();
  if (m.keyPerm.size() != q.size() || v.size() != q.size() || m.q->dtype() != p->dtype())
    return false;
  Dims k = permuteDims(ks, m.keyPerm);
  Dims scores(q.begin(), q.end() - 1);
  scores.push_back(k[k.size() - 2]);
  if (!std::equal(q.begin(), q.end() - 2, k.begin()) ||
      !std::equal(q.begin(), q.end() - 2, v.begin()))
    return false; // the product broadcasts batch dims
  if (m.mask) {
    auto b = broadcastDims(m.mask->dims(), scores);
    if (!b || *b != scores || m.mask->dtype() != p->dtype())
      return false; // the mask enlarges the scores
  }
  if (m.maskCond) {
    auto b = broadcastDims(m.maskCond->dims(), scores);
    if (!b || *b != scores)
      return false; // the condition enlarges the scores
  }
  return true;
}

class RecognizeAttention : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    std::set<const Node *> erased; // matched nodes later in this walk's copy of the schedule
    for (Node *n : g.nodes()) {
      AttentionMatch m;
      if (erased.count(n) || !matchAttention(g, n, m))
        continue;
      Node *last = m.nodes.front();
      Value *result = last->output(0);
      DType t = result->dtype();
      Value *keys = m.keySource;
      if (!isIdentity(m.keyPerm)) {
        keys = g.addValue(result->name() + "/keys", {});
        Node *tr = g.addNodeBefore(last, ops::Transpose, last->name() + "/keys", {m.keySource},
                                   {keys}, {{"perm", m.keyPerm}});
        if (Status s = verifyAndInfer(*tr))
          return s;
      }
      float scale32 = static_cast<float>(m.scale);
      std::shared_ptr<const Buffer> bytes = t == DType::F64
                                                ? Buffer::copyOf(&m.scale, sizeof m.scale)
                                                : Buffer::copyOf(&scale32, sizeof scale32);
      Value *scale = g.addConstant(result->name() + "/scale", TensorType{t, {}}, bytes);
      std::vector<Value *> operands{m.q, keys, m.v, scale};
      if (m.maskCond) { // masked_fill's Select, made an additive mask
        std::vector<unsigned char> zeroBytes(dtypeBytes(t), 0);
        Value *zero = g.addConstant(result->name() + "/unmasked", TensorType{t, {}},
                                    Buffer::copyOf(zeroBytes.data(), zeroBytes.size()));
        m.mask = g.addValue(result->name() + "/mask", {});
        Node *sel = g.addNodeBefore(
            last, ops::Select, last->name() + "/mask",
            {m.maskCond, m.fillWhere ? m.fill : zero, m.fillWhere ? zero : m.fill}, {m.mask});
        if (Status s = verifyAndInfer(*sel))
          return s;
      }
      if (m.mask)
        operands.push_back(m.mask);
      auto att =
          replacePattern(g, result, m.nodes, ops::Attention, operands, {}, "/attention", erased);
      if (!att)
        return att.takeStatus();
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRecognizeAttention() { return std::make_unique<RecognizeAttention>(); }

} // namespace odlac
