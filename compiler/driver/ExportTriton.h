// odlac export-triton [options] model.onnx -o REPO [--max-batch N] [--model-name NAME]
// [--instances K]: a model of a Triton Inference Server repository (docs/serving.md). The
// compile is odlac's own with --emit=shared --weights=obj --name net into REPO/NAME/1, which
// also receives the Python backend's adapter (model.py), the odlac package's module it loads
// the library with (odlac.py) and a copy of the ODLA backend library; REPO/NAME/config.pbtxt
// states the inputs, outputs, types and dims, and dynamic batching up to --max-batch rows for
// a model compiled with a batch dim (--max-batch implies --dynamic-batch).
#pragma once

#include "Codegen.h"
#include "Options.h"
#include "ir/Graph.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

// The options of `odlac export-triton ARGS`: export-triton's own taken out (Options::triton),
// the rest parsed as odlac's, with the library flags it implies added. Refuses the options
// that would make something the adapter cannot load (--emit, --name, --weights, --dim,
// --no-heap, --target...).
Expected<Options> parseExportTriton(const std::vector<std::string> &args);

// The version folder's files beyond the compile's own: model.py, odlac.py and the backend
// library's copy. Checks first that the adapter can carry every input and output (NumPy
// types; with --max-batch, a leading batch dim).
Expected<std::vector<GeneratedFile>> tritonVersionFiles(const Graph &g, const Options &opts);

// REPO/NAME/config.pbtxt's text.
std::string tritonConfig(const Graph &g, const Options &opts);

} // namespace odlac
