// Codegen.h's entry points that write nothing: the checks a graph passes before any file is
// written, and resolveCodegen, which makes each choice the options leave open.
#include "Codegen.h"

#include "CWriter.h"
#include "ops/OpDef.h"
#include "support/Checked.h"

#include <algorithm>
#include <regex>
#include <set>

namespace odlac {

uint64_t weightBytes(const Graph &g) {
  // Each constant is within the size limit, but many of them (mapping one file again and
  // again) could still wrap a sum: it saturates at 2^63 - 1, beyond every limit.
  CheckedInt total = 0;
  for (const Value *c : g.constants())
    if (!c->uses().empty())
      total += static_cast<int64_t>(c->data()->size);
  return static_cast<uint64_t>(total.get().value_or(INT64_MAX));
}

std::optional<std::pair<size_t, size_t>> dimOfInputs(const SymbolicCalls &s, size_t dim) {
  for (size_t i = 0; i < s.inputDims.size(); ++i)
    for (size_t a = 0; a < s.inputDims[i].size(); ++a) {
      const auto &terms = s.inputDims[i][a].terms;
      if (terms.size() == 1 && terms[0].first == 1u << dim && terms[0].second == 1)
        return std::make_pair(i, a);
    }
  return std::nullopt;
}

uint64_t noHeapMemoryBytes(const CodegenFacts &facts) {
  return 63 + 64 + (facts.arenaBytes + 63) / 64 * 64 + (facts.structureBytes + 63) / 64 * 64;
}

// The element types of every value of `g` and its subgraphs.
static void collectTypes(const Graph &g, std::set<DType> &types) {
  for (const Value *v : g.inputs())
    types.insert(v->dtype());
  for (const Value *v : g.constants())
    types.insert(v->dtype());
  for (const Node *n : g.nodes()) {
    for (const Value *v : n->outputs())
      types.insert(v->dtype());
    for (const auto &[name, body] : n->subgraphs())
      collectTypes(*body, types);
  }
}

std::vector<std::string> referenceTypes(const Graph &g) {
  // The types the reference backend's ODLA_REFERENCE_WITH_<TYPE> names; a model with another
  // (the 8-, 4- and 2-bit extension types, strings) keeps every kernel.
  static const std::set<DType> kNamed = {
      DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,  DType::I16, DType::I32,
      DType::I64, DType::U8,  DType::U16, DType::U32,  DType::U64, DType::Bool};
  std::set<DType> types;
  collectTypes(g, types);
  if (!std::all_of(types.begin(), types.end(), [](DType t) { return kNamed.count(t); }))
    return {};
  std::vector<std::string> names;
  for (DType t : types)
    names.emplace_back(dtypeName(t));
  return names;
}

// C source without its comments and the contents of its string and character literals (the
// model's names live there: a name reading "odla_X(" is not a call).
static std::string codeOnly(const std::string &c) {
  std::string out;
  out.reserve(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.compare(i, 2, "/*") == 0) {
      size_t end = c.find("*/", i + 2);
      i = end == std::string::npos ? c.size() : end + 1;
      out += ' ';
    } else if (c.compare(i, 2, "//") == 0) {
      i = std::min(c.find('\n', i), c.size()) - 1;
    } else if (c[i] == '"' || c[i] == '\'') {
      const char quote = c[i];
      for (++i; i < c.size() && c[i] != quote; ++i)
        if (c[i] == '\\')
          ++i;
      out += ' ';
    } else {
      out += c[i];
    }
  }
  return out;
}

std::map<std::string, int> odlaCalls(const std::vector<GeneratedFile> &files,
                                     const std::string &name) {
  // An ODLA function's name is odla_ and a capital (odla_value, odla_size_t are types;
  // ODLA_SUCCESS a constant), and the generated C takes no ODLA function's address.
  static const std::regex kCall(R"(\bodla_[A-Z]\w*(?=\s*\())");
  std::map<std::string, int> calls;
  for (const GeneratedFile &f : files)
    if (f.name == name + ".c") {
      const std::string code = codeOnly(f.contents);
      for (std::sregex_iterator m(code.begin(), code.end(), kCall), end; m != end; ++m)
        ++calls[m->str()];
    }
  return calls;
}

CodegenConfig resolveCodegen(const Graph &g, const CodegenOptions &options,
                             const CodegenFacts &facts) {
  CodegenConfig config{options, facts};
  // A blob is read into the heap at run time: --no-heap and --weights-section keep C arrays.
  bool compiledIn = options.noHeap || !options.weightsSection.empty();
  if (options.weights == WeightsMode::Auto)
    config.options.weights =
        weightBytes(g) > options.binThreshold && !compiledIn ? WeightsMode::Bin : WeightsMode::C;
  return config;
}

static void checkCStringsIn(const Graph &g, Status &all) {
  auto check = [&](const std::string &text, const std::string &what) {
    size_t length = cStringLength(text);
    if (length > kMaxCStringLength)
      all.append(Status::error(what + " '" + text.substr(0, 32) + "...' needs " +
                               std::to_string(length) + " characters as a C string literal; " +
                               "C99 compilers accept " + std::to_string(kMaxCStringLength)));
  };
  for (const Value *v : g.inputs())
    check(v->name(), "graph input");
  for (const Value *v : g.constants()) {
    check(v->name(), "constant");
    if (v->dtype() == DType::Str) // its elements are string literals in NAME.c
      for (int64_t i = 0; i < v->type().numElements(); ++i)
        check(v->data()->as<const char *>()[i],
              "constant '" + v->name().substr(0, 32) + "'[" + std::to_string(i) + "]");
  }
  for (const Node *n : g.nodes()) {
    std::string node = "node '" + n->name().substr(0, 32) + "' (" + n->op().name + ")";
    for (const Value *v : n->outputs())
      check(v->name(), node + ": result");
    for (const auto &[name, value] : n->attrs()) {
      check(name, node + ": attribute name");
      if (const std::string *text = std::get_if<std::string>(&value))
        check(*text, node + ": attribute " + name.substr(0, 32));
      else if (const auto *texts = std::get_if<std::vector<std::string>>(&value))
        for (const std::string &t : *texts)
          check(t, node + ": attribute " + name.substr(0, 32));
    }
    for (const auto &[name, body] : n->subgraphs())
      checkCStringsIn(*body, all);
  }
}

Status checkCStrings(const Graph &g) {
  Status all;
  checkCStringsIn(g, all);
  return all;
}

Status checkExecMode(const Graph &g, ExecMode mode) {
  // Interpret mode runs each op as it is built: a region's ops cannot run before its loop or
  // branch decides. Load mode replays the calls that built the graph, If and Loop included.
  if (mode == ExecMode::Load)
    for (const Value *c : g.constants())
      if (c->dtype() == DType::Str && !c->uses().empty())
        return Status::error("constant '" + c->name() +
                             "' holds strings, whose elements are pointers: a stored executable "
                             "cannot hold them; use --exec-mode=compile or interpret");
  if (mode != ExecMode::Interpret)
    return Status::ok();
  for (const Node *n : g.nodes())
    if (n->hasSubgraphs())
      return Status::error("node '" + n->name() + "' (" + n->op().name +
                           "): control flow runs in compile and load mode only; use "
                           "--exec-mode=compile");
  return Status::ok();
}

} // namespace odlac
