// The sink for --exec-mode=interpret: prints the calls as PrintSink does, with the graph's
// inputs created by odla_CreateValue and fed by odla_SetValueData, its outputs read with
// odla_GetValueData (or, for a backend without it, marked with odla_SetValueAsOutput for the
// caller to bind to a context), and, where the backend has it, odla_ReleaseValue after the
// last use of a value and of every value that may share its buffer (the results of the
// manifest's `views` calls, such as a Reshape's). The last uses come from a first pass over
// the same calls, handed to the second, printing pass.
#pragma once

#include "Codegen.h"
#include "PrintSink.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace odlac {

class InterpretSink : public PrintSink {
public:
  // `inputs` and `outputs` map tensor names to the C expressions of their buffers.
  // `firstPass` is the sink that saw the same calls before (nullptr in it).
  InterpretSink(CWriter &w, std::string checkMacro, const std::string &prefix, ValueIds &ids,
                std::map<std::string, std::string> inputs,
                std::map<std::string, std::string> outputs, const InterpretSink *firstPass,
                const CallSequence &seq, const std::set<std::string> &views)
      : PrintSink(w, checkMacro, prefix, ids), check_(std::move(checkMacro)),
        inputs_(std::move(inputs)), outputs_(std::move(outputs)), first_(firstPass), seq_(seq),
        views_(views) {}

protected:
  std::vector<lower::Val> emit(lower::Call &call) override;

private:
  void used(lower::Val v, size_t at);
  // The value whose buffer `v` may share (itself if none).
  int root(int v) const { return root_[v] == v ? v : root(root_[v]); }
  // The last call that uses any value sharing the buffer of `v`.
  size_t lastUseOfBuffer(int v) const;

  std::string check_;
  std::map<std::string, std::string> inputs_, outputs_;
  const InterpretSink *first_;
  const CallSequence &seq_;
  const std::set<std::string> &views_;
  // Per value: the last call that uses (or defines) it, the value whose buffer it may share,
  // whether it holds data the backend allocated, and its tensor name (value id).
  std::vector<size_t> use_;
  std::vector<int> root_;
  std::vector<bool> releasable_;
  std::vector<std::string> names_;
  mutable std::vector<size_t> bufferLast_; // per buffer's root: lastUseOfBuffer
  size_t calls_ = 0;
};

} // namespace odlac
