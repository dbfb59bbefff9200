// InlineConstantIf: an If whose condition is a constant always takes the same branch; that
// branch's nodes move into the graph in place of the If (its inputs become the operands
// bound to them), where the passes after this one see them.
#include "passes/Passes.h"

#include "ops/OpDef.h"

#include <cstring>
#include <map>

namespace odlac {
namespace {

class InlineConstantIf : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (std::strcmp(n->op().name, "If") != 0)
        continue;
      const Value *cond = n->input(0);
      if (!cond->isConstant())
        continue; // decided at run time
      bool taken = *cond->data()->as<uint8_t>() != 0;
      size_t thenInputs = n->subgraph("then_branch")->inputs().size();
      std::unique_ptr<Graph> branch = n->takeSubgraph(taken ? "then_branch" : "else_branch");
      std::map<const Value *, Value *> mapped;
      int operand = taken ? 1 : 1 + static_cast<int>(thenInputs);
      for (const Value *in : branch->inputs())
        mapped[in] = n->input(operand++);
      for (Node *b : branch->nodes()) {
        std::vector<Value *> ins, outs;
        for (const Value *in : b->inputs())
          ins.push_back(in ? mapped.at(in) : nullptr);
        for (const Value *out : b->outputs()) {
          outs.push_back(g.addValue(out->name(), out->type()));
          mapped[out] = outs.back();
        }
        Node *copy = g.addNodeBefore(n, b->op(), b->name(), ins, outs, b->attrs());
        for (const auto &[name, body] : b->subgraphs())
          copy->setSubgraph(name, b->takeSubgraph(name));
      }
      for (int i = 0; i < n->numOutputs(); ++i) {
        Value *result = mapped.at(branch->outputs()[static_cast<size_t>(i)]);
        if (g.isGraphOutput(n->output(i)) && (!result->producer() || g.isGraphOutput(result))) {
          // A graph output stays its own node result: copy what the branch passes through.
          Value *copy = g.addValue(n->output(i)->name() + "/taken", result->type());
          g.addNodeBefore(n, opNamed("Identity"), n->name(), {result}, {copy});
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
