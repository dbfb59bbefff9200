// Import rules for ai.onnx.ml's tree ensembles: TreeEnsemble-5 becomes the IR's TreeEnsemble
// (compiler/ops/Tree.cpp, odla_ext_tree.h); the legacy TreeEnsembleRegressor and
// TreeEnsembleClassifier are refused.
//
// Every attribute is checked here, in ONNX's terms: lengths, modes, feature ids against the
// input's last dim, branch ids against the nodes or the leaves, target ids against n_targets,
// roots, one NaN-ended member set per BRANCH_MEMBER node. Then the nodes reachable from the
// roots are renumbered in reverse postorder, which puts every node after each node that
// branches to it; a cycle on the way is refused. So the tables the kernel gets can only lead
// forward, and every walk ends at a leaf. A node reached from two parents (or two trees) is
// kept once: walking it is the same from either. Unreachable nodes are dropped (checked all
// the same).
//
// Two choices where ONNX's reference (onnx.reference) and ONNX Runtime differ or the spec is
// silent, both documented in docs/generated-code.md: a tree whose root sends both branches to
// one leaf gives that leaf (onnx.reference gives the leaf numbered as the root), and with MIN
// or MAX a target that no tree reaches is 0 (ONNX Runtime's; onnx.reference leaves the type's
// largest or lowest value there).
#include "Rules.h"

#include "Tensor.h"

#include <ODLA/ext/odla_ext_tree.h> // the tables' layout, the IR attribute's values

#include <cstring>

namespace odlac {
namespace {

// A rank-1 tensor attribute decoded, of element type `type` where given; `required` says
// whether its absence is an error.
Expected<std::optional<DecodedTensor>> tensorAttr(ImportCtx &ctx, const char *name, bool required,
                                                  std::optional<DType> type = std::nullopt) {
  const onnx::AttributeProto *a = ctx.findAttr(name);
  if (!a) {
    if (required)
      return ctx.fail(std::string("attribute ") + name + " is required");
    return std::optional<DecodedTensor>();
  }
  if (a->type() != onnx::AttributeProto::TENSOR || !a->has_t())
    return ctx.fail(std::string("attribute ") + name + " must be a tensor");
  auto t = decodeTensor(a->t(), ctx.modelDir());
  if (!t)
    return t.takeStatus();
  if (t->type.rank() != 1)
    return ctx.fail(std::string("attribute ") + name + " " + toString(t->type) +
                    " must have rank 1");
  if (type && t->type.dtype != *type)
    return ctx.fail(std::string("attribute ") + name + " " + toString(t->type) +
                    " must have the input's element type " + dtypeName(*type));
  return std::optional<DecodedTensor>(std::move(*t));
}

// Whether element i of a float tensor is NaN.
bool isNan(DType t, const void *data, int64_t i) {
  if (t == DType::F16) {
    uint16_t h;
    std::memcpy(&h, static_cast<const unsigned char *>(data) + i * 2, 2);
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
  }
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, static_cast<const unsigned char *>(data) + i * 4, 4);
    return f != f;
  }
  double d;
  std::memcpy(&d, static_cast<const unsigned char *>(data) + i * 8, 8);
  return d != d;
}

// The ONNX attributes of one ensemble, checked.
struct Ensemble {
  int64_t numNodes = 0, numLeaves = 0, numTargets = 0;
  std::vector<int64_t> features, modes, missing, trueIds, falseIds, trueLeaf, falseLeaf;
  std::vector<int64_t> roots, leafTargets;
  DecodedTensor splits, weights;
  std::optional<DecodedTensor> members;
  std::vector<int64_t> setBegin; // per node: where its member set starts (MEMBER nodes)
};

