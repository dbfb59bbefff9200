// Tree: ai.onnx.ml's tree ensembles (TreeEnsemble), lowered to odla_ExtTreeEnsemble
// (odla_ext_tree.h). The importer (frontend/rules/Tree.cpp) checks the ONNX attributes and
// turns them into the constant tables the extension reads: the nodes reachable from the roots,
// renumbered so that every branch leads to a later row, one int32 row each (feature, mode,
// missing-tracks-true, true and false branch), their thresholds, their member sets, the leaves'
// targets and weights and the roots. Inference checks the tables' shapes and types; the
// reference builder checks their data again when it is called (a stored executable's file is
// read by the same builder).
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

#include <ODLA/ext/odla_ext_tree.h>

namespace odlac {
namespace {

// ONNX TreeEnsemble-5's input types.
constexpr DTypeMask kTreeInputTypes = maskOf(DType::F32) | maskOf(DType::F64) | maskOf(DType::F16);

bool isVector(const TensorType &t, DType dtype) { return t.dtype == dtype && t.rank() == 1; }

Status inferTreeEnsemble(InferCtx &c) {
  const TensorType &x = c.in(0), &nodes = c.in(1), &splits = c.in(2);
  const TensorType &targets = c.in(4), &weights = c.in(5), &roots = c.in(6);
  if (x.rank() != 2)
    return c.fail("input " + toString(x) + " must be a matrix [N, F]");
  if (nodes.dtype != DType::I32 || nodes.rank() != 2 || nodes.dims[1] != ODLA_EXT_TREE_COLUMNS)
    return c.fail("nodes " + toString(nodes) + " must be int32 [M, " + str(ODLA_EXT_TREE_COLUMNS) +
                  "]");
  if (!isVector(splits, x.dtype) || splits.dims[0] != nodes.dims[0])
    return c.fail("splits " + toString(splits) +
                  " must be one element of the input's type per "
                  "node of " +
                  toString(nodes));
  if (c.hasInput(3) && !isVector(c.in(3), x.dtype))
    return c.fail("members " + toString(c.in(3)) + " must be a vector of the input's type");
  if (!isVector(targets, DType::I32) || !isVector(weights, x.dtype) || targets.dims != weights.dims)
    return c.fail("leaf targets " + toString(targets) + " (int32) and weights " +
                  toString(weights) + " (the input's type) must be vectors of one length");
  if (!isVector(roots, DType::I32))
    return c.fail("roots " + toString(roots) + " must be an int32 vector");
  int64_t aggregate = c.i("aggregate_function"), post = c.i("post_transform");
  int64_t n = c.i("n_targets");
  if (aggregate < ODLA_EXT_TREE_AVERAGE || aggregate > ODLA_EXT_TREE_MAX)
    return c.fail("aggregate_function " + str(aggregate) + " is not in [0, 3]");
  if (post < ODLA_EXT_TREE_POST_NONE || post > ODLA_EXT_TREE_POST_PROBIT)
    return c.fail("post_transform " + str(post) + " is not in [0, 4]");
  if (n < 0 || n > INT32_MAX)
    return c.fail("n_targets " + str(n) + " is not in [0, 2^31)");
  c.setOut(0, TensorType{x.dtype, {x.dims[0], n}});
  return Status::ok();
}

} // namespace

namespace ops {

const OpDef TreeEnsemble = {
    "TreeEnsemble",
    {{"x", OperandDef::Required, kTreeInputTypes},
     {"nodes", OperandDef::Required, maskOf(DType::I32)},
     {"splits", OperandDef::Required, kTreeInputTypes},
     {"members", OperandDef::Optional, kTreeInputTypes},
     {"leaf_targets", OperandDef::Required, maskOf(DType::I32)},
     {"leaf_weights", OperandDef::Required, kTreeInputTypes},
     {"roots", OperandDef::Required, maskOf(DType::I32)}},
    1,
    {{"aggregate_function", AttrKind::Int, AttrValue(int64_t{ODLA_EXT_TREE_SUM})},
     {"post_transform", AttrKind::Int, AttrValue(int64_t{ODLA_EXT_TREE_POST_NONE})},
     {"n_targets", AttrKind::Int, std::nullopt}},
    FusionClass::Opaque,
    kTraitNone,
    inferTreeEnsemble,
    [](LowerCtx &c) {
      const Node &n = c.node();
      c.setOut(0,
               c.sink().ExtTreeEnsemble(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.in(5),
                                        c.in(6), static_cast<odla_int32>(n.i("aggregate_function")),
                                        static_cast<odla_int32>(n.i("post_transform")),
                                        static_cast<odla_int32>(n.i("n_targets")), c.outId(0)));
    },
    BatchRule::RowsOfFirst};

} // namespace ops

} // namespace odlac
