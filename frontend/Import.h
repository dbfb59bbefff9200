// The ONNX frontend's entry point: load a .onnx file, validate it, and import it into IR.
// All validation happens here (DESIGN §4): every unsupported or invalid node is reported, with
// node name, op type, opset and reason, in one Status. Warnings and notes (messages starting
// "warning: " or "note: ") follow the errors of a failed import, and are in the graph's
// info().diagnostics after a successful one.
#pragma once

#include "ir/Graph.h"
#include "ir/Limits.h"
#include "support/Status.h"

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace odlac {

// ONNX opsets before 7 used legacy broadcasting and other semantics that later opsets
// dropped; such models are upgraded to this opset with libonnx's version converter before
// import (ONNX Runtime refuses them, odlac does not), so import rules see opset 7 or newer.
constexpr int64_t kOldestImportedOpset = 7;

// The dims --input-shape gives one graph input: a number pins a dim; a name (names[i], dims[i]
// -1) makes it the symbolic dim of that name, whose range --dim gives; -1 with no name ('?')
// keeps the model's symbolic dim, named by its dim_param.
struct InputShape {
  Dims dims;
  std::vector<std::string> names;
};

struct ImportOptions {
  // Pins or names the dims of graph inputs: name -> dims (from --input-shape
  // name:1x3x224x224, name:Nx12x64).
  std::map<std::string, InputShape> inputShapes;
  // Symbolic dims (--dim NAME=MAX): the value each named dim takes in this import, which is
  // its largest, or another when the driver probes how the compiled code depends on it
  // (driver/SymbolicDims.h). An input's symbolic dim is named by --input-shape or by the
  // model's dim_param.
  std::map<std::string, int64_t> dimValues;
  // Values whose shape generator (a Range) import leaves to the generated code although it
  // could compute them: with --dim, those whose data depends on a symbolic dim.
  std::set<std::string> keepComputed;
  // The number of elements of sequence graph inputs (and of optional ones holding a
  // sequence): name -> N (from --sequence-length name=N). ONNX's types do not give it, and
  // odlac resolves sequences at compile time: each element is one input of the generated
  // code.
  std::map<std::string, int64_t> sequenceLengths;
  // Optional graph inputs compiled as absent (--optional-absent); the others hold a value.
  std::set<std::string> absentOptionals;
  // ONNX domains whose nodes import as custom ops (--custom-op-domain), run by kernels the
  // application registers (frontend/rules/Custom.cpp).
  std::set<std::string> customOpDomains;
  // --dynamic-batch: every input's leading dim must be symbolic, the batch; it is pinned to
  // this (the batch the code is planned for). 0: off.
  int64_t batchSize = 0;
  // The most bytes of one tensor (ir/Limits.h); the driver sets it from --target and
  // --size-limit.
  SizeLimits limits = SizeLimits::forPointerBits(64);
  // --libonnx-timeout: seconds each libonnx step (its checker; its version converter, for
  // opsets before 7) may run in its child process (LibOnnx.h). 0: libonnx is not run.
  int libonnxSeconds = 20;
};

Expected<std::unique_ptr<Graph>> importOnnxFile(const std::string &path, const ImportOptions &opts);
// The same for a serialized model in memory (`name` labels it in messages): nothing is read
// from files, so a model whose tensors keep their data in external files is refused. The
// graph's constants reference `data`'s bytes only through copies: the buffer may go away.
Expected<std::unique_ptr<Graph>>
importOnnxBytes(const void *data, size_t size, const std::string &name, const ImportOptions &opts);

// The most elements of a sequence odlac resolves at compile time (each one is a value of its
// own: an input, a SequenceMap body, a Loop iteration unrolled).
constexpr int64_t kMaxSequenceLength = 4096;

// Parses "name=3" into an entry of ImportOptions::sequenceLengths.
Status parseSequenceLength(const std::string &spec, ImportOptions &opts);

// Parses "name:1x3x224x224" (a dim may be a name, or ? or -1 for the model's own symbolic
// dim) into an entry of ImportOptions::inputShapes.
Status parseInputShape(const std::string &spec, ImportOptions &opts);
// A name a symbolic dim may have on the command line: a C-like identifier (letters, digits,
// '_', not starting with a digit) without 'x', which separates dims in --input-shape.
bool isDimName(const std::string &s);

} // namespace odlac
