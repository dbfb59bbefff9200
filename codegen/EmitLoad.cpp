// Writes load mode's instance API (--exec-mode=load): NAME.c, whose NAME_create loads a stored
// executable and builds no graph, and NAME_store.c, which builds and compiles the computation
// once and stores it as that executable.
#include "Emitter.h"

namespace odlac::emit {

namespace {

void declare(CWriter &w, const Emitter &e) {
  const std::string &n = e.n;
  w.line("/* Load mode: builds and compiles the computation once, over the weights" +
         std::string(e.bin() ? " in `weights_path`" : "") + ", and");
  w.line(" * stores it as an executable at `executable_path` (" + n + "_store.c, for the " +
         "tool that\n * prepares a deployment; the stored file holds the ODLA calls, replayed "
         "and checked\n * by the backend that loads it). */");
  w.line(e.storeSignature() + ";");
  if (e.keyed()) {
    w.line("/* Sets the key (at least 16 bytes; NULL and 0 clear it) of every stored executable "
           "in");
    w.line(" * the process (odla_ExtSetExecutableKey): while one is set, " + n +
           "_store signs what it");
    w.line(" * writes (HMAC-SHA256) and " + n +
           "_create refuses an executable not signed with it. */");
    w.line(e.keySignature() + ";");
  }
  w.line("/* Loads the executable " + n + "_store wrote; builds no graph and reads no weights. */");
}

// NAME.c: loads the stored executable; builds no graph and reads no weights.
std::string loadSource(const Emitter &e) {
  CWriter w;
  e.prelude(w, e.n + ".c",
            "loads the model's stored executable through the ODLA API and runs it (load mode).",
            nullptr, e.keyed());
  InstanceParts parts;
  parts.handles = {{"odla_executable", "exec", "odla_DestroyExecutable"},
                   {"odla_context", "ctx", "odla_DestroyContext"}};
  parts.locals = {"odla_resource_location loc;"};
  parts.setup = {"loc.location_type = ODLA_LOCATION_PATH;", "loc.location = executable_path;",
                 "loc.size = 0;"};
  parts.steps = {"odla_LoadExecutable(loc, NULL, &inst->exec)", "odla_CreateContext(&inst->ctx)"};
  e.writeInstanceStruct(w, parts);
  e.writeCreateDestroy(w, parts);
  w.open(e.runSignature());
  // Integer ids are numbered as NAME_store.c's build function writes them.
  ValueIds ids = e.config.facts.target->integerIds ? graphFunction(e, false).ids : ValueIds(false);
  e.bindPorts(w, ids);
  w.line("return odla_LaunchExecutable(inst->exec, inst->ctx);");
  w.close();
  w.line();
  if (e.keyed()) {
    w.open(e.keySignature());
    w.line("return odla_ExtSetExecutableKey(key, key_bytes);");
    w.close();
    w.line();
  }
  e.writeOneCallApi(w);
  return w.str();
}

// NAME_store.c: builds and compiles the computation once and stores it.
std::string storeSource(const Emitter &e) {
  const std::string &n = e.n;
  GraphFunction fn = graphFunction(e, false);
  CWriter w;
  e.prelude(w, n + "_store.c",
            "builds and compiles the model's computation and stores it as the\n"
            " * executable that load mode's " +
                n + "_create loads (odla_StoreExecutable).",
            &fn);
  if (e.bin())
    writeBlobLoader(w, e);
  w.line("/* Records the model on the current computation, one ODLA call per statement. */");
  w.line(fn.text);
  w.line();
  w.open(e.storeSignature());
  w.line("odla_computation comp = NULL;");
  w.line("odla_executable exec = NULL;");
  w.line("odla_resource_location loc;");
  w.line("odla_status s = ODLA_SUCCESS;");
  if (e.bin()) {
    w.line("unsigned char *weights = NULL;");
    w.line("s = " + n + "_load_weights(weights_path, &weights);");
  }
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = odla_CreateComputation(&comp);");
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = " + n + "_build(" + (e.bin() ? "weights" : "") + ");");
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = odla_CompileComputation(comp, NULL, &exec);");
  w.line("loc.location_type = ODLA_LOCATION_PATH;");
  w.line("loc.location = executable_path;");
  w.line("loc.size = 0;");
  w.line("if (s == ODLA_SUCCESS)");
  w.line("  s = odla_StoreExecutable(loc, exec);");
  w.line("if (exec)");
  w.line("  odla_DestroyExecutable(exec);");
  w.line("if (comp)");
  w.line("  odla_DestroyComputation(comp);");
  if (e.bin())
    w.line("free(weights);");
  w.line("return s;");
  w.close();
  return w.str();
}

void sources(const Emitter &e, std::vector<GeneratedFile> &files) {
  files.push_back({e.n + ".c", loadSource(e)});
  files.push_back({e.n + "_store.c", storeSource(e)});
}

} // namespace

const ExecModeParts kLoadParts{declare, sources};

} // namespace odlac::emit
