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

lower::Val matMul(lower::OdlaSink &sink, lower::Val a, lower::Val b, bool transposeB, bool plain,
                  const lower::Shape &out, const lower::Id &id) {
  if (plain)
    return sink.Gemm(a, {false}, b, {transposeB}, 1.0f, 0.0f, lower::Val{}, out, id);
  return sink.BatchMatMul(a, {false}, b, {transposeB}, out, id);
}

std::string nodeLabel(const Node &n) {
  return "node '" + (n.name().empty() ? n.output(0)->name() : n.name()) + "' (" + n.op().name + ")";
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

std::vector<lower::Val> LowerCtx::lowerBody(const Graph &body,
                                            const std::vector<lower::Val> &args) {
  assert(args.size() == body.inputs().size() && body.constants().empty());
  for (size_t i = 0; i < args.size(); ++i)
    vals_[body.inputs()[i]] = args[i];
  for (const Node *n : body.nodes()) {
    sink_.beginLowering(nodeLabel(*n));
    LowerCtx ctx(sink_, *n, vals_, target_);
    n->op().lower(ctx);
  }
  sink_.beginLowering(nodeLabel(node_)); // the calls after the body are this node's again
  std::vector<lower::Val> outs;
  for (const Value *out : body.outputs())
    outs.push_back(vals_.at(out));
  return outs;
}

void lowerGraph(const Graph &g, lower::OdlaSink &sink, const ConstantDataFn &constantData,
                const Target &target) {
  std::map<const Value *, lower::Val> vals;
  for (const Value *in : g.inputs()) {
    sink.beginLowering("graph input '" + in->name() + "'");
    vals[in] = sink.CreateArgument({odlaType(in->dtype()), shapeArg(in->dims())}, {in->name()});
    if (in->uses().empty())
      sink.markUnused(vals[in]);
  }
  size_t index = 0;
  for (const Value *c : g.constants()) {
    size_t i = index++;
    if (c->uses().empty())
      continue; // dead constants are not emitted
    sink.beginLowering("constant '" + c->name() + "'");
    vals[c] = sink.CreateConstant({odlaType(c->dtype()), shapeArg(c->dims())}, constantData(*c, i),
                                  {c->name()});
  }
  for (const Node *n : g.nodes()) {
    sink.beginLowering(nodeLabel(*n));
    LowerCtx ctx(sink, *n, vals, target);
    n->op().lower(ctx);
    for (const Value *out : n->outputs()) {
      assert(vals.count(out) && "lowering left a result without a handle");
      if (out->uses().empty() && !g.isGraphOutput(out))
        sink.markUnused(vals[out]); // a result nothing reads (left for -O0 to show)
    }
  }
  for (const Value *out : g.outputs()) {
    sink.beginLowering("graph output '" + out->name() + "'");
    sink.SetValueAsOutput(vals.at(out));
  }
}

} // namespace odlac
