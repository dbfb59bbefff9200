// odlac --list-ops: every ONNX op odlac knows of, from the import rules (frontend/rules/) and
// ONNX's schemas (frontend/OnnxSchemas.inc), as a Markdown table that docs/ops.md holds as
// it is: per op and opset range, how odlac imports it or why it refuses it; with a backend
// named (--backend, --backend-manifest, --odla-profile), what that backend's manifest offers
// for it.
#pragma once

#include "target/Target.h"

#include <string>

namespace odlac {

// The table; `backend`: add the backend column for `target`.
std::string listOps(const Target &target, bool backend);

} // namespace odlac
