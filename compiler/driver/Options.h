// The odlac command line (DESIGN §9): its options, their parsing and the --help text.
#pragma once

#include "Codegen.h"
#include "Import.h"
#include "lower/Target.h"
#include "passes/Pipeline.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

struct Options {
  std::string model;
  std::string outDir;
  ImportOptions import;
  CodegenOptions codegen;
  PipelineOptions pipeline;
  std::string backend = "reference"; // a shipped backend's name
  std::string backendManifest;       // or the manifest file of another backend
  bool coreProfile = false;          // --odla-profile=core: no extension calls at all
  Target target;                     // resolved from the three above
  bool printIr = false;
  bool printMemoryPlan = false;
  bool report = false;
  bool help = false;
  bool version = false;
};

// Parses argv; errors name the offending argument.
Expected<Options> parseOptions(const std::vector<std::string> &args);
const char *helpText();

} // namespace odlac
