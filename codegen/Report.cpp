// Builds the compile report from the optimized graph.
#include "Report.h"

#include "Codegen.h"
#include "ops/Activation.h"
#include "ops/InferUtil.h"
#include "support/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace odlac {

OpCounts countOps(const Graph &g) {
  OpCounts counts;
  for (const Node *n : g.nodes())
    ++counts[n->op().name];
  return counts;
}

// Counted as the op's row says (OpDef::flops). Counts saturate at 2^63 - 1 (each factor is
// below 2^48, a product of two may not be).
static uint64_t nodeFlops(const Node &n) {
  const Value *out = n.output(0);
  int64_t outs = out->type().numElements();
  auto saturated = [](CheckedInt v) { return static_cast<uint64_t>(v.get().value_or(INT64_MAX)); };
  FlopRule rule = n.op().flops;
  CheckedInt epilogue = 0;
  if (rule == FlopRule::FusedConv || rule == FlopRule::FusedGemm)
    epilogue = (n.input(3) ? outs : 0) + (activationOf(n).id != Activation::None ? outs : 0);
  switch (rule) {
  case FlopRule::Conv:
  case FlopRule::FusedConv: {
    // (C / group) * kernel volume: the kernel's size over the output channels, its first
    // dim (OIS) or, channels-last, its last (SIO).
    const Dims &w = n.input(1)->dims();
    int64_t m = isChannelsLast(n) ? w.back() : w[0];
    int64_t perOut = m ? n.input(1)->type().numElements() / m : 0; // no output channels
    return saturated(CheckedInt(2) * outs * perOut + epilogue);
  }
  case FlopRule::MatrixProduct:
  case FlopRule::FusedGemm: {
    const Dims &a = n.input(0)->dims();
    bool transA = n.hasAttr("transA") && n.i("transA");
    int64_t k = transA ? a[a.size() - 2] : a.back();
    return saturated(CheckedInt(2) * outs * k + epilogue);
  }
  case FlopRule::ByFusionClass:
    break;
  }
  switch (n.op().fusion) {
  case FusionClass::Injective:
    return 0;
  case FusionClass::Reduction:
    return static_cast<uint64_t>(n.input(0)->type().numElements());
  default:
    return static_cast<uint64_t>(outs);
  }
}

uint64_t estimateFlops(const Graph &g) {
  CheckedInt total = 0;
  for (const Node *n : g.nodes())
    total += static_cast<int64_t>(nodeFlops(*n));
  return static_cast<uint64_t>(total.get().value_or(INT64_MAX));
}

uint64_t arenaLowerBound(const Graph &g) {
  uint64_t bound = 0;
  for (const Node *n : g.nodes()) {
    std::set<const Value *> live;
    for (const Value *v : n->inputs())
      if (v && !v->isConstant())
        live.insert(v);
    live.insert(n->outputs().begin(), n->outputs().end());
    uint64_t bytes = 0;
    for (const Value *v : live)
      bytes += v->type().byteSize();
    bound = std::max(bound, bytes);
  }
  return bound;
}

std::string MemoryFigure::text() const {
  std::string r = std::to_string(bytes) + " bytes (";
  for (size_t i = 0; i < parts.size(); ++i)
    r += (i ? " + " : "") + parts[i].first + " " + std::to_string(parts[i].second);
  return r + (notCounted.empty() ? "" : "; not counted: " + notCounted) + ")";
}

// The called functions the table lacks (a table older than the code odlac generates).
static std::string notInTable(const ReportFacts &f) {
  std::string r;
  for (const std::string &fn : f.footprint->unknown)
    r += (r.empty() ? "the code of " : ", ") + fn;
  return r.empty() ? r : r + " (not in the footprint table: rerun scripts/backend_footprint.py)";
}

static std::string withoutTable(const ReportFacts &f) {
  return "no footprint table for " + (f.target.empty() ? "the host" : f.target) + " and the " +
         f.backend + " backend (odlac has the reference backend's on thumbv7em-none-eabi)";
}

