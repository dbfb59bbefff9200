// odlac: compiles an ONNX model to C99 against the ODLA API (DESIGN §9).
// Exit status: 0 on success, 1 on a model or usage error (message on stderr).
#include "Build.h"
#include "Calibration.h"
#include "Codegen.h"
#include "ExportTriton.h"
#include "Import.h"
#include "ListOps.h"
#include "ObjectWriter.h"
#include "Options.h"
#include "OutputDir.h"
#include "Pictures.h"
#include "Progress.h"
#include "Report.h"
#include "RunCommand.h"
#include "SymbolicDims.h"
#include "VerifyCommand.h"
#include "evaluate/Evaluate.h"
#include "evaluate/ReferencePlan.h"
#include "ir/Limits.h"
#include "ir/Printer.h"
#include "odlac_version.h"
#include "passes/BatchRows.h"
#include "passes/Pipeline.h"
#include "support/Text.h"
#include "target/CheckTarget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sys/stat.h>
#include <tuple>

using namespace odlac;

// One line on stderr; the frontend's warnings and notes carry their own prefix (Import.h).
// Messages quote the model's names: printable() keeps control characters and bidirectional
// overrides in them from reaching the terminal.
static void printDiagnostic(const std::string &m) {
  bool advice = m.rfind("warning: ", 0) == 0 || m.rfind("note: ", 0) == 0;
  if (advice && Progress::quiet)
    return;
  std::fprintf(stderr, "odlac: %s%s\n", advice ? "" : "error: ", printable(m).c_str());
}

static int fail(const Status &s) {
  for (const std::string &m : s.messages())
    printDiagnostic(m);
  return 1;
}

// --quantize: each output of the quantized graph against the float model's on the calibration
// inputs, as notes: the largest and mean absolute error, the float output's largest magnitude,
// and for class scores ([N, classes]) how often the top class agrees.
static Status reportQuantization(const Graph &g, const Calibration &cal) {
  size_t outs = g.outputs().size();
  std::vector<double> maxErr(outs, 0), sumErr(outs, 0), maxAbs(outs, 0);
  std::vector<int64_t> count(outs, 0), rows(outs, 0), agree(outs, 0);
  for (size_t k = 0; k < cal.sets.size(); ++k) {
    auto got = executeGraph(g, cal.sets[k]);
    if (!got)
      return Status::error("--quantize: the quantized model fails on a calibration input: " +
                           got.status().message());
    for (size_t i = 0; i < outs; ++i) {
      const Value *v = g.outputs()[i];
      if (v->dtype() != DType::F32)
        continue;
      const float *q = (*got)[i]->as<float>(), *f = cal.floatOutputs[k][i]->as<float>();
      int64_t n = v->type().numElements();
      for (int64_t j = 0; j < n; ++j) {
        double e = std::fabs(double(q[j]) - f[j]);
        maxErr[i] = std::max(maxErr[i], e);
        sumErr[i] += e;
        maxAbs[i] = std::max(maxAbs[i], std::fabs(double(f[j])));
      }
      count[i] += n;
      if (v->dims().size() == 2 && v->dims()[1] > 1) {
        int64_t c = v->dims()[1];
        for (int64_t r = 0; r < v->dims()[0]; ++r) {
          auto top = [&](const float *x) { return std::max_element(x + r * c, x + r * c + c) - x; };
          agree[i] += top(q) == top(f);
          ++rows[i];
        }
      }
    }
  }
  for (size_t i = 0; i < outs; ++i) {
    if (!count[i])
      continue;
    std::string line = "note: int8 against float32 on " + std::to_string(cal.sets.size()) +
                       " calibration input sets, output '" + g.outputs()[i]->name() +
                       "': max |error| " + fmt::format("{:.4g}", maxErr[i]) + ", mean " +
                       fmt::format("{:.4g}", sumErr[i] / double(count[i])) + " (max |float| " +
                       fmt::format("{:.4g}", maxAbs[i]) + ")";
    if (rows[i])
      line += ", top-1 agrees on " + std::to_string(agree[i]) + "/" + std::to_string(rows[i]);
    printDiagnostic(line);
  }
  return Status::ok();
}

// --ram-budget, --flash-budget (on the report's figures) and the size limit on weights plus
// arena, checked before anything is written.
static Status checkBudgets(const Graph &g, const Options &o, const ReportFacts &facts) {
  uint64_t weights = weightBytes(g), arena = facts.arenaBytes;
  Status all;
  for (const auto &[flag, budget, figure, what] :
       {std::tuple("--ram-budget", o.ramBudget, ramFigure(g, facts), "RAM per instance"),
        {"--flash-budget", o.flashBudget, flashFigure(g, facts), "flash"}})
    if (budget && figure.bytes > budget)
      all.append(Status::error(std::string(flag) + "=" + std::to_string(budget) + ": " + what +
                               " " + figure.text() + ", " + std::to_string(figure.bytes - budget) +
                               " bytes over"));
  const SizeLimits &limits = o.import.limits;
  if (weights + arena > static_cast<uint64_t>(limits.maxBytes))
    all.append(Status::error("the weights (" + bytesText(weights) + ") and the activation arena (" +
                             bytesText(arena) + ") together exceed " + limits.describe()));
  return all;
}

