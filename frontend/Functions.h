// ONNX local functions (ModelProto.functions, IR 8+): every call of one, in the main graph,
// in bodies and in other functions, is replaced by the function's nodes before import, so the
// importer and everything after it see plain ONNX ops (DESIGN §4: "local functions
// (inlined)"). Exporters built on onnxscript write them, e.g. PyTorch 2's dynamo exporter
// for submodules and control-flow branches before its own optimizer inlines them.
#pragma once

#include "support/Status.h"

#include <onnx/onnx_pb.h>

namespace odlac {

// Inlines every local-function call of `m` and drops m.functions(). Refuses (with the call's
// node, the function and the rule) a function defined twice or in the default domain, a call
// with more inputs or outputs than the function declares or an attribute it does not, a
// function whose opset of a domain differs from the model's, and calls beyond ir/Limits.h's
// kMaxFunctionDepth and kMaxInlinedNodes; after an error the model is half inlined and only
// good for the error message.
Status inlineLocalFunctions(onnx::ModelProto &m);

} // namespace odlac