MemoryFigure ramFigure(const Graph &g, const ReportFacts &f) {
  MemoryFigure m;
  // --no-heap states all of an instance's memory; otherwise the arena is what odlac knows.
  if (f.memoryBytes)
    m.parts.emplace_back("--no-heap memory", f.memoryBytes);
  else
    m.parts.emplace_back("activation arena", f.arenaBytes);
  if (!f.memoryBytes && f.weightsBlob)
    m.parts.emplace_back("weights blob", weightBytes(g));
  if (f.footprint) {
    m.parts.emplace_back("backend static data", f.footprint->staticRam);
    if (f.footprint->stack)
      m.parts.emplace_back("stack", *f.footprint->stack);
    else
      m.notCounted = "the stack (a call tree recurses)";
    if (!f.memoryBytes)
      m.notCounted += std::string(m.notCounted.empty() ? "" : ", ") + "the backend's structures "
                                                                      "(--no-heap states them)";
  } else {
    m.notCounted = "the stack and the backend's static data: " + withoutTable(f);
  }
  for (const auto &p : m.parts)
    m.bytes += p.second;
  return m;
}

// The generated code's size without a table, estimated from the node count. The constants
// bound what arm-none-eabi-gcc -Os -mcpu=cortex-m4 -mthumb makes of NAME.c (text + data) for
// the models in models/: mlp 3 nodes 1135 bytes, digits 8 nodes 1901, cnn 14 nodes 3798.
static uint64_t nodeCodeBytes(const Graph &g) {
  constexpr uint64_t kFixedBytes = 512, kBytesPerNode = 256;
  return kFixedBytes + kBytesPerNode * g.numNodes();
}

MemoryFigure flashFigure(const Graph &g, const ReportFacts &f) {
  MemoryFigure m;
  if (!f.weightsBlob)
    m.parts.emplace_back("weights", weightBytes(g));
  if (f.footprint) {
    m.parts.emplace_back("generated code", f.footprint->codeFlash);
    m.parts.emplace_back("backend", f.footprint->backendFlash);
    m.parts.emplace_back("C library", f.footprint->libraryFlash);
    m.notCounted = notInTable(f);
  } else {
    m.parts.emplace_back("generated code (512 + 256 per node)", nodeCodeBytes(g));
    m.notCounted = "the backend library: " + withoutTable(f);
  }
  for (const auto &p : m.parts)
    m.bytes += p.second;
  return m;
}

// The planned arena over the bound, or 0 when the bound is 0.
static double arenaRatio(const Graph &g, const ReportFacts &f) {
  uint64_t bound = arenaLowerBound(g);
  return bound ? static_cast<double>(f.arenaBytes) / static_cast<double>(bound) : 0.0;
}

// A JSON string for any bytes: always valid UTF-8 and valid JSON (RFC 8259). `"` and `\`
// escaped, characters that are not showable (controls, formatting characters; support/Text.h)
// as \uXXXX, and each byte of invalid UTF-8 as U+FFFD, so that json.loads and strict readers
// accept the report of any model.
static std::string jsonString(const std::string &s) {
  std::string r = "\"";
  for (size_t pos = 0; pos < s.size();) {
    Utf8Char c = decodeUtf8(s, pos);
    if (c.codePoint == '"' || c.codePoint == '\\') {
      r += '\\';
      r += s[pos];
    } else if (c.codePoint < 0) {
      r += "\\ufffd";
    } else if (!isShowable(c.codePoint)) {
      fmt::format_to(std::back_inserter(r), "\\u{:04x}", static_cast<unsigned>(c.codePoint));
    } else {
      r.append(s, pos, c.length);
    }
    pos += c.length;
  }
  return r + "\"";
}

static std::string countsJson(const OpCounts &c) {
  std::string r = "{";
  for (const auto &[op, n] : c)
    r += (r.size() > 1 ? ", " : "") + jsonString(op) + ": " + std::to_string(n);
  return r + "}";
}

