// Custom ops: nodes of the ONNX domains named with --custom-op-domain, computed by kernels the
// application registers with the backend (odla_ext_custom.h). odlac knows nothing of what
// they compute: the row is opaque and external (no folding, merging or removal), and the
// result types are facts of the model (its value_info), carried as attributes.
//
//   CustomOp(inputs...) {op_type, domain, result_dtypes, result_dims, attr.<name>...}
//     op_type: the ONNX op_type, the name the kernel is registered under (odla_CustomOp's
//       op_name); domain: the ONNX domain (its function_name).
//     result_dtypes: one element type name per result ("f32"); result_dims: for each result,
//       its rank followed by its dims ([2, 3, 4] is a [3, 4] result).
//     attr.<name>: the node's own attributes (int, float, string, ints, floats), passed to
//       the kernel under <name>.
#include "lower/Lowering.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

constexpr const char *kAttrPrefix = "attr.";

// The result types the attributes declare; an error when they do not fit the node.
Expected<std::vector<TensorType>> declaredResults(const Node &n) {
  const std::vector<std::string> &dtypes =
      std::get<std::vector<std::string>>(n.attrs().at("result_dtypes"));
  const std::vector<int64_t> &dims = n.ints("result_dims");
  std::vector<TensorType> types;
  size_t at = 0;
  for (const std::string &name : dtypes) {
    auto dtype = dtypeFromName(name);
    if (!dtype)
      return Status::error("result_dtypes names an unknown element type '" + name + "'");
    if (at >= dims.size() || dims[at] < 0 || static_cast<size_t>(dims[at]) > dims.size() - at - 1)
      return Status::error("result_dims does not hold a rank and dims for result " +
                           std::to_string(types.size()));
    TensorType t{*dtype, Dims(dims.begin() + static_cast<long>(at) + 1,
                              dims.begin() + static_cast<long>(at) + 1 + dims[at])};
    at += 1 + static_cast<size_t>(dims[at]);
    for (int64_t d : t.dims)
      if (d < 0)
        return Status::error("result " + std::to_string(types.size()) + " has a negative dim");
    types.push_back(t);
  }
  if (at != dims.size())
    return Status::error("result_dims holds more than the results' ranks and dims");
  return types;
}

Status inferCustomOp(InferCtx &c) {
  const Node &n = c.node();
  if (c.numInputs() > ODLA_MAX_OUTPUTS || n.numOutputs() > ODLA_MAX_OUTPUTS)
    return c.fail(std::to_string(c.numInputs()) + " operands and " +
                  std::to_string(n.numOutputs()) + " results; odla_CustomOp takes at most " +
                  std::to_string(ODLA_MAX_OUTPUTS) + " of each");
  for (int i = 0; i < c.numInputs(); ++i)
    if (!c.hasInput(i))
      return c.fail("operand " + std::to_string(i) +
                    " is absent; custom ops take no absent operands");
  for (const auto &[name, value] : n.attrs()) {
    if (name.rfind(kAttrPrefix, 0) == 0 || n.op().findAttr(name))
      continue;
    return c.fail("unknown attribute '" + name + "' (the node's own attributes are named " +
                  kAttrPrefix + "<name>)");
  }
  for (const auto &[name, value] : n.attrs())
    if (attrKind(value) == AttrKind::Strings && name.rfind(kAttrPrefix, 0) == 0)
      return c.fail("attribute '" + name.substr(5) +
                    "' is a list of strings; custom ops take "
                    "int, float, string, ints and floats attributes");
  auto types = declaredResults(n);
  if (!types)
    return c.fail(types.status().message());
  if (types->size() != static_cast<size_t>(n.numOutputs()))
    return c.fail("result_dtypes declares " + std::to_string(types->size()) + " results for " +
                  std::to_string(n.numOutputs()));
  for (size_t i = 0; i < types->size(); ++i)
    c.setOut(static_cast<int>(i), (*types)[i]);
  return Status::ok();
}

void lowerCustomOp(LowerCtx &c) {
  const Node &n = c.node();
  lower::CustomParams params;
  for (const auto &[name, value] : n.attrs()) {
    if (name.rfind(kAttrPrefix, 0) != 0)
      continue;
    lower::CustomAttr a{name.substr(5), 0, {}, {}, {}};
    switch (attrKind(value)) {
    case AttrKind::Int:
      a.kind = ODLA_EXT_ATTR_INT;
      a.ints = {std::get<int64_t>(value)};
      break;
    case AttrKind::Float:
      a.kind = ODLA_EXT_ATTR_FLOAT;
      a.floats = {static_cast<float>(std::get<double>(value))};
      break;
    case AttrKind::String:
      a.kind = ODLA_EXT_ATTR_STRING;
      a.str = std::get<std::string>(value);
      break;
    case AttrKind::Ints:
      a.kind = ODLA_EXT_ATTR_INTS;
      a.ints = std::get<std::vector<int64_t>>(value);
      break;
    case AttrKind::Floats:
      a.kind = ODLA_EXT_ATTR_FLOATS;
      for (double f : std::get<std::vector<double>>(value))
        a.floats.push_back(static_cast<float>(f));
      break;
    case AttrKind::Strings: // refused by inferCustomOp
      break;
    }
    params.attrs.push_back(std::move(a));
  }
  lower::Ids ids;
  for (int i = 0; i < n.numOutputs(); ++i) {
    ids.names.push_back(n.output(i)->name());
    params.resultTypes.push_back({odlaType(n.output(i)->dtype()), c.outShape(i)});
  }
  std::vector<lower::Val> results = c.sink().CustomOp(c.ins(), lower::Str{n.s("op_type")},
                                                      lower::Str{n.s("domain")}, ids, params);
  for (int i = 0; i < n.numOutputs(); ++i)
    c.setOut(i, results[static_cast<size_t>(i)]);
}

} // namespace

namespace ops {

const OpDef CustomOp = {"CustomOp",
                        {{"inputs", OperandDef::Variadic}},
                        1, // results: as many as result_dtypes declares
                        {{"op_type", AttrKind::String, std::nullopt},
                         {"domain", AttrKind::String, std::nullopt},
                         {"result_dtypes", AttrKind::Strings, std::nullopt},
                         {"result_dims", AttrKind::Ints, std::nullopt}},
                        FusionClass::Opaque,
                        kExternal | kOpenAttributes,
                        inferCustomOp,
                        lowerCustomOp};

} // namespace ops

} // namespace odlac
