// A pass transforms the IR in place and says whether it changed anything (STYLE 4: one
// file, one class, guard clauses with a reason on each early exit, named after the fact it
// exploits). Passes are listed once, in Pipeline.cpp.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <string>

namespace odlac {

// What passes may ask about the compilation.
struct PassContext {
  // Extensions the chosen backend declares (odla_Ext<Op> names without the prefix); passes
  // that create extension ops check here, lowering falls back to core ops otherwise.
  bool hasExtension(const std::string &) const { return false; }
};

class Pass {
public:
  virtual ~Pass() = default;
  // Returns whether the graph changed; an error is a bug in odlac (import validated the
  // graph) and is reported as internal.
  virtual Expected<bool> run(Graph &g, const PassContext &ctx) = 0;
};

} // namespace odlac
