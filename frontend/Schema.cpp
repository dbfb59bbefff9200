// Checks models and nodes against ONNX 1.23's specification (OnnxSchemas.inc): odlac's own
// replacement for what libonnx's checker verified and the import rules rely on.
#include "Schema.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <vector>

namespace odlac {
namespace {

struct OnnxDomainVersion {
  const char *domain; // "" is the default domain (also spelled "ai.onnx")
  int64_t newest;
};

struct OnnxSchema {
  const char *op;
  int64_t since;
  const char *inputs; // one letter per formal input: S single, O optional, V variadic
  int64_t minInputs, maxInputs;
  const char *outputs;
  int64_t minOutputs, maxOutputs;
  const char *attributes; // "name:kind name:kind!": see OnnxSchemas.inc
};

#include "OnnxSchemas.inc"

using AttrType = onnx::AttributeProto::AttributeType;

std::string domainName(const std::string &d) {
  return d.empty() ? "the default ONNX domain" : "domain '" + d + "'";
}

std::string typeName(AttrType t) { return onnx::AttributeProto::AttributeType_Name(t); }

AttrType typeOfLetter(char c) {
  static const std::map<char, AttrType> kTypes = {
      {'f', onnx::AttributeProto::FLOAT},          {'i', onnx::AttributeProto::INT},
      {'s', onnx::AttributeProto::STRING},         {'t', onnx::AttributeProto::TENSOR},
      {'g', onnx::AttributeProto::GRAPH},          {'p', onnx::AttributeProto::SPARSE_TENSOR},
      {'y', onnx::AttributeProto::TYPE_PROTO},     {'F', onnx::AttributeProto::FLOATS},
      {'I', onnx::AttributeProto::INTS},           {'S', onnx::AttributeProto::STRINGS},
      {'T', onnx::AttributeProto::TENSORS},        {'G', onnx::AttributeProto::GRAPHS},
      {'P', onnx::AttributeProto::SPARSE_TENSORS}, {'Y', onnx::AttributeProto::TYPE_PROTOS}};
  auto it = kTypes.find(c);
  assert(it != kTypes.end() && "OnnxSchemas.inc uses a kind letter Schema.cpp lacks");
  return it->second;
}

struct AttrSpec {
  AttrType type;
  bool required;
};

// A schema with its attributes read out of the row's string.
struct Schema {
  const OnnxSchema *row;
  std::map<std::string, AttrSpec> attrs;
};

// The schema an op has at `opset`: its newest version not after it; nullptr if none.
const Schema *schemaAt(const std::string &op, int64_t opset) {
  static const std::map<std::string, std::vector<Schema>> kByOp = [] {
    std::map<std::string, std::vector<Schema>> m;
    for (const OnnxSchema &row : kOnnxSchemas) { // sorted by op, then version
      Schema s{&row, {}};
      std::string all = row.attributes;
      for (size_t pos = 0; pos < all.size();) {
        size_t end = all.find(' ', pos);
        std::string item = all.substr(pos, end == std::string::npos ? end : end - pos);
        size_t colon = item.find(':');
        bool required = item.back() == '!';
        s.attrs[item.substr(0, colon)] = {typeOfLetter(item[colon + 1]), required};
        pos = end == std::string::npos ? all.size() : end + 1;
      }
      m[row.op].push_back(std::move(s));
    }
    return m;
  }();
  auto it = kByOp.find(op);
  if (it == kByOp.end())
    return nullptr;
  const Schema *best = nullptr;
  for (const Schema &s : it->second)
    if (s.row->since <= opset)
      best = &s;
  return best;
}

// The kinds of value an attribute holds, as the types that would declare them.
std::vector<AttrType> heldTypes(const onnx::AttributeProto &a) {
  std::vector<AttrType> held;
  auto hold = [&](bool present, AttrType t) {
    if (present)
      held.push_back(t);
  };
  hold(a.has_f(), onnx::AttributeProto::FLOAT);
  hold(a.has_i(), onnx::AttributeProto::INT);
  hold(a.has_s(), onnx::AttributeProto::STRING);
  hold(a.has_t(), onnx::AttributeProto::TENSOR);
  hold(a.has_g(), onnx::AttributeProto::GRAPH);
  hold(a.has_sparse_tensor(), onnx::AttributeProto::SPARSE_TENSOR);
  hold(a.has_tp(), onnx::AttributeProto::TYPE_PROTO);
  hold(a.floats_size() > 0, onnx::AttributeProto::FLOATS);
  hold(a.ints_size() > 0, onnx::AttributeProto::INTS);
  hold(a.strings_size() > 0, onnx::AttributeProto::STRINGS);
  hold(a.tensors_size() > 0, onnx::AttributeProto::TENSORS);
  hold(a.graphs_size() > 0, onnx::AttributeProto::GRAPHS);
  hold(a.sparse_tensors_size() > 0, onnx::AttributeProto::SPARSE_TENSORS);
  hold(a.type_protos_size() > 0, onnx::AttributeProto::TYPE_PROTOS);
  return held;
}

// Each attribute: a name, once; a declared type; at most one value field, of that type. (A
// value field may be absent: proto3 writers leave out zeros and empty strings.) The names of
// those that fail go into `malformed`.
Status checkAttributes(const onnx::NodeProto &n, std::set<std::string> &malformed) {
  Status all;
  std::set<std::string> seen;
  for (const onnx::AttributeProto &a : n.attribute()) {
    std::string what = "attribute '" + a.name() + "'";
    if (a.name().empty()) {
      all.append(Status::error("an attribute has no name"));
      continue;
    }
    if (!seen.insert(a.name()).second) {
      all.append(Status::error(what + " is given more than once"));
      continue;
    }
    std::vector<AttrType> held = heldTypes(a);
    size_t before = all.messages().size();
    if (a.type() == onnx::AttributeProto::UNDEFINED)
      all.append(Status::error(what + " declares no type (AttributeProto.type is required)"));
    else if (held.size() > 1)
      all.append(Status::error(what + " holds values of several types (" + typeName(held[0]) +
                               " and " + typeName(held[1]) + ")"));
    else if (held.size() == 1 && held[0] != a.type())
      all.append(Status::error(what + " declares type " + typeName(a.type()) +
                               " but holds a value of type " + typeName(held[0])));
    if (all.messages().size() != before)
      malformed.insert(a.name());
  }
  return all;
}

std::string arity(int64_t lo, int64_t hi) {
  constexpr int64_t kUnbounded = 2147483647; // ONNX's max_input of variadic ops
  if (lo == hi)
    return std::to_string(lo);
  if (hi >= kUnbounded)
    return "at least " + std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

// Operand or result names against the formal parameters ("SSO"): their count, and no empty
// name where the parameter is required. An operand of a variadic parameter is required too
// (ONNX's checker lets its name be empty, but no op gives that a meaning); a variadic result
// may be left unnamed (not computed).
Status checkArity(const google::protobuf::RepeatedPtrField<std::string> &names, const char *formal,
                  int64_t lo, int64_t hi, const char *what, const std::string &schema) {
  int64_t count = names.size();
  if (count < lo || count > hi)
    return Status::error("has " + std::to_string(count) + " " + what + (count == 1 ? "" : "s") +
                         "; " + schema + " takes " + arity(lo, hi));
  Status all;
  size_t formals = std::char_traits<char>::length(formal);
  if (formals == 0) // no formal parameters: the count check above allowed none
    return all;
  bool operands = std::string(what) == "input";
  for (int64_t i = 0; i < count; ++i) {
    size_t f = std::min<size_t>(static_cast<size_t>(i), formals - 1);
    bool variadic = formal[f] == 'V';
    if (names[static_cast<int>(i)].empty() && (formal[f] == 'S' || (variadic && operands)))
      all.append(Status::error(std::string(what) + " " + std::to_string(i) + " is required by " +
                               schema + (variadic ? " (one of its variadic operands)" : "") +
                               " but its name is empty"));
  }
  return all;
}

} // namespace

const char *onnxRelease() { return kOnnxRelease; }

std::string canonicalDomain(const std::string &domain) { return domain == "ai.onnx" ? "" : domain; }

std::vector<std::pair<std::string, std::vector<int64_t>>> onnxOpVersions() {
  std::vector<std::pair<std::string, std::vector<int64_t>>> ops;
  for (const OnnxSchema &s : kOnnxSchemas) { // sorted by op, then version
    if (ops.empty() || ops.back().first != s.op)
      ops.push_back({s.op, {}});
    ops.back().second.push_back(s.since);
  }
  return ops;
}

Status checkVersions(const onnx::ModelProto &m) {
  Status all;
  std::string release = std::string("ONNX ") + kOnnxRelease;
  if (m.ir_version() <= 0)
    all.append(Status::error("the model has no IR version (ModelProto.ir_version is " +
                             std::to_string(m.ir_version()) + ")"));
  else if (m.ir_version() > kOnnxIrVersion)
    all.append(Status::error("the model's IR version " + std::to_string(m.ir_version()) +
                             " is newer than " + std::to_string(kOnnxIrVersion) + ", the newest " +
                             "odlac knows (" + release + ")"));
  std::map<std::string, int64_t> seen;
  for (const onnx::OperatorSetIdProto &os : m.opset_import()) {
    std::string domain = canonicalDomain(os.domain());
    if (!seen.emplace(domain, os.version()).second) {
      all.append(Status::error("the model imports " + domainName(domain) + " twice (opsets " +
                               std::to_string(seen[domain]) + " and " +
                               std::to_string(os.version()) + ")"));
      continue;
    }
    if (os.version() < 1) {
      all.append(Status::error("the model imports opset " + std::to_string(os.version()) + " of " +
                               domainName(domain) + "; opsets start at 1"));
      continue;
    }
    for (const OnnxDomainVersion &known : kOnnxDomains)
      if (domain == known.domain && os.version() > known.newest)
        all.append(Status::error("the model imports opset " + std::to_string(os.version()) +
                                 " of " + domainName(domain) + ", newer than " +
                                 std::to_string(known.newest) + ", the newest odlac knows (" +
                                 release + ")"));
  }
  return all; // a node of a domain the model does not import is the importer's to report
}

std::string nodeLabel(const onnx::NodeProto &n, int index, int64_t opset) {
  std::string label =
      n.name().empty() ? "node #" + std::to_string(index) : "node '" + n.name() + "'";
  std::string domain = canonicalDomain(n.domain());
  std::string op = domain.empty() ? n.op_type() : domain + "." + n.op_type();
  return label + " (" + op + (opset >= 0 ? ", opset " + std::to_string(opset) : "") + ")";
}

Status checkNode(const onnx::NodeProto &n, int64_t opset) {
  std::set<std::string> malformed;
  Status all = checkAttributes(n, malformed);
  const Schema *s = canonicalDomain(n.domain()).empty() ? schemaAt(n.op_type(), opset) : nullptr;
  if (!s) // an op ONNX lacks at this opset: the rules report it
    return all;
  std::string schema = n.op_type() + "-" + std::to_string(s->row->since);
  all.append(
      checkArity(n.input(), s->row->inputs, s->row->minInputs, s->row->maxInputs, "input", schema));
  all.append(checkArity(n.output(), s->row->outputs, s->row->minOutputs, s->row->maxOutputs,
                        "output", schema));
  std::set<std::string> given;
  for (const onnx::AttributeProto &a : n.attribute()) {
    given.insert(a.name());
    // ONNX's internal symbols are not checked; a malformed attribute is reported already.
    if (a.name().compare(0, 2, "__") == 0 || malformed.count(a.name()))
      continue;
    auto spec = s->attrs.find(a.name());
    if (spec == s->attrs.end()) {
      std::string known;
      for (const auto &[name, _] : s->attrs)
        known += (known.empty() ? "" : ", ") + name;
      all.append(Status::error("attribute '" + a.name() + "' is not an attribute of " + schema +
                               (known.empty() ? " (it has none)" : " (it has " + known + ")")));
    } else if (a.type() != spec->second.type) {
      all.append(Status::error("attribute '" + a.name() + "' is " + typeName(a.type()) + "; " +
                               schema + " takes " + typeName(spec->second.type)));
    }
  }
  for (const auto &[name, spec] : s->attrs)
    if (spec.required && !given.count(name))
      all.append(Status::error("required attribute '" + name + "' (" + typeName(spec.type) +
                               ") of " + schema + " is missing"));
  return all;
}

} // namespace odlac
