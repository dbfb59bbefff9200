// Argument conversions shared by the sinks.
#include "lower/OdlaSink.h"

#include <cassert>

namespace odlac::lower {

const char *enumName(odla_element_type v) {
  static const char *const names[] = {
      "ODLA_INT8",    "ODLA_INT16",    "ODLA_INT32",   "ODLA_INT64",   "ODLA_UINT8",
      "ODLA_UINT16",  "ODLA_UINT32",   "ODLA_UINT64",  "ODLA_QINT8",   "ODLA_QINT16",
      "ODLA_QINT32",  "ODLA_QINT64",   "ODLA_QUINT8",  "ODLA_QUINT16", "ODLA_QUINT32",
      "ODLA_QUINT64", "ODLA_FLOAT16",  "ODLA_BFLOAT16", "ODLA_FLOAT32", "ODLA_FLOAT64",
      "ODLA_BOOL",    "ODLA_STRING"};
  static_assert(sizeof names / sizeof *names == ODLA_STRING + 1, "odla_element_type names");
  return names[v];
}

const char *enumName(odla_memory_layout v) {
  static const char *const names[] = {"ODLA_CHANNELS_FIRST", "ODLA_CHANNELS_LAST", "ODLA_SIO",
                                      "ODLA_SOI",            "ODLA_OIS",           "ODLA_IOS"};
  static_assert(sizeof names / sizeof *names == ODLA_IOS + 1, "odla_memory_layout names");
  return names[v];
}

odla_value_ids Binder::conv(const Ids &ids) {
  assert(ids.names.size() <= ODLA_MAX_OUTPUTS);
  odla_value_ids r{};
  r.size = ids.names.size();
  for (size_t i = 0; i < ids.names.size(); ++i)
    r.value_ids[i] = (odla_value_id)ids.names[i].c_str();
  return r;
}

odla_values Binder::conv(const Vals &vs) {
  assert(vs.vals.size() <= ODLA_MAX_OUTPUTS);
  odla_values r{};
  r.size = vs.vals.size();
  for (size_t i = 0; i < vs.vals.size(); ++i)
    r.values[i] = value(vs.vals[i]);
  return r;
}

odla_value_shape Binder::conv(const Shape &s) {
  assert(s.dims.size() <= ODLA_MAX_DIMENSION);
  odla_value_shape r{};
  r.size = s.rank;
  for (size_t i = 0; i < s.dims.size(); ++i)
    r.dims[i] = s.dims[i];
  return r;
}

} // namespace odlac::lower
