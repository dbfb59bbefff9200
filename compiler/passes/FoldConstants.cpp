// FoldConstants: a node whose operands are all constants is computed at compile time, with
// the reference backend's kernels (the same ODLA calls the generated code would make), and
// its results become constants. Shape arithmetic (Shape -> Gather -> Concat -> Reshape
// chains) folds away this way, since import turns Shape into a constant.
#include "passes/Passes.h"

#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <algorithm>

namespace odlac {
namespace {

// Folding must not turn a small expression into a large constant (Expand of a scalar to a
// big tensor): the result may be at most this size or as large as its operands.
constexpr uint64_t kMaxGrowthBytes = 64 * 1024;

class FoldConstants : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op().has(kExternal))
        continue; // its kernel is the application's, not odlac's to run
      uint64_t inBytes = 0, outBytes = 0;
      bool allConstant = n->numInputs() > 0;
      for (const Value *in : n->inputs()) {
        allConstant &= !in || in->isConstant();
        inBytes += in ? in->type().byteSize() : 0;
      }
      if (!allConstant)
        continue; // depends on a graph input or a computed value
      if (!isComputableFromConstants(*n->output(0)))
        continue; // a loop too long to run at compile time (evaluate/Evaluate.h)
      bool feedsOutput = false;
      for (const Value *out : n->outputs()) {
        outBytes += out->type().byteSize();
        feedsOutput |= g.isGraphOutput(out);
      }
      if (feedsOutput)
        continue; // graph outputs stay node results, bound to the caller's buffers
      if (std::any_of(n->outputs().begin(), n->outputs().end(),
                      [&](const Value *out) { return out && ctx.keepComputed.count(out->name()); }))
        continue; // --dim: its data depends on a symbolic dim
      if (outBytes > std::max(inBytes, kMaxGrowthBytes))
        continue; // would grow the weights
      std::vector<std::shared_ptr<const Buffer>> results;
      for (const Value *out : n->outputs()) {
        auto data = evaluateValue(*out);
        if (!data)
          return Status::error("constant folding of " + std::string(n->op().name) + " '" +
                               out->name() + "': " + data.status().message());
        results.push_back(*data);
      }
      std::vector<Value *> outs = n->outputs();
      for (size_t i = 0; i < outs.size(); ++i)
        g.replaceWithConstant(outs[i], results[i]);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldConstants() { return std::make_unique<FoldConstants>(); }

} // namespace odlac
