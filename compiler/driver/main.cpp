// odlac: compiles an ONNX model to C99 against the ODLA API (DESIGN §9).
// Exit status: 0 on success, 1 on a model or usage error (message on stderr).
#include "Codegen.h"
#include "Import.h"
#include "Options.h"
#include "OutputDir.h"
#include "Report.h"
#include "ir/Printer.h"
#include "lower/Lowering.h"
#include "lower/ReferencePlan.h"
#include "passes/Pipeline.h"
#include "odlac_version.h"

#include <cstdio>
#include <exception>

using namespace odlac;

static int fail(const Status &s) {
  for (const std::string &m : s.messages())
    std::fprintf(stderr, "odlac: error: %s\n", m.c_str());
  return 1;
}

static int run(int argc, char **argv) {
  auto opts = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts)
    return fail(opts.status());
  if (opts->help) {
    std::fputs(helpText(), stdout);
    return 0;
  }
  if (opts->version) {
    std::printf("odlac %s (ODLA 0.5)\n", ODLAC_VERSION_STRING);
    return 0;
  }
  auto graph = importOnnxFile(opts->model, opts->import);
  if (!graph)
    return fail(graph.status());
  const Target &target = opts->target;
  ReportFacts facts{opts->codegen.name, countOps(**graph), 0,
                    target.backend + (opts->coreProfile ? " (core profile)" : ""),
                    opts->pipeline.level};
  PassContext passCtx;
  passCtx.target = &target;
  if (Status s = runPipeline(**graph, opts->pipeline, passCtx))
    return fail(s);
  // Everything the backend lacks is reported before any file is written.
  if (Status s = checkTarget(**graph, target))
    return fail(s);
  if (opts->printIr)
    std::fputs(printGraph(**graph).c_str(), stdout);
  if (opts->outDir.empty() && !opts->printMemoryPlan && !opts->report)
    return 0;
  auto plan = referenceMemoryPlan(**graph, target);
  if (!plan)
    return fail(plan.status());
  if (opts->printMemoryPlan)
    std::fputs(printMemoryPlan(*plan).c_str(), stdout);
  facts.arenaBytes = plan->arenaBytes;
  if (opts->report)
    std::fputs(reportText(**graph, facts).c_str(), stdout);
  if (opts->outDir.empty())
    return 0;
  opts->codegen.arenaBytes = plan->arenaBytes;
  opts->codegen.target = &target;
  std::vector<GeneratedFile> files = generateC(**graph, opts->codegen);
  files.push_back({opts->codegen.name + ".json", reportJson(**graph, facts)});
  if (Status s = writeOutputs(opts->outDir, files))
    return fail(s);
  return 0;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    // Library code reports errors as values; this catches what third-party code throws
    // (protobuf, libonnx) so that the user still gets a message and exit status 1.
    std::fprintf(stderr, "odlac: error: %s\n", e.what());
    return 1;
  }
}
