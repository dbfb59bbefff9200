// FuseActivations: a Conv or a matrix product (Gemm, 2-D MatMul) whose only user is a
// residual Add and/or an activation (directly, or through the Reshape that restores a
// batched product's dims) is computed as one fused op (FusedConv, FusedGemm):
// the addition and activation run while the product is in cache, and no intermediate
// tensor is stored. Activations: Relu, Clamp, Sigmoid, Tanh, LeakyRelu, Gelu, and the
// HardSwish and Swish patterns x * HardSigmoid(x) and x * Sigmoid(x).
#include "passes/Passes.h"

#include "ops/OpDef.h"

#include <cmath>
#include <cstring>
#include <set>

namespace odlac {
namespace {

bool is(const Node *n, const char *op) { return n && !std::strcmp(n->op().name, op); }

// The single user of `v`, or null when it has several or is a graph output.
Node *onlyUser(const Graph &g, const Value *v) {
  if (v->uses().size() != 1 || g.isGraphOutput(v))
    return nullptr;
  return v->uses()[0].node;
}

struct Epilogue {
  Value *residual = nullptr;
  std::string activation = "none";
  double alpha = 0, beta = 0;
  std::vector<Node *> absorbed; // in schedule order; the last one's result is the fused one
};

// Matches the activation that consumes `v`, if any, into `e`.
void matchActivation(const Graph &g, Value *v, Epilogue &e) {
  // x * gate(x): two users, the gate and the Mul.
  if (v->uses().size() == 2 && !g.isGraphOutput(v)) {
    Node *gate = nullptr, *mul = nullptr;
    for (const Use &u : v->uses()) {
      if (is(u.node, "Mul"))
        mul = u.node;
      else if (is(u.node, "Sigmoid") || is(u.node, "HardSigmoid"))
        gate = u.node;
    }
    if (!gate || !mul || onlyUser(g, gate->output(0)) != mul)
      return;
    bool hard = is(gate, "HardSigmoid");
    if (hard && (std::fabs(gate->f("alpha") - 1.0 / 6.0) > 1e-6 || std::fabs(gate->f("beta") - 0.5) > 1e-6))
      return; // not HardSwish's slope and offset
    e.activation = hard ? "hard_swish" : "swish";
    e.absorbed.push_back(gate);
    e.absorbed.push_back(mul);
    return;
  }
  Node *act = onlyUser(g, v);
  if (!act || act->output(0)->type() != v->type())
    return;
  if (is(act, "Relu"))
    e.activation = "relu";
  else if (is(act, "Sigmoid"))
    e.activation = "sigmoid";
  else if (is(act, "Tanh"))
    e.activation = "tanh";
  else if (is(act, "Gelu") && act->i("approximate") == 0)
    e.activation = "gelu";
  else if (is(act, "LeakyRelu")) {
    e.activation = "leaky_relu";
    e.alpha = act->f("alpha");
  } else if (is(act, "Clamp")) {
    e.activation = "clamp";
    e.alpha = act->f("min");
    e.beta = act->f("max");
  } else {
    return;
  }
  e.absorbed.push_back(act);
}

Epilogue matchEpilogue(const Graph &g, Value *product) {
  Epilogue e;
  Value *v = product;
  Node *add = onlyUser(g, product);
  if (is(add, "Add")) {
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
      bool conv = is(p, "Conv"), gemm = is(p, "Gemm");
      bool matmul = is(p, "MatMul") && p->input(0)->type().rank() == 2 &&
                    p->input(1)->type().rank() == 2;
      if (!conv && !gemm && !matmul)
        continue; // not a product
      if (!isFloat(p->output(0)->dtype()) || p->output(0)->dtype() == DType::BF16)
        continue; // the fused ops compute in float types with native kernels
      // A matrix product on a batched input is viewed as 2-D and reshaped back (as
      // fuse-matmul-add-into-gemm forms it): the epilogue is elementwise, so it fuses through
      // a Reshape that only restores the batch dims; the residual is viewed as 2-D too.
      Node *view = conv ? nullptr : onlyUser(g, p->output(0));
      if (!is(view, "Reshape"))
        view = nullptr;
      Epilogue e = matchEpilogue(g, view ? view->output(0) : p->output(0));
      if (e.absorbed.empty())
        continue; // nothing to fuse
      Node *last = e.absorbed.back();
      Value *result = last->output(0);
      Value *residual = e.residual;
      if (residual && view) {
        Value *flat = g.addValue(residual->name() + "/as_matrix", {});
        Node *r = g.addNodeBefore(last, opNamed("Reshape"), flat->name(), {residual}, {flat},
                                  {{"shape", p->output(0)->dims()}});
        if (Status s = verifyAndInfer(*r))
          return s;
        residual = flat;
      }
      Value *fused = g.addValue(result->name() + "/fused", {});
      AttrMap attrs = p->attrs();
      std::vector<Value *> operands{p->input(0), p->input(1), p->input(2), residual};
      const char *op = conv ? "FusedConv" : "FusedGemm";
      if (matmul)
        attrs = {{"transA", int64_t{0}}, {"transB", int64_t{0}}, {"alpha", 1.0}, {"beta", 0.0}};
      attrs["activation"] = e.activation;
      attrs[conv ? "alpha" : "act_alpha"] = e.alpha;
      attrs[conv ? "beta" : "act_beta"] = e.beta;
      Node *f = g.addNodeBefore(last, opNamed(op), p->name(), operands, {fused}, attrs);
      if (Status s = verifyAndInfer(*f))
        return s;
      if (view) {
        Value *back = g.addValue(result->name() + "/fused_view", {});
        Node *r = g.addNodeBefore(last, opNamed("Reshape"), view->name(), {fused}, {back},
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
