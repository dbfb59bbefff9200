// Control flow: If and Loop, whose bodies are subgraphs of the node (see Graph.h: bodies are
// closed, every outer value they read is an operand). Both lower to ODLA 0.5's bracketed
// control-flow calls (odla_ops_control_flow.h); the reference backend documents what those
// calls mean (runtime_stubs/reference/ops_control_flow.c). ONNX's Scan imports as a Loop.
//
//   If(cond, then_inputs..., else_inputs...) {then_branch, else_branch}
//     cond: a bool with one element. Each branch's inputs are bound, in order, to its share
//     of the operands (then_branch takes the first then_branch.inputs().size()). Both
//     branches return the same number of results with the same types.
//
//   Loop(trip_count, cond, carried..., captured...) {body, num_carried, scan_reverse}
//     body(cond_in, carried..., captured...) -> (cond_out, carried_next..., scan...)
//     c = cond; v = carried; for i in [0, trip_count): { if (!c) break;
//       (c, v, s) = body(c, v, captured); row i of each stacked result = s }
//     Results: the final carried values, then one stacked result per scan value, of shape
//     [trip_count] + the scan value's shape (row order reversed where scan_reverse says 1).
//     A loop with scan values needs a constant trip count (static shapes); rows of
//     iterations that the condition skipped are zero.
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <cstring>

