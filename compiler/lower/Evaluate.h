// Computing values from constants with the reference backend's kernels: the frontend uses
// it when an import rule needs the data of an operand computed from constants (a shape
// built by Shape/Gather/Concat), and constant folding will use it. It makes the same ODLA
// calls the generated code would, through the DirectSink.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <memory>

namespace odlac {

// Whether `v` is a constant or computed only from constants.
bool isComputableFromConstants(const Value &v);

// The bytes of `v`: its data if it is a constant, otherwise the result of running the nodes
// it depends on. An error when it depends on a graph input or the backend fails.
Expected<std::shared_ptr<const Buffer>> evaluateValue(const Value &v);

} // namespace odlac
