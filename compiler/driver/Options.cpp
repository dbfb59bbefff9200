// Parses odlac's command line. Flags are listed once, in kFlags, which also prints --help.
#include "Options.h"

#include "CWriter.h"
#include "ObjectWriter.h"
#include "ir/Limits.h"
#include "support/Checked.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace odlac {
namespace {

struct Flag {
  const char *name;      // "--name"; a flag taking a value also accepts "--name=value"
  const char *valueName; // nullptr for switches; a value written right after a one-letter
                         // flag ("-O2") is accepted too
  const char *help;
  std::function<Status(Options &, const std::string &)> apply;
  // docs/cli.md's description (Markdown), where it says more than `help`: odlac
  // --help-markdown writes that page's table from these.
  const char *doc = nullptr;
};

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool isCIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_')
      return false;
  return true;
}

// "4096", "64K", "2M", "1G", "1T" (powers of 1024), at most 2^63 - 1.
Status parseBytes(const char *flag, const std::string &v, uint64_t &out) {
  size_t digits = v.find_first_not_of("0123456789");
  std::string num = v.substr(0, digits),
              suffix = digits == std::string::npos ? "" : v.substr(digits);
  static const std::map<std::string, int> kShift = {
      {"", 0}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}};
  auto shift = kShift.find(suffix);
  CheckedInt bytes = 0;
  for (char ch : num)
    bytes = bytes * 10 + (ch - '0');
  bytes *= int64_t{1} << (shift == kShift.end() ? 0 : shift->second);
  if (num.empty() || shift == kShift.end() || !bytes.valid() || bytes.value() == 0)
    return Status::error(std::string(flag) + " '" + v +
                         "': expected a positive number of bytes below 2^63, optionally with K, "
                         "M, G or T");
  out = static_cast<uint64_t>(bytes.value());
  return Status::ok();
}

// --dim NAME=MAX or NAME=MIN..MAX.
Status parseDim(const std::string &v, Options &o) {
  std::string bad = "--dim '" + v + "': expected NAME=MAX or NAME=MIN..MAX (e.g. T=512, N=1..8)";
  size_t eq = v.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return Status::error(bad);
  std::string name = v.substr(0, eq), range = v.substr(eq + 1);
  size_t dots = range.find("..");
  std::string lo = dots == std::string::npos ? "1" : range.substr(0, dots);
  std::string hi = dots == std::string::npos ? range : range.substr(dots + 2);
  auto number = [](const std::string &s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!number(lo) || !number(hi))
    return Status::error(bad);
  SymbolicDim d{name, "", std::stoll(lo), std::stoll(hi)};
  if (d.max < 1 || d.min > d.max)
    return Status::error("--dim '" + v + "': need 0 <= MIN <= MAX and MAX >= 1");
  for (const SymbolicDim &e : o.dims)
    if (e.name == name)
      return Status::error("--dim '" + v + "': " + name + " is given twice");
  o.dims.push_back(d);
  return Status::ok();
}

