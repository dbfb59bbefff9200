// RemoveNoOps: Identity, and Reshape/Transpose/Cast that leave their operand unchanged, pass
// their operand through: their users read the operand directly.
#include "passes/Passes.h"

#include "ops/Ops.h"

namespace odlac {
namespace {

bool isIdentityPermutation(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

// Whether `n` returns its first operand unchanged.
bool isNoOp(const Node &n) {
  const Value *in = n.input(0), *out = n.output(0);
  if (!in || n.numOutputs() != 1 || in->type() != out->type())
    return false; // a changed type or shape is never a no-op
  if (n.is(ops::Identity) || n.is(ops::Reshape) || n.is(ops::Cast))
    return true;
  if (n.is(ops::Transpose))
    return isIdentityPermutation(n.ints("perm"));
  return false;
}

class RemoveNoOps : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (!isNoOp(*n))
        continue;
      Value *in = n->input(0), *out = n->output(0);
      // A graph output must stay the result of its own node: keep the copy when the operand
      // is an input, a constant, or another output.
      if (g.isGraphOutput(out) && (!in->producer() || g.isGraphOutput(in)))
        continue;
      g.replaceAllUses(out, in);
      g.eraseNode(n);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRemoveNoOps() { return std::make_unique<RemoveNoOps>(); }

} // namespace odlac
