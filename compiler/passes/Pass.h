// A pass transforms the IR in place and says whether it changed anything (STYLE 4: one
// file, one class, guard clauses with a reason on each early exit, named after the fact it
// exploits). Passes are listed once, in Pipeline.cpp.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"
#include "target/Target.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace odlac {

// Static post-training quantization (--quantize=int8, passes/QuantizeStatic.cpp): the
// calibration inputs, and how a value's range is chosen from what they make it hold.
struct Calibration {
  enum class Method { MinMax, Percentile, Entropy } method = Method::MinMax;
  double percentile = 99.99; // Method::Percentile: the share of |values| the range keeps
  // One buffer per graph input, in order, for each calibration input set.
  std::vector<std::vector<std::shared_ptr<const Buffer>>> sets;
  // Filled by the pass: the float model's outputs on each set, for the driver's report of
  // the quantized model's error.
  mutable std::vector<std::vector<std::shared_ptr<const Buffer>>> floatOutputs;
};

// What passes may ask about the compilation.
struct PassContext {
  // The backend code is generated for (its manifest): passes that choose a layout read it;
  // extension ops are formed regardless, lowering decomposes those the backend lacks (the
  // integer-only quantized products, whose float form needs constants, are decomposed by
  // decompose-quantized-products).
  const Target *target = &referenceTarget();
  // --quantize=int8: quantize-static quantizes the float model from these inputs.
  const Calibration *calibration = nullptr;
  // --memory=least: the backend reads constant kernels where they are (their layout matters).
  bool leastMemory = false;
  // Values fold-constants leaves to the generated code although they are computable: with
  // --dim, those whose data depends on a symbolic dim (driver/SymbolicDims.h).
  std::set<std::string> keepComputed;
};

class Pass {
public:
  virtual ~Pass() = default;
  // Returns whether the graph changed; an error is a bug in odlac (import validated the
  // graph) and is reported as internal.
  virtual Expected<bool> run(Graph &g, const PassContext &ctx) = 0;
};

} // namespace odlac