// nodes_* integer attributes: present (or absent and optional, then `dflt` each), numNodes long.
Status nodeInts(ImportCtx &ctx, const Ensemble &e, const char *name, bool required, int64_t dflt,
                std::vector<int64_t> &out) {
  if (!ctx.hasAttr(name)) {
    if (required)
      return ctx.fail(std::string("attribute ") + name + " is required");
    out.assign(static_cast<size_t>(e.numNodes), dflt);
    return Status::ok();
  }
  out = ctx.attrInts(name);
  if (static_cast<int64_t>(out.size()) != e.numNodes)
    return ctx.fail(std::string("attribute ") + name + " has " +
                    str(static_cast<int64_t>(out.size())) + " entries and nodes_splits " +
                    str(e.numNodes) + ": every nodes_* attribute has one per node");
  return Status::ok();
}

// Checks an attribute's entry against [0, end).
Status inRange(ImportCtx &ctx, const char *attr, int64_t i, int64_t v, int64_t end,
               const std::string &what) {
  if (v >= 0 && v < end)
    return Status::ok();
  return ctx.fail(std::string("attribute ") + attr + "[" + str(i) + "] = " + str(v) +
                  " is not in [0, " + str(end) + "): " + what);
}

Status readNodes(ImportCtx &ctx, Ensemble &e, DType t, int64_t features) {
  auto splits = tensorAttr(ctx, "nodes_splits", true, t);
  if (!splits)
    return splits.takeStatus();
  e.splits = **splits;
  e.numNodes = e.splits.type.numElements();
  if (e.numNodes > INT32_MAX)
    return ctx.fail("attribute nodes_splits has " + str(e.numNodes) + " nodes: at most 2^31 - 1");
  auto modes = tensorAttr(ctx, "nodes_modes", true);
  if (!modes)
    return modes.takeStatus();
  if ((*modes)->type.dtype != DType::U8 || (*modes)->type.numElements() != e.numNodes)
    return ctx.fail("attribute nodes_modes " + toString((*modes)->type) + " must be uint8 [" +
                    str(e.numNodes) + "], one mode per node of nodes_splits");
  const auto *m = (*modes)->data->as<uint8_t>();
  e.modes.assign(m, m + e.numNodes);
  // Popularity of each node, "used for performance": it cannot change the result.
  auto hitrates = tensorAttr(ctx, "nodes_hitrates", false);
  if (!hitrates)
    return hitrates.takeStatus();
  if (*hitrates && (*hitrates)->type.numElements() != e.numNodes)
    return ctx.fail("attribute nodes_hitrates " + toString((*hitrates)->type) + " must have " +
                    str(e.numNodes) + " entries, one per node");
  for (auto [name, required, out] :
       {std::tuple{"nodes_featureids", true, &e.features},
        std::tuple{"nodes_truenodeids", true, &e.trueIds},
        std::tuple{"nodes_falsenodeids", true, &e.falseIds},
        std::tuple{"nodes_trueleafs", true, &e.trueLeaf},
        std::tuple{"nodes_falseleafs", true, &e.falseLeaf},
        std::tuple{"nodes_missing_value_tracks_true", false, &e.missing}})
    if (Status s = nodeInts(ctx, e, name, required, 0, *out))
      return s;
  for (int64_t i = 0; i < e.numNodes; ++i) {
    if (e.modes[i] > ODLA_EXT_TREE_BRANCH_MEMBER)
      return ctx.fail("attribute nodes_modes[" + str(i) + "] = " + str(e.modes[i]) +
                      " is not a mode (0 BRANCH_LEQ to 6 BRANCH_MEMBER)");
    if (Status s = inRange(ctx, "nodes_featureids", i, e.features[i], features,
                           "the input has " + str(features) + " features"))
      return s;
    for (auto [name, v] : {std::pair{"nodes_trueleafs", e.trueLeaf[i]},
                           std::pair{"nodes_falseleafs", e.falseLeaf[i]},
                           std::pair{"nodes_missing_value_tracks_true", e.missing[i]}})
      if (v != 0 && v != 1)
        return ctx.fail(std::string("attribute ") + name + "[" + str(i) + "] = " + str(v) +
                        " must be 0 or 1");
  }
  return Status::ok();
}

