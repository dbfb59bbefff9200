// Structural checks of ONNX graphs (SSA, topological order, defined inputs and outputs): see
// Structure.h.
#include "Structure.h"

#include "Schema.h"

#include <map>
#include <set>
#include <string>

namespace odlac {
namespace {

// The names visible in one graph: its own, then its enclosing graphs' (ONNX's lexical scoping).
struct Names {
  const Names *outer = nullptr;
  std::set<std::string> own;

  bool visible(const std::string &name) const {
    return own.count(name) || (outer && outer->visible(name));
  }
};

class StructureChecker {
public:
  explicit StructureChecker(int64_t opset) : opset_(opset) {}

  Status run(const onnx::GraphProto &g) {
    check(g, nullptr, "");
    return errors_;
  }

private:
  void error(const std::string &message) { errors_.append(Status::error(message)); }

  // `where` prefixes messages about a body ("body 'loop_body': ").
  void check(const onnx::GraphProto &g, const Names *outer, const std::string &where) {
    Names names;
    names.outer = outer;
    for (const onnx::ValueInfoProto &vi : g.input()) {
      if (vi.name().empty())
        error(where + "a graph input has no name");
      else if (!names.own.insert(vi.name()).second)
        error(where + "graph input '" + vi.name() + "' is listed more than once");
    }
    std::set<std::string> initializers;
    for (const onnx::TensorProto &t : g.initializer()) {
      if (t.name().empty())
        error(where + "an initializer has no name");
      else if (!initializers.insert(t.name()).second)
        error(where + "initializer '" + t.name() + "' is given more than once");
      names.own.insert(t.name()); // may also be a graph input: its default value
    }
    // Where each name is produced, to tell an out-of-order graph from an undefined name.
    std::map<std::string, int> producer;
    for (int i = 0; i < g.node_size(); ++i)
      for (const std::string &out : g.node(i).output())
        producer.emplace(out, i);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &n = g.node(i);
      std::string label = where + nodeLabel(n, i, opset_);
      for (const std::string &in : n.input()) {
        if (in.empty() || names.visible(in))
          continue;
        auto later = producer.find(in);
        if (later != producer.end() && later->second >= i)
          error(label + ": input '" + in + "' is produced by " +
                (later->second == i ? std::string("this node itself")
                                    : nodeLabel(g.node(later->second), later->second, opset_)) +
                "; nodes must be in topological order");
        else
          error(label + ": input '" + in +
                "' is not produced by any earlier node, initializer "
                "or graph input");
      }
      for (const onnx::AttributeProto &a : n.attribute()) {
        if (a.has_g())
          check(a.g(), &names, where + "body '" + bodyName(a.g()) + "': ");
        for (const onnx::GraphProto &body : a.graphs())
          check(body, &names, where + "body '" + bodyName(body) + "': ");
      }
      for (const std::string &out : n.output()) {
        if (out.empty())
          continue;
        if (names.visible(out))
          error(label + ": output '" + out +
                "' is already defined (by an earlier node, an "
                "initializer or a graph input); ONNX values are "
                "assigned once");
        names.own.insert(out);
      }
    }
    for (const onnx::ValueInfoProto &vi : g.output()) {
      if (vi.name().empty())
        error(where + "a graph output has no name");
      else if (!names.visible(vi.name()))
        error(where + "graph output '" + vi.name() + "' is not produced by any node");
    }
  }

  static std::string bodyName(const onnx::GraphProto &g) {
    return g.name().empty() ? "body" : g.name();
  }

  int64_t opset_;
  Status errors_;
};

} // namespace

Status checkStructure(const onnx::GraphProto &g, int64_t opset) {
  return StructureChecker(opset).run(g);
}

} // namespace odlac
