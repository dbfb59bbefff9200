// Facts about a graph obtained by building it on the reference backend through the
// DirectSink: the same calls the generated C makes, so the figures are exactly what that C
// gets at run time. The memory plan is the reference backend's (its planner.c): odlac reads
// it rather than computing a second one that could disagree.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"
#include "target/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace odlac {

struct MemoryPlanEntry {
  std::string name; // the value's id, or "<op> scratch"
  uint64_t offset, bytes;
  int firstNode, lastNode; // execution order on the backend
};

struct MemoryPlan {
  uint64_t arenaBytes = 0;
  int numNodes = 0;
  std::vector<MemoryPlanEntry> entries; // sorted by offset, then first use
};

// Bytes of the activation arena one instance needs on the reference backend.
// The plan of the calls that code generated for `target` makes (decomposed extension ops
// included), as the reference backend builds it.
// `leastMemory`: the computation item ODLA_EXT_ITEM_LEAST_MEMORY set, as --memory=least code
// sets it.
Expected<uint64_t> referenceArenaBytes(const Graph &g, const Target &target = referenceTarget(),
                                       bool leastMemory = false);
Expected<MemoryPlan> referenceMemoryPlan(const Graph &g, const Target &target = referenceTarget(),
                                         bool leastMemory = false);

// --no-heap: the bytes of the reference backend's own structures for one instance of the code
// generated for `target` (computation, values, nodes and their parameters, executable, context,
// the ports' bindings; not the arena), measured by making those calls in a memory region
// (odla_ext_memory.h) on this 64-bit host: at least what a 32-bit target needs. As in the code,
// compiling's temporaries go to an arena of `arenaBytes` (ODLA_EXT_ITEM_COMPILE_SCRATCH).
Expected<uint64_t> referenceStructureBytes(const Graph &g, const Target &target, bool leastMemory,
                                           uint64_t arenaBytes);

// Draws the plan as text: one row per buffer with its offset, size and lifetime bar.
std::string printMemoryPlan(const MemoryPlan &plan);

} // namespace odlac
