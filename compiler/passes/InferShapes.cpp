// InferShapes: re-verifies every node against its op row and re-infers result types, so
// that a rewrite that broke an invariant is caught where it happened.
#include "passes/Passes.h"

#include "ops/OpDef.h"

namespace odlac {
namespace {

class InferShapes : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      std::vector<TensorType> before;
      for (const Value *out : n->outputs())
        before.push_back(out->type());
      if (Status s = verifyAndInfer(*n))
        return Status::error("node '" + n->name() + "': " + s.message());
      for (int i = 0; i < n->numOutputs(); ++i)
        changed |= n->output(i)->type() != before[i];
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createInferShapes() { return std::make_unique<InferShapes>(); }

} // namespace odlac
