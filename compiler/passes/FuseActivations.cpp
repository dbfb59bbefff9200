// FuseActivations: a Conv or a matrix product (Gemm, 2-D MatMul) whose only user is a
// residual Add and/or an activation (directly, or through the Reshape that restores a
// batched product's dims) is computed as one fused op (FusedConv, FusedGemm):
// the addition and activation run while the product is in cache, and no intermediate
// tensor is stored. Activations: Relu, Clamp, Sigmoid, Tanh, LeakyRelu, Gelu, and the
// HardSwish and Swish patterns x * HardSigmoid(x) and x * Sigmoid(x) (the activation table,
// ops/Activation.h, says which op is which activation).
#include "passes/Passes.h"

#include "ops/Activation.h"
#include "passes/PatternMatch.h"

#include <cmath>
#include <set>

namespace odlac {
namespace {

using match::is;
using match::onlyUser;

struct Epilogue {
  Value *residual = nullptr;
  Activation activation = Activation::None;
  double alpha = 0, beta = 0;
  std::vector<Node *> absorbed; // in schedule order; the last one's result is the fused one
};

// Matches the activation that consumes `v`, if any, into `e`.
void matchActivation(const Graph &g, Value *v, Epilogue &e) {
  // x * gate(x): two users, the gate and the Mul.
  if (v->uses().size() == 2 && !g.isGraphOutput(v)) {
    Node *gate = nullptr, *mul = nullptr;
    for (const Use &u : v->uses()) {
      if (is(u.node, ops::Mul))
        mul = u.node;
      else if (is(u.node, ops::Sigmoid) || is(u.node, ops::HardSigmoid))
        gate = u.node;
    }
    if (!gate || !mul || onlyUser(g, gate->output(0)) != mul)
      return;
    bool hard = is(gate, ops::HardSigmoid);
    if (hard &&
        (std::fabs(gate->f("alpha") - 1.0 / 6.0) > 1e-6 || std::fabs(gate->f("beta") - 0.5) > 1e-6))
      return; // not HardSwish's slope and offset
    e.activation = hard ? Activation::HardSwish : Activation::Swish;
    e.absorbed.push_back(gate);
    e.absorbed.push_back(mul);
    return;
  }
  Node *act = onlyUser(g, v);
  if (!act || act->output(0)->type() != v->type())
    return;
  for (const ActivationDef &a : activations()) {
    if (!a.op || a.fused < 0 || !act->is(*a.op))
      continue;
    if (a.id == Activation::Gelu && act->i("approximate") != 0)
      return; // the fused GELU is the erf form
    e.activation = a.id;
    e.alpha = a.alphaAttr ? act->f(a.alphaAttr) : 0;
    e.beta = a.betaAttr ? act->f(a.betaAttr) : 0;
    e.absorbed.push_back(act);
    return;
  }
}

Epilogue matchEpilogue(const Graph &g, Value *product) {
  Epilogue e;
  Value *v = product;
  Node *add = onlyUser(g, product);
  if (is(add, ops::Add)) {
    Value *other = add->input(0) == product ? add->input(1) : add->input(0);
    if (other != product && other->type() == product->type() &&
        add->output(0)->type() == product->type()) {
      e.residual = other;
      e.absorbed.push_back(add);
      v = add->output(0);
    }
  }
  matchActivation(g, v, e);
  return e;
}

class FuseActivations : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    std::set<const Node *> erased; // absorbed nodes later in this walk's copy of the schedule
    for (Node *p : g.nodes()) {
      if (erased.count(p))
        continue;
      bool conv = is(p, ops::Conv), gemm = is(p, ops::Gemm);
      bool matmul =
          is(p, ops::MatMul) && p->input(0)->type().rank() == 2 && p->input(1)->type().rank() == 2;
      if (!conv && !gemm && !matmul)
        continue; // not a product
      if (!isFloat(p->output(0)->dtype()) || p->output(0)->dtype() == DType::BF16)
        continue; // the fused ops compute in float types with native kernels
      // A matrix product on a batched input is viewed as 2-D and reshaped back (as
      // fuse-matmul-add-into-gemm forms it): the epilogue is elementwise, so it fuses through
      // a Reshape that only restores the batch dims; the residual is viewed as 2-D too.
      Node *view = conv ? nullptr : onlyUser(g, p->output(0));
      if (!is(view, ops::Reshape))
        view = nullptr;
      Epilogue e = matchEpilogue(g, view ? view->output(0) : p->output(0));
      if (e.absorbed.empty())
        continue; // nothing to fuse
      Node *last = e.absorbed.back();
      Value *result = last->output(0);
      Value *residual = e.residual;
      if (residual && view) {
        Value *flat = g.addValue(residual->name() + "/as_matrix", {});
        Node *r = g.addNodeBefore(last, ops::Reshape, flat->name(), {residual}, {flat},
                                  {{"shape", p->output(0)->dims()}});
        if (Status s = verifyAndInfer(*r))
          return s;
        residual = flat;
      }
      Value *fused = g.addValue(result->name() + "/fused", {});
      AttrMap attrs = p->attrs();
      std::vector<Value *> operands{p->input(0), p->input(1), p->input(2), residual};
      if (matmul)
        attrs = {{"transA", int64_t{0}}, {"transB", int64_t{0}}, {"alpha", 1.0}, {"beta", 0.0}};
      attrs["activation"] = std::string(activationDef(e.activation).spelling);
      attrs[conv ? "alpha" : "act_alpha"] = e.alpha;
      attrs[conv ? "beta" : "act_beta"] = e.beta;
      Node *f = g.addNodeBefore(last, conv ? ops::FusedConv : ops::FusedGemm, p->name(), operands,
                                {fused}, attrs);
      if (Status s = verifyAndInfer(*f))
        return s;
      if (view) {
        Value *back = g.addValue(result->name() + "/fused_view", {});
        Node *r = g.addNodeBefore(last, ops::Reshape, view->name(), {fused}, {back},
                                  {{"shape", view->output(0)->dims()}});
        if (Status s = verifyAndInfer(*r))
          return s;
        fused = back;
      }
      g.replaceAllUses(result, fused);
      for (auto it = e.absorbed.rbegin(); it != e.absorbed.rend(); ++it) {
        erased.insert(*it);
        g.eraseNode(*it);
      }
      if (view) {
        erased.insert(view);
        g.eraseNode(view);
      }
      g.eraseNode(p);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseActivations() { return std::make_unique<FuseActivations>(); }

} // namespace odlac
