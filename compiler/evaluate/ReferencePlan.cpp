// Builds a graph on the linked reference backend to read its memory plan.
#include "evaluate/ReferencePlan.h"

#include "evaluate/DirectSink.h"
#include "lower/Lowering.h"
#include "support/Text.h"

#include <fmt/format.h>

#include <ODLA/odla_ext.h>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace odlac {

// The planner places each buffer at the lowest offset where it fits, so the arena is at most
// the sum of every buffer (results, 64-byte aligned): when that sum fits, no offset the
// planner computes can wrap. Each result is within the size limit; this bounds their number.
static Status checkPlannable(const Graph &g) {
  CheckedInt total = 0;
  std::function<void(const Graph &)> add = [&](const Graph &graph) {
    for (const Node *n : graph.nodes()) {
      for (const Value *out : n->outputs())
        total += (CheckedInt(static_cast<int64_t>(out->type().byteSize())) + 63) / 64 * 64;
      for (const auto &[name, body] : n->subgraphs())
        add(*body);
    }
  };
  add(g);
  if (!total.valid())
    return Status::error("the graph's results together exceed 2^63 bytes; odlac cannot plan "
                         "an arena for them");
  return Status::ok();
}

// Records `g` on `comp` (the current computation) as the generated code does, with the
// --memory=least item set first where it sets it. --no-heap code also sets
// ODLA_EXT_ITEM_STATIC_IDS, which this does not (the lowering's ids die with its calls): each
// id is copied here, so the structures measured are an upper bound of that code's.
static void build(const Graph &g, const Target &target, bool leastMemory, odla_computation comp,
                  lower::DirectSink &sink) {
  odla_bool yes = 1;
  if (leastMemory)
    odla_SetComputationItem(comp, ODLA_EXT_ITEM_LEAST_MEMORY, (odla_item_value)&yes);
  lowerGraph(
      g, sink,
      [](const Value &c, size_t) {
        return lower::Data{c.data()->data, ""};
      },
      target);
}

Expected<MemoryPlan> referenceMemoryPlan(const Graph &g, const Target &target, bool leastMemory) {
  if (Status s = checkPlannable(g))
    return s;
  odla_computation comp = nullptr;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend cannot create a computation");
  lower::DirectSink sink;
  build(g, target, leastMemory, comp, sink);
  MemoryPlan plan;
  odla_size_t bytes = 0;
  odla_int32 nodes = 0;
  odla_status s = odla_ExtGetArenaBytes(comp, &bytes);
  if (s == ODLA_SUCCESS)
    s = odla_ExtGetNumNodes(comp, &nodes);
  if (!sink.firstError().empty() || s != ODLA_SUCCESS) {
    odla_DestroyComputation(comp);
    // A builder may refuse what only it checks (odla_ExtRegexFullMatch's pattern syntax).
    return Status::error(
        "the reference backend rejects the lowered graph: " +
        (sink.firstError().empty() ? "status " + std::to_string(s) : sink.firstError()));
  }
  plan.arenaBytes = bytes;
  plan.numNodes = nodes;
  for (odla_value v : sink.values()) {
    odla_size_t offset = 0, size = 0;
    odla_int32 first = 0, last = 0;
    odla_value_id id = nullptr;
    if (!v || odla_ExtGetValuePlacement(v, &offset, &size, &first, &last) != ODLA_SUCCESS)
      continue;
    odla_GetValueId(v, &id);
    plan.entries.push_back({id ? (const char *)id : "?", offset, size, first, last});
  }
  for (odla_int32 n = 0; n < nodes; ++n) {
    const odla_char *op = nullptr;
    odla_size_t offset = 0, size = 0;
    odla_value first = nullptr;
    odla_value_id id = nullptr;
    if (odla_ExtGetNodeInfo(comp, n, &op, &first, &offset, &size) != ODLA_SUCCESS || size == 0)
      continue;
    if (first)
      odla_GetValueId(first, &id);
    plan.entries.push_back(
        {std::string(op) + " scratch (" + (id ? (const char *)id : "") + ")", offset, size, n, n});
  }
  odla_DestroyComputation(comp);
  std::sort(plan.entries.begin(), plan.entries.end(), [](const auto &a, const auto &b) {
    return a.offset != b.offset ? a.offset < b.offset : a.firstNode < b.firstNode;
  });
  return plan;
}

Expected<uint64_t> referenceArenaBytes(const Graph &g, const Target &target, bool leastMemory) {
  auto plan = referenceMemoryPlan(g, target, leastMemory);
  if (!plan)
    return plan.takeStatus();
  return plan->arenaBytes;
}

