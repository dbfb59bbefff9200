// Text: the ops on string tensors (StringConcat, StringNormalizer, StringSplit, RegexFullMatch)
// and ai.onnx.ml's LabelEncoder, lowered to the string extension ops (odla_ext_string.h).
// Strings are whole
// elements (DType::Str); results whose size depends on the data (StringNormalizer's count,
// StringSplit's width) carry it as an attribute taken from the model's declared shapes, and
// the kernel checks it when it runs. String-list attributes arrive as constant operands
// (stopwords, LabelEncoder's keys and values), so that they reach generated C as escaped
// string constants like any other.
#include "ir/Limits.h"
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

Status inferStringConcat(InferCtx &c) {
  auto dims = broadcastDims(c.in(0).dims, c.in(1).dims);
  if (!dims)
    return c.fail("shapes " + dimsToString(c.in(0).dims) + " and " + dimsToString(c.in(1).dims) +
                  " do not broadcast");
  c.setOut(0, TensorType{DType::Str, *dims});
  return Status::ok();
}

// StringNormalizer: [C] or [1, C] in, `count` elements out (at least 1: ONNX gives [""] when
// every element is a stopword).
Status inferStringNormalizer(InferCtx &c) {
  const Dims &x = c.in(0).dims;
  if (!(x.size() == 1 || (x.size() == 2 && x[0] == 1)))
    return c.fail("input " + toString(c.in(0)) + " must have shape [C] or [1, C]");
  if (c.hasInput(1) && c.in(1).rank() != 1)
    return c.fail("stopwords " + toString(c.in(1)) + " must have rank 1");
  int64_t count = c.i("count"), most = std::max<int64_t>(1, x.back());
  if (count < 1 || count > most)
    return c.fail("count " + str(count) + " must be in [1, " + str(most) + "] for input " +
                  toString(c.in(0)));
  int64_t mode = c.i("case_change_action");
  if (mode < ODLA_EXT_CASE_NONE || mode > ODLA_EXT_CASE_UPPER)
    return c.fail("case_change_action " + str(mode) + " is not 0 (none), 1 (lower) or 2 (upper)");
  c.setOut(0, TensorType{DType::Str, x.size() == 1 ? Dims{count} : Dims{1, count}});
  return Status::ok();
}

// StringSplit: substrings input's dims + [width], and the counts (int64, input's dims).
Status inferStringSplit(InferCtx &c) {
  int64_t width = c.i("width");
  if (width < 0)
    return c.fail("width " + str(width) + " must not be negative");
  if (c.in(0).rank() + 1 > kMaxRank)
    return c.fail("input " + toString(c.in(0)) + " leaves no room for the substrings' axis");
  Dims out = c.in(0).dims;
  out.push_back(width);
  c.setOut(0, TensorType{DType::Str, out});
  c.setOut(1, TensorType{DType::I64, c.in(0).dims});
  return Status::ok();
}

// LabelEncoder: keys of the input's type, values (any type) of keys' length, a one-element
// default of values' type; the result has the input's shape and values' type.
Status inferLabelEncoder(InferCtx &c) {
  const TensorType &keys = c.in(1), &values = c.in(2), &dflt = c.in(3);
  if (keys.dtype != c.in(0).dtype)
    return c.fail("keys " + toString(keys) + " must have the input's element type " +
                  dtypeName(c.in(0).dtype));
  if (keys.rank() != 1 || values.rank() != 1 || keys.dims != values.dims)
    return c.fail("keys " + toString(keys) + " and values " + toString(values) +
                  " must have rank 1 and one length");
  if (dflt.dtype != values.dtype || dflt.numElements() != 1)
    return c.fail("default " + toString(dflt) + " must be one element of values' type " +
                  dtypeName(values.dtype));
  c.setOut(0, TensorType{values.dtype, c.in(0).dims});
  return Status::ok();
}

const OperandDef kStrings{"x", OperandDef::Required, kStringTypes};
// LabelEncoder-4's key and value types (strings, int64, int16, float and double).
constexpr DTypeMask kLabelTypes = kStringTypes | maskOf(DType::I64) | maskOf(DType::I16) |
                                  maskOf(DType::F32) | maskOf(DType::F64);

} // namespace

namespace ops {

const OpDef StringConcat = {
    "StringConcat",
    {kStrings, {"y", OperandDef::Required, kStringTypes}},
    1,
    {},
    FusionClass::Opaque,
    kTraitNone,
    inferStringConcat,
    [](LowerCtx &c) { c.setOut(0, c.sink().ExtStringConcat(c.in(0), c.in(1), c.outId(0))); }};
const OpDef StringNormalizer = {
    "StringNormalizer",
    {kStrings, {"stopwords", OperandDef::Optional, kStringTypes}},
    1,
    {{"count", AttrKind::Int, std::nullopt},
     {"case_change_action", AttrKind::Int, AttrValue(int64_t{ODLA_EXT_CASE_NONE})},
     {"is_case_sensitive", AttrKind::Int, AttrValue(int64_t{0})},
     {"locale", AttrKind::String, AttrValue(std::string())}},
    FusionClass::Opaque,
    kTraitNone,
    inferStringNormalizer,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0, c.sink().ExtStringNormalizer(
                      c.in(0), c.in(1), static_cast<odla_int32>(n.i("case_change_action")),
                      {n.i("is_case_sensitive") != 0}, {n.s("locale")}, c.outShape(0), c.outId(0)));
    }};
const OpDef StringSplit = {"StringSplit",
                           {kStrings},
                           2,
                           {{"width", AttrKind::Int, std::nullopt},
                            {"delimiter", AttrKind::String, AttrValue(std::string())},
                            {"maxsplit", AttrKind::Int, AttrValue(int64_t{-1})}},
                           FusionClass::Opaque,
                           kTraitNone,
                           inferStringSplit,
                           [](LowerCtx &c) {
                             const Node &n = c.node();
                             auto outs = c.sink().ExtStringSplit(
                                 c.in(0), {n.s("delimiter")}, n.i("maxsplit"), c.outShape(0),
                                 lower::Ids{{n.output(0)->name(), n.output(1)->name()}});
                             c.setOut(0, outs.at(0));
                             c.setOut(1, outs.at(1));
                           }};
const OpDef RegexFullMatch = {
    "RegexFullMatch",
    {kStrings},
    1,
    {{"pattern", AttrKind::String, std::nullopt}},
    FusionClass::Elementwise,
    kTraitNone,
    [](InferCtx &c) {
      c.setOut(0, TensorType{DType::Bool, c.in(0).dims});
      return Status::ok();
    },
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtRegexFullMatch(c.in(0), {c.node().s("pattern")}, c.outId(0)));
    }};
const OpDef LabelEncoder = {
    "LabelEncoder",
    {{"x", OperandDef::Required, kLabelTypes},
     {"keys", OperandDef::Required, kLabelTypes},
     {"values", OperandDef::Required, kLabelTypes},
     {"default", OperandDef::Required, kLabelTypes}},
    1,
    {},
    FusionClass::Opaque,
    kTraitNone,
    inferLabelEncoder,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().ExtLabelEncoder(c.in(0), c.in(1), c.in(2), c.in(3), c.outId(0)));
    }};

} // namespace ops

} // namespace odlac
