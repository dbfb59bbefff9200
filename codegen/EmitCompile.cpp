// Writes compile mode's instance API (--exec-mode=compile): NAME.c, whose NAME_create builds
// the computation and compiles it once, and whose NAME_run (and, with --dynamic-batch,
// NAME_run_batch) executes it.
#include "Emitter.h"

#include <algorithm>

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

// --dim: what the instance keeps for the constants that depend on the dims (filled by NAME_build
// for each run's dims: PrintSink::setSymbolic), and the copier of leading blocks.
void shapeData(CWriter &w, const Emitter &e, const GraphFunction &fn) {
  const std::string &n = e.n;
  w.line("/* --dim: the constants " + n +
         "_build makes for the run's dims: shape tensors, and the");
  w.line(" * leading blocks of constants whose data at the largest dims holds them. */");
  w.open("typedef struct");
  w.line("odla_int64 i64[" + std::to_string(std::max(1, fn.shapeI64)) + "];");
  w.line("odla_int32 i32[" + std::to_string(std::max(1, fn.shapeI32)) + "];");
  w.line("odla_int64 blocks[" + std::to_string(std::max<uint64_t>(1, fn.blockBytes / 8)) +
         "]; /* 64-byte steps */");
  w.close("} " + n + "_shape_data_;");
  w.line();
  if (!fn.blockBytes)
    return;
  w.line("/* Copies the block of `src` (dims `top`) that `dims` cover, row by row, to `dst`. */");
  w.open("static void " + n +
         "_sub_block_(unsigned char *dst, const void *src, size_t elem, int rank, "
         "const odla_int64 *top, const odla_int64 *dims)");
  w.line("odla_int64 rows = 1, r;");
  w.line("int d;");
  w.line("for (d = 0; d + 1 < rank; ++d)");
  w.line("  rows *= dims[d];");
  w.open("for (r = 0; r < rows; ++r)");
  w.line("odla_int64 at = 0, rest = r, stride = 1;");
  w.open("for (d = rank - 2; d >= 0; --d)");
  w.line("at += rest % dims[d] * stride;");
  w.line("rest /= dims[d];");
  w.line("stride *= top[d];");
  w.close();
  w.line("memcpy(dst + (size_t)(r * dims[rank - 1]) * elem,");
  w.line("       (const unsigned char *)src + (size_t)(at * top[rank - 1]) * elem,");
  w.line("       (size_t)dims[rank - 1] * elem);");
  w.close();
  w.close();
  w.line();
}

// --dim: the largest dims, the range check, the shapes of the ports at given dims, and the
// function that builds the computation again for other dims (destroying what it had).
void symbolicFunctions(CWriter &w, const Emitter &e, const std::vector<std::string> &buildSteps) {
  const std::string &n = e.n, &N = e.N;
  const SymbolicCalls &sym = e.config.facts.symbolic;
  std::string largest, check;
  for (const SymbolicDim &d : sym.dims) {
    largest += (largest.empty() ? "" : ", ") + std::to_string(d.max);
    check += std::string(check.empty() ? "" : " &&\n         ") + "dims->" + d.field + " >= " + N +
             "_DIM_" + d.field + "_MIN && dims->" + d.field + " <= " + N + "_DIM_" + d.field +
             "_MAX";
  }
  w.line("static const " + n + "_dims " + n + "_largest_ = {" + largest + "};");
  w.line();
  w.open("static int " + n + "_dims_in_range_(const " + n + "_dims *dims)");
  w.line("return dims &&\n         " + check + ";");
  w.close();
  w.line();
  for (int output = 0; output < 2; ++output) {
    const auto &ports = output ? sym.outputDims : sym.inputDims;
    w.open(std::string("int ") + n + (output ? "_output_shape(" : "_input_shape(") + "const " + n +
           "_dims *dims_, int i, odla_int64 *shape)");
    w.open("switch (i)");
    for (size_t i = 0; i < ports.size(); ++i) {
      w.line("case " + std::to_string(i) + ":");
      for (size_t d = 0; d < ports[i].size(); ++d)
        w.line("  shape[" + std::to_string(d) + "] = " + dimExpression(ports[i][d], sym) + ";");
      w.line("  return " + std::to_string(ports[i].size()) + ";");
    }
    w.line("default:");
    w.line("  return -1;");
    w.close();
    w.close();
    w.line();
  }
  w.line("/* Builds the computation for `dims` (in range) and makes it the instance's, destroying");
  w.line(" * the one before, which stays alive while the new one is built: a backend may share");
  w.line(" * what both make of the same weights. After a failure the instance holds what was");
  w.line(" * built and no dims (its shape data was overwritten): the next run builds again. */");
  w.open("static odla_status " + n + "_specialize_(" + n + "_instance *inst, const " + n +
         "_dims *dims)");
  w.line("odla_status s;");
  w.line("static const " + n + "_dims none = {0};");
  std::vector<std::pair<std::string, std::string>> handles = {{"ctx", "odla_DestroyContext"},
                                                              {"exec", "odla_DestroyExecutable"},
                                                              {"comp", "odla_DestroyComputation"}};
  if (!e.config.facts.calls.compileStep)
    handles.erase(handles.begin() + 1);
  for (auto it = handles.rbegin(); it != handles.rend(); ++it)
    w.line(std::string(it->first == "comp"   ? "odla_computation"
                       : it->first == "exec" ? "odla_executable"
                                             : "odla_context") +
           " new_" + it->first + " = NULL;");
  for (size_t i = 0; i < buildSteps.size(); ++i) {
    if (i)
      w.line("if (s == ODLA_SUCCESS)");
    w.line(std::string(i ? "  " : "") + "s = " + buildSteps[i] + ";");
  }
  w.line("inst->dims = none;");
  for (const auto &[field, destroy] : handles) {
    w.open("if (inst->" + field + ")");
    w.line(destroy + "(inst->" + field + ");");
    w.close();
    w.line("inst->" + field + " = new_" + field + ";");
  }
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  inst->dims = *dims;");
  w.line("return s;");
  w.close();
  w.line();
}

