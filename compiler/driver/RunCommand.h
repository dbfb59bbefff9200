// odlac run [OPTIONS] model.onnx [INPUT... DRIVER-OPTIONS]: compiles the model with its test
// driver (--emit-main) into a cache folder, builds the driver there against the installed ODLA
// headers and backend (the README's build line), and runs it on the inputs: the arguments
// after the model are the driver's (.pb and .npy inputs, --print, --repeat N, -o DIR, --npy;
// docs/cli.md). The cache folder (one per model path and options, under $ODLAC_CACHE_DIR, else
// $XDG_CACHE_HOME/odlac/run or ~/.cache/odlac/run) is rebuilt only when the generated files
// change.
#pragma once

#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

// Prints "odlac: error: MESSAGE" (made printable); returns 1.
int error(const std::string &message);

// Splits the arguments of `odlac COMMAND`: odlac's options up to the model (-o and --emit
// refused: the command compiles into its cache), the model, the command's own arguments after
// it. False, having said why, when there is no model or a refused option.
bool splitAtModel(const std::vector<std::string> &args, const char *command,
                  std::vector<std::string> &options, std::string &model,
                  std::vector<std::string> &rest);

// The test driver of `model` compiled with odlac's `options` (--emit-main) in its cache folder
// and built there against the installed ODLA headers and backend; its path. The compile's own
// errors are printed as it runs.
Expected<std::string> buildDriver(const std::vector<std::string> &options,
                                  const std::string &model);

// `args`: what follows "run". Returns the exit status when the driver cannot be started
// (the driver replaces odlac otherwise, and its status is the command's).
int runCommand(const std::vector<std::string> &args);

} // namespace odlac
