/* test_tree_ensemble.c: odla_ExtTreeEnsemble (odla_ext_tree.h) through the ODLA headers alone:
 * a two-tree ensemble with a NaN feature, a member set given unsorted and a target no tree
 * reaches, against answers worked out by hand (in the comments), with SUM and MAX; then every
 * check of the builder, each table broken one way, must refuse the call with
 * ODLA_INVALID_PARAM when the graph is built (what a caller of the API or a stored executable
 * could hand it, which odlac's importer never emits), and a constants array that would replace
 * a table is refused at launch. Usage: test_tree_ensemble SCRATCH_DIR (unused) */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define ID(s) ((const odla_value_id)(s))
enum { ROWS = 3, FEATURES = 2, NODES = 3, LEAVES = 5, TARGETS = 2, MEMBERS = 3 };

/* Tree A, rows 0 and 1: row 0 tests x0 <= 0.5 (a NaN goes true) to row 1, else leaf 0
 * (10 to target 0); row 1 tests x1 in {2, 5} to leaf 1 (1 to target 1), else leaf 2 (2 to
 * target 1). Tree B, row 2: x1 != 3 to leaf 3 (100 to target 0), else leaf 4 (200 to target 0). */
typedef struct {
  int32_t nodes[NODES][ODLA_EXT_TREE_COLUMNS];
  float splits[NODES], members[MEMBERS], weights[LEAVES];
  int32_t targets[LEAVES], roots[2];
  int num_members;
  odla_element_type nodes_type;
  int nodes_constant;
  odla_int32 aggregate, post, num_targets;
} tables;

static tables good(void) {
  static const tables t = {{{0, ODLA_EXT_TREE_BRANCH_LEQ, 1, 1, -1},
                            {1, ODLA_EXT_TREE_BRANCH_MEMBER, 0, -2, -3},
                            {1, ODLA_EXT_TREE_BRANCH_NEQ, 0, -4, -5}},
                           {0.5f, 0, 3},
                           {5, 2, NAN}, /* unsorted: the builder sorts each set */
                           {10, 1, 2, 100, 200},
                           {0, 1, 1, 0, 0},
                           {0, 2},
                           MEMBERS,
                           ODLA_INT32,
                           1,
                           ODLA_EXT_TREE_SUM,
                           ODLA_EXT_TREE_POST_NONE,
                           TARGETS};
  return t;
}

static odla_value_type vt(odla_element_type e, int rank, int64_t d0, int64_t d1) {
  odla_value_type v;
  memset(&v, 0, sizeof v);
  v.element_type = e;
  v.shape.size = rank;
  v.shape.dims[0] = d0;
  v.shape.dims[1] = d1;
  return v;
}

/* Builds the ensemble over `t` in `comp`; returns its result value (NULL when refused). */
static odla_value build(const tables *t) {
  odla_value x = odla_CreateArgument(vt(ODLA_FLOAT32, 2, ROWS, FEATURES), ID("x"));
  odla_value_type nt = vt(t->nodes_type, 2, NODES, ODLA_EXT_TREE_COLUMNS);
  odla_value nodes = t->nodes_constant ? odla_CreateConstant(nt, t->nodes, ID("nodes"))
                                       : odla_CreateArgument(nt, ID("nodes"));
  odla_value splits = odla_CreateConstant(vt(ODLA_FLOAT32, 1, NODES, 0), t->splits, ID("s"));
  odla_value members = t->num_members ? odla_CreateConstant(vt(ODLA_FLOAT32, 1, t->num_members, 0),
                                                            t->members, ID("m"))
                                      : NULL;
  odla_value targets = odla_CreateConstant(vt(ODLA_INT32, 1, LEAVES, 0), t->targets, ID("t"));
  odla_value weights = odla_CreateConstant(vt(ODLA_FLOAT32, 1, LEAVES, 0), t->weights, ID("w"));
  odla_value roots = odla_CreateConstant(vt(ODLA_INT32, 1, 2, 0), t->roots, ID("r"));
  return odla_ExtTreeEnsemble(x, nodes, splits, members, targets, weights, roots, t->aggregate,
                              t->post, t->num_targets, ID("y"));
}

static void check_answer(odla_int32 aggregate, const float want[ROWS][TARGETS]) {
  static const float x[ROWS][FEATURES] = {{0, 2}, {1, 3}, {NAN, 5}};
  float y[ROWS][TARGETS];
  tables t = good();
  odla_computation comp;
  odla_context ctx;
  odla_value v;
  int i, j;
  t.aggregate = aggregate;
  odla_CreateComputation(&comp);
  v = build(&t);
  CHECK(v != NULL, "aggregate %d: refused", (int)aggregate);
  odla_SetValueAsOutput(v);
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  CHECK(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL) == ODLA_SUCCESS,
        "aggregate %d: execute", (int)aggregate);
  for (i = 0; i < ROWS; ++i)
    for (j = 0; j < TARGETS; ++j)
      CHECK(y[i][j] == want[i][j], "aggregate %d: y[%d][%d] = %g, want %g", (int)aggregate, i, j,
            y[i][j], want[i][j]);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

