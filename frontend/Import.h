// The ONNX frontend's entry point: load a .onnx file, validate it, and import it into IR.
// All validation happens here (DESIGN §4): every unsupported or invalid node is reported, with
// node name, op type, opset and reason, in one Status.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <map>
#include <memory>
#include <string>

namespace odlac {

struct ImportOptions {
  // Pins the dims of graph inputs: name -> dims (from --input-shape name:1x3x224x224).
  std::map<std::string, Dims> inputShapes;
};

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path, const ImportOptions &opts);

// Parses "name:1x3x224x224" into an entry of ImportOptions::inputShapes.
Status parseInputShape(const std::string &spec, ImportOptions &opts);

} // namespace odlac
