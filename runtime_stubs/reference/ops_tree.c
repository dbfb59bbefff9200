/* ops_tree.c: odla_ExtTreeEnsemble (odla_ext_tree.h), ai.onnx.ml's tree ensembles, in the
 * reference backend.
 *
 * The builder reads the constant tables once, checks every index in them and copies them into
 * the node's parameter block as one record per node (threshold and member range included),
 * one per leaf, the members of each MEMBER node sorted, and the roots; the kernel reads only
 * that block and the input, so that nothing given at launch can hand it an index the builder
 * did not check (the node's one operand is the input: a constants array that would replace a
 * table is refused). A branch always leads to a later row (odla_ext_tree.h), hence every walk from
 * a root ends at a leaf after at most M steps.
 *
 * Each input row is widened to double once (exact for float16, float and double, so each
 * test compares as the input's type would); targets accumulate in double and are rounded to
 * the input's type after the post transform. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double split;
  int64_t member_begin, member_count; /* MEMBER nodes: their sorted members in the block */
  int32_t feature, mode, missing_true, on_true, on_false;
} ref_tree_node;

typedef struct {
  double weight;
  int32_t target;
} ref_tree_leaf;

/* The parameter block: this header, then the nodes, the leaves, the members and the roots
 * (offsets in bytes from the block's start; doubles first, so that every part is aligned). */
typedef struct {
  int64_t rows, features, num_trees;
  int32_t targets, aggregate, post;
  odla_element_type type;
  size_t nodes_at, leaves_at, members_at, roots_at;
} ref_tree_params;

