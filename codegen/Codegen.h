// Codegen: IR -> the files of DESIGN §6 (net.h, net.c, weights, optional main.c).
// Codegen only prints: every fact it needs (arena size) is computed before and passed in
// (CodegenFacts).
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"
#include "target/Target.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace odlac {

enum class WeightsMode { Auto, C, Bin, Obj }; // Obj: NAME_weights.o, see ObjectWriter.h

// How generated code runs the model (--exec-mode; docs/generated-code.md): compile builds
// and compiles the computation once per instance, interpret runs each op as it is called,
// load loads an executable stored by NAME_store.
enum class ExecMode { Compile, Interpret, Load };

// The calls beyond the op builders that generated code makes, from the runtime functions
// the target's manifest lists (docs/generated-code.md, "The calls the code makes"): the
// richer sequence only where the manifest offers it. The defaults are the reference backend's.
struct CallSequence {
  // compile: odla_CompileComputation once per instance (and odla_DestroyExecutable); without
  // it (the core profile, or a backend without executables) the first execution compiles.
  bool compileStep = true;
  // interpret: each run creates and destroys a computation (a backend without one keeps the
  // values it interprets by itself).
  bool computation = true;
  // interpret: outputs are bound to a context and copied out by odla_ExecuteComputation, for
  // a backend without odla_GetValueData.
  bool outputsByContext = false;
  // interpret: odla_ReleaseValue after a value's last use (and that of every value that may
  // share its buffer).
  bool release = true;
};

// The sequence of `mode` on `target`; an error names every function it needs that the
// manifest lacks.
Expected<CallSequence> callSequence(const Target &target, ExecMode mode, bool dynamicBatch);

// What the command line asks of codegen.
struct CodegenOptions {
  std::string name = "net"; // prefix of every symbol; a C identifier
  WeightsMode weights = WeightsMode::Auto;
  uint64_t binThreshold = 1u << 20; // Auto picks Bin above this many weight bytes
  bool emitMain = false;
  ExecMode execMode = ExecMode::Compile;
  std::string flags; // the command-line flags, for the banner (no paths)
  // --weights-section: the linker section of the weights (C arrays or object); empty: the
  // target's read-only data.
  std::string weightsSection;
  // --no-heap: NAME_create_in builds an instance in memory the caller gives (odla_ext_memory.h).
  bool noHeap = false;
  // --memory=least: the computation item ODLA_EXT_ITEM_LEAST_MEMORY is set before building.
  bool leastMemory = false;
};

// A symbolic dim (--dim NAME=MAX, NAME=MIN..MAX): the generated code is built for the dims
// each run gives (NAME_run_shaped), each in [min, max]; NAME.h's shapes hold the largest.
struct SymbolicDim {
  std::string name;  // as --dim and the model's dim_param write it
  std::string field; // its member of NAME_dims: a C identifier
  int64_t min = 1, max = 1;
};

// An integer of the generated code as a polynomial of the symbolic dims: a sum of terms, each
// a coefficient times the product of the dims whose bits `dims` sets (bit i: dim i).
struct DimPolynomial {
  std::vector<std::pair<unsigned, int64_t>> terms; // (dims, coefficient), none zero
  bool isConstant() const { return terms.empty() || (terms.size() == 1 && !terms[0].first); }
};

// How the ODLA calls that record the model depend on the symbolic dims
// (driver/SymbolicDims.h): the integers that differ between dims, each the polynomial it
// follows, keyed by (call, argument, element): the call's position among the calls lowerGraph
// makes, the argument's among its arguments, the element's in a shape, array or small integer
// constant (0 for a scalar).
struct SymbolicCalls {
  std::vector<SymbolicDim> dims;
  std::map<std::tuple<int, int, int>, DimPolynomial> args;
  // The calls that make a constant whose data at smaller dims is the leading block of its data
  // at the largest (an iota, a fill, a mask of T x T): the code takes that block.
  std::set<int> subBlocks;
  // Per graph input and output, each dim.
  std::vector<std::vector<DimPolynomial>> inputDims, outputDims;
  bool empty() const { return dims.empty(); }
};

