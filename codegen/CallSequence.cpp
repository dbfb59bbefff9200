// Chooses the calls generated code makes around the op builders from the runtime functions a
// backend's manifest lists (see CallSequence in Codegen.h).
#include "Codegen.h"

namespace odlac {

Expected<CallSequence> callSequence(const Target &t, ExecMode mode, bool dynamicBatch) {
  CallSequence seq{false, false, false, false};
  std::vector<std::string> need;
  auto optional = [&](std::initializer_list<const char *> fns) {
    for (const char *f : fns)
      if (!t.hasRuntime(f))
        return false;
    need.insert(need.end(), fns.begin(), fns.end());
    return true;
  };
  switch (mode) {
  case ExecMode::Compile:
    need = {"CreateComputation", "CreateArgument",     "CreateConstant",   "SetValueAsOutput",
            "CreateContext",     "BindToArgumentById", "BindToOutputById", "ExecuteComputation",
            "DestroyContext",    "DestroyComputation"};
    // Every ODLA 0.5 backend compiles at the first execution; executables are optional (HALO's
    // backends have none), so the core profile does without them.
    seq.compileStep = !t.core && optional({"CompileComputation", "DestroyExecutable"});
    if (dynamicBatch)
      need.insert(need.end(), {"SetComputationItem", "SetContextItem"});
    break;
  case ExecMode::Interpret:
    need = {"CreateValue", "SetValueData", "CreateConstant"};
    seq.computation = optional({"CreateComputation", "DestroyComputation"});
    seq.outputsByContext = !optional({"GetValueData"});
    if (seq.outputsByContext)
      need.insert(need.end(), {"SetValueAsOutput", "CreateContext", "BindToOutputById",
                               "ExecuteComputation", "DestroyContext"});
    if (seq.outputsByContext && !seq.computation)
      need.insert(need.end(), {"CreateComputation", "DestroyComputation"});
    seq.release = optional({"ReleaseValue"});
    break;
  case ExecMode::Load:
    need = {"CreateComputation",  "CreateArgument",     "CreateConstant",     "SetValueAsOutput",
            "CompileComputation", "StoreExecutable",    "DestroyComputation", "LoadExecutable",
            "CreateContext",      "BindToArgumentById", "BindToOutputById",   "LaunchExecutable",
            "DestroyContext",     "DestroyExecutable"};
    break;
  }
  std::string lacking;
  for (const std::string &f : need)
    if (!t.hasRuntime(f))
      lacking += (lacking.empty() ? "odla_" : ", odla_") + f;
  if (!lacking.empty()) {
    static const char *const kModes[] = {"compile", "interpret", "load"};
    return Status::error("backend '" + t.backend + "' cannot run --exec-mode=" +
                         kModes[static_cast<int>(mode)] + ": its manifest lacks " + lacking);
  }
  return seq;
}

} // namespace odlac
