/* planner.c: static planning of the activation arena.
 *
 * Lifetimes, then offsets by first fit under a few orders, keeping the best:
 *   1. Nodes are numbered in execution order.
 *   2. Each intermediate result (not an argument, constant or bound output) is a buffer that
 *      lives from its producing node to its last consumer; each node's scratch is a buffer
 *      that lives during that node only.
 *   3. The buffers are placed once for each of four orders (ties: earlier first use, then
 *      creation order, so plans are deterministic):
 *        a. by size, largest first (TFLM's GreedyMemoryPlanner);
 *        b. by first use, earliest first, larger first among those born at one node;
 *        c. by pressure, highest first, then by size: a buffer's pressure is the largest
 *           total size of the buffers live at one node of its lifetime, so the buffers of
 *           the busiest node are placed first, packed from offset 0 (TFLite's "greedy by
 *           breadth");
 *        d. by lifetime, longest first, then by size: values read by the whole graph (an
 *           attention mask) sit at the bottom instead of above a later peak.
 *   4. Placing: each buffer in turn takes the lowest 64-byte aligned offset at which it
 *      overlaps no already placed buffer whose lifetime overlaps its own (first fit).
 *   5. The arena of an order is its largest end offset; the smallest arena wins (ties: the
 *      earlier order).
 * Before step 2, in-place reuse: walking the nodes in order, a node's result shares the
 * buffer of the operand named by its inplace_input when that operand is an intermediate
 * result of the same size whose buffer (with everything already sharing it) is last used
 * by this node, or, for a Reshape (a view of the same bytes), whenever it is read later. Sharing
 * values form one buffer whose lifetime spans them all. No order is best for every graph: the sum
 * of the buffers live at the busiest node is a lower bound that each can miss by fragmentation, and
 * each order wins somewhere. Worked example (sizes in 64-byte units): A lives [0,1] size 2, B [1,2]
 * size 1, C [2,3] size 2. Order a, A C B: A at 0; C at 0 (lifetimes [0,1] and [2,3] are disjoint);
 * B at 2 (it overlaps A at node 1 and C at node 2). Arena: 3 units, the most live at one node.
 * Where the orders differ: A size 3 [0,0], B 2 [0,1], C 2 [1,2], D 3 [2,2]. Order a, A D B
 * C: A and D at 0, B at 3, C overlaps B and D so goes to 5: 7 units. Order b, A B C D: A at
 * 0, B at 3, C at 0 (A is dead by node 1), D at 2 (C below it, B dead): 5 units, the
 * bound (A + B at node 0). */
#include "ref.h"

#include <stdlib.h>
#include <string.h>

