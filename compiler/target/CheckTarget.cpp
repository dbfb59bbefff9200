// Checks a lowered graph call by call against a backend's manifest (see CheckTarget.h).
#include "target/CheckTarget.h"

#include "evaluate/DirectSink.h"
#include "lower/Lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace odlac {
namespace {

using namespace lower;

std::string typeName(odla_element_type t) {
  std::string s = enumName(t) + 5; // without "ODLA_"
  for (char &ch : s)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Numbers as limits compare them: integral values without a fraction ("1" for 1.0f).
std::string number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  return fmt::format("{:.9g}", v);
}

template <class T> std::string joined(const std::vector<T> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// The calls lowerGraph makes for graph inputs, constants and outputs belong to the call
// sequence of the execution mode, which the driver checks against the manifest's runtime
// functions (callSequence); only the calls that lower nodes are op builders.
bool isSequenceCall(const std::string &fn) {
  return fn == "CreateArgument" || fn == "CreateConstant" || fn == "SetValueAsOutput";
}

using Facts = std::vector<std::string>;

class CheckingSink : public DirectSink {
public:
  explicit CheckingSink(const Target &t) : t_(t) {}
  void beginLowering(const std::string &what) override { what_ = what; }
  Status report() const;

protected:
  std::vector<Val> emit(Call &call) override;

private:
  std::optional<odla_value_type> typeOf(Val v) const {
    odla_value_type ty;
    if (v.isNull() || !value(v) || odla_GetValueType(value(v), &ty) != ODLA_SUCCESS)
      return std::nullopt;
    return ty;
  }
  void checkAvailable(const std::string &fn, const std::string &type);
  void checkLimit(const Limit &l, const Call &call, const std::vector<Val> &results);
  // The facts of the call that fail the condition, joined (empty when it holds).
  Expected<std::string> failing(const Condition &c, const Call &call,
                                const std::vector<Val> &results) const;
  // The facts a subject has in a call: one per operand it names (several for a value list;
  // "none" for an absent operand); an error says why the subject names nothing.
  Expected<Facts> facts(const std::string &subject, const Call &call,
                        const std::vector<Val> &results) const;
  Expected<Facts> valueFacts(Val v, const std::vector<std::string> &props,
                             const std::string &subject) const;
  Expected<Facts> rounding(const Call &call, const std::vector<std::string> &params) const;

  const Target &t_;
  std::string what_;                                     // what the current calls lower
  std::map<std::string, std::set<std::string>> missing_; // function (+ type) -> nodes
  // "odla_Relu|input.rank=4" -> "node 'r' (Relu) with input.rank 2", ...
  std::map<std::string, std::vector<std::string>> violations_;
  std::map<std::string, std::string> badLimits_; // limit -> why its subject does not resolve
  std::map<std::string, std::set<std::string>> wrongTypes_; // type -> what has it
  std::set<std::string> ids_;
  std::set<int> constants_; // the values odla_CreateConstant made (property "constant")
};

std::vector<std::string> splitDots(const std::string &s) {
  std::vector<std::string> parts;
  std::istringstream in(s);
  for (std::string p; std::getline(in, p, '.');)
    parts.push_back(p);
  return parts;
}

bool isIndex(const std::string &s) {
  return !s.empty() && s.size() < 3 && s.find_first_not_of("0123456789") == std::string::npos;
}

Expected<Facts> CheckingSink::valueFacts(Val v, const std::vector<std::string> &props,
                                         const std::string &subject) const {
  auto ty = typeOf(v);
  if (!ty) // absent (or rejected by the reference backend, which planning reports)
    return Facts{"none"};
  const odla_value_shape &s = ty->shape;
  std::vector<int64_t> dims(s.dims, s.dims + std::max<odla_int32>(s.size, 0));
  std::string prop = props.empty() ? "shape" : props[0];
  if (props.size() == 2 && prop == "dims" && isIndex(props[1])) {
    size_t i = std::stoul(props[1]);
    return Facts{i < dims.size() ? std::to_string(dims[i]) : "none"};
  }
  if (props.size() > 1)
    return Status::error("'" + subject + "' has a property a value lacks");
  if (prop == "rank")
    return Facts{std::to_string(dims.size())};
  if (prop == "shape")
    return Facts{joined(dims)};
  if (prop == "count") {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return Facts{std::to_string(n)};
  }
  if (prop == "type")
    return Facts{typeName(ty->element_type)};
  // A backend may read an operand's data while building the graph (HALO's dnnl reorders a
  // convolution's kernel then): 1 for a constant, 0 for a value computed or fed at run time.
  if (prop == "constant")
    return Facts{constants_.count(v.index) ? "1" : "0"};
  return Status::error("'" + prop +
                       "' is no property of a value (rank, shape, count, dims.N, type, constant)");
}

// Whether the output dims of a pooling call are ONNX's floor rounding of its window over the
// padded input ("floor"), or larger, as ceil_mode makes them ("ceil").
Expected<Facts> CheckingSink::rounding(const Call &call,
                                       const std::vector<std::string> &params) const {
  auto arg = [&](const char *name) -> const Arg * {
    for (size_t i = 0; i < params.size() && i < call.args.size(); ++i)
      if (params[i] == name)
        return &call.args[i];
    return nullptr;
  };
  const Arg *input = arg("input"), *layout = arg("input_layout"), *window = arg("window_dims"),
            *strides = arg("strides"), *front = arg("paddings_front"), *back = arg("paddings_back"),
            *out = arg("output_dims"), *dil = arg("dilations");
  if (!input || !layout || !window || !strides || !front || !back || !out)
    return Status::error("'rounding' applies to pooling calls (a window over input with "
                         "strides, paddings and output_dims)");
  auto ty = typeOf(std::get<Val>(*input));
  if (!ty)
    return Facts{"none"};
  bool last = std::get<EnumArg>(*layout).name == "ODLA_CHANNELS_LAST";
  const auto &w = std::get<U32s>(*window).v, &st = std::get<U32s>(*strides).v,
             &pf = std::get<U32s>(*front).v, &pb = std::get<U32s>(*back).v;
  const auto &o = std::get<lower::Shape>(*out).dims;
  for (size_t i = 0; i < w.size(); ++i) {
    size_t axis = last ? 1 + i : 2 + i;
    if (axis >= static_cast<size_t>(ty->shape.size) || axis >= o.size() || i >= st.size() ||
        i >= pf.size() || i >= pb.size() || st[i] == 0)
      return Facts{"ceil"}; // not a window this check understands: never counted as floor
    int64_t d = dil && i < std::get<U32s>(*dil).v.size() ? std::get<U32s>(*dil).v[i] : 1;
    int64_t span = (static_cast<int64_t>(w[i]) - 1) * d + 1;
    int64_t padded = ty->shape.dims[axis] + pf[i] + pb[i];
    if (padded < span || o[axis] != (padded - span) / st[i] + 1)
      return Facts{"ceil"};
  }
  return Facts{"floor"};
}

Expected<Facts> CheckingSink::facts(const std::string &subject, const Call &call,
                                    const std::vector<Val> &results) const {
  std::vector<std::string> parts = splitDots(subject);
  std::vector<std::string> props(parts.begin() + 1, parts.end());
  std::vector<std::string> params = call.paramNames();
  if (parts[0] == "rounding" && props.empty())
    return rounding(call, params);
  if (parts[0] == "result") {
    if (results.empty())
      return Status::error(std::string(call.function) + " has no result");
    return valueFacts(results[0], props, subject);
  }
  size_t at = 0;
  while (at < params.size() && params[at] != parts[0])
    ++at;
  if (at == params.size() || at >= call.args.size()) {
    std::string list;
    for (const std::string &p : params)
      list += (list.empty() ? "" : ", ") + p;
    return Status::error("'" + parts[0] + "' is no parameter of " + call.function + " (" + list +
                         "), nor result or rounding");
  }
  const Arg &a = call.args[at];
  std::string prop = props.empty() ? "" : props[0];
  bool one = props.size() == 1;
  if (const Val *v = std::get_if<Val>(&a))
    return valueFacts(*v, props, subject);
  if (const Vals *vs = std::get_if<Vals>(&a)) {
    if (prop == "size" && one)
      return Facts{std::to_string(vs->vals.size())};
    Facts all;
    for (Val v : vs->vals) {
      auto f = valueFacts(v, props, subject);
      if (!f)
        return f;
      all.insert(all.end(), f->begin(), f->end());
    }
    return all;
  }
  auto list = [&](const auto &v) -> Expected<Facts> {
    if (props.empty())
      return Facts{joined(v)};
    if (prop == "size" && one)
      return Facts{std::to_string(v.size())};
    if (isIndex(prop) && one) {
      size_t i = std::stoul(prop);
      return Facts{i < v.size() ? std::to_string(v[i]) : "none"};
    }
    return Status::error("'" + parts[0] + "' is a list: its properties are size and an index");
  };
  if (const U32s *u = std::get_if<U32s>(&a))
    return list(u->v);
  if (const I32s *i = std::get_if<I32s>(&a))
    return list(i->v);
  if (const lower::Shape *s = std::get_if<lower::Shape>(&a)) {
    if (prop == "rank" && one)
      return Facts{std::to_string(s->rank)};
    return list(s->dims);
  }
  if (const VType *t = std::get_if<VType>(&a)) {
    if (prop == "type" && one)
      return Facts{typeName(t->elementType)};
    if (prop == "rank" && one)
      return Facts{std::to_string(t->shape.rank)};
    if (props.empty() || (prop == "shape" && one))
      return Facts{joined(t->shape.dims)};
    return Status::error("'" + parts[0] +
                         "' is a value type: its properties are type, rank, "
                         "shape");
  }
  std::string scalar;
  if (const Flag *f = std::get_if<Flag>(&a))
    scalar = f->on ? "1" : "0";
  else if (const int64_t *i = std::get_if<int64_t>(&a))
    scalar = std::to_string(*i);
  else if (const uint64_t *u = std::get_if<uint64_t>(&a))
    scalar = std::to_string(*u);
  else if (const float *f = std::get_if<float>(&a))
    scalar = number(*f);
  else if (const EnumArg *e = std::get_if<EnumArg>(&a))
    scalar = e->name;
  else if (const Str *s = std::get_if<Str>(&a))
    scalar = s->s;
  else
    return Status::error("'" + parts[0] + "' (an id, data or attribute block) cannot be limited");
  if (!props.empty())
    return Status::error("'" + parts[0] + "' is a scalar: it has no property '" + prop + "'");
  return Facts{scalar};
}

Expected<std::string> CheckingSink::failing(const Condition &c, const Call &call,
                                            const std::vector<Val> &results) const {
  auto got = facts(c.subject, call, results);
  if (!got)
    return got.takeStatus();
  // An alternative naming a parameter, the result or the rounding is another subject.
  std::vector<std::string> params = call.paramNames();
  auto isSubject = [&](const std::string &a) {
    std::string base = a.substr(0, a.find('.'));
    return base == "result" || base == "rounding" ||
           std::find(params.begin(), params.end(), base) != params.end();
  };
  std::set<std::string> allowed;
  for (const std::string &a : c.alternatives) {
    if (!isSubject(a)) { // a literal
      char *end = nullptr;
      double v = std::strtod(a.c_str(), &end);
      allowed.insert(end && *end == '\0' && a.find(',') == std::string::npos ? number(v) : a);
      continue;
    }
    auto other = facts(a, call, results);
    if (!other)
      return other.takeStatus();
    allowed.insert(other->begin(), other->end());
  }
  std::string bad;
  for (const std::string &f : *got)
    if ((allowed.count(f) != 0) == c.negated)
      bad += (bad.empty() ? "" : ", ") + f;
  return bad;
}

void CheckingSink::checkLimit(const Limit &l, const Call &call, const std::vector<Val> &results) {
  std::string key = std::string(call.function) + " " + l.condition.text;
  for (const Condition &g : l.guards) {
    key += (&g == &l.guards.front() ? " when " : " ") + g.text;
    auto bad = failing(g, call, results);
    if (!bad) {
      badLimits_.emplace(key, bad.status().message());
      return;
    }
    if (!bad->empty())
      return; // the limit is about other calls
  }
  auto bad = failing(l.condition, call, results);
  if (!bad)
    badLimits_.emplace(key, bad.status().message());
  else if (!bad->empty())
    violations_[key].push_back(what_ + " with " + l.condition.subject + " " + *bad);
}

void CheckingSink::checkAvailable(const std::string &fn, const std::string &type) {
  std::string what;
  if (fn.rfind("Ext", 0) == 0) {
    if (!t_.hasExtension(fn))
      what = "odla_" + fn + " (an odlac extension)";
  } else if (fn == "CustomOp" &&
             (!t_.features.count("custom_ops") || !t_.hasExtension("ExtRegisterCustomOp"))) {
    // The block odla_CustomOp receives is odla_ext_custom.h's: the core profile lacks it.
    what = "odla_CustomOp with application kernels (manifest feature custom_ops and "
           "extension ExtRegisterCustomOp)";
  } else if (!t_.allOps) {
    auto it = t_.ops.find(fn);
    if (it == t_.ops.end())
      what = "odla_" + fn;
    else if (!it->second.empty() && !type.empty() && !it->second.count(type))
      what = "odla_" + fn + " on " + type;
  }
  if (!what.empty())
    missing_[what].insert(what_);
}

std::vector<Val> CheckingSink::emit(Call &call) {
  std::string fn = std::string(call.function).substr(5); // without "odla_"
  for (const Arg &a : call.args) {
    if (const Id *id = std::get_if<Id>(&a))
      ids_.insert(id->name);
    else if (const Ids *more = std::get_if<Ids>(&a))
      ids_.insert(more->names.begin(), more->names.end());
  }
  std::vector<Val> results = DirectSink::emit(call);
  if (fn == "CreateConstant")
    for (Val r : results)
      constants_.insert(r.index);
  std::optional<odla_value_type> result = results.empty() ? std::nullopt : typeOf(results[0]);
  if (!isSequenceCall(fn))
    checkAvailable(fn, result ? typeName(result->element_type) : "");
  for (const Limit &l : t_.limits)
    if (l.function == fn)
      checkLimit(l, call, results);
  if (!t_.types.empty())
    for (Val r : results)
      if (auto ty = typeOf(r); ty && !t_.types.count(typeName(ty->element_type)))
        wrongTypes_[typeName(ty->element_type)].insert(what_);
  return results;
}

std::string listed(const std::set<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

Status CheckingSink::report() const {
  Status all;
  const std::string backend = "backend '" + t_.backend + "'";
  for (const auto &[what, nodes] : missing_)
    all.append(Status::error(backend + " lacks " + what + ", needed by " +
                             std::to_string(nodes.size()) + " node(s): " + listed(nodes)));
  for (const auto &[key, why] : badLimits_)
    all.append(Status::error("the manifest of " + backend + " has a limit it cannot apply, " + key +
                             ": " + why));
  for (const auto &[key, calls] : violations_) {
    std::string list;
    for (const std::string &c : calls)
      list += (list.empty() ? "" : "; ") + c;
    size_t space = key.find(' ');
    all.append(Status::error(backend + " runs " + key.substr(0, space) + " only with " +
                             key.substr(space + 1) + " (a limit in its manifest); " +
                             std::to_string(calls.size()) + " call(s) do not: " + list));
  }
  if (!t_.types.empty())
    for (const auto &[type, where] : wrongTypes_)
      all.append(Status::error(backend + " takes values of " + listed(t_.types) +
                               " only (its manifest's types), not " + type + ", needed by " +
                               listed(where)));
  if (t_.integerIds && static_cast<int64_t>(ids_.size()) >= t_.idLimit)
    all.append(Status::error(backend + " takes the value ids 1 to " +
                             std::to_string(t_.idLimit - 1) + " (value_ids integers " +
                             std::to_string(t_.idLimit) + " in its manifest); the model needs " +
                             std::to_string(ids_.size())));
  return all;
}

} // namespace

Status checkTarget(const Graph &g, const Target &target) {
  odla_computation comp = nullptr;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend cannot create a computation");
  CheckingSink sink(target);
  lowerGraph(
      g, sink,
      [](const Value &c, size_t) {
        return Data{c.data()->data, ""};
      },
      target);
  odla_DestroyComputation(comp);
  return sink.report();
}

} // namespace odlac
