// The reference backend's measured footprint on a microcontroller target: what the code a
// model generates links of the backend (flash, static RAM) and the deepest stack of its calls,
// from the table scripts/backend_footprint.py measures with the target's cross compiler
// (BackendFootprintTable.inc). The report and --ram-budget / --flash-budget read it; targets
// without a table get no figures (docs/backends.md, "Footprint table").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace odlac {

struct BackendFootprint {
  std::string compiler;      // the cross compiler the table was measured with
  uint64_t backendFlash = 0; // code and constants of the backend's own objects
  uint64_t libraryFlash = 0; // of the C library (newlib-nano, libm, libgcc) they pull in
  uint64_t staticRam = 0;    // the backend's and those libraries' .data and .bss
  // The generated code (NAME.c): flash from a fit over real models, its functions' stack.
  uint64_t codeFlash = 0, codeStack = 0;
  // The deepest stack of any ODLA call the code makes plus codeStack; nullopt where a call
  // tree recurses. stackEntry names the deepest call.
  std::optional<uint64_t> stack;
  std::string stackEntry;
  std::vector<std::string> unknown; // called functions the table lacks (none for odlac's code)
};

// Whether a table exists for the backend on `triple`.
bool hasFootprintTable(const std::string &backend, const std::string &triple);
// The footprint of a model whose code makes `calls` (odlaCalls), with the backend built for
// `types` (referenceTypes; none: every type). Needs hasFootprintTable.
BackendFootprint backendFootprint(const std::map<std::string, int> &calls,
                                  const std::vector<std::string> &types);

} // namespace odlac
