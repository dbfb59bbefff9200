// The sink for --exec-mode=interpret: prints the calls as PrintSink does, with the graph's
// inputs created by odla_CreateValue and fed by odla_SetValueData, its outputs read with
// odla_GetValueData, and odla_ReleaseValue after each value's last use. The last uses come
// from a first pass over the same calls (lastUses()), handed to the second, printing pass.
#pragma once

#include "PrintSink.h"

#include <map>
#include <string>
#include <vector>

namespace odlac {

class InterpretSink : public PrintSink {
public:
  // `inputs` and `outputs` map tensor names to the C expressions of their buffers.
  // `lastUse` (from the first pass; nullptr in it) gives, per value, the call that uses it last.
  InterpretSink(CWriter &w, std::string checkMacro, const std::string &prefix,
                std::map<std::string, std::string> inputs,
                std::map<std::string, std::string> outputs, const std::vector<size_t> *lastUse)
      : PrintSink(w, checkMacro, prefix), check_(std::move(checkMacro)), inputs_(std::move(inputs)),
        outputs_(std::move(outputs)), lastUse_(lastUse) {}
  const std::vector<size_t> &lastUses() const { return use_; }

protected:
  std::vector<lower::Val> emit(lower::Call &call) override;

private:
  void used(lower::Val v, size_t at);

  std::string check_;
  std::map<std::string, std::string> inputs_, outputs_;
  const std::vector<size_t> *lastUse_;
  std::vector<size_t> use_;      // per value: the last call that uses (or defines) it
  std::vector<bool> releasable_; // per value: it holds data the backend allocated
  std::vector<std::string> names_; // per value: its tensor name (value id)
  size_t calls_ = 0;
};

} // namespace odlac
