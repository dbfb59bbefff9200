// Writes NAME.h: the C API of the compiled model, and macros for every input and output (name,
// type, shape, sizes) and for memory (weights and arena bytes); and, with --no-heap,
// NAME_reference.h, the model's element types for a reference backend built for it alone.
#include "Emitter.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace odlac::emit {

namespace {

void portMacros(CWriter &w, const Emitter &e, const char *kind, size_t i, const Value *v) {
  std::string p = e.N + "_" + kind + "_" + std::to_string(i) + "_";
  std::string dims;
  for (size_t d = 0; d < v->dims().size(); ++d)
    dims += (d ? ", " : "") + std::to_string(v->dims()[d]);
  w.line("#define " + p + "NAME " + cString(v->name()));
  w.line("#define " + p + "ONNX_TYPE " + std::to_string(dtypeInfo(v->dtype()).onnxType) + " /* " +
         dtypeName(v->dtype()) + " */");
  w.line("#define " + p + "RANK " + std::to_string(v->type().rank()));
  w.line("#define " + p + "SHAPE {" + (dims.empty() ? "1" : dims) + "}" +
         (dims.empty() ? " /* scalar */" : ""));
  w.line("#define " + p + "COUNT " + std::to_string(v->type().numElements()));
  w.line("#define " + p + "BYTES " + std::to_string(v->type().byteSize()));
}

// --dim: the dims struct, each dim's range, and the shapes of the ports at given dims.
void symbolicDeclarations(CWriter &w, const Emitter &e) {
  const std::string &n = e.n, &N = e.N;
  const SymbolicCalls &sym = e.config.facts.symbolic;
  w.line("/* --dim: the symbolic dims, which each run sets within their ranges (" + n +
         "_run_shaped);");
  w.line(" * the shapes above hold the largest. */");
  w.open("typedef struct");
  for (const SymbolicDim &d : sym.dims)
    w.line("odla_int64 " + d.field + "; /* " + cComment(d.name) + " */");
  w.close("} " + n + "_dims;");
  for (const SymbolicDim &d : sym.dims) {
    w.line("#define " + N + "_DIM_" + d.field + "_MIN " + std::to_string(d.min));
    w.line("#define " + N + "_DIM_" + d.field + "_MAX " + std::to_string(d.max));
  }
  w.line("/* The shape of input (output) i at `dims`: fills shape[0..rank) and returns the rank;");
  w.line(" * -1 for no such port. */");
  w.line("int " + n + "_input_shape(const " + n + "_dims *dims, int i, odla_int64 *shape);");
  w.line("int " + n + "_output_shape(const " + n + "_dims *dims, int i, odla_int64 *shape);");
}

} // namespace

