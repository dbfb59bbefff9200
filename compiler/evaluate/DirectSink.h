// The sink that makes each ODLA call on the backend linked into odlac (the reference
// backend): constant folding, the frontend's constant operands and the reference memory plan
// (ReferencePlan.cpp) use it.
#pragma once

#include "lower/OdlaSink.h"

#include <string>
#include <vector>

namespace odlac::lower {

class DirectSink : public OdlaSink {
public:
  // The odla_value behind a handle.
  odla_value value(Val v) const { return v.isNull() ? nullptr : values_[v.index]; }
  // Every value the calls created, in order.
  const std::vector<odla_value> &values() const { return values_; }
  // The first call that failed ("odla_Conv for value 'x' returned NULL"); empty if none.
  const std::string &firstError() const { return firstError_; }

protected:
  std::vector<Val> emit(Call &call) override;

private:
  std::vector<odla_value> values_;
  std::string firstError_;
};

} // namespace odlac::lower
