// MatMulRowsAsConv: in a least-memory compilation (--memory=least, a microcontroller's), an
// integer-only QLinearMatMul of x [..., K] by a constant int8 matrix w [K, N] is the
// QLinearConv of x's rows, viewed as images of K channels and one pixel, by the 1 x 1 kernel
// w^T [N, K, 1, 1], with the same quantization operands in the same order. Such a product's
// kernel is read where it is (in flash), and rows of K bytes, one per output channel, are what
// the reference backend's int8 dot kernels read fastest: four rows against one staged input
// column, about 1.4 instructions a multiply-add on a Cortex-M4, where a K x N matrix's columns
// must be paired across two of its rows first (about 2). Elsewhere the backend packs the
// kernel once, whatever its layout, and the product stays a MatMul.
#include "passes/Passes.h"

#include "ops/Ops.h"

#include <vector>

namespace odlac {
namespace {

class MatMulRowsAsConv : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    if (!ctx.leastMemory)
      return false; // kernels are packed as the node is built: their layout does not matter
    bool changed = false;
    for (Node *mm : g.nodes()) {
      if (!mm->is(ops::QLinearMatMul))
        continue;
      Value *x = mm->input(0), *w = mm->input(1), *y = mm->output(0);
      if (w->dtype() != DType::I8 || w->type().rank() != 2)
        continue; // not an int8 matrix, which the backend would read in place
      const int64_t k = w->dims()[0], n = w->dims()[1];
      const Dims rows(x->dims().begin(), x->dims().end() - 1); // rank >= 2 (inferQLinearMatMul)
      const int64_t m = *checkedProduct(rows);
      if (m == 0 || k == 0 || n == 0)
        continue; // nothing to multiply
      // The kernel rows: a Transpose of a constant [N, K] (a Gemm's transB weights, which
      // folding has not computed yet) is that constant; a constant [K, N] is transposed here.
      std::shared_ptr<const Buffer> data;
      const Node *t = w->producer();
      if (w->isConstant()) {
        std::vector<int8_t> rowsOf(static_cast<size_t>(k * n));
        const int8_t *src = w->data()->as<int8_t>();
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j)
            rowsOf[j * k + i] = src[i * n + j];
        data = Buffer::copyOf(rowsOf.data(), rowsOf.size());
      } else if (t && t->is(ops::Transpose) && t->input(0)->isConstant() &&
                 t->ints("perm") == std::vector<int64_t>{1, 0}) {
        data = t->input(0)->data();
      } else {
        continue; // a computed kernel is packed as the node is built
      }
      Value *kernel = g.addConstant(w->name() + "/rows", {DType::I8, {n, k, 1, 1}}, data);
      Value *images = g.addValue(x->name() + "/as_images", {});
      Node *in = g.addNodeBefore(mm, ops::Reshape, mm->name() + "/as_images", {x}, {images},
                                 {{"shape", Dims{m, k, 1, 1}}});
      if (Status s = verifyAndInfer(*in))
        return s;
      std::vector<Value *> operands = mm->inputs();
      operands[0] = images;
      operands[1] = kernel;
      Value *pixels = g.addValue(y->name() + "/pixels", {});
      Node *conv = g.addNodeBefore(mm, ops::QLinearConv, mm->name(), operands, {pixels},
                                   {{"group", int64_t{1}},
                                    {"strides", std::vector<int64_t>{1, 1}},
                                    {"dilations", std::vector<int64_t>{1, 1}},
                                    {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                                    {"output_min", mm->i("output_min")},
                                    {"output_max", mm->i("output_max")}});
      if (Status s = verifyAndInfer(*conv))
        return s;
      Value *back = g.addValue(y->name() + "/rows", {});
      Node *out = g.addNodeBefore(mm, ops::Reshape, mm->name() + "/rows", {pixels}, {back},
                                  {{"shape", y->dims()}});
      if (Status s = verifyAndInfer(*out))
        return s;
      g.replaceAllUses(y, back);
      g.eraseNode(mm);
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createMatMulRowsAsConv() { return std::make_unique<MatMulRowsAsConv>(); }

} // namespace odlac
