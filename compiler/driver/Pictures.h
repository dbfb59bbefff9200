// Pictures of a compile for people who would rather look than read (--dump-graph,
// --dump-memory-plan): the optimized graph in Graphviz's DOT language (drawn as SVG by
// Graphviz's `dot` when the file is named .svg) and the activation arena plan as an SVG
// timeline. Names come from the model, so every text is escaped for its language (DOT's quoted
// strings, XML), after printable() has made controls and invisible characters visible.
#pragma once

#include "evaluate/ReferencePlan.h"
#include "ir/Graph.h"
#include "support/Status.h"

#include <string>

namespace odlac {

// The graph as DOT: inputs and outputs as ellipses, a box per node (op, name, attributes,
// constant operands), an edge per use labeled with the value's type and, where the plan has
// it, its place in the arena.
std::string graphDot(const Graph &g, const MemoryPlan &plan);

// The plan as SVG: a box per buffer, its offset up the arena and its lifetime across the
// nodes, with the value's name, size and nodes as the box's tooltip.
std::string memoryPlanSvg(const MemoryPlan &plan, const std::string &title);

// Writes `path` (.dot: the DOT text; .svg: drawn by Graphviz's `dot`, an error naming the
// Debian package when it is missing).
Status writeGraphPicture(const std::string &path, const std::string &dot);

} // namespace odlac
