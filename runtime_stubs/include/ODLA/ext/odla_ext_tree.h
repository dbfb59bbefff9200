/* odla_ext_tree.h: odlac's tree-ensemble extension op, ai.onnx.ml's TreeEnsemble (beyond
 * ODLA 0.5). Included by odla_ext.h; see there for when generated code may use them.
 *
 * An ensemble is a forest of binary decision trees held in tables: every interior node tests
 * one feature of an input row against its threshold (or its set of members) and goes on to
 * its true or its false branch, which is another node or a leaf; a leaf adds its weight to one
 * target. The tables are read when the computation is built: they must be constants, and a
 * constants array given at launch may not replace them (odla_AsyncLaunchExecutable refuses
 * one that does with ODLA_INVALID_PARAM). */
#ifndef _ODLA_EXT_TREE_H_
#define _ODLA_EXT_TREE_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The test a node makes, true when the feature x (as the input's type holds it) ... */
#define ODLA_EXT_TREE_BRANCH_LEQ 0    /* x <= split */
#define ODLA_EXT_TREE_BRANCH_LT 1     /* x < split */
#define ODLA_EXT_TREE_BRANCH_GTE 2    /* x >= split */
#define ODLA_EXT_TREE_BRANCH_GT 3     /* x > split */
#define ODLA_EXT_TREE_BRANCH_EQ 4     /* x == split */
#define ODLA_EXT_TREE_BRANCH_NEQ 5    /* x != split (true for a NaN x) */
#define ODLA_EXT_TREE_BRANCH_MEMBER 6 /* x is one of the node's members */

/* How the leaves the trees reach combine into each target. */
#define ODLA_EXT_TREE_AVERAGE 0 /* their sum divided by the number of trees */
#define ODLA_EXT_TREE_SUM 1
#define ODLA_EXT_TREE_MIN 2 /* MIN and MAX: 0 for a target that no tree reaches */
#define ODLA_EXT_TREE_MAX 3

/* The transform of each row of targets after aggregation (ONNX's post_transform). */
#define ODLA_EXT_TREE_POST_NONE 0
#define ODLA_EXT_TREE_POST_SOFTMAX 1
#define ODLA_EXT_TREE_POST_LOGISTIC 2     /* 1 / (1 + exp(-v)) of each target */
#define ODLA_EXT_TREE_POST_SOFTMAX_ZERO 3 /* softmax that leaves |v| <= 1e-7 at v * exp(-max) */
/* PROBIT: sqrt(2) * erfinv(2v - 1), erfinv as Winitzki's approximation with a = 0.147 (what
 * ONNX's reference and ONNX Runtime compute); +-inf at v = 1 and 0. */
#define ODLA_EXT_TREE_POST_PROBIT 4

/* The columns of a row of the nodes table. A branch is a node row index (>= 0), which must
 * be greater than the row's own, so that every walk ends, or a leaf as -1 - leaf index. */
#define ODLA_EXT_TREE_COL_FEATURE 0 /* the feature tested, in [0, input's dim 1) */
#define ODLA_EXT_TREE_COL_MODE 1    /* ODLA_EXT_TREE_BRANCH_* */
#define ODLA_EXT_TREE_COL_MISSING 2 /* 1: a NaN feature takes the true branch; 0: the test */
#define ODLA_EXT_TREE_COL_TRUE 3    /* the branch when the test holds */
#define ODLA_EXT_TREE_COL_FALSE 4   /* the branch when it does not */
#define ODLA_EXT_TREE_COLUMNS 5

/* ai.onnx.ml TreeEnsemble: input is [N, F] (ODLA_FLOAT32, ODLA_FLOAT64 or ODLA_FLOAT16), the
 * result [N, num_targets] of input's type. For every row of input, each tree is walked from
 * its root (`roots`, ODLA_INT32 [R] node row indices) to a leaf, whose weight (leaf_weights,
 * input's type [L]) goes to its target (leaf_targets, ODLA_INT32 [L], each in
 * [0, num_targets)); the targets combine by aggregate_function (ODLA_EXT_TREE_AVERAGE, _SUM,
 * _MIN, _MAX) and then go through post_transform (ODLA_EXT_TREE_POST_*). `nodes` is
 * ODLA_INT32 [M, ODLA_EXT_TREE_COLUMNS] (ODLA_EXT_TREE_COL_*), `splits` input's type [M] (the
 * threshold of each row; ignored by MEMBER rows); `members` (input's type, NULL when no row is
 * MEMBER) holds the members of each MEMBER row in row order, each set ended by a NaN.
 * Comparisons are exact in input's type. All of these but input are constants; the builder
 * checks every index and returns ODLA_INVALID_PARAM naming the first one out of range. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtTreeEnsemble(odla_value input, odla_value nodes, odla_value splits, odla_value members,
                     odla_value leaf_targets, odla_value leaf_weights, odla_value roots,
                     odla_int32 aggregate_function, odla_int32 post_transform,
                     odla_int32 num_targets, const odla_value_id value_id);

#ifdef __cplusplus
}
#endif

#endif /* _ODLA_EXT_TREE_H_ */
