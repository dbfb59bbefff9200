// Makes ODLA calls on the linked backend.
#include "evaluate/DirectSink.h"

#include <cstdio>
#include <string>

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

// A custom op's kernel is the application's. odlac builds graphs on its own reference
// backend to plan memory, so it registers a stand-in under the op's name: the shape function
// gives the types the call declares (the model's value_info), the kernel refuses to run.
odla_status declaredTypes(const odla_ext_custom_call *call, odla_value_type *out) {
  if (!call->declared_types)
    return ODLA_INVALID_PARAM;
  for (odla_int32 i = 0; i < call->num_outputs; ++i)
    out[i] = call->declared_types[i];
  return ODLA_SUCCESS;
}

odla_status applicationKernelOnly(const odla_ext_custom_call *, const odla_void *const *,
                                  odla_void *const *) {
  return ODLA_UNSUPPORTED_OP;
}

// The error the backend logs while a call runs (a builder's reason for refusing its operands,
// such as odla_ExtRegexFullMatch's for a pattern): it becomes part of the sink's error
// instead of a separate line on stderr. Other messages go where the backend sends them (its
// own format on stderr: odlac links the reference backend).
thread_local std::string builderError;
thread_local odla_logging_func outerLogger = nullptr;

void captureErrors(const char *file, int line, const char *func, odla_log_level level,
                   const char *msg) {
  if (level == ODLA_LOG_LEVEL_ERROR && builderError.empty())
    builderError = msg ? msg : "";
  else if (outerLogger)
    outerLogger(file, line, func, level, msg);
  else if (level != ODLA_LOG_LEVEL_ERROR)
    std::fprintf(stderr, "odla_reference: %s: %s\n", func ? func : "", msg ? msg : "");
}

} // namespace

std::vector<Val> DirectSink::emit(Call &call) {
  if (std::string(call.function) == "odla_CustomOp")
    odla_ExtRegisterCustomOp(std::get<Str>(call.args[1]).s.c_str(), applicationKernelOnly,
                             declaredTypes, nullptr);
  DirectBinder binder(values_);
  builderError.clear();
  outerLogger = odla_GetLogger();
  odla_SetLogger(captureErrors);
  call.invoke(binder);
  odla_SetLogger(outerLogger);
  std::vector<Val> handles;
  for (odla_value v : binder.results) {
    if (!v && firstError_.empty())
      firstError_ = std::string(call.function) + " for value '" + lastId(call.args) + "' failed" +
                    (builderError.empty() ? "" : ": " + builderError);
    handles.push_back(Val{static_cast<int>(values_.size())});
    values_.push_back(v);
  }
  if (binder.status != ODLA_SUCCESS && firstError_.empty())
    firstError_ = std::string(call.function) + " returned status " + std::to_string(binder.status);
  return handles;
}

} // namespace odlac::lower
