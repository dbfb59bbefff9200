// Rule lookup, the generic 1:1 import, and the check that no attribute of a node goes unread.
#include "Rules.h"

#include <map>

namespace odlac {

std::vector<AttrRule> reads(std::initializer_list<const char *> names,
                            std::initializer_list<AttrRule> more) {
  std::vector<AttrRule> rules;
  for (const char *n : names)
    rules.push_back({n});
  rules.insert(rules.end(), more.begin(), more.end());
  return rules;
}

const std::vector<const ImportRule *> &allRules() {
  static const std::vector<const ImportRule *> all = [] {
    std::vector<const ImportRule *> v;
    for (const auto *family :
         {&elementwiseRules(), &binaryRules(), &nnRules(), &reduceRules(), &dataMovementRules(),
          &shapeGeneratorRules(), &indexingRules(), &resizeRules(), &normalizationRules(),
          &recurrentRules(), &quantRules(), &miscRules(), &trainingRules(), &transformerRules(),
          &controlFlowRules(), &sequenceRules(), &textRules(), &treeRules()})
      for (const ImportRule &r : *family)
        v.push_back(&r);
    return v;
  }();
  return all;
}

const ImportRule *findRule(const std::string &domain, const std::string &onnxOp, int64_t opset,
                           int *earliest) {
  static const std::multimap<std::string, const ImportRule *> byOp = [] {
    std::multimap<std::string, const ImportRule *> m;
    for (const ImportRule *r : allRules())
      m.emplace(std::string(r->domain) + "/" + r->onnxOp, r);
    return m;
  }();
  const ImportRule *best = nullptr;
  int first = -1;
  auto [lo, hi] = byOp.equal_range(domain + "/" + onnxOp);
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

bool hasRulesForDomain(const std::string &domain) {
  for (const ImportRule *r : allRules())
    if (domain == r->domain)
      return true;
  return false;
}

namespace {

const AttrRule *findAttrRule(const ImportRule &rule, const std::string &name) {
  for (const AttrRule &r : rule.attrs)
    if (name == r.onnxName)
      return &r;
  return nullptr;
}

std::optional<AttrValue> fromProto(const onnx::AttributeProto &a) {
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    return AttrValue(static_cast<int64_t>(a.i()));
  case onnx::AttributeProto::FLOAT:
    return AttrValue(static_cast<double>(a.f()));
  case onnx::AttributeProto::STRING:
    return AttrValue(a.s());
  case onnx::AttributeProto::INTS:
    return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case onnx::AttributeProto::FLOATS:
    return AttrValue(std::vector<double>(a.floats().begin(), a.floats().end()));
  default:
    return std::nullopt;
  }
}

Status importDirect(ImportCtx &ctx, const ImportRule &rule) {
  AttrMap attrs;
  for (const onnx::AttributeProto &a : ctx.proto().attribute()) {
    const AttrRule *ar = findAttrRule(rule, a.name());
    if (!ar || !ar->irName)
      continue; // checkAttributes reports the unknown ones
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

// Every attribute of the node must be one its row lists, and, in a row with a function, one
// that the function read (directly or through a helper) or that the row says has no effect.
Status checkAttributes(const ImportCtx &ctx, const ImportRule &rule) {
  Status errors = ctx.attrKindErrors();
  std::string row = std::string("odlac's rule for ") + rule.onnxOp + " from opset " +
                    std::to_string(rule.sinceOpset);
  for (int i = 0; i < ctx.proto().attribute_size(); ++i) {
    const std::string &name = ctx.proto().attribute(i).name();
    const AttrRule *ar = findAttrRule(rule, name);
    if (!ar)
      errors.append(ctx.fail("attribute '" + name + "' is not supported: " + row +
                             " does not know it, and would ignore it"));
    else if (!ar->noEffect && (rule.irOp ? !ar->irName : !ctx.attrWasRead(i)))
      errors.append(ctx.fail("attribute '" + name + "' is not supported in this form: " + row +
                             " did not read it for this node, and would ignore it"));
  }
  return errors;
}

} // namespace

Status importNode(ImportCtx &ctx, const ImportRule &rule) {
  if (rule.unsupported)
    return ctx.fail(std::string("unsupported: ") + rule.unsupported);
  Status s = rule.custom ? rule.custom(ctx) : importDirect(ctx, rule);
  if (s)
    return s;
  return checkAttributes(ctx, rule);
}

} // namespace odlac
