// Writes interpret mode's instance API (--exec-mode=interpret): NAME.c, whose instance holds at
// most the weights and whose NAME_run runs each op as it calls it, in the calls the backend's
// CallSequence names.
#include "Emitter.h"

namespace odlac::emit {

namespace {

void declare(CWriter &w, const Emitter &e) {
  w.line("/* Interpret mode: an instance only " +
         std::string(e.bin() ? "holds the weights from `weights_path`;\n * each run"
                             : "exists; each run") +
         " executes the ops as it calls them. */");
}

// NAME_run: the buffers as arrays, around NAME_interpret in the computation (and context) the
// backend needs.
void run(CWriter &w, const Emitter &e) {
  const CallSequence &seq = e.config.facts.calls;
  std::string ins, outs;
  for (const Port &p : e.inputs)
    ins += (ins.empty() ? "" : ", ") + p.param;
  for (const Port &p : e.outputs)
    outs += (outs.empty() ? "" : ", ") + p.param;
  std::string call = e.n + "_interpret(" + (e.bin() ? "inst->weights, " : "") +
                     "inputs_, outputs_" + (seq.outputsByContext ? ", comp_, ctx_" : "") + ")";
  w.open(e.runSignature());
  w.line("const void *const inputs_[] = {" + (ins.empty() ? "NULL" : ins) + "};");
  w.line("void *const outputs_[] = {" + (outs.empty() ? "NULL" : outs) + "};");
  if (!e.bin())
    w.line("(void)inst;");
  if (!seq.computation) { // the backend keeps the values it interprets itself
    w.line("return " + call + ";");
  } else {
    w.line("odla_computation comp_;");
    if (seq.outputsByContext)
      w.line("odla_context ctx_ = NULL;");
    w.line("odla_status status_ = odla_CreateComputation(&comp_);");
    w.line("if (status_ != ODLA_SUCCESS)");
    w.line("  return status_;");
    if (seq.outputsByContext) {
      w.line("status_ = odla_CreateContext(&ctx_);");
      w.line("if (status_ == ODLA_SUCCESS)");
      w.line("  status_ = " + call + ";");
      w.line("if (ctx_)");
      w.line("  odla_DestroyContext(ctx_);");
    } else {
      w.line("status_ = " + call + ";");
    }
    w.line("odla_DestroyComputation(comp_);");
    w.line("return status_;");
  }
  w.close();
  w.line();
}

void sources(const Emitter &e, std::vector<GeneratedFile> &files) {
  GraphFunction fn = graphFunction(e, true);
  CWriter w;
  e.prelude(w, e.n + ".c", "runs the model op by op through the ODLA API (interpret mode).", &fn);
  InstanceParts parts;
  parts.weights = e.bin();
  if (e.bin())
    parts.steps.push_back(e.n + "_load_weights(weights_path, &inst->weights)");
  e.writeInstanceStruct(w, parts);
  if (e.bin())
    writeBlobLoader(w, e);
  w.line("/* Runs the model on the current computation, one ODLA call per statement: each op runs "
         "when it\n * is called, and values are released after their last use. */");
  w.line(fn.text);
  w.line();
  e.writeCreateDestroy(w, parts);
  run(w, e);
  e.writeOneCallApi(w);
  files.push_back({e.n + ".c", w.str()});
}

} // namespace

const ExecModeParts kInterpretParts{declare, sources};

} // namespace odlac::emit