Status readLeaves(ImportCtx &ctx, Ensemble &e, DType t) {
  auto weights = tensorAttr(ctx, "leaf_weights", true, t);
  if (!weights)
    return weights.takeStatus();
  e.weights = **weights;
  if (!ctx.hasAttr("leaf_targetids"))
    return ctx.fail("attribute leaf_targetids is required");
  e.leafTargets = ctx.attrInts("leaf_targetids");
  e.numLeaves = e.weights.type.numElements();
  if (static_cast<int64_t>(e.leafTargets.size()) != e.numLeaves)
    return ctx.fail("attribute leaf_targetids has " +
                    str(static_cast<int64_t>(e.leafTargets.size())) + " entries and leaf_weights " +
                    str(e.numLeaves) + ": one of each per leaf");
  if (e.numLeaves > INT32_MAX)
    return ctx.fail("attribute leaf_weights has " + str(e.numLeaves) + " leaves: at most 2^31 - 1");
  for (int64_t i = 0; i < e.numLeaves; ++i)
    if (Status s = inRange(ctx, "leaf_targetids", i, e.leafTargets[i], e.numTargets,
                           "n_targets is " + str(e.numTargets)))
      return s;
  for (int64_t i = 0; i < e.numNodes; ++i)
    for (auto [name, id, leaf] : {std::tuple{"nodes_truenodeids", e.trueIds[i], e.trueLeaf[i]},
                                  std::tuple{"nodes_falsenodeids", e.falseIds[i], e.falseLeaf[i]}})
      if (Status s = inRange(ctx, name, i, id, leaf ? e.numLeaves : e.numNodes,
                             leaf ? "a leaf (its nodes_*leafs entry is 1) of " + str(e.numLeaves) +
                                        " in leaf_weights"
                                  : "a node (its nodes_*leafs entry is 0) of " + str(e.numNodes) +
                                        " in nodes_splits"))
        return s;
  return Status::ok();
}

// membership_values: one NaN-ended set per BRANCH_MEMBER node, in node order.
Status readMembers(ImportCtx &ctx, Ensemble &e, DType t) {
  auto members = tensorAttr(ctx, "membership_values", false, t);
  if (!members)
    return members.takeStatus();
  e.members = std::move(*members);
  int64_t sets = 0, nans = 0;
  for (int64_t mode : e.modes)
    sets += mode == ODLA_EXT_TREE_BRANCH_MEMBER;
  std::vector<int64_t> ends; // where each set's NaN is
  for (int64_t i = 0; e.members && i < e.members->type.numElements(); ++i)
    if (isNan(t, e.members->data->data, i))
      ends.push_back(i);
  nans = static_cast<int64_t>(ends.size());
  if (nans != sets)
    return ctx.fail(
        str(sets) + " nodes are BRANCH_MEMBER and attribute membership_values " +
        (e.members ? "holds " + str(nans) + " NaN-ended sets" : std::string("is absent")) +
        ": one set per BRANCH_MEMBER node, in node order");
  e.setBegin.assign(static_cast<size_t>(e.numNodes), 0);
  int64_t begin = 0;
  for (int64_t i = 0, set = 0; i < e.numNodes; ++i)
    if (e.modes[i] == ODLA_EXT_TREE_BRANCH_MEMBER) {
      e.setBegin[i] = begin;
      begin = ends[set++] + 1;
    }
  return Status::ok();
}

