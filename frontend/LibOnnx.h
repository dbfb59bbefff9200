// What odlac still asks of the system's libonnx (Debian's ONNX 1.12) beyond its protobuf
// definitions: its checker, whose verdict is advice printed with odlac's own diagnostics, and
// its version converter, which upgrades models of opsets before 7. Both run in a child process
// with a time and a memory limit (ChildProcess.h): libonnx crashes or hangs on some crafted
// models, and that must only cost its help, never odlac. odlac validates a model itself
// (Schema.h, Structure.h) before either sees it.
#pragma once

#include "ChildProcess.h"
#include "support/Status.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace odlac {

// "libonnx 1.12.0": how messages name it.
std::string libonnxName();

// Whether libonnx's checker knows the model's IR version and the opsets of its ONNX domains.
bool libonnxKnows(const onnx::ModelProto &m);

// What libonnx's checker holds against the model, in one line (a crash or a hang of the
// checker is reported as such); nullopt when it accepts the model or does not know its
// versions. `path` lets the checker find external data beside the model.
std::optional<std::string> libonnxCheckerComplaint(const onnx::ModelProto &m,
                                                   const std::string &path,
                                                   const ChildLimits &limits);

// The model upgraded to default-domain opset `to` by libonnx's version converter (after
// libonnx's shape inference, which its adapters need), or why that failed; `timedOut` as for
// runInChild.
Expected<onnx::ModelProto> upgradeWithLibonnx(const onnx::ModelProto &m, int64_t to,
                                              const ChildLimits &limits, bool *timedOut);

} // namespace odlac
