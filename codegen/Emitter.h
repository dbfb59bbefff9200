// What the parts of the C emitter share (internal to codegen): the graph and its config, where
// each weight lives, the ports, and the text that several generated files have in common
// (banner, signatures, prelude, an instance's lifecycle, the one-call API). Each Emit*.cpp
// writes one kind of file from an Emitter; generateC (Emitter.cpp) puts them together.
#pragma once

#include "CWriter.h"
#include "Codegen.h"
#include "PrintSink.h"
#include "lower/Lowering.h"

#include <string>
#include <vector>

namespace odlac::emit {

constexpr uint64_t kBlobHeader = 64; // bytes before the first tensor in a weights blob
constexpr uint64_t kBlobAlign = 64;

// Where each constant lives: a C array symbol, or an offset in the blob.
struct WeightSlot {
  const Value *value;
  std::string symbol;  // C mode: the array's name
  uint64_t offset = 0; // Bin mode: from the start of the payload
};

struct Port { // a graph input or output as the API exposes it
  const Value *value;
  std::string param; // C parameter name
};

// The function that records the model on the current computation (EmitBuilder.cpp), with what
// its text needs included.
struct GraphFunction {
  std::string text;
  bool usesMath = false, usesExtensions = false;
  int typeSlots = 0, shapeSlots = 0; // its locals types_[] and shapes_[] (shapeHelpers)
  ValueIds ids; // how the function wrote each value id, for the calls that bind them
  int shapeI64 = 0, shapeI32 = 0; // --dim: the elements its shape constants take
  uint64_t blockBytes = 0;        // and the bytes of the blocks it copies (PrintSink::subBlock)
};

// What an exec mode's instance holds, and how NAME_create makes it: writeInstanceStruct and
// writeCreateDestroy write every mode's struct, NAME_create and NAME_destroy from it.
struct InstanceParts {
  struct Handle {
    std::string type, field, destroy; // e.g. odla_context, ctx, odla_DestroyContext
  };
  std::vector<Handle> handles;      // in the struct's order; NAME_destroy releases them in reverse
  bool weights = false;             // holds the weights blob, freed last
  std::vector<std::string> locals;  // NAME_create's locals beside inst and s
  std::vector<std::string> setup;   // its lines after the allocation
  std::vector<std::string> steps;   // its calls, each assigned to s while all before succeeded
  std::vector<std::string> fields;  // the struct's members beyond the handles, as declarations
  std::vector<std::string> release; // NAME_destroy's lines before the weights are freed
};

class Emitter;

// One exec mode's instance API (EmitCompile.cpp, EmitInterpret.cpp, EmitLoad.cpp).
struct ExecModeParts {
  // NAME.h's declarations of the mode, up to the comment of NAME_create.
  void (*declare)(CWriter &w, const Emitter &e);
  // NAME.c, and the mode's other source files.
  void (*sources)(const Emitter &e, std::vector<GeneratedFile> &files);
};
extern const ExecModeParts kCompileParts, kInterpretParts, kLoadParts;

class Emitter {
public:
  Emitter(const Graph &g, const CodegenConfig &c);

  const Graph &graph;
  const CodegenConfig &config;
  const ExecModeParts &mode;
  std::string n, N; // the name, and in upper case for macros
  std::vector<WeightSlot> slots;
  std::vector<WeightSlot> strings; // the string constants, defined in NAME.c
  std::vector<Port> inputs, outputs;
  uint64_t totalWeights = 0, blobBytes = 0, fingerprint = 1469598103934665603ull;

  bool bin() const { return config.options.weights == WeightsMode::Bin; }
  bool noHeap() const { return config.options.noHeap; }
  // --dim: the code builds the computation for the dims of each run.
  bool symbolic() const { return !config.facts.symbolic.empty(); }
  std::string weightsDefinedIn() const;
  std::string banner(const std::string &file, const std::string &purpose) const;
  std::string ctype(const Value *v) const { return dtypeInfo(v->dtype()).cType; }

