// The --dynamic-batch analysis (BatchRows.h): whether each node keeps batch rows apart, by
// the batch rule of its op's row (OpDef::batch).
#include "passes/BatchRows.h"

#include "ops/OpDef.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace odlac {
namespace {

// One node whose operands include batched values; `batched[i]` says which.
struct Site {
  const Node &node;
  const std::vector<bool> &batched;
  int64_t batch;

  int rank(int i) const { return static_cast<int>(node.input(i)->dims().size()); }
  int outRank() const { return static_cast<int>(node.output(0)->dims().size()); }
  bool in(int i) const { return i < node.numInputs() && batched[i]; }
  int64_t attr(const char *name, int64_t otherwise) const {
    return node.hasAttr(name) ? node.i(name) : otherwise;
  }
};

// A rule returns why the node breaks it, or "" when the node keeps rows apart.
using RuleFn = std::string (*)(const Site &);

// Operands other than those in `mayCarryRows` must not carry rows: they are weights or
// parameters every row shares.
std::string onlyRowsIn(const Site &s, const std::set<int> &mayCarryRows) {
  for (int i = 0; i < s.node.numInputs(); ++i)
    if (s.in(i) && !mayCarryRows.count(i))
      return "operand " + str(i) + " carries batch rows, but this op shares it across rows";
  return "";
}

// An axis attribute (negative counts from the end) must not be the batch axis 0.
std::string axisNotBatch(const Site &s, const char *name, int rank) {
  if (!s.node.hasAttr(name))
    return "";
  int64_t a = s.node.i(name);
  if (a == 0 || a == -rank)
    return std::string("its ") + name + " is the batch axis 0, which mixes rows";
  return "";
}

// Broadcasting operands: a batched one has the result's rank (its axis 0 is the result's);
// one without rows broadcasts over axis 0 (a lower rank or an extent of 1 there).
std::string broadcastRows(const Site &s, int first = 0) {
  for (int i = first; i < s.node.numInputs(); ++i) {
    const Value *v = s.node.input(i);
    if (!v)
      continue;
    if (s.batched[i] && s.rank(i) != s.outRank())
      return "operand " + str(i) + " carries batch rows but has rank " + str(s.rank(i)) +
             ", not the result's " + str(s.outRank()) + ": broadcasting moves its batch axis";
    if (!s.batched[i] && s.rank(i) == s.outRank() && s.rank(i) > 0 && v->dims()[0] != 1)
      return "operand " + str(i) + " has " + str(v->dims()[0]) +
             " rows that do not come from the batch (a constant of the compiled batch? "
             "plan for --batch-size=1): each slice of rows would reuse them";
  }
  return axisNotBatch(s, "axis", s.outRank());
}

// Rows of operand 0 only (convolution, pooling, normalization over other axes).
std::string rowsOfFirst(const Site &s) {
  if (!s.in(0))
    return "operand 0 (the data) does not carry the rows";
  if (s.rank(0) != s.outRank())
    return "its result's rank differs from its input's";
  std::string why = onlyRowsIn(s, {0});
  return why.empty() ? axisNotBatch(s, "axis", s.rank(0)) : why;
}

// Rows of operand 0 into a result of another rank (Reshape, ArgMax without keepdims); the
// result's leading dim is checked to stay the batch.
std::string rowsAlongAxis(const Site &s) {
  if (!s.in(0))
    return "operand 0 (the data) does not carry the rows";
  std::string why = onlyRowsIn(s, {0});
  return why.empty() ? axisNotBatch(s, "axis", s.rank(0)) : why;
}

// The fused convolution also adds a residual of the result's shape.
std::string fusedConvRows(const Site &s) {
  std::string why = onlyRowsIn(s, {0, 3});
  return !why.empty() ? why
         : !s.in(0)   ? "operand 0 (the data) does not carry the rows"
                      : broadcastRows(s, 3);
}

std::string reduceRows(const Site &s) {
  std::string why = onlyRowsIn(s, {0});
  if (!why.empty())
    return why;
  if (!s.node.hasAttr("axes") || s.node.ints("axes").empty())
    return "it reduces over every axis, the batch axis 0 included";
  for (int64_t a : s.node.ints("axes"))
    if (a == 0 || a == -s.rank(0))
      return "it reduces over the batch axis 0, which mixes rows";
  return "";
}

std::string gemmRows(const Site &s) {
  if (!s.in(0))
    return "operand B carries the rows: they would be the product's columns";
  if (s.attr("transA", 0))
    return "transA is set: the rows of A would be the product's inner dim";
  std::string why = onlyRowsIn(s, {0, 2, 3});
  return why.empty() ? broadcastRows(s, 2) : why;
}

std::string matMulRows(const Site &s) {
  if (!s.in(0))
    return "operand B carries the rows: they would be the product's inner dim or columns";
  if (s.in(1) && (s.rank(0) < 3 || s.rank(1) != s.rank(0)))
    return "both operands carry rows: only a batched product of equal ranks (3 or more) keeps "
           "them apart";
  return "";
}

std::string concatRows(const Site &s) {
  if (s.attr("axis", 0) == 0 || s.attr("axis", 0) == -s.outRank())
    return "it concatenates along the batch axis 0";
  return broadcastRows(s);
}

std::string transposeRows(const Site &s) {
  const auto &perm = s.node.ints("perm");
  if (perm.empty() || perm[0] != 0)
    return "its perm moves the batch axis 0";
  return onlyRowsIn(s, {0});
}

std::string sliceRows(const Site &s) {
  const auto &starts = s.node.ints("starts"), &ends = s.node.ints("ends"),
             &steps = s.node.ints("steps");
  if (starts.empty() || starts[0] != 0 || ends[0] < s.batch || (!steps.empty() && steps[0] != 1))
    return "it slices the batch axis 0 (start " + str(starts.empty() ? 0 : starts[0]) + ", end " +
           str(ends.empty() ? 0 : ends[0]) + ")";
  return onlyRowsIn(s, {0});
}

std::string padRows(const Site &s) {
  const auto &pads = s.node.ints("pads");
  if (pads.size() != 2 * static_cast<size_t>(s.rank(0)) || pads[0] != 0 || pads[s.rank(0)] != 0)
    return "it pads the batch axis 0";
  return onlyRowsIn(s, {0});
}

std::string tileRows(const Site &s) {
  const auto &repeats = s.node.ints("repeats");
  if (repeats.empty() || repeats[0] != 1)
    return "it repeats the batch axis 0";
  return onlyRowsIn(s, {0});
}

std::string expandRows(const Site &s) {
  if (s.rank(0) != s.outRank())
    return "it adds leading axes: the batch would no longer be axis 0";
  return onlyRowsIn(s, {0});
}

std::string gatherElementsRows(const Site &s) {
  if (!s.in(0))
    return "the data does not carry the rows";
  std::string why = axisNotBatch(s, "axis", s.rank(0));
  return why.empty() ? broadcastRows(s) : why;
}

// The function of each op row's batch rule (OpDef::batch). Why each keeps rows apart when it
// holds: convolutions and pooling windows are spatial; instance, local-response, Lp and layer
// normalizations, softmaxes, arg- and reductions work along non-batch axes; a tree ensemble
// walks the trees for each row alone; row i of a product is row i of A times B; Reshape keeps
// row-major order, so each row's elements stay in its row; the data movers (Transpose,
// Concat, Slice, Pad, Tile, Broadcast, Gather) move non-batch axes only.
RuleFn ruleOf(BatchRule r) {
  switch (r) {
  case BatchRule::None:
    return nullptr;
  case BatchRule::RowsOfFirst:
    return rowsOfFirst;
  case BatchRule::AlongAxis:
    return rowsAlongAxis;
  case BatchRule::Reduce:
    return reduceRows;
  case BatchRule::Gemm:
    return gemmRows;
  case BatchRule::MatMul:
    return matMulRows;
  case BatchRule::Transpose:
    return transposeRows;
  case BatchRule::Concat:
    return concatRows;
  case BatchRule::Slice:
    return sliceRows;
  case BatchRule::Pad:
    return padRows;
  case BatchRule::Tile:
    return tileRows;
  case BatchRule::Expand:
    return expandRows;
  case BatchRule::GatherElements:
    return gatherElementsRows;
  case BatchRule::FusedConv:
    return fusedConvRows;
  }
  return nullptr;
}

std::string nodeText(const Node &n) { return "node '" + n.name() + "' (" + n.op().name + ")"; }

// Whether constant `v` (at batch + 1) equals `u` (at batch), or both are one row repeated for
// each row of the batch (an Expand to the batch size, as exporters write for a token or a
// bias every row shares): the same for every row, so right at any batch.
bool sameOrRepeatedRows(const Value &u, const Value &v, int64_t batch) {
  const Buffer &x = *u.data(), &y = *v.data();
  if (u.dims() == v.dims())
    return x.size == y.size && std::memcmp(x.data, y.data, x.size) == 0;
  Dims grown = u.dims();
  if (grown.empty() || grown[0] != batch)
    return false;
  grown[0] = batch + 1;
  if (v.dims() != grown || x.size % batch != 0 || y.size != x.size / batch * (batch + 1))
    return false;
  size_t row = x.size / batch;
  for (int64_t r = 0; r <= batch; ++r)
    if ((r < batch && std::memcmp(x.as<char>() + r * row, x.data, row) != 0) ||
        std::memcmp(y.as<char>() + r * row, x.data, row) != 0)
      return false;
  return true;
}

// Where `g` (at `batch` rows) and `next` (at one more) differ other than in the batch, as an
// error naming the node; `rows` holds the batched values of `g`.
Status compareWithNextBatch(const Graph &g, const Graph &next, int64_t batch,
                            const std::set<const Value *> &rows) {
  const std::string head = "--dynamic-batch: ";
  std::vector<Node *> a = g.nodes(), b = next.nodes();
  if (a.size() != b.size())
    return Status::error(head + "the optimized graph has " + str(a.size()) + " nodes at batch " +
                         str(batch) + " but " + str(b.size()) + " at batch " + str(batch + 1) +
                         ": the model computes with its batch size");
  for (size_t k = 0; k < a.size(); ++k) {
    const Node &x = *a[k], &y = *b[k];
    if (&x.op() != &y.op() || x.numInputs() != y.numInputs() || x.numOutputs() != y.numOutputs())
      return Status::error(head + nodeText(x) + " at batch " + str(batch) + " is " + nodeText(y) +
                           " at batch " + str(batch + 1) +
                           ": the model computes with its batch size");
    for (int i = 0; i < x.numInputs(); ++i) {
      const Value *u = x.input(i), *v = y.input(i);
      if (!u || !v || !u->isConstant() || !v->isConstant())
        continue;
      if (!sameOrRepeatedRows(*u, *v, batch))
        return Status::error(
            head + nodeText(x) + ": operand " + str(i) + " is a constant '" + u->name() +
            "' that folding computed from the batch size (" +
            (u->dims() == v->dims()
                 ? "its value differs"
                 : dimsToString(u->dims()) + " rows differ from " + dimsToString(v->dims())) +
            " between batch " + str(batch) + " and batch " + str(batch + 1) +
            "): it would be wrong at any other batch");
    }
    for (int i = 0; i < x.numOutputs(); ++i) {
      Dims want = x.output(i)->dims();
      if (rows.count(x.output(i)) && !want.empty())
        want[0] = batch + 1;
      if (y.output(i)->dims() != want)
        return Status::error(head + nodeText(x) + ": result '" + x.output(i)->name() + "' is " +
                             dimsToString(x.output(i)->dims()) + " at batch " + str(batch) +
                             " but " + dimsToString(y.output(i)->dims()) + " at batch " +
                             str(batch + 1) +
                             ": a shape other than the batch follows the batch size");
    }
  }
  return Status::ok();
}

} // namespace

