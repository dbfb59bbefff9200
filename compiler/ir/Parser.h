// Parses the IR's text form (see Printer.h) back into a Graph, for pass tests: text in, text
// out. Every node is verified against its op row and its inferred result types must match
// the annotated ones. Constants must carry their values (dense<[...]>); a printed
// "<N bytes>" placeholder cannot be parsed.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <memory>
#include <string>

namespace odlac {

// Errors name the line and column.
Expected<std::unique_ptr<Graph>> parseGraph(const std::string &text);

} // namespace odlac
