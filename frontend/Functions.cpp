// Inlines ONNX local functions before import (Functions.h): each graph's node list is rebuilt
// with every call replaced, recursively, by the called function's nodes under fresh names.
#include "Functions.h"

#include <google/protobuf/unknown_field_set.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace odlac {
namespace {

// Fields newer than Debian's libonnx (ONNX 1.12), which the parser keeps as unknown fields:
// FunctionProto.attribute_proto (11: attributes with their defaults, IR 9) and the overload
// names of FunctionProto (13) and NodeProto (8) (IR 10).
constexpr int kFunctionAttributeProtoField = 11;
constexpr int kFunctionOverloadField = 13;
constexpr int kNodeOverloadField = 8;

std::vector<std::string> unknownBytes(const google::protobuf::Message &msg, int number) {
  std::vector<std::string> found;
  const google::protobuf::UnknownFieldSet &fields = msg.GetReflection()->GetUnknownFields(msg);
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == number &&
        fields.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      found.push_back(fields.field(i).length_delimited());
  return found;
}

std::string overloadOf(const google::protobuf::Message &msg, int number) {
  std::vector<std::string> v = unknownBytes(msg, number);
  return v.empty() ? "" : v.back();
}

std::string normalDomain(const std::string &d) { return d == "ai.onnx" ? "" : d; }

std::string qualified(const std::string &domain, const std::string &name,
                      const std::string &overload) {
  std::string q = domain.empty() ? name : domain + "." + name;
  return overload.empty() ? q : q + " (overload '" + overload + "')";
}

struct Function {
  const onnx::FunctionProto *proto = nullptr;
  std::string label;                                    // "domain.name" for messages
  std::map<std::string, onnx::AttributeProto> defaults; // attribute_proto, by name
  std::set<std::string> attributes;                     // every attribute it declares
  std::set<std::string> names;                          // every value name of its nodes
};

using Key = std::tuple<std::string, std::string, std::string>; // domain, name, overload

// Applies `rename` to every value name of a graph and of the graphs nested in it.
template <class Fn> void renameGraph(onnx::GraphProto &g, const Fn &rename);

template <class Fn> void renameNode(onnx::NodeProto &n, const Fn &rename) {
  for (std::string &s : *n.mutable_input())
    s = rename(s);
  for (std::string &s : *n.mutable_output())
    s = rename(s);
  for (onnx::AttributeProto &a : *n.mutable_attribute()) {
    if (a.has_g())
      renameGraph(*a.mutable_g(), rename);
    for (onnx::GraphProto &sub : *a.mutable_graphs())
      renameGraph(sub, rename);
  }
}

template <class Fn> void renameGraph(onnx::GraphProto &g, const Fn &rename) {
  for (auto *list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (onnx::ValueInfoProto &vi : *list)
      vi.set_name(rename(vi.name()));
  for (onnx::TensorProto &t : *g.mutable_initializer())
    t.set_name(rename(t.name()));
  for (onnx::SparseTensorProto &t : *g.mutable_sparse_initializer()) {
    t.mutable_values()->set_name(rename(t.values().name()));
    t.mutable_indices()->set_name(rename(t.indices().name()));
  }
  for (onnx::NodeProto &n : *g.mutable_node())
    renameNode(n, rename);
}

// Every value name a node defines or reads, with those of its bodies.
void collectNames(const onnx::NodeProto &n, std::set<std::string> &names);

void collectNames(const onnx::GraphProto &g, std::set<std::string> &names) {
  for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto &vi : *list)
      names.insert(vi.name());
  for (const onnx::TensorProto &t : g.initializer())
    names.insert(t.name());
  for (const onnx::NodeProto &n : g.node())
    collectNames(n, names);
}

void collectNames(const onnx::NodeProto &n, std::set<std::string> &names) {
  names.insert(n.input().begin(), n.input().end());
  names.insert(n.output().begin(), n.output().end());
  for (const onnx::AttributeProto &a : n.attribute()) {
    if (a.has_g())
      collectNames(a.g(), names);
    for (const onnx::GraphProto &sub : a.graphs())
      collectNames(sub, names);
  }
}

class Inliner {
public:
  explicit Inliner(onnx::ModelProto &m) : m_(m) {}

