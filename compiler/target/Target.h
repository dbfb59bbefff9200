// The ODLA backend code is generated for, from its capability manifest (DESIGN §7): which
// extension functions it has, which core op builders and element types it accepts and with
// which per-call limits, which runtime functions it defines (so which call sequence the
// generated code uses), how it wants value ids, its preferred layout. Lowering asks the
// target before using an extension and decomposes into core calls otherwise; checkTarget
// reports everything a backend cannot run, before any C is written.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace odlac {

// A manifest's `limit FUNCTION COND... [when GUARD...]` line says that every call of
// odla_FUNCTION meets each COND, or, with guards, each call that meets every GUARD. A
// condition reads SUBJECT=ALTERNATIVES or SUBJECT!=ALTERNATIVES: the subject (a parameter of
// the function by its name in the ODLA header, `result`, or `rounding`, with an optional
// property: input.rank, lhs.shape, strides.0, ...) is, or is not, one of the alternatives
// (separated by '|': numbers, comma lists, enumerator names, `none` for an absent operand, or
// other subjects). The grammar is in runtime_stubs/reference/manifest.txt.
struct Condition {
  std::string text; // as written, for messages
  std::string subject;
  bool negated = false;
  std::vector<std::string> alternatives;
};

struct Limit {
  std::string function; // without "odla_"
  Condition condition;
  std::vector<Condition> guards;
};

struct Target {
  std::string backend = "reference";
  std::string library = "odla_reference";
  std::string layout = "channels_first";
  std::set<std::string> modes;
  std::set<std::string> features;   // runtime interfaces beyond the modes: "async", ...
  std::set<std::string> extensions; // "ExtConv", without "odla_"
  bool allExtensions = false;       // "extensions *": every function of odla_ext.h
  bool allOps = true;               // "ops *"
  std::map<std::string, std::set<std::string>> ops; // "Conv" -> {"float32", ...}; empty = any
  std::vector<Limit> limits;
  // The functions beyond the op builders it defines ("runtime"); all of ODLA 0.5 by default.
  bool allRuntime = true;
  std::set<std::string> runtime; // "CompileComputation", without "odla_"
  std::set<std::string> types;   // element types of every value ("types"); empty = any
  // Value ids: C strings (the tensor names) or, with `value_ids integers N`, the numbers 1 to
  // N - 1 cast to odla_value_id, for backends that index a table with them.
  bool integerIds = false;
  int64_t idLimit = 0;
  // The ODLA functions whose result may share its first operand's buffer ("views"; Reshape
  // always): interpret mode releases such a buffer only after the last use of every value
  // that shares it.
  std::set<std::string> views{"Reshape"};
  // --odla-profile=core: no extensions, and only the calls every ODLA 0.5 backend defines.
  bool core = false;

  bool hasExtension(const std::string &name) const {
    return allExtensions || extensions.count(name) != 0;
  }
  bool hasOp(const std::string &name) const { return allOps || ops.count(name) != 0; }
  bool hasRuntime(const std::string &name) const { return allRuntime || runtime.count(name) != 0; }
};

// Parses a manifest's text; `origin` names it in errors.
Expected<Target> parseManifest(const std::string &text, const std::string &origin);
// The manifest of a backend shipped with odlac (reference, ...), by name.
Expected<Target> shippedTarget(const std::string &backend);
// The core ODLA 0.5 profile of a target: no extensions at all.
Target coreProfile(Target t);

// The target odlac itself runs (the linked reference backend), for folding and planning.
const Target &referenceTarget();

} // namespace odlac
