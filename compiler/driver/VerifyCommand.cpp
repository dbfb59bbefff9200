#include "VerifyCommand.h"

#include "Calibration.h"
#include "Import.h"
#include "Options.h"
#include "OutputDir.h"
#include "RunCommand.h"
#include "Tensor.h"
#include "evaluate/Evaluate.h"
#include "ir/Printer.h"
#include "ops/OpDef.h"
#include "passes/Pipeline.h"
#include "support/Text.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace odlac {
namespace {

struct NamedTensor {
  std::string name;
  TensorType type;
  std::shared_ptr<const Buffer> data;
};

// ONNX Runtime's side: the model on the inputs, each output written as ref_<i>.pb.
constexpr const char *kOrtScript = R"(import sys
import onnx
import onnxruntime as ort
from onnx import numpy_helper
model, out, *paths = sys.argv[1:]
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = {}
for p in paths:
    t = onnx.TensorProto()
    with open(p, "rb") as f:
        t.ParseFromString(f.read())
    feeds[t.name] = numpy_helper.to_array(t)
for k, (o, v) in enumerate(zip(s.get_outputs(), s.run(None, feeds))):
    with open(f"{out}/ref_{k}.pb", "wb") as f:
        f.write(numpy_helper.from_array(v, o.name).SerializeToString())
)";

Expected<NamedTensor> readTensorFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  auto proto = std::make_shared<onnx::TensorProto>();
  if (!in || !proto->ParseFromString(bytes.str()))
    return Status::error(path + ": not a TensorProto file");
  auto d = decodeTensor(*proto, path.substr(0, path.find_last_of('/')), proto);
  if (!d)
    return Status::error(path + ": " + d.status().message());
  return NamedTensor{proto->name(), d->type, d->data};
}

Status writeTensorFile(const std::string &path, const NamedTensor &t) {
  onnx::TensorProto proto;
  for (int64_t d : t.type.dims)
    proto.add_dims(d);
  proto.set_data_type(dtypeInfo(t.type.dtype).onnxType);
  proto.set_name(t.name);
  proto.set_raw_data(t.data->as<char>(), t.type.byteSize());
  return writeFileAtomically(path, proto.SerializeAsString());
}

