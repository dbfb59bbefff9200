// InlineConstantIf: an If whose condition is a constant always takes the same branch; that
// branch's nodes move into the graph in place of the If (its inputs become the operands
// bound to them), where the passes after this one see them.
#include "passes/Passes.h"

#include "ops/Ops.h"

#include <cstddef>
#include <cstring>

namespace odlac {
namespace {

class InlineConstantIf : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (!n->is(ops::If))
        continue;
      const Value *cond = n->input(0);
      if (!cond->isConstant())
        continue; // decided at run time
      bool taken = *cond->data()->as<uint8_t>() != 0;
      size_t thenInputs = n->subgraph("then_branch")->inputs().size();
      std::unique_ptr<Graph> branch = n->takeSubgraph(taken ? "then_branch" : "else_branch");
      auto first = n->inputs().begin() + (taken ? 1 : 1 + static_cast<std::ptrdiff_t>(thenInputs));
      std::vector<Value *> operands(first,
                                    first + static_cast<std::ptrdiff_t>(branch->inputs().size()));
      std::vector<Value *> results = g.inlineBody(*branch, operands, n);
      for (int i = 0; i < n->numOutputs(); ++i) {
        Value *result = results[static_cast<size_t>(i)];
        if (g.isGraphOutput(n->output(i)) && (!result->producer() || g.isGraphOutput(result))) {
          // A graph output stays its own node result: copy what the branch passes through.
          Value *copy = g.addValue(n->output(i)->name() + "/taken", result->type());
          g.addNodeBefore(n, ops::Identity, n->name(), {result}, {copy});
          result = copy;
        }
        g.replaceAllUses(n->output(i), result);
      }
      g.eraseNode(n);
      changed = true;
    }
    if (changed)
      g.eraseUnusedConstants(); // the conditions
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createInlineConstantIf() { return std::make_unique<InlineConstantIf>(); }

} // namespace odlac
