// FoldBatchNormIntoConv: an inference BatchNormalization is a per-channel affine map
// y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a. When it is the only
// user of a Conv whose weights and bias are constant, the map is folded into them:
// w'[m] = w[m] * a[m], bias'[m] = bias[m] * a[m] + b[m].
#include "passes/Passes.h"

#include "ops/OpDef.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace odlac {
namespace {

std::vector<double> floats(const Value *v) {
  const float *p = v->data()->as<float>();
  return std::vector<double>(p, p + v->type().numElements());
}

std::shared_ptr<const Buffer> toBuffer(const std::vector<float> &v) {
  return Buffer::copyOf(v.data(), v.size() * sizeof(float));
}

class FoldBatchNormIntoConv : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *bn : g.nodes()) {
      if (std::strcmp(bn->op().name, "BatchNormalization") != 0)
        continue;
      Value *x = bn->input(0);
      Node *conv = x->producer();
      if (!conv || std::strcmp(conv->op().name, "Conv") != 0)
        continue; // not fed by a convolution
      if (x->uses().size() != 1 || g.isGraphOutput(x))
        continue; // the unnormalized convolution result is needed elsewhere
      if (x->dtype() != DType::F32)
        continue; // folding computes in float32
      bool constant = conv->input(1)->isConstant() && (!conv->input(2) || conv->input(2)->isConstant());
      for (int i = 1; i <= 4; ++i)
        constant &= bn->input(i)->isConstant();
      if (!constant)
        continue; // weights or statistics only known at run time
      const Value *w = conv->input(1);
      int64_t m = w->dims()[0], perFilter = w->type().numElements() / m;
      std::vector<double> scale = floats(bn->input(1)), bias = floats(bn->input(2)),
                          mean = floats(bn->input(3)), var = floats(bn->input(4));
      std::vector<double> oldBias(m, 0.0);
      if (conv->input(2))
        oldBias = floats(conv->input(2));
      double eps = bn->f("epsilon");
      std::vector<float> newW(w->type().numElements()), newB(m);
      const float *wp = w->data()->as<float>();
      for (int64_t o = 0; o < m; ++o) {
        double a = scale[o] / std::sqrt(var[o] + eps);
        for (int64_t k = 0; k < perFilter; ++k)
          newW[o * perFilter + k] = static_cast<float>(wp[o * perFilter + k] * a);
        newB[o] = static_cast<float>(oldBias[o] * a + bias[o] - mean[o] * a);
      }
      Value *wc = g.addConstant(w->name() + "/bn_folded", w->type(), toBuffer(newW));
      Value *bc = g.addConstant(conv->output(0)->name() + "/bn_bias", {DType::F32, {m}},
                                toBuffer(newB));
      if (conv->numInputs() < 3)
        return Status::error("Conv row without a bias operand slot");
      conv->setInput(1, wc);
      conv->setInput(2, bc);
      g.replaceAllUses(bn->output(0), x);
      g.eraseNode(bn);
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNormIntoConv() {
  return std::make_unique<FoldBatchNormIntoConv>();
}

} // namespace odlac