static int ref_tree_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int ref_tree_is_member(const double *set, int64_t n, double x) {
  int64_t lo = 0, hi = n; /* binary search in the sorted set */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (set[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && set[lo] == x;
}

/* Whether the walk takes node d's true branch for feature value x (ONNX's rule: the test, or
 * a NaN x at a node whose missing values track true). */
static int ref_tree_goes_true(const ref_tree_node *d, const double *members, double x) {
  if (d->missing_true && x != x)
    return 1;
  switch (d->mode) {
  case ODLA_EXT_TREE_BRANCH_LEQ:
    return x <= d->split;
  case ODLA_EXT_TREE_BRANCH_LT:
    return x < d->split;
  case ODLA_EXT_TREE_BRANCH_GTE:
    return x >= d->split;
  case ODLA_EXT_TREE_BRANCH_GT:
    return x > d->split;
  case ODLA_EXT_TREE_BRANCH_EQ:
    return x == d->split;
  case ODLA_EXT_TREE_BRANCH_NEQ:
    return x != d->split;
  default:
    return ref_tree_is_member(members + d->member_begin, d->member_count, x);
  }
}

/* ONNX's erfinv for PROBIT: Winitzki's approximation (a = 0.147), as ONNX's reference and
 * ONNX Runtime compute it, with its limits at +-1. */
static double ref_tree_erfinv(double x) {
  const double pi = 3.14159265358979323846;
  double sgn = x < 0 ? -1.0 : 1.0, w = (1.0 - x) * (1.0 + x), l, v;
  if (w == 0)
    return sgn * HUGE_VAL;
  l = log(w);
  v = 2.0 / (pi * 0.147) + 0.5 * l;
  return sgn * sqrt(-v + sqrt(v * v - l / 0.147));
}

static void ref_tree_post(int32_t post, double *v, int32_t n) {
  int32_t t;
  double top, sum = 0;
  if (post == ODLA_EXT_TREE_POST_LOGISTIC) {
    for (t = 0; t < n; ++t) {
      double e = 1.0 / (1.0 + exp(-fabs(v[t])));
      v[t] = v[t] < 0 ? 1.0 - e : e;
    }
    return;
  }
  if (post == ODLA_EXT_TREE_POST_PROBIT) {
    for (t = 0; t < n; ++t)
      v[t] = 1.41421356 * ref_tree_erfinv(2.0 * v[t] - 1.0);
    return;
  }
  if (post != ODLA_EXT_TREE_POST_SOFTMAX && post != ODLA_EXT_TREE_POST_SOFTMAX_ZERO)
    return;
  if (n == 0)
    return;
  top = v[0];
  for (t = 1; t < n; ++t)
    top = v[t] > top ? v[t] : top;
  for (t = 0; t < n; ++t) {
    /* SOFTMAX_ZERO keeps (near) zeros near zero: v * exp(-max) instead of exp(v - max). */
    int keep = post == ODLA_EXT_TREE_POST_SOFTMAX_ZERO && fabs(v[t]) <= 1e-7;
    v[t] = keep ? v[t] * exp(-top) : exp(v[t] - top);
    sum += v[t];
  }
  for (t = 0; t < n; ++t) /* SOFTMAX_ZERO of an all-zero row: 0.5 each, as ONNX's reference */
    v[t] = sum == 0 && post == ODLA_EXT_TREE_POST_SOFTMAX_ZERO ? 0.5 : v[t] / sum;
}

static odla_status ref_tree_run(const ref_node *node, const ref_io *io) {
  const ref_tree_params *p = (const ref_tree_params *)node->params;
  const unsigned char *block = (const unsigned char *)node->params;
  const ref_tree_node *nodes = (const ref_tree_node *)(block + p->nodes_at);
  const ref_tree_leaf *leaves = (const ref_tree_leaf *)(block + p->leaves_at);
  const double *members = (const double *)(block + p->members_at);
  const int32_t *roots = (const int32_t *)(block + p->roots_at);
  double *x = (double *)io->scratch, *acc = x + p->features;
  unsigned char *hit = (unsigned char *)(acc + p->targets);
  int64_t n, f, k;
  int32_t t;
  for (n = 0; n < p->rows; ++n) {
    for (f = 0; f < p->features; ++f)
      x[f] = ref_get(p->type, io->in[0], n * p->features + f);
    memset(acc, 0, (size_t)p->targets * sizeof *acc);
    memset(hit, 0, (size_t)p->targets);
    for (k = 0; k < p->num_trees; ++k) {
      int32_t c = roots[k];
      const ref_tree_leaf *leaf;
      while (c >= 0) {
        const ref_tree_node *d = &nodes[c];
        c = ref_tree_goes_true(d, members, x[d->feature]) ? d->on_true : d->on_false;
      }
      leaf = &leaves[-1 - (int64_t)c];
      t = leaf->target;
      if (p->aggregate == ODLA_EXT_TREE_SUM || p->aggregate == ODLA_EXT_TREE_AVERAGE)
        acc[t] += leaf->weight;
      else if (!hit[t] ||
               (p->aggregate == ODLA_EXT_TREE_MIN ? leaf->weight < acc[t] : leaf->weight > acc[t]))
        acc[t] = leaf->weight;
      hit[t] = 1;
    }
    if (p->aggregate == ODLA_EXT_TREE_AVERAGE && p->num_trees > 0)
      for (t = 0; t < p->targets; ++t)
        acc[t] /= (double)p->num_trees;
    ref_tree_post(p->post, acc, p->targets);
    for (t = 0; t < p->targets; ++t)
      ref_set(p->type, io->out[0], n * p->targets + t, acc[t]);
  }
  return ODLA_SUCCESS;
}

/* ---- The builder ------------------------------------------------------------------------ */

static int ref_tree_is_constant(odla_value v, odla_element_type t, int rank) {
  return v->kind == REF_CONSTANT && v->data && v->type.element_type == t &&
         v->type.shape.size == rank;
}

/* The checks of the tables: the first problem as a message in `msg`, or 0 when none. */
static int ref_tree_check(odla_value input, odla_value nodes, odla_value splits, odla_value members,
                          odla_value leaf_targets, odla_value leaf_weights, odla_value roots,
                          odla_int32 aggregate, odla_int32 post, odla_int32 targets, char *msg,
                          size_t cap) {
  odla_element_type t = input->type.element_type;
  int64_t m, r, c, num_leaves, num_sets = 0, nans = 0, i;
  if ((t != ODLA_FLOAT32 && t != ODLA_FLOAT64 && t != ODLA_FLOAT16) || input->type.shape.size != 2)
    return ref_snprintf(msg, cap, "input must be a float32, float64 or float16 matrix [N, F]");
  if (!ref_tree_is_constant(nodes, ODLA_INT32, 2) ||
      nodes->type.shape.dims[1] != ODLA_EXT_TREE_COLUMNS || !ref_tree_is_constant(splits, t, 1) ||
      splits->type.shape.dims[0] != nodes->type.shape.dims[0] ||
      (members && !ref_tree_is_constant(members, t, 1)) ||
      !ref_tree_is_constant(leaf_targets, ODLA_INT32, 1) ||
      !ref_tree_is_constant(leaf_weights, t, 1) ||
      leaf_weights->type.shape.dims[0] != leaf_targets->type.shape.dims[0] ||
      !ref_tree_is_constant(roots, ODLA_INT32, 1))
    return ref_snprintf(msg, cap,
                        "nodes (int32 [M, %d]), splits (input's type [M]), members (input's "
                        "type [K] or NULL), leaf_targets (int32 [L]), leaf_weights (input's type "
                        "[L]) and roots (int32 [R]) must be constants",
                        ODLA_EXT_TREE_COLUMNS);
  if (aggregate < ODLA_EXT_TREE_AVERAGE || aggregate > ODLA_EXT_TREE_MAX)
    return ref_snprintf(msg, cap,
                        "aggregate_function %d is not ODLA_EXT_TREE_AVERAGE to _MAX (0 to 3)",
                        (int)aggregate);
  if (post < ODLA_EXT_TREE_POST_NONE || post > ODLA_EXT_TREE_POST_PROBIT)
    return ref_snprintf(msg, cap,
                        "post_transform %d is not ODLA_EXT_TREE_POST_NONE to _PROBIT (0 to "
                        "4)",
                        (int)post);
  if (targets < 0)
    return ref_snprintf(msg, cap, "num_targets %d is negative", (int)targets);
  m = nodes->type.shape.dims[0];
  num_leaves = leaf_targets->type.shape.dims[0];
  if (m > INT32_MAX || num_leaves > INT32_MAX)
    return ref_snprintf(msg, cap, "%lld nodes and %lld leaves: at most %ld each", (long long)m,
                        (long long)num_leaves, (long)INT32_MAX);
  for (r = 0; r < m; ++r) {
    int64_t feature =
        ref_get_int(ODLA_INT32, nodes->data, r * ODLA_EXT_TREE_COLUMNS + ODLA_EXT_TREE_COL_FEATURE);
    int64_t mode =
        ref_get_int(ODLA_INT32, nodes->data, r * ODLA_EXT_TREE_COLUMNS + ODLA_EXT_TREE_COL_MODE);
    int64_t missing =
        ref_get_int(ODLA_INT32, nodes->data, r * ODLA_EXT_TREE_COLUMNS + ODLA_EXT_TREE_COL_MISSING);
    if (feature < 0 || feature >= input->type.shape.dims[1])
      return ref_snprintf(msg, cap,
                          "node %lld: feature %lld is not in [0, %lld), the input's dim 1",
                          (long long)r, (long long)feature, (long long)input->type.shape.dims[1]);
    if (mode < 0 || mode > ODLA_EXT_TREE_BRANCH_MEMBER)
      return ref_snprintf(msg, cap,
                          "node %lld: mode %lld is not ODLA_EXT_TREE_BRANCH_LEQ to _MEMBER "
                          "(0 to 6)",
                          (long long)r, (long long)mode);
    if (missing != 0 && missing != 1)
      return ref_snprintf(msg, cap, "node %lld: missing %lld is not 0 or 1", (long long)r,
                          (long long)missing);
    num_sets += mode == ODLA_EXT_TREE_BRANCH_MEMBER;
    for (c = ODLA_EXT_TREE_COL_TRUE; c <= ODLA_EXT_TREE_COL_FALSE; ++c) {
      int64_t b = ref_get_int(ODLA_INT32, nodes->data, r * ODLA_EXT_TREE_COLUMNS + c);
      if (b >= 0 ? (b <= r || b >= m) : -1 - b >= num_leaves)
        return ref_snprintf(msg, cap,
                            "node %lld: branch %lld is neither a later node (< %lld) nor a "
                            "leaf (-1 - leaf, %lld leaves)",
                            (long long)r, (long long)b, (long long)m, (long long)num_leaves);
    }
  }
  for (i = 0; members && i < members->type.shape.dims[0]; ++i) {
    double v = ref_get(t, members->data, i);
    nans += v != v;
  }
  if (nans != num_sets)
    return ref_snprintf(msg, cap, "%lld MEMBER nodes, and members holds %lld sets (NaN-ended)",
                        (long long)num_sets, (long long)nans);
  for (i = 0; i < num_leaves; ++i) {
    int64_t target = ref_get_int(ODLA_INT32, leaf_targets->data, i);
    if (target < 0 || target >= targets)
      return ref_snprintf(msg, cap, "leaf %lld: target %lld is not in [0, %d)", (long long)i,
                          (long long)target, (int)targets);
  }
  for (i = 0; i < roots->type.shape.dims[0]; ++i) {
    int64_t root = ref_get_int(ODLA_INT32, roots->data, i);
    if (root < 0 || root >= m)
      return ref_snprintf(msg, cap, "root %lld: node %lld is not in [0, %lld)", (long long)i,
                          (long long)root, (long long)m);
  }
  return 0;
}

/* The parameter block of checked tables (ref_tree_params), or NULL when out of memory. */
static ref_tree_params *ref_tree_block(odla_value input, odla_value nodes, odla_value splits,
                                       odla_value members, odla_value leaf_targets,
                                       odla_value leaf_weights, odla_value roots, size_t *bytes) {
  odla_element_type t = input->type.element_type;
  int64_t m = nodes->type.shape.dims[0], num_leaves = leaf_targets->type.shape.dims[0];
  int64_t num_members = members ? members->type.shape.dims[0] : 0;
  int64_t num_trees = roots->type.shape.dims[0], r, i, at = 0;
  ref_tree_params *p;
  ref_tree_node *d;
  ref_tree_leaf *leaf;
  double *set;
  size_t nodes_at = (sizeof *p + 7) / 8 * 8;
  size_t leaves_at = nodes_at + (size_t)m * sizeof *d;
  size_t members_at = leaves_at + (size_t)num_leaves * sizeof *leaf;
  size_t roots_at = members_at + (size_t)num_members * sizeof(double);
  *bytes = roots_at + (size_t)num_trees * sizeof(int32_t);
  p = (ref_tree_params *)ref_calloc(1, *bytes);
  if (!p)
    return NULL;
  p->features = input->type.shape.dims[1];
  p->rows = input->type.shape.dims[0];
  p->num_trees = num_trees;
  p->type = t;
  p->nodes_at = nodes_at;
  p->leaves_at = leaves_at;
  p->members_at = members_at;
  p->roots_at = roots_at;
  d = (ref_tree_node *)((unsigned char *)p + nodes_at);
  set = (double *)((unsigned char *)p + members_at);
  for (i = 0; i < num_members; ++i)
    set[i] = ref_get(t, members->data, i);
  for (r = 0; r < m; ++r, ++d) {
    const void *row = nodes->data;
    int64_t base = r * ODLA_EXT_TREE_COLUMNS;
    d->feature = (int32_t)ref_get_int(ODLA_INT32, row, base + ODLA_EXT_TREE_COL_FEATURE);
    d->mode = (int32_t)ref_get_int(ODLA_INT32, row, base + ODLA_EXT_TREE_COL_MODE);
    d->missing_true = (int32_t)ref_get_int(ODLA_INT32, row, base + ODLA_EXT_TREE_COL_MISSING);
    d->on_true = (int32_t)ref_get_int(ODLA_INT32, row, base + ODLA_EXT_TREE_COL_TRUE);
    d->on_false = (int32_t)ref_get_int(ODLA_INT32, row, base + ODLA_EXT_TREE_COL_FALSE);
    d->split = ref_get(t, splits->data, r);
    if (d->mode == ODLA_EXT_TREE_BRANCH_MEMBER) { /* the next NaN-ended set, sorted */
      d->member_begin = at;
      while (set[at] == set[at]) /* ref_tree_check counted a NaN for every MEMBER node */
        ++at;
      d->member_count = at - d->member_begin;
      qsort(set + d->member_begin, (size_t)d->member_count, sizeof *set, ref_tree_cmp_double);
      ++at;
    }
  }
  leaf = (ref_tree_leaf *)((unsigned char *)p + leaves_at);
  for (i = 0; i < num_leaves; ++i) {
    leaf[i].weight = ref_get(t, leaf_weights->data, i);
    leaf[i].target = (int32_t)ref_get_int(ODLA_INT32, leaf_targets->data, i);
  }
  for (i = 0; i < num_trees; ++i)
    ((int32_t *)((unsigned char *)p + roots_at))[i] =
        (int32_t)ref_get_int(ODLA_INT32, roots->data, i);
  return p;
}

odla_value odla_ExtTreeEnsemble(odla_value input, odla_value nodes, odla_value splits,
                                odla_value members, odla_value leaf_targets,
                                odla_value leaf_weights, odla_value roots,
                                odla_int32 aggregate_function, odla_int32 post_transform,
                                odla_int32 num_targets, const odla_value_id value_id) {
  odla_value in[7];
  odla_value_type out;
  ref_tree_params *p;
  odla_value v;
  size_t bytes, scratch;
  char msg[256];
  in[0] = input;
  in[1] = nodes;
  in[2] = splits;
  in[3] = members;
  in[4] = leaf_targets;
  in[5] = leaf_weights;
  in[6] = roots;
  if (!ref_check_operands("ExtTreeEnsemble", 3, in) ||
      (members && !ref_check_operands("ExtTreeEnsemble", 1, &in[3])) ||
      !ref_check_operands("ExtTreeEnsemble", 3, &in[4]))
    return NULL;
  if (ref_tree_check(input, nodes, splits, members, leaf_targets, leaf_weights, roots,
                     aggregate_function, post_transform, num_targets, msg, sizeof msg))
    return ref_fail(ODLA_INVALID_PARAM, "ExtTreeEnsemble", "%s", msg);
  p = ref_tree_block(input, nodes, splits, members, leaf_targets, leaf_weights, roots, &bytes);
  if (!p)
    return ref_fail(ODLA_MEM_ERROR, "ExtTreeEnsemble", "no memory for the tables (%lu bytes)",
                    (unsigned long)bytes);
  p->targets = num_targets;
  p->aggregate = aggregate_function;
  p->post = post_transform;
  out.element_type = input->type.element_type;
  out.shape.size = 2;
  out.shape.dims[0] = input->type.shape.dims[0];
  out.shape.dims[1] = num_targets;
  /* Scratch: one input row as doubles, the targets' sums and whether a tree reached each. */
  scratch = (size_t)(p->features + num_targets) * sizeof(double) + (size_t)num_targets + 1;
  /* The node reads input alone: the tables live in its parameter block, and a constants array
   * that would replace one of them is refused (executable_io.c: a constant no node reads
   * shaped the graph when it was built). */
  v = ref_add_op("ExtTreeEnsemble", ref_tree_run, 1, in, out, value_id, p, bytes);
  ref_free(p);
  if (v)
    v->node->scratch_bytes = scratch;
  return v;
}
