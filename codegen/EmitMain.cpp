// Writes main.c (--emit-main): a test driver that reads inputs as ONNX TensorProto or NumPy .npy
// files, runs the model through its instance API, prints or writes the outputs and times
// repeated runs.
#include "Emitter.h"

namespace odlac {

// The test driver's support code (templates/main_support.c), embedded at build time.
extern const char *const kMainSupportSource;

namespace emit {

std::string mainC(const Emitter &e) {
  CWriter w;
  w.line(e.banner("main.c",
                  "a test driver: reads inputs as ONNX TensorProto or NumPy .npy\n"
                  " * files, runs the model, prints the outputs or writes them as files of\n"
                  " * either kind, and times repeated runs."));
  w.line("#define _POSIX_C_SOURCE 200809L");
  w.line();
  w.line(kMainSupportSource);
  w.line("#include \"" + e.n + ".h\"");
  w.line();
  w.open("static void usage(const char *argv0)");
  std::string ins;
  for (size_t i = 0; i < e.inputs.size(); ++i)
    ins += " input_" + std::to_string(i) + ".pb";
  bool load = e.config.options.execMode == ExecMode::Load;
  w.line("fprintf(stderr, \"usage: %s [--repeat N]" + std::string(load ? " [--store]" : "") + ins +
         " [-o OUTDIR [--npy]] [--print]\\n\"");
  if (load)
    w.line("                \"--store first writes the executable " + e.n +
           ".odlx beside this program (" + e.n + "_store).\\n\"");
  // The model's file name is an argument, never part of the format.
  w.line("                \"Runs model '%s' on the inputs (ONNX TensorProto or .npy files) and "
         "writes\\n\"");
  w.line("                \"OUTDIR/output_<i>.pb (.npy with --npy), or prints the outputs (without "
         "-o\\n\"");
  w.line("                \"and --repeat, or with --print). --repeat N times N runs after a "
         "warm-up.\\n\", argv0,");
  w.line("        " + cString(e.graph.info().fileName) + ");");
  w.close();
  w.line();
  if (e.noHeap()) {
    w.line("/* --no-heap: the instance's memory. */");
    w.line("static unsigned char " + e.n + "_memory[" + e.N + "_MEMORY_BYTES];");
    w.line();
  }
  w.open("int main(int argc, char **argv)");
  size_t nIn = e.inputs.size(), nOut = e.outputs.size();
  w.line("const char *paths[" + std::to_string(std::max<size_t>(1, nIn)) + "] = {NULL};");
  w.line("odlac_tensor in[" + std::to_string(std::max<size_t>(1, nIn)) + "];");
  w.line("void *out[" + std::to_string(std::max<size_t>(1, nOut)) + "];");
  w.line("const char *outdir = NULL;");
  w.line("long repeat = 0;");
  w.line("int n_paths = 0, i, status = 0, npy = 0, print = 0;");
  w.line(e.n + "_instance *inst = NULL;");
  w.line("double startup_ms, first_run_ms;");
  if (e.bin())
    w.line("char weights_path[4096];");
  if (load) {
    w.line("char executable_path[4096];");
    w.line("int store = 0;");
  }
  // The shapes of this run: the compiled ones, or with --dynamic-batch the rows of input 0's
  // file, or with --dim the dims the inputs' files show (dimOfInputs says where each is).
  bool batch = e.config.facts.plannedBatch != 0, symbolic = e.symbolic();
  const SymbolicCalls &sym = e.config.facts.symbolic;
  w.line("int64_t in_dims[" + std::to_string(std::max<size_t>(1, nIn)) + "][ODLAC_MAX_RANK];");
  w.line("int64_t out_dims[" + std::to_string(std::max<size_t>(1, nOut)) + "][ODLAC_MAX_RANK];");
  w.line("size_t out_bytes[" + std::to_string(std::max<size_t>(1, nOut)) + "];");
  if (batch)
    w.line("long batch = 0; /* --dynamic-batch: the leading dim of input 0's file */");
  if (symbolic)
    w.line(e.n + "_dims dims;");
  w.line("memset(in, 0, sizeof in);");
  w.line("memset(out, 0, sizeof out);");
  if (symbolic)
    w.line("memset(&dims, 0, sizeof dims);");
  // Usage errors exit with 2, bad input files and failed runs with 1.
  std::string nInText = std::to_string(nIn);
  w.open("for (i = 1; i < argc; ++i)");
  w.open("if ((strcmp(argv[i], \"--repeat\") == 0 || strcmp(argv[i], \"-o\") == 0) && i + 1 == "
         "argc)");
  w.line("fprintf(stderr, \"%s needs a value\\n\", argv[i]);");
  w.line("return 2;");
  w.reopen("else if (strcmp(argv[i], \"--repeat\") == 0)");
  w.line("if (odlac_parse_repeat(argv[++i], &repeat) != 0)");
  w.line("  return 2;");
  w.reopen("else if (strcmp(argv[i], \"-o\") == 0)");
  w.line("outdir = argv[++i];");
  w.reopen("else if (strcmp(argv[i], \"--npy\") == 0)");
  w.line("npy = 1;");
  w.reopen("else if (strcmp(argv[i], \"--print\") == 0)");
  w.line("print = 1;");
  if (load) {
    w.reopen("else if (strcmp(argv[i], \"--store\") == 0)");
    w.line("store = 1;");
  }
  w.reopen("else if (argv[i][0] == '-' || n_paths == " + nInText + ")");
  w.line("fprintf(stderr, argv[i][0] == '-' ? \"unknown option '%s'\\n\" : \"'%s': the model "
         "takes " +
         nInText + " input file" + (nIn == 1 ? "" : "s") + "\\n\", argv[i]);");
  w.line("usage(argv[0]);");
  w.line("return 2;");
  w.reopen("else");
  w.line("paths[n_paths++] = argv[i];");
  w.close();
  w.close();
  w.open("if (npy && !outdir)");
  w.line("fprintf(stderr, \"--npy names the format of the files -o writes: add -o OUTDIR\\n\");");
  w.line("return 2;");
  w.close();
  w.line("print |= !outdir && repeat == 0; /* outputs are shown, not thrown away */");
  w.open("if (n_paths != " + nInText + ")");
  w.line("fprintf(stderr, \"the model takes " + nInText + " input file" + (nIn == 1 ? "" : "s") +
         ", %d given\\n\", n_paths);");
  w.line("usage(argv[0]);");
  w.line("return 2;");
  w.close();
  for (size_t i = 0; i < nIn; ++i) {
    w.line("if (odlac_load_tensor(paths[" + std::to_string(i) + "], &in[" + std::to_string(i) +
           "]) != 0)");
    w.line("  goto fail;");
  }
  if (batch && nIn > 0)
    w.line("batch = in[0].rank > 0 ? (long)in[0].dims[0] : 0;");
  if (symbolic) {
    for (size_t d = 0; d < sym.dims.size(); ++d) {
      auto [input, axis] = *dimOfInputs(sym, d); // Codegen refused a dim no input shows
      std::string i = std::to_string(input);
      w.line("if (in[" + i + "].rank == " + e.N + "_INPUT_" + i + "_RANK)");
      w.line("  dims." + sym.dims[d].field + " = in[" + i + "].dims[" + std::to_string(axis) +
             "];");
    }
    std::string cond, fmt, args;
    for (const SymbolicDim &d : sym.dims) {
      std::string M = e.N + "_DIM_" + d.field;
      cond += (cond.empty() ? "" : " || ") + std::string("dims.") + d.field + " < " + M +
              "_MIN || dims." + d.field + " > " + M + "_MAX";
      // The name (the model's dim_param) is an argument, never part of the format.
      fmt += (fmt.empty() ? "" : ", ") + std::string("%s=%lld (%d..%d)");
      args += ", " + cString(d.name) + ", (long long)dims." + d.field + ", " + M + "_MIN, " + M +
              "_MAX";
    }
    w.open("if (" + cond + ")");
    w.line("fprintf(stderr, \"the inputs' shapes give dims out of their ranges: " + fmt + "\\n\"" +
           args + ");");
    w.line("goto fail;");
    w.close();
  }
  for (size_t i = 0; i < nIn; ++i) {
    std::string p = e.N + "_INPUT_" + std::to_string(i) + "_", k = std::to_string(i);
    w.open("");
    if (symbolic) {
      w.line(e.n + "_input_shape(&dims, " + k + ", in_dims[" + k + "]);");
    } else {
      w.line("static const int64_t dims[] = " + p + "SHAPE;");
      w.line("memcpy(in_dims[" + k + "], dims, sizeof dims);");
      if (batch)
        w.line("in_dims[" + k + "][0] = batch;");
    }
    w.line("if (odlac_check_input(&in[" + k + "], paths[" + k + "], " + p + "NAME, " + p +
           "ONNX_TYPE, " + p + "RANK, in_dims[" + k + "]) != 0)");
    w.line("  goto fail;");
    w.close();
  }
  for (size_t i = 0; i < nOut; ++i) {
    std::string p = e.N + "_OUTPUT_" + std::to_string(i) + "_", k = std::to_string(i);
    w.open("");
    if (symbolic) {
      w.line("int d, rank = " + e.n + "_output_shape(&dims, " + k + ", out_dims[" + k + "]);");
      w.line("out_bytes[" + k + "] = sizeof(" + e.ctype(e.outputs[i].value) + ");");
      w.line("for (d = 0; d < rank; ++d)");
      w.line("  out_bytes[" + k + "] *= (size_t)out_dims[" + k + "][d];");
    } else {
      w.line("static const int64_t dims[] = " + p + "SHAPE;");
      w.line("memcpy(out_dims[" + k + "], dims, sizeof dims);");
      w.line("out_bytes[" + k + "] = " + p + "BYTES;");
      if (batch) {
        w.line("out_dims[" + k + "][0] = batch;");
        w.line("out_bytes[" + k + "] = " + p + "BYTES / " + e.N + "_BATCH_SIZE * (size_t)batch;");
      }
    }
    w.close();
    w.open("if (!(out[" + k + "] = calloc(1, out_bytes[" + k + "] ? out_bytes[" + k + "] : 1)))");
    w.line("fprintf(stderr, \"cannot allocate output " + k +
           " (%lu bytes)\\n\", (unsigned long)out_bytes[" + k + "]);");
    w.line("goto fail;");
    w.close();
  }
  if (e.bin()) {
    w.line("if (odlac_beside_exe(argv[0], " + e.N +
           "_WEIGHTS_FILE, weights_path, sizeof weights_path) != 0)");
    w.line("  goto fail;");
  }
  if (load) {
    w.line("if (odlac_beside_exe(argv[0], " + e.N +
           "_EXECUTABLE_FILE, executable_path, sizeof executable_path) != 0)");
    w.line("  goto fail;");
    w.open("if (store && (status = " + e.n + "_store(" + (e.bin() ? "weights_path, " : "") +
           "executable_path)) != 0)");
    w.line("fprintf(stderr, \"" + e.n + "_store failed with odla_status %d\\n\", status);");
    w.line("goto fail;");
    w.close();
  }
  w.line("startup_ms = odlac_now_ms();");
  if (e.noHeap())
    w.line("status = " + e.n + "_create_in(" + e.n + "_memory, sizeof " + e.n + "_memory, &inst);");
  else
    w.line("status = " + e.n + "_create(" + (e.pathParam().empty() ? "" : e.pathParam() + ", ") +
           "&inst);");
  w.line("startup_ms = odlac_now_ms() - startup_ms;");
  std::string call = e.n + (batch      ? "_run_batch(inst, (int)batch"
                            : symbolic ? "_run_shaped(inst, &dims"
                                       : "_run(inst");
  for (size_t i = 0; i < nIn; ++i)
    call += ", (const " + e.ctype(e.inputs[i].value) + " *)in[" + std::to_string(i) + "].data";
  for (size_t i = 0; i < nOut; ++i)
    call += ", (" + e.ctype(e.outputs[i].value) + " *)out[" + std::to_string(i) + "]";
  call += ")";
  w.open("if (status != 0)");
  w.line("fprintf(stderr, \"" + e.n + (e.noHeap() ? "_create_in" : "_create") +
         " failed with odla_status %d\\n\", status);");
  w.line("goto fail;");
  w.close();
  w.line("first_run_ms = odlac_now_ms();");
  w.line("status = " + call + ";");
  w.line("first_run_ms = odlac_now_ms() - first_run_ms;");
  w.open("if (status == 0 && repeat > 0)");
  w.line("double *ms = (double *)malloc(sizeof(double) * (size_t)repeat);");
  w.line("long r;");
  w.open("if (!ms)");
  w.line("fprintf(stderr, \"cannot allocate the timings of %ld runs\\n\", repeat);");
  w.line("goto fail;");
  w.close();
  w.open("for (r = 0; r < repeat && status == 0; ++r)");
  w.line("double t0 = odlac_now_ms();");
  w.line("status = " + call + ";");
  w.line("ms[r] = odlac_now_ms() - t0;");
  w.close();
  w.open("if (status == 0)");
  w.line("qsort(ms, (size_t)repeat, sizeof *ms, odlac_cmp_double);");
  w.line("printf(\"latency_ms median=%.4f min=%.4f\\n\", repeat % 2 ? ms[repeat / 2] : "
         "(ms[repeat / 2 - 1] + ms[repeat / 2]) / 2, ms[0]);");
  w.line("printf(\"startup_ms create=%.4f first_run=%.4f\\n\", startup_ms, first_run_ms);");
  w.close();
  w.line("free(ms);");
  w.close();
  w.open("if (status != 0)");
  w.line("fprintf(stderr, \"" + e.n + "_run failed with odla_status %d\\n\", status);");
  w.line("goto fail;");
  w.close();
  for (size_t i = 0; i < nOut; ++i) {
    std::string p = e.N + "_OUTPUT_" + std::to_string(i) + "_", k = std::to_string(i);
    w.line("if (print)");
    w.line("  odlac_print_output(stdout, " + p + "NAME, " + p + "ONNX_TYPE, " + p +
           "RANK, out_dims[" + k + "], out[" + k + "], out_bytes[" + k + "]);");
  }
  if (nOut > 0) {
    w.open("if (outdir)");
    w.line("char path[4096];");
    w.line("if (odlac_make_dir(outdir) != 0)");
    w.line("  status = 1;");
    for (size_t i = 0; i < nOut; ++i) {
      std::string p = e.N + "_OUTPUT_" + std::to_string(i) + "_";
      std::string k = std::to_string(i);
      w.open("");
      w.line("int n = snprintf(path, sizeof path, \"%s/output_" + std::to_string(i) +
             ".%s\", outdir, npy ? \"npy\" : \"pb\");");
      w.open("if (status == 0 && (n < 0 || (size_t)n >= sizeof path))");
      w.line("fprintf(stderr, \"%s: output folder path too long\\n\", outdir);");
      w.line("status = 1;");
      w.close();
      w.line("if (status != 0 ||");
      w.line("    (npy ? odlac_save_npy(path, " + p + "ONNX_TYPE, " + p + "RANK, out_dims[" + k +
             "], out[" + k + "], out_bytes[" + k + "])");
      w.line("         : odlac_save_tensor(path, " + p + "NAME, " + p + "ONNX_TYPE, " + p +
             "RANK, out_dims[" + k + "], out[" + k + "], out_bytes[" + k + "])) != 0)");
      w.line("  status = 1;");
      w.close();
    }
    w.close();
  }
  // Every failure after the first input is read comes here, so that what was loaded and
  // allocated is freed on every path (LeakSanitizer checks the driver in the sanitize build).
  w.line("if (0) {");
  w.line("fail:");
  w.line("  status = 1;");
  w.line("}");
  w.line(e.n + "_destroy(inst);");
  w.line("for (i = 0; i < " + std::to_string(nIn) + "; ++i)");
  w.line("  free(in[i].data);");
  w.line("for (i = 0; i < " + std::to_string(nOut) + "; ++i)");
  w.line("  free(out[i]);");
  w.line("return status;");
  w.close();
  return w.str();
}

} // namespace emit
} // namespace odlac
