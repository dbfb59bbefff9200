// The op families whose rows the registry collects; each lives in its own file.
#pragma once

#include "ops/OpDef.h"

#include <vector>

namespace odlac {

const std::vector<OpDef> &elementwiseOps();  // Elementwise.cpp: unary math, activations
const std::vector<OpDef> &binaryOps();       // Binary.cpp: broadcasting arithmetic, logic
const std::vector<OpDef> &nnOps();           // Nn.cpp: conv, pooling, matrix products
const std::vector<OpDef> &reduceOps();       // Reduce.cpp: reductions, softmax family
const std::vector<OpDef> &dataMovementOps(); // DataMovement.cpp: reshape, slice, pad...
const std::vector<OpDef> &indexingOps();     // Indexing.cpp: gather, scatter, top-k...
const std::vector<OpDef> &normalizationOps(); // Normalization.cpp: layer/instance norm, losses
const std::vector<OpDef> &recurrentOps();    // Recurrent.cpp: RNN, LSTM, GRU
const std::vector<OpDef> &quantOps();        // Quant.cpp: quantization
const std::vector<OpDef> &miscOps();         // Misc.cpp: signal, detection, training
const std::vector<OpDef> &fusedOps();        // Fused.cpp: ops the optimizer forms
const std::vector<OpDef> &transformerOps();  // Transformer.cpp: layer norm, attention
const std::vector<OpDef> &controlFlowOps();  // ControlFlow.cpp: If, Loop (bodies as subgraphs)
const std::vector<OpDef> &customOps();       // Custom.cpp: kernels registered by the application
const std::vector<OpDef> &textOps();         // Text.cpp: string tensors, LabelEncoder
const std::vector<OpDef> &treeOps();         // Tree.cpp: ai.onnx.ml's tree ensembles

} // namespace odlac
