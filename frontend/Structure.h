// The graph structure that ONNX requires and the importer relies on, checked by odlac before
// anything reads the graph (libonnx included): every value named once (single static
// assignment, bodies included: a body may not redefine a name of an enclosing graph), nodes in
// topological order with every input defined before use, graph inputs, initializers and graph
// outputs named, unique and defined.
#pragma once

#include "support/Status.h"

#include <onnx/onnx_pb.h>

namespace odlac {

// Every structural problem of the main graph and of every body nested in it, each message
// naming the graph (a body by name), the node and the value. `opset` labels nodes.
Status checkStructure(const onnx::GraphProto &g, int64_t opset);

} // namespace odlac
