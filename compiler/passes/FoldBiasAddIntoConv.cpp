// FoldBiasAddIntoConv: adding a per-output-channel constant to a Conv's result is adding it
// to the Conv's bias.
#include "passes/Passes.h"

#include "ops/Ops.h"

#include <cstring>
#include <vector>

namespace odlac {
namespace {

class FoldBiasAddIntoConv : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *add : g.nodes()) {
      if (!add->is(ops::Add))
        continue;
      int side = -1;
      for (int i = 0; i < 2 && side < 0; ++i)
        if (add->input(i)->producer() && add->input(i)->producer()->is(ops::Conv))
          side = i;
      if (side < 0)
        continue; // not adding to a convolution
      Value *y = add->input(side), *c = add->input(1 - side);
      Node *conv = y->producer();
      if (!c->isConstant() || y->dtype() != DType::F32)
        continue; // only constants fold into the bias; folding computes in float32
      if (y->uses().size() != 1 || g.isGraphOutput(y))
        continue; // the Conv result without the addend is needed elsewhere
      if (conv->input(2) && !conv->input(2)->isConstant())
        continue; // a computed bias
      int64_t m = y->dims()[1];
      // The addend, aligned to the right, must span axis 1 and vary along it only.
      const Dims &cd = c->dims();
      size_t rank = y->dims().size(), r = cd.size();
      bool perChannel = r + 1 >= rank && r <= rank && c->type().numElements() == m;
      for (size_t j = 0; perChannel && j < r; ++j)
        perChannel = (j + rank - r == 1) ? cd[j] == m : cd[j] == 1;
      if (!perChannel)
        continue; // not a per-channel bias
      std::vector<float> bias(m, 0.0f);
      if (conv->input(2))
        bias.assign(conv->input(2)->data()->as<float>(), conv->input(2)->data()->as<float>() + m);
      for (int64_t i = 0; i < m; ++i)
        bias[i] += c->data()->as<float>()[i];
      Value *b = g.addConstant(y->name() + "/bias", {DType::F32, {m}},
                               Buffer::copyOf(bias.data(), bias.size() * sizeof(float)));
      conv->setInput(2, b);
      g.replaceAllUses(add->output(0), y);
      g.eraseNode(add);
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBiasAddIntoConv() {
  return std::make_unique<FoldBiasAddIntoConv>();
}

} // namespace odlac