uint16_t toHalf(float f) { // round to nearest even; inputs stay in [-1, 1]
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xff, m = x & 0x7fffffu;
  if (e < 103)
    return static_cast<uint16_t>(sign);
  if (e < 113) { // subnormal half
    m |= 0x800000u;
    uint32_t shift = 126 - e, half = m >> shift, rest = m & ((1u << shift) - 1);
    if (rest > (1u << (shift - 1)) || (rest == (1u << (shift - 1)) && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = ((e - 112) << 10) | (m >> 13), rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

double fromHalf(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0    ? std::ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}

// Random values for an input: floats in [-1, 1), integers in [0, 4) (small enough to index
// any axis of 4 or more), booleans.
Expected<std::shared_ptr<const Buffer>> generate(const TensorType &t, std::mt19937_64 &rng) {
  std::vector<unsigned char> bytes(t.byteSize());
  std::uniform_real_distribution<float> f(-1.0f, 1.0f);
  std::uniform_int_distribution<int> i(0, 3);
  for (int64_t k = 0; k < t.numElements(); ++k) {
    unsigned char *p = bytes.data() + k * dtypeBytes(t.dtype);
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (t.dtype) {
    case DType::F32:
      put(f(rng));
      break;
    case DType::F64:
      put(static_cast<double>(f(rng)));
      break;
    case DType::F16:
      put(toHalf(f(rng)));
      break;
    case DType::BF16: {
      float v = f(rng);
      uint32_t x;
      std::memcpy(&x, &v, sizeof x);
      put(static_cast<uint16_t>(x >> 16));
      break;
    }
    case DType::Bool:
      put(static_cast<uint8_t>(i(rng) & 1));
      break;
    default:
      if (!isInteger(t.dtype))
        return Status::error(std::string("cannot generate ") + dtypeName(t.dtype) +
                             " inputs: give them with --inputs DIR");
      std::memset(p, 0, dtypeBytes(t.dtype));
      *p = static_cast<unsigned char>(i(rng)); // little-endian
    }
  }
  return Buffer::copyOf(bytes.data(), bytes.size());
}

// Element k as a double, for the numeric types; false for the others.
bool element(const NamedTensor &t, int64_t k, double &v) {
  const unsigned char *p = t.data->as<unsigned char>() + k * dtypeBytes(t.type.dtype);
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    v = static_cast<double>(x);
  };
  switch (t.type.dtype) {
  case DType::F32:
    get(float{});
    return true;
  case DType::F64:
    get(double{});
    return true;
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    v = fromHalf(h);
    return true;
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t x = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    v = f;
    return true;
  }
  case DType::I8:
    get(int8_t{});
    return true;
  case DType::U8:
  case DType::Bool:
    get(uint8_t{});
    return true;
  case DType::I16:
    get(int16_t{});
    return true;
  case DType::U16:
    get(uint16_t{});
    return true;
  case DType::I32:
    get(int32_t{});
    return true;
  case DType::U32:
    get(uint32_t{});
    return true;
  case DType::I64:
    get(int64_t{});
    return true;
  case DType::U64:
    get(uint64_t{});
    return true;
  default:
    return false;
  }
}

int64_t orderedBits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : i;
}

struct Comparison {
  bool ok = true, numeric = true;
  double maxAbs = 0, maxRel = 0;
  int64_t maxUlps = -1; // float32 only
  std::string why;      // a type or shape difference
};

Comparison compare(const NamedTensor &got, const NamedTensor &want, double atol, double rtol) {
  Comparison c;
  if (got.type != want.type) {
    c.ok = false;
    c.why = toString(got.type) + " where the reference has " + toString(want.type);
    return c;
  }
  if (got.type.dtype == DType::Str) { // const char * per element (Buffer::ofStrings)
    c.numeric = false;
    for (int64_t k = 0; k < got.type.numElements(); ++k)
      c.ok &= std::strcmp(got.data->as<const char *>()[k], want.data->as<const char *>()[k]) == 0;
    return c;
  }
  for (int64_t k = 0; k < got.type.numElements(); ++k) {
    double a, b;
    if (!element(got, k, a) || !element(want, k, b)) {
      c.numeric = false;
      c.ok = std::memcmp(got.data->data, want.data->data, got.type.byteSize()) == 0;
      return c;
    }
    if (std::isnan(a) || std::isnan(b)) {
      c.ok &= std::isnan(a) && std::isnan(b);
      continue;
    }
    double err = std::fabs(a - b), rel = b != 0 ? err / std::fabs(b) : (err ? INFINITY : 0);
    if (std::isinf(a) || std::isinf(b))
      err = rel = a == b ? 0 : INFINITY;
    c.maxAbs = std::max(c.maxAbs, err);
    c.maxRel = std::max(c.maxRel, rel);
    c.ok &= err <= atol + rtol * std::fabs(b);
    if (got.type.dtype == DType::F32)
      c.maxUlps = std::max<int64_t>(c.maxUlps, std::llabs(orderedBits(static_cast<float>(a)) -
                                                          orderedBits(static_cast<float>(b))));
  }
  return c;
}

// Runs the driver on the inputs; its outputs (with their names), in order.
Expected<std::vector<NamedTensor>>
runDriver(const std::string &exe, const std::vector<std::string> &inputs, const std::string &out) {
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  argv.insert(argv.end(), {"-o", out});
  int status = runChild(".", argv);
  if (status != 0)
    return Status::error(exe + " failed (above) with " +
                         (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                            : std::string("a signal")));
  std::vector<NamedTensor> outs;
  for (int i = 0;; ++i) {
    std::string p = out + "/output_" + std::to_string(i) + ".pb";
    if (access(p.c_str(), R_OK) != 0)
      break;
    auto t = readTensorFile(p);
    if (!t)
      return t.takeStatus();
    outs.push_back(std::move(*t));
  }
  return outs;
}

std::string number(double v) { return std::isinf(v) ? "inf" : fmt::format("{:.3g}", v); }

// The graph odlac generates code for (import and the pipeline again, in this process, with
// the same options); null with --quantize, whose calibration is not run again.
std::unique_ptr<Graph> optimizedGraph(const Options &opts) {
  auto g = importOnnxFile(opts.model, opts.import);
  if (!g || opts.quantize)
    return nullptr;
  PassContext ctx;
  ctx.target = &opts.target;
  ctx.leastMemory = opts.codegen.leastMemory;
  if (runPipeline(**g, opts.pipeline, ctx))
    return nullptr;
  return std::move(*g);
}

// The node computing `v`: its name, op and attributes, and its operands' types.
std::string describeNode(const Node &n) {
  std::string s = fmt::format("node '{}' ({})", n.name(), n.op().name);
  bool first = true;
  for (const auto &[attr, value] : n.attrs()) {
    s += fmt::format("{} {} = {}", first ? " with" : ",", attr, attrText(value));
    first = false;
  }
  for (const Value *in : n.inputs())
    if (in)
      s += "\n  operand '" + in->name() + "': " + toString(in->type());
  return s;
}

} // namespace

