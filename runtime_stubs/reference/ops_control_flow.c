/* ops_control_flow.c: ODLA 0.5's control flow (odla_ops_control_flow.h) in the reference
 * backend. The standard leaves the calls' meaning open; this backend defines it (compile
 * mode only; docs/backends.md says the same):
 *
 * If:  odla_BeginIf(cond, id); odla_EnterBranchBody(1); <then ops>; odla_EnterBranchBody(0);
 *      <else ops>; results = odla_EndIf(ids).
 *   cond is a bool value with one element. Inside a branch, odla_SetValueAsOutput(v) marks v
 *   as the branch's next result (any value: a branch op's result, an outer value, a
 *   constant); both branches mark the same number of results with the same types, and
 *   odla_EndIf returns one value per result, holding the taken branch's. Only the taken
 *   branch's ops run. Each branch may be entered once; a branch never entered is empty.
 *
 * Loop: odla_BeginLoop(trip_count, id); v_k = odla_CreateLoopVariable(init_k, id) for each
 *      loop variable, before any other op of the body; <body ops>;
 *      results = odla_EndLoop(condition, output_values, flags, ids).
 *   trip_count is an integer value with one element read when the loop starts, or NULL for
 *   no limit. A loop variable holds init_k before the first iteration. output_values has
 *   one entry per loop variable first (in creation order: the variable's value for the next
 *   iteration), then any number of per-iteration values. condition is NULL or one of the
 *   loop's bool variables: before each iteration the loop stops if it is false (so its
 *   initial value decides whether the first iteration runs). Iteration i (from 0) runs while
 *   i < trip_count and the condition holds; at least one of the two must be given.
 *   odla_EndLoop returns one value per output value, by its flag (flags == NULL: all
 *   ODLA_LOOP_LAST_VALUE):
 *     ODLA_LOOP_LAST_VALUE  a variable's final value (its init when no iteration ran); a
 *                           per-iteration value's value in the last iteration (zeros if none)
 *     ODLA_LOOP_FWD_BEFORE  stacked: [L] + the value's shape, row i = a variable's value at
 *                           the start of iteration i (a per-iteration value: its value in i)
 *     ODLA_LOOP_FWD_AFTER   stacked, row i = the value after iteration i (the update)
 *     ODLA_LOOP_REV_BEFORE / ODLA_LOOP_REV_AFTER   the same with row L-1-i
 *   A stacked result needs a constant trip count: its value is the length L. Rows of
 *   iterations that did not run (the condition stopped the loop) are zero.
 *
 * Implementation: the builders append marker nodes around the ops of a region, which stay
 * in the computation's one node list: [BeginIf] [then ops] [else ops] [EndIf], and
 * [BeginLoop] [LoopVariable...] [body ops] [EndLoop]. The BeginIf and BeginLoop kernels run
 * their region's ranges themselves (ref_run_nodes), copy results, and make the executor
 * continue after the region's end node. Memory: one plan serves every iteration because
 * ref_plan_regions makes values read in a loop body but defined before it, loop variables
 * and a loop's results live across the whole loop. */
#include "ref.h"
#include "ref_types.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int first[2], last[2]; /* node ranges of the else (0) and then (1) branches */
  int end;               /* index of the EndIf node */
  int num_results;
} ref_if_params;

typedef struct {
  int end;      /* index of the EndLoop node */
  int num_vars; /* LoopVariable nodes follow the BeginLoop node */
  int cond_var; /* the variable that is the condition, or -1 */
  int num_outputs;
  int64_t length; /* stacked results' length: the constant trip count, or -1 */
  odla_loop_output_mode modes[ODLA_MAX_OUTPUTS];
} ref_loop_params;

/* An open region while building. */
typedef struct ref_region {
  int is_loop;
  int begin;  /* the BeginIf / BeginLoop node */
  int branch; /* If: the branch being built (1 then, 0 else), -1 before the first */
  int entered[2];
  int first[2], last[2];
  int num_results[2];
  odla_value results[2][ODLA_MAX_OUTPUTS];
  int num_vars;
  odla_value vars[ODLA_MAX_OUTPUTS];
  struct ref_region *outer;
} ref_region;

