// FoldBatchNorm: an inference BatchNormalization is a per-channel affine map
// y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a. When it is the only
// user of a Conv or Gemm whose weights and bias are constant, the map is folded into them:
// Conv: w'[m] = w[m] * a[m], bias'[m] = bias[m] * a[m] + b[m] (channel m = output filter m);
// Gemm: Y[n, m] = alpha * (A B)[n, m] + beta * C[n, m], channel m = column m, so B's column m
// (row m when transB) is scaled by a[m] and C' = beta * C * a + b, broadcast like C (a
// vector [M] when C is absent or constant along rows), with beta' = 1.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "ops/Ops.h"

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

// Folds `bn` into the Gemm producing its input: returns whether it did.
bool foldIntoGemm(Graph &g, Node *gemm, const std::vector<double> &a,
                  const std::vector<double> &b) {
  const Value *w = gemm->input(1), *c = gemm->input(2);
  if (!w->isConstant() || (c && !c->isConstant()))
    return false; // weights or bias only known at run time
  bool transB = gemm->i("transB") != 0;
  int64_t m = static_cast<int64_t>(a.size()), k = transB ? w->dims()[1] : w->dims()[0];
  int64_t n = gemm->output(0)->dims()[0];
  double beta = gemm->f("beta");
  std::vector<float> newW(w->type().numElements());
  const float *wp = w->data()->as<float>();
  for (int64_t i = 0; i < k; ++i)
    for (int64_t o = 0; o < m; ++o) {
      int64_t at = transB ? o * k + i : i * m + o;
      newW[at] = static_cast<float>(wp[at] * a[o]);
    }
  // C broadcast to [rows, M]: rows is 1 when C is absent or has one row.
  int64_t rows = c && c->type().rank() == 2 && c->dims()[0] != 1 ? n : 1;
  std::vector<float> newC(rows * m);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < m; ++o) {
      double cv = 0;
      if (c) {
        const Dims &cd = c->dims();
        int64_t cr = cd.size() == 2 && cd[0] != 1 ? r : 0;
        int64_t cc = !cd.empty() && cd.back() != 1 ? o : 0;
        cv = c->data()->as<float>()[cr * (cd.size() == 2 ? cd[1] : 1) + cc];
      }
      newC[r * m + o] = static_cast<float>(beta * cv * a[o] + b[o]);
    }
  Value *wc = g.addConstant(w->name() + "/bn_folded", w->type(), toBuffer(newW));
  Dims cDims = rows == 1 ? Dims{m} : Dims{rows, m};
  Value *cc =
      g.addConstant(gemm->output(0)->name() + "/bn_bias", {DType::F32, cDims}, toBuffer(newC));
  gemm->setInput(1, wc);
  gemm->setInput(2, cc);
  gemm->setAttr("beta", 1.0);
  return true;
}

class FoldBatchNorm : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *bn : g.nodes()) {
      if (!bn->is(ops::BatchNormalization))
        continue;
      Value *x = bn->input(0);
      Node *p = x->producer();
      bool conv = p && p->is(ops::Conv);
      bool gemm = p && p->is(ops::Gemm);
      if (!conv && !gemm)
        continue; // not fed by a convolution or a matrix product
      if (isChannelsLast(*bn) || isChannelsLast(*p))
        continue; // folding scales channels along axis 1 and the kernels' rows (OIS)
      if (x->uses().size() != 1 || g.isGraphOutput(x))
        continue; // the unnormalized result is needed elsewhere
      if (x->dtype() != DType::F32)
        continue; // folding computes in float32
      bool constant = true;
      for (int i = 1; i <= 4; ++i)
        constant &= bn->input(i)->isConstant();
      if (!constant)
        continue; // statistics only known at run time
      std::vector<double> scale = floats(bn->input(1)), bias = floats(bn->input(2)),
                          mean = floats(bn->input(3)), var = floats(bn->input(4));
      double eps = bn->f("epsilon");
      std::vector<double> a(scale.size()), b(scale.size());
      for (size_t o = 0; o < scale.size(); ++o) {
        a[o] = scale[o] / std::sqrt(var[o] + eps);
        b[o] = bias[o] - mean[o] * a[o];
      }
      if (gemm) {
        if (p->numInputs() < 3 || !foldIntoGemm(g, p, a, b))
          continue; // weights or bias only known at run time
      } else {
        if (!p->input(1)->isConstant() || (p->input(2) && !p->input(2)->isConstant()))
          continue; // weights or bias only known at run time
        const Value *w = p->input(1);
        // Elements per output channel: every dim but the first (no division: M may be 0).
        int64_t m = w->dims()[0],
                perFilter = *checkedProduct(Dims(w->dims().begin() + 1, w->dims().end()));
        std::vector<double> oldBias(m, 0.0);
        if (p->input(2))
          oldBias = floats(p->input(2));
        std::vector<float> newW(w->type().numElements()), newB(m);
        const float *wp = w->data()->as<float>();
        for (int64_t o = 0; o < m; ++o) {
          for (int64_t k = 0; k < perFilter; ++k)
            newW[o * perFilter + k] = static_cast<float>(wp[o * perFilter + k] * a[o]);
          newB[o] = static_cast<float>(oldBias[o] * a[o] + b[o]);
        }
        Value *wc = g.addConstant(w->name() + "/bn_folded", w->type(), toBuffer(newW));
        Value *bc =
            g.addConstant(p->output(0)->name() + "/bn_bias", {DType::F32, {m}}, toBuffer(newB));
        if (p->numInputs() < 3)
          return Status::error("Conv row without a bias operand slot");
        p->setInput(1, wc);
        p->setInput(2, bc);
      }
      g.replaceAllUses(bn->output(0), x);
      g.eraseNode(bn);
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNorm() { return std::make_unique<FoldBatchNorm>(); }

} // namespace odlac
