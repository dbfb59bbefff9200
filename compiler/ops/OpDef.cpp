// The op registry and the checks every node passes against its row before inference.
#include "ops/OpDef.h"

#include "ir/Limits.h"
#include "ops/Ops.h"

#include <cassert>
#include <map>

namespace odlac {

const AttrDef *OpDef::findAttr(const std::string &attrName) const {
  for (const AttrDef &a : attrs)
    if (attrName == a.name)
      return &a;
  return nullptr;
}

const std::vector<const OpDef *> &allOps() {
#define ODLAC_OP_ROW(name) &ops::name,
  static const std::vector<const OpDef *> all = {ODLAC_OP_TABLE(ODLAC_OP_ROW)};
#undef ODLAC_OP_ROW
  return all;
}

const OpDef *findOp(const std::string &name) {
  static const std::map<std::string, const OpDef *> byName = [] {
    std::map<std::string, const OpDef *> m;
    for (const OpDef *op : allOps()) {
      bool fresh = m.emplace(op->name, op).second;
      assert(fresh && "two op rows share a name");
      (void)fresh;
    }
    return m;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

Status InferCtx::fail(const std::string &message) const {
  return Status::error(std::string(node_.op().name) + ": " + message);
}

static std::string typeList(DTypeMask mask) {
  std::string s;
  for (int t = 0; t < kNumDTypes; ++t)
    if (mask & (1u << t))
      s += (s.empty() ? "" : ", ") + std::string(dtypeName(static_cast<DType>(t)));
  return s;
}

Status verifyAndInfer(Node &node) {
  const OpDef &op = node.op();
  InferCtx ctx(node);
  // Operand count.
  size_t required = 0, max = 0;
  bool variadic = false;
  for (const OperandDef &od : op.operands) {
    required += od.kind == OperandDef::Required || od.kind == OperandDef::Variadic;
    ++max;
    variadic |= od.kind == OperandDef::Variadic;
  }
  size_t n = node.inputs().size();
  if (n < required || (!variadic && n > max))
    return ctx.fail("takes " + std::to_string(required) +
                    (max != required ? " to " + std::to_string(max) : std::string()) +
                    " operands, got " + std::to_string(n));
  // Element types.
  for (size_t i = 0; i < n; ++i) {
    const OperandDef &od = op.operands[std::min(i, op.operands.size() - 1)];
    const Value *v = node.input(static_cast<int>(i));
    if (!v) {
      if (od.kind != OperandDef::Optional)
        return ctx.fail(std::string("operand '") + od.name + "' is required");
      continue;
    }
    if (!(od.types & maskOf(v->dtype())))
      return ctx.fail(std::string("operand '") + od.name + "' has element type " +
                      dtypeName(v->dtype()) + "; supported: " + typeList(od.types));
  }
  // Attributes: known names, right kinds, defaults filled in.
  for (const auto &[name, value] : node.attrs()) {
    const AttrDef *ad = op.findAttr(name);
    if (!ad && op.has(kOpenAttributes))
      continue;
    if (!ad)
      return ctx.fail("unknown attribute '" + name + "'");
    if (attrKind(value) != ad->kind)
      return ctx.fail("attribute '" + name + "' must be " + attrKindName(ad->kind) + ", got " +
                      attrKindName(attrKind(value)));
  }
  for (const AttrDef &ad : op.attrs) {
    if (node.hasAttr(ad.name))
      continue;
    if (!ad.defaultValue)
      return ctx.fail(std::string("missing required attribute '") + ad.name + "'");
    node.setAttr(ad.name, *ad.defaultValue);
  }
  if (Status s = op.infer(ctx))
    return s;
  // Every type a Value holds is representable (ir/Limits.h): a result computed from
  // attributes or data beyond it is an error here, before any stage computes with it.
  for (int i = 0; i < node.numOutputs(); ++i) {
    const TensorType &t = node.output(i)->type();
    std::string problem = shapeProblem(t);
    if (!problem.empty())
      return ctx.fail("result " + std::to_string(i) + " " + toString(t) + ": " + problem);
  }
  return Status::ok();
}

} // namespace odlac