// A path as a depfile rule names it, so that make and ninja both read back the same file: a
// space, '#' and ':' get a backslash and '$' is doubled, as GCC's -MD writes them. What either
// cannot read back is refused: control characters (a newline ends the rule, and make has no
// escape for it), a backslash (they undo escapes differently), characters make gives a
// meaning (the wildcards * ? [ ], '=' for a variable assignment such as SHELL=..., ';' for a
// recipe, '|' for order-only prerequisites, '(' ')' for archive members, '%' for a pattern, a
// leading '~' for a home folder) and those ninja's depfile reader does not take (' " ` & < > ^).
static Expected<std::string> depfilePath(const std::string &path) {
  static const char kSyntax[] = "\\*?[]=;|()%'\"`&<>^";
  std::string e;
  for (size_t i = 0; i < path.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(path[i]);
    const char *why = nullptr;
    if (ch == '\n')
      why = "a newline, which make cannot escape";
    else if (ch < 0x20 || ch == 0x7f)
      why = "a control character, which make cannot escape";
    else if (std::strchr(kSyntax, ch))
      why = "a character that make or ninja reads as syntax";
    else if (ch == '~' && i == 0)
      why = "a leading '~', which make reads as a home folder";
    if (why)
      return Status::error("-MD: cannot name '" + path + "' in a depfile: it holds " + why + " ('" +
                           std::string(1, static_cast<char>(ch)) + "' at byte " +
                           std::to_string(i) + ")");
    if (ch == ' ' || ch == '#' || ch == ':')
      e += '\\';
    if (ch == '$')
      e += '$';
    e += static_cast<char>(ch);
  }
  return e;
}

// A make rule naming every output as depending on what the compile read.
static Expected<std::string> depfileText(const Graph &g, const Options &o,
                                         const std::vector<std::string> &outputs) {
  std::vector<std::string> inputs{o.model};
  for (const std::string &f : g.info().externalDataFiles)
    inputs.push_back(f);
  if (!o.backendManifest.empty())
    inputs.push_back(o.backendManifest);
  std::string text;
  for (const std::string &f : outputs) {
    auto path = depfilePath(f);
    if (!path)
      return path.takeStatus();
    text += (text.empty() ? "" : " \\\n") + *path;
  }
  text += ":";
  for (const std::string &f : inputs) {
    auto path = depfilePath(f);
    if (!path)
      return path.takeStatus();
    text += " \\\n  " + *path;
  }
  return text + "\n";
}

// Writes the outputs atomically: the generated files, the weights object, what --emit
// builds from them, then the depfile.
static Status writeOutputs(const Graph &g, const Options &o, const CodegenConfig &config,
                           const std::vector<GeneratedFile> &files) {
  auto staging = Staging::create(o.outDir, o.codegen.name);
  if (!staging)
    return staging.takeStatus();
  const std::string &name = o.codegen.name;
  bool build = o.emit != Options::Emit::C;
  std::vector<std::string> sources, objects;
  for (const GeneratedFile &f : files) {
    // Under --emit the model's C is an intermediate; main.c stays a source for the user.
    bool compiled = build && f.name != "main.c" && f.name.size() > 2 &&
                    f.name.compare(f.name.size() - 2, 2, ".c") == 0;
    if (Status s = staging->write(f, !compiled))
      return s;
    if (compiled)
      sources.push_back(f.name);
  }
  if (config.options.weights == WeightsMode::Obj) {
    std::vector<ObjectSymbol> symbols;
    for (const WeightSymbol &w : weightSymbols(g, config))
      symbols.push_back(
          {w.symbol, w.value->data()->data, w.value->data()->size, w.value->data().get()});
    std::string object = name + "_weights.o";
    if (Status s = writeWeightsObject(staging->pathOf(object),
                                      {o.triple, o.codegen.weightsSection, 64}, symbols))
      return s;
    if (build)
      objects.push_back(object);
    else
      staging->adopt(object);
  }
  if (build)
    if (Status s = buildArtifact(o, *staging, sources, objects))
      return s;
  // The depfile's text is made before any output moves into place: a path it cannot name
  // leaves nothing behind.
  Expected<std::string> depfile = std::string();
  if (o.writeDepfile)
    depfile = depfileText(g, o, staging->destinations());
  if (!depfile)
    return depfile.takeStatus();
  // In DIR, the depfile is one more output; elsewhere (-MF) it is written after them.
  if (o.writeDepfile && o.depfile.empty())
    if (Status s = staging->write({name + ".d", *depfile}))
      return s;
  if (auto outputs = staging->commit(); !outputs)
    return outputs.takeStatus();
  if (!o.writeDepfile || o.depfile.empty())
    return Status::ok();
  return writeFileAtomically(o.depfile, *depfile);
}

