// odlac verify [OPTIONS] model.onnx [--against reference|onnxruntime] [--inputs DIR]
//              [--bisect] [--atol X] [--rtol Y] [--seed N]:
// builds the model's test driver as odlac run does (OPTIONS: the backend, -O...), runs it on
// the inputs of DIR (ONNX's test data layout) or on generated ones, and compares every output
// with a reference run of the same inputs: the model on the reference backend, evaluated by
// odlac itself (the default), or ONNX Runtime (PyPI onnxruntime, run by $ODLAC_PYTHON or
// python3). It prints a table per output (max absolute and relative error, float32 ulps,
// verdict) and exits 0 when all agree within the tolerances, 1 otherwise. --bisect, against the
// reference backend, compiles both builds with --tap-values and names the first node whose
// result diverges, with its op and attributes.
#pragma once

#include <string>
#include <vector>

namespace odlac {

// `args`: what follows "verify"; returns the exit status.
int verifyCommand(const std::vector<std::string> &args);

} // namespace odlac