std::string reportJson(const Graph &g, const ReportFacts &f) {
  const ModelInfo &info = g.info();
  OpCounts after = countOps(g);
  std::string r = "{\n";
  r += "  \"name\": " + jsonString(f.name) + ",\n";
  r += "  \"model\": " + jsonString(info.fileName) + ",\n";
  std::string producer = info.producerName;
  if (!info.producerVersion.empty())
    producer += " " + info.producerVersion;
  r += "  \"producer\": " + jsonString(producer) + ",\n";
  r += "  \"backend\": " + jsonString(f.backend) + ",\n";
  r += "  \"opt_level\": " + std::to_string(f.optLevel) + ",\n";
  r += "  \"flops\": " + std::to_string(estimateFlops(g)) + ",\n";
  r += "  \"weights_bytes\": " + std::to_string(weightBytes(g)) + ",\n";
  r += "  \"arena_bytes\": " + std::to_string(f.arenaBytes) + ",\n";
  // NAME_run's tensors in its parameters' order (the Python API binds them by this).
  for (const auto &[key, values] :
       {std::pair("inputs", &g.inputs()), std::pair("outputs", &g.outputs())}) {
    r += fmt::format("  \"{}\": [", key);
    for (size_t i = 0; i < values->size(); ++i) {
      const TensorType &t = (*values)[i]->type();
      r += fmt::format("{}{{\"name\": {}, \"type\": \"{}\", \"onnx_type\": {}, \"shape\": {}}}",
                       i ? ", " : "", jsonString((*values)[i]->name()), dtypeName(t.dtype),
                       dtypeInfo(t.dtype).onnxType, dimsToString(t.dims));
    }
    r += "],\n";
  }
  if (f.batchRows) // NAME_run_batch runs any rows; the shapes above hold these
    r += "  \"dynamic_batch_rows\": " + std::to_string(f.batchRows) + ",\n";
  if (f.memoryBytes)
    r += "  \"no_heap_memory_bytes\": " + std::to_string(f.memoryBytes) + ",\n";
  r += "  \"arena_lower_bound_bytes\": " + std::to_string(arenaLowerBound(g)) + ",\n";
  r += "  \"target\": " + jsonString(f.target) + ",\n";
  r += "  \"odla_calls\": " + countsJson(f.calls) + ",\n";
  for (const auto &[key, m] : {std::pair("ram", ramFigure(g, f)), {"flash", flashFigure(g, f)}}) {
    r += fmt::format("  \"{}_bytes\": {},\n  \"{}\": {{", key, m.bytes, key);
    for (size_t i = 0; i < m.parts.size(); ++i)
      r +=
          (i ? ", " : "") + jsonString(m.parts[i].first) + ": " + std::to_string(m.parts[i].second);
    r += "},\n  \"" + std::string(key) + "_not_counted\": " + jsonString(m.notCounted) + ",\n";
  }
  if (f.footprint)
    r += "  \"footprint\": {\"compiler\": " + jsonString(f.footprint->compiler) +
         ", \"deepest_call\": " + jsonString(f.footprint->stackEntry) +
         ", \"generated_code_stack\": " + std::to_string(f.footprint->codeStack) + "},\n";
  r += fmt::format("  \"arena_over_bound\": {:.4f},\n", arenaRatio(g, f));
  r += "  \"nodes_before\": " + std::to_string([&] {
         int n = 0;
         for (const auto &kv : f.opsBefore)
           n += kv.second;
         return n;
       }()) +
       ",\n";
  r += "  \"nodes_after\": " + std::to_string(g.numNodes()) + ",\n";
  r += "  \"ops_before\": " + countsJson(f.opsBefore) + ",\n";
  r += "  \"ops_after\": " + countsJson(after) + "\n";
  r += "}\n";
  return r;
}

std::string reportText(const Graph &g, const ReportFacts &f) {
  OpCounts after = countOps(g);
  std::set<std::string> ops;
  for (const auto &kv : f.opsBefore)
    ops.insert(kv.first);
  for (const auto &kv : after)
    ops.insert(kv.first);
  // The file and backend names are anyone's text.
  std::string r =
      fmt::format("{}: {:.3f} GFLOP, weights {:.2f} MB, arena {:.2f} MB (-O{}, {})\n",
                  printable(g.info().fileName), estimateFlops(g) / 1e9, weightBytes(g) / 1e6,
                  f.arenaBytes / 1e6, f.optLevel, printable(f.backend));
  r += fmt::format("  arena lower bound {:.2f} MB (the most one op reads and writes); arena / "
                   "bound {:.3f}\n",
                   arenaLowerBound(g) / 1e6, arenaRatio(g, f));
  if (f.memoryBytes)
    r += fmt::format("  --no-heap memory per instance {} bytes (instance, arena and the backend's "
                     "structures)\n",
                     f.memoryBytes);
  MemoryFigure ram = ramFigure(g, f), flash = flashFigure(g, f);
  r += "  RAM per instance " + ram.text() + "\n";
  r += "  flash " + flash.text() + "\n";
  if (f.footprint)
    r += fmt::format("  (measured for {} with {}; the deepest call {}, the generated code's own "
                     "stack {})\n",
                     f.target, f.footprint->compiler, f.footprint->stackEntry,
                     f.footprint->codeStack);
  r += "  op                        before   after\n";
  for (const std::string &op : ops) {
    auto b = f.opsBefore.find(op);
    auto a = after.find(op);
    r += fmt::format("  {:<24} {:7} {:7}\n", op, b == f.opsBefore.end() ? 0 : b->second,
                     a == after.end() ? 0 : a->second);
  }
  return r;
}

} // namespace odlac
