/* planner.c: static planning of the activation arena.
 *
 * Greedy by size (the scheme of TFLM's GreedyMemoryPlanner):
 *   1. Nodes are numbered in execution order.
 *   2. Each intermediate result (not an argument, constant or bound output) is a buffer that
 *      lives from its producing node to its last consumer; each node's scratch is a buffer
 *      that lives during that node only.
 *   3. Buffers are sorted by size, largest first (ties: earlier first use, then creation
 *      order, so plans are deterministic).
 *   4. Each buffer in turn takes the lowest 64-byte aligned offset at which it overlaps no
 *      already placed buffer whose lifetime overlaps its own.
 *   5. The arena size is the largest end offset.
 * Before step 2, in-place reuse: walking the nodes in order, a node's result shares the
 * buffer of the operand named by its inplace_input when that operand is an intermediate
 * result of the same size whose buffer (with everything already sharing it) is last used
 * by this node. Sharing values form one buffer whose lifetime spans them all.
 * Worked example (sizes in 64-byte units): A lives [0,1] size 2, B [1,2] size 1, C [2,3]
 * size 2. Order A, C, B: A at 0; C at 0 (lifetimes [0,1] and [2,3] are disjoint); B at 2
 * (it overlaps A at node 1 and C at node 2). Arena: 3 units. */
#include "ref.h"

#include <stdlib.h>

static size_t ref_align_up(size_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

static int ref_by_size(const void *pa, const void *pb) {
  const ref_buffer *a = (const ref_buffer *)pa, *b = (const ref_buffer *)pb;
  if (a->size != b->size)
    return a->size > b->size ? -1 : 1;
  if (a->first != b->first)
    return a->first < b->first ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static int ref_by_offset(const void *pa, const void *pb) {
  const ref_buffer *a = *(const ref_buffer *const *)pa, *b = *(const ref_buffer *const *)pb;
  return a->placed < b->placed ? -1 : a->placed > b->placed;
}

size_t ref_plan_buffers(ref_buffer *bufs, int n) {
  ref_buffer **live = (ref_buffer **)malloc((size_t)(n ? n : 1) * sizeof *live);
  size_t arena = 0;
  int i, j;
  if (!live)
    return (size_t)-1;
  qsort(bufs, (size_t)n, sizeof *bufs, ref_by_size);
  for (i = 0; i < n; ++i) {
    int num_live = 0;
    size_t at = 0;
    for (j = 0; j < i; ++j)
      if (bufs[j].first <= bufs[i].last && bufs[i].first <= bufs[j].last)
        live[num_live++] = &bufs[j];
    qsort(live, (size_t)num_live, sizeof *live, ref_by_offset);
    for (j = 0; j < num_live; ++j) {
      if (at + bufs[i].size <= live[j]->placed)
        break; /* fits in the gap before this one */
      if (live[j]->placed + live[j]->size > at)
        at = ref_align_up(live[j]->placed + live[j]->size);
    }
    bufs[i].placed = at;
    if (at + bufs[i].size > arena)
      arena = at + bufs[i].size;
  }
  for (i = 0; i < n; ++i)
    *bufs[i].offset = bufs[i].placed;
  free(live);
  return ref_align_up(arena);
}

/* The value owning the buffer `v` uses. */
static odla_value ref_owner(odla_value v) {
  while (v->shares)
    v = v->shares;
  return v;
}

static int ref_in_arena(odla_value v) {
  return v->kind == REF_RESULT && !v->is_output && ref_bytes(&v->type) > 0;
}

/* Step 0: in-place reuse, recorded in `shares` with the owner's lifetime extended. */
static void ref_plan_inplace(odla_computation comp) {
  int i;
  for (i = 0; i < comp->num_nodes; ++i) {
    ref_node *n = comp->nodes[i];
    odla_value in, out, owner;
    if (n->inplace_input < 0 || n->num_outputs != 1)
      continue;
    in = n->inputs[n->inplace_input];
    out = n->outputs[0];
    if (!in || !ref_in_arena(in) || !ref_in_arena(out) || ref_bytes(&in->type) != ref_bytes(&out->type))
      continue;
    owner = ref_owner(in);
    if (owner->last_use != i)
      continue; /* the operand's buffer is read after this node */
    out->shares = owner;
    owner->last_use = out->last_use > i ? out->last_use : i;
  }
}

size_t ref_plan(odla_computation comp) {
  int i, k, n = 0;
  size_t arena;
  ref_buffer *bufs =
      (ref_buffer *)calloc((size_t)(comp->num_values + comp->num_nodes + 1), sizeof *bufs);
  if (!bufs)
    return (size_t)-1;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    v->first_use = v->last_use = v->node ? v->node->index : -1;
    v->shares = NULL;
  }
  for (i = 0; i < comp->num_nodes; ++i)
    for (k = 0; k < comp->nodes[i]->num_inputs; ++k)
      if (comp->nodes[i]->inputs[k]) {
        odla_value v = comp->nodes[i]->inputs[k];
        v->last_use = i > v->last_use ? i : v->last_use;
      }
  ref_plan_inplace(comp);
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (!ref_in_arena(v) || v->shares)
      continue;
    bufs[n].size = ref_align_up(ref_bytes(&v->type));
    bufs[n].first = v->first_use;
    bufs[n].last = v->last_use;
    bufs[n].order = n;
    bufs[n].offset = &v->offset;
    ++n;
  }
  for (i = 0; i < comp->num_nodes; ++i) {
    ref_node *nd = comp->nodes[i];
    if (!nd->scratch_bytes)
      continue;
    bufs[n].size = ref_align_up(nd->scratch_bytes);
    bufs[n].first = bufs[n].last = i;
    bufs[n].order = n;
    bufs[n].offset = &nd->scratch_offset;
    ++n;
  }
  arena = ref_plan_buffers(bufs, n);
  free(bufs);
  for (i = 0; i < comp->num_values; ++i)
    if (comp->values[i]->shares)
      comp->values[i]->offset = ref_owner(comp->values[i])->offset;
  return arena;
}
