// Prints a graph for interpret mode (see InterpretSink.h).
#include "InterpretSink.h"

#include <cstring>
#include <limits>
#include <variant>

namespace odlac {

using namespace lower;

namespace {
// The use of an output that a context reads after the interpreted calls: never released.
constexpr size_t kReadAfterwards = std::numeric_limits<size_t>::max();
} // namespace

void InterpretSink::used(Val v, size_t at) {
  if (v.isNull())
    return;
  use_[v.index] = std::max(use_[v.index], at);
}

size_t InterpretSink::lastUseOfBuffer(int v) const {
  if (bufferLast_.size() != use_.size()) { // once, when the printing pass first asks
    bufferLast_.assign(use_.size(), 0);
    for (size_t u = 0; u < use_.size(); ++u) {
      size_t &last = bufferLast_[root(static_cast<int>(u))];
      last = std::max(last, use_[u]);
    }
  }
  return bufferLast_[root(v)];
}

std::vector<Val> InterpretSink::emit(Call &call) {
  size_t at = calls_++;
  Val firstOperand;
  for (const Arg &a : call.args) {
    if (const Val *v = std::get_if<Val>(&a)) {
      used(*v, at);
      if (firstOperand.isNull())
        firstOperand = *v;
    } else if (const Vals *vs = std::get_if<Vals>(&a)) {
      for (Val v : vs->vals)
        used(v, at);
    }
  }
  std::vector<Val> results;
  if (std::strcmp(call.function, "odla_SetValueAsOutput") == 0) {
    Val v = std::get<Val>(call.args[0]);
    if (seq_.outputsByContext) {
      results = PrintSink::emit(call); // the caller binds it to a context by id
      used(v, kReadAfterwards);
    } else {
      printLine(check_ + "(odla_GetValueData(" + variableOf(v) + ", " +
                outputs_.at(names_[v.index]) + ", NULL));");
    }
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
  std::string fn = std::string(call.function).substr(5); // without "odla_"
  bool fromBackend = fn != "CreateConstant";
  bool view = views_.count(fn) && !firstOperand.isNull();
  for (size_t i = 0; i < results.size(); ++i) {
    int r = results[i].index;
    if (use_.size() <= static_cast<size_t>(r)) {
      use_.resize(r + 1, 0);
      root_.resize(r + 1);
      releasable_.resize(r + 1, false);
      names_.resize(r + 1);
    }
    used(results[i], at);
    root_[r] = view ? firstOperand.index : r;
    releasable_[r] = fromBackend;
    names_[r] = i < ids.size() ? ids[i] : std::string();
  }
  // Views first (they come later than the value they share), so that a backend that frees
  // the shared buffer with its owner never sees a view of freed memory released.
  if (first_ && seq_.release)
    for (size_t i = std::min(first_->use_.size(), releasable_.size()); i-- > 0;)
      if (releasable_[i] && first_->lastUseOfBuffer(static_cast<int>(i)) == at)
        printLine(check_ + "(odla_ReleaseValue(" + variableOf(Val{static_cast<int>(i)}) + "));");
  return results;
}

} // namespace odlac