/* Marker nodes (LoopVariable, EndIf, EndLoop) do nothing themselves: the kernel of the
 * region's first node does their work and continues after the region. */
static odla_status ref_marker(const ref_node *node, const ref_io *io) {
  (void)node;
  (void)io;
  return ODLA_SUCCESS;
}

static void ref_copy(odla_context ctx, odla_value from, void *to) {
  const void *src = ref_value_data(ctx, from);
  size_t n = ref_bytes(&from->type);
  if (n && src != to)
    memmove(to, src, n);
}

static odla_status ref_run_if(const ref_node *node, const ref_io *io) {
  const ref_if_params *p = (const ref_if_params *)node->params;
  ref_exec *x = io->exec;
  const ref_node *end = x->comp->nodes[p->end];
  int taken = *(const uint8_t *)io->in[0] ? 1 : 0, k;
  odla_status s = ref_run_nodes(x, p->first[taken], p->last[taken]);
  if (s != ODLA_SUCCESS)
    return s;
  /* EndIf's operands: the then results, then the else results. */
  for (k = 0; k < p->num_results; ++k)
    ref_copy(x->ctx, end->inputs[(taken ? 0 : p->num_results) + k],
             ref_value_data(x->ctx, end->outputs[k]));
  x->next = p->end + 1;
  return ODLA_SUCCESS;
}

static int ref_is_stacked(odla_loop_output_mode m) { return m != ODLA_LOOP_LAST_VALUE; }
static int ref_is_before(odla_loop_output_mode m) {
  return m == ODLA_LOOP_FWD_BEFORE || m == ODLA_LOOP_REV_BEFORE;
}

/* Writes `v`'s data as row i of a stacked result. */
static void ref_stack_row(odla_context ctx, const ref_loop_params *p, int j, odla_value v,
                          void *stacked, int64_t i) {
  size_t row = ref_bytes(&v->type);
  int64_t at = (p->modes[j] == ODLA_LOOP_REV_BEFORE || p->modes[j] == ODLA_LOOP_REV_AFTER)
                   ? p->length - 1 - i
                   : i;
  if (row)
    memcpy((unsigned char *)stacked + (size_t)at * row, ref_value_data(ctx, v), row);
}

