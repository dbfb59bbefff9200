// Lowering IR to ODLA calls through an OdlaSink: the per-node context that op rows' lower
// functions use, and the loop over a whole graph that both sinks share.
#pragma once

#include "ir/Graph.h"
#include "lower/OdlaSink.h"
#include "target/Target.h"

#include <functional>
#include <map>

namespace odlac {

odla_element_type odlaType(DType t);
lower::Shape shapeArg(const Dims &dims);
lower::U32s u32s(const std::vector<int64_t> &v);
lower::I32s i32s(const std::vector<int64_t> &v);

class LowerCtx {
public:
  LowerCtx(lower::OdlaSink &sink, const Node &node, std::map<const Value *, lower::Val> &vals,
           const Target &target = referenceTarget())
      : sink_(sink), node_(node), vals_(vals), target_(target) {}

  lower::OdlaSink &sink() { return sink_; }
  // Whether the backend has an extension function ("ExtConv"); rows that use one fall back
  // to core calls without it.
  bool hasExtension(const std::string &name) const { return target_.hasExtension(name); }
  const Node &node() const { return node_; }
  // The handle of operand i; NULL when the optional operand is absent.
  lower::Val in(int i) const;
  lower::Vals ins() const; // all operands, for variadic ops
  lower::Id outId(int i) const { return {node_.output(i)->name()}; }
  lower::Shape outShape(int i) const { return shapeArg(node_.output(i)->dims()); }
  void setOut(int i, lower::Val v) { vals_[node_.output(i)] = v; }
  // Lowers a body (a subgraph of this node) at the sink's current position: binds its inputs
  // to `args`, emits its nodes, and returns the handles of its outputs.
  std::vector<lower::Val> lowerBody(const Graph &body, const std::vector<lower::Val> &args);

private:
  lower::OdlaSink &sink_;
  const Node &node_;
  std::map<const Value *, lower::Val> &vals_;
  const Target &target_;
};

// How a constant's bytes are reached: now (for DirectSink) and from generated C.
using ConstantDataFn = std::function<lower::Data(const Value &constant, size_t index)>;

// Emits the whole graph into a sink, in this order: arguments (graph inputs, in order),
// constants (in graph order), nodes (schedule order), then SetValueAsOutput for each output.
void lowerGraph(const Graph &g, lower::OdlaSink &sink, const ConstantDataFn &constantData,
                const Target &target = referenceTarget());

// a x b, b transposed with `transposeB`: odla_Gemm when both are plain matrices (`plain`),
// which every backend has, odla_BatchMatMul for anything batched.
lower::Val matMul(lower::OdlaSink &sink, lower::Val a, lower::Val b, bool transposeB, bool plain,
                  const lower::Shape &out, const lower::Id &id);

// How messages name a node: "node 'conv1' (Conv)" (its first result's name when unnamed).
std::string nodeLabel(const Node &n);

} // namespace odlac
