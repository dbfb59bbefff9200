// The lowering loop shared by every sink, and small argument helpers for op lowerings.
#include "lower/Lowering.h"

#include "ops/OpDef.h"

#include <cassert>

namespace odlac {

odla_element_type odlaType(DType t) {
  return static_cast<odla_element_type>(dtypeInfo(t).odlaType);
}

lower::Shape shapeArg(const Dims &dims) {
  return lower::Shape{static_cast<int>(dims.size()), dims};
}

lower::U32s u32s(const std::vector<int64_t> &v) {
  lower::U32s r;
  for (int64_t x : v) {
    assert(x >= 0 && x <= UINT32_MAX);
    r.v.push_back(static_cast<odla_uint32>(x));
  }
  return r;
}

lower::I32s i32s(const std::vector<int64_t> &v) {
  lower::I32s r;
  for (int64_t x : v) {
    assert(x >= INT32_MIN && x <= INT32_MAX);
    r.v.push_back(static_cast<odla_int32>(x));
  }
  return r;
}

lower::Val LowerCtx::in(int i) const {
  const Value *v = node_.input(i);
  if (!v)
    return lower::Val{};
  auto it = vals_.find(v);
  assert(it != vals_.end() && "operand lowered before its producer");
  return it->second;
}

lower::Vals LowerCtx::ins() const {
  lower::Vals all;
  for (int i = 0; i < node_.numInputs(); ++i)
    all.vals.push_back(in(i));
  return all;
}

void lowerGraph(const Graph &g, lower::OdlaSink &sink, const ConstantDataFn &constantData) {
  std::map<const Value *, lower::Val> vals;
  for (const Value *in : g.inputs()) {
    vals[in] = sink.CreateArgument({odlaType(in->dtype()), shapeArg(in->dims())}, {in->name()});
    if (in->uses().empty())
      sink.markUnused(vals[in]);
  }
  size_t index = 0;
  for (const Value *c : g.constants()) {
    size_t i = index++;
    if (c->uses().empty())
      continue; // dead constants are not emitted
    vals[c] = sink.CreateConstant({odlaType(c->dtype()), shapeArg(c->dims())}, constantData(*c, i),
                                  {c->name()});
  }
  for (const Node *n : g.nodes()) {
    LowerCtx ctx(sink, *n, vals);
    n->op().lower(ctx);
    for ([[maybe_unused]] const Value *out : n->outputs())
      assert(vals.count(out) && "lowering left a result without a handle");
  }
  for (const Value *out : g.outputs())
    sink.SetValueAsOutput(vals.at(out));
}

} // namespace odlac