static odla_status ref_run_loop(const ref_node *node, const ref_io *io) {
  const ref_loop_params *p = (const ref_loop_params *)node->params;
  ref_exec *x = io->exec;
  odla_computation comp = x->comp;
  const ref_node *end = comp->nodes[p->end];
  int body = node->index + 1 + p->num_vars, j;
  int64_t trip = node->num_inputs ? ref_get_int(node->inputs[0]->type.element_type, io->in[0], 0)
                                  : INT64_MAX,
          i;
  unsigned char *staging = (unsigned char *)io->exec->ctx->arena + end->scratch_offset;
  for (j = 0; j < p->num_vars; ++j) {
    const ref_node *var = comp->nodes[node->index + 1 + j];
    ref_copy(x->ctx, var->inputs[0], ref_value_data(x->ctx, var->outputs[0]));
  }
  for (j = 0; j < p->num_outputs; ++j)
    if (ref_is_stacked(p->modes[j]) || j >= p->num_vars)
      memset(ref_value_data(x->ctx, end->outputs[j]), 0, ref_bytes(&end->outputs[j]->type));
  for (i = 0; i < trip; ++i) {
    odla_status s;
    size_t at = 0;
    if (p->cond_var >= 0 && !*(const uint8_t *)ref_value_data(
                                x->ctx, comp->nodes[node->index + 1 + p->cond_var]->outputs[0]))
      break;
    for (j = 0; j < p->num_vars; ++j)
      if (ref_is_before(p->modes[j]))
        ref_stack_row(x->ctx, p, j, comp->nodes[node->index + 1 + j]->outputs[0],
                      ref_value_data(x->ctx, end->outputs[j]), i);
    s = ref_run_nodes(x, body, p->end);
    if (s != ODLA_SUCCESS)
      return s;
    for (j = 0; j < p->num_outputs; ++j) {
      void *out = ref_value_data(x->ctx, end->outputs[j]);
      if (ref_is_stacked(p->modes[j]) && (j >= p->num_vars || !ref_is_before(p->modes[j])))
        ref_stack_row(x->ctx, p, j, end->inputs[j], out, i);
      else if (!ref_is_stacked(p->modes[j]) && j >= p->num_vars)
        ref_copy(x->ctx, end->inputs[j], out);
    }
    /* Updates go through staging: one variable's update may be another variable. */
    for (j = 0; j < p->num_vars; ++j) {
      size_t n = ref_bytes(&end->inputs[j]->type);
      if (n)
        memcpy(staging + at, ref_value_data(x->ctx, end->inputs[j]), n);
      at += (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
    }
    for (j = 0, at = 0; j < p->num_vars; ++j) {
      size_t n = ref_bytes(&end->inputs[j]->type);
      if (n)
        memcpy(ref_value_data(x->ctx, comp->nodes[node->index + 1 + j]->outputs[0]), staging + at,
               n);
      at += (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
    }
  }
  for (j = 0; j < p->num_vars; ++j)
    if (!ref_is_stacked(p->modes[j]))
      ref_copy(x->ctx, comp->nodes[node->index + 1 + j]->outputs[0],
               ref_value_data(x->ctx, end->outputs[j]));
  x->next = p->end + 1;
  return ODLA_SUCCESS;
}

/* ---- Builders ------------------------------------------------------------------------- */

static odla_computation ref_region_comp(const char *op) {
  odla_computation comp = ref_current();
  if (!ref_check_operands(op, 0, NULL))
    return NULL;
  if (comp->interpret) {
    ref_fail(ODLA_UNSUPPORTED_OP, op,
             "control flow needs compile mode (ops of a body run "
             "conditionally or repeatedly)");
    return NULL;
  }
  return comp;
}

static ref_region *ref_push_region(odla_computation comp, const char *op, int is_loop) {
  ref_region *r = (ref_region *)ref_calloc(1, sizeof *r);
  if (!r) {
    ref_fail(ODLA_MEM_ERROR, op, "out of memory");
    return NULL;
  }
  r->is_loop = is_loop;
  r->begin = comp->num_nodes - 1;
  r->branch = -1;
  r->outer = comp->regions;
  comp->regions = r;
  return r;
}

static void ref_pop_region(odla_computation comp) {
  ref_region *r = comp->regions;
  comp->regions = r->outer;
  ref_free(r);
}

void ref_free_regions(odla_computation comp) {
  while (comp->regions)
    ref_pop_region(comp);
}

static int ref_one_element(odla_value v, int want_bool) {
  return ref_count(&v->type.shape) == 1 &&
         (want_bool ? v->type.element_type == ODLA_BOOL : ref_is_int(v->type.element_type));
}

odla_status odla_BeginIf(odla_value condition, odla_value_id value_id) {
  odla_computation comp = ref_region_comp("BeginIf");
  ref_if_params params;
  (void)value_id;
  if (!comp || !ref_check_operands("BeginIf", 1, &condition))
    return comp && comp->error ? comp->error : ODLA_INVALID_PARAM;
  if (!ref_one_element(condition, 1)) {
    ref_fail(ODLA_INVALID_PARAM, "BeginIf", "condition '%s' must be a bool with one element",
             condition->id);
    return ODLA_INVALID_PARAM;
  }
  memset(&params, 0, sizeof params);
  if (!ref_add_node("BeginIf", ref_run_if, 1, &condition, 0, NULL, NULL, &params, sizeof params) ||
      !ref_push_region(comp, "BeginIf", 0))
    return comp->error;
  return ODLA_SUCCESS;
}

odla_status odla_EnterBranchBody(odla_bool true_branch) {
  odla_computation comp = ref_region_comp("EnterBranchBody");
  ref_region *r;
  int b = true_branch ? 1 : 0;
  if (!comp)
    return ODLA_INVALID_PARAM;
  r = comp->regions;
  if (!r || r->is_loop) {
    ref_fail(ODLA_INVALID_PARAM, "EnterBranchBody", "no odla_BeginIf is open");
    return ODLA_INVALID_PARAM;
  }
  if (r->entered[b]) {
    ref_fail(ODLA_INVALID_PARAM, "EnterBranchBody", "the %s branch was already entered",
             b ? "then" : "else");
    return ODLA_INVALID_PARAM;
  }
  if (r->branch >= 0)
    r->last[r->branch] = comp->num_nodes;
  r->branch = b;
  r->entered[b] = 1;
  r->first[b] = comp->num_nodes;
  return ODLA_SUCCESS;
}

odla_status ref_set_region_result(odla_computation comp, odla_value value) {
  ref_region *r = comp->regions;
  if (r->is_loop || r->branch < 0) {
    ref_fail(ODLA_INVALID_PARAM, "SetValueAsOutput",
             "value '%s': inside %s, outputs are set with odla_EndLoop", value->id,
             r->is_loop ? "a loop body" : "an If before odla_EnterBranchBody");
    return ODLA_INVALID_PARAM;
  }
  if (!ref_check_operands("SetValueAsOutput", 1, &value))
    return comp->error;
  if (r->num_results[r->branch] == ODLA_MAX_OUTPUTS) {
    ref_fail(ODLA_INVALID_PARAM, "SetValueAsOutput", "more than %d branch results",
             ODLA_MAX_OUTPUTS);
    return ODLA_INVALID_PARAM;
  }
  r->results[r->branch][r->num_results[r->branch]++] = value;
  return ODLA_SUCCESS;
}

static odla_values ref_no_values(void) {
  odla_values none;
  memset(&none, 0, sizeof none);
  return none;
}

odla_values odla_EndIf(odla_value_ids value_ids) {
  odla_computation comp = ref_region_comp("EndIf");
  odla_values res = ref_no_values();
  odla_value ins[2 * ODLA_MAX_OUTPUTS];
  odla_value_type types[ODLA_MAX_OUTPUTS];
  ref_if_params *p;
  ref_region *r;
  ref_node *end;
  int n, k, b;
  if (!comp)
    return res;
  r = comp->regions;
  if (!r || r->is_loop) {
    ref_fail(ODLA_INVALID_PARAM, "EndIf", "no odla_BeginIf is open");
    return res;
  }
  if (r->branch >= 0)
    r->last[r->branch] = comp->num_nodes;
  for (b = 0; b < 2; ++b)
    if (!r->entered[b])
      r->first[b] = r->last[b] = comp->num_nodes;
  n = r->num_results[1];
  if (r->num_results[0] != n) {
    ref_fail(ODLA_INVALID_PARAM, "EndIf", "the then branch has %d results, the else branch %d", n,
             r->num_results[0]);
    return res;
  }
  if (value_ids.size != (odla_size_t)n) {
    ref_fail(ODLA_INVALID_PARAM, "EndIf", "%d value ids for %d results", (int)value_ids.size, n);
    return res;
  }
  for (k = 0; k < n; ++k) {
    odla_value t = r->results[1][k], e = r->results[0][k];
    if (t->type.element_type != e->type.element_type ||
        !ref_same_shape(&t->type.shape, &e->type.shape)) {
      char a[128], c[128];
      ref_fail(ODLA_INVALID_PARAM, "EndIf",
               "result %d is %s%s in the then branch but %s%s in "
               "the else branch",
               k, ref_type_name(t->type.element_type), ref_shape_str(&t->type.shape, a, sizeof a),
               ref_type_name(e->type.element_type), ref_shape_str(&e->type.shape, c, sizeof c));
      return res;
    }
    ins[k] = t;
    ins[n + k] = e;
    types[k] = ref_type_of(t);
  }
  end = ref_add_node("EndIf", ref_marker, 2 * n, ins, n, types, value_ids.value_ids, NULL, 0);
  if (!end)
    return res;
  p = (ref_if_params *)comp->nodes[r->begin]->params;
  for (b = 0; b < 2; ++b) {
    p->first[b] = r->first[b];
    p->last[b] = r->last[b];
  }
  p->end = end->index;
  p->num_results = n;
  ref_pop_region(comp);
  res.size = (odla_size_t)n;
  for (k = 0; k < n; ++k)
    res.values[k] = end->outputs[k];
  return res;
}

odla_status odla_BeginLoop(odla_value trip_count, odla_value_id value_id) {
  odla_computation comp = ref_region_comp("BeginLoop");
  ref_loop_params params;
  (void)value_id;
  if (!comp || (trip_count && !ref_check_operands("BeginLoop", 1, &trip_count)))
    return comp && comp->error ? comp->error : ODLA_INVALID_PARAM;
  if (trip_count && !ref_one_element(trip_count, 0)) {
    ref_fail(ODLA_INVALID_PARAM, "BeginLoop",
             "trip count '%s' must be an integer with one "
             "element",
             trip_count->id);
    return ODLA_INVALID_PARAM;
  }
  memset(&params, 0, sizeof params);
  if (!ref_add_node("BeginLoop", ref_run_loop, trip_count ? 1 : 0, &trip_count, 0, NULL, NULL,
                    &params, sizeof params) ||
      !ref_push_region(comp, "BeginLoop", 1))
    return comp->error;
  return ODLA_SUCCESS;
}

odla_value odla_CreateLoopVariable(odla_value init_value, odla_value_id value_id) {
  odla_computation comp = ref_region_comp("CreateLoopVariable");
  ref_region *r;
  odla_value v;
  if (!comp || !ref_check_operands("CreateLoopVariable", 1, &init_value))
    return NULL;
  r = comp->regions;
  if (!r || !r->is_loop)
    return ref_fail(ODLA_INVALID_PARAM, "CreateLoopVariable", "no odla_BeginLoop is open");
  if (comp->num_nodes != r->begin + 1 + r->num_vars)
    return ref_fail(ODLA_INVALID_PARAM, "CreateLoopVariable",
                    "loop variables come right after odla_BeginLoop, before the body's ops");
  if (r->num_vars == ODLA_MAX_OUTPUTS)
    return ref_fail(ODLA_INVALID_PARAM, "CreateLoopVariable", "more than %d loop variables",
                    ODLA_MAX_OUTPUTS);
  v = ref_add_op("LoopVariable", ref_marker, 1, &init_value, ref_type_of(init_value), value_id,
                 NULL, 0);
  if (v)
    r->vars[r->num_vars++] = v;
  return v;
}

odla_values odla_EndLoop(odla_value condition, odla_values output_values,
                         const odla_loop_output_mode *flags, odla_value_ids value_ids) {
  odla_computation comp = ref_region_comp("EndLoop");
  odla_values res = ref_no_values();
  odla_value_type types[ODLA_MAX_OUTPUTS];
  ref_loop_params *p;
  const ref_node *begin;
  ref_region *r;
  ref_node *end;
  int n = (int)output_values.size, j, k;
  size_t staging = 0;
  int64_t length = -1;
  if (!comp)
    return res;
  r = comp->regions;
  if (!r || !r->is_loop) {
    ref_fail(ODLA_INVALID_PARAM, "EndLoop", "no odla_BeginLoop is open");
    return res;
  }
  begin = comp->nodes[r->begin];
  if (n > ODLA_MAX_OUTPUTS || n < r->num_vars || value_ids.size != output_values.size) {
    ref_fail(ODLA_INVALID_PARAM, "EndLoop",
             "%d output values and %d value ids for a loop with "
             "%d variables",
             n, (int)value_ids.size, r->num_vars);
    return res;
  }
  if (!ref_check_operands("EndLoop", n, output_values.values))
    return res;
  p = (ref_loop_params *)begin->params;
  p->cond_var = -1;
  if (condition) {
    for (k = 0; k < r->num_vars && r->vars[k] != condition; ++k)
      ;
    if (k == r->num_vars || condition->type.element_type != ODLA_BOOL ||
        ref_count(&condition->type.shape) != 1) {
      ref_fail(ODLA_INVALID_PARAM, "EndLoop",
               "condition '%s' must be a bool loop variable "
               "with one element of this loop",
               condition->id);
      return res;
    }
    p->cond_var = k;
  } else if (begin->num_inputs == 0) {
    ref_fail(ODLA_INVALID_PARAM, "EndLoop",
             "a loop with neither trip count nor condition "
             "never ends");
    return res;
  }
  if (begin->num_inputs && begin->inputs[0]->kind == REF_CONSTANT) {
    length = ref_get_int(begin->inputs[0]->type.element_type, begin->inputs[0]->data, 0);
    length = length < 0 ? 0 : length;
  }
  for (j = 0; j < n; ++j) {
    odla_value v = output_values.values[j];
    odla_loop_output_mode mode = flags ? flags[j] : ODLA_LOOP_LAST_VALUE;
    if ((unsigned)mode > ODLA_LOOP_REV_AFTER) {
      ref_fail(ODLA_INVALID_PARAM, "EndLoop",
               "flag %d of output %d is not an "
               "odla_loop_output_mode",
               (int)mode, j);
      return res;
    }
    if (j < r->num_vars && (v->type.element_type != r->vars[j]->type.element_type ||
                            !ref_same_shape(&v->type.shape, &r->vars[j]->type.shape))) {
      ref_fail(ODLA_INVALID_PARAM, "EndLoop",
               "output %d ('%s') updates loop variable '%s' but "
               "their types differ",
               j, v->id, r->vars[j]->id);
      return res;
    }
    types[j] = ref_type_of(v);
    if (mode != ODLA_LOOP_LAST_VALUE) {
      if (length < 0) {
        ref_fail(ODLA_INVALID_PARAM, "EndLoop",
                 "output %d ('%s') is stacked, which needs a "
                 "constant trip count (the stacked length)",
                 j, v->id);
        return res;
      }
      if (v->type.shape.size >= ODLA_MAX_DIMENSION) {
        ref_fail(ODLA_INVALID_PARAM, "EndLoop", "stacking output %d ('%s') exceeds %d dims", j,
                 v->id, ODLA_MAX_DIMENSION);
        return res;
      }
      for (k = v->type.shape.size; k > 0; --k)
        types[j].shape.dims[k] = v->type.shape.dims[k - 1];
      types[j].shape.dims[0] = length;
      types[j].shape.size = v->type.shape.size + 1;
    }
    p->modes[j] = mode;
    if (j < r->num_vars)
      staging += (ref_bytes(&v->type) + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
  }
  end = ref_add_node("EndLoop", ref_marker, n, output_values.values, n, types, value_ids.value_ids,
                     NULL, 0);
  if (!end)
    return res;
  end->scratch_bytes = staging;
  p->end = end->index;
  p->num_vars = r->num_vars;
  p->num_outputs = n;
  p->length = length;
  ref_pop_region(comp);
  res.size = (odla_size_t)n;
  for (j = 0; j < n; ++j)
    res.values[j] = end->outputs[j];
  return res;
}

/* ---- Planning ------------------------------------------------------------------------- */

void ref_plan_regions(odla_computation comp) {
  int b, i;
  for (b = 0; b < comp->num_nodes; ++b) {
    const ref_node *node = comp->nodes[b];
    const ref_loop_params *p;
    int e;
    if (node->run != ref_run_loop)
      continue;
    p = (const ref_loop_params *)node->params;
    e = p->end;
    for (i = 0; i < comp->num_values; ++i) {
      odla_value v = comp->values[i];
      const int def = v->node ? v->node->index : -1;
      ref_value_place *w;
      if (v->kind == REF_CONSTANT)
        continue;
      w = ref_where(v);
      if (def == e || (def > b && def <= b + p->num_vars)) {
        /* the loop's results (written in every iteration) and its variables */
        w->first_use = b;
        w->last_use = w->last_use > e ? w->last_use : e;
      } else if (w->first_use < b && w->last_use >= b && w->last_use < e) {
        w->last_use = e; /* defined before the loop, read in every iteration */
      }
    }
  }
}
