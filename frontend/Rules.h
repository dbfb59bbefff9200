// ONNX → IR import rules (DESIGN §4, STYLE 2): data rows, one per ONNX op and opset range.
// A row either maps an ONNX op 1:1 onto an IR op, renaming attributes and supplying ONNX's
// defaults, names a function that decomposes it into IR ops, or rejects the op with a reason.
//
// No attribute is ever ignored silently. Every row lists every attribute its ONNX op has in the
// row's opset range (tests/unit/SchemaCoverageTest.cpp checks the lists against ONNX 1.23's
// schemas), and importNode() refuses a node that carries an attribute its row does not list,
// or one that the row's function never looked at: a rule either uses an attribute, checks it
// against the values it supports, or says why it cannot change the result.
#pragma once

#include "ImportContext.h"
#include "ir/Attr.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace odlac {

using ImportFn = Status (*)(ImportCtx &);

// One attribute of a row's ONNX op.
struct AttrRule {
  const char *onnxName;
  // 1:1 rows: the IR attribute it becomes. nullptr in rows with a function, which reads the
  // attribute itself, and for an attribute with no effect.
  const char *irName = nullptr;
  std::optional<AttrValue> dflt = std::nullopt; // 1:1 rows: ONNX's default; none: required
  // Why the attribute cannot change the result (a legacy hint, a seed of a draw that never
  // happens...): it is skipped. nullptr: the rule uses it.
  const char *noEffect = nullptr;
};

// For rows with a function: the attributes it reads, then any with no effect.
std::vector<AttrRule> reads(std::initializer_list<const char *> names,
                            std::initializer_list<AttrRule> more = {});
inline AttrRule noEffect(const char *onnxName, const char *why) {
  return {onnxName, nullptr, std::nullopt, why};
}

struct ImportRule {
  const char *onnxOp;
  int sinceOpset;              // applies from this opset up to the op's next row
  const char *irOp;            // for 1:1 rows: the IR op
  std::vector<AttrRule> attrs; // every attribute the ONNX op has in this opset range
  ImportFn custom;             // for rows that decompose (irOp is then nullptr)
  // For rows that reject the op: why odlac cannot compile it (irOp and custom are nullptr).
  const char *unsupported = nullptr;
  // The op's ONNX domain; "" is the default domain (also written "ai.onnx").
  const char *domain = "";
  // Whether its function takes sequences and optionals as operands (ImportCtx::aggregate);
  // for any other row such an operand is an error naming it.
  bool takesAggregates = false;
  // For custom rows: whether output 0 always has input 0's shape (Cast), which lets a shape
  // declared downstream pin it (ImportCtx::DeclaredTypes; elementwise irOp rows do by their op).
  bool keepsShape = false;
};

// A row that rejects `onnxOp` from `sinceOpset` on, saying why.
inline ImportRule rejected(const char *onnxOp, int sinceOpset, const char *why) {
  return {onnxOp, sinceOpset, nullptr, {}, nullptr, why};
}

// `r` as a row of ai.onnx.ml, the traditional machine-learning domain.
inline ImportRule ml(ImportRule r) {
  r.domain = "ai.onnx.ml";
  return r;
}

// Row families, one file each under frontend/rules/.
const std::vector<ImportRule> &elementwiseRules();    // unary math, activations
const std::vector<ImportRule> &binaryRules();         // broadcasting arithmetic, logic
const std::vector<ImportRule> &nnRules();             // conv, pooling, matrix products
const std::vector<ImportRule> &reduceRules();         // reductions, softmax family
const std::vector<ImportRule> &dataMovementRules();   // reshape, slice, pad...
const std::vector<ImportRule> &shapeGeneratorRules(); // shape, range, constant-of-shape...
const std::vector<ImportRule> &indexingRules();       // gather, scatter, top-k...
const std::vector<ImportRule> &resizeRules();         // resize, upsample
const std::vector<ImportRule> &normalizationRules();  // layer/instance norm, losses
const std::vector<ImportRule> &recurrentRules();      // RNN, LSTM, GRU
const std::vector<ImportRule> &quantRules();          // quantization
const std::vector<ImportRule> &miscRules();           // signal, detection, images
const std::vector<ImportRule> &trainingRules();       // ai.onnx.preview.training optimizers
const std::vector<ImportRule> &transformerRules();    // attention, rotary embedding, KV cache
const std::vector<ImportRule> &controlFlowRules();    // If, Loop, Scan
const std::vector<ImportRule> &sequenceRules();       // sequences and optionals
const std::vector<ImportRule> &textRules();           // string tensors, ai.onnx.ml's LabelEncoder
const std::vector<ImportRule> &treeRules();           // ai.onnx.ml's tree ensembles

// Every row of every family.
const std::vector<const ImportRule *> &allRules();

// The row for an op of `domain` at the model's opset of that domain; nullptr when odlac has
// none. `earliest` is set to the first opset any row of that op covers (for the message when
// the model's opset is older).
const ImportRule *findRule(const std::string &domain, const std::string &onnxOp, int64_t opset,
                           int *earliest = nullptr);
// Whether any row imports ops of `domain`.
bool hasRulesForDomain(const std::string &domain);

// Imports a node through its row: rejects it, maps it 1:1 or runs the row's function, then
// refuses any attribute of the node that the row does not handle.
Status importNode(ImportCtx &ctx, const ImportRule &rule);

// Joins `ins` along `axis` (normalized) as ONNX's Concat, in groups when they are more than
// one odla_Concat takes; the result is named after the node's output 0
// (rules/DataMovement.cpp).
Expected<Value *> concatValues(ImportCtx &ctx, std::vector<Value *> ins, int64_t axis);

// Conv's attributes as the IR op's: group, strides, dilations and pads (from auto_pad; DeformConv
// and the quantized convolutions, which lack it or share it, read it the same way), checked
// against data x and kernel w (rules/Nn.cpp).
Expected<AttrMap> convAttrs(ImportCtx &ctx, const Value *x, const Value *w);

// Imports a node of a --custom-op-domain domain as a CustomOp (rules/Custom.cpp).
Status importCustomOp(ImportCtx &ctx);

} // namespace odlac
