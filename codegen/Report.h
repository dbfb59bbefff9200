// The compile report (DESIGN §6): net.json, and a readable summary for --report. Op counts
// before and after optimization, FLOPs, weight and arena bytes.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <map>
#include <string>

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
  uint64_t memoryBytes = 0; // --no-heap: NAME_MEMORY_BYTES; 0 without
};

std::string reportJson(const Graph &g, const ReportFacts &facts);
std::string reportText(const Graph &g, const ReportFacts &facts);

} // namespace odlac
