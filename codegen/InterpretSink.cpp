// Prints a graph for interpret mode (see InterpretSink.h).
#include "InterpretSink.h"

#include <cstring>
#include <variant>

namespace odlac {

using namespace lower;

void InterpretSink::used(Val v, size_t at) {
  if (v.isNull())
    return;
  if (use_.size() <= static_cast<size_t>(v.index)) {
    use_.resize(v.index + 1, 0);
    releasable_.resize(v.index + 1, false);
  }
  use_[v.index] = std::max(use_[v.index], at);
}

std::vector<Val> InterpretSink::emit(Call &call) {
  size_t at = calls_++;
  for (const Arg &a : call.args) {
    if (const Val *v = std::get_if<Val>(&a))
      used(*v, at);
    else if (const Vals *vs = std::get_if<Vals>(&a))
      for (Val v : vs->vals)
        used(v, at);
  }
  std::vector<Val> results;
  if (std::strcmp(call.function, "odla_SetValueAsOutput") == 0) {
    Val v = std::get<Val>(call.args[0]);
    printLine(check_ + "(odla_GetValueData(" + variableOf(v) + ", " + outputs_.at(names_[v.index]) +
              ", NULL));");
  } else if (std::strcmp(call.function, "odla_CreateArgument") == 0) {
    std::string id = std::get<Id>(call.args[1]).name;
    call.function = "odla_CreateValue";
    results = PrintSink::emit(call);
    printLine(check_ + "(odla_SetValueData(" + variableOf(results[0]) + ", " + inputs_.at(id) +
              "));");
  } else {
    results = PrintSink::emit(call);
  }
  std::vector<std::string> ids;
  for (const Arg &a : call.args) {
    if (const Id *id = std::get_if<Id>(&a))
      ids = {id->name};
    else if (const Ids *more = std::get_if<Ids>(&a))
      ids = more->names;
  }
  bool fromBackend = std::strcmp(call.function, "odla_CreateConstant") != 0;
  for (size_t i = 0; i < results.size(); ++i) {
    Val r = results[i];
    used(r, at);
    releasable_[r.index] = fromBackend;
    if (names_.size() <= static_cast<size_t>(r.index))
      names_.resize(r.index + 1);
    names_[r.index] = i < ids.size() ? ids[i] : std::string();
  }
  if (lastUse_)
    for (size_t i = 0; i < lastUse_->size() && i < releasable_.size(); ++i)
      if ((*lastUse_)[i] == at && releasable_[i])
        printLine(check_ + "(odla_ReleaseValue(" + variableOf(Val{static_cast<int>(i)}) + "));");
  return results;
}

} // namespace odlac
