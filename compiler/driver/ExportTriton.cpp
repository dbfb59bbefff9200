#include "ExportTriton.h"

#include "Build.h"
#include "odlac_version.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace odlac {

// Embedded from python/odlac (EmbedText.cmake): the adapter and the module it loads.
extern const char *const kTritonModelSource;
extern const char *const kPythonPackageSource;

namespace {

// Triton's data_type for the element types odlac's Python Model carries (NumPy's); none for
// the others (bfloat16, the 8/4/2-bit types, strings).
const char *tritonType(DType t) {
  switch (t) {
  case DType::F32:
    return "TYPE_FP32";
  case DType::F64:
    return "TYPE_FP64";
  case DType::F16:
    return "TYPE_FP16";
  case DType::I8:
    return "TYPE_INT8";
  case DType::I16:
    return "TYPE_INT16";
  case DType::I32:
    return "TYPE_INT32";
  case DType::I64:
    return "TYPE_INT64";
  case DType::U8:
    return "TYPE_UINT8";
  case DType::U16:
    return "TYPE_UINT16";
  case DType::U32:
    return "TYPE_UINT32";
  case DType::U64:
    return "TYPE_UINT64";
  case DType::Bool:
    return "TYPE_BOOL";
  default:
    return nullptr;
  }
}

// A protobuf text-format string: printable ASCII as it is, quotes and backslashes escaped,
// every other byte as an octal escape (so a model's names cannot end the string or the line).
std::string pbString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      r += std::string("\\") + char(c);
    else if (c >= 0x20 && c < 0x7f)
      r += char(c);
    else
      r += fmt::format("\\{:03o}", c);
  }
  return r + "\"";
}

// Triton's model names are folder names: letters, digits, '_', '-' and '.', not led by '.'.
bool tritonName(const std::string &s) {
  if (s.empty() || s[0] == '.' || s.size() > 200)
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
}

// The model file's name without .onnx, with what Triton does not take replaced by '_'.
std::string nameFromModel(const std::string &model) {
  std::string base = model.substr(model.find_last_of('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0)
    base.resize(base.size() - 5);
  for (char &c : base)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
      c = '_';
  if (base.size() > 200)
    base.resize(200);
  return tritonName(base) ? base : "model";
}

Expected<int64_t> positive(const std::string &flag, const std::string &v, int64_t most) {
  errno = 0;
  char *end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < 1 || n > most)
    return Status::error("export-triton: " + flag + " takes a whole number from 1 to " +
                         std::to_string(most) + ", not '" + v + "'");
  return n;
}

} // namespace

Expected<Options> parseExportTriton(const std::vector<std::string> &args) {
  TritonExport t;
  std::vector<std::string> rest;
  std::string maxBatch, instances, model;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    // export-triton's own options, as "--flag VALUE" or "--flag=VALUE" ("-oDIR" too).
    std::string *own = nullptr;
    std::string flag;
    for (auto [name, to] : {std::pair{"-o", &t.repo},
                            {"--max-batch", &maxBatch},
                            {"--model-name", &t.name},
                            {"--instances", &instances}}) {
      std::string n = name;
      if (a == n || a.rfind(n + "=", 0) == 0 || (n == "-o" && a.size() > 2 && a[1] == 'o')) {
        own = to, flag = n;
        break;
      }
    }
    if (own) {
      if (a == flag) {
        if (i + 1 == args.size())
          return Status::error("export-triton: " + flag + " needs a value");
        *own = args[++i];
      } else {
        *own = a.substr(flag.size() + (a[flag.size()] == '=' ? 1 : 0));
      }
      continue;
    }
    for (const char *refused : {"--emit", "--name", "--weights", "--dim", "--no-heap", "--target",
                                "--emit-main", "--link-backend", "-MD", "-MF"})
      if (a == refused || a.rfind(std::string(refused) + "=", 0) == 0)
        return Status::error(
            std::string("export-triton: ") + refused +
            " is not an option of export-triton, which builds the model as the shared library "
            "its Python adapter loads (--emit=shared --weights=obj --name net) for this host; "
            "docs/serving.md");
    rest.push_back(a);
    if (takesNextArgument(a) && i + 1 < args.size())
      rest.push_back(args[++i]);
    else if (model.empty() && (a.empty() || a[0] != '-' || a == "-"))
      model = a;
  }
  if (t.repo.empty())
    return Status::error("export-triton: no model repository given (-o REPO)");
  if (!maxBatch.empty()) {
    auto n = positive("--max-batch", maxBatch, INT32_MAX);
    if (!n)
      return n.takeStatus();
    t.maxBatch = *n;
    rest.push_back("--dynamic-batch");
  }
  if (!instances.empty()) {
    auto n = positive("--instances", instances, 256);
    if (!n)
      return n.takeStatus();
    t.instances = static_cast<int>(*n);
  }
  if (model.empty())
    return Status::error("export-triton: no model given (see odlac --help)");
  if (t.name.empty())
    t.name = nameFromModel(model);
  else if (!tritonName(t.name))
    return Status::error("export-triton: --model-name '" + t.name +
                         "' is not a Triton model name (letters, digits, '_', '-' and '.', not "
                         "starting with '.', at most 200)");
  rest.insert(rest.end(), {"--emit=shared", "--weights=obj", "--name", "net", "-o",
                           t.repo + "/" + t.name + "/1"});
  auto opts = parseOptions(rest);
  if (!opts)
    return opts.takeStatus();
  if (opts->dynamicBatch && !t.maxBatch)
    return Status::error("export-triton: --dynamic-batch without --max-batch: give Triton's "
                         "largest batch with --max-batch N (it implies --dynamic-batch)");
  opts->triton = t;
  return opts;
}

