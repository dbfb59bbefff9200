// Writes compile mode's instance API (--exec-mode=compile): NAME.c, whose NAME_create builds
// the computation and compiles it once, and whose NAME_run (and, with --dynamic-batch,
// NAME_run_batch) executes it.
#include "Emitter.h"

namespace odlac::emit {

namespace {

void declare(CWriter &w, const Emitter &e) {
  if (e.bin())
    w.line("/* Loads the weights from `weights_path` (" + e.n +
           ".weights.bin) and builds the computation. */");
  else
    w.line("/* Builds the computation over the weights compiled into " + e.weightsDefinedIn() +
           ". */");
}

// --dynamic-batch: the computation items saying that rows are independent (odlac checked
// every op, passes/BatchRows.h) and how many the plan holds.
void batchItems(CWriter &w, const Emitter &e) {
  const std::string &N = e.N;
  w.line("/* --dynamic-batch: odlac checked that every op keeps the batch rows apart, so the");
  w.line(" * backend may run any batch over slices of " + N + "_BATCH_SIZE rows. */");
  w.open("static odla_status " + e.n + "_batch_items(odla_computation comp)");
  w.line("odla_bool dynamic = 1;");
  w.line("odla_int32 min_batch = 1, opt_batch = " + N + "_BATCH_SIZE;");
  w.line(N + "_CHECK(odla_SetComputationItem(comp, ODLA_DYNAMIC_BATCH, "
             "(odla_item_value)&dynamic));");
  w.line(N + "_CHECK(odla_SetComputationItem(comp, ODLA_MIN_BATCH_SIZE, "
             "(odla_item_value)&min_batch));");
  w.line("return odla_SetComputationItem(comp, ODLA_OPT_BATCH_SIZE, (odla_item_value)&opt_batch);");
  w.close();
  w.line();
}

void sources(const Emitter &e, std::vector<GeneratedFile> &files) {
  const std::string &n = e.n, &N = e.N;
  bool batch = e.config.facts.plannedBatch != 0, compileStep = e.config.facts.calls.compileStep;
  GraphFunction fn = graphFunction(e, false);
  CWriter w;
  e.prelude(w, n + ".c", "builds the model's computation through the ODLA API and runs it.", &fn,
            e.noHeap() || e.config.options.leastMemory);
  InstanceParts parts;
  parts.handles.push_back({"odla_computation", "comp", "odla_DestroyComputation"});
  if (compileStep)
    parts.handles.push_back({"odla_executable", "exec", "odla_DestroyExecutable"});
  parts.handles.push_back({"odla_context", "ctx", "odla_DestroyContext"});
  parts.weights = e.bin();
  if (e.bin())
    parts.steps.push_back(n + "_load_weights(weights_path, &inst->weights)");
  parts.steps.push_back("odla_CreateComputation(&inst->comp)");
  if (e.config.options.leastMemory)
    parts.steps.push_back("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_LEAST_MEMORY, "
                          "(odla_item_value)&" +
                          n + "_least_memory_)");
  if (e.noHeap())
    parts.steps.push_back("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_STATIC_IDS, "
                          "(odla_item_value)&" +
                          n + "_static_ids_)");
  parts.steps.push_back(n + "_build(" + (e.bin() ? "inst->weights" : "") + ")");
  if (batch)
    parts.steps.push_back(n + "_batch_items(inst->comp)");
  if (compileStep)
    parts.steps.push_back("odla_CompileComputation(inst->comp, NULL, &inst->exec)");
  parts.steps.push_back("odla_CreateContext(&inst->ctx)");
  e.writeInstanceStruct(w, parts);
  if (e.config.options.leastMemory) {
    w.line("/* --memory=least: kernels that need the least scratch. */");
    w.line("static odla_bool " + n + "_least_memory_ = 1;");
    w.line();
  }
  if (e.noHeap()) {
    w.line("/* --no-heap: the value ids below are literals, kept by pointer (no copies in the");
    w.line(" * instance's memory). */");
    w.line("static odla_bool " + n + "_static_ids_ = 1;");
    w.line();
  }
  if (e.bin())
    writeBlobLoader(w, e);
  w.line("/* Records the model on the current computation, one ODLA call per statement. */");
  w.line(fn.text);
  w.line();
  if (batch)
    batchItems(w, e);
  e.writeCreateDestroy(w, parts);
  // --no-heap: the function that binds and executes is a static helper, which the public one
  // calls with the instance's region current (the first run's bindings allocate there).
  std::string body = batch ? e.runSignature(true) : e.runSignature();
  std::string helper = n + (batch ? "_run_batch" : "_run") + "_in_region_";
  if (e.noHeap())
    body = "static int " + helper + body.substr(body.find('('));
  if (batch) {
    w.open(e.runSignature());
    w.line("return " + n + "_run_batch(inst, " + N + "_BATCH_SIZE" + e.portArgs() + ");");
    w.close();
    w.line();
  }
  w.open(body);
  if (batch) {
    w.line("odla_int32 rows_ = batch;");
    w.line(N + "_CHECK(odla_SetContextItem(inst->ctx, ODLA_RUN_BATCH_SIZE, "
               "(odla_item_value)&rows_));");
  }
  e.bindPorts(w, fn.ids);
  w.line("return odla_ExecuteComputation(inst->comp, inst->ctx, ODLA_COMPUTE_INFERENCE, NULL);");
  w.close();
  w.line();
  if (e.noHeap()) {
    w.open(batch ? e.runSignature(true) : e.runSignature());
    w.line("int s = odla_ExtSetMemory(inst->region, inst->region_bytes);");
    w.line("if (s == ODLA_SUCCESS)");
    w.line("  s = " + helper + "(inst" + std::string(batch ? ", batch" : "") + e.portArgs() + ");");
    w.line("odla_ExtSetMemory(NULL, 0);");
    w.line("return s;");
    w.close();
    w.line();
  }
  e.writeOneCallApi(w);
  files.push_back({n + ".c", w.str()});
}

} // namespace

const ExecModeParts kCompileParts{declare, sources};

} // namespace odlac::emit
