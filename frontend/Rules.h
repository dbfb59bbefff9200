// ONNX → IR import rules (DESIGN §4, STYLE 2): data rows, one per ONNX op and opset range.
// A row either maps an ONNX op 1:1 onto an IR op, renaming attributes and supplying ONNX's
// defaults, or names a function that decomposes it into IR ops.
#pragma once

#include "ImportContext.h"
#include "ir/Attr.h"

#include <optional>
#include <string>
#include <vector>

namespace odlac {

using ImportFn = Status (*)(ImportCtx &);

struct AttrRule {
  const char *onnxName;
  const char *irName; // nullptr: a legacy attribute that has no effect and is dropped
  std::optional<AttrValue> dflt; // ONNX's default; none means required (or irrelevant if dropped)
};

struct ImportRule {
  const char *onnxOp;
  int sinceOpset;            // applies from this opset up to the op's next row
  const char *irOp;          // for 1:1 rows: the IR op
  std::vector<AttrRule> attrs; // for 1:1 rows: every attribute the ONNX op has at this opset
  ImportFn custom;           // for rows that decompose (irOp is then nullptr)
};

// Row families, one file each under frontend/rules/.
const std::vector<ImportRule> &elementwiseRules();  // unary math, activations
const std::vector<ImportRule> &binaryRules();       // broadcasting arithmetic, logic
const std::vector<ImportRule> &nnRules();           // conv, pooling, matrix products
const std::vector<ImportRule> &reduceRules();       // reductions, softmax family
const std::vector<ImportRule> &dataMovementRules(); // reshape, slice, pad...
const std::vector<ImportRule> &indexingRules();     // gather, scatter, top-k...
const std::vector<ImportRule> &normalizationRules(); // layer/instance norm, losses
const std::vector<ImportRule> &recurrentRules();    // RNN, LSTM, GRU
const std::vector<ImportRule> &quantRules();        // quantization
const std::vector<ImportRule> &miscRules();         // signal, detection, training
const std::vector<ImportRule> &controlFlowRules();  // If, Loop, Scan

// The row for an op at a model's opset; nullptr when odlac has none. `earliest` is set to the
// first opset any row of that op covers (for the message when the model's opset is older).
const ImportRule *findRule(const std::string &onnxOp, int64_t opset, int *earliest = nullptr);

// Imports a node through a 1:1 row.
Status importDirect(ImportCtx &ctx, const ImportRule &rule);

// Imports a node of a --custom-op-domain domain as a CustomOp (rules/Custom.cpp).
Status importCustomOp(ImportCtx &ctx);

} // namespace odlac
