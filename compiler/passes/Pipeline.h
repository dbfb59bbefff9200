// The optimization pipeline: one ordered list of passes, each with the -O level that
// enables it and why it sits where it does. --print-ir-after, --print-ir-after-all and
// --disable-pass read this list.
#pragma once

#include "passes/Pass.h"

#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace odlac {

struct PipelineEntry {
  const char *name; // as used on the command line
  int level;        // the lowest -O level that runs it
  const char *why;  // why it runs here
  std::function<std::unique_ptr<Pass>()> make;
};

const std::vector<PipelineEntry> &pipeline();

struct PipelineOptions {
  int level = 2;
  std::set<std::string> disabled;
  std::set<std::string> printAfter; // pass names; "*" means after every pass
  std::ostream *printTo = nullptr;
};

// Checks that every name in `names` is a pass of the pipeline.
Status checkPassNames(const std::set<std::string> &names);

Status runPipeline(Graph &g, const PipelineOptions &opts, const PassContext &ctx = {});

} // namespace odlac
