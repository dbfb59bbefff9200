// The ODLA backend code is generated for, from its capability manifest (DESIGN §7): which
// extension functions it has, which core op builders and element types it accepts, its
// preferred layout. Lowering asks the target before using an extension and decomposes into
// core calls otherwise; checkTarget reports everything a backend cannot run, before any C is
// written.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <map>
#include <set>
#include <string>

namespace odlac {

struct Target {
  std::string backend = "reference";
  std::string library = "odla_reference";
  std::string layout = "channels_first";
  std::set<std::string> modes;
  std::set<std::string> features; // runtime interfaces beyond the modes: "async", ...
  std::set<std::string> extensions; // "ExtConv", without "odla_"
  bool allExtensions = false;       // "extensions *": every function of odla_ext.h
  bool allOps = true;               // "ops *"
  std::map<std::string, std::set<std::string>> ops; // "Conv" -> {"float32", ...}; empty = any

  bool hasExtension(const std::string &name) const {
    return allExtensions || extensions.count(name) != 0;
  }
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