// The nodes reachable from the roots in reverse postorder (a parent before its children), or
// an error naming a cycle.
Expected<std::vector<int64_t>> forwardOrder(ImportCtx &ctx, const Ensemble &e) {
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(e.numNodes), kNew);
  std::vector<int64_t> post;
  std::vector<std::pair<int64_t, int>> path; // node, branches taken so far
  for (size_t r = 0; r < e.roots.size(); ++r) {
    if (state[e.roots[r]] != kNew)
      continue;
    state[e.roots[r]] = kOnPath;
    path.push_back({e.roots[r], 0});
    while (!path.empty()) {
      auto &[node, taken] = path.back();
      if (taken == 2) {
        state[node] = kDone;
        post.push_back(node);
        path.pop_back();
        continue;
      }
      bool toTrue = taken++ == 0;
      if (toTrue ? e.trueLeaf[node] : e.falseLeaf[node])
        continue;
      int64_t child = toTrue ? e.trueIds[node] : e.falseIds[node];
      if (state[child] == kOnPath)
        return ctx.fail("attribute " +
                        std::string(toTrue ? "nodes_truenodeids" : "nodes_falsenodeids") + "[" +
                        str(node) + "] = " + str(child) + " leads back to node " + str(child) +
                        ", on the path from tree_roots[" + str(static_cast<int64_t>(r)) +
                        "] = " + str(e.roots[r]) + ": a tree's branches must not form a cycle");
      if (state[child] == kNew) { // (push_back may move what `node` refers to: last use)
        state[child] = kOnPath;
        path.push_back({child, 0});
      }
    }
  }
  return std::vector<int64_t>(post.rbegin(), post.rend());
}

