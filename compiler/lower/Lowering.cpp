// The lowering loop shared by every sink, and small argument helpers for op lowerings.
#include "lower/Lowering.h"

#include "ops/OpDef.h"

#include <cassert>
#include <cctype>
#include <set>

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

std::vector<lower::Val> LowerCtx::lowerBody(const Graph &body,
                                            const std::vector<lower::Val> &args) {
  assert(args.size() == body.inputs().size() && body.constants().empty());
  for (size_t i = 0; i < args.size(); ++i)
    vals_[body.inputs()[i]] = args[i];
  for (const Node *n : body.nodes()) {
    LowerCtx ctx(sink_, *n, vals_, target_);
    n->op().lower(ctx);
  }
  std::vector<lower::Val> outs;
  for (const Value *out : body.outputs())
    outs.push_back(vals_.at(out));
  return outs;
}

void lowerGraph(const Graph &g, lower::OdlaSink &sink, const ConstantDataFn &constantData,
                const Target &target) {
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
    LowerCtx ctx(sink, *n, vals, target);
    n->op().lower(ctx);
    for (const Value *out : n->outputs()) {
      assert(vals.count(out) && "lowering left a result without a handle");
      if (out->uses().empty() && !g.isGraphOutput(out))
        sink.markUnused(vals[out]); // a result nothing reads (left for -O0 to show)
    }
  }
  for (const Value *out : g.outputs())
    sink.SetValueAsOutput(vals.at(out));
}

} // namespace odlac

namespace odlac {
namespace {

// Records the ODLA functions a lowering calls, and hands out fresh handles.
class RecordingSink : public lower::OdlaSink {
public:
  std::vector<std::string> calls;

protected:
  std::vector<lower::Val> emit(lower::Call &call) override {
    calls.push_back(std::string(call.function).substr(5)); // without "odla_"
    size_t results = 0;
    if (call.returns == lower::Returns::Value)
      results = 1;
    else if (call.returns == lower::Returns::Values)
      for (const lower::Arg &a : call.args)
        if (const lower::Ids *ids = std::get_if<lower::Ids>(&a))
          results = ids->names.size();
    std::vector<lower::Val> vals;
    for (size_t i = 0; i < results; ++i)
      vals.push_back(lower::Val{next_++});
    return vals;
  }

private:
  int next_ = 0;
};

} // namespace

Status checkTarget(const Graph &g, const Target &target) {
  RecordingSink sink;
  std::map<const Value *, lower::Val> vals;
  int next = 0;
  for (const Value *in : g.inputs())
    vals[in] = lower::Val{1000000 + next++};
  for (const Value *c : g.constants())
    vals[c] = lower::Val{1000000 + next++};
  // function (+ element type) -> names of the nodes that need it
  std::map<std::string, std::set<std::string>> missing;
  for (const Node *n : g.nodes()) {
    sink.calls.clear();
    LowerCtx ctx(sink, *n, vals, target);
    n->op().lower(ctx);
    std::string typeName = std::string(lower::enumName(odlaType(n->output(0)->dtype()))).substr(5);
    for (char &ch : typeName)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const std::string &fn : sink.calls) {
      std::string what;
      if (fn.rfind("Ext", 0) == 0) {
        if (!target.hasExtension(fn))
          what = "odla_" + fn + " (an odlac extension)";
      } else if (fn == "CustomOp" && (!target.features.count("custom_ops") ||
                                      !target.hasExtension("ExtRegisterCustomOp"))) {
        // The block odla_CustomOp receives is odla_ext_custom.h's: the core profile lacks it.
        what = "odla_CustomOp with application kernels (manifest feature custom_ops and "
               "extension ExtRegisterCustomOp)";
      } else if (!target.allOps) {
        auto it = target.ops.find(fn);
        if (it == target.ops.end())
          what = "odla_" + fn;
        else if (!it->second.empty() && !it->second.count(typeName))
          what = "odla_" + fn + " on " + typeName;
      }
      if (!what.empty())
        missing[what].insert(n->name().empty() ? n->output(0)->name() : n->name());
    }
  }
  Status all;
  for (const auto &[what, nodes] : missing) {
    std::string list;
    for (const std::string &n : nodes)
      list += (list.empty() ? "" : ", ") + ("'" + n + "'");
    all.append(Status::error("backend '" + target.backend + "' lacks " + what + ", needed by " +
                             std::to_string(nodes.size()) + " node(s): " + list));
  }
  return all;
}

} // namespace odlac