const std::vector<Flag> &flags() {
  static const std::vector<Flag> all = {
      {"-o", "DIR", "write the generated files into DIR (created if missing)",
       [](Options &o, const std::string &v) {
         o.outDir = v;
         return Status::ok();
       }},
      {"--name", "ID", "prefix of every generated symbol and file name (default: net)",
       [](Options &o, const std::string &v) {
         if (!isCIdentifier(v))
           return Status::error("--name '" + v + "' is not a C identifier");
         // The one-call function is named NAME itself; C reserves file-scope names with a
         // leading '_'.
         if (cIdentifierIsReserved(v) || v[0] == '_')
           return Status::error("--name '" + v +
                                "' is reserved in generated C (a C or C++ "
                                "keyword, a C library macro, an ODLA name or a leading '_')");
         o.codegen.name = v;
         return Status::ok();
       },
       "prefix of every generated symbol and file (default `net`); must be a C identifier, not "
       "starting with `_`, and not a name generated C cannot declare (a C or C++ keyword, a C "
       "library macro such as `EOF`, or an `odla`/`ODLA` name)"},
      {"--input-shape", "NAME:D0xD1x...",
       "pin the shape of input NAME (needed for symbolic dims), or name its symbolic dims for "
       "--dim (x:NxTx64; ? keeps the model's name); repeatable",
       [](Options &o, const std::string &v) { return parseInputShape(v, o.import); },
       "pins the shape of graph input NAME; needed when the model has symbolic dims (`N`, "
       "`batch`...) that `--dim` does not give a range; a dim may instead be a name, which makes "
       "it the symbolic dim `--dim` ranges (`tokens:NxT`, for exporters that name dims `s77`), "
       "or `?` (or -1), the model's own symbolic dim; repeatable; must agree with the model's "
       "fixed dims"},
      {"--sequence-length", "NAME=N",
       "the number of elements of sequence input NAME (or of the sequence an optional input "
       "holds): each becomes an input NAME.0 ... NAME.N-1; repeatable",
       [](Options &o, const std::string &v) { return parseSequenceLength(v, o.import); },
       "graph input NAME is a sequence of N tensors (or an optional holding one): ONNX's types do "
       "not give a sequence's length, and odlac resolves sequences at compile time, so each "
       "element becomes one input of the generated code, named `NAME.0` ... `NAME.N-1` (pin their "
       "shapes with `--input-shape NAME.0:...` when the model leaves them symbolic); N from 0 to "
       "4096; repeatable. A sequence graph output is flattened the same way, its length being what "
       "the model computes ([Sequences and optionals](#sequences-and-optionals))"},
      {"--optional-absent", "NAME",
       "compile optional input NAME as absent (without it, an optional input holds a value); "
       "repeatable",
       [](Options &o, const std::string &v) {
         if (v.empty())
           return Status::error("--optional-absent needs an input name");
         o.import.absentOptionals.insert(v);
         return Status::ok();
       },
       "compile optional graph input NAME as absent: the generated code has no input for it, and "
       "`OptionalHasElement` of it is false. Without it an optional input holds a value: the input "
       "NAME itself for a tensor, `NAME.0`... for a sequence; repeatable"},
      {"--custom-op-domain", "DOMAIN",
       "import every node of ONNX domain DOMAIN as a custom op: odla_CustomOp named by its "
       "op_type, run by a kernel the application registers (odla_ExtRegisterCustomOp); the "
       "model must declare its outputs' types (value_info); repeatable",
       [](Options &o, const std::string &v) {
         if (v.empty() || v == "ai.onnx")
           return Status::error("--custom-op-domain '" + v +
                                "': the default ONNX domain's "
                                "ops are odlac's own; name a custom domain such as com.example");
         o.import.customOpDomains.insert(v);
         return Status::ok();
       },
       "imports every node of ONNX domain DOMAIN as a custom op, run by a kernel the application "
       "registers ([generated-code.md](generated-code.md#custom-ops---custom-op-domain)); the "
       "model must declare the types of those nodes' outputs (`value_info` or graph outputs); "
       "repeatable. Without it a node of a domain other than ONNX's is an error"},
      {"--libonnx-timeout", "SECONDS",
       "time limit for each step odlac leaves to the system's libonnx (its checker, whose "
       "verdict is a warning; its version converter, for opsets before 7), each run in a child "
       "process (default 20); 0 runs neither",
       [](Options &o, const std::string &v) {
         if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
           return Status::error("--libonnx-timeout '" + v + "': expected a number of seconds");
         o.import.libonnxSeconds = std::stoi(v);
         return Status::ok();
       },
       "time limit for each step left to the system's libonnx, each in a child process: its "
       "checker (advice, below) and its version converter (opsets before 7). Default 20; 0 runs "
       "neither (an old-opset model is then imported at its own opset)"},
      {"--quantize", "int8",
       "static post-training quantization (docs/quantization.md): the products with constant "
       "weights (Conv, Gemm, MatMul) run in integers, weights int8 per output channel, data "
       "uint8 over the ranges the --calibration inputs give; prints each output's error "
       "against the float model",
       [](Options &o, const std::string &v) {
         if (v != "int8")
           return Status::error("--quantize takes int8, got '" + v + "'");
         o.quantize = true;
         return Status::ok();
       },
       "static post-training quantization ([quantization.md](quantization.md#--quantizeint8)): "
       "Conv, Gemm and MatMul with constant weights run in integers (weights int8 per output "
       "channel, data uint8 over the calibrated ranges); odlac prints, per output, the quantized "
       "model's error against the float model on the calibration inputs. Needs `--calibration`; "
       "not with `--dynamic-batch`"},
      {"--calibration", "DIR",
       "the calibration inputs of --quantize: DIR's test_data_set_* folders (ONNX's layout), "
       "or DIR itself, each holding input_0.pb ... (one TensorProto per graph input, of the "
       "input's type and shape as compiled)",
       [](Options &o, const std::string &v) {
         if (v.empty())
           return Status::error("--calibration needs a folder");
         o.calibrationDir = v;
         return Status::ok();
       },
       "the calibration inputs of `--quantize`: DIR's `test_data_set_*` folders, or DIR itself, "
       "each holding `input_0.pb` ... (one TensorProto per graph input, of its type and shape as "
       "compiled)"},
      {"--calibration-method", "METHOD",
       "how --quantize chooses a value's range from the calibration: minmax (default, the "
       "observed minimum and maximum), percentile[:P] (clipped to the P-th percentile of |x|, "
       "default 99.99) or entropy (TensorRT's KL-divergence threshold)",
       [](Options &o, const std::string &v) {
         if (v == "minmax") {
           o.calibrationMethod = Calibration::Method::MinMax;
         } else if (v == "entropy") {
           o.calibrationMethod = Calibration::Method::Entropy;
         } else if (v.rfind("percentile", 0) == 0) {
           o.calibrationMethod = Calibration::Method::Percentile;
           if (v.size() > 10) {
             std::string p = v.substr(10);
             char *end = nullptr;
             double value = p[0] == ':' ? std::strtod(p.c_str() + 1, &end) : 0;
             if (p[0] != ':' || p.size() == 1 || *end || !(value > 50 && value <= 100))
               return Status::error("--calibration-method '" + v +
                                    "': the percentile must be a number in (50, 100], as "
                                    "percentile:99.99");
             o.calibrationPercentile = value;
           }
         } else {
           return Status::error("--calibration-method must be minmax, percentile[:P] or "
                                "entropy, got '" +
                                v + "'");
         }
         return Status::ok();
       },
       "how `--quantize` chooses a value's range: the observed min and max (default), clipped at "
       "the P-th percentile of \\|x\\| (default 99.99), or TensorRT's entropy threshold; clipping "
       "applies only to values that only products read"},
      {"--dynamic-batch", nullptr,
       "the symbolic leading dim of every input is a batch that NAME_run_batch chooses at run "
       "time: odlac plans for --batch-size rows, checks that every op keeps rows apart, and "
       "the backend (feature runtime_shapes) runs the plan over slices of the rows",
       [](Options &o, const std::string &) {
         o.dynamicBatch = true;
         return Status::ok();
       },
       "the symbolic leading dim of every input is a batch chosen at run time: the code is planned "
       "for `--batch-size` rows and `NAME_run_batch` runs any number "
       "([generated-code.md](generated-code.md#dynamic-batch---dynamic-batch)). odlac refuses, "
       "naming the node and the rule, a graph whose ops mix rows (a reduction, softmax, concat or "
       "slice over axis 0, a product with the batch in B, an op without a batch rule, control "
       "flow) or that computes with its batch size (it imports the model again at one more row: "
       "constants folded from the batch must not change, except a row repeated for every row); "
       "every input needs a symbolic leading dim. Compile mode only; the backend's manifest must "
       "list `features runtime_shapes`"},
      {"--batch-size", "N",
       "with --dynamic-batch, the rows the code is planned for (default 1; larger runs "
       "ceil(n/N) passes, padding the last)",
       [](Options &o, const std::string &v) {
         if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos ||
             std::stoll(v) < 1)
           return Status::error("--batch-size '" + v + "': expected a positive number");
         o.batchSize = std::stoll(v);
         return Status::ok();
       },
       "with `--dynamic-batch`, the rows the code is planned for (default 1; a batch that is not a "
       "multiple runs a padded last pass)"},
      {"--dim", "NAME=MAX|NAME=MIN..MAX",
       "the symbolic dim NAME (a dim_param of the model, or a name in --input-shape) takes any "
       "size from MIN (default 1) to MAX at run time: NAME_run_shaped runs the sizes given; "
       "repeatable",
       [](Options &o, const std::string &v) { return parseDim(v, o); },
       "symbolic dim NAME (the model's `dim_param`, or a name `--input-shape` gives a dim, as in "
       "`tokens:NxT`) takes any size from MIN (default 1) to MAX at run time: the code is planned "
       "for MAX, and `NAME_run_shaped` runs the sizes it is given, checked against the range "
       "([generated-code.md](generated-code.md#symbolic-dims---dim)). odlac compiles the model at "
       "several sizes and refuses, naming the node, an integer of the code that is not a sum of "
       "products of the dims (a stride over a symbolic dim) or a constant computed from one. "
       "Compile mode only; not with `--dynamic-batch`, `--no-heap` or `--quantize`; repeatable"},
      {"--weights", "c|bin|obj",
       "weights as C arrays (default up to 1 MiB), a binary blob NAME.weights.bin (default "
       "above), or an object file NAME_weights.o for --target, written through LLVM",
       [](Options &o, const std::string &v) {
         if (v == "c")
           o.codegen.weights = WeightsMode::C;
         else if (v == "bin")
           o.codegen.weights = WeightsMode::Bin;
         else if (v == "obj")
           o.codegen.weights = WeightsMode::Obj;
         else
           return Status::error("--weights must be c, bin or obj, got '" + v + "'");
         return Status::ok();
       },
       "weights as C arrays in `NAME_weights.c`, a blob `NAME.weights.bin` with a loader, or an "
       "object file `NAME_weights.o` for `--target`, written through LLVM "
       "([generated-code.md](generated-code.md#weights)). Default: C arrays up to 1 MiB of "
       "weights, the blob above"},
      {"--target", "TRIPLE",
       "the machine the code is built for, e.g. aarch64-linux-gnu, armv7a-linux-gnueabihf, "
       "thumbv7em-none-eabi, riscv64-linux-gnu: the format of --weights=obj and the cross "
       "compiler --emit runs (default: the host)",
       [](Options &o, const std::string &v) {
         auto t = checkObjectTarget(v);
         if (!t)
           return t.takeStatus();
         o.triple = v;
         return Status::ok();
       },
       "the machine the code is for: `x86_64-linux-gnu`, `aarch64-linux-gnu`, "
       "`armv7a-linux-gnueabihf`, `thumbv7em-none-eabi`, `riscv64-linux-gnu`, ... (little-endian "
       "ELF targets). Sets the format of `--weights=obj` and the cross compiler `--emit` runs. "
       "Default: the host"},
      {"--weights-section", "NAME",
       "put the weights (--weights=c or obj) in linker section NAME instead of read-only data, "
       "e.g. for flash placement by a linker script",
       [](Options &o, const std::string &v) {
         if (v.empty() || v.size() > 64 ||
             v.find_first_not_of(
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._$") !=
                 std::string::npos)
           return Status::error("--weights-section '" + v +
                                "' is not a section name (letters, digits, '.', '_' and '$', "
                                "at most 64)");
         o.codegen.weightsSection = v;
         return Status::ok();
       },
       "put the weights (`--weights=c`: a GCC/Clang `section` attribute on each array; "
       "`--weights=obj`: the object's section) in linker section NAME instead of read-only data, "
       "e.g. for a linker script that places them in flash. NAME: letters, digits, `.`, `_` and "
       "`$`, at most 64"},
      {"--memory", "fast|least",
       "fast (default): the backend's fastest kernels; least: those that need the least "
       "scratch in the arena (direct convolutions, no packing; constant symmetric int8 "
       "weights read in place), for targets where memory is scarcer than time (the backend's "
       "feature least_memory)",
       [](Options &o, const std::string &v) {
         if (v != "fast" && v != "least")
           return Status::error("--memory must be fast or least, got '" + v + "'");
         o.codegen.leastMemory = v == "least";
         return Status::ok();
       },
       "`fast` (default): the backend's fastest kernels. `least`: those that need the least "
       "scratch in the activation arena, for targets where memory is scarcer than time (the "
       "reference backend's float32 convolutions become direct loops and its products of one row "
       "read B unpacked: the digits CNN's arena drops from 46,208 bytes to 6,144, its lower bound, "
       "and on a Cortex-M4 its instructions per inference from 1.18 M to 0.60 M: the direct loop "
       "keeps its sums in registers; int8 convolutions and MatMuls whose weights are constant, "
       "symmetric int8 read them in place, in flash, with no int16 copy in RAM: "
       "[quantization.md](quantization.md)). Sets the computation item "
       "`ODLA_EXT_ITEM_LEAST_MEMORY`; needs a backend with the feature `least_memory` and "
       "`--exec-mode=compile`"},
      {"--no-heap", nullptr,
       "NAME_create_in builds each instance in memory the caller gives (NAME_MEMORY_BYTES: the "
       "instance, its arena and the backend's structures); the backend allocates nothing else "
       "(needs the odla_ExtSetMemory extension; compile mode, weights compiled in)",
       [](Options &o, const std::string &) {
         o.codegen.noHeap = true;
         return Status::ok();
       },
       "`NAME_create_in(memory, bytes, &inst)` builds each instance in memory the caller gives, "
       "`NAME_MEMORY_BYTES` of it (the instance, its arena and every structure of the backend), "
       "and the backend allocates nothing else "
       "([generated-code.md](generated-code.md#no-heap---no-heap)). Needs a backend with the "
       "feature `static_memory` (the reference backend), `--exec-mode=compile` and weights "
       "compiled in (`c` or `obj`; the default becomes `c`)"},
      {"--emit", "c|obj|static|shared",
       "c: the C files (default); obj: compile them into NAME.o; static: libNAME.a; shared: "
       "libNAME.so linked to the --link-backend. Runs $CC, or the cross compiler of --target",
       [](Options &o, const std::string &v) {
         static const std::map<std::string, Options::Emit> kinds = {
             {"c", Options::Emit::C},
             {"obj", Options::Emit::Obj},
             {"static", Options::Emit::Static},
             {"shared", Options::Emit::Shared}};
         auto it = kinds.find(v);
         if (it == kinds.end())
           return Status::error("--emit must be c, obj, static or shared, got '" + v + "'");
         o.emit = it->second;
         return Status::ok();
       },
       "`c` (default): the C files. `obj`: `NAME.o`, one relocatable object with the model and its "
       "weights; `static`: `libNAME.a`; `shared`: `libNAME.so`, linked to `libodla_<link-backend>` "
       "(below)"},
      {"--link-backend", "NAME",
       "the backend libodla_NAME that --emit=shared links (default: the --backend)",
       [](Options &o, const std::string &v) {
         if (!isCIdentifier(v))
           return Status::error("--link-backend '" + v + "' is not a backend name");
         o.linkBackend = v;
         return Status::ok();
       },
       "the backend `libodla_NAME` that `--emit=shared` links (default: the `--backend`)"},
      {"--odla-prefix", "DIR",
       "where include/ODLA/ and lib/libodla_* are for --emit (default: odlac's install prefix)",
       [](Options &o, const std::string &v) {
         o.odlaPrefix = v;
         return Status::ok();
       },
       "where `include/ODLA/` and `lib/libodla_*` are for `--emit` (default: the prefix odlac is "
       "installed in, the folder above its `bin/`)"},
      {"-MD", nullptr,
       "also write a depfile for make and ninja (DIR/NAME.d unless -MF): the outputs depend on "
       "the model, its external data files and the backend manifest",
       [](Options &o, const std::string &) {
         o.writeDepfile = true;
         return Status::ok();
       },
       "also write a depfile (below): `DIR/NAME.d`, or `-MF`'s FILE"},
      {"-MF", "FILE", "write the depfile to FILE (implies -MD)",
       [](Options &o, const std::string &v) {
         o.writeDepfile = true;
         o.depfile = v;
         return Status::ok();
       },
       "write the depfile to FILE (implies `-MD`)"},
      {"--ram-budget", "BYTES",
       "fail unless the RAM an instance needs (activation arena, plus the weights when a blob "
       "loads them) fits in BYTES (suffixes K, M, G: powers of 1024)",
       [](Options &o, const std::string &v) { return parseBytes("--ram-budget", v, o.ramBudget); },
       "fail unless the model fits (below); `K`, `M`, `G`, `T` suffixes are powers of 1024"},
      {"--flash-budget", "BYTES",
       "fail unless the weights plus the estimated code size fit in BYTES",
       [](Options &o, const std::string &v) {
         return parseBytes("--flash-budget", v, o.flashBudget);
       },
       "fail unless the model fits (below); `K`, `M`, `G`, `T` suffixes are powers of 1024"},
      {"--size-limit", "BYTES",
       "the most bytes of one tensor, and of the weights plus the activation arena together "
       "(default 1T on 64-bit targets, at most 256T; 2G - 1 on 32-bit ones, the most there): "
       "a larger model is refused (docs/cli.md \"Limits\")",
       [](Options &o, const std::string &v) { return parseBytes("--size-limit", v, o.sizeLimit); },
       "the most bytes of one tensor, and of the weights plus the activation arena together "
       "([Limits](#limits)); default `1T` on 64-bit targets (at most `256T`), `2G` - 1 on 32-bit "
       "ones (also the most it can be there)"},
      {"--backend", "NAME",
       "the ODLA backend to generate code for, by its shipped manifest (default: reference)",
       [](Options &o, const std::string &v) {
         o.backend = v;
         o.backendGiven = true;
         return Status::ok();
       },
       "the ODLA backend the code is for, by its shipped manifest: `reference` (default), `dnnl`, "
       "or HALO's `halo-dnnl`, `halo-dnnl-interpreter`, `halo-eigen`, `halo-xnnpack` "
       "([backends.md](backends.md#backends--features)). The manifest sets the ops and limits "
       "checked at compile time, the layout, the value ids, the calls the code makes and, when the "
       "backend has no compile mode, the default `--exec-mode` (`--backend-manifest` and "
       "`--odla-profile` below)"},
      {"--backend-manifest", "FILE",
       "generate code for the backend that FILE's capability manifest describes",
       [](Options &o, const std::string &v) {
         o.backendManifest = v;
         o.backendGiven = true;
         return Status::ok();
       },
       "another backend's manifest instead of a shipped one (format: "
       "`runtime_stubs/reference/manifest.txt`)"},
      {"--odla-profile", "full|core",
       "core: call only ODLA 0.5's functions (extension ops decomposed), so the code links "
       "against any ODLA 0.5 backend (default: full, what the backend's manifest offers)",
       [](Options &o, const std::string &v) {
         if (v != "full" && v != "core")
           return Status::error("--odla-profile must be full or core, got '" + v + "'");
         o.coreProfile = v == "core";
         o.backendGiven = true;
         return Status::ok();
       },
       "`full` (default), or `core`: no extensions and no executables, the subset every ODLA 0.5 "
       "backend implements"},
      {"--exec-mode", "compile|interpret|load",
       "how the generated code runs the model: compile (build and compile once per instance; "
       "the default where the backend's manifest lists it, else interpret), interpret (each "
       "op runs as it is called), load (NAME_create loads an executable that NAME_store, in "
       "NAME_store.c, writes once); the backend's manifest must list the mode",
       [](Options &o, const std::string &v) {
         o.execModeGiven = true;
         if (v == "compile")
           o.codegen.execMode = ExecMode::Compile;
         else if (v == "interpret")
           o.codegen.execMode = ExecMode::Interpret;
         else if (v == "load")
           o.codegen.execMode = ExecMode::Load;
         else
           return Status::error("--exec-mode must be compile, interpret or load, got '" + v + "'");
         return Status::ok();
       },
       "how the generated code runs the model "
       "([generated-code.md](generated-code.md#execution-modes---exec-mode)): `compile` (default) "
       "builds and compiles the computation in `NAME_create`; `interpret` runs each op as "
       "`NAME_run` calls it; `load` makes `NAME_create` load an executable that `NAME_store` (in "
       "`NAME_store.c`) writes once. The backend's manifest must list the mode in its `modes` "
       "line; models with If/Loop/Scan run in `compile` and `load` mode (`interpret` is refused at "
       "compile time, naming the node)"},
      {"--emit-main", nullptr,
       "also write main.c, a driver that runs the model on ONNX TensorProto files",
       [](Options &o, const std::string &) {
         o.codegen.emitMain = true;
         return Status::ok();
       },
       "also write `main.c`, a test driver (below)"},
      {"-O", "LEVEL",
       "optimization level 0-3 (default 2): 1 cleans up and folds constants, 2 folds and "
       "fuses ops and cancels transposes, 3 is 2 (the data layout a backend's manifest asks "
       "for is followed at every level)",
       [](Options &o, const std::string &v) {
         if (v.size() != 1 || v[0] < '0' || v[0] > '3')
           return Status::error("-O takes a level from 0 to 3, got '" + v + "'");
         o.pipeline.level = v[0] - '0';
         return Status::ok();
       }},
      {"--disable-pass", "PASS", "skip a pass of the pipeline; repeatable",
       [](Options &o, const std::string &v) {
         o.pipeline.disabled.insert(v);
         return checkPassNames({v});
       }},
      {"--print-ir", nullptr, "print the final IR as text on stdout",
       [](Options &o, const std::string &) {
         o.printIr = true;
         return Status::ok();
       }},
      {"--print-ir-after", "PASS", "print the IR after a pass; repeatable",
       [](Options &o, const std::string &v) {
         o.pipeline.printAfter.insert(v);
         return checkPassNames({v});
       }},
      {"--print-memory-plan", nullptr,
       "print the activation arena plan: each buffer's offset, size and lifetime",
       [](Options &o, const std::string &) {
         o.printMemoryPlan = true;
         return Status::ok();
       }},
      {"--dump-graph", "FILE",
       "draw the optimized graph: FILE.dot (Graphviz's language) or FILE.svg (drawn by "
       "Graphviz's dot, Debian's graphviz): each node's op, name, attributes and constants, each "
       "value's type and place in the activation arena",
       [](Options &o, const std::string &v) {
         if (!endsWith(v, ".dot") && !endsWith(v, ".svg"))
           return Status::error("--dump-graph '" + v + "': name the file .dot or .svg");
         o.dumpGraph = v;
         return Status::ok();
       },
       "draw the optimized graph ([Pictures](#pictures)): `FILE.dot` writes Graphviz's source, "
       "`FILE.svg` the drawing (needs Graphviz's `dot`, Debian's `graphviz`)"},
      {"--dump-memory-plan", "FILE",
       "draw the activation arena plan as FILE.svg: a box per buffer, its offset up the arena, "
       "its lifetime across the nodes",
       [](Options &o, const std::string &v) {
         if (!endsWith(v, ".svg"))
           return Status::error("--dump-memory-plan '" + v + "': name the file .svg");
         o.dumpMemoryPlan = v;
         return Status::ok();
       },
       "draw the activation arena plan as `FILE.svg` ([Pictures](#pictures))"},
      {"--report", nullptr,
       "print a summary: op counts before and after optimization, FLOPs, weights, arena "
       "(NAME.json in DIR has the same facts)",
       [](Options &o, const std::string &) {
         o.report = true;
         return Status::ok();
       }},
      {"--print-ir-after-all", nullptr, "print the IR after every pass",
       [](Options &o, const std::string &) {
         o.pipeline.printAfter.insert("*");
         return Status::ok();
       }},
      {"--help", nullptr, "show this help",
       [](Options &o, const std::string &) {
         o.help = true;
         return Status::ok();
       }},
      {"--help-markdown", nullptr,
       "print the options as the Markdown table of docs/cli.md (which holds it as it is)",
       [](Options &o, const std::string &) {
         o.helpMarkdown = true;
         return Status::ok();
       }},
      {"--progress", nullptr,
       "show the compile's phases and a bar while large files are written (shown anyway on a "
       "terminal for models of 100 MiB of weights or more)",
       [](Options &o, const std::string &) {
         o.progress = true;
         return Status::ok();
       },
       "print each phase of the compile with the time so far (`odlac: [1.2 s] optimizing (-O2)`) "
       "and, while a file of 100 MiB or more is written, a bar on a terminal (elsewhere its "
       "quarters as lines); shown without the flag on a terminal when the model's weights reach "
       "100 MiB"},
      {"--quiet", nullptr, "print errors only: no warnings, notes or progress",
       [](Options &o, const std::string &) {
         o.quiet = true;
         return Status::ok();
       },
       "print errors only: no warnings, notes (such as `--quantize`'s error report) or progress"},
      {"--tap-values", nullptr,
       "every node's results become graph outputs too, after the model's own, named as their "
       "values (what odlac verify --bisect compares)",
       [](Options &o, const std::string &) {
         o.tapValues = true;
         return Status::ok();
       },
       "every node's results become graph outputs too, after the model's own, named as their "
       "values (what `odlac verify --bisect` compares)"},
      {"--list-ops", nullptr,
       "list every ONNX op with its opsets and how odlac imports or refuses it, as a Markdown "
       "table (docs/ops.md); with --backend, --backend-manifest or --odla-profile, what that "
       "backend offers for it",
       [](Options &o, const std::string &) {
         o.listOps = true;
         return Status::ok();
       },
       "list every ONNX op with its opsets and how odlac imports or refuses it, as the Markdown "
       "table of [ops.md](ops.md); with `--backend`, `--backend-manifest` or `--odla-profile`, a "
       "column of what that backend's manifest offers for it. Needs no model"},
      {"--version", nullptr, "show odlac's version",
       [](Options &o, const std::string &) {
         o.version = true;
         return Status::ok();
       }},
  };
  return all;
}