// The calls of one --no-heap instance in a region of `bytes`: its peak, or 0 where the region
// is too small (a builder or binding then fails), or an error.
static Expected<uint64_t> structurePeak(const Graph &g, const Target &target, bool leastMemory,
                                        uint64_t arenaBytes, size_t bytes) {
  std::vector<unsigned char> region(bytes);
  // The instance's arena, the scratch of compiling (ODLA_EXT_ITEM_COMPILE_SCRATCH) as in the code.
  std::vector<unsigned char> arenaRoom(static_cast<size_t>(arenaBytes));
  odla_ext_arena scratch = {arenaRoom.data(), arenaRoom.size()};
  if (odla_ExtSetMemory(region.data(), bytes) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend refuses a memory region");
  odla_computation comp = nullptr;
  odla_executable exec = nullptr;
  odla_context ctx = nullptr;
  bool full = false;
  odla_status s = odla_CreateComputation(&comp);
  if (s == ODLA_SUCCESS) {
    lower::DirectSink sink;
    odla_SetComputationItem(comp, ODLA_EXT_ITEM_COMPILE_SCRATCH, (odla_item_value)&scratch);
    build(g, target, leastMemory, comp, sink);
    full = !sink.firstError().empty(); // the plan built: only the region can be too small
    if (!full)
      s = odla_CompileComputation(comp, nullptr, &exec);
    if (!full && s == ODLA_SUCCESS)
      s = odla_CreateContext(&ctx);
    // The run function binds every port by its id (the tensor's name) before each run.
    static const float dummy = 0;
    for (odla_value v : sink.values()) {
      odla_value_id id = nullptr;
      if (full || s != ODLA_SUCCESS || !v || odla_GetValueId(v, &id) != ODLA_SUCCESS || !id)
        continue;
      std::string name = (const char *)id;
      for (const Value *in : g.inputs())
        if (in->name() == name && s == ODLA_SUCCESS)
          s = odla_BindToArgument(v, &dummy, ctx);
      for (const Value *out : g.outputs())
        if (out->name() == name && s == ODLA_SUCCESS)
          s = odla_BindToOutput(v, const_cast<float *>(&dummy), ctx);
    }
  }
  odla_size_t inUse = 0, peak = 0;
  odla_ExtGetMemoryUse(region.data(), &inUse, &peak);
  if (ctx)
    odla_DestroyContext(ctx);
  if (exec)
    odla_DestroyExecutable(exec);
  if (comp)
    odla_DestroyComputation(comp);
  odla_ExtSetMemory(nullptr, 0);
  odla_ExtReleaseMemory(region.data());
  if (s == ODLA_MEM_ERROR || full)
    return uint64_t{0};
  if (s != ODLA_SUCCESS)
    return Status::error("internal: measuring the reference backend's structures: status " +
                         std::to_string(s));
  return static_cast<uint64_t>(peak);
}

Expected<uint64_t> referenceStructureBytes(const Graph &g, const Target &target, bool leastMemory,
                                           uint64_t arenaBytes) {
  for (size_t bytes = size_t{1} << 20; bytes <= (size_t{1} << 36); bytes *= 4) {
    auto peak = structurePeak(g, target, leastMemory, arenaBytes, bytes);
    if (!peak || *peak)
      return peak;
  }
  return Status::error("the reference backend's structures for this graph exceed 64 GiB");
}

std::string printMemoryPlan(const MemoryPlan &plan) {
  constexpr int kBar = 60;
  int nodes = std::max(plan.numNodes, 1);
  std::string out =
      fmt::format("memory plan: arena {} bytes, {} buffers over {} nodes (bar: node 0 .. {})\n",
                  plan.arenaBytes, plan.entries.size(), plan.numNodes, plan.numNodes - 1);
  out += fmt::format("{:>12} {:>11}  {:<{}}  value\n", "offset", "bytes", "lifetime", kBar);
  for (const MemoryPlanEntry &e : plan.entries) {
    std::string bar(kBar, '.');
    int from = e.firstNode * kBar / nodes, to = e.lastNode * kBar / nodes;
    for (int i = from; i <= to && i < kBar; ++i)
      bar[i] = '#';
    // A value's name is the model's text.
    out += fmt::format("{:12} {:11}  {}  {}\n", e.offset, e.bytes, bar, printable(e.name));
  }
  return out;
}

} // namespace odlac
