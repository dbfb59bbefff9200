// Import rules for sequences and optionals, resolved at compile time (Aggregate.h): a
// sequence is a list of IR values whose length is known at import, an optional is absent or
// holds one value. Positions (SequenceAt, SequenceInsert, SequenceErase) and SplitToSequence's
// split must be known at compile time; ConcatFromSequence becomes a Concat (of Unsqueezed
// elements for new_axis=1), SplitToSequence Slices (Reshaped for keepdims=0), SequenceMap its
// body inlined once per element. Identity passes any kind through. Anything whose length or
// presence would only be known at run time is refused, naming the value and why.
#include "Import.h"
#include "Rules.h"

#include <algorithm>

namespace odlac {
namespace {

// Operand i as a sequence (an optional holding one is not: OptionalGetElement unwraps it).
Expected<const Aggregate *> sequenceOperand(ImportCtx &ctx, int i, const char *what) {
  const Aggregate *a = ctx.aggregate(i);
  if (!a || !a->isSequence())
    return ctx.fail(std::string(what) + " (input " + str(i) + ") must be a sequence, got " +
                    (a                 ? a->describe()
                     : ctx.hasInput(i) ? "a tensor"
                                       : "nothing"));
  return a;
}

// A position operand, known at compile time, normalized against a sequence of `size`
// elements: [-size, size) or, for an insertion point, [-size, size].
Expected<int64_t> position(ImportCtx &ctx, int i, size_t size, bool insertion) {
  if (ctx.aggregate(i))
    return ctx.fail("position must be a tensor, got " + ctx.aggregate(i)->describe());
  if (ctx.hasInput(i) && ctx.input(i)->type().numElements() != 1)
    return ctx.fail("position must be one integer, got " + toString(ctx.input(i)->type()));
  auto p = ctx.constInts(i, "position");
  if (!p)
    return ctx.fail(p.status().message() + "; it picks an element of a sequence, which odlac "
                                           "resolves at compile time");
  int64_t n = static_cast<int64_t>(size), at = (*p)[0];
  int64_t hi = insertion ? n : n - 1;
  if (at < -n || at > hi)
    return ctx.fail("position " + str(at) + " is out of range [" + str(-n) + ", " + str(hi) +
                    "] for a sequence of " + str(n));
  return at < 0 ? at + n : at;
}

// An optional position operand (position()); `dflt` when the node has none.
Expected<int64_t> positionOr(ImportCtx &ctx, int i, size_t size, bool insertion, int64_t dflt) {
  if (!ctx.hasInput(i) && !ctx.aggregate(i))
    return dflt;
  return position(ctx, i, size, insertion);
}

// The element type a sequence holds, checked against a tensor about to join it.
Status checkElementType(ImportCtx &ctx, const Aggregate &seq, const Value *t) {
  std::optional<DType> have = seq.elements.empty() ? seq.elemType : seq.elements[0]->dtype();
  if (have && *have != t->dtype())
    return ctx.fail("tensor '" + t->name() + "' is " + dtypeName(t->dtype()) +
                    ", the sequence holds " + dtypeName(*have));
  return Status::ok();
}

Status importIdentity(ImportCtx &ctx) { return ctx.setOutput(0, ctx.operand(0)); }

Status importSequenceEmpty(ImportCtx &ctx) {
  auto dtype = dtypeFromOnnx(static_cast<int>(ctx.attrInt("dtype", 1)));
  if (!dtype)
    return ctx.fail("dtype " + str(ctx.attrInt("dtype", 1)) +
                    " is not an element type odlac "
                    "supports");
  ctx.setOutput(0, Aggregate::sequence({}, *dtype));
  return Status::ok();
}

Status importSequenceConstruct(ImportCtx &ctx) {
  std::vector<Value *> elements;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.fail("input " + str(i) + " must be a tensor, got " +
                      (ctx.aggregate(i) ? ctx.aggregate(i)->describe() : "nothing"));
    if (!elements.empty() && ctx.input(i)->dtype() != elements[0]->dtype())
      return ctx.fail("input " + str(i) + " is " + dtypeName(ctx.input(i)->dtype()) + ", input 0 " +
                      dtypeName(elements[0]->dtype()) + ": a sequence holds one element type");
    elements.push_back(ctx.input(i));
  }
  ctx.setOutput(0, Aggregate::sequence(elements));
  return Status::ok();
}

Status importSequenceAt(ImportCtx &ctx) {
  auto seq = sequenceOperand(ctx, 0, "input_sequence");
  if (!seq)
    return seq.takeStatus();
  auto at = position(ctx, 1, (*seq)->elements.size(), false);
  if (!at)
    return at.takeStatus();
  Operand element;
  element.tensor = (*seq)->elements[static_cast<size_t>(*at)];
  return ctx.setOutput(0, element);
}

Status importSequenceInsert(ImportCtx &ctx) {
  auto seq = sequenceOperand(ctx, 0, "input_sequence");
  if (!seq)
    return seq.takeStatus();
  if (!ctx.hasInput(1))
    return ctx.fail("tensor (input 1) must be a tensor, got " +
                    (ctx.aggregate(1) ? ctx.aggregate(1)->describe() : std::string("nothing")));
  if (Status s = checkElementType(ctx, **seq, ctx.input(1)))
    return s;
  Aggregate out = **seq;
  size_t n = out.elements.size();
  auto at = positionOr(ctx, 2, n, true, static_cast<int64_t>(n));
  if (!at)
    return at.takeStatus();
  if (out.elements.size() >= static_cast<size_t>(kMaxSequenceLength))
    return ctx.fail("the sequence would have more than " + str(kMaxSequenceLength) +
                    " elements, the most odlac resolves at compile time");
  out.elements.insert(out.elements.begin() + *at, ctx.input(1));
  ctx.setOutput(0, std::move(out));
  return Status::ok();
}

Status importSequenceErase(ImportCtx &ctx) {
  auto seq = sequenceOperand(ctx, 0, "input_sequence");
  if (!seq)
    return seq.takeStatus();
  Aggregate out = **seq;
  if (out.elements.empty())
    return ctx.fail("the sequence is empty: there is nothing to erase");
  size_t n = out.elements.size();
  auto at = positionOr(ctx, 1, n, false, static_cast<int64_t>(n) - 1);
  if (!at)
    return at.takeStatus();
  out.elements.erase(out.elements.begin() + *at);
  ctx.setOutput(0, std::move(out));
  return Status::ok();
}

Status importSequenceLength(ImportCtx &ctx) {
  auto seq = sequenceOperand(ctx, 0, "input_sequence");
  if (!seq)
    return seq.takeStatus();
  int64_t n = static_cast<int64_t>((*seq)->elements.size());
  ctx.setOutput(0, ctx.constant(ctx.outputName(0), {DType::I64, {}}, &n));
  return Status::ok();
}

// SplitToSequence: Split's pieces as a sequence. Without `split`, pieces of 1 (squeezed
// away with keepdims=0); a scalar split: pieces of that size, the last one shorter; a 1-D
// split: those sizes, which must add up to the axis.
Status importSplitToSequence(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (!x)
    return ctx.fail("input (input 0) must be a tensor");
  int64_t rank = x->type().rank();
  auto axis = normalizeAxis(ctx.attrInt("axis", 0), rank, "axis");
  if (!axis)
    return axis.takeStatus();
  int64_t extent = x->dims()[static_cast<size_t>(*axis)];
  bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  std::vector<int64_t> sizes;
  bool hasSplit = ctx.hasInput(1);
  if (!hasSplit) {
    sizes.assign(static_cast<size_t>(extent), 1);
  } else {
    if (ctx.input(1)->type().rank() > 1)
      return ctx.fail("split must be a scalar or 1-D, got " + toString(ctx.input(1)->type()));
    bool scalar = ctx.input(1)->type().rank() == 0;
    auto split = ctx.constInts(1, "split");
    if (!split)
      return ctx.fail(split.status().message() + "; it fixes the sequence's length and element "
                                                 "shapes, which odlac needs at compile time");
    if (scalar) {
      int64_t piece = (*split)[0];
      if (piece <= 0)
        return ctx.fail("split " + str(piece) + " must be positive");
      for (int64_t at = 0; at < extent; at += piece)
        sizes.push_back(std::min(piece, extent - at));
    } else {
      int64_t sum = 0;
      for (int64_t s : *split) {
        if (s < 0)
          return ctx.fail("split " + dimsToString(*split) + " has a negative size");
        sum += s;
      }
      if (sum != extent)
        return ctx.fail("split " + dimsToString(*split) + " adds up to " + str(sum) +
                        ", but axis " + str(*axis) + " of " + toString(x->type()) + " has " +
                        str(extent));
      sizes = *split;
    }
  }
  if (sizes.size() > static_cast<size_t>(kMaxSequenceLength))
    return ctx.fail("the sequence would have " + str(static_cast<int64_t>(sizes.size())) +
                    " elements, more than the " + str(kMaxSequenceLength) +
                    " odlac resolves at compile time");
  std::vector<Value *> elements;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> starts(rank, 0), ends(x->dims()), steps(rank, 1);
    starts[*axis] = start;
    ends[*axis] = start + sizes[i];
    start += sizes[i];
    std::string name = ctx.tempName(str(static_cast<int64_t>(i)));
    auto piece =
        ctx.emit("Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}, name);
    if (!piece)
      return piece.takeStatus();
    Value *v = *piece;
    if (!keepdims && !hasSplit) { // keepdims applies only without split (ONNX)
      Dims dims = v->dims();
      dims.erase(dims.begin() + *axis);
      auto r = ctx.reshape(v, dims, name + "/squeezed");
      if (!r)
        return r.takeStatus();
      v = *r;
    }
    elements.push_back(v);
  }
  ctx.setOutput(0, Aggregate::sequence(elements, x->dtype()));
  return Status::ok();
}

Status importConcatFromSequence(ImportCtx &ctx) {
  auto seq = sequenceOperand(ctx, 0, "input_sequence");
  if (!seq)
    return seq.takeStatus();
  const std::vector<Value *> &elements = (*seq)->elements;
  if (elements.empty())
    return ctx.fail("the sequence is empty: ConcatFromSequence has no element to join");
  if (!ctx.hasAttr("axis"))
    return ctx.fail("attribute 'axis' is required");
  bool newAxis = ctx.attrInt("new_axis", 0) != 0;
  int64_t rank = elements[0]->type().rank();
  auto axis = normalizeAxis(ctx.attrInt("axis", 0), rank + (newAxis ? 1 : 0), "axis");
  if (!axis)
    return axis.takeStatus();
  std::vector<Value *> parts;
  for (size_t i = 0; i < elements.size(); ++i) {
    Value *v = elements[i];
    if (v->type().rank() != rank)
      return ctx.fail("element " + str(static_cast<int64_t>(i)) + " is " + toString(v->type()) +
                      " but element 0 is " + toString(elements[0]->type()) +
                      ": the elements joined must have one rank");
    if (newAxis) {
      Dims dims = v->dims();
      dims.insert(dims.begin() + *axis, 1);
      auto r = ctx.reshape(v, dims, ctx.tempName("unsqueezed" + str(static_cast<int64_t>(i))));
      if (!r)
        return r.takeStatus();
      v = *r;
    }
    parts.push_back(v);
  }
  if (parts.size() == 1) {
    Operand one;
    one.tensor = parts[0];
    return ctx.setOutput(0, one);
  }
  auto out = concatValues(ctx, parts, *axis);
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// SequenceMap: the body once per element of the sequences (all of one length); tensor
// operands are passed whole to every iteration. Output k is the sequence of the body's
// output k.
Status importSequenceMap(ImportCtx &ctx) {
  int64_t length = -1;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    const Aggregate *a = ctx.aggregate(i);
    if (!a && !ctx.hasInput(i))
      return ctx.fail("input " + str(i) + " is missing");
    if (a && !a->isSequence())
      return ctx.fail("input " + str(i) + " is " + a->describe() +
                      "; SequenceMap takes sequences and tensors");
    if (i == 0 && !a)
      return ctx.fail("input_sequence (input 0) must be a sequence, got a tensor");
    if (!a)
      continue;
    int64_t n = static_cast<int64_t>(a->elements.size());
    if (length >= 0 && n != length)
      return ctx.fail("input " + str(i) + " is a sequence of " + str(n) + ", input 0 one of " +
                      str(length) + ": SequenceMap's sequences must have one length");
    length = n;
  }
  std::vector<std::vector<Value *>> outs(static_cast<size_t>(ctx.numOutputs()));
  for (int64_t k = 0; k < length; ++k) {
    std::vector<Operand> formals;
    for (int i = 0; i < ctx.numInputs(); ++i) {
      Operand f;
      f.tensor =
          ctx.aggregate(i) ? ctx.aggregate(i)->elements[static_cast<size_t>(k)] : ctx.input(i);
      formals.push_back(f);
    }
    auto results = ctx.inlineBody("body", formals, "SequenceMap element " + str(k) + ": ");
    if (!results)
      return results.takeStatus();
    if (results->size() != outs.size())
      return ctx.fail("body returns " + str(static_cast<int64_t>(results->size())) +
                      " values for " + str(ctx.numOutputs()) + " outputs");
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!(*results)[o].tensor)
        return ctx.fail("body output " + str(static_cast<int64_t>(o)) + " is " +
                        (*results)[o].aggregate->describe() +
                        "; odlac maps bodies that return tensors");
      outs[o].push_back((*results)[o].tensor);
    }
  }
  // The element types of an empty result come from the body's declared outputs.
  const onnx::AttributeProto *body = ctx.findAttr("body");
  for (size_t o = 0; o < outs.size(); ++o) {
    std::optional<DType> elemType;
    if (body && body->has_g() && static_cast<int>(o) < body->g().output_size() &&
        body->g().output(static_cast<int>(o)).type().has_tensor_type())
      elemType =
          dtypeFromOnnx(body->g().output(static_cast<int>(o)).type().tensor_type().elem_type());
    ctx.setOutput(static_cast<int>(o), Aggregate::sequence(outs[o], elemType));
  }
  return Status::ok();
}

