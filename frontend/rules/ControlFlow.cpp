// Import rules for control flow: If, Loop and Scan, whose bodies import as IR subgraphs
// (ImportCtx::importBody: ONNX scoping, outer values captured as operands). The IR ops are
// described in compiler/ops/ControlFlow.cpp.
//
// Loop: ONNX's body(iter_num, cond_in, v...) -> (cond_out, v_out..., scan...) becomes an IR
// Loop whose carried values are the iteration number and v (the condition is carried by the
// IR Loop itself), so the body gains iter_next = iter_num + 1. Scan outputs need a static
// length: the trip count when it is a constant and the condition cannot stop the loop early;
// otherwise the length the model declares for the outputs, in which
// case the loop is bounded by that length and also stops when the data's trip count is
// reached (rows past the last iteration are zero). Without either, the node is rejected.
//
// A Loop that carries sequences or optionals, an If whose branches return them, and an If
// whose condition is known at compile time are resolved at import instead
// (importUnrolledLoop, importInlinedIf).
//
// Scan: an IR Loop over the scan axis: each scan input is sliced with Gather at the
// iteration number (counted down for reverse directions), scan outputs are stacked forward
// or in reverse, then moved to their scan_output_axes with a Transpose. Opset 8's batched
// form is supported for batch 1 without sequence_lens.
#include "Import.h"
#include "Rules.h"
#include "evaluate/Evaluate.h"
#include "ops/Ops.h"

#include <algorithm>

#include <cstring>
#include <limits>

