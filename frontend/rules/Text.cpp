// Import rules for string tensors (StringConcat, StringNormalizer, StringSplit, RegexFullMatch)
// and the ai.onnx.ml ops: LabelEncoder (compiler/ops/Text.cpp), and Binarizer and
// ArrayFeatureExtractor, which decompose into core ops.
//
// StringNormalizer's element count and StringSplit's width depend on the data: the shape the
// model declares for the result fixes them (the kernels check it when they run), and a model
// that declares none is refused. String-list attributes (stopwords, LabelEncoder's keys and
// values) become constant operands.
#include "Rules.h"

#include "Tensor.h"
#include "ir/Limits.h"
#include "ops/OpDef.h"

#include <ODLA/ext/odla_ext_string.h> // ODLA_EXT_CASE_*, the IR attribute's values

#include <cmath>

namespace odlac {
namespace {

Value *stringConstant(ImportCtx &ctx, const std::string &suffix, std::vector<std::string> v) {
  TensorType type{DType::Str, {static_cast<int64_t>(v.size())}};
  return ctx.graph().addConstant(ctx.tempName(suffix), type, Buffer::ofStrings(std::move(v)));
}

// Strings of an attribute become constants; NUL bytes cannot be held (docs/generated-code.md).
Status checkNoNul(ImportCtx &ctx, const char *attr, const std::vector<std::string> &v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].find('\0') != std::string::npos)
      return ctx.fail("attribute " + std::string(attr) + "[" + str(static_cast<int64_t>(i)) +
                      "] holds a NUL byte (odlac's strings are NUL-terminated)");
  return Status::ok();
}