std::string header(const Emitter &e) {
  const std::string &n = e.n, &N = e.N;
  int64_t plannedBatch = e.config.facts.plannedBatch;
  CWriter w;
  std::string guard = N + "_H_";
  w.line(e.banner(n + ".h", "the C API of the compiled model.") + "#ifndef " + guard);
  w.line("#define " + guard);
  w.line();
  w.line("#include <ODLA/odla_common.h>");
  w.line();
  w.line("#ifdef __cplusplus");
  w.line("extern \"C\" {");
  w.line("#endif");
  w.line();
  w.line("#define " + N + "_NUM_INPUTS " + std::to_string(e.inputs.size()));
  w.line("#define " + N + "_NUM_OUTPUTS " + std::to_string(e.outputs.size()));
  for (size_t i = 0; i < e.inputs.size(); ++i)
    portMacros(w, e, "INPUT", i, e.inputs[i].value);
  for (size_t i = 0; i < e.outputs.size(); ++i)
    portMacros(w, e, "OUTPUT", i, e.outputs[i].value);
  w.line("/* Bytes of constant data (weights), and of the activation arena each instance uses. */");
  w.line("#define " + N + "_WEIGHTS_BYTES " + std::to_string(e.totalWeights));
  w.line("#define " + N + "_ARENA_BYTES " + std::to_string(e.config.facts.arenaBytes));
  if (e.noHeap()) {
    w.line("/* --no-heap: the bytes " + n + "_create_in needs: alignment (63), the instance (64),");
    w.line(" * the arena (rounded up to 64) and the backend's structures (" +
           std::to_string(e.config.facts.structureBytes) + " bytes for the reference");
    w.line(" * backend on a 64-bit host, as many as a 32-bit target needs or more). */");
    w.line("#define " + N + "_MEMORY_BYTES " + std::to_string(noHeapMemoryBytes(e.config.facts)));
  }
  if (plannedBatch) {
    w.line("/* --dynamic-batch: the leading dim of every input and output is the batch; the");
    w.line(" * shapes above hold the rows the code is planned for, " + n +
           "_run_batch runs any number. */");
    w.line("#define " + N + "_BATCH_SIZE " + std::to_string(plannedBatch));
  }
  if (e.bin()) {
    w.line("/* The weights blob this code expects (" + n + ".weights.bin). */");
    w.line("#define " + N + "_WEIGHTS_FILE " + cString(n + ".weights.bin"));
  }
  if (e.config.options.execMode == ExecMode::Load) {
    w.line("/* The stored executable load mode's " + n + "_create loads, as " + n +
           "_store writes it. */");
    w.line("#define " + N + "_EXECUTABLE_FILE " + cString(n + ".odlx"));
  }
  if (e.symbolic())
    symbolicDeclarations(w, e);
  w.line();
  w.line("/* An instance owns its ODLA computation and context. Instances are independent;");
  w.line(" * one instance runs one inference at a time. Functions return an odla_status:");
  w.line(" * 0 (ODLA_SUCCESS) on success. Build instances one at a time per thread, since ODLA");
  w.line(" * op builders act on the thread's current computation. */");
  w.line("typedef struct " + n + "_instance " + n + "_instance;");
  w.line();
  e.mode.declare(w, e);
  if (e.noHeap()) {
    w.line("/* --no-heap: the instance, its arena and every structure the backend makes for it");
    w.line(" * live in `memory` (" + N + "_MEMORY_BYTES, any alignment; ODLA_MEM_ERROR when too");
    w.line(" * small), which stays the instance's until " + n +
           "_destroy. Nothing is taken from the heap. */");
  }
  w.line(e.createSignature() + ";");
  w.line("/* Runs one inference: inputs and outputs are dense row-major arrays of the sizes "
         "above. */");
  w.line(e.runSignature() + ";");
  if (plannedBatch) {
    w.line("/* Runs `batch` rows (1 or more): each input and output holds `batch` times the");
    w.line(" * elements of one row (the _COUNT above over " + N +
           "_BATCH_SIZE). Rows are computed");
    w.line(" * independently: row i of the outputs is what a run of row i alone gives. */");
    w.line(e.runSignature(true) + ";");
  }
  if (e.symbolic()) {
    w.line("/* Runs one inference at `dims`, each within its range (else ODLA_INVALID_PARAM):");
    w.line(" * inputs and outputs hold the elements of their shapes at those dims (" + n +
           "_input_shape,");
    w.line(" * " + n + "_output_shape). A run at other dims than the last builds the computation");
    w.line(" * again for them; " + n + "_run runs the largest. */");
    w.line(e.runSignature(false, true) + ";");
  }
  w.line("void " + n + "_destroy(" + n + "_instance *inst);");
  w.line();
  w.line("/* One-call convenience API over a process-wide instance (not thread-safe). */");
  std::string path = e.pathParam();
  w.line("int " + n + "_init(" + (path.empty() ? std::string("void") : "const char *" + path) +
         ");");
  w.line(e.oneCallSignature() + ";");
  w.line("void " + n + "_fini(void);");
  w.line();
  w.line("#ifdef __cplusplus");
  w.line("}");
  w.line("#endif");
  w.line();
  w.line("#endif /* " + guard + " */");
  return w.str();
}

std::string referenceConfig(const Emitter &e) {
  std::string out = e.banner(e.n + "_reference.h",
                             "the element types of the model, for a reference backend built for "
                             "it alone:\n * compile the backend's sources with "
                             "-DODLA_REFERENCE_CONFIG='\"" +
                                 e.n +
                                 "_reference.h\"' (this folder on the\n * include path) and they "
                                 "instantiate no kernel of another type (docs/backends.md).");
  std::vector<std::string> types = referenceTypes(e.graph);
  if (types.empty())
    return out + "\n/* The model has types outside ODLA_REFERENCE_WITH_<TYPE>: every kernel is "
                 "kept. */\n";
  out += "\n#define ODLA_REFERENCE_ONLY_TYPES\n";
  for (std::string name : types) {
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    out += "#define ODLA_REFERENCE_WITH_" + name + "\n";
  }
  return out;
}

} // namespace odlac::emit
