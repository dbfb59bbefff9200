// A pass transforms the IR in place and says whether it changed anything (STYLE 4: one
// file, one class, guard clauses with a reason on each early exit, named after the fact it
// exploits). Passes are listed once, in Pipeline.cpp.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"
#include "target/Target.h"

#include <string>

namespace odlac {

// What passes may ask about the compilation.
struct PassContext {
  // The backend code is generated for (its manifest): passes that choose a layout read it;
  // extension ops are formed regardless, lowering decomposes those the backend lacks.
  const Target *target = &referenceTarget();
};

class Pass {
public:
  virtual ~Pass() = default;
  // Returns whether the graph changed; an error is a bug in odlac (import validated the
  // graph) and is reported as internal.
  virtual Expected<bool> run(Graph &g, const PassContext &ctx) = 0;
};

} // namespace odlac
