// Makes ODLA calls on the linked backend.
#include "lower/DirectSink.h"

namespace odlac::lower {
namespace {

class DirectBinder : public Binder {
public:
  explicit DirectBinder(const std::vector<odla_value> &values) : values_(values) {}
  odla_value value(Val v) override { return v.isNull() ? nullptr : values_[v.index]; }
  void takeValue(odla_value v) override { results.push_back(v); }
  void takeValues(const odla_values &vs) override {
    for (odla_size_t i = 0; i < vs.size; ++i)
      results.push_back(vs.values[i]);
  }
  void takeStatus(odla_status s) override { status = s; }

  std::vector<odla_value> results;
  odla_status status = ODLA_SUCCESS;

private:
  const std::vector<odla_value> &values_;
};

std::string lastId(const Call &call) {
  for (auto it = call.args.rbegin(); it != call.args.rend(); ++it) {
    if (const Id *id = std::get_if<Id>(&*it))
      return id->name;
    if (const Ids *ids = std::get_if<Ids>(&*it))
      return ids->names.empty() ? "" : ids->names[0];
  }
  return "";
}

} // namespace

std::vector<Val> DirectSink::emit(Call &call) {
  DirectBinder binder(values_);
  call.invoke(binder);
  std::vector<Val> handles;
  for (odla_value v : binder.results) {
    if (!v && firstError_.empty())
      firstError_ = std::string(call.function) + " for value '" + lastId(call) + "' failed";
    handles.push_back(Val{static_cast<int>(values_.size())});
    values_.push_back(v);
  }
  if (binder.status != ODLA_SUCCESS && firstError_.empty())
    firstError_ = std::string(call.function) + " returned status " + std::to_string(binder.status);
  return handles;
}

} // namespace odlac::lower