Status checkBatchRows(const Graph &g, const Graph &next, int64_t batch) {
  Status all;
  std::set<const Value *> rows; // the batched values
  for (const Value *in : g.inputs())
    rows.insert(in);
  for (const Node *n : g.nodes()) {
    std::vector<bool> batched;
    bool any = false;
    for (const Value *v : n->inputs()) {
      batched.push_back(v && rows.count(v));
      any = any || batched.back();
    }
    if (!any) // computed from constants: the same for every row
      continue;
    std::string why;
    const OpDef &op = n->op();
    RuleFn rule = ruleOf(op.batch);
    if (n->hasSubgraphs())
      why = "control flow: odlac does not check its bodies for batch rows";
    else if (op.fusion == FusionClass::Elementwise || op.fusion == FusionClass::Broadcast)
      why = broadcastRows(Site{*n, batched, batch});
    else if (rule)
      why = rule(Site{*n, batched, batch});
    else
      why = "odlac has no batch rule for " + std::string(op.name) +
            ", so it cannot tell whether the op keeps rows apart";
    for (const Value *out : n->outputs())
      if (why.empty() && (out->dims().empty() || out->dims()[0] != batch))
        why = "result '" + out->name() + "' of shape " + dimsToString(out->dims()) +
              " does not keep the batch " + str(batch) + " as its leading dim";
    if (!why.empty())
      all.append(
          Status::error("--dynamic-batch: node '" + n->name() + "' (" + op.name + "): " + why));
    // A refused node's results still count as batched: each cause is reported once.
    for (const Value *out : n->outputs())
      rows.insert(out);
  }
  for (const Value *out : g.outputs())
    if (!rows.count(out))
      all.append(Status::error("--dynamic-batch: output '" + out->name() +
                               "' does not come from the batch rows of the inputs"));
  if (all.isOk())
    all.append(compareWithNextBatch(g, next, batch, rows));
  return all;
}

} // namespace odlac
