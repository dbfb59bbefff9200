// The odlac command line (DESIGN §9): its options, their parsing and the --help text.
#pragma once

#include "Codegen.h"
#include "Import.h"
#include "passes/Pass.h"
#include "passes/Pipeline.h"
#include "support/Status.h"
#include "target/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace odlac {

// odlac export-triton's own options (ExportTriton.h); `repo` empty: a plain compile.
struct TritonExport {
  std::string repo;     // -o: the model repository
  std::string name;     // --model-name; default: the model file's name, made a Triton name
  int64_t maxBatch = 0; // --max-batch: Triton's max_batch_size; 0: no batching
  int instances = 1;    // --instances: Triton instance_group count (stub processes)
};

struct Options {
  std::string model;
  std::string outDir;
  ImportOptions import;
  CodegenOptions codegen;
  PipelineOptions pipeline;
  std::string backend = "reference"; // a shipped backend's name
  std::string backendManifest;       // or the manifest file of another backend
  bool coreProfile = false;          // --odla-profile=core: no extension calls at all
  bool execModeGiven = false;        // --exec-mode given; else compile, or what the manifest has
  Target target;                     // resolved from the three above
  // Build outputs (docs/cli.md "Building libraries"): what --emit produces beyond C.
  enum class Emit { C, Obj, Static, Shared } emit = Emit::C;
  std::string triple;         // --target; empty: the host
  std::string linkBackend;    // --link-backend: the libodla_<name> a shared library links
  std::string odlaPrefix;     // where include/ODLA and lib/libodla_* are; empty: odlac's own
  std::string depfile;        // -MD (DIR/NAME.d) or -MF FILE; empty: none
  bool writeDepfile = false;  // -MD
  uint64_t ramBudget = 0;     // --ram-budget; 0: none
  uint64_t flashBudget = 0;   // --flash-budget; 0: none
  uint64_t sizeLimit = 0;     // --size-limit; 0: the target's default (import.limits)
  bool quantize = false;      // --quantize=int8
  std::string calibrationDir; // --calibration
  Calibration::Method calibrationMethod = Calibration::Method::MinMax;
  double calibrationPercentile = 99.99;
  bool dynamicBatch = false;     // --dynamic-batch
  int64_t batchSize = 0;         // --batch-size; 0: 1
  std::vector<SymbolicDim> dims; // --dim, in the order given
  bool printIr = false;
  bool printMemoryPlan = false;
  std::string dumpGraph;      // --dump-graph FILE.dot|FILE.svg
  std::string dumpMemoryPlan; // --dump-memory-plan FILE.svg
  bool report = false;
  bool listOps = false;      // --list-ops
  bool progress = false;     // --progress
  bool quiet = false;        // --quiet
  bool tapValues = false;    // --tap-values
  bool backendGiven = false; // --backend, --backend-manifest or --odla-profile given
  bool help = false;
  bool helpMarkdown = false; // --help-markdown
  bool version = false;
  TritonExport triton; // odlac export-triton
};

// Parses argv; errors name the offending argument.
Expected<Options> parseOptions(const std::vector<std::string> &args);
// Whether the argument is a flag written without its value, which is then the next argument
// ("--backend" but not "--backend=dnnl"; "-O" but not "-O2").
bool takesNextArgument(const std::string &arg);
const char *helpText();
// The options as docs/cli.md's table: each flag with its docs description, else its help.
const char *helpMarkdown();

} // namespace odlac
