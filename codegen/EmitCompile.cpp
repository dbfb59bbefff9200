// Writes compile mode's instance API (--exec-mode=compile): NAME.c, whose NAME_create builds
// the computation and compiles it once, and whose NAME_run (and, with --dynamic-batch,
// NAME_run_batch) executes it.
#include "Emitter.h"

#include <algorithm>
#include <cstdio>

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

// --memory=least: the computation item's value, which NAME_create (or each stage) sets.
void leastMemoryItem(CWriter &w, const Emitter &e) {
  if (!e.config.options.leastMemory)
    return;
  w.line("/* --memory=least: kernels that need the least scratch. */");
  w.line("static odla_bool " + e.n + "_least_memory_ = 1;");
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

// --dim: the largest dims, the range check, and the shapes of the ports at given dims.
void dimsFunctions(CWriter &w, const Emitter &e) {
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
}

std::string hexMask(unsigned m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%xu", m);
  return buf;
}

// --dim: NAME.c with the computation in stages (StagedBuild): each run builds again the
// stages whose dims changed, right before it executes them.
void stagedSources(const Emitter &e, std::vector<GeneratedFile> &files) {
  const std::string &n = e.n, &N = e.N;
  const SymbolicCalls &sym = e.config.facts.symbolic;
  bool compileStep = e.config.facts.calls.compileStep;
  StagedBuild sb = stagedBuild(e);
  const GraphFunction &fn = sb.fn;
  size_t stages = sb.stages.size(), crossings = sb.crossings.size();
  // Where a crossing's bytes are: the instance's buffer, the caller's output, or a block of one.
  auto place = [&](size_t k) -> std::string {
    const Crossing &x = sb.crossings[k];
    if (x.output >= 0)
      return e.outputs[static_cast<size_t>(x.output)].param;
    if (x.into >= 0)
      return "(unsigned char *)" + e.outputs[static_cast<size_t>(x.into)].param + " + (" + x.at +
             ")";
    return "inst->cross[" + std::to_string(k) + "].data";
  };
  auto buffered = [](const Crossing &x) { return x.output < 0 && x.into < 0; };
  bool buffers = std::any_of(sb.crossings.begin(), sb.crossings.end(), buffered);
  bool blocks = std::any_of(sb.crossings.begin(), sb.crossings.end(), [](const Crossing &x) {
    return x.into >= 0 && x.at.find("dims_->") != std::string::npos;
  });
  CWriter w;
  e.prelude(w, n + ".c", "builds the model's computation through the ODLA API and runs it.", &fn,
            e.config.options.leastMemory);
  shapeData(w, e, fn);
  w.line("/* A stage: a computation of its own, built for the dims of the run before. */");
  w.open("typedef struct");
  w.line("odla_computation comp;");
  if (compileStep)
    w.line("odla_executable exec;");
  w.line("odla_context ctx;");
  w.close("} " + n + "_stage_;");
  w.line();
  if (crossings) {
    w.line("/* A value one stage makes and later ones read, through the buffer both bind (the");
    w.line(" * caller's, for a graph output). */");
    w.open("typedef struct");
    w.line("odla_value value; /* in the stage that makes it */");
    w.line("void *data;");
    w.line("size_t bytes;");
    w.close("} " + n + "_cross_;");
    w.line();
  }
  InstanceParts parts;
  parts.weights = e.bin();
  if (e.bin())
    parts.steps.push_back(n + "_load_weights(weights_path, &inst->weights)");
  parts.steps.push_back(n + "_build_all_(inst)");
  parts.fields.push_back(n + "_stage_ stage[" + std::to_string(stages) + "];");
  if (crossings)
    parts.fields.push_back(n + "_cross_ cross[" + std::to_string(crossings) + "];");
  parts.fields.push_back(n + "_dims dims; /* the dims the stages are built for */");
  parts.fields.push_back("int built;      /* whether every stage is built for them */");
  parts.fields.push_back(n + "_shape_data_ shape_data; /* the constants that depend on them */");
  parts.release.push_back("{");
  parts.release.push_back("  int i;");
  parts.release.push_back("  for (i = 0; i < " + std::to_string(stages) + "; ++i)");
  parts.release.push_back("    " + n + "_release_(&inst->stage[i]);");
  if (buffers) {
    parts.release.push_back("  for (i = 0; i < " + std::to_string(crossings) + "; ++i)");
    parts.release.push_back("    free(inst->cross[i].data);");
  }
  parts.release.push_back("}");
  e.writeInstanceStruct(w, parts);
  leastMemoryItem(w, e);
  if (e.bin())
    writeBlobLoader(w, e);
  w.line("/* Each stage records its calls on the current computation, one ODLA call per");
  w.line(" * statement. */");
  w.line(fn.text.substr(0, fn.text.size() - 1));
  w.open("static odla_status (*const " + n + "_stage_build_[" + std::to_string(stages) + "])(" + n +
         "_instance *, const " + n + "_dims *) =");
  std::string list;
  for (size_t s = 0; s < stages; ++s)
    list += (s ? ", " : "") + n + "_stage_" + std::to_string(s) + "_";
  w.line(list);
  w.close("};");
  w.line();
  w.open("static void " + n + "_release_(" + n + "_stage_ *st)");
  w.line("if (st->ctx)");
  w.line("  odla_DestroyContext(st->ctx);");
  if (compileStep) {
    w.line("if (st->exec)");
    w.line("  odla_DestroyExecutable(st->exec);");
  }
  w.line("if (st->comp)");
  w.line("  odla_DestroyComputation(st->comp);");
  w.close();
  w.line();
  if (buffers) {
    w.line("/* The bytes of an element of a value that crosses stages (odlac keeps strings and");
    w.line(" * the extension's types in one stage). */");
    w.open("static size_t " + n + "_element_bytes_(odla_element_type t)");
    w.open("switch (t)");
    w.line("case ODLA_INT8: case ODLA_UINT8: case ODLA_QINT8: case ODLA_QUINT8: case ODLA_BOOL:");
    w.line("  return 1;");
    w.line("case ODLA_INT16: case ODLA_UINT16: case ODLA_QINT16: case ODLA_QUINT16:");
    w.line("case ODLA_FLOAT16: case ODLA_BFLOAT16:");
    w.line("  return 2;");
    w.line("case ODLA_INT32: case ODLA_UINT32: case ODLA_QINT32: case ODLA_QUINT32:");
    w.line("case ODLA_FLOAT32:");
    w.line("  return 4;");
    w.line("case ODLA_INT64: case ODLA_UINT64: case ODLA_QINT64: case ODLA_QUINT64:");
    w.line("case ODLA_FLOAT64:");
    w.line("  return 8;");
    w.line("default:");
    w.line("  return 0;");
    w.close();
    w.close();
    w.line();
    w.line(
        "/* Grows the buffers of the values stage `i` makes for later stages to their sizes. */");
    w.open("static odla_status " + n + "_grow_(" + n + "_instance *inst, int i)");
    std::string producers;
    for (const Crossing &x : sb.crossings)
      producers += (producers.empty() ? "" : ", ") + std::to_string(buffered(x) ? x.stage : stages);
    w.line("static const int stage_of[" + std::to_string(crossings) + "] = {" + producers + "};");
    w.line("int k, d;");
    w.open("for (k = 0; k < " + std::to_string(crossings) + "; ++k)");
    w.line(n + "_cross_ *x = &inst->cross[k];");
    w.line("odla_value_type t;");
    w.line("size_t bytes;");
    w.line("odla_status s;");
    w.line("if (stage_of[k] != i)");
    w.line("  continue;");
    w.line("s = odla_GetValueType(x->value, &t);");
    w.line("if (s != ODLA_SUCCESS)");
    w.line("  return s;");
    w.line("bytes = " + n + "_element_bytes_(t.element_type);");
    w.line("if (!bytes)");
    w.line("  return ODLA_UNSUPPORTED_DATATYPE;");
    w.line("for (d = 0; d < t.shape.size; ++d)");
    w.line("  bytes *= (size_t)t.shape.dims[d];");
    w.open("if (!x->data || bytes > x->bytes)");
    w.line("/* an eighth to spare: dims that grow a step at a time (a decoder's past) */");
    w.line("size_t want = bytes < 64 ? 64 : bytes + bytes / 8;");
    w.line("void *p = realloc(x->data, want);");
    w.line("if (!p)");
    w.line("  return ODLA_MEM_ERROR;");
    w.line("x->data = p;");
    w.line("x->bytes = want;");
    w.close();
    w.close();
    w.line("return ODLA_SUCCESS;");
    w.close();
    w.line();
  }
  w.line("/* Builds stage `i` for `dims` in place of what it had: the new computation before the");
  w.line(
      " * old one is destroyed (a backend may share what both make of the same weights), the old");
  w.line(" * context before the new one runs (its memory goes back to the backend for the new "
         "one). */");
  w.open("static odla_status " + n + "_rebuild_(" + n + "_instance *inst, int i, const " + n +
         "_dims *dims)");
  w.line(n + "_stage_ old = inst->stage[i], *st = &inst->stage[i];");
  w.line("odla_status s;");
  w.line("static const " + n + "_stage_ none;");
  w.line("*st = none;");
  w.line("s = odla_CreateComputation(&st->comp);");
  if (e.config.options.leastMemory) {
    w.line("if (s == ODLA_SUCCESS)");
    w.line(
        "  s = odla_SetComputationItem(st->comp, ODLA_EXT_ITEM_LEAST_MEMORY, (odla_item_value)&" +
        n + "_least_memory_);");
  }
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = " + n + "_stage_build_[i](inst, dims);");
  if (compileStep) {
    w.line("if (s == ODLA_SUCCESS)");
    w.line("  s = odla_CompileComputation(st->comp, NULL, &st->exec);");
  }
  w.line(n + "_release_(&old);");
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = odla_CreateContext(&st->ctx);");
  if (buffers) {
    w.line("if (s == ODLA_SUCCESS)");
    w.line("  s = " + n + "_grow_(inst, i);");
  }
  w.line("return s;");
  w.close();
  w.line();
  dimsFunctions(w, e);
  w.line("/* The dims (bit i: field i of " + n + "_dims) that differ from those the stages are");
  w.line(" * built for; all when they are not. */");
  w.open("static unsigned " + n + "_changed_(const " + n + "_instance *inst, const " + n +
         "_dims *dims)");
  w.line("unsigned c = 0;");
  w.line("if (!inst->built)");
  w.line("  return ~0u;");
  for (size_t d = 0; d < sym.dims.size(); ++d) {
    w.line("if (dims->" + sym.dims[d].field + " != inst->dims." + sym.dims[d].field + ")");
    w.line("  c |= " + hexMask(1u << d) + ";");
  }
  w.line("return c;");
  w.close();
  w.line();
  w.line("/* NAME_create's build: every stage, at the largest dims. */");
  w.open("static odla_status " + n + "_build_all_(" + n + "_instance *inst)");
  w.line("odla_status s = ODLA_SUCCESS;");
  w.line("int i;");
  w.line("for (i = 0; i < " + std::to_string(stages) + " && s == ODLA_SUCCESS; ++i)");
  w.line("  s = " + n + "_rebuild_(inst, i, &" + n + "_largest_);");
  w.line("inst->dims = " + n + "_largest_;");
  w.line("inst->built = s == ODLA_SUCCESS;");
  w.line("return s;");
  w.close();
  w.line();
  e.writeCreateDestroy(w, parts);
  w.open(e.runSignature());
  w.line("return " + n + "_run_shaped(inst, &" + n + "_largest_" + e.portArgs() + ");");
  w.close();
  w.line();
  w.open(e.runSignature(false, true));
  w.line("unsigned changed;");
  if (blocks)
    w.line("const " + n + "_dims *dims_ = dims; /* where the parts of an output's Concat go */");
  w.line("if (!" + n + "_dims_in_range_(dims))");
  w.line("  return ODLA_INVALID_PARAM;");
  w.line("changed = " + n + "_changed_(inst, dims);");
  w.line("if (changed)");
  w.line("  inst->built = 0; /* until every stage is built for `dims` */");
  ValueIds &ids = const_cast<ValueIds &>(fn.ids);
  for (size_t s = 0; s < stages; ++s) {
    const BuildStage &st = sb.stages[s];
    std::string S = std::to_string(s), ctx = "inst->stage[" + S + "].ctx";
    w.line("/* stage " + S + " */");
    w.line("if (!" + ctx + (st.dims ? " || (changed & " + hexMask(st.dims) + ")" : "") + ")");
    w.line("  " + N + "_CHECK(" + n + "_rebuild_(inst, " + S + ", dims));");
    for (size_t i : st.inputs)
      w.line(N + "_CHECK(odla_BindToArgumentById(" + ids.literal(e.inputs[i].value->name()) + ", " +
             e.inputs[i].param + ", " + ctx + "));");
    for (size_t k : st.crossIn)
      w.line(N + "_CHECK(odla_BindToArgumentById(" + sb.crossings[k].id + ", " + place(k) + ", " +
             ctx + "));");
    for (size_t o : st.outputs)
      w.line(N + "_CHECK(odla_BindToOutputById(" + ids.literal(e.outputs[o].value->name()) + ", " +
             e.outputs[o].param + ", " + ctx + "));");
    for (size_t k : st.crossOut)
      if (sb.crossings[k].output < 0)
        w.line(N + "_CHECK(odla_BindToOutputById(" + sb.crossings[k].id + ", " + place(k) + ", " +
               ctx + "));");
    w.line(N + "_CHECK(odla_ExecuteComputation(inst->stage[" + S + "].comp, " + ctx +
           ", ODLA_COMPUTE_INFERENCE, NULL));");
  }
  w.line("inst->dims = *dims;");
  w.line("inst->built = 1;");
  w.line("return ODLA_SUCCESS;");
  w.close();
  w.line();
  e.writeOneCallApi(w);
  files.push_back({n + ".c", w.str()});
}

void sources(const Emitter &e, std::vector<GeneratedFile> &files) {
  if (e.symbolic()) {
    stagedSources(e, files);
    return;
  }
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
  // The steps that build and compile the computation in NAME_create.
  parts.steps.push_back("odla_CreateComputation(&inst->comp)");
  if (e.config.options.leastMemory)
    parts.steps.push_back("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_LEAST_MEMORY, "
                          "(odla_item_value)&" +
                          n + "_least_memory_)");
  if (e.noHeap()) {
    parts.steps.push_back("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_STATIC_IDS, "
                          "(odla_item_value)&" +
                          n + "_static_ids_)");
    // The arena's room, which no context uses until NAME_create_in has compiled (its
    // odla_ExtGetArenaBytes compiles at the latest), holds compiling's temporaries.
    parts.steps.push_back("odla_SetComputationItem(inst->comp, ODLA_EXT_ITEM_COMPILE_SCRATCH, "
                          "(odla_item_value)&arena)");
  }
  parts.steps.push_back(n + "_build(" + (e.bin() ? "inst->weights" : "") + ")");
  if (batch)
    parts.steps.push_back(n + "_batch_items(inst->comp)");
  if (compileStep)
    parts.steps.push_back("odla_CompileComputation(inst->comp, NULL, &inst->exec)");
  parts.steps.push_back("odla_CreateContext(&inst->ctx)");
  e.writeInstanceStruct(w, parts);
  leastMemoryItem(w, e);
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
  std::string body = e.runSignature(batch);
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