  // NAME_run, or with `batch` NAME_run_batch (--dynamic-batch), which takes the row count, or
  // with `shaped` NAME_run_shaped (--dim), which takes the dims.
  std::string runSignature(bool batch = false, bool shaped = false) const;
  std::string oneCallSignature() const;
  // What NAME_create and NAME_init take: the stored executable (load mode), the weights blob,
  // or nothing.
  std::string pathParam() const;
  std::string createSignature() const;
  // Load mode's key (odla_ExtSetExecutableKey), where the backend claims the extension.
  bool keyed() const;
  std::string keySignature() const;
  std::string storeSignature() const;
  // ", input, output": the run function's buffers, as arguments of a call.
  std::string portArgs() const;

  // Banner, includes, the CHECK macro and the weights' declarations of a source file; `fn`
  // is the graph function of a file that records the graph, which alone reads weights.
  void prelude(CWriter &w, const std::string &file, const std::string &purpose,
               const GraphFunction *fn, bool extensions = false) const;
  // Binds the run function's buffers to the context; `ids` wrote the graph function's ids.
  void bindPorts(CWriter &w, ValueIds &ids) const;
  void writeInstanceStruct(CWriter &w, const InstanceParts &parts) const;
  void writeCreateDestroy(CWriter &w, const InstanceParts &parts) const;
  // NAME_create (the heap) or, with --no-heap, NAME_create_in; writeCreateDestroy calls them.
  void writeCreate(CWriter &w, const InstanceParts &parts) const;
  void writeCreateIn(CWriter &w, const InstanceParts &parts) const;
  // NAME_init, NAME and NAME_fini over a process-wide instance.
  void writeOneCallApi(CWriter &w) const;

private:
  void stringConstants(CWriter &w) const;
};

// The files, in EmitHeader.cpp, EmitBuilder.cpp, EmitWeights.cpp and EmitMain.cpp.
std::string header(const Emitter &e);
// --no-heap: NAME_reference.h, the model's element types for ODLA_REFERENCE_CONFIG.
std::string referenceConfig(const Emitter &e);
// Where lowerGraph's constants point in generated code: a C array, or an offset in the blob.
ConstantDataFn constantData(const Emitter &e);
// NAME_build (compile mode, and the store tool of load mode) or, with `interpret`,
// NAME_interpret (interpret mode, which runs each op as it is recorded).
GraphFunction graphFunction(const Emitter &e, bool interpret);

// --dim: the computation in stages (EmitStages.cpp). Each stage is a computation of its own
// whose calls depend on the same dims among those that few calls depend on (a decoder's past
// length P, not its token count T, on which nearly every call depends): a run builds again
// only the stages whose dims changed. Values one stage makes and a later one reads cross
// between them as an output of the one bound to a buffer of the instance, and an argument of
// the other bound to the same buffer; arguments and constants are made in each stage that
// reads them.
struct BuildStage {
  unsigned dims = 0;                     // bit i: a call of the stage depends on dim i
  std::vector<size_t> inputs, outputs;   // the graph's ports it binds (e.inputs, e.outputs)
  std::vector<size_t> crossIn, crossOut; // the crossings it reads and makes
};
struct Crossing {
  std::string var, id; // the value's C variable and its id literal
  size_t stage;        // the stage that makes it
  int output = -1;     // the graph output it also is (read from the caller's buffer), or -1
  // Or the graph output whose Concat it is a part of, and its byte offset there (a C
  // expression of the run's dims_): the stage that makes it writes it in place, the Concat
  // copies nothing for it (a decoder's present keys, a layer at a time).
  int into = -1;
  std::string at;
};
struct StagedBuild {
  GraphFunction fn; // the stages' functions NAME_stage_K_(inst, dims_), in fn.text
  std::vector<BuildStage> stages;
  std::vector<Crossing> crossings;
};
StagedBuild stagedBuild(const Emitter &e);
// The blob loader of NAME.c and NAME_store.c: checks the file before trusting it.
void writeBlobLoader(CWriter &w, const Emitter &e);
// The weights files, streamed (GeneratedFile::stream): C arrays, or the blob.
GeneratedFile weightsC(const Emitter &e);
GeneratedFile weightsBlob(const Emitter &e);
std::string mainC(const Emitter &e);

} // namespace odlac::emit
