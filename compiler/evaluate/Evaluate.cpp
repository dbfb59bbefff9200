// Evaluates constant subgraphs on the linked reference backend.
#include "evaluate/Evaluate.h"

#include "evaluate/DirectSink.h"
#include "ir/Limits.h"
#include "lower/Lowering.h"
#include "ops/Ops.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace odlac {
namespace {

bool collect(const Value &v, std::set<const Node *> &seen, std::vector<const Node *> &order,
             std::string *why = nullptr);

bool holdsLoop(const Graph &g) {
  for (const Node *n : g.nodes()) {
    if (n->is(ops::Loop))
      return true;
    for (const auto &[name, body] : n->subgraphs())
      if (holdsLoop(*body))
        return true;
  }
  return false;
}

// Running a node at compile time must end, and soon: a Loop runs only when its trip count is
// computable from constants and at most kMaxCompileTimeIterations, and no body holds a loop
// of its own (whose trip count would be data of the outer iteration). Otherwise the node's
// results are values known at run time, as if it read a graph input.
bool boundedAtCompileTime(const Node &n, std::string *why) {
  std::string what =
      std::string(n.op().name) + " '" + (n.name().empty() ? n.output(0)->name() : n.name()) + "'";
  for (const auto &[name, body] : n.subgraphs())
    if (holdsLoop(*body)) {
      if (why)
        *why = what + ", whose body holds a loop (odlac runs no nested loop at compile time)";
      return false;
    }
  if (!n.is(ops::Loop))
    return true;
  const Value &trip = *n.input(0);
  std::set<const Node *> seen;
  std::vector<const Node *> order;
  auto count = collect(trip, seen, order)
                   ? evaluateValue(trip, kMaxCompileTimeBytes)
                   : Expected<std::shared_ptr<const Buffer>>(Status::error("not computable"));
  if (count && *(*count)->as<int64_t>() <= kMaxCompileTimeIterations)
    return true;
  if (why)
    *why = what + ", whose trip count is " +
           (count ? std::to_string(*(*count)->as<int64_t>()) + ", more than the " +
                        std::to_string(kMaxCompileTimeIterations) +
                        " iterations odlac runs at compile time"
                  : std::string("known only at run time"));
  return false;
}

// Collects the nodes `v` depends on, inputs before users; false if a graph input, an
// external node (a custom op, whose kernel only the application has), a string result or a
// loop too long to run at compile time is reached, with the reason in *why.
bool collect(const Value &v, std::set<const Node *> &seen, std::vector<const Node *> &order,
             std::string *why) {
  if (v.isConstant())
    return true;
  const Node *n = v.producer();
  if (!n || n->op().has(kExternal)) {
    if (why)
      *why = !n ? "a graph input"
                : "the custom op '" + (n->name().empty() ? v.name() : n->name()) + "'";
    return false;
  }
  if (!seen.count(n) && n->hasSubgraphs() && !boundedAtCompileTime(*n, why))
    return false;
  for (const Value *out : n->outputs())
    if (out->dtype() == DType::Str) {
      // A string result's bytes live in the backend context that computed it (its element
      // pointers die with it): string results stay node results (odla_ext_string.h).
      if (why)
        *why = "the string result '" + out->name() + "'";
      return false;
    }
  if (seen.count(n))
    return true;
  seen.insert(n);
  for (const Value *in : n->inputs())
    if (in && !collect(*in, seen, order, why))
      return false;
  order.push_back(n);
  return true;
}

} // namespace

bool isComputableFromConstants(const Value &v) {
  std::set<const Node *> seen;
  std::vector<const Node *> order;
  return collect(v, seen, order);
}

std::string notConstantBecause(const Value &v) {
  std::set<const Node *> seen;
  std::vector<const Node *> order;
  std::string why;
  collect(v, seen, order, &why);
  return why;
}