// Flags that change no generated file (paths, dependency output, budget checks); the
// banner leaves them out so that they do not change the output.
bool isBuildOnlyFlag(const std::string &name) {
  return name == "-MD" || name == "-MF" || name == "--odla-prefix" || name == "--ram-budget" ||
         name == "--flash-budget" || name == "--size-limit";
}

} // namespace

const char *helpText() {
  static const std::string text = [] {
    std::string t =
        "usage: odlac [options] model.onnx -o DIR\n"
        "       odlac run [options] model.onnx [inputs...] [--print] [--repeat N] [-o DIR "
        "[--npy]]\n"
        "       odlac verify [options] model.onnx [--against reference|onnxruntime] [--inputs "
        "DIR] [--bisect]\n"
        "       odlac export-triton [options] model.onnx -o REPO [--max-batch N] [--model-name "
        "NAME] [--instances K]\n\n"
        "Compiles an ONNX model to C99 that builds and runs it through the ODLA API.\n"
        "Link the output with an ODLA backend, e.g. cc DIR/*.c -lodla_reference -lm.\n\n"
        "options:\n";
    for (const Flag &f : flags()) {
      std::string head =
          std::string("  ") + f.name + (f.valueName ? std::string(" ") + f.valueName : "");
      head.resize(std::max<size_t>(head.size() + 2, 30), ' ');
      t += head + f.help + "\n";
    }
    return t;
  }();
  return text.c_str();
}

