// The calibration inputs of --quantize (docs/quantization.md): ONNX TensorProto files in the
// layout of ONNX's test data, read and checked against the graph's inputs.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace odlac {

// The input sets under `dir`: each test_data_set_<k> folder (in k's order) or, without any,
// `dir` itself, holding input_0.pb ... input_<n-1>.pb, one TensorProto per input of `g` with
// exactly that input's element type and shape. Errors name the file and what is wrong.
Expected<std::vector<std::vector<std::shared_ptr<const Buffer>>>>
loadCalibrationSets(const std::string &dir, const Graph &g);

} // namespace odlac
