// Small matchers shared by the passes that walk patterns node by node (the recognition,
// fusion and transpose-sinking passes): is a node a given op, is a value read by exactly one
// node, is an operand a one-element constant with a given value; and the rewrite the
// recognizers share: one node in place of a matched pattern. Ops are named by their table
// rows (ops/Ops.h).
#pragma once

#include "ir/Graph.h"
#include "ops/Ops.h"

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace odlac::match {

inline bool is(const Node *n, const OpDef &op) { return n && n->is(op); }

// The node that produces `v` when it is the op `op`, else null.
inline Node *producedBy(const Value *v, const OpDef &op) {
  return v && is(v->producer(), op) ? v->producer() : nullptr;
}

// The single node reading `v`, or null when several read it (or one reads it twice), or it
// is a graph output: a pattern may only absorb an intermediate nothing else needs.
inline Node *onlyUser(const Graph &g, const Value *v) {
  if (v->uses().size() != 1 || g.isGraphOutput(v))
    return nullptr;
  return v->uses()[0].node;
}

// The single node reading `v` when it is the op `op`.
inline Node *onlyUserIs(const Graph &g, const Value *v, const OpDef &op) {
  Node *n = onlyUser(g, v);
  return is(n, op) ? n : nullptr;
}

// The operand of a binary node other than `v` (v itself for f(v, v)); null when `v` is not
// an operand.
inline Value *otherOperand(const Node *n, const Value *v) {
  if (n->input(0) == v)
    return n->input(1);
  if (n->input(1) == v)
    return n->input(0);
  return nullptr;
}

// The value of a constant holding one float32 or float64 element.
inline std::optional<double> scalarConstant(const Value *v) {
  if (!v || !v->isConstant() || v->type().numElements() != 1)
    return std::nullopt;
  if (v->dtype() == DType::F32)
    return static_cast<double>(*v->data()->as<float>());
  if (v->dtype() == DType::F64)
    return *v->data()->as<double>();
  return std::nullopt;
}

// Whether `v` is a one-element constant equal to `expected` within float32 rounding.
inline bool isScalar(const Value *v, double expected) {
  auto c = scalarConstant(v);
  return c && std::fabs(*c - expected) <= 1e-6 * std::fabs(expected);
}

// For a binary node with a one-element constant operand: that constant's value, and the
// other operand in `other`.
inline std::optional<double> constantOperand(const Node *n, Value **other) {
  for (int i = 0; i < 2; ++i)
    if (auto c = scalarConstant(n->input(i))) {
      *other = n->input(1 - i);
      return c;
    }
  return std::nullopt;
}

// Replaces the pattern `nodes`, whose final value is `result`, by one node of `op` placed
// where result's producer was and named after it; `result`'s users (and graph-output name)
// move to the new node's result, named `result` + `suffix`. The pattern's nodes are erased,
// users before producers, and remembered in `erased`: the passes walk a copy of the schedule.
inline Expected<Node *> replacePattern(Graph &g, Value *result, const std::vector<Node *> &nodes,
                                       const OpDef &op, const std::vector<Value *> &operands,
                                       const AttrMap &attrs, const std::string &suffix,
                                       std::set<const Node *> &erased) {
  Node *last = result->producer();
  Value *y = g.addValue(result->name() + suffix, {});
  Node *n = g.addNodeBefore(last, op, last->name(), operands, {y}, attrs);
  if (Status s = verifyAndInfer(*n))
    return s;
  g.replaceAllUses(result, y);
  std::vector<Node *> left(nodes);
  while (!left.empty()) {
    size_t before = left.size();
    for (auto it = left.begin(); it != left.end();) {
      bool used = false;
      for (const Value *out : (*it)->outputs())
        used |= !out->uses().empty();
      if (used) {
        ++it;
        continue;
      }
      erased.insert(*it);
      g.eraseNode(*it);
      it = left.erase(it);
    }
    if (left.size() == before)
      return Status::error(std::string("internal: a node of the ") + op.name +
                           " pattern is still read outside it");
  }
  return n;
}

} // namespace odlac::match
