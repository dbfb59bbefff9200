// Facts about a graph obtained by building it on the reference backend through the
// DirectSink: the same calls the generated C makes, so the figures are exactly what that C
// gets at run time.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <cstdint>

namespace odlac {

// Bytes of the activation arena one instance needs on the reference backend.
Expected<uint64_t> referenceArenaBytes(const Graph &g);

} // namespace odlac