static size_t ref_align_up(size_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* What the orders of step 3 compare. */
typedef struct {
  const ref_buffer *bufs;
  const size_t *pressure; /* by buffer index */
  int strategy;           /* 0: size, 1: first use, 2: pressure, 3: lifetime */
} ref_order_ctx;

static int ref_before(const ref_order_ctx *c, int ia, int ib) {
  const ref_buffer *a = &c->bufs[ia], *b = &c->bufs[ib];
  if (c->strategy == 3 && a->last - a->first != b->last - b->first)
    return a->last - a->first > b->last - b->first;
  if (c->strategy == 2 && c->pressure[ia] != c->pressure[ib])
    return c->pressure[ia] > c->pressure[ib];
  if (c->strategy == 1 && a->first != b->first)
    return a->first < b->first;
  if (a->size != b->size)
    return a->size > b->size;
  if (a->first != b->first)
    return a->first < b->first;
  return a->order < b->order;
}

/* Stable merge sort of n buffer indices (qsort takes no context, and a static one would not
 * be thread-safe); tmp holds n indices. */
static void ref_sort(int *idx, int n, const ref_order_ctx *c, int *tmp) {
  int width, i;
  for (width = 1; width < n; width *= 2) {
    for (i = 0; i < n; i += 2 * width) {
      int lo = i, mid = i + width < n ? i + width : n, hi = i + 2 * width < n ? i + 2 * width : n;
      int l = lo, r = mid, k = lo;
      while (l < mid && r < hi)
        tmp[k++] = ref_before(c, idx[r], idx[l]) ? idx[r++] : idx[l++];
      while (l < mid)
        tmp[k++] = idx[l++];
      while (r < hi)
        tmp[k++] = idx[r++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

/* Step 4 for one order: fills at[] (by buffer index) and returns the arena's end, or `best` as
 * soon as it reaches that (an earlier order's arena, which this one then cannot beat). `placed`
 * (scratch for n indices) holds the buffers placed so far by offset, a buffer placed later after
 * those at its offset: first fit walks it in that order, skipping buffers whose lifetimes do not
 * overlap, and the new buffer is inserted where its offset goes. */
static size_t ref_place(const ref_buffer *bufs, int n, const int *order, size_t *at, int *placed,
                        size_t best) {
  size_t end = 0;
  int i, j, lo, hi;
  for (i = 0; i < n; ++i) {
    const ref_buffer *b = &bufs[order[i]];
    size_t off = 0;
    for (j = 0; j < i; ++j) {
      const ref_buffer *o = &bufs[placed[j]];
      if (o->first > b->last || b->first > o->last)
        continue; /* not alive at once */
      if (off + b->size <= at[placed[j]])
        break; /* fits in the gap before this one */
      if (at[placed[j]] + o->size > off)
        off = ref_align_up(at[placed[j]] + o->size);
    }
    at[order[i]] = off;
    if (off + b->size > end)
      end = off + b->size;
    if (ref_align_up(end) >= best)
      return best;                   /* no smaller than an earlier order's: it cannot win */
    for (lo = 0, hi = i; lo < hi;) { /* the first placed buffer above off */
      int mid = lo + (hi - lo) / 2;
      if (at[placed[mid]] <= off)
        lo = mid + 1;
      else
        hi = mid;
    }
    memmove(placed + lo + 1, placed + lo, (size_t)(i - lo) * sizeof *placed);
    placed[lo] = order[i];
  }
  return ref_align_up(end);
}

size_t ref_plan_buffers(ref_buffer *bufs, int n, ref_temp *temp) {
  const size_t count = (size_t)(n ? n : 1);
  int *order = (int *)ref_temp_alloc(temp, count, sizeof *order),
      *placed = (int *)ref_temp_alloc(temp, count, sizeof *placed);
  int *tmp = (int *)ref_temp_alloc(temp, count, sizeof *tmp);
  size_t *at = (size_t *)ref_temp_alloc(temp, count, sizeof *at), *pressure = NULL;
  size_t *load = NULL, best = (size_t)-1;
  int i, j, strategy, num_nodes = 0;
  ref_order_ctx ctx;
  for (i = 0; i < n; ++i)
    num_nodes = bufs[i].last + 1 > num_nodes ? bufs[i].last + 1 : num_nodes;
  pressure = (size_t *)ref_temp_alloc(temp, count, sizeof *pressure);
  load = (size_t *)ref_temp_alloc(temp, (size_t)(num_nodes ? num_nodes : 1), sizeof *load);
  if (!order || !placed || !tmp || !at || !pressure || !load)
    goto done;
  for (i = 0; i < n; ++i)
    for (j = bufs[i].first; j <= bufs[i].last; ++j)
      load[j] += bufs[i].size;
  for (i = 0; i < n; ++i)
    for (j = bufs[i].first; j <= bufs[i].last; ++j)
      pressure[i] = load[j] > pressure[i] ? load[j] : pressure[i];
  memset(&ctx, 0, sizeof ctx);
  ctx.bufs = bufs;
  ctx.pressure = pressure;
  for (strategy = 0; strategy < 4; ++strategy) {
    size_t arena;
    for (i = 0; i < n; ++i)
      order[i] = i;
    ctx.strategy = strategy;
    ref_sort(order, n, &ctx, tmp);
    arena = ref_place(bufs, n, order, at, placed, best);
    if (arena < best) {
      best = arena;
      for (i = 0; i < n; ++i)
        bufs[i].placed = at[i];
    }
  }
  for (i = 0; i < n; ++i)
    *bufs[i].offset = bufs[i].placed;
done:
  ref_temp_free(temp, order);
  ref_temp_free(temp, placed);
  ref_temp_free(temp, tmp);
  ref_temp_free(temp, at);
  ref_temp_free(temp, pressure);
  ref_temp_free(temp, load);
  return best;
}

odla_value ref_inplace_of(odla_value v, int operand) {
  if (v && v->node->num_outputs == 1)
    v->node->inplace_input = operand;
  return v;
}

odla_value ref_view_of(odla_value v, int operand, size_t offset) {
  if (v && v->node->num_outputs == 1) {
    v->node->view_input = operand;
    v->node->view_offset = offset;
  }
  return v;
}

void ref_plan_views(odla_computation comp) {
  int i;
  for (i = 0; i < comp->num_values; ++i)
    if (comp->values[i]->kind != REF_CONSTANT)
      ref_set_view(comp->values[i], NULL);
  for (i = 0; i < comp->num_nodes; ++i) {
    ref_node *n = comp->nodes[i];
    odla_value in, out, source;
    if (n->view_input < 0 || n->num_outputs != 1)
      continue;
    in = n->inputs[n->view_input];
    out = n->outputs[0];
    source = in ? ref_view_source(in) : NULL;
    if (!in || out->kind != REF_RESULT || out->is_output || (in->kind != REF_ARGUMENT && !source))
      continue;
    ref_set_view(out, source ? source : in);
    ref_where(out)->offset = (source ? ref_where(in)->offset : 0) + n->view_offset;
  }
}

/* The value owning the buffer `v` uses. */
static odla_value ref_owner(odla_value v) {
  while (ref_shares(v))
    v = ref_shares(v);
  return v;
}

/* Whether `v` takes a buffer of the arena (a result: it has a place). */
static int ref_in_arena(odla_value v) {
  return v->kind == REF_RESULT && !v->is_output && !ref_view_source(v) && ref_bytes(&v->type) > 0;
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
    if (!in || !ref_in_arena(in) || !ref_in_arena(out) ||
        ref_bytes(&in->type) != ref_bytes(&out->type))
      continue;
    owner = ref_owner(in);
    /* A Reshape's result holds its operand's bytes unchanged: it is a view, so it may share
     * the buffer even while the operand is still read (values are never written after they
     * are produced, and a later in-place op checks the whole group's lifetime). */
    if (ref_where(owner)->last_use != i && strcmp(n->op, "Reshape") != 0)
      continue; /* the operand's buffer is read after this node */
    ref_set_shares(out, owner);
    if (ref_where(out)->last_use > ref_where(owner)->last_use)
      ref_where(owner)->last_use = ref_where(out)->last_use;
  }
}

size_t ref_plan(odla_computation comp) {
  int i, k, n = 0, count = 1;
  size_t arena;
  ref_buffer *bufs;
  unsigned char *scratch = (unsigned char *)comp->compile_scratch.base;
  ref_temp temp;
  /* the scratch from its first 16-byte boundary */
  temp.base = scratch;
  temp.at = scratch ? scratch + (16 - (uintptr_t)scratch % 16) % 16 : NULL;
  temp.end = scratch && comp->compile_scratch.bytes >= (size_t)(temp.at - scratch)
                 ? scratch + comp->compile_scratch.bytes
                 : temp.at;
  for (i = 0; i < comp->num_values; ++i) { /* constants take no part */
    odla_value v = comp->values[i];
    if (v->kind == REF_CONSTANT)
      continue;
    ref_where(v)->first_use = ref_where(v)->last_use = v->node ? v->node->index : -1;
    ref_set_shares(v, NULL);
  }
  for (i = 0; i < comp->num_nodes; ++i)
    for (k = 0; k < comp->nodes[i]->num_inputs; ++k)
      if (comp->nodes[i]->inputs[k] && comp->nodes[i]->inputs[k]->kind != REF_CONSTANT) {
        ref_value_place *w = ref_where(comp->nodes[i]->inputs[k]);
        w->last_use = i > w->last_use ? i : w->last_use;
      }
  ref_plan_regions(comp); /* loop bodies run repeatedly: see ops_control_flow.c */
  ref_plan_views(comp);
  ref_plan_inplace(comp);
  /* The list holds the buffers there are (on a microcontroller it is part of the build's
     peak memory): the values' own buffers and the nodes' scratch. */
  for (i = 0; i < comp->num_values; ++i)
    count += ref_in_arena(comp->values[i]) && !ref_shares(comp->values[i]);
  for (i = 0; i < comp->num_nodes; ++i)
    count += comp->nodes[i]->scratch_bytes != 0;
  if (!(bufs = (ref_buffer *)ref_temp_alloc(&temp, (size_t)count, sizeof *bufs)))
    return (size_t)-1;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (!ref_in_arena(v) || ref_shares(v))
      continue;
    bufs[n].size = ref_align_up(ref_bytes(&v->type));
    bufs[n].first = ref_where(v)->first_use;
    bufs[n].last = ref_where(v)->last_use;
    bufs[n].order = n;
    bufs[n].offset = &ref_where(v)->offset;
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
  arena = ref_plan_buffers(bufs, n, &temp);
  ref_temp_free(&temp, bufs);
  for (i = 0; i < comp->num_values; ++i)
    if (ref_shares(comp->values[i]))
      ref_where(comp->values[i])->offset = ref_where(ref_owner(comp->values[i]))->offset;
  return arena;
}
