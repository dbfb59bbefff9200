// Writes the function that records the model on the current computation, one ODLA call per
// line: NAME_build through the PrintSink, or NAME_interpret through the InterpretSink.
#include "Emitter.h"

#include "InterpretSink.h"
#include "lower/Lowering.h"

#include <map>

namespace odlac::emit {

ConstantDataFn constantData(const Emitter &e) {
  std::map<const Value *, const WeightSlot *> slotOf;
  for (const WeightSlot &s : e.slots)
    slotOf[s.value] = &s;
  for (const WeightSlot &s : e.strings)
    slotOf[s.value] = &s;
  return [slotOf, bin = e.bin()](const Value &c, size_t) {
    const WeightSlot &s = *slotOf.at(&c);
    std::string expr = bin && c.dtype() != DType::Str
                           ? "weights + " + std::to_string(kBlobHeader + s.offset)
                           : s.symbol;
    return lower::Data{c.data()->data, expr};
  };
}

GraphFunction graphFunction(const Emitter &e, bool interpret) {
  ConstantDataFn data = constantData(e);
  std::string weightsParam = e.bin() ? "const unsigned char *weights" : "";
  CWriter body;
  GraphFunction fn{"", false, false, 0, 0, ValueIds(e.config.facts.target->integerIds)};
  if (!interpret) {
    body.open("static odla_status " + e.n + "_build(" +
              (weightsParam.empty() ? "void" : weightsParam) + ")");
    PrintSink sink(body, e.N + "_CHECK", e.n, fn.ids);
    lowerGraph(e.graph, sink, data, *e.config.facts.target);
    fn.usesMath = sink.usesMath();
    fn.usesExtensions = sink.usesExtensions();
    fn.typeSlots = sink.typeSlots();
    fn.shapeSlots = sink.shapeSlots();
  } else {
    // Buffers arrive as arrays: parameters named after tensors would clash with the values'
    // variables, and locals ending in '_' never do (cIdentifier trims trailing '_').
    bool byContext = e.config.facts.calls.outputsByContext;
    body.open("static odla_status " + e.n + "_interpret(" +
              (weightsParam.empty() ? "" : weightsParam + ", ") +
              "const void *const *inputs_, void *const *outputs_" +
              (byContext ? ", odla_computation comp_, odla_context ctx_" : "") + ")");
    std::map<std::string, std::string> ins, outs;
    for (size_t i = 0; i < e.inputs.size(); ++i)
      ins[e.inputs[i].value->name()] = "inputs_[" + std::to_string(i) + "]";
    for (size_t i = 0; i < e.outputs.size(); ++i)
      outs[e.outputs[i].value->name()] = "outputs_[" + std::to_string(i) + "]";
    CWriter scratch;
    ValueIds firstIds(e.config.facts.target->integerIds);
    const std::set<std::string> &views = e.config.facts.target->views;
    InterpretSink firstPass(scratch, e.N + "_CHECK", e.n, firstIds, ins, outs, nullptr,
                            e.config.facts.calls, views);
    lowerGraph(e.graph, firstPass, data, *e.config.facts.target);
    InterpretSink sink(body, e.N + "_CHECK", e.n, fn.ids, ins, outs, &firstPass,
                       e.config.facts.calls, views);
    lowerGraph(e.graph, sink, data, *e.config.facts.target);
    fn.usesMath = sink.usesMath();
    fn.usesExtensions = sink.usesExtensions();
    fn.typeSlots = sink.typeSlots();
    fn.shapeSlots = sink.shapeSlots();
    if (byContext) {
      // A backend without odla_GetValueData copies the outputs out of its values when the
      // computation executes, which runs nothing more once every op has run.
      for (size_t i = 0; i < e.outputs.size(); ++i)
        body.line(e.N + "_CHECK(odla_BindToOutputById(" +
                  fn.ids.literal(e.outputs[i].value->name()) + ", outputs_[" + std::to_string(i) +
                  "], ctx_));");
      body.line("return odla_ExecuteComputation(comp_, ctx_, ODLA_COMPUTE_INFERENCE, NULL);");
    }
  }
  if (e.bin() && e.slots.empty())
    body.line("(void)weights; /* a model without weights: the blob holds only its header */");
  if (!interpret || !e.config.facts.calls.outputsByContext)
    body.line("return ODLA_SUCCESS;");
  body.close();
  fn.text = body.str().substr(0, body.str().size() - 1);
  // The slots the shapes and types of its calls fill, first in the function's body (after
  // its head, which may take several lines; a parameter list holds no brace).
  fn.text.insert(fn.text.find("{\n") + 2, shapeLocals(fn.typeSlots, fn.shapeSlots, "  "));
  return fn;
}

} // namespace odlac::emit
