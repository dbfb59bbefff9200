// Writes the weights as a relocatable ELF object for any supported target triple, through
// LLVM's MC layer, so that large weights never go through a C compiler (DESIGN §6).
//
// The weights are streamed, never copied into memory:
//   1. MC lays the object out: one global data symbol per tensor, each aligned for vector
//      loads, its bytes a zero fill (which MC writes without holding it in memory);
//   2. the object's own symbol table then gives each tensor's file offset;
//   3. the tensor bytes are written at those offsets straight from the constant's storage
//      (for external data, the mapped file), chunk by chunk, handing each written chunk of a
//      mapped file back to the kernel.
// Memory stays at a few MiB above the imported graph whatever the weight size; time is one
// pass over the bytes.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace odlac {

struct ObjectSymbol {
  std::string name;               // the C symbol the generated code declares extern
  const void *data;               // the bytes (mapped or in memory); only read
  uint64_t size;                  // bytes; a zero-size tensor still gets one zero byte
  const Buffer *source = nullptr; // holds `data`: its mapped pages are dropped once written
};

struct ObjectOptions {
  std::string triple;  // e.g. aarch64-linux-gnu; empty: the host's
  std::string section; // empty: the target's read-only data section
  uint64_t align = 64; // every symbol's alignment, in bytes
};

// The triple odlac uses when --target is not given.
std::string hostTriple();
// The pointer width of `triple` (empty: the host), 32 or 64: size limits follow it.
int targetPointerBits(const std::string &triple);
// Checks that odlac can write objects for `triple` (an ELF target of a linked LLVM backend);
// returns the normalized triple.
Expected<std::string> checkObjectTarget(const std::string &triple);
// Writes `path`; on error the file may exist half-written (callers write into a staging folder).
Status writeWeightsObject(const std::string &path, const ObjectOptions &opts,
                          const std::vector<ObjectSymbol> &symbols);

} // namespace odlac
