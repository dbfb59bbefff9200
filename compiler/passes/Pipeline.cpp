// The pass pipeline (STYLE 5): one ordered list; each entry says why it sits where it does.
#include "passes/Pipeline.h"

#include "ir/Printer.h"
#include "passes/Passes.h"

namespace odlac {

const std::vector<PipelineEntry> &pipeline() {
  static const std::vector<PipelineEntry> entries = {
      {"infer-shapes", 1, "checks the imported graph against the op table before any rewrite",
       createInferShapes},
      {"remove-no-ops", 1,
       "drops Identity/Dropout and shape-preserving Reshape/Transpose/Cast first, so that the "
       "patterns below see producers and consumers directly",
       createRemoveNoOps},
      {"fold-quantize-dequantize", 1,
       "before folding, which would compute a QDQ model's dequantized weights: the float ops "
       "between Dequantize and Quantize become integer ops on the quantized data",
       createFoldQuantizeDequantize},
      {"decompose-quantized-products", 0,
       "at every level, for a backend without the integer-only products (its manifest): their "
       "float form, before folding computes its weight arithmetic",
       createDecomposeQuantizedProducts},
      {"fold-constants", 1,
       "computes everything that depends only on weights (shape arithmetic, weight "
       "transposes) before patterns look for constant operands",
       createFoldConstants},
      {"inline-constant-if", 1,
       "once folding has made conditions constant: the taken branch's nodes join the graph, "
       "where the rewrites below can see them",
       createInlineConstantIf},
      {"eliminate-common-subexpressions", 1,
       "merges duplicate nodes and constants that folding and export leave behind",
       createEliminateCommonSubexpressions},
      {"recognize-layer-norm", 2,
       "once folding has made epsilon, the exponent 2 and the shape arithmetic constants, and "
       "before other rewrites change the decomposed form PyTorch exported",
       createRecognizeLayerNorm},
      {"recognize-gelu", 2,
       "like recognize-layer-norm, on the exported form; before fuse-activations, which "
       "folds the Gelu into the product that feeds it",
       createRecognizeGelu},
      {"recognize-attention", 2,
       "on the exported MatMul/Transpose/Softmax form, before transposes move and before "
       "MatMul + Add fusion could claim a product",
       createRecognizeAttention},
      {"sink-transposes", 2,
       "after folding has computed the transposes of weights: those left move through "
       "elementwise ops and cancel in pairs before the patterns below look at producers",
       createSinkTransposes},
      {"fold-batchnorm", 2,
       "needs constant Conv/Gemm weights and BN statistics, which folding has exposed",
       createFoldBatchNorm},
      {"fold-bias-add-into-conv", 2,
       "after BN folding, so a Conv always has its final bias before activations fuse",
       createFoldBiasAddIntoConv},
      {"fuse-matmul-add-into-gemm", 2,
       "turns Linear layers exported as MatMul + Add into one Gemm before activations fuse",
       createFuseMatMulAddIntoGemm},
      {"quantize-static", 0,
       "--quantize=int8 only: once batch normalization and biases have folded into the "
       "products and Linear layers are Gemms (at -O2), the products get their QDQ form from "
       "the calibrated ranges and fold into integer-only products, before activations fuse",
       createQuantizeStatic},
      {"fuse-activations", 2,
       "last of the rewrites around products: biases and Gemms are final, so a residual Add "
       "and an activation can join the product's epilogue",
       createFuseActivations},
      {"matmul-rows-as-conv", 0,
       "--memory=least only: once integer products and their clamps are final, a product by "
       "a constant int8 matrix takes the kernel layout the backend reads in place fastest",
       createMatMulRowsAsConv},
      {"eliminate-common-subexpressions-after-quantize", 1,
       "quantize-static writes each product's zero points and scales as constants of its own: "
       "the equal ones merge, one value fewer each in the backend (RAM on a microcontroller)",
       createEliminateCommonSubexpressions},
      {"assign-layout", 0,
       "after fusion, so that each fused convolution changes layout once; follows the "
       "target's manifest (layout channels_last) at every level, since a backend may run "
       "nothing else (HALO's XNNPACK)",
       createAssignLayout},
      {"sink-transposes-after-layout", 2,
       "cancels the transposes assign-layout put between neighbouring spatial ops, leaving "
       "them at the graph's boundary",
       createSinkTransposes},
      {"dead-code-elimination", 1, "removes what the rewrites above left unused",
       createDeadCodeElimination},
      {"infer-shapes-final", 1, "re-checks every node after all rewrites", createInferShapes},
  };
  return entries;
}

Status checkPassNames(const std::set<std::string> &names) {
  for (const std::string &n : names) {
    if (n == "*")
      continue;
    bool known = false;
    for (const PipelineEntry &e : pipeline())
      known |= n == e.name;
    if (!known) {
      std::string all;
      for (const PipelineEntry &e : pipeline())
        all += (all.empty() ? "" : ", ") + std::string(e.name);
      return Status::error("unknown pass '" + n + "'; passes: " + all);
    }
  }
  return Status::ok();
}

Status runPipeline(Graph &g, const PipelineOptions &opts, const PassContext &ctx) {
  for (const PipelineEntry &e : pipeline()) {
    if (e.level > opts.level || opts.disabled.count(e.name))
      continue;
    auto changed = e.make()->run(g, ctx);
    if (!changed)
      return Status::error("internal: pass " + std::string(e.name) +
                           " failed: " + changed.status().message());
    if (opts.printTo && (opts.printAfter.count("*") || opts.printAfter.count(e.name)))
      *opts.printTo << "// IR after " << e.name << "\n" << printGraph(g);
    // What a pass read of mapped external data leaves memory with it (Buffer::dropPages).
    for (const Value *c : g.constants())
      c->data()->dropPages(c->data()->data, c->data()->size);
  }
  return Status::ok();
}

} // namespace odlac
