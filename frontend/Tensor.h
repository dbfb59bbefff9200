// Decoding ONNX TensorProtos (raw or typed encodings, external data) into IR constants.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <set>
#include <string>

namespace odlac {

struct DecodedTensor {
  TensorType type;
  std::shared_ptr<const Buffer> data;
};

// Checks that every external data file of the main graph exists inside `modelDir`; adds
// their paths (modelDir + "/" + location) to `files` when given.
Status checkExternalData(const onnx::ModelProto &m, const std::string &modelDir,
                         std::set<std::string> *files = nullptr);

// Whether any tensor of the model (initializers and attribute tensors, in every graph and
// local function) keeps its data in an external file.
bool usesExternalData(const onnx::ModelProto &m);

// `modelDir` is the folder of the model file; external data must stay inside it. When
// `keepAlive` is given it owns `t`, and raw data is referenced where it lies, not copied.
Expected<DecodedTensor> decodeTensor(const onnx::TensorProto &t, const std::string &modelDir,
                                     const std::shared_ptr<const void> &keepAlive = nullptr);
// The same for a tensor the caller may empty: its raw data moves into the decoded buffer (no
// copy), which owns it alone, so the bytes are freed once the IR drops the constant.
Expected<DecodedTensor> takeTensor(onnx::TensorProto &t, const std::string &modelDir);

} // namespace odlac
