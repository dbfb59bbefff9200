// EliminateCommonSubexpressions: two nodes with the same op, operands and attributes compute
// the same results, and two constants with the same type and bytes hold the same value; the
// later one's users read the earlier one.
#include "passes/Passes.h"

#include "ops/OpDef.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace odlac {
namespace {

// Numbers as their shortest round-trip text: equal keys, equal attributes.
void appendAttrKey(fmt::memory_buffer &key, const AttrValue &v) {
  auto out = std::back_inserter(key);
  fmt::format_to(out, "{}:", v.index());
  std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                      std::is_same_v<T, std::string>)
          fmt::format_to(out, "{}", x);
        else
          for (const auto &e : x)
            fmt::format_to(out, "{},", e);
      },
      v);
}

std::string nodeKey(const Node &n) {
  fmt::memory_buffer key;
  auto out = std::back_inserter(key);
  fmt::format_to(out, "{}(", n.op().name);
  for (const Value *in : n.inputs())
    fmt::format_to(out, "{},", static_cast<const void *>(in));
  fmt::format_to(out, "){{");
  for (const auto &[name, value] : n.attrs()) {
    fmt::format_to(out, "{}=", name);
    appendAttrKey(key, value);
    fmt::format_to(out, ";");
  }
  fmt::format_to(out, "}}");
  return fmt::to_string(key);
}

class EliminateCommonSubexpressions : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &) override {
    bool changed = false;
    // Constants: bucket by type, size and a hash of sampled bytes (the head, the tail and
    // 16 windows between), then compare the bytes within a bucket. Weights are not read in
    // full unless two candidates collide: models with gigabytes of weights stream them.
    std::map<std::pair<std::string, uint64_t>, std::vector<Value *>> constants;
    for (Value *c : g.constants()) {
      if (c->uses().empty())
        continue;
      const unsigned char *bytes = static_cast<const unsigned char *>(c->data()->data);
      size_t size = c->data()->size;
      uint64_t hash = 1469598103934665603ull ^ size; // FNV-1a over the samples
      auto mix = [&](size_t from, size_t n) {
        for (size_t i = from; i < std::min(size, from + n); ++i)
          hash = (hash ^ bytes[i]) * 1099511628211ull;
      };
      mix(0, 256);
      for (size_t k = 1; k <= 16; ++k)
        mix(size / 17 * k, 64);
      mix(size > 256 ? size - 256 : 0, 256);
      // A sample of mapped external data can map megabytes around it (the page cache's large
      // folios): dropped again, as after a full comparison.
      c->data()->dropPages(bytes, size);
      std::vector<Value *> &bucket = constants[{toString(c->type()), hash}];
      Value *same = nullptr;
      for (Value *other : bucket)
        if (other->data()->size == size) {
          same = size == 0 || !std::memcmp(other->data()->data, bytes, size) ? other : same;
          other->data()->dropPages(other->data()->data, size); // empty: no data
          c->data()->dropPages(bytes, size);
        }
      if (!same) {
        bucket.push_back(c);
        continue;
      }
      g.replaceAllUses(c, same);
      changed = true;
    }
    // Nodes, in schedule order, so that the earlier of two equal nodes is kept.
    std::map<std::string, Node *> seen;
    for (Node *n : g.nodes()) {
      if (n->hasSubgraphs())
        continue; // equal operands do not make equal bodies (If, Loop)
      if (n->op().has(kExternal))
        continue; // the application's kernel need not give equal results for equal operands
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
