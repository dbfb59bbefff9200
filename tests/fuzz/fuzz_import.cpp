// libFuzzer target `import`: ONNX model bytes through everything odlac does with a model, in
// memory: parse, validate and import (importOnnxBytes), the -O3 pipeline, the backend check,
// the reference backend's memory plan (the graph built on it through the direct sink) and
// codegen (C, driver, report). The input's size picks the target and the execution mode, so
// that every input reaches one of nine paths deterministically: the reference manifest, the
// same with a channels-last layout (the layout passes, the channels-last kernels), or the
// core ODLA profile (extension ops decomposed); compile, interpret or load mode code.
#include "Codegen.h"
#include "Import.h"
#include "Report.h"
#include "evaluate/ReferencePlan.h"
#include "lower/Lowering.h"
#include "passes/Pipeline.h"
#include "target/CheckTarget.h"

#include <ODLA/odla.h>

#include <cstddef>
#include <cstdint>
#include <exception>

using namespace odlac;

namespace {

const Target &targetFor(size_t size) {
  static const Target targets[3] = {referenceTarget(),
                                    [] {
                                      Target t = referenceTarget();
                                      t.layout = "channels_last";
                                      return t;
                                    }(),
                                    coreProfile(referenceTarget())};
  return targets[size % 3];
}

// Constant folding and planning run the reference backend, which logs what it refuses.
void quiet(const char *, int, const char *, odla_log_level, const char *) {}

// What odlac's driver does with a model, up to the files it would write. A Status is a
// clean refusal: the input was bad, which is no finding.
void compile(const uint8_t *data, size_t size) {
  // libonnx is not run (--libonnx-timeout 0): its checker is advice and its version converter
  // an option, each in a child process whose fork and exec would be nearly all of an
  // execution's time (91 exec/s with them); what they do with crafted models is the child's
  // business, bounded by ChildProcess.h and tested by tests/hostile.
  ImportOptions import;
  import.libonnxSeconds = 0;
  auto graph = importOnnxBytes(data, size, "fuzz.onnx", import);
  if (!graph)
    return;
  const Target &target = targetFor(size);
  ReportFacts facts{"net", countOps(**graph), 0, target.backend, 3};
  PipelineOptions pipeline;
  pipeline.level = 3;
  PassContext ctx;
  ctx.target = &target;
  if (runPipeline(**graph, pipeline, ctx) || checkTarget(**graph, target))
    return;
  CodegenOptions codegen;
  codegen.execMode = static_cast<ExecMode>(size / 3 % 3);
  codegen.emitMain = true;
  if (checkExecMode(**graph, codegen.execMode))
    return;
  auto plan = referenceMemoryPlan(**graph, target);
  if (!plan)
    return;
  CodegenFacts known;
  known.target = &target;
  known.arenaBytes = facts.arenaBytes = plan->arenaBytes;
  for (const GeneratedFile &f : generateC(**graph, resolveCodegen(**graph, codegen, known)))
    fileText(f); // the streamed weights files too
  reportJson(**graph, facts);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  odla_SetLogger(quiet);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    compile(data, size);
  } catch (const std::exception &) {
    // As in odlac's main: what protobuf or libonnx throws becomes an error message.
  }
  return 0;
}
