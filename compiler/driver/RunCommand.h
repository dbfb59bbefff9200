// odlac run [OPTIONS] model.onnx [INPUT... DRIVER-OPTIONS]: compiles the model with its test
// driver (--emit-main) into a cache folder, builds the driver there against the installed ODLA
// headers and backend (the README's build line), and runs it on the inputs: the arguments
// after the model are the driver's (.pb and .npy inputs, --print, --repeat N, -o DIR, --npy;
// docs/cli.md). The cache folder (one per model path and options, under $ODLAC_CACHE_DIR, else
// $XDG_CACHE_HOME/odlac/run or ~/.cache/odlac/run) is rebuilt only when the generated files
// change.
#pragma once

#include <string>
#include <vector>

namespace odlac {

// `args`: what follows "run". Returns the exit status when the driver cannot be started
// (the driver replaces odlac otherwise, and its status is the command's).
int runCommand(const std::vector<std::string> &args);

} // namespace odlac