namespace odlac {
namespace {

Value *i64Scalar(ImportCtx &ctx, const std::string &name, int64_t v) {
  return ctx.constant(ctx.tempName(name), {DType::I64, {}}, &v);
}

Value *boolScalar(ImportCtx &ctx, const std::string &name, bool v) {
  uint8_t b = v ? 1 : 0;
  return ctx.constant(ctx.tempName(name), {DType::Bool, {}}, &b);
}

// Adds a node to a body, inserted before `pos` (appended when null); its one result is named
// `name`.
Expected<Value *> bodyNode(Graph &body, const Node *pos, const OpDef &op,
                           std::vector<Value *> operands, AttrMap attrs, const std::string &name) {
  Value *out = body.addValue(name, TensorType{});
  Node *n = pos ? body.addNodeBefore(pos, op, name, std::move(operands), {out}, std::move(attrs))
                : body.addNode(op, name, std::move(operands), {out}, std::move(attrs));
  if (Status s = verifyAndInfer(*n))
    return s;
  return out;
}

// A scalar operand of one element, as rank 0 (If's and Loop's conditions may be [1]).
Expected<Value *> scalarOperand(ImportCtx &ctx, int i, DType want, const char *what) {
  Value *v = ctx.input(i);
  if (v->dtype() != want || v->type().numElements() != 1)
    return ctx.fail(std::string(what) + " must be one " + dtypeName(want) + ", got " +
                    toString(v->type()));
  return ctx.reshape(v, {}, v->type().rank() ? ctx.tempName(std::string(what) + "/scalar") : "");
}

// Adds the IR node with its bodies and binds the ONNX outputs listed in `bind` (ONNX output i
// -> IR result bind[i]).
Expected<Node *>
emitWithBodies(ImportCtx &ctx, const OpDef &op, std::vector<Value *> operands, AttrMap attrs,
               int results,
               // NOLINTNEXTLINE(performance-unnecessary-value-param): its bodies move out
               std::vector<std::pair<std::string, std::unique_ptr<Graph>>> bodies) {
  std::vector<Value *> outs;
  for (int i = 0; i < results; ++i)
    outs.push_back(ctx.graph().addValue(
        ctx.wantsOutput(i) ? ctx.outputName(i) : ctx.tempName("result" + str(i)), TensorType{}));
  Node *n =
      ctx.graph().addNode(op, ctx.proto().name(), std::move(operands), outs, std::move(attrs));
  for (auto &[name, body] : bodies)
    n->setSubgraph(name, std::move(body));
  if (Status s = verifyAndInfer(*n))
    return s;
  return n;
}

// ---- Loop and If over sequences and optionals ------------------------------------------

// The value of a bool that must be known at compile time; `why` says what depends on it.
Expected<bool> constantBool(ImportCtx &ctx, const Value *v, const std::string &what,
                            const std::string &why) {
  if (v->dtype() != DType::Bool || v->type().numElements() != 1)
    return ctx.fail(what + " must be one bool, got " + toString(v->type()));
  if (!isComputableFromConstants(*v))
    return ctx.fail(what + " ('" + v->name() +
                    "') must be known at compile time, but it "
                    "depends on " +
                    notConstantBecause(*v) + "; " + why);
  auto data = evaluateValue(*v);
  if (!data)
    return data.takeStatus();
  return *(*data)->as<uint8_t>() != 0;
}

// A Loop that carries or reads a sequence or an optional: unrolled at import, since their
// lengths and presence, and positions in them such as the iteration number, must be known
// at compile time. So must the trip count and the condition of every iteration; each
// iteration inlines the body with the iteration number as a constant, and scan outputs are
// stacked from the iterations' values.
Status importUnrolledLoop(ImportCtx &ctx, int carried, int scans) {
  const std::string why = "the loop carries or reads a sequence or an optional, which odlac "
                          "resolves at compile time by unrolling the loop";
  int64_t trip = std::numeric_limits<int64_t>::max();
  if (ctx.hasInput(0)) {
    auto m = ctx.constInts(0, "M");
    if (!m)
      return ctx.fail(m.status().message() + "; " + why);
    if (m->size() != 1)
      return ctx.fail("M must be one integer");
    trip = (*m)[0];
  }
  bool go = true;
  if (ctx.hasInput(1)) {
    auto c = constantBool(ctx, ctx.input(1), "cond", why);
    if (!c)
      return c.takeStatus();
    go = *c;
  }
  std::vector<Operand> state;
  for (int k = 0; k < carried; ++k) {
    Operand v = ctx.operand(2 + k);
    if (v.absent())
      return ctx.fail("loop-carried input " + str(k) + " is empty");
    state.push_back(std::move(v));
  }
  std::vector<std::vector<Value *>> scanned(static_cast<size_t>(scans));
  for (int64_t i = 0; go && i < trip; ++i) {
    if (i >= kMaxSequenceLength)
      return ctx.fail("the loop runs more than " + str(kMaxSequenceLength) +
                      " iterations, the most odlac unrolls (" + why + ")");
    std::vector<Operand> formals{{i64Scalar(ctx, "iter" + str(i), i), std::nullopt},
                                 {boolScalar(ctx, "cond" + str(i), true), std::nullopt}};
    formals.insert(formals.end(), state.begin(), state.end());
    auto outs = ctx.inlineBody("body", formals, "Loop iteration " + str(i) + ": ");
    if (!outs)
      return outs.takeStatus();
    if (outs->size() != 1 + static_cast<size_t>(carried) + static_cast<size_t>(scans))
      return ctx.fail("body returns " + str(static_cast<int64_t>(outs->size())) +
                      " values; the node needs " + str(1 + carried + scans) +
                      " (cond, loop-carried values, scan outputs)");
    for (int k = 0; k < scans; ++k) {
      const Operand &v = (*outs)[1 + static_cast<size_t>(carried) + static_cast<size_t>(k)];
      std::vector<Value *> &rows = scanned[static_cast<size_t>(k)];
      if (!v.tensor || (!rows.empty() && v.tensor->type() != rows[0]->type()))
        return ctx.fail(
            "scan output " + str(k) + " is " +
            (v.tensor ? toString(v.tensor->type()) : v.aggregate->describe()) + " in iteration " +
            str(i) +
            (rows.empty() ? std::string() : " and " + toString(rows[0]->type()) + " before") +
            "; scan outputs stack tensors of one type");
      rows.push_back(v.tensor);
    }
    if (!(*outs)[0].tensor)
      return ctx.fail("body's condition output is not a tensor");
    auto c = constantBool(ctx, (*outs)[0].tensor, "the body's condition output", why);
    if (!c)
      return c.takeStatus();
    go = *c;
    state.assign(outs->begin() + 1, outs->begin() + 1 + carried);
  }
  for (int k = 0; k < carried; ++k)
    if (ctx.wantsOutput(k))
      if (Status s = ctx.setOutput(k, state[static_cast<size_t>(k)]))
        return s;
  // Scan outputs: each iteration's value gets a leading axis, and they are joined on it.
  for (int k = 0; k < scans; ++k) {
    std::vector<Value *> rows = scanned[static_cast<size_t>(k)];
    if (rows.empty())
      return ctx.fail("scan output " + str(k) + " ('" + ctx.outputName(carried + k) +
                      "') would be empty: the unrolled loop runs no iteration, so nothing gives "
                      "its element type and shape");
    for (size_t r = 0; r < rows.size(); ++r) {
      Dims dims = rows[r]->dims();
      dims.insert(dims.begin(), 1);
      auto row = ctx.reshape(rows[r], dims,
                             ctx.tempName("scan" + str(k) + "_" + str(static_cast<int64_t>(r))));
      if (!row)
        return row.takeStatus();
      rows[r] = *row;
    }
    auto stacked = concatValues(ctx, rows, 0);
    if (!stacked)
      return stacked.takeStatus();
    Operand out;
    out.tensor = *stacked;
    if (Status s = ctx.setOutput(carried + k, out))
      return s;
  }
  return Status::ok();
}

// Whether a body declares an output that is a sequence or an optional.
bool returnsAggregates(const ImportCtx &ctx, const char *attr) {
  const onnx::AttributeProto *a = ctx.findAttr(attr);
  if (!a || !a->has_g())
    return false;
  for (const onnx::ValueInfoProto &vi : a->g().output())
    if (vi.type().has_sequence_type() || vi.type().has_optional_type())
      return true;
  return false;
}

// One output of an If whose branches return sequences or optionals, both inlined: their
// structures must match (the same length, the same presence), since the condition is known
// only at run time; each element is then selected with the condition (both branches are
// computed: ONNX ops have no side effects).
Expected<Operand> selectBranches(ImportCtx &ctx, Value *cond, const Operand &then,
                                 const Operand &other, int i) {
  std::string what = "output " + str(i) + " ('" + ctx.outputName(i) + "')";
  auto describe = [](const Operand &o) {
    return o.aggregate ? o.aggregate->describe() : std::string("a tensor");
  };
  bool same = then.aggregate.has_value() == other.aggregate.has_value();
  if (same && then.aggregate) {
    const Aggregate &a = *then.aggregate, &b = *other.aggregate;
    same = a.kind == b.kind && a.present == b.present && a.ofSequence == b.ofSequence &&
           a.elements.size() == b.elements.size();
  }
  if (!same)
    return ctx.fail(what + " is " + describe(then) + " in then_branch and " + describe(other) +
                    " in else_branch: which one depends on cond, known only at run time, and "
                    "odlac needs the length and presence of sequences and optionals at compile "
                    "time");
  std::vector<Value *> a =
      then.aggregate ? then.aggregate->elements : std::vector<Value *>{then.tensor};
  std::vector<Value *> b =
      other.aggregate ? other.aggregate->elements : std::vector<Value *>{other.tensor};
  std::vector<Value *> picked;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k]->type() != b[k]->type())
      return ctx.fail(what + " element " + str(static_cast<int64_t>(k)) + " is " +
                      toString(a[k]->type()) + " in then_branch and " + toString(b[k]->type()) +
                      " in else_branch; odlac needs one static type");
    auto v = ctx.emit("Select", {cond, a[k], b[k]}, {},
                      ctx.tempName(ctx.outputName(i) + "_" + str(static_cast<int64_t>(k))));
    if (!v)
      return v.takeStatus();
    picked.push_back(*v);
  }
  Operand out;
  if (!then.aggregate) {
    out.tensor = picked[0];
    return out;
  }
  out.aggregate = *then.aggregate;
  out.aggregate->elements = picked;
  return out;
}

