// EliminateCommonSubexpressions: two nodes with the same op, operands and attributes compute
// the same results, and two constants with the same type and bytes hold the same value; the
// later one's users read the earlier one.
#include "passes/Passes.h"

#include "ops/OpDef.h"

#include <cstring>
#include <map>
#include <sstream>

namespace odlac {
namespace {

std::string attrKey(const AttrValue &v) {
  std::ostringstream os;
  os.precision(17);
  std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                      std::is_same_v<T, std::string>)
          os << x;
        else
          for (const auto &e : x)
            os << e << ',';
      },
      v);
  return std::to_string(v.index()) + ":" + os.str();
}

std::string nodeKey(const Node &n) {
  std::ostringstream os;
  os << n.op().name << '(';
  for (const Value *in : n.inputs())
    os << static_cast<const void *>(in) << ',';
  os << "){";
  for (const auto &[name, value] : n.attrs())
    os << name << '=' << attrKey(value) << ';';
  os << '}';
  return os.str();
}

class EliminateCommonSubexpressions : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    // Constants: key on type and bytes.
    std::map<std::string, Value *> constants;
    for (Value *c : g.constants()) {
      if (c->uses().empty())
        continue;
      std::string key = toString(c->type()) + ":" +
                        std::string(static_cast<const char *>(c->data()->data), c->data()->size);
      auto [it, fresh] = constants.emplace(key, c);
      if (fresh)
        continue;
      g.replaceAllUses(c, it->second);
      changed = true;
    }
    // Nodes, in schedule order, so that the earlier of two equal nodes is kept.
    std::map<std::string, Node *> seen;
    for (Node *n : g.nodes()) {
      auto [it, fresh] = seen.emplace(nodeKey(*n), n);
      if (fresh)
        continue;
      bool output = false;
      for (const Value *out : n->outputs())
        output |= g.isGraphOutput(out);
      if (output)
        continue; // each graph output keeps its own node
      for (int i = 0; i < n->numOutputs(); ++i)
        g.replaceAllUses(n->output(i), it->second->output(i));
      g.eraseNode(n);
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createEliminateCommonSubexpressions() {
  return std::make_unique<EliminateCommonSubexpressions>();
}

} // namespace odlac