  Status run() {
    if (m_.functions_size() == 0)
      return Status::ok();
    if (Status s = collectFunctions())
      return s;
    collectNames(m_.graph(), names_);
    for (const onnx::FunctionProto &f : m_.functions())
      for (const onnx::NodeProto &n : f.node())
        collectNames(n, names_);
    if (Status s = inlineGraph(*m_.mutable_graph(), ""))
      return s;
    m_.clear_functions();
    for (const auto &[domain, version] : addedOpsets_) {
      onnx::OperatorSetIdProto *os = m_.add_opset_import();
      os->set_domain(domain);
      os->set_version(version);
    }
    return Status::ok();
  }

private:
  Status collectFunctions() {
    std::map<std::string, int64_t> opsets;
    for (const onnx::OperatorSetIdProto &os : m_.opset_import())
      opsets[normalDomain(os.domain())] = os.version();
    for (const onnx::FunctionProto &f : m_.functions()) {
      Key key{normalDomain(f.domain()), f.name(), overloadOf(f, kFunctionOverloadField)};
      Function fn;
      fn.proto = &f;
      fn.label = qualified(std::get<0>(key), f.name(), std::get<2>(key));
      std::string what = "local function '" + fn.label + "'";
      if (std::get<0>(key).empty())
        return Status::error(what + " is in the default ONNX domain, where it would stand "
                                    "for a standard op");
      if (functions_.count(key))
        return Status::error(what + " is defined twice");
      fn.attributes.insert(f.attribute().begin(), f.attribute().end());
      for (const std::string &bytes : unknownBytes(f, kFunctionAttributeProtoField)) {
        onnx::AttributeProto a;
        if (!a.ParseFromString(bytes) || a.name().empty())
          return Status::error(what + ": an attribute default (attribute_proto) does not "
                                      "parse as a named AttributeProto");
        fn.attributes.insert(a.name());
        fn.defaults[a.name()] = std::move(a);
      }
      // odlac imports one version per domain: the function's nodes must mean what the
      // model's would.
      for (const onnx::OperatorSetIdProto &os : f.opset_import()) {
        std::string domain = normalDomain(os.domain());
        auto have = opsets.find(domain);
        if (have == opsets.end()) {
          opsets[domain] = os.version();
          addedOpsets_[domain] = os.version();
        } else if (have->second != os.version()) {
          return Status::error(what + " imports opset " + std::to_string(os.version()) +
                               " of domain '" + (domain.empty() ? "ai.onnx" : domain) +
                               "', the model imports " + std::to_string(have->second) +
                               ": odlac reads one opset per domain");
        }
      }
      for (const onnx::NodeProto &n : f.node())
        collectNames(n, fn.names);
      functions_.emplace(std::move(key), std::move(fn));
    }
    return Status::ok();
  }

  const Function *calledFunction(const onnx::NodeProto &n) const {
    auto it = functions_.find(
        Key{normalDomain(n.domain()), n.op_type(), overloadOf(n, kNodeOverloadField)});
    return it == functions_.end() ? nullptr : &it->second;
  }

  // Rebuilds g's node list with every call expanded.
  Status inlineGraph(onnx::GraphProto &g, const std::string &where) {
    std::vector<onnx::NodeProto> out;
    for (int i = 0; i < g.node_size(); ++i) {
      onnx::NodeProto &n = *g.mutable_node(i);
      std::string label =
          where + "node " + (n.name().empty() ? "#" + std::to_string(i) : "'" + n.name() + "'");
      if (Status s = expand(std::move(n), label, 0, out))
        return s;
    }
    g.clear_node();
    for (onnx::NodeProto &n : out)
      *g.add_node() = std::move(n);
    return Status::ok();
  }