// Optional: wraps its input, or, without one, is absent (of the type the attribute gives).
Status importOptional(ImportCtx &ctx) {
  Operand in = ctx.numInputs() > 0 ? ctx.operand(0) : Operand{};
  const onnx::AttributeProto *type = ctx.findAttr("type");
  if (in.absent()) {
    if (!type || !type->has_tp())
      return ctx.fail("an Optional without an input needs the attribute 'type'");
    ctx.setOutput(0, Aggregate::optional(false, type->tp().has_sequence_type()));
    return Status::ok();
  }
  if (in.aggregate && !in.aggregate->isSequence())
    return ctx.fail("input is " + in.aggregate->describe() +
                    "; an optional of an optional is not supported");
  ctx.setOutput(0, in.aggregate ? Aggregate::optional(true, true, in.aggregate->elements)
                                : Aggregate::optional(true, false, {in.tensor}));
  return Status::ok();
}

Status importOptionalHasElement(ImportCtx &ctx) {
  Operand in = ctx.numInputs() > 0 ? ctx.operand(0) : Operand{};
  // A tensor or a sequence has its element (opset 18 takes them); no input: none.
  uint8_t has = in.aggregate && !in.aggregate->isSequence() ? in.aggregate->present : !in.absent();
  ctx.setOutput(0, ctx.constant(ctx.outputName(0), {DType::Bool, {}}, &has));
  return Status::ok();
}

