// DeadCodeElimination: nodes whose results nobody uses, and unused constants, are removed.
#include "passes/Passes.h"

#include "ops/OpDef.h"

namespace odlac {
namespace {

class DeadCodeElimination : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    std::vector<Node *> nodes = g.nodes();
    // Backwards, so that a chain of dead nodes goes in one sweep.
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node *n = *it;
      if (n->op().has(kExternal))
        continue; // the application's kernel may do more than compute its results
      bool used = false;
      for (const Value *out : n->outputs())
        used |= !out->uses().empty() || g.isGraphOutput(out);
      if (used)
        continue;
      g.eraseNode(n);
      changed = true;
    }
    changed |= g.eraseUnusedConstants() > 0;
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createDeadCodeElimination() {
  return std::make_unique<DeadCodeElimination>();
}

} // namespace odlac