void sources(const Emitter &e, std::vector<GeneratedFile> &files) {
  const std::string &n = e.n, &N = e.N;
  bool batch = e.config.facts.plannedBatch != 0, compileStep = e.config.facts.calls.compileStep;
  bool symbolic = e.symbolic();
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
  // The steps that build and compile the computation: in NAME_create, or with --dim in
  // NAME_specialize_, which each run with other dims calls again.
  std::vector<std::string> build;
  // With --dim, NAME_specialize_ builds into handles of its own (h: "new_"), then replaces the
  // instance's.
  std::string h = symbolic ? "new_" : "inst->";
  build.push_back("odla_CreateComputation(&" + h + "comp)");
  if (e.config.options.leastMemory)
    build.push_back("odla_SetComputationItem(" + h + "comp, ODLA_EXT_ITEM_LEAST_MEMORY, " +
                    "(odla_item_value)&" + n + "_least_memory_)");
  if (e.noHeap())
    build.push_back("odla_SetComputationItem(" + h + "comp, ODLA_EXT_ITEM_STATIC_IDS, " +
                    "(odla_item_value)&" + n + "_static_ids_)");
  std::string weightsArg = e.bin() ? "inst->weights" : "";
  build.push_back(
      n + "_build(" + weightsArg +
      (symbolic ? std::string(weightsArg.empty() ? "" : ", ") + "dims, &inst->shape_data" : "") +
      ")");
  if (batch)
    build.push_back(n + "_batch_items(" + h + "comp)");
  if (compileStep)
    build.push_back("odla_CompileComputation(" + h + "comp, NULL, &" + h + "exec)");
  build.push_back("odla_CreateContext(&" + h + "ctx)");
  if (symbolic) {
    parts.fields.push_back(n + "_dims dims; /* the dims the computation is built for */");
    parts.fields.push_back(n + "_shape_data_ shape_data; /* the constants that depend on them */");
    parts.steps.push_back(n + "_specialize_(inst, &" + n + "_largest_)");
  } else {
    parts.steps.insert(parts.steps.end(), build.begin(), build.end());
  }
  if (symbolic)
    shapeData(w, e, fn);
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
  if (symbolic)
    symbolicFunctions(w, e, build);
  e.writeCreateDestroy(w, parts);
  // --no-heap: the function that binds and executes is a static helper, which the public one
  // calls with the instance's region current (the first run's bindings allocate there).
  std::string body = e.runSignature(batch, symbolic);
  std::string helper = n + (batch ? "_run_batch" : "_run") + "_in_region_";
  if (e.noHeap())
    body = "static int " + helper + body.substr(body.find('('));
  if (batch || symbolic) {
    w.open(e.runSignature());
    w.line("return " + n +
           (batch ? "_run_batch(inst, " + N + "_BATCH_SIZE"
                  : "_run_shaped(inst, &" + n + "_largest_") +
           e.portArgs() + ");");
    w.close();
    w.line();
  }
  w.open(body);
  if (batch) {
    w.line("odla_int32 rows_ = batch;");
    w.line(N + "_CHECK(odla_SetContextItem(inst->ctx, ODLA_RUN_BATCH_SIZE, "
               "(odla_item_value)&rows_));");
  }
  if (symbolic) {
    w.line("if (!" + n + "_dims_in_range_(dims))");
    w.line("  return ODLA_INVALID_PARAM;");
    std::string same;
    for (const SymbolicDim &d : e.config.facts.symbolic.dims)
      same += (same.empty() ? "" : " || ") + std::string("dims->") + d.field + " != inst->dims." +
              d.field;
    w.line("if (" + same + ")");
    w.line("  " + N + "_CHECK(" + n + "_specialize_(inst, dims));");
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