// If inlined: a condition known at compile time imports only the branch it takes; otherwise
// (branches that return sequences or optionals) both are, and selectBranches joins them.
Status importInlinedIf(ImportCtx &ctx, Value *cond) {
  auto returned = [&](const Expected<std::vector<Operand>> &outs, const char *branch) {
    if (outs && outs->size() != static_cast<size_t>(ctx.numOutputs()))
      return ctx.fail(std::string(branch) + " returns " + str(static_cast<int64_t>(outs->size())) +
                      " values for " + str(ctx.numOutputs()) + " outputs");
    return outs ? Status::ok() : outs.status();
  };
  if (isComputableFromConstants(*cond)) { // only the branch taken is imported
    auto c = constantBool(ctx, cond, "cond", "");
    if (!c)
      return c.takeStatus();
    const char *branch = *c ? "then_branch" : "else_branch";
    if (!ctx.hasAttr(*c ? "else_branch" : "then_branch")) // read: never taken, so never imported
      return ctx.fail(std::string("graph attribute '") + (*c ? "else_branch" : "then_branch") +
                      "' is missing");
    auto outs = ctx.inlineBody(branch, {}, std::string(branch) + ": ");
    if (Status s = returned(outs, branch))
      return s;
    for (int i = 0; i < ctx.numOutputs(); ++i)
      if (Status s = ctx.setOutput(i, (*outs)[static_cast<size_t>(i)]))
        return s;
    return Status::ok();
  }
  auto then = ctx.inlineBody("then_branch", {}, "then_branch: ");
  if (Status s = returned(then, "then_branch"))
    return s;
  auto other = ctx.inlineBody("else_branch", {}, "else_branch: ");
  if (Status s = returned(other, "else_branch"))
    return s;
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    auto out = selectBranches(ctx, cond, (*then)[static_cast<size_t>(i)],
                              (*other)[static_cast<size_t>(i)], i);
    if (!out)
      return out.takeStatus();
    if (Status s = ctx.setOutput(i, *out))
      return s;
  }
  return Status::ok();
}