  Status expand(onnx::NodeProto n, const std::string &label, int depth,
                std::vector<onnx::NodeProto> &out) {
    // Every node counts, calls too: a chain of calls that expand to nothing must end as well.
    if (++nodes_ > kMaxInlinedNodes)
      return Status::error(label + ": local functions expand to more than " +
                           std::to_string(kMaxInlinedNodes) + " nodes");
    const Function *fn = calledFunction(n);
    if (!fn) {
      for (onnx::AttributeProto &a : *n.mutable_attribute()) {
        if (a.has_g())
          if (Status s = inlineGraph(*a.mutable_g(), label + " body '" + a.name() + "': "))
            return s;
        for (onnx::GraphProto &sub : *a.mutable_graphs())
          if (Status s = inlineGraph(sub, label + " body '" + a.name() + "': "))
            return s;
      }
      out.push_back(std::move(n));
      return Status::ok();
    }
    const onnx::FunctionProto &f = *fn->proto;
    std::string what = label + " (call of local function '" + fn->label + "')";
    if (depth >= kMaxFunctionDepth)
      return Status::error(what + ": calls nest more than " + std::to_string(kMaxFunctionDepth) +
                           " deep (a function that calls itself?)");
    if (n.input_size() > f.input_size() || n.output_size() > f.output_size())
      return Status::error(what + ": " + std::to_string(n.input_size()) + " inputs and " +
                           std::to_string(n.output_size()) + " outputs, the function has " +
                           std::to_string(f.input_size()) + " and " +
                           std::to_string(f.output_size()));
    for (const onnx::AttributeProto &a : n.attribute())
      if (!fn->attributes.count(a.name()))
        return Status::error(what + ": attribute '" + a.name() +
                             "' is not one of the function's attributes");

    // Formal parameters become the call's values (an omitted optional input stays empty);
    // every other name of the body gets a prefix no name of the model has.
    std::map<std::string, std::string> actual;
    for (int i = 0; i < f.input_size(); ++i)
      actual[f.input(i)] = i < n.input_size() ? n.input(i) : "";
    const std::set<std::string> &internal = fn->names;
    std::string prefix = freshPrefix(n, internal, actual);
    for (int i = 0; i < f.output_size(); ++i)
      if (i < n.output_size() && !n.output(i).empty())
        actual[f.output(i)] = n.output(i);
    auto rename = [&](const std::string &name) -> std::string {
      if (name.empty())
        return name;
      auto it = actual.find(name);
      return it != actual.end() ? it->second : prefix + name;
    };
    for (const std::string &name : internal)
      names_.insert(rename(name));

    for (int i = 0; i < f.node_size(); ++i) {
      onnx::NodeProto b = f.node(i);
      renameNode(b, rename);
      if (Status s = bindAttributes(b, n, *fn, what))
        return s;
      b.set_name(prefix + (b.name().empty() ? "#" + std::to_string(i) : b.name()));
      // Messages about nested nodes name the model's node whose call they come from.
      if (Status s = expand(std::move(b), label, depth + 1, out))
        return s;
    }
    return Status::ok();
  }

  std::string freshPrefix(const onnx::NodeProto &call, const std::set<std::string> &internal,
                          const std::map<std::string, std::string> &formals) {
    std::string base = (call.name().empty() ? call.op_type() : call.name()) + "#";
    for (;;) {
      std::string prefix = base + std::to_string(calls_++) + "/";
      bool clash = false;
      for (const std::string &name : internal)
        if (!formals.count(name) && names_.count(prefix + name)) {
          clash = true;
          break;
        }
      if (!clash)
        return prefix;
    }
  }

  // Replaces attribute references (ref_attr_name) in a body node, and in the nodes of its
  // bodies, with the call's attribute, else the function's default; a reference to neither
  // leaves the attribute out, as ONNX specifies.
  Status bindAttributes(onnx::NodeProto &b, const onnx::NodeProto &call, const Function &fn,
                        const std::string &what) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> bound;
    for (onnx::AttributeProto &a : *b.mutable_attribute()) {
      if (a.has_g())
        if (Status s = bindGraph(*a.mutable_g(), call, fn, what))
          return s;
      for (onnx::GraphProto &sub : *a.mutable_graphs())
        if (Status s = bindGraph(sub, call, fn, what))
          return s;
      if (a.ref_attr_name().empty()) {
        *bound.Add() = std::move(a);
        continue;
      }
      const onnx::AttributeProto *value = nullptr;
      for (const onnx::AttributeProto &c : call.attribute())
        if (c.name() == a.ref_attr_name())
          value = &c;
      auto def = fn.defaults.find(a.ref_attr_name());
      if (!value && def != fn.defaults.end())
        value = &def->second;
      if (!value)
        continue;
      if (value->type() != onnx::AttributeProto::UNDEFINED &&
          a.type() != onnx::AttributeProto::UNDEFINED && value->type() != a.type())
        return Status::error(what + ": attribute '" + a.ref_attr_name() + "' has type " +
                             onnx::AttributeProto::AttributeType_Name(value->type()) +
                             ", the function's node '" + b.op_type() + "' reads it as " +
                             onnx::AttributeProto::AttributeType_Name(a.type()));
      onnx::AttributeProto *copy = bound.Add();
      *copy = *value;
      copy->set_name(a.name());
    }
    b.mutable_attribute()->Swap(&bound);
    return Status::ok();
  }

  Status bindGraph(onnx::GraphProto &g, const onnx::NodeProto &call, const Function &fn,
                   const std::string &what) {
    for (onnx::NodeProto &n : *g.mutable_node())
      if (Status s = bindAttributes(n, call, fn, what))
        return s;
    return Status::ok();
  }

  onnx::ModelProto &m_;
  std::map<Key, Function> functions_;
  std::map<std::string, int64_t> addedOpsets_; // domains only the functions import
  std::set<std::string> names_;                // every value name, so prefixes do not clash
  int64_t nodes_ = 0;
  int64_t calls_ = 0;
};

} // namespace

Status inlineLocalFunctions(onnx::ModelProto &m) { return Inliner(m).run(); }

} // namespace odlac
