// checkTarget (DESIGN §7): whether a backend runs a graph, judged by its manifest before any
// C is written, so that a model it cannot run is refused with the node and the reason and
// never first shows up as a link error, an abort or a wrong number.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"
#include "target/Target.h"

namespace odlac {

// Lowers `g` for `target` onto the reference backend linked into odlac (so that every
// operand of every call has its exact type) and reports, each in one message with the nodes
// concerned: the ODLA functions and element types the target lacks, every call outside one
// of the manifest's limits (with the value it has), values of element types the manifest
// does not list, and more value ids than it takes. Ok when the target runs the whole graph.
Status checkTarget(const Graph &g, const Target &target);

} // namespace odlac