Status importStringNormalizer(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  std::string action = ctx.attrString("case_change_action", "NONE");
  int64_t mode = action == "NONE"    ? ODLA_EXT_CASE_NONE
                 : action == "LOWER" ? ODLA_EXT_CASE_LOWER
                 : action == "UPPER" ? ODLA_EXT_CASE_UPPER
                                     : -1;
  if (mode < 0)
    return ctx.fail("attribute case_change_action='" + action +
                    "' is not one of NONE, LOWER, UPPER");
  // ONNX leaves the locale to the platform; the kernel implements en_US's (and C's) case
  // mapping of the letters it lists (odla_ext_string.h), so only those locales are honoured.
  std::string locale = ctx.attrString("locale", "");
  if (!locale.empty() && locale != "en_US" && locale != "C" && locale != "en_US.UTF-8")
    return ctx.fail("attribute locale='" + locale +
                    "' is not supported (en_US, en_US.UTF-8, C: the case mapping odlac's "
                    "kernel implements)");
  std::vector<std::string> stop = ctx.attrStrings("stopwords");
  if (Status s = checkNoNul(ctx, "stopwords", stop))
    return s;
  const Dims &dims = x->dims();
  if (!(dims.size() == 1 || (dims.size() == 2 && dims[0] == 1)))
    return ctx.fail("input " + toString(x->type()) + " must have shape [C] or [1, C]");
  // Without stopwords every element is kept: the count is static.
  int64_t count = std::max<int64_t>(1, dims.back());
  if (!stop.empty()) {
    auto t = ctx.declaredType(0);
    if (!t || t->rank() != static_cast<int>(dims.size()))
      return ctx.fail("the number of elements that are not stopwords is known only at run "
                      "time, and the model declares no static shape of rank " +
                      str(static_cast<int64_t>(dims.size())) + " for output '" + ctx.outputName(0) +
                      "'");
    count = t->dims.back();
  }
  std::vector<Value *> operands{x};
  if (!stop.empty())
    operands.push_back(stringConstant(ctx, "stopwords", std::move(stop)));
  auto out = ctx.emit("StringNormalizer", operands,
                      {{"count", count},
                       {"case_change_action", mode},
                       {"is_case_sensitive", ctx.attrInt("is_case_sensitive", 0) != 0},
                       {"locale", locale}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

Status importStringSplit(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  std::string delimiter = ctx.attrString("delimiter", "");
  if (delimiter.find('\0') != std::string::npos)
    return ctx.fail("attribute delimiter holds a NUL byte (odlac's strings are NUL-terminated)");
  int64_t maxsplit = ctx.attrInt("maxsplit", -1);
  if (ctx.hasAttr("maxsplit") && maxsplit < 0)
    return ctx.fail("attribute maxsplit=" + str(maxsplit) + " must not be negative");
  // The width (most substrings of one element) depends on the data, except for no elements.
  int64_t width = 0;
  if (x->type().numElements() > 0) {
    auto t = ctx.declaredType(0);
    if (!t || t->rank() != x->type().rank() + 1)
      return ctx.fail("the most substrings one element splits into is known only at run time, "
                      "and the model declares no static shape of rank " +
                      str(x->type().rank() + 1) + " for output '" + ctx.outputName(0) + "'");
    width = t->dims.back();
  }
  auto outs = ctx.emitResults(
      "StringSplit", {x}, {{"width", width}, {"delimiter", delimiter}, {"maxsplit", maxsplit}}, 2);
  if (!outs)
    return outs.takeStatus();
  ctx.setOutput(0, (*outs)[0]);
  ctx.setOutput(1, (*outs)[1]);
  return Status::ok();
}

// LabelEncoder-2 and -4: the keys and values from whichever attribute holds them (ONNX: exactly
// one of keys_* and one of values_*), the default from the default_* of the values' type.
struct Mapping {
  DType dtype;
  std::shared_ptr<const Buffer> data;
  int64_t count;
};

Expected<Mapping> mappingAttr(ImportCtx &ctx, const std::string &prefix, bool isDefault) {
  std::vector<Mapping> found;
  std::string names;
  auto note = [&](const std::string &name) { names += (names.empty() ? "" : ", ") + name; };
  std::string s = prefix + (isDefault ? "_string" : "_strings");
  if (ctx.hasAttr(s.c_str())) {
    std::vector<std::string> v = isDefault ? std::vector<std::string>{ctx.attrString(s.c_str(), "")}
                                           : ctx.attrStrings(s.c_str());
    if (Status st = checkNoNul(ctx, s.c_str(), v))
      return st;
    int64_t n = static_cast<int64_t>(v.size());
    found.push_back({DType::Str, Buffer::ofStrings(std::move(v)), n});
    note(s);
  }
  std::string i = prefix + (isDefault ? "_int64" : "_int64s");
  if (ctx.hasAttr(i.c_str())) {
    std::vector<int64_t> v =
        isDefault ? std::vector<int64_t>{ctx.attrInt(i.c_str(), 0)} : ctx.attrInts(i.c_str());
    found.push_back(
        {DType::I64, Buffer::copyOf(v.data(), v.size() * 8), static_cast<int64_t>(v.size())});
    note(i);
  }
  std::string f = prefix + (isDefault ? "_float" : "_floats");
  if (ctx.hasAttr(f.c_str())) {
    std::vector<float> v;
    if (isDefault)
      v.push_back(static_cast<float>(ctx.attrFloat(f.c_str(), 0)));
    else
      for (double d : ctx.attrFloats(f.c_str()))
        v.push_back(static_cast<float>(d));
    found.push_back(
        {DType::F32, Buffer::copyOf(v.data(), v.size() * 4), static_cast<int64_t>(v.size())});
    note(f);
  }
  std::string t = prefix + "_tensor";
  if (ctx.opset() >= 4 && ctx.hasAttr(t.c_str())) {
    auto decoded = decodeTensor(ctx.findAttr(t.c_str())->t(), ctx.modelDir());
    if (!decoded)
      return decoded.takeStatus();
    if (decoded->type.rank() != 1)
      return ctx.fail("attribute " + t + " " + toString(decoded->type) + " must have rank 1");
    found.push_back({decoded->type.dtype, decoded->data, decoded->type.numElements()});
    note(t);
  }
  if (found.size() > 1)
    return ctx.fail("attributes " + names + " each set the " + prefix + "; give only one");
  if (found.empty())
    return Mapping{DType::F32, nullptr, 0};
  return found[0];
}

// ONNX's default when the model gives none: "_Unused" for strings, -1 for integers, -0.0 for
// floats (LabelEncoder-4).
Mapping defaultOf(DType t) {
  if (t == DType::Str)
    return {t, Buffer::ofStrings({"_Unused"}), 1};
  if (t == DType::F32 || t == DType::F64) {
    double d = -0.0;
    float f = -0.0f;
    return {t, t == DType::F32 ? Buffer::copyOf(&f, 4) : Buffer::copyOf(&d, 8), 1};
  }
  std::vector<unsigned char> bytes = filledBytes(t, -1, 1);
  return {t, Buffer::copyOf(bytes.data(), bytes.size()), 1};
}

Status importLabelEncoder(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  auto keys = mappingAttr(ctx, "keys", false);
  if (!keys)
    return keys.takeStatus();
  auto values = mappingAttr(ctx, "values", false);
  if (!values)
    return values.takeStatus();
  if (!keys->data || !values->data)
    return ctx.fail("needs one keys_* and one values_* attribute");
  if (keys->count != values->count)
    return ctx.fail("has " + str(keys->count) + " keys and " + str(values->count) + " values");
  if (keys->dtype != x->dtype())
    return ctx.fail("keys of type " + std::string(dtypeName(keys->dtype)) + " cannot match input " +
                    toString(x->type()));
  auto dflt = mappingAttr(ctx, "default", true);
  if (!dflt)
    return dflt.takeStatus();
  Mapping d = dflt->data && dflt->dtype == values->dtype ? *dflt : defaultOf(values->dtype);
  if (dflt->data && dflt->dtype != values->dtype && ctx.hasAttr("default_tensor"))
    return ctx.fail("default_tensor of type " + std::string(dtypeName(dflt->dtype)) +
                    " differs from the values' " + dtypeName(values->dtype));
  if (d.count != 1)
    return ctx.fail("default_tensor must hold one element, it holds " + str(d.count));
  // The other default_* attributes (of another type than the values) cannot change the result.
  for (const char *a : {"default_string", "default_int64", "default_float"})
    ctx.hasAttr(a);
  Graph &g = ctx.graph();
  Value *k = g.addConstant(ctx.tempName("keys"), {keys->dtype, {keys->count}}, keys->data);
  Value *v = g.addConstant(ctx.tempName("values"), {values->dtype, {values->count}}, values->data);
  Value *dv = g.addConstant(ctx.tempName("default"), {d.dtype, {1}}, d.data);
  auto out = ctx.emit("LabelEncoder", {x, k, v, dv});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// Binarizer: x > threshold as 1 or 0 of x's type.
Status importBinarizer(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  double threshold = ctx.attrFloat("threshold", 0.0);
  // For integers x > threshold is x > floor(threshold) (truncation would move a negative one).
  std::vector<unsigned char> t =
      filledBytes(x->dtype(), isFloat(x->dtype()) ? threshold : std::floor(threshold), 1);
  auto above =
      ctx.emit("Greater", {x, ctx.constant(ctx.tempName("threshold"), {x->dtype(), {}}, t.data())},
               {}, ctx.tempName("above"));
  if (!above)
    return above.takeStatus();
  auto out = ctx.emit("Cast", {*above}, {{"to", std::string(dtypeName(x->dtype()))}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// ArrayFeatureExtractor: the elements at indices y along x's last axis (a Gather); a rank-1 x
// gives [1, k] (ONNX Runtime's shape, which the tests expect).
Status importArrayFeatureExtractor(ImportCtx &ctx) {
  Value *x = ctx.input(0), *y = ctx.input(1);
  if (x->type().rank() < 1)
    return ctx.fail("input " + toString(x->type()) + " must have rank 1 or more");
  int64_t k = y->type().numElements();
  auto flat = ctx.reshape(y, {k});
  if (!flat)
    return flat.takeStatus();
  auto picked = ctx.emit("Gather", {x, *flat}, {{"axis", int64_t{x->type().rank() - 1}}},
                         x->type().rank() > 1 ? "" : ctx.tempName("picked"));
  if (!picked)
    return picked.takeStatus();
  Value *out = *picked;
  if (x->type().rank() == 1) {
    auto row = ctx.reshape(out, {1, k}, ctx.outputName(0));
    if (!row)
      return row.takeStatus();
    out = *row;
  }
  ctx.setOutput(0, out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"StringConcat", 20, "StringConcat", {}, nullptr},
    {"StringNormalizer", 10, nullptr,
     reads({"case_change_action", "is_case_sensitive", "locale", "stopwords"}),
     importStringNormalizer},
    {"StringSplit", 20, nullptr, reads({"delimiter", "maxsplit"}), importStringSplit},
    // The pattern's syntax is checked when odlac lowers the node through the reference
    // backend's builder (odla_ExtRegexFullMatch), which names what it does not support.
    {"RegexFullMatch", 20, "RegexFullMatch", {{"pattern", "pattern"}}, nullptr},
    ml({"Binarizer", 1, nullptr, reads({"threshold"}), importBinarizer}),
    ml({"ArrayFeatureExtractor", 1, nullptr, {}, importArrayFeatureExtractor}),
    ml(rejected("LabelEncoder", 1,
                "LabelEncoder-1 (classes_strings) is not supported; opset 2 and later are")),
    ml({"LabelEncoder", 2, nullptr,
        reads({"default_float", "default_int64", "default_string", "keys_floats", "keys_int64s",
               "keys_strings", "values_floats", "values_int64s", "values_strings"}),
        importLabelEncoder}),
    ml({"LabelEncoder", 4, nullptr,
        reads({"default_float", "default_int64", "default_string", "default_tensor", "keys_floats",
               "keys_int64s", "keys_strings", "keys_tensor", "values_floats", "values_int64s",
               "values_strings", "values_tensor"}),
        importLabelEncoder}),
};

} // namespace

const std::vector<ImportRule> &textRules() { return kRules; }

} // namespace odlac