namespace odlac {
namespace {

std::string str(size_t v) { return std::to_string(v); }

Status checkBody(InferCtx &c, const char *name, const Graph *body) {
  if (!body)
    return c.fail(std::string("needs a '") + name + "' subgraph");
  if (!body->constants().empty())
    return c.fail(std::string(name) + " holds constants; a body reads constants through "
                                      "operands");
  return Status::ok();
}

// Body input `first + k` has the type of operand `operand + k`, for k < count.
Status checkBound(InferCtx &c, const char *name, const Graph &body, size_t first, int operand,
                  size_t count) {
  for (size_t k = 0; k < count; ++k) {
    const TensorType &want = c.in(operand + static_cast<int>(k));
    const Value *in = body.inputs()[first + k];
    if (in->type() != want)
      return c.fail(std::string(name) + " input " + str(first + k) + " ('" + in->name() + "') is " +
                    toString(in->type()) + " but its operand is " + toString(want));
  }
  return Status::ok();
}

Status inferIf(InferCtx &c) {
  const Graph *t = c.node().subgraph("then_branch"), *e = c.node().subgraph("else_branch");
  if (Status s = checkBody(c, "then_branch", t))
    return s;
  if (Status s = checkBody(c, "else_branch", e))
    return s;
  if (c.in(0).numElements() != 1)
    return c.fail("cond " + toString(c.in(0)) + " must hold one element");
  size_t nt = t->inputs().size(), ne = e->inputs().size();
  if (1 + nt + ne != static_cast<size_t>(c.numInputs()))
    return c.fail("the branches take " + str(nt) + " + " + str(ne) + " inputs, but the node has " +
                  str(static_cast<size_t>(c.numInputs()) - 1) + " operands after cond");
  if (Status s = checkBound(c, "then_branch", *t, 0, 1, nt))
    return s;
  if (Status s = checkBound(c, "else_branch", *e, 0, 1 + static_cast<int>(nt), ne))
    return s;
  size_t results = static_cast<size_t>(c.node().numOutputs());
  if (t->outputs().size() != results || e->outputs().size() != results)
    return c.fail("the branches return " + str(t->outputs().size()) + " and " +
                  str(e->outputs().size()) + " values for " + str(results) + " results");
  for (size_t i = 0; i < results; ++i) {
    const TensorType &a = t->outputs()[i]->type(), &b = e->outputs()[i]->type();
    if (a != b)
      return c.fail("result " + str(i) + " is " + toString(a) + " in then_branch but " +
                    toString(b) + " in else_branch; both branches must give one static type");
    c.setOut(static_cast<int>(i), a);
  }
  return Status::ok();
}

void lowerIf(LowerCtx &c) {
  const Node &n = c.node();
  const Graph &t = *n.subgraph("then_branch"), &e = *n.subgraph("else_branch");
  c.sink().BeginIf(c.in(0), lower::Id{n.output(0)->name() + "/if"});
  int operand = 1;
  for (const Graph *branch : {&t, &e}) {
    c.sink().EnterBranchBody(lower::Flag{branch == &t});
    std::vector<lower::Val> args;
    for (size_t k = 0; k < branch->inputs().size(); ++k)
      args.push_back(c.in(operand++));
    // A branch's results are the values it marks with odla_SetValueAsOutput.
    for (lower::Val v : c.lowerBody(*branch, args))
      c.sink().SetValueAsOutput(v);
  }
  lower::Ids ids;
  for (const Value *out : n.outputs())
    ids.names.push_back(out->name());
  std::vector<lower::Val> results = c.sink().EndIf(ids);
  for (int i = 0; i < n.numOutputs(); ++i)
    c.setOut(i, results[static_cast<size_t>(i)]);
}

Status inferLoop(InferCtx &c) {
  const Graph *body = c.node().subgraph("body");
  if (Status s = checkBody(c, "body", body))
    return s;
  int64_t carried = c.i("num_carried");
  if (carried < 0 || 2 + carried > c.numInputs())
    return c.fail("num_carried " + std::to_string(carried) + " does not fit " +
                  str(static_cast<size_t>(c.numInputs())) + " operands");
  size_t n = static_cast<size_t>(carried), operands = static_cast<size_t>(c.numInputs());
  size_t results = static_cast<size_t>(c.node().numOutputs());
  if (results < n)
    return c.fail(str(results) + " results for " + str(n) + " carried values");
  size_t scans = results - n;
  if (c.in(0) != TensorType{DType::I64, {}})
    return c.fail("trip_count must be i64[], got " + toString(c.in(0)));
  if (c.in(1) != TensorType{DType::Bool, {}})
    return c.fail("cond must be bool[], got " + toString(c.in(1)));
  if (body->inputs().size() != operands - 1)
    return c.fail("body takes " + str(body->inputs().size()) + " inputs; the node binds " +
                  str(operands - 1) + " (cond, carried values, captured values)");
  if (body->outputs().size() != 1 + results)
    return c.fail("body returns " + str(body->outputs().size()) + " values; the node needs " +
                  str(1 + results) + " (cond, carried values, scan values)");
  if (Status s = checkBound(c, "body", *body, 0, 1, operands - 1))
    return s;
  if (body->outputs()[0]->type() != TensorType{DType::Bool, {}})
    return c.fail("body's cond result must be bool[], got " + toString(body->outputs()[0]->type()));
  for (size_t k = 0; k < n; ++k) {
    const TensorType &next = body->outputs()[1 + k]->type(), &init = c.in(2 + static_cast<int>(k));
    if (next != init)
      return c.fail("carried value " + str(k) + " starts as " + toString(init) +
                    " but the body makes it " + toString(next) +
                    "; a carried value keeps one static type");
    c.setOut(static_cast<int>(k), init);
  }
  const std::vector<int64_t> &reverse = c.ints("scan_reverse");
  if (!reverse.empty() && reverse.size() != scans)
    return c.fail("scan_reverse has " + str(reverse.size()) + " entries for " + str(scans) +
                  " scan values");
  if (scans == 0)
    return Status::ok();
  const Value *trip = c.inValue(0);
  if (!trip->isConstant())
    return c.fail("a loop with scan values needs a constant trip count (the stacked results' "
                  "length)");
  int64_t length = 0;
  std::memcpy(&length, trip->data()->data, sizeof length);
  if (length < 0)
    return c.fail("trip count " + std::to_string(length) + " is negative");
  for (size_t k = 0; k < scans; ++k) {
    TensorType t = body->outputs()[1 + n + k]->type();
    t.dims.insert(t.dims.begin(), length);
    c.setOut(static_cast<int>(n + k), t);
  }
  return Status::ok();
}

void lowerLoop(LowerCtx &c) {
  const Node &n = c.node();
  const Graph &body = *n.subgraph("body");
  size_t carried = static_cast<size_t>(n.i("num_carried"));
  size_t results = static_cast<size_t>(n.numOutputs()), scans = results - carried;
  const std::vector<int64_t> &reverse = n.ints("scan_reverse");
  c.sink().BeginLoop(c.in(0), lower::Id{n.output(0)->name() + "/loop"});
  // The condition is a loop variable too: odla_EndLoop checks it before each iteration.
  std::vector<lower::Val> args;
  for (size_t k = 0; k <= carried; ++k)
    args.push_back(c.sink().CreateLoopVariable(c.in(1 + static_cast<int>(k)),
                                               lower::Id{body.inputs()[k]->name()}));
  lower::Val cond = args[0];
  for (size_t k = 2 + carried; k < static_cast<size_t>(n.numInputs()); ++k)
    args.push_back(c.in(static_cast<int>(k)));
  std::vector<lower::Val> outs = c.lowerBody(body, args);
  lower::LoopModes modes;
  lower::Ids ids{{body.inputs()[0]->name() + "/final"}};
  for (size_t k = 0; k <= carried; ++k)
    modes.v.push_back(ODLA_LOOP_LAST_VALUE);
  for (size_t k = 0; k < scans; ++k)
    modes.v.push_back(!reverse.empty() && reverse[k] ? ODLA_LOOP_REV_AFTER : ODLA_LOOP_FWD_AFTER);
  for (const Value *out : n.outputs())
    ids.names.push_back(out->name());
  std::vector<lower::Val> ends = c.sink().EndLoop(cond, lower::Vals{outs}, modes, ids);
  for (size_t k = 0; k < results; ++k)
    c.setOut(static_cast<int>(k), ends[1 + k]);
}

} // namespace

namespace ops {

const OpDef If = {"If",
                  {{"cond", OperandDef::Required, maskOf(DType::Bool)},
                   {"inputs", OperandDef::Variadic, kStorageTypes}},
                  1, // results: as many as the branches return
                  {},
                  FusionClass::Opaque,
                  kTraitNone,
                  inferIf,
                  lowerIf};
const OpDef Loop = {"Loop",
                    {{"trip_count", OperandDef::Required, maskOf(DType::I64)},
                     {"cond", OperandDef::Required, maskOf(DType::Bool)},
                     {"inputs", OperandDef::Variadic, kStorageTypes}},
                    1, // results: the carried values, then the stacked scan values
                    {{"num_carried", AttrKind::Int, std::nullopt},
                     {"scan_reverse", AttrKind::Ints, AttrValue(std::vector<int64_t>{})}},
                    FusionClass::Opaque,
                    kTraitNone,
                    inferLoop,
                    lowerLoop};

} // namespace ops

} // namespace odlac
