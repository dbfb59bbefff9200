// The compile report (DESIGN §6): net.json, and a readable summary for --report. Op counts
// before and after optimization, FLOPs, weight and arena bytes, the ODLA calls of the code,
// and an instance's RAM and flash on --target (measured figures where the target has a
// footprint table: target/BackendFootprint.h), which --ram-budget and --flash-budget check.
#pragma once

#include "ir/Graph.h"
#include "target/BackendFootprint.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace odlac {

using OpCounts = std::map<std::string, int>;

OpCounts countOps(const Graph &g);
// Floating-point operations of one inference (multiply-add = 2).
uint64_t estimateFlops(const Graph &g);
// A lower bound on any activation arena for g: the largest sum, over one node, of the bytes
// of its distinct non-constant operands and results (they are live together while the node
// runs, unless one overwrites another in place). The report compares the planned arena to it.
uint64_t arenaLowerBound(const Graph &g);

struct ReportFacts {
  std::string name; // --name
  OpCounts opsBefore;
  uint64_t arenaBytes = 0;
  std::string backend = "reference";
  int optLevel = 2;
  uint64_t memoryBytes = 0;                  // --no-heap: NAME_MEMORY_BYTES; 0 without
  bool weightsBlob = false;                  // --weights=bin: the weights are read into RAM
  std::string target;                        // --target's triple; empty: the host
  int64_t batchRows = 0;                     // --dynamic-batch: the planned rows; 0 without
  std::map<std::string, int> calls;          // odlaCalls of the generated code
  std::optional<BackendFootprint> footprint; // where the target has a footprint table
};

// An instance's RAM and flash as the report states them and the budgets check them: the
// total and its parts (name, bytes), and what is left out.
struct MemoryFigure {
  uint64_t bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> parts;
  std::string notCounted;   // empty: nothing
  std::string text() const; // "29584 bytes (--no-heap memory 23167 + ...; not counted: ...)"
};
MemoryFigure ramFigure(const Graph &g, const ReportFacts &facts);
MemoryFigure flashFigure(const Graph &g, const ReportFacts &facts);

std::string reportJson(const Graph &g, const ReportFacts &facts);
std::string reportText(const Graph &g, const ReportFacts &facts);

} // namespace odlac
