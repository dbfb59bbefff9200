// Decoding ONNX TensorProtos (raw or typed encodings, external data) into IR constants.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

namespace odlac {

struct DecodedTensor {
  TensorType type;
  std::shared_ptr<const Buffer> data;
};

// Checks that every external data file of the main graph exists inside `modelDir`.
Status checkExternalData(const onnx::ModelProto &m, const std::string &modelDir);

// `modelDir` is the folder of the model file; external data must stay inside it.
Expected<DecodedTensor> decodeTensor(const onnx::TensorProto &t, const std::string &modelDir);

} // namespace odlac