// ---- If -------------------------------------------------------------------------------

Status importIf(ImportCtx &ctx) {
  auto cond = scalarOperand(ctx, 0, DType::Bool, "cond");
  if (!cond)
    return cond.takeStatus();
  // A condition known at compile time imports only the branch taken: the other one may
  // return other shapes (ONNX allows it), as in functions that branch on an input's rank.
  if (isComputableFromConstants(**cond) || returnsAggregates(ctx, "then_branch") ||
      returnsAggregates(ctx, "else_branch"))
    return importInlinedIf(ctx, *cond);
  auto then = ctx.importBody("then_branch", {});
  if (!then)
    return then.takeStatus();
  auto other = ctx.importBody("else_branch", {});
  if (!other)
    return other.takeStatus();
  if (then->graph->outputs().size() != static_cast<size_t>(ctx.numOutputs()))
    return ctx.fail("then_branch returns " +
                    str(static_cast<int64_t>(then->graph->outputs().size())) + " values for " +
                    str(ctx.numOutputs()) + " outputs");
  std::vector<Value *> operands{*cond};
  operands.insert(operands.end(), then->captures.begin(), then->captures.end());
  operands.insert(operands.end(), other->captures.begin(), other->captures.end());
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> bodies;
  bodies.emplace_back("then_branch", std::move(then->graph));
  bodies.emplace_back("else_branch", std::move(other->graph));
  auto n = emitWithBodies(ctx, ops::If, operands, {}, ctx.numOutputs(), std::move(bodies));
  if (!n)
    return n.takeStatus();
  for (int i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, (*n)->output(i));
  return Status::ok();
}

// ---- Loop -----------------------------------------------------------------------------

// Whether a body result is always true: a constant true, or the condition input passed
// through unchanged when the loop's initial condition is always true.
bool alwaysTrue(const Graph &body, const std::vector<Value *> &captures, size_t formals,
                const Value *v, const Value *condIn, bool initTrue) {
  while (v->producer() && v->producer()->numInputs() == 1 &&
         (v->producer()->is(ops::Identity) || v->producer()->is(ops::Reshape)))
    v = v->producer()->input(0);
  if (v == condIn)
    return initTrue;
  for (size_t i = formals; i < body.inputs().size(); ++i)
    if (body.inputs()[i] == v) {
      const Value *c = captures[i - formals];
      return c->isConstant() && c->type().numElements() == 1 && *c->data()->as<uint8_t>() != 0;
    }
  return false;
}

bool isConstantTrue(const Value *v) {
  return v->isConstant() && v->type().numElements() == 1 && *v->data()->as<uint8_t>() != 0;
}