const char *helpMarkdown() {
  static const std::string text = [] {
    std::string t = "| option | meaning |\n|---|---|\n";
    for (const Flag &f : flags()) {
      std::string name = std::string(f.name) + (f.valueName ? std::string(" ") + f.valueName : "");
      for (size_t at = 0; (at = name.find('|', at)) != std::string::npos; at += 2)
        name.insert(at, "\\"); // a cell's '|' would end it
      t += "| `" + name + "` | " + (f.doc ? f.doc : f.help) + " |\n";
    }
    return t;
  }();
  return text.c_str();
}

bool takesNextArgument(const std::string &arg) {
  for (const Flag &f : flags())
    if (arg == f.name)
      return f.valueName != nullptr;
  return false;
}

Expected<Options> parseOptions(const std::vector<std::string> &args) {
  Options o;
  std::string flagsText; // the banner's record of the flags, without paths
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a.empty() || a[0] != '-' || a == "-") {
      if (!o.model.empty())
        return Status::error("more than one model given: '" + o.model + "' and '" + a + "'");
      o.model = a;
      continue;
    }
    const Flag *match = nullptr;
    std::string value;
    bool inlineValue = false;
    for (const Flag &f : flags()) {
      std::string name = f.name;
      if (a == name) {
        match = &f;
      } else if (f.valueName && a.rfind(name + "=", 0) == 0) {
        match = &f;
        value = a.substr(name.size() + 1);
        inlineValue = true;
      } else if (f.valueName && name.size() == 2 && a.size() > 2 && a.rfind(name, 0) == 0) {
        match = &f;
        value = a.substr(2);
        inlineValue = true;
      }
      if (match)
        break;
    }
    if (!match)
      return Status::error("unknown option '" + a + "' (see odlac --help)");
    if (match->valueName && !inlineValue) {
      if (i + 1 >= args.size())
        return Status::error(std::string(match->name) + " needs a value (" + match->valueName +
                             ")");
      value = args[++i];
    }
    if (Status s = match->apply(o, value))
      return s;
    std::string name = match->name;
    if (name == "-O")
      flagsText += (flagsText.empty() ? "" : " ") + name + value;
    else if (name == "--calibration") // a path: the banner names the folder only
      flagsText += (flagsText.empty() ? "" : " ") + name + "=" +
                   value.substr(value.find_last_of('/', value.size() - 2) + 1);
    else if (name != "-o" && name.rfind("--print-", 0) != 0 && name != "--report" &&
             !isBuildOnlyFlag(name))
      flagsText += (flagsText.empty() ? "" : " ") + name + (match->valueName ? "=" + value : "");
  }
  o.codegen.flags = flagsText;
  o.pipeline.printTo = &std::cout;
  if (o.help || o.helpMarkdown || o.version)
    return o;
  if (o.backendManifest.empty()) {
    auto t = shippedTarget(o.backend);
    if (!t)
      return t.takeStatus();
    o.target = *t;
  } else {
    std::ifstream in(o.backendManifest);
    std::stringstream text;
    if (!(in && text << in.rdbuf()))
      return Status::error("--backend-manifest: cannot read '" + o.backendManifest + "'");
    auto t = parseManifest(text.str(), o.backendManifest);
    if (!t)
      return t.takeStatus();
    o.target = *t;
  }
  if (o.coreProfile)
    o.target = coreProfile(o.target);
  // A backend that only interprets (HALO's Eigen and XNNPACK) gets interpret mode by default:
  // --backend is all its users need to say.
  const std::set<std::string> &modes = o.target.modes;
  if (!o.execModeGiven && !modes.empty() && !modes.count("compile"))
    o.codegen.execMode = modes.count("interpret") ? ExecMode::Interpret : ExecMode::Load;
  {
    static const char *const kModeNames[] = {"compile", "interpret", "load"};
    std::string mode = kModeNames[static_cast<int>(o.codegen.execMode)], listed;
    for (const std::string &m : o.target.modes)
      listed += (listed.empty() ? "" : " ") + m;
    if (!o.target.modes.empty() && !o.target.modes.count(mode))
      return Status::error("backend '" + o.target.backend + "' does not support --exec-mode=" +
                           mode + " (its manifest lists modes: " + listed + ")");
  }
  int pointerBits = targetPointerBits(o.triple);
  o.import.limits = SizeLimits::forPointerBits(pointerBits);
  if (o.sizeLimit) {
    if (o.sizeLimit > static_cast<uint64_t>(SizeLimits::hardMax(pointerBits)))
      return Status::error("--size-limit=" + std::to_string(o.sizeLimit) + " exceeds " +
                           bytesText(static_cast<uint64_t>(SizeLimits::hardMax(pointerBits))) +
                           ", the most a tensor can have on " + std::to_string(pointerBits) +
                           "-bit targets");
    o.import.limits.maxBytes = static_cast<int64_t>(o.sizeLimit);
    o.import.limits.fromFlag = true;
  }
  if (o.batchSize && !o.dynamicBatch)
    return Status::error(
        "--batch-size needs --dynamic-batch (pin fixed shapes with --input-shape)");
  if (o.dynamicBatch) {
    if (o.codegen.execMode != ExecMode::Compile)
      return Status::error("--dynamic-batch needs --exec-mode=compile: the batch is a property "
                           "of a compiled computation and its contexts");
    if (!o.target.features.count("runtime_shapes"))
      return Status::error("--dynamic-batch: backend '" + o.target.backend +
                           "' does not run batches other than the compiled one (its manifest "
                           "lacks the feature runtime_shapes)");
    o.import.batchSize = o.batchSize ? o.batchSize : 1;
  }
  if (!o.dims.empty()) {
    if (o.dynamicBatch)
      return Status::error("--dim and --dynamic-batch: give the batch a range with --dim instead "
                           "(e.g. --dim batch=1..8)");
    if (o.codegen.execMode != ExecMode::Compile)
      return Status::error("--dim needs --exec-mode=compile: the code builds a computation for "
                           "the dims of each run");
    if (o.codegen.noHeap)
      return Status::error("--dim is not supported with --no-heap: the code builds a "
                           "computation for the dims of each run, in the heap");
    if (o.quantize)
      return Status::error("--quantize calibrates at the compiled shapes; --dim is not "
                           "supported with it (pin the dims with --input-shape)");
    for (SymbolicDim &d : o.dims)
      o.import.dimValues[d.name] = d.max;
  }
  if (o.listOps)
    return o;
  if (o.model.empty())
    return Status::error("no model given (usage: odlac [options] model.onnx -o DIR)");
  if (o.outDir.empty() && !o.printIr && !o.printMemoryPlan && !o.report &&
      o.pipeline.printAfter.empty() && o.dumpGraph.empty() && o.dumpMemoryPlan.empty())
    return Status::error("no output folder given: add -o DIR");
  if (!o.codegen.weightsSection.empty() && o.codegen.weights == WeightsMode::Bin)
    return Status::error("--weights-section needs --weights=c or --weights=obj");
  if (o.codegen.leastMemory) {
    if (o.codegen.execMode != ExecMode::Compile)
      return Status::error("--memory=least needs --exec-mode=compile");
    if (!o.target.features.count("least_memory"))
      return Status::error("--memory=least: backend '" + o.target.backend +
                           "' has no kernels chosen for memory (its manifest lacks the feature "
                           "least_memory)");
  }
  if (o.codegen.noHeap) {
    if (o.codegen.execMode != ExecMode::Compile)
      return Status::error("--no-heap needs --exec-mode=compile");
    if (o.codegen.weights == WeightsMode::Bin)
      return Status::error("--no-heap needs the weights compiled in (--weights=c or obj): "
                           "--weights=bin reads them into the heap");
    if (!o.target.features.count("static_memory"))
      return Status::error("--no-heap: backend '" + o.target.backend +
                           "' does not allocate everything from memory the caller gives (its "
                           "manifest lacks the feature static_memory)");
  }
  if (o.linkBackend.empty())
    o.linkBackend = o.backend;
  if (o.quantize && o.dynamicBatch)
    return Status::error("--quantize calibrates at the compiled shapes; --dynamic-batch is not "
                         "supported with it (pin the batch with --input-shape)");
  if (o.quantize != !o.calibrationDir.empty())
    return Status::error(o.quantize ? "--quantize=int8 needs --calibration=DIR (its inputs)"
                                    : "--calibration needs --quantize=int8");
  if (o.outDir.empty() && (o.emit != Options::Emit::C || o.writeDepfile))
    return Status::error("--emit and -MD write files: add -o DIR");
  return o;
}

} // namespace odlac
