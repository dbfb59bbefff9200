// ONNX local functions (ModelProto.functions, IR 8+): every call of one, in the main graph,
// in bodies and in other functions, is replaced by the function's nodes before import, so the
// importer and everything after it see plain ONNX ops (DESIGN §4: "local functions
// (inlined)"). Exporters built on onnxscript write them, e.g. PyTorch 2's dynamo exporter
// for submodules and control-flow branches before its own optimizer inlines them.
#pragma once

#include "support/Status.h"

#include <onnx/onnx_pb.h>

namespace odlac {

// Limits on what inlining may build from a small file: calls nest at most this deep (a
// function that calls itself, directly or through others, is refused), and the graphs hold
// at most this many nodes in all once every call is expanded.
constexpr int kMaxFunctionDepth = 64;
constexpr int64_t kMaxInlinedNodes = int64_t(1) << 20;

// Inlines every local-function call of `m` and drops m.functions(). Refuses (with the call's
// node, the function and the rule) a function defined twice or in the default domain, a call
// with more inputs or outputs than the function declares or an attribute it does not, a
// function whose opset of a domain differs from the model's, and the limits above; after an
// error the model is half inlined and only good for the error message.
Status inlineLocalFunctions(onnx::ModelProto &m);

} // namespace odlac