Status importLoop(ImportCtx &ctx) {
  int carried = ctx.numInputs() - 2;
  if (carried < 0)
    return ctx.fail("needs the M and cond inputs (either may be empty)");
  int scans = ctx.numOutputs() - carried;
  if (scans < 0)
    return ctx.fail(str(ctx.numOutputs()) + " outputs for " + str(carried) +
                    " loop-carried values");
  for (int k = 0; k < carried; ++k)
    if (ctx.aggregate(2 + k))
      return importUnrolledLoop(ctx, carried, scans);
  if (ctx.bodyReadsAggregates("body"))
    return importUnrolledLoop(ctx, carried, scans);
  if (!ctx.hasInput(0) && !ctx.hasInput(1))
    return ctx.fail("neither a trip count M nor a condition: the loop would never end");
  Value *trip = nullptr, *cond = nullptr;
  if (ctx.hasInput(0)) {
    auto m = scalarOperand(ctx, 0, DType::I64, "M");
    if (!m)
      return m.takeStatus();
    trip = *m;
  }
  if (ctx.hasInput(1)) {
    auto c = scalarOperand(ctx, 1, DType::Bool, "cond");
    if (!c)
      return c.takeStatus();
    cond = *c;
  }
  std::vector<TensorType> types{{DType::I64, {}}, {DType::Bool, {}}};
  for (int k = 0; k < carried; ++k) {
    if (!ctx.hasInput(2 + k))
      return ctx.fail("loop-carried input " + str(k) + " is empty");
    types.push_back(ctx.input(2 + k)->type());
  }
  auto imported = ctx.importBody("body", types);
  if (!imported)
    return imported.takeStatus();
  Graph &body = *imported->graph;
  std::vector<Value *> captures = std::move(imported->captures);
  const size_t formals = types.size();
  if (body.outputs().size() != 1 + static_cast<size_t>(carried) + static_cast<size_t>(scans))
    return ctx.fail("body returns " + str(static_cast<int64_t>(body.outputs().size())) +
                    " values; the node needs " + str(1 + carried + scans) +
                    " (cond, loop-carried values, scan outputs)");
  Value *iterIn = body.inputs()[0], *condIn = body.inputs()[1];
  Value *condOut = body.outputs()[0];
  if (condOut->dtype() != DType::Bool || condOut->type().numElements() != 1)
    return ctx.fail("body's condition output is " + toString(condOut->type()) +
                    "; it must be one bool");
  for (int k = 0; k < carried; ++k)
    if (body.outputs()[1 + k]->type() != types[2 + k])
      return ctx.fail("loop-carried value " + str(k) + " ('" + body.inputs()[2 + k]->name() +
                      "') starts as " + toString(types[2 + k]) + " but the body makes it " +
                      toString(body.outputs()[1 + k]->type()) +
                      "; odlac needs one static type per loop-carried value");
  bool initTrue = !cond || isConstantTrue(cond);
  bool neverStops = alwaysTrue(body, captures, formals, condOut, condIn, initTrue);

  // The stacked length of scan outputs, and whether the loop is bounded by it.
  int64_t length = -1;
  bool bounded = false;
  if (scans > 0) {
    bool tripKnown = trip && isComputableFromConstants(*trip);
    if (tripKnown && neverStops) {
      auto m = ctx.constInts(0, "M");
      if (!m)
        return m.takeStatus();
      length = std::max<int64_t>(0, (*m)[0]);
    } else {
      for (int k = 0; k < scans; ++k) {
        auto declared = ctx.declaredType(carried + k);
        if (!declared || declared->rank() == 0)
          return ctx.fail("scan output " + str(k) + " ('" + ctx.outputName(carried + k) +
                          "') has a length that depends on data (the trip count or the "
                          "condition), and the model gives no static bound for it");
        if (length >= 0 && declared->dims[0] != length)
          return ctx.fail("scan outputs have different declared lengths (" + str(length) + " and " +
                          str(declared->dims[0]) + ")");
        length = declared->dims[0];
      }
      bounded = true;
    }
  }

  // The IR body: inputs (cond_in, iter, v..., captured...), outputs (cond, iter + 1, v...,
  // scan...). Constants it needs are captured like any outer value.
  Value *one = i64Scalar(ctx, "one", 1);
  Value *oneIn = body.addInput(one->name(), one->type());
  captures.push_back(one);
  Value *mIn = nullptr;
  if (bounded && trip) {
    mIn = body.addInput(trip->name(), trip->type());
    captures.push_back(trip);
  }
  auto next = bodyNode(body, nullptr, ops::Add, {iterIn, oneIn}, {}, iterIn->name() + "/next");
  if (!next)
    return next.takeStatus();
  Value *condNext = condOut;
  if (condNext->type().rank() != 0) {
    auto r = bodyNode(body, nullptr, ops::Reshape, {condNext}, {{"shape", std::vector<int64_t>{}}},
                      condOut->name() + "/scalar");
    if (!r)
      return r.takeStatus();
    condNext = *r;
  }
  if (mIn) { // bounded: also stop when the data's trip count is reached
    auto below = bodyNode(body, nullptr, ops::Less, {*next, mIn}, {}, iterIn->name() + "/below_m");
    if (!below)
      return below.takeStatus();
    auto both =
        bodyNode(body, nullptr, ops::And, {condNext, *below}, {}, condOut->name() + "/and_m");
    if (!both)
      return both.takeStatus();
    condNext = *both;
  }
  std::vector<Value *> outs{condNext, *next};
  outs.insert(outs.end(), body.outputs().begin() + 1, body.outputs().end());
  body.setOutputs(outs);
  std::vector<Value *> inputs{condIn, iterIn};
  inputs.insert(inputs.end(), body.inputs().begin() + 2, body.inputs().end());
  body.setInputs(inputs);

  // Outer operands: trip count, initial condition, iteration 0, v..., captured values.
  Value *tripOperand = trip;
  Value *condOperand = cond ? cond : boolScalar(ctx, "true", true);
  if (scans > 0)
    tripOperand = i64Scalar(ctx, "length", length);
  else if (!trip)
    tripOperand = i64Scalar(ctx, "unbounded", std::numeric_limits<int64_t>::max());
  if (bounded && trip) { // the first iteration runs only if 0 < M too
    auto positive =
        ctx.emit("Less", {i64Scalar(ctx, "zero", 0), trip}, {}, ctx.tempName("m_positive"));
    if (!positive)
      return positive.takeStatus();
    auto both = ctx.emit("And", {condOperand, *positive}, {}, ctx.tempName("cond_and_m"));
    if (!both)
      return both.takeStatus();
    condOperand = *both;
  }
  std::vector<Value *> operands{tripOperand, condOperand, i64Scalar(ctx, "iter0", 0)};
  for (int k = 0; k < carried; ++k)
    operands.push_back(ctx.input(2 + k));
  operands.insert(operands.end(), captures.begin(), captures.end());
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> bodies;
  bodies.emplace_back("body", std::move(imported->graph));
  // IR results: iteration count, v..., scan...; ONNX outputs skip the first.
  std::vector<Value *> results;
  Value *count = ctx.graph().addValue(ctx.tempName("iterations"), TensorType{});
  for (int i = 0; i < ctx.numOutputs(); ++i)
    results.push_back(ctx.graph().addValue(
        ctx.wantsOutput(i) ? ctx.outputName(i) : ctx.tempName("result" + str(i)), TensorType{}));
  results.insert(results.begin(), count);
  Node *n = ctx.graph().addNode(ops::Loop, ctx.proto().name(), operands, results,
                                {{"num_carried", int64_t{1 + carried}}});
  for (auto &[name, g] : bodies)
    n->setSubgraph(name, std::move(g));
  if (Status s = verifyAndInfer(*n))
    return s;
  for (int i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, n->output(1 + i));
  return Status::ok();
}

