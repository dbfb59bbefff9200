// The odlac command line (DESIGN §9): its options, their parsing and the --help text.
#pragma once

#include "Codegen.h"
#include "Import.h"
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