Status importTreeEnsemble(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  if (x->type().rank() != 2)
    return ctx.fail("input " + toString(x->type()) + " must be a matrix [N, F]");
  DType t = x->dtype();
  if (t != DType::F32 && t != DType::F64 && t != DType::F16)
    return ctx.fail("input " + toString(x->type()) + " must be float, double or float16");
  Ensemble e;
  int64_t aggregate = ctx.attrInt("aggregate_function", ODLA_EXT_TREE_SUM);
  if (aggregate < ODLA_EXT_TREE_AVERAGE || aggregate > ODLA_EXT_TREE_MAX)
    return ctx.fail("attribute aggregate_function = " + str(aggregate) +
                    " is not one of 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX");
  int64_t post = ctx.attrInt("post_transform", ODLA_EXT_TREE_POST_NONE);
  if (post < ODLA_EXT_TREE_POST_NONE || post > ODLA_EXT_TREE_POST_PROBIT)
    return ctx.fail("attribute post_transform = " + str(post) +
                    " is not one of 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT");
  if (ctx.hasAttr("n_targets")) {
    e.numTargets = ctx.attrInt("n_targets", 0);
  } else { // the result's width otherwise comes from the shape the model declares for it
    auto declared = ctx.declaredType(0);
    if (!declared || declared->rank() != 2 || declared->dims[1] < 0)
      return ctx.fail("attribute n_targets is absent and the model declares no static shape "
                      "[N, n_targets] for output '" +
                      ctx.outputName(0) + "'");
    e.numTargets = declared->dims[1];
  }
  if (e.numTargets < 0 || e.numTargets > INT32_MAX)
    return ctx.fail("n_targets = " + str(e.numTargets) + " is not in [0, 2^31)");
  if (Status s = readNodes(ctx, e, t, x->dims()[1]))
    return s;
  if (Status s = readLeaves(ctx, e, t))
    return s;
  if (Status s = readMembers(ctx, e, t))
    return s;
  if (!ctx.hasAttr("tree_roots"))
    return ctx.fail("attribute tree_roots is required");
  e.roots = ctx.attrInts("tree_roots");
  if (e.roots.empty()) // nothing to aggregate (and AVERAGE would divide by 0 trees)
    return ctx.fail("attribute tree_roots is empty: an ensemble has at least one tree");
  for (size_t r = 0; r < e.roots.size(); ++r)
    if (Status s = inRange(ctx, "tree_roots", static_cast<int64_t>(r), e.roots[r], e.numNodes,
                           "a node of " + str(e.numNodes) + " in nodes_splits"))
      return s;
  auto order = forwardOrder(ctx, e);
  if (!order)
    return order.takeStatus();

  // The tables (odla_ext_tree.h): rows in forward order, branches as rows or -1 - leaf.
  const int64_t rows = static_cast<int64_t>(order->size());
  const size_t elem = dtypeBytes(t);
  std::vector<int32_t> row(static_cast<size_t>(e.numNodes), -1), nodes, leafTargets, roots;
  for (int64_t r = 0; r < rows; ++r)
    row[(*order)[r]] = static_cast<int32_t>(r);
  auto branch = [&](int64_t id, int64_t leaf) {
    return leaf ? static_cast<int32_t>(-1 - id) : row[id];
  };
  const auto *splitBytes = static_cast<const unsigned char *>(e.splits.data->data);
  const auto *memberBytes =
      e.members ? static_cast<const unsigned char *>(e.members->data->data) : nullptr;
  std::vector<unsigned char> splits, members;
  for (int64_t old : *order) {
    nodes.insert(nodes.end(),
                 {static_cast<int32_t>(e.features[old]), static_cast<int32_t>(e.modes[old]),
                  static_cast<int32_t>(e.missing[old]), branch(e.trueIds[old], e.trueLeaf[old]),
                  branch(e.falseIds[old], e.falseLeaf[old])});
    splits.insert(splits.end(), splitBytes + old * elem, splitBytes + (old + 1) * elem);
    if (e.modes[old] != ODLA_EXT_TREE_BRANCH_MEMBER)
      continue;
    int64_t end = e.setBegin[old];
    while (!isNan(t, memberBytes, end))
      ++end;
    members.insert(members.end(), memberBytes + e.setBegin[old] * elem,
                   memberBytes + (end + 1) * elem); // the set and its NaN
  }
  for (int64_t target : e.leafTargets)
    leafTargets.push_back(static_cast<int32_t>(target));
  for (int64_t root : e.roots)
    roots.push_back(row[root]);

  Graph &g = ctx.graph();
  auto i32 = [&](const char *suffix, const std::vector<int32_t> &v, Dims dims) {
    return g.addConstant(ctx.tempName(suffix), {DType::I32, std::move(dims)},
                         Buffer::copyOf(v.data(), v.size() * 4));
  };
  Value *nodeTable = i32("nodes", nodes, {rows, ODLA_EXT_TREE_COLUMNS});
  Value *splitTable = g.addConstant(ctx.tempName("splits"), {t, {rows}},
                                    Buffer::copyOf(splits.data(), splits.size()));
  Value *memberTable = members.empty()
                           ? nullptr
                           : g.addConstant(ctx.tempName("members"),
                                           {t, {static_cast<int64_t>(members.size() / elem)}},
                                           Buffer::copyOf(members.data(), members.size()));
  Value *targets = i32("leaf_targets", leafTargets, {e.numLeaves});
  Value *weights = g.addConstant(ctx.tempName("leaf_weights"), e.weights.type, e.weights.data);
  Value *rootTable = i32("roots", roots, {static_cast<int64_t>(roots.size())});
  auto out = ctx.emit(
      "TreeEnsemble", {x, nodeTable, splitTable, memberTable, targets, weights, rootTable},
      {{"aggregate_function", aggregate}, {"post_transform", post}, {"n_targets", e.numTargets}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    ml({"TreeEnsemble", 5, nullptr,
        reads({"aggregate_function", "leaf_targetids", "leaf_weights", "membership_values",
               "n_targets", "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids",
               "nodes_hitrates", "nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits",
               "nodes_trueleafs", "nodes_truenodeids", "post_transform", "tree_roots"}),
        importTreeEnsemble}),
    // Their leaves may carry several weighted targets each, and base values, which the
    // TreeEnsemble kernel does not take; the classifier also picks labels.
    ml(rejected("TreeEnsembleRegressor", 1,
                "TreeEnsembleRegressor is not supported (leaves with several targets, "
                "base_values); ai.onnx.ml TreeEnsemble-5 is")),
    ml(rejected("TreeEnsembleClassifier", 1,
                "TreeEnsembleClassifier is not supported (class labels, base_values); ai.onnx.ml "
                "TreeEnsemble-5 (followed by ArgMax for the label) is")),
};

} // namespace

const std::vector<ImportRule> &treeRules() { return kRules; }

} // namespace odlac