// ---- Scan -----------------------------------------------------------------------------

Status importScan(ImportCtx &ctx) {
  const bool batched = ctx.opset() < 9; // Scan-8: input 0 is sequence_lens, axis 0 is batch
  int first = batched ? 1 : 0;
  if (batched && ctx.hasInput(0))
    return ctx.fail("sequence_lens is not supported (every sequence must have the full length)");
  int64_t numScanInputs = ctx.attrInt("num_scan_inputs", -1);
  int states = ctx.numInputs() - first - static_cast<int>(numScanInputs);
  if (numScanInputs < 1 || states < 0)
    return ctx.fail("num_scan_inputs " + str(numScanInputs) + " does not fit " +
                    str(ctx.numInputs() - first) + " inputs");
  int scanOuts = ctx.numOutputs() - states;
  if (scanOuts < 0)
    return ctx.fail(str(ctx.numOutputs()) + " outputs for " + str(states) + " state values");
  auto ins = [&](const char *name, int64_t n) {
    std::vector<int64_t> v = ctx.attrInts(name, std::vector<int64_t>(static_cast<size_t>(n), 0));
    return v;
  };
  std::vector<int64_t> inAxes =
      batched ? std::vector<int64_t>(numScanInputs, 0) : ins("scan_input_axes", numScanInputs);
  std::vector<int64_t> inDirs =
      ins(batched ? "directions" : "scan_input_directions", numScanInputs);
  std::vector<int64_t> outAxes =
      batched ? std::vector<int64_t>(scanOuts, 0) : ins("scan_output_axes", scanOuts);
  std::vector<int64_t> outDirs =
      batched ? std::vector<int64_t>(scanOuts, 0) : ins("scan_output_directions", scanOuts);
  if (static_cast<int64_t>(inAxes.size()) != numScanInputs ||
      static_cast<int64_t>(inDirs.size()) != numScanInputs ||
      static_cast<int>(outAxes.size()) != scanOuts || static_cast<int>(outDirs.size()) != scanOuts)
    return ctx.fail("scan axes/directions attributes must have one entry per scan input/output");

  // Operands without the batch axis (Scan-8, batch 1).
  std::vector<Value *> operands;
  for (int i = first; i < ctx.numInputs(); ++i) {
    Value *v = ctx.input(i);
    if (!v)
      return ctx.fail("input " + str(i) + " is empty");
    if (batched) {
      if (v->type().rank() < 1 || v->dims()[0] != 1)
        return ctx.fail("Scan-8 input '" + v->name() + "' " + toString(v->type()) +
                        ": only batch size 1 is supported");
      auto r = ctx.reshape(v, Dims(v->dims().begin() + 1, v->dims().end()),
                           ctx.tempName("unbatched" + str(i)));
      if (!r)
        return r.takeStatus();
      v = *r;
    }
    operands.push_back(v);
  }
  int64_t length = -1;
  std::vector<TensorType> types;
  for (int k = 0; k < states; ++k)
    types.push_back(operands[k]->type());
  for (int64_t j = 0; j < numScanInputs; ++j) {
    Value *x = operands[states + j];
    auto axis = normalizeAxis(inAxes[j], x->type().rank(), "scan_input_axes entry");
    if (!axis)
      return axis.takeStatus();
    inAxes[j] = *axis;
    int64_t len = x->dims()[*axis];
    if (length >= 0 && len != length)
      return ctx.fail("scan inputs have different lengths (" + str(length) + " and " + str(len) +
                      ")");
    length = len;
    TensorType slice = x->type();
    slice.dims.erase(slice.dims.begin() + *axis);
    types.push_back(slice);
  }
  auto imported = ctx.importBody("body", types);
  if (!imported)
    return imported.takeStatus();
  Graph &body = *imported->graph;
  std::vector<Value *> captures = std::move(imported->captures);
  if (body.outputs().size() != static_cast<size_t>(states) + static_cast<size_t>(scanOuts))
    return ctx.fail("body returns " + str(static_cast<int64_t>(body.outputs().size())) +
                    " values for " + str(states + scanOuts) + " outputs");
  for (int k = 0; k < states; ++k)
    if (body.outputs()[k]->type() != types[k])
      return ctx.fail("state " + str(k) + " starts as " + toString(types[k]) +
                      " but the body makes it " + toString(body.outputs()[k]->type()));

  // Body inputs: cond, iter, states..., then the full scan inputs and constants as captures.
  std::vector<Node *> original = body.nodes();
  const Node *front = original.empty() ? nullptr : original.front();
  Value *condIn = body.addInput("cond", {DType::Bool, {}});
  Value *iterIn = body.addInput("iter", {DType::I64, {}});
  Value *one = i64Scalar(ctx, "one", 1);
  Value *oneIn = body.addInput(one->name(), one->type());
  captures.push_back(one);
  Value *lastIn = nullptr;
  for (int64_t j = 0; j < numScanInputs; ++j) {
    Value *x = operands[states + j];
    Value *full = body.addInput(x->name(), x->type());
    captures.push_back(x);
    Value *index = iterIn;
    if (inDirs[j]) {
      if (!lastIn) {
        Value *last = i64Scalar(ctx, "last", length - 1);
        lastIn = body.addInput(last->name(), last->type());
        captures.push_back(last);
      }
      auto rev = bodyNode(body, front, ops::Sub, {lastIn, iterIn}, {}, "iter/reversed" + str(j));
      if (!rev)
        return rev.takeStatus();
      index = *rev;
    }
    Value *formal = body.inputs()[states + j];
    auto slice = bodyNode(body, front, ops::Gather, {full, index}, {{"axis", inAxes[j]}},
                          formal->name() + "/slice");
    if (!slice)
      return slice.takeStatus();
    body.replaceAllUses(formal, *slice);
  }
  auto next = bodyNode(body, nullptr, ops::Add, {iterIn, oneIn}, {}, "iter/next");
  if (!next)
    return next.takeStatus();
  std::vector<Value *> outs{condIn, *next};
  outs.insert(outs.end(), body.outputs().begin(), body.outputs().end());
  body.setOutputs(outs);
  std::vector<Value *> inputs{condIn, iterIn};
  for (int k = 0; k < states; ++k)
    inputs.push_back(body.inputs()[k]);
  for (size_t i = states + numScanInputs; i < body.inputs().size(); ++i)
    if (body.inputs()[i] != condIn && body.inputs()[i] != iterIn)
      inputs.push_back(body.inputs()[i]);
  body.setInputs(inputs);
  // captures were collected in the order of the inputs after the formals: the ONNX body's
  // own captures, then one, then per scan input its full tensor (and `last` when first
  // needed), matching `inputs` above.

  std::vector<Value *> loopOperands{i64Scalar(ctx, "length", length), boolScalar(ctx, "true", true),
                                    i64Scalar(ctx, "iter0", 0)};
  loopOperands.insert(loopOperands.end(), operands.begin(), operands.begin() + states);
  loopOperands.insert(loopOperands.end(), captures.begin(), captures.end());
  std::vector<Value *> results{ctx.graph().addValue(ctx.tempName("iterations"), TensorType{})};
  for (int i = 0; i < ctx.numOutputs(); ++i)
    results.push_back(ctx.graph().addValue(ctx.tempName("loop" + str(i)), TensorType{}));
  Node *n = ctx.graph().addNode(ops::Loop, ctx.proto().name(), loopOperands, results,
                                {{"num_carried", int64_t{1 + states}}, {"scan_reverse", outDirs}});
  n->setSubgraph("body", std::move(imported->graph));
  if (Status s = verifyAndInfer(*n))
    return s;
  // Final states and scan outputs, moved to their axes (and given back the batch axis).
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    Value *v = n->output(1 + i);
    std::string name = ctx.wantsOutput(i) ? ctx.outputName(i) : ctx.tempName("out" + str(i));
    if (i >= states) {
      int64_t rank = v->type().rank();
      auto axis = normalizeAxis(outAxes[i - states], rank, "scan_output_axes entry");
      if (!axis)
        return axis.takeStatus();
      if (*axis != 0) {
        std::vector<int64_t> perm; // [1, ..., axis, 0, axis + 1, ...]: moves axis 0 to `axis`
        for (int64_t d = 1; d <= *axis; ++d)
          perm.push_back(d);
        perm.push_back(0);
        for (int64_t d = *axis + 1; d < rank; ++d)
          perm.push_back(d);
        auto t = ctx.emit("Transpose", {v}, {{"perm", perm}},
                          batched ? ctx.tempName("moved" + str(i)) : name);
        if (!t)
          return t.takeStatus();
        v = *t;
      }
    }
    if (batched) {
      Dims dims = v->dims();
      dims.insert(dims.begin(), 1);
      auto r = ctx.emit("Reshape", {v}, {{"shape", dims}}, name);
      if (!r)
        return r.takeStatus();
      v = *r;
    } else if (v->name() != name) {
      auto id = ctx.emit("Identity", {v}, {}, name);
      if (!id)
        return id.takeStatus();
      v = *id;
    }
    ctx.setOutput(i, v);
  }
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"If", 1, nullptr, reads({"else_branch", "then_branch"}), importIf},
    {"Loop", 1, nullptr, reads({"body"}), importLoop, nullptr, "", true},
    {"Scan", 8, nullptr,
     reads({"body", "directions", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
            "scan_output_axes", "scan_output_directions"}),
     importScan},
};

} // namespace

const std::vector<ImportRule> &controlFlowRules() { return kRules; }

} // namespace odlac
