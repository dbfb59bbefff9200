// Argument conversions shared by the sinks.
#include "lower/OdlaSink.h"

#include "ir/DType.h"

#include <cassert>

namespace odlac::lower {

const char *enumName(odla_element_type v) {
  for (int t = 0; t < kNumDTypes; ++t) // the extension types (odla_ext_types.h)
    if (dtypeInfo(static_cast<DType>(t)).odlaType == static_cast<int>(v) && v >= ODLA_EXT_TYPE_BASE)
      return dtypeInfo(static_cast<DType>(t)).odlaEnum;
  static const char *const names[] = {
      "ODLA_INT8",    "ODLA_INT16",   "ODLA_INT32",    "ODLA_INT64",   "ODLA_UINT8",
      "ODLA_UINT16",  "ODLA_UINT32",  "ODLA_UINT64",   "ODLA_QINT8",   "ODLA_QINT16",
      "ODLA_QINT32",  "ODLA_QINT64",  "ODLA_QUINT8",   "ODLA_QUINT16", "ODLA_QUINT32",
      "ODLA_QUINT64", "ODLA_FLOAT16", "ODLA_BFLOAT16", "ODLA_FLOAT32", "ODLA_FLOAT64",
      "ODLA_BOOL",    "ODLA_STRING"};
  static_assert(sizeof names / sizeof *names == ODLA_STRING + 1, "odla_element_type names");
  return names[v];
}

const char *enumName(odla_memory_layout v) {
  static const char *const names[] = {
      "ODLA_CHANNELS_FIRST", "ODLA_CHANNELS_LAST", "ODLA_SIO", "ODLA_SOI", "ODLA_OIS", "ODLA_IOS"};
  static_assert(sizeof names / sizeof *names == ODLA_IOS + 1, "odla_memory_layout names");
  return names[v];
}

#define ODLAC_ENUM_NAMES(Type, Last, ...)                                                          \
  const char *enumName(Type v) {                                                                   \
    static const char *const names[] = {__VA_ARGS__};                                              \
    static_assert(sizeof names / sizeof *names == (Last) + 1, #Type " names");                     \
    return names[v];                                                                               \
  }
ODLAC_ENUM_NAMES(odla_rnn_weight_format, ODLA_RNN_LDIGO, "ODLA_RNN_LDGOI", "ODLA_RNN_LDIGO")
ODLAC_ENUM_NAMES(odla_rnn_gate_order, ODLA_RNN_URO, "ODLA_RNN_IOFC", "ODLA_RNN_IFCO",
                 "ODLA_RNN_IFOC", "ODLA_RNN_ICOF", "ODLA_RNN_URO")
ODLAC_ENUM_NAMES(odla_rnn_direction, ODLA_RNN_BIDIRECTIONAL, "ODLA_RNN_FORWARD", "ODLA_RNN_REVERSE",
                 "ODLA_RNN_BIDIRECTIONAL")
ODLAC_ENUM_NAMES(odla_rnn_outputs, ODLA_RNN_HIDDEN_CELL_STATE, "ODLA_RNN_NO_STATE",
                 "ODLA_RNN_HIDDEN_STATE", "ODLA_RNN_CELL_STATE", "ODLA_RNN_HIDDEN_CELL_STATE")
ODLAC_ENUM_NAMES(odla_reduction_mode, ODLA_REDUCE_SUM, "ODLA_REDUCE_NONE", "ODLA_REDUCE_MEAN",
                 "ODLA_REDUCE_SUM")
ODLAC_ENUM_NAMES(odla_tf_idf_mode, ODLA_TFIDF_TFIDF, "ODLA_TFIDF_TF", "ODLA_TFIDF_IDF",
                 "ODLA_TFIDF_TFIDF")
ODLAC_ENUM_NAMES(odla_interpolation_mode, ODLA_CUBIC, "ODLA_NEAREST", "ODLA_LINEAR", "ODLA_CUBIC")
ODLAC_ENUM_NAMES(odla_resize_coordinate_mode, ODLA_ALIGN_CORNERS, "ODLA_ASSYMMETRIC",
                 "ODLA_HALF_PIXEL", "ODLA_HALF_PIXEL_TF", "ODLA_ALIGN_CORNERS")
ODLAC_ENUM_NAMES(odla_fill_method, ODLA_RandomUniform, "ODLA_EyeLike", "ODLA_RandomNormal",
                 "ODLA_RandomUniform")
ODLAC_ENUM_NAMES(odla_loop_output_mode, ODLA_LOOP_REV_AFTER, "ODLA_LOOP_LAST_VALUE",
                 "ODLA_LOOP_FWD_BEFORE", "ODLA_LOOP_FWD_AFTER", "ODLA_LOOP_REV_BEFORE",
                 "ODLA_LOOP_REV_AFTER")
ODLAC_ENUM_NAMES(odla_ext_fused_activation, ODLA_EXT_FUSED_GELU, "ODLA_EXT_FUSED_NONE",
                 "ODLA_EXT_FUSED_RELU", "ODLA_EXT_FUSED_CLAMP", "ODLA_EXT_FUSED_SIGMOID",
                 "ODLA_EXT_FUSED_TANH", "ODLA_EXT_FUSED_LEAKY_RELU", "ODLA_EXT_FUSED_HARD_SWISH",
                 "ODLA_EXT_FUSED_SWISH", "ODLA_EXT_FUSED_GELU")
#undef ODLAC_ENUM_NAMES

std::string lastId(const std::vector<Arg> &args) {
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (const Id *id = std::get_if<Id>(&*it))
      return id->name;
    if (const Ids *ids = std::get_if<Ids>(&*it))
      return ids->names.empty() ? "" : ids->names[0];
  }
  return "";
}

std::vector<std::string> Call::paramNames() const {
  std::vector<std::string> names(1);
  for (const char *p = params; *p; ++p) {
    if (*p == ',')
      names.emplace_back();
    else if (*p != ' ')
      names.back() += *p;
  }
  return names;
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

namespace odlac::lower {

const odla_ext_custom_params *Binder::conv(const CustomParams &p) {
  struct Storage {
    std::vector<std::vector<odla_int64>> ints;
    std::vector<std::vector<odla_float32>> floats;
    std::vector<odla_ext_custom_attr> attrs;
    std::vector<odla_value_type> types;
    odla_ext_custom_params params{};
  };
  auto s = std::make_shared<Storage>();
  s->ints.resize(p.attrs.size());
  s->floats.resize(p.attrs.size());
  for (size_t i = 0; i < p.attrs.size(); ++i) {
    const CustomAttr &a = p.attrs[i];
    odla_ext_custom_attr c{a.name.c_str(), a.kind, 0, nullptr};
    if (a.kind == ODLA_EXT_ATTR_STRING) {
      c.count = static_cast<odla_int32>(a.str.size());
      c.data = a.str.c_str();
    } else if (a.kind == ODLA_EXT_ATTR_INT || a.kind == ODLA_EXT_ATTR_INTS) {
      s->ints[i].assign(a.ints.begin(), a.ints.end());
      c.count = static_cast<odla_int32>(a.ints.size());
      c.data = a.ints.empty() ? nullptr : s->ints[i].data();
    } else {
      s->floats[i].assign(a.floats.begin(), a.floats.end());
      c.count = static_cast<odla_int32>(a.floats.size());
      c.data = a.floats.empty() ? nullptr : s->floats[i].data();
    }
    s->attrs.push_back(c);
  }
  for (const VType &t : p.resultTypes)
    s->types.push_back(conv(t));
  s->params.version = ODLA_EXT_CUSTOM_VERSION;
  s->params.num_attrs = static_cast<odla_int32>(s->attrs.size());
  s->params.attrs = s->attrs.empty() ? nullptr : s->attrs.data();
  s->params.result_types = s->types.empty() ? nullptr : s->types.data();
  keep_.push_back(s);
  return &s->params;
}

} // namespace odlac::lower
