// What ONNX's specification says a model and each node must be, checked by odlac itself
// against ONNX 1.23's schemas (OnnxSchemas.inc, generated), not against the system's libonnx:
// IR version and opsets no newer than that release, and every node's inputs, outputs and
// attributes as its op's schema at the model's opset wants. Import rules rely on these.
#pragma once

#include "support/Status.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace odlac {

// The ONNX release odlac knows up to ("1.23.0"); its schemas decide what is valid.
const char *onnxRelease();

// An ONNX domain name as odlac keys it: the default domain, also spelled "ai.onnx", is "".
std::string canonicalDomain(const std::string &domain);

// The ops of ONNX's default domain in that release, by name, each with the opsets at which its
// schema changed, ascending (for odlac --list-ops).
std::vector<std::pair<std::string, std::vector<int64_t>>> onnxOpVersions();

// The model's IR version and the opset of each domain it imports: at least 1, no newer than
// the ONNX release odlac knows, one entry per domain, and one for the default domain.
Status checkVersions(const onnx::ModelProto &m);

// "node 'name' (Op, opset N)" or "node #index (...)": how every message names a node.
std::string nodeLabel(const onnx::NodeProto &n, int index, int64_t opset);

// One node against ONNX: each attribute named once, with a declared type and a value field
// of that type; for a default-domain op, its arity (required inputs and outputs present), the
// types of its attributes and the required ones, per the op's schema at `opset`. A node of an
// op that ONNX does not define there passes (the import rules then report it unsupported).
// Returns every problem of the node, each without the node label.
Status checkNode(const onnx::NodeProto &n, int64_t opset);

} // namespace odlac