Expected<std::shared_ptr<const Buffer>> evaluateValue(const Value &v, int64_t maxBytes) {
  if (v.isConstant())
    return v.data();
  std::set<const Node *> seen;
  std::vector<const Node *> order;
  std::string why;
  if (!collect(v, seen, order, &why))
    return Status::error("value '" + v.name() + "' depends on " + why);
  CheckedInt computed = 0; // every result is below 2^48 bytes; their number is what grows
  for (const Node *n : order)
    for (const Value *out : n->outputs())
      computed += static_cast<int64_t>(out->type().byteSize());
  if (!computed.valid() || computed.value() > maxBytes)
    return Status::error("computing '" + v.name() + "' at compile time takes " +
                         (computed.valid() ? bytesText(static_cast<uint64_t>(computed.value()))
                                           : std::string("more than 2^63 bytes")) +
                         " of intermediate results, more than the " +
                         bytesText(static_cast<uint64_t>(maxBytes)) +
                         " odlac computes at compile time for one value");
  odla_computation comp = nullptr;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend cannot create a computation");
  lower::DirectSink sink;
  std::map<const Value *, lower::Val> vals;
  for (const Node *n : order)
    for (const Value *in : n->inputs())
      if (in && in->isConstant() && !vals.count(in))
        vals[in] = sink.CreateConstant({odlaType(in->dtype()), shapeArg(in->dims())},
                                       {in->data()->data, ""}, {in->name()});
  for (const Node *n : order) {
    LowerCtx ctx(sink, *n, vals);
    n->op().lower(ctx);
  }
  sink.SetValueAsOutput(vals.at(&v));
  auto bytes =
      std::make_shared<std::vector<unsigned char>>(std::max<uint64_t>(1, v.type().byteSize()));
  odla_context ctx = nullptr;
  odla_status s = odla_CreateContext(&ctx);
  if (s == ODLA_SUCCESS)
    s = odla_BindToOutputById((odla_value_id)v.name().c_str(), bytes->data(), ctx);
  if (s == ODLA_SUCCESS && sink.firstError().empty())
    s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr);
  if (ctx)
    odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
  if (!sink.firstError().empty())
    return Status::error("cannot evaluate '" + v.name() + "': " + sink.firstError());
  if (s != ODLA_SUCCESS)
    return Status::error("cannot evaluate '" + v.name() + "': the reference backend returned " +
                         "status " + std::to_string(s));
  auto buf = std::make_shared<Buffer>();
  buf->data = bytes->data();
  buf->size = v.type().byteSize();
  buf->owner = bytes;
  return std::shared_ptr<const Buffer>(buf);
}

Expected<std::vector<std::shared_ptr<const Buffer>>>
executeGraph(const Graph &g, const std::vector<std::shared_ptr<const Buffer>> &inputs) {
  if (inputs.size() != g.inputs().size())
    return Status::error("the graph has " + std::to_string(g.inputs().size()) + " inputs, got " +
                         std::to_string(inputs.size()));
  odla_computation comp = nullptr;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend cannot create a computation");
  lower::DirectSink sink;
  lowerGraph(g, sink, [](const Value &c, size_t) { return lower::Data{c.data()->data, ""}; });
  std::vector<std::shared_ptr<const Buffer>> outputs;
  std::vector<std::shared_ptr<std::vector<unsigned char>>> storage;
  odla_context ctx = nullptr;
  odla_status s = odla_CreateContext(&ctx);
  for (size_t i = 0; s == ODLA_SUCCESS && i < inputs.size(); ++i) {
    if (inputs[i]->size != g.inputs()[i]->type().byteSize())
      s = ODLA_INVALID_PARAM;
    else
      s = odla_BindToArgumentById((odla_value_id)g.inputs()[i]->name().c_str(), inputs[i]->data,
                                  ctx);
  }
  for (const Value *out : g.outputs()) {
    storage.push_back(std::make_shared<std::vector<unsigned char>>(
        std::max<uint64_t>(1, out->type().byteSize())));
    if (s == ODLA_SUCCESS)
      s = odla_BindToOutputById((odla_value_id)out->name().c_str(), storage.back()->data(), ctx);
  }
  if (s == ODLA_SUCCESS && sink.firstError().empty())
    s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr);
  // A string result's elements point into the context's strings, which die with it: they are
  // copied first.
  std::vector<std::shared_ptr<const Buffer>> strings(storage.size());
  for (size_t i = 0; s == ODLA_SUCCESS && i < storage.size(); ++i)
    if (g.outputs()[i]->dtype() == DType::Str) {
      const auto *p = reinterpret_cast<const char *const *>(storage[i]->data());
      strings[i] =
          Buffer::ofStrings(std::vector<std::string>(p, p + g.outputs()[i]->type().numElements()));
    }
  if (ctx)
    odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
  if (!sink.firstError().empty())
    return Status::error(sink.firstError());
  if (s != ODLA_SUCCESS)
    return Status::error("the reference backend returned status " + std::to_string(s));
  for (size_t i = 0; i < storage.size(); ++i) {
    if (strings[i]) {
      outputs.push_back(strings[i]);
      continue;
    }
    auto buf = std::make_shared<Buffer>();
    buf->data = storage[i]->data();
    buf->size = g.outputs()[i]->type().byteSize();
    buf->owner = storage[i];
    outputs.push_back(buf);
  }
  return outputs;
}

} // namespace odlac
