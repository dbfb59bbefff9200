// Rule lookup and the generic 1:1 import.
#include "Rules.h"

#include <map>

namespace odlac {

const ImportRule *findRule(const std::string &onnxOp, int64_t opset, int *earliest) {
  static const std::multimap<std::string, const ImportRule *> byOp = [] {
    std::multimap<std::string, const ImportRule *> m;
    for (const auto *family : {&elementwiseRules(), &binaryRules(), &nnRules(), &reduceRules(),
                                &dataMovementRules(), &indexingRules(), &normalizationRules(),
                                &recurrentRules(), &quantRules(), &miscRules(), &controlFlowRules()})
      for (const ImportRule &r : *family)
        m.emplace(r.onnxOp, &r);
    return m;
  }();
  const ImportRule *best = nullptr;
  int first = -1;
  auto [lo, hi] = byOp.equal_range(onnxOp);
  for (auto it = lo; it != hi; ++it) {
    const ImportRule *r = it->second;
    if (first < 0 || r->sinceOpset < first)
      first = r->sinceOpset;
    if (r->sinceOpset <= opset && (!best || r->sinceOpset > best->sinceOpset))
      best = r;
  }
  if (earliest)
    *earliest = first;
  return best;
}

static std::optional<AttrValue> fromProto(const onnx::AttributeProto &a) {
  switch (a.type()) {
  case onnx::AttributeProto::INT: return AttrValue(static_cast<int64_t>(a.i()));
  case onnx::AttributeProto::FLOAT: return AttrValue(static_cast<double>(a.f()));
  case onnx::AttributeProto::STRING: return AttrValue(a.s());
  case onnx::AttributeProto::INTS: return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case onnx::AttributeProto::FLOATS: return AttrValue(std::vector<double>(a.floats().begin(), a.floats().end()));
  default: return std::nullopt;
  }
}

Status importDirect(ImportCtx &ctx, const ImportRule &rule) {
  AttrMap attrs;
  for (const onnx::AttributeProto &a : ctx.proto().attribute()) {
    const AttrRule *ar = nullptr;
    for (const AttrRule &r : rule.attrs)
      if (a.name() == r.onnxName)
        ar = &r;
    if (!ar)
      return ctx.fail("attribute '" + a.name() + "' is not handled");
    if (!ar->irName)
      continue;
    auto v = fromProto(a);
    if (!v)
      return ctx.fail("attribute '" + a.name() + "' has an unsupported kind");
    attrs[ar->irName] = *v;
  }
  for (const AttrRule &r : rule.attrs)
    if (r.irName && !attrs.count(r.irName) && r.dflt)
      attrs[r.irName] = *r.dflt;
  std::vector<Value *> operands;
  for (int i = 0; i < ctx.numInputs(); ++i)
    operands.push_back(ctx.input(i));
  auto out = ctx.emit(rule.irOp, operands, attrs);
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

} // namespace odlac