Expected<std::vector<GeneratedFile>> tritonVersionFiles(const Graph &g, const Options &opts) {
  const int64_t rows = opts.import.batchSize;
  for (const auto &[kind, values] : {std::pair("input", &g.inputs()), {"output", &g.outputs()}})
    for (const Value *v : *values) {
      if (!tritonType(v->dtype()))
        return Status::error(fmt::format("export-triton: {} '{}' is {}, which the Python "
                                         "adapter's NumPy arrays do not hold",
                                         kind, v->name(), dtypeName(v->dtype())));
      if (opts.triton.maxBatch && (v->dims().empty() || v->dims()[0] != rows))
        return Status::error(fmt::format("export-triton --max-batch: {} '{}' has no leading "
                                         "batch dim of {} rows (its shape is {})",
                                         kind, v->name(), rows, dimsToString(v->dims())));
    }
  const std::string lib =
      odlaPrefix(opts) + "/" ODLAC_INSTALL_LIBDIR "/libodla_" + opts.linkBackend + ".so";
  std::ifstream in(lib, std::ios::binary);
  if (!in)
    return Status::error("export-triton: cannot read " + lib +
                         " (the backend library the repository carries): " + std::strerror(errno) +
                         "; pass --odla-prefix");
  std::ostringstream library;
  library << in.rdbuf();
  return std::vector<GeneratedFile>{{"model.py", kTritonModelSource},
                                    {"odlac.py", kPythonPackageSource},
                                    {"libodla_" + opts.linkBackend + ".so", library.str()}};
}

std::string tritonConfig(const Graph &g, const Options &opts) {
  const TritonExport &t = opts.triton;
  std::string c = "# Written by odlac " ODLAC_VERSION_STRING
                  " export-triton: Triton's Python backend runs 1/model.py (docs/serving.md).\n";
  c += "name: " + pbString(t.name) + "\nbackend: \"python\"\n";
  c += fmt::format("max_batch_size: {}\n", t.maxBatch);
  if (t.maxBatch)
    c += "dynamic_batching { }\n";
  for (const auto &[kind, values] : {std::pair("input", &g.inputs()), {"output", &g.outputs()}}) {
    c += std::string(kind) + " [\n";
    for (size_t i = 0; i < values->size(); ++i) {
      const Value *v = (*values)[i];
      Dims dims(v->dims().begin() + (t.maxBatch ? 1 : 0), v->dims().end());
      std::string list;
      for (int64_t d : dims)
        list += (list.empty() ? "" : ", ") + std::to_string(d);
      // Triton has no scalar dims: one element, reshaped to none for the model.
      std::string shape =
          dims.empty() ? "dims: [ 1 ] reshape: { shape: [ ] }" : "dims: [ " + list + " ]";
      c += fmt::format("  {{ name: {} data_type: {} {} }}{}\n", pbString(v->name()),
                       tritonType(v->dtype()), shape, i + 1 < values->size() ? "," : "");
    }
    c += "]\n";
  }
  c += fmt::format("instance_group [ {{ count: {} kind: KIND_CPU }} ]\n", t.instances);
  return c;
}

} // namespace odlac