static void check_refused(const tables *t, const char *what) {
  odla_computation comp;
  odla_executable exe = NULL;
  odla_CreateComputation(&comp);
  CHECK(build(t) == NULL, "%s: built although invalid", what);
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_INVALID_PARAM, "%s: status", what);
  odla_DestroyComputation(comp);
}

/* A constants array may not replace a table: the builder read them when the graph was built. */
static void check_constants_array_refused(void) {
  static const float x[ROWS][FEATURES] = {{0, 2}, {1, 3}, {NAN, 5}};
  float y[ROWS][TARGETS];
  tables t = good();
  odla_computation comp, other;
  odla_executable exe = NULL;
  odla_constants_array array = NULL;
  odla_context ctx;
  odla_CreateComputation(&comp);
  odla_SetValueAsOutput(build(&t));
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "compile");
  t.weights[0] = 99;
  odla_CreateComputation(&other); /* the array takes the current computation's constants */
  build(&t);
  CHECK(odla_CreateConstantsArray(&array) == ODLA_SUCCESS, "CreateConstantsArray");
  odla_CreateContext(&ctx);
  odla_BindToArgumentById(ID("x"), x, ctx);
  odla_BindToOutputById(ID("y"), y, ctx);
  /* ODLA_INVALID_PARAM on the reference backend (the tables are constants no node reads);
   * libodla_dnnl refuses every constants array. */
  CHECK(odla_AsyncLaunchExecutable(exe, array, ctx, ODLA_COMPUTE_INFERENCE, NULL) != ODLA_SUCCESS,
        "a constants array replacing the tables: launched");
  odla_DestroyContext(ctx);
  odla_DestroyConstantsArray(array);
  odla_DestroyComputation(other);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
}

int main(void) {
  /* x = [0, 2]: A to row 1, 2 is a member: leaf 1; B: 2 != 3: leaf 3. x = [1, 3]: A leaf 0;
   * B: leaf 4. x = [NaN, 5]: A's NaN goes true, 5 is a member: leaf 1; B: leaf 3. */
  static const float sum[ROWS][TARGETS] = {{100, 1}, {210, 0}, {100, 1}};
  static const float max[ROWS][TARGETS] = {{100, 1}, {200, 0}, {100, 1}}; /* unreached: 0 */
  tables t;
  check_answer(ODLA_EXT_TREE_SUM, sum);
  check_answer(ODLA_EXT_TREE_MAX, max);
  check_constants_array_refused();

  t = good();
  t.nodes[1][ODLA_EXT_TREE_COL_TRUE] = 0;
  check_refused(&t, "a branch back to an earlier row");
  t = good();
  t.nodes[0][ODLA_EXT_TREE_COL_TRUE] = 0;
  check_refused(&t, "a branch to its own row");
  t = good();
  t.nodes[0][ODLA_EXT_TREE_COL_TRUE] = NODES;
  check_refused(&t, "a branch past the last row");
  t = good();
  t.nodes[2][ODLA_EXT_TREE_COL_FALSE] = -1 - LEAVES;
  check_refused(&t, "a branch past the last leaf");
  t = good();
  t.nodes[2][ODLA_EXT_TREE_COL_FALSE] = INT32_MIN;
  check_refused(&t, "a branch of INT32_MIN");
  t = good();
  t.nodes[1][ODLA_EXT_TREE_COL_FEATURE] = FEATURES;
  check_refused(&t, "a feature past the input's");
  t = good();
  t.nodes[1][ODLA_EXT_TREE_COL_MODE] = ODLA_EXT_TREE_BRANCH_MEMBER + 1;
  check_refused(&t, "a mode past BRANCH_MEMBER");
  t = good();
  t.nodes[0][ODLA_EXT_TREE_COL_MISSING] = 2;
  check_refused(&t, "a missing flag of 2");
  t = good();
  t.targets[3] = TARGETS;
  check_refused(&t, "a target past num_targets");
  t = good();
  t.roots[1] = NODES;
  check_refused(&t, "a root past the last row");
  t = good();
  t.num_members = 0;
  check_refused(&t, "a MEMBER row without members");
  t = good();
  t.members[2] = 7;
  check_refused(&t, "members without the NaN that ends the set");
  t = good();
  t.nodes_constant = 0;
  check_refused(&t, "a nodes table that is an argument");
  t = good();
  t.nodes_type = ODLA_UINT32;
  check_refused(&t, "a nodes table of uint32");
  t = good();
  t.aggregate = ODLA_EXT_TREE_MAX + 1;
  check_refused(&t, "aggregate_function past MAX");
  t = good();
  t.post = ODLA_EXT_TREE_POST_PROBIT + 1;
  check_refused(&t, "post_transform past PROBIT");
  t = good();
  t.num_targets = -1;
  check_refused(&t, "num_targets -1");
  if (!failures)
    printf("test_tree_ensemble: all checks passed\n");
  return failures != 0;
}
