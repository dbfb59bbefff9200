// FuseMatMulAddIntoGemm: MatMul(A, B) followed by Add(·, C) is a Gemm with beta = 1, which
// adds C while the product is still in cache. Batched products (PyTorch's Linear on 3-D
// input) qualify when B is a matrix: A is viewed as a matrix [prod(batch) * M, K] and the
// result reshaped back; reshapes move no data once memory planning aliases them.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "passes/PatternMatch.h"

namespace odlac {
namespace {

using match::is;

class FuseMatMulAddIntoGemm : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    for (Node *add : g.nodes()) {
      if (!is(add, ops::Add))
        continue;
      int side = is(add->input(0)->producer(), ops::MatMul)   ? 0
                 : is(add->input(1)->producer(), ops::MatMul) ? 1
                                                              : -1;
      if (side < 0)
        continue; // no product to fuse into
      Value *prod = add->input(side), *c = add->input(1 - side);
      Node *mm = prod->producer();
      if (prod->uses().size() != 1 || g.isGraphOutput(prod))
        continue; // the product without C is needed elsewhere
      Value *a = mm->input(0), *b = mm->input(1);
      if (b->type().rank() != 2 || a->type().rank() < 2 || a->dtype() != DType::F32)
        continue; // Gemm needs a matrix B; it computes in float32 here
      int64_t k = b->dims()[0], n = b->dims()[1];
      // The rows of A's matrix view: every dim but the last (no division: K may be 0).
      int64_t rows = *checkedProduct(Dims(a->dims().begin(), a->dims().end() - 1));
      if (add->output(0)->dims() != prod->dims())
        continue; // C broadcasts the sum to a larger shape
      auto cb = broadcastDims(c->dims(), {rows, n});
      if (c->type().rank() > 2 || !cb || *cb != Dims{rows, n})
        continue; // C does not broadcast onto the matrix view
      Value *a2 = a;
      if (a->type().rank() != 2) {
        a2 = g.addValue(a->name() + "/rows", {});
        Node *r = g.addNodeBefore(add, ops::Reshape, mm->name() + "/rows", {a}, {a2},
                                  {{"shape", Dims{rows, k}}});
        if (Status s = verifyAndInfer(*r))
          return s;
      }
      Value *y = g.addValue(add->output(0)->name() + "/gemm", {});
      Node *gemm = g.addNodeBefore(
          add, ops::Gemm, add->name(), {a2, b, c}, {y},
          {{"transA", int64_t{0}}, {"transB", int64_t{0}}, {"alpha", 1.0}, {"beta", 1.0}});
      if (Status s = verifyAndInfer(*gemm))
        return s;
      Value *result = y;
      if (a->type().rank() != 2) {
        result = g.addValue(add->output(0)->name() + "/unrows", {});
        Node *r = g.addNodeBefore(add, ops::Reshape, add->name() + "/unrows", {y}, {result},
                                  {{"shape", add->output(0)->dims()}});
        if (Status s = verifyAndInfer(*r))
          return s;
      }
      g.replaceAllUses(add->output(0), result);
      g.eraseNode(add);
      g.eraseNode(mm);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseMatMulAddIntoGemm() {
  return std::make_unique<FuseMatMulAddIntoGemm>();
}

} // namespace odlac