int verifyCommand(const std::vector<std::string> &args) {
  std::vector<std::string> options, rest;
  std::string model, against = "reference", inputsDir;
  bool bisect = false;
  double atol = 1e-4, rtol = 1e-3;
  uint64_t seed = 1;
  if (!splitAtModel(args, "verify", options, model, rest))
    return 1;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string &a = rest[i];
    auto value = [&](const char *flag) -> const std::string * {
      return a == flag && i + 1 < rest.size() ? &rest[++i] : nullptr;
    };
    try {
      if (const std::string *v = value("--against")) {
        against = *v;
        if (against != "reference" && against != "onnxruntime")
          return error("odlac verify: --against must be reference or onnxruntime, not '" + against +
                       "'");
      } else if (const std::string *v = value("--inputs")) {
        inputsDir = *v;
      } else if (const std::string *v = value("--atol")) {
        atol = std::stod(*v);
      } else if (const std::string *v = value("--rtol")) {
        rtol = std::stod(*v);
      } else if (const std::string *v = value("--seed")) {
        seed = std::stoull(*v);
      } else if (a == "--bisect") {
        bisect = true;
      } else {
        return error("odlac verify: unknown argument '" + a +
                     "' after the model (--against reference|onnxruntime, --inputs DIR, "
                     "--bisect, --atol X, --rtol Y, --seed N)");
      }
    } catch (const std::exception &) {
      return error("odlac verify: '" + rest[i] + "' is not a number for " + rest[i - 1]);
    }
  }
  if (!(atol >= 0) || !(rtol >= 0))
    return error("odlac verify: --atol and --rtol must be numbers >= 0");
  if (bisect && against != "reference")
    return error("odlac verify: --bisect compares with the reference backend (the values of "
                 "odlac's own graph): drop --against onnxruntime");
  std::vector<std::string> parse = options;
  parse.insert(parse.end(), {model, "--print-ir"}); // (no output folder needed to parse)
  auto opts = parseOptions(parse);
  if (!opts)
    return error("odlac verify: " + opts.status().message());
  auto graph = importOnnxFile(model, opts->import);
  if (!graph)
    return error(graph.status().message());

  // The inputs: DIR's first set, or generated; written as TensorProto files for the driver.
  const char *tmp = std::getenv("TMPDIR");
  std::string work = std::string(tmp && *tmp ? tmp : "/tmp") + "/odlac-verify-XXXXXX";
  if (!mkdtemp(work.data()))
    return error("odlac verify: cannot create a temporary folder: " + std::string(strerror(errno)));
  auto cleanup = [&](int status) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
    return status;
  };
  std::vector<std::shared_ptr<const Buffer>> inputs;
  if (!inputsDir.empty()) {
    auto sets = loadCalibrationSets(inputsDir, **graph);
    if (!sets)
      return cleanup(error("odlac verify: " + sets.status().message()));
    inputs = sets->front();
  } else {
    std::mt19937_64 rng(seed);
    for (const Value *in : (*graph)->inputs()) {
      auto b = generate(in->type(), rng);
      if (!b)
        return cleanup(error("odlac verify: input '" + in->name() + "': " + b.status().message()));
      inputs.push_back(*b);
    }
  }
  // The driver and ONNX Runtime read DIR's own files (strings, names as they are); generated
  // inputs are written as TensorProto files first.
  std::vector<std::string> inputPaths;
  const std::string set = inputsDir + "/test_data_set_0";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value *in = (*graph)->inputs()[i];
    const std::string file = "/input_" + std::to_string(i) + ".pb";
    if (!inputsDir.empty()) {
      inputPaths.push_back((access(set.c_str(), F_OK) == 0 ? set : inputsDir) + file);
      continue;
    }
    inputPaths.push_back(work + file);
    if (Status s = writeTensorFile(inputPaths.back(), {in->name(), in->type(), inputs[i]}))
      return cleanup(error(s.message()));
  }

  // The reference's outputs.
  std::vector<NamedTensor> want;
  if (against == "reference") {
    auto outs = executeGraph(**graph, inputs);
    if (!outs)
      return cleanup(
          error("odlac verify: the reference backend failed: " + outs.status().message()));
    for (size_t i = 0; i < outs->size(); ++i) {
      const Value *o = (*graph)->outputs()[i];
      want.push_back({o->name(), o->type(), (*outs)[i]});
    }
  } else {
    const char *py = std::getenv("ODLAC_PYTHON");
    std::vector<std::string> argv{py && *py ? py : "python3", "-c", kOrtScript, model, work};
    argv.insert(argv.end(), inputPaths.begin(), inputPaths.end());
    if (runChild(".", argv) != 0)
      return cleanup(error("odlac verify: ONNX Runtime did not run the model (above); it runs "
                           "in $ODLAC_PYTHON or python3, which needs the onnx and onnxruntime "
                           "packages"));
    for (size_t i = 0;; ++i) {
      std::string p = work + "/ref_" + std::to_string(i) + ".pb";
      if (access(p.c_str(), R_OK) != 0)
        break;
      auto t = readTensorFile(p);
      if (!t)
        return cleanup(error(t.status().message()));
      want.push_back(std::move(*t));
    }
  }

  auto exe = buildDriver(options, model);
  if (!exe)
    return cleanup(error("odlac verify: " + exe.status().message()));
  auto got = runDriver(*exe, inputPaths, work + "/out");
  if (!got)
    return cleanup(error("odlac verify: " + got.status().message()));
  if (got->size() != want.size())
    return cleanup(error(fmt::format("odlac verify: the build has {} outputs, the reference {}",
                                     got->size(), want.size())));
  std::printf("%s on %s against %s, %s inputs\n", model.c_str(), opts->target.backend.c_str(),
              against == "reference" ? "the reference backend" : "ONNX Runtime",
              inputsDir.empty() ? fmt::format("generated (seed {})", seed).c_str()
                                : inputsDir.c_str());
  std::printf("| output | type | max abs error | max rel error | max ulps | verdict |\n"
              "|---|---|---|---|---|---|\n");
  int bad = 0;
  for (size_t i = 0; i < got->size(); ++i) {
    Comparison c = compare((*got)[i], want[i], atol, rtol);
    bad += !c.ok;
    std::printf("| %s | %s | %s | %s | %s | %s |\n", printable(want[i].name).c_str(),
                toString((*got)[i].type).c_str(), c.numeric ? number(c.maxAbs).c_str() : "-",
                c.numeric ? number(c.maxRel).c_str() : "-",
                c.maxUlps >= 0 ? std::to_string(c.maxUlps).c_str() : "-",
                c.ok            ? "ok"
                : c.why.empty() ? "MISMATCH"
                                : ("MISMATCH: " + c.why).c_str());
  }
  std::printf("%s (atol %g, rtol %g)\n",
              bad ? fmt::format("{} of {} outputs differ", bad, got->size()).c_str()
                  : fmt::format("all {} outputs agree", got->size()).c_str(),
              atol, rtol);
  if (!bisect)
    return cleanup(bad ? 1 : 0);

  // Bisect: both builds with every node's result tapped, compared in the schedule's order.
  std::vector<std::string> tapped = options, reference;
  tapped.push_back("--tap-values");
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string &o = options[i];
    bool valued = takesNextArgument(o);
    for (const char *f : {"--backend", "--backend-manifest", "--link-backend", "--odla-profile"})
      if (o == f || o.rfind(std::string(f) + "=", 0) == 0) {
        i += valued;
        goto next;
      }
    reference.push_back(o);
    if (valued && i + 1 < options.size())
      reference.push_back(options[++i]);
  next:;
  }
  reference.insert(reference.end(), {"--backend", "reference", "--tap-values"});
  auto exeB = buildDriver(tapped, model), exeR = buildDriver(reference, model);
  if (!exeB || !exeR)
    return cleanup(
        error("odlac verify --bisect: " + (!exeB ? exeB.status() : exeR.status()).message()));
  auto tapsB = runDriver(*exeB, inputPaths, work + "/taps");
  auto tapsR = runDriver(*exeR, inputPaths, work + "/taps_reference");
  if (!tapsB || !tapsR)
    return cleanup(
        error("odlac verify --bisect: " + (!tapsB ? tapsB.status() : tapsR.status()).message()));
  std::map<std::string, const NamedTensor *> reference_, tapped_;
  for (const NamedTensor &t : *tapsR)
    reference_.emplace(t.name, &t);
  for (const NamedTensor &t : *tapsB)
    tapped_.emplace(t.name, &t);
  // The values in the order the nodes compute them (the tapped outputs' order, where the
  // graph cannot be built again here).
  std::vector<std::pair<std::string, const Node *>> order;
  std::unique_ptr<Graph> optimized = optimizedGraph(*opts);
  if (optimized) {
    for (const Node *n : optimized->nodes())
      for (const Value *v : n->outputs())
        if (v)
          order.push_back({v->name(), n});
  } else {
    for (const NamedTensor &t : *tapsB)
      order.push_back({t.name, nullptr});
  }
  for (const auto &[name, node] : order) {
    auto b = tapped_.find(name), r = reference_.find(name);
    if (b == tapped_.end() || r == reference_.end())
      continue; // a value one build does not compute (another layout's transposes)
    Comparison c = compare(*b->second, *r->second, atol, rtol);
    if (c.ok)
      continue;
    std::printf("bisect: the first value that differs from the reference backend's is '%s' "
                "(max abs error %s)%s\n",
                printable(name).c_str(), c.numeric ? number(c.maxAbs).c_str() : "-",
                c.why.empty() ? "" : (": " + c.why).c_str());
    if (node) {
      std::string text = describeNode(*node);
      for (size_t at = 0, nl; at <= text.size(); at = nl + 1) { // line by line, each printable
        nl = std::min(text.find('\n', at), text.size());
        std::printf("%s%s\n", at ? "" : "bisect: computed by ",
                    printable(text.substr(at, nl - at)).c_str());
      }
    }
    return cleanup(1);
  }
  std::printf("bisect: every intermediate value agrees with the reference backend's%s\n",
              bad ? "; the outputs differ" : "");
  return cleanup(bad ? 1 : 0);
}

} // namespace odlac
