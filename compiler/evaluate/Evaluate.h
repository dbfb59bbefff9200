// Computing values from constants with the reference backend's kernels: the frontend uses
// it when an import rule needs the data of an operand computed from constants (a shape
// built by Shape/Gather/Concat), and constant folding (passes/FoldConstants.cpp) uses it. It
// makes the same ODLA calls the generated code would, through the DirectSink.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace odlac {

// Whether `v` is a constant or computed only from constants, by nodes that odlac can run at
// compile time (no custom op; loops of a known trip count up to ir/Limits.h's
// kMaxCompileTimeIterations, without nested loops).
bool isComputableFromConstants(const Value &v);
// Why `v` is not: "a graph input", or "the custom op 'name'" (whose kernel only the
// application has); empty when it is computable.
std::string notConstantBecause(const Value &v);

// The bytes of `v`: its data if it is a constant, otherwise the result of running the nodes
// it depends on. An error when it depends on a graph input, when those nodes' results
// together exceed `maxBytes` (import rules pass ir/Limits.h's kMaxCompileTimeBytes; passes,
// whose results are no larger than the constants they start from, pass none), or when the
// backend fails.
Expected<std::shared_ptr<const Buffer>> evaluateValue(const Value &v, int64_t maxBytes = INT64_MAX);

// Runs the whole graph on the reference backend: one buffer per graph input, in order;
// returns one buffer per graph output (a string output's strings copied: Buffer::ofStrings).
// Used by the unit tests that run imported graphs and by odlac verify.
Expected<std::vector<std::shared_ptr<const Buffer>>>
executeGraph(const Graph &g, const std::vector<std::shared_ptr<const Buffer>> &inputs);

} // namespace odlac