static int run(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "run") == 0)
    return runCommand(std::vector<std::string>(argv + 2, argv + argc));
  if (argc > 1 && std::strcmp(argv[1], "verify") == 0)
    return verifyCommand(std::vector<std::string>(argv + 2, argv + argc));
  const bool triton = argc > 1 && std::strcmp(argv[1], "export-triton") == 0;
  const auto opts = triton ? parseExportTriton(std::vector<std::string>(argv + 2, argv + argc))
                           : parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts)
    return fail(opts.status());
  if (opts->help) {
    std::fputs(helpText(), stdout);
    return 0;
  }
  if (opts->helpMarkdown) {
    std::fputs(helpMarkdown(), stdout);
    return 0;
  }
  if (opts->listOps) {
    std::fputs(listOps(opts->target, opts->backendGiven).c_str(), stdout);
    return 0;
  }
  if (opts->version) {
    std::printf("odlac %s (ODLA 0.5)\n", ODLAC_VERSION_STRING);
    return 0;
  }
  // What the generated code states beyond the options, each fact computed once, here.
  CodegenFacts codegenFacts;
  codegenFacts.target = &opts->target;
  auto calls = callSequence(opts->target, opts->codegen.execMode, opts->dynamicBatch);
  if (!calls)
    return fail(calls.status());
  codegenFacts.calls = *calls;
  codegenFacts.plannedBatch = opts->dynamicBatch ? opts->import.batchSize : 0;
  Progress::quiet = opts->quiet;
  {
    struct stat st;
    Progress::decide(opts->progress, stat(opts->model.c_str(), &st) == 0 ? st.st_size : 0);
  }
  Progress::phase("importing " + opts->model);
  // --dim: the graph is first compiled at the largest dims, which must make a valid model
  // together (a context of P + T positions, say); a message that follows says so.
  std::string atLargest;
  for (const SymbolicDim &d : opts->dims)
    atLargest += (atLargest.empty() ? " (at the largest dims, " : ", ") + d.name + "=" +
                 std::to_string(d.max);
  if (!atLargest.empty())
    atLargest += ": every combination of the --dim ranges must be valid for the model)";
  auto graph = importOnnxFile(opts->model, opts->import);
  if (!graph)
    return fail(atLargest.empty() ? graph.status()
                                  : Status::error(graph.status().message() + atLargest));
  for (const std::string &d : (*graph)->info().diagnostics)
    printDiagnostic(d);
  const Target &target = opts->target;
  ReportFacts facts;
  facts.name = opts->codegen.name;
  facts.opsBefore = countOps(**graph);
  facts.backend = target.backend + (opts->coreProfile ? " (core profile)" : "");
  facts.optLevel = opts->pipeline.level;
  facts.batchRows = codegenFacts.plannedBatch;
  PassContext passCtx;
  passCtx.target = &target;
  passCtx.leastMemory = opts->codegen.leastMemory;
  Calibration calibration;
  if (opts->quantize) {
    auto sets = loadCalibrationSets(opts->calibrationDir, **graph);
    if (!sets)
      return fail(sets.status());
    calibration.sets = std::move(*sets);
    calibration.method = opts->calibrationMethod;
    calibration.percentile = opts->calibrationPercentile;
    passCtx.calibration = &calibration;
  }
  Progress::decide(opts->progress, weightBytes(**graph)); // external data counts too
  Progress::phase("optimizing (-O" + std::to_string(opts->pipeline.level) + ")");
  if (Status s = runPipeline(**graph, opts->pipeline, passCtx))
    return fail(atLargest.empty() ? s : Status::error(s.message() + atLargest));
  if (opts->quantize)
    if (Status s = reportQuantization(**graph, calibration))
      return fail(s);
  if (opts->tapValues) // after every pass: the values the generated code computes
    for (const Node *n : (*graph)->nodes())
      for (Value *v : n->outputs())
        if (v && !(*graph)->isGraphOutput(v))
          (*graph)->addOutput(v);
  // --dim: how the code depends on the symbolic dims, from compiles at other sizes (which may
  // compile the graph again, leaving values computed from the dims unfolded).
  if (!opts->dims.empty()) {
    Progress::phase("compiling at other sizes of the symbolic dims");
    auto symbolic = probeSymbolicDims(*opts, *graph, passCtx);
    if (!symbolic)
      return fail(symbolic.status());
    codegenFacts.symbolic = std::move(*symbolic);
  }
  // Passes make constants (folding) and values of their own: the limits hold after them too.
  if (Status s = checkSizeLimits(**graph, opts->import.limits))
    return fail(s);
  // Everything the backend lacks is reported before any file is written.
  if (Status s = checkTarget(**graph, target))
    return fail(s);
  // --dynamic-batch: the plan runs over slices of rows only if every op keeps them apart and
  // nothing depends on the batch size, which importing again at one more row shows.
  if (opts->dynamicBatch) {
    ImportOptions nextImport = opts->import;
    ++nextImport.batchSize;
    PipelineOptions quiet = opts->pipeline;
    quiet.printAfter.clear();
    auto next = importOnnxFile(opts->model, nextImport);
    if (!next)
      return fail(next.status());
    if (Status s = runPipeline(**next, quiet, passCtx))
      return fail(s);
    if (Status s = checkBatchRows(**graph, **next, codegenFacts.plannedBatch))
      return fail(s);
  }
  if (Status s = checkExecMode(**graph, opts->codegen.execMode))
    return fail(s);
  if (opts->printIr)
    std::fputs(printGraph(**graph).c_str(), stdout);
  if (opts->outDir.empty() && !opts->printMemoryPlan && !opts->report && opts->dumpGraph.empty() &&
      opts->dumpMemoryPlan.empty())
    return 0;
  Progress::phase("planning the activation arena");
  auto plan = referenceMemoryPlan(**graph, target, opts->codegen.leastMemory);
  if (!plan)
    return fail(plan.status());
  if (opts->printMemoryPlan)
    std::fputs(printMemoryPlan(*plan).c_str(), stdout);
  if (!opts->dumpGraph.empty())
    if (Status s = writeGraphPicture(opts->dumpGraph, graphDot(**graph, *plan)))
      return fail(s);
  if (!opts->dumpMemoryPlan.empty())
    if (Status s =
            writeFileAtomically(opts->dumpMemoryPlan, memoryPlanSvg(*plan, opts->codegen.name)))
      return fail(s);
  facts.arenaBytes = plan->arenaBytes;
  codegenFacts.arenaBytes = plan->arenaBytes;
  if (opts->codegen.noHeap) {
    auto structures =
        referenceStructureBytes(**graph, target, opts->codegen.leastMemory, plan->arenaBytes);
    if (!structures)
      return fail(structures.status());
    codegenFacts.structureBytes = *structures;
    facts.memoryBytes = noHeapMemoryBytes(codegenFacts);
  }
  const CodegenConfig config = resolveCodegen(**graph, opts->codegen, codegenFacts);
  Progress::phase("generating C");
  std::vector<GeneratedFile> files = generateC(**graph, config);
  facts.calls = odlaCalls(files, opts->codegen.name);
  facts.target = opts->triple;
  facts.weightsBlob = config.options.weights == WeightsMode::Bin;
  // Built for the model alone (NAME_reference.h) under --no-heap; otherwise every type.
  if (hasFootprintTable(target.backend, opts->triple))
    facts.footprint = backendFootprint(
        facts.calls, opts->codegen.noHeap ? referenceTypes(**graph) : std::vector<std::string>());
  if (opts->report)
    std::fputs(reportText(**graph, facts).c_str(), stdout);
  if (opts->outDir.empty())
    return 0;
  if (Status s = checkBudgets(**graph, *opts, facts))
    return fail(s);
  if (Status s = checkCStrings(**graph))
    return fail(s);
  files.push_back({opts->codegen.name + ".json", reportJson(**graph, facts)});
  if (triton) {
    auto extra = tritonVersionFiles(**graph, *opts);
    if (!extra)
      return fail(extra.status());
    files.insert(files.end(), extra->begin(), extra->end());
  }
  Progress::phase("writing " + opts->outDir);
  if (Status s = writeOutputs(**graph, *opts, config, files))
    return fail(s);
  // The model's config last: Triton sees the model once its version folder is complete.
  if (triton)
    if (Status s =
            writeFileAtomically(opts->triton.repo + "/" + opts->triton.name + "/config.pbtxt",
                                tritonConfig(**graph, *opts)))
      return fail(s);
  return 0;
}

int main(int argc, char **argv) {
  installCleanupHandlers();
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    // Library code reports errors as values; this catches what third-party code throws
    // (protobuf, libonnx) so that the user still gets a message and exit status 1.
    std::fprintf(stderr, "odlac: error: %s\n", printable(e.what()).c_str());
    return 1;
  }
}
