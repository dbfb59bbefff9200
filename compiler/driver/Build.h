// --emit=obj|static|shared: compiles the generated C with the target's C compiler and
// packages it with the weights (docs/cli.md, "Building objects and libraries").
#pragma once

#include "Options.h"
#include "OutputDir.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

// The C compiler and archiver for a target triple: $CC and $AR when set, otherwise the
// Debian cross toolchain named after the triple (aarch64-linux-gnu-gcc, arm-none-eabi-gcc
// with the CPU flags the triple implies...), or cc and ar for the host.
struct Toolchain {
  std::vector<std::string> cc; // the command and its target flags
  std::vector<std::string> ar;
  bool hosted = true; // an OS target: position-independent code and shared libraries
};
Toolchain toolchainFor(const std::string &triple);

// Where include/ODLA and lib/libodla_* are: --odla-prefix, else the folder above odlac's bin/
// (where its install put them).
std::string odlaPrefix(const Options &opts);

// Runs argv in `dir` with no shell in between (runChild execs argv[0] with argv as it is); the
// tool's own messages go to stderr.
Status runIn(const std::string &dir, const std::vector<std::string> &argv);

// Compiles `sources` (in the staging folder) and packages them with `objects` into the
// artifact --emit asks for, which becomes an output of `staging`.
Status buildArtifact(const Options &opts, Staging &staging, const std::vector<std::string> &sources,
                     const std::vector<std::string> &objects);

} // namespace odlac
