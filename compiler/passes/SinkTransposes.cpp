// SinkTransposes: a Transpose copies its whole operand, so two in a row are one (or none),
// and one that moves only size-1 axes is a Reshape, which moves no data. Transposes move
// toward the graph's outputs through ops that do not care about axis order: elementwise ops,
// broadcasting ops whose other operands are transposed the same way or are constants
// (permuted at compile time), and Resize to a fixed shape, which interpolates each axis on
// its own (its shape is permuted), until they meet another Transpose and cancel, reach an
// op that needs its axes in order, or reach the graph's boundary. A Transpose of a constant is
// computed at compile time with the reference kernels, as FoldConstants does. Last, a
// Transpose that moves only size-1 axes becomes a Reshape and a Reshape of a Reshape one
// Reshape. AssignLayout relies on this pass to cancel the transposes it puts around each
// spatial op.
#include "passes/Passes.h"

#include "evaluate/Evaluate.h"
#include "ops/InferUtil.h"
#include "passes/PatternMatch.h"

namespace odlac {
namespace {

using match::is;
using Perm = std::vector<int64_t>;

bool isIdentity(const Perm &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

Perm inverse(const Perm &p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

// Whether every use of `v` is an operand of `n` (and `v` is not a graph output).
bool onlyFeeds(const Graph &g, const Value *v, const Node *n) {
  if (g.isGraphOutput(v))
    return false;
  for (const Use &u : v->uses())
    if (u.node != n)
      return false;
  return true;
}

// The Transpose producing `v` when `v` is used by `n` alone, else null.
Node *soleTranspose(const Graph &g, const Value *v, const Node *n) {
  Node *t = v ? v->producer() : nullptr;
  return is(t, ops::Transpose) && onlyFeeds(g, v, n) ? t : nullptr;
}

// Whether the Transpose `n` keeps the order of the axes longer than 1: then it is a Reshape.
bool movesOnlyUnitAxes(const Node &n) {
  const Dims &in = n.input(0)->dims();
  int64_t last = -1;
  for (int64_t p : n.ints("perm")) {
    if (in[p] == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

// Erases `n` when nothing reads its results any more.
void eraseIfUnused(Graph &g, Node *n) {
  for (const Value *out : n->outputs())
    if (!out->uses().empty() || g.isGraphOutput(out))
      return;
  g.eraseNode(n);
}

// Lets the users of `n`'s result read its operand instead (the node returns its operand
// unchanged). A graph output stays a node result: returns false when that forbids it.
bool bypass(Graph &g, Node *n) {
  Value *in = n->input(0), *out = n->output(0);
  if (g.isGraphOutput(out) && (!in->producer() || g.isGraphOutput(in)))
    return false;
  g.replaceAllUses(out, in);
  g.eraseNode(n);
  return true;
}

// The constant `c`, viewed with rank `rank` (leading 1s) and transposed by `perm`, computed
// now on the reference kernels.
Expected<Value *> permutedConstant(Graph &g, Node *pos, Value *c, size_t rank, const Perm &perm) {
  Dims dims(rank - c->type().rank(), 1);
  dims.insert(dims.end(), c->dims().begin(), c->dims().end());
  Value *full = c;
  if (dims != c->dims())
    full = g.addConstant(c->name() + "/rank" + std::to_string(rank), {c->dtype(), dims}, c->data());
  Value *t = g.addValue(c->name() + "/perm", {});
  Node *tn = g.addNodeBefore(pos, ops::Transpose, t->name(), {full}, {t}, {{"perm", perm}});
  if (Status s = verifyAndInfer(*tn))
    return s;
  auto data = evaluateValue(*t);
  if (!data)
    return data.status();
  return g.replaceWithConstant(t, *data);
}

class SinkTransposes : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      // Each rewrite erases only the visited node and nodes before it in the schedule.
      for (Node *n : g.nodes()) {
        auto done = is(n, ops::Transpose) ? cancel(g, n)
                    : is(n, ops::Resize)  ? sinkThroughResize(g, n)
                                          : sinkThrough(g, n);
        if (!done)
          return done.status();
        again |= *done;
      }
      changed |= again;
    }
    for (Node *n : g.nodes()) {
      auto done = is(n, ops::Transpose) ? toReshape(g, n)
                  : is(n, ops::Reshape) ? mergeReshapes(g, n)
                                        : false;
      if (!done)
        return done.status();
      changed |= *done;
    }
    changed |= g.eraseUnusedConstants() > 0; // constants only the old transposes read
    return changed;
  }

private:
  // Transpose(constant) is folded; Transpose(Transpose(x)) is one Transpose of x, or x.
  Expected<bool> cancel(Graph &g, Node *n) {
    Value *in = n->input(0);
    if (in->isConstant()) {
      if (g.isGraphOutput(n->output(0)))
        return false; // a graph output stays the result of a node
      auto data = evaluateValue(*n->output(0));
      if (!data)
        return data.status();
      g.replaceWithConstant(n->output(0), *data);
      return true;
    }
    Node *inner = in->producer();
    if (is(inner, ops::Transpose)) {
      const Perm &p = inner->ints("perm"), &q = n->ints("perm");
      Perm composed(q.size());
      for (size_t i = 0; i < q.size(); ++i)
        composed[i] = p[q[i]];
      n->setInput(0, inner->input(0));
      n->setAttr("perm", composed);
      eraseIfUnused(g, inner);
      if (isIdentity(composed))
        bypass(g, n);
      return true;
    }
    if (isIdentity(n->ints("perm")))
      return bypass(g, n);
    return false; // nothing to cancel with
  }

  // op(Transpose(x), ...) becomes Transpose(op(x, ...)) for ops that do not care about axis
  // order; the other operands must be transposed the same way, constants, or single values.
  Expected<bool> sinkThrough(Graph &g, Node *n) {
    const OpDef &op = n->op();
    if (!op.has(kLayoutAgnostic) ||
        (op.fusion != FusionClass::Elementwise && op.fusion != FusionClass::Broadcast))
      return false; // the op reads axes by position
    if (n->numOutputs() != 1)
      return false; // one result to transpose back
    Node *first = nullptr;
    for (Value *in : n->inputs())
      if (!first)
        first = soleTranspose(g, in, n);
    if (!first)
      return false; // no operand is a transpose read only here
    const Perm &perm = first->ints("perm");
    Value *out = n->output(0);
    if (out->dims() != first->output(0)->dims())
      return false; // another operand broadcasts the result to a larger shape
    std::vector<Value *> inputs = n->inputs();
    std::vector<Node *> transposes;
    for (Value *&in : inputs) {
      if (!in || in->type().numElements() == 1)
        continue; // absent, or the same in any axis order
      if (Node *t = soleTranspose(g, in, n); t && t->ints("perm") == perm) {
        transposes.push_back(t);
        in = t->input(0);
        continue;
      }
      if (!in->isConstant())
        return false; // a computed operand in the result's own axis order
    }
    for (Value *&in : inputs) {
      if (!in || !in->isConstant() || in->type().numElements() == 1)
        continue;
      auto permuted = permutedConstant(g, n, in, perm.size(), inverse(perm));
      if (!permuted)
        return permuted.status();
      in = *permuted;
    }
    Value *moved = g.addValue(out->name() + "/sunk", {});
    Node *m = g.addNodeBefore(n, op, n->name(), inputs, {moved}, n->attrs());
    if (Status s = verifyAndInfer(*m))
      return s;
    Value *result = g.addValue(out->name() + "/perm", {});
    Node *t =
        g.addNodeBefore(n, ops::Transpose, first->name(), {moved}, {result}, {{"perm", perm}});
    if (Status s = verifyAndInfer(*t))
      return s;
    g.replaceAllUses(out, result);
    g.eraseNode(n);
    for (Node *old : transposes)
      eraseIfUnused(g, old);
    return true;
  }

  // Resize(Transpose(x)) to a fixed shape is Transpose(Resize(x)) to the permuted shape.
  Expected<bool> sinkThroughResize(Graph &g, Node *n) {
    Node *t = soleTranspose(g, n->input(0), n);
    if (!t)
      return false; // no transpose read only here
    for (int i = 1; i < n->numInputs(); ++i)
      if (n->input(i))
        return false; // roi, scales or sizes operands are listed by axis
    const Perm &perm = t->ints("perm");
    const std::vector<int64_t> &shape = n->ints("shape");
    std::vector<int64_t> unpermuted(shape.size());
    for (size_t i = 0; i < perm.size(); ++i)
      unpermuted[perm[i]] = shape[i];
    AttrMap attrs = n->attrs();
    attrs["shape"] = unpermuted;
    Value *out = n->output(0);
    Value *moved = g.addValue(out->name() + "/sunk", {});
    Node *m = g.addNodeBefore(n, n->op(), n->name(), {t->input(0)}, {moved}, attrs);
    if (Status s = verifyAndInfer(*m))
      return s;
    Value *result = g.addValue(out->name() + "/perm", {});
    Node *back = g.addNodeBefore(n, ops::Transpose, t->name(), {moved}, {result}, {{"perm", perm}});
    if (Status s = verifyAndInfer(*back))
      return s;
    g.replaceAllUses(out, result);
    g.eraseNode(n);
    eraseIfUnused(g, t);
    return true;
  }

  // A Transpose that keeps the order of all axes longer than 1 is a Reshape.
  Expected<bool> toReshape(Graph &g, Node *n) {
    if (!movesOnlyUnitAxes(*n))
      return false; // it moves data
    Value *out = n->output(0);
    Value *r = g.addValue(out->name() + "/reshape", {});
    Node *m =
        g.addNodeBefore(n, ops::Reshape, n->name(), {n->input(0)}, {r}, {{"shape", out->dims()}});
    if (Status s = verifyAndInfer(*m))
      return s;
    g.replaceAllUses(out, r);
    g.eraseNode(n);
    return true;
  }

  // Reshape(Reshape(x)) is Reshape(x); a Reshape to the operand's own shape is nothing.
  Expected<bool> mergeReshapes(Graph &g, Node *n) {
    Node *inner = n->input(0)->producer();
    bool merged = false;
    if (is(inner, ops::Reshape)) {
      n->setInput(0, inner->input(0));
      eraseIfUnused(g, inner);
      merged = true;
    }
    if (n->input(0)->type() == n->output(0)->type())
      return bypass(g, n) || merged;
    return merged;
  }
};

} // namespace

std::unique_ptr<Pass> createSinkTransposes() { return std::make_unique<SinkTransposes>(); }

} // namespace odlac