Status importOptionalGetElement(ImportCtx &ctx) {
  Operand in = ctx.operand(0);
  if (in.absent())
    return ctx.fail("input is missing");
  if (in.aggregate && !in.aggregate->isSequence()) {
    const Aggregate &opt = *in.aggregate;
    if (!opt.present)
      return ctx.fail("input '" + ctx.proto().input(0) + "' is " + opt.describe() +
                      ": getting its element is an error (compiled absent: --optional-absent, "
                      "or an Optional without input)");
    if (opt.ofSequence)
      in.aggregate = Aggregate::sequence(opt.elements);
    else
      in = Operand{opt.elements[0], std::nullopt};
  }
  return ctx.setOutput(0, in); // a tensor or a sequence is its own element (opset 18)
}

ImportRule aggregateRow(const char *op, int since, std::vector<AttrRule> attrs, ImportFn fn) {
  return {op, since, nullptr, std::move(attrs), fn, nullptr, "", true};
}

const std::vector<ImportRule> kRules = {
    aggregateRow("Identity", 1, {}, importIdentity),
    aggregateRow("SequenceEmpty", 11, reads({"dtype"}), importSequenceEmpty),
    aggregateRow("SequenceConstruct", 11, {}, importSequenceConstruct),
    aggregateRow("SequenceAt", 11, {}, importSequenceAt),
    aggregateRow("SequenceInsert", 11, {}, importSequenceInsert),
    aggregateRow("SequenceErase", 11, {}, importSequenceErase),
    aggregateRow("SequenceLength", 11, {}, importSequenceLength),
    aggregateRow("SplitToSequence", 11, reads({"axis", "keepdims"}), importSplitToSequence),
    aggregateRow("ConcatFromSequence", 11, reads({"axis", "new_axis"}), importConcatFromSequence),
    aggregateRow("SequenceMap", 17, reads({"body"}), importSequenceMap),
    aggregateRow("Optional", 15, reads({"type"}), importOptional),
    aggregateRow("OptionalHasElement", 15, {}, importOptionalHasElement),
    aggregateRow("OptionalGetElement", 15, {}, importOptionalGetElement),
};

} // namespace

const std::vector<ImportRule> &sequenceRules() { return kRules; }

} // namespace odlac