// Where the inputs show symbolic dim `dim` alone: (input, axis), the first such; nullopt when
// no input dim is that dim (the --emit-main driver, which takes the dims from its input files,
// cannot run such a model).
std::optional<std::pair<size_t, size_t>> dimOfInputs(const SymbolicCalls &s, size_t dim);

// What codegen states about the graph and the backend, computed before it runs.
struct CodegenFacts {
  const Target *target = &referenceTarget(); // which extension calls the code may make
  CallSequence calls;          // the calls around the op builders, from callSequence for the target
  uint64_t arenaBytes = 0;     // activation arena per instance, as the reference backend plans it
  int64_t plannedBatch = 0;    // --dynamic-batch: the batch the code is planned for; 0: fixed batch
  uint64_t structureBytes = 0; // --no-heap: the backend's structures (referenceStructureBytes)
  SymbolicCalls symbolic;      // --dim: how the calls depend on the symbolic dims; empty: fixed
};

// What generateC reads: the options with each choice made, and the facts. resolveCodegen is
// the one place the weights mode Auto is decided.
struct CodegenConfig {
  CodegenOptions options; // options.weights is C, Bin or Obj, never Auto
  CodegenFacts facts;
};
CodegenConfig resolveCodegen(const Graph &g, const CodegenOptions &options,
                             const CodegenFacts &facts);

// Takes the next bytes of a streamed file; a failed write's Status.
using FileSink = std::function<Status(const char *data, size_t size)>;

struct GeneratedFile {
  GeneratedFile() = default;
  GeneratedFile(std::string name, std::string contents)
      : name(std::move(name)), contents(std::move(contents)) {}
  std::string name; // relative to the output folder
  std::string contents;
  // The weights files (--weights=bin, c) are written piece by piece from the constants'
  // buffers instead of held whole: `stream` puts the file's bytes in order (and `contents`
  // stays empty), `size` of them when known in advance (0: not known).
  std::function<Status(const FileSink &)> stream;
  uint64_t size = 0;
};
// A generated file's whole text, a streamed one collected (tests; small files).
std::string fileText(const GeneratedFile &f);

uint64_t weightBytes(const Graph &g);
// --no-heap: the bytes NAME_create_in needs (NAME_MEMORY_BYTES): its alignment (63), the
// instance (64), the arena rounded up to 64 bytes, and the backend's structures rounded up.
uint64_t noHeapMemoryBytes(const CodegenFacts &facts);

// Whether every string that the generated C holds as a string literal (value names, which are
// ODLA value ids and the ports' NAME macros; custom ops' attribute names and strings; einsum
// equations) fits C99's limit of 4095 characters a literal: longer ones would not build under
// -pedantic -Werror. Names every string that does not.
Status checkCStrings(const Graph &g);
// Whether code for `mode` can run the graph: control flow runs in compile and load mode.
Status checkExecMode(const Graph &g, ExecMode mode);

std::vector<GeneratedFile> generateC(const Graph &g, const CodegenConfig &config);
// The record of what the model's code (NAME.c of generateC's files) calls: each ODLA function
// and its number of call sites, read from the C it holds, which is what a linker sees.
std::map<std::string, int> odlaCalls(const std::vector<GeneratedFile> &files,
                                     const std::string &name);
// The element types of `g` as the reference backend's ODLA_REFERENCE_WITH_<TYPE> names them
// (f32, i64, ...; NAME_reference.h), or none where it has a type without such a name and every
// kernel is kept.
std::vector<std::string> referenceTypes(const Graph &g);
// The weights in the order and under the symbols the generated C declares them (for
// writing them as an object file).
struct WeightSymbol {
  std::string symbol;
  const Value *value;
};
std::vector<WeightSymbol> weightSymbols(const Graph &g, const CodegenConfig &config);

} // namespace odlac
