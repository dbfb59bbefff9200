/* runtime_shapes.c: dynamic batch and runtime shapes of the reference backend.
 *
 * Kernels are planned for the shapes the graph was built with. A computation built for batch
 * B, whose every argument and output has B as its leading dim and whose ops treat the rows of
 * that dim independently, runs any batch n by running the plan ceil(n / B) times over row
 * slices of the caller's buffers: rows [k*B, k*B + B) in pass k. A last pass with fewer than
 * B rows copies them into a padded buffer (the missing rows repeat the first one, so every
 * kernel sees valid data) and copies the output rows back. Only the computation knows that
 * its rows are independent, so it opts in with the ODLA_DYNAMIC_BATCH item; odlac
 * --dynamic-batch checks the property op by op before it emits the item.
 *
 * Items and calls (values scalar items point to: odla_bool for ODLA_DYNAMIC_BATCH,
 * odla_int32 for the batch sizes):
 *  - computation: ODLA_DYNAMIC_BATCH, ODLA_MIN_BATCH_SIZE, ODLA_MAX_BATCH_SIZE,
 *    ODLA_OPT_BATCH_SIZE (advisory: the plan keeps the built batch); odla_SetValueShapeInfo
 *    with ODLA_MIN_SHAPE, ODLA_MAX_SHAPE, ODLA_OPT_SHAPE on an argument sets the same bounds
 *    from the leading dim of a shape equal to the argument's in the other dims.
 *  - context: ODLA_RUN_BATCH_SIZE, or odla_SetRuntimeShape / odla_SetRuntimeValueType on
 *    arguments (leading dim n, other dims and element type as built); odla_GetRuntimeShape,
 *    odla_GetRuntimeValueType (arguments and outputs report batch n) and
 *    odla_GetRuntimeNumOfOutputs (of the computation last executed on the context).
 *  - odla_SetInputValueInfo with ODLA_MIN_VALUE / ODLA_MAX_VALUE: per-element bounds of an
 *    argument's data (as many elements as the built argument, in the caller's memory, which
 *    must outlive the computation), checked before each execution; row r of a batched
 *    argument is checked against the bounds' row r mod B.
 * Anything else is refused with ODLA_INVALID_PARAM (a wrong shape, batch or bound) or
 * ODLA_UNSUPPORTED_DATATYPE (an item that does not apply), with the reason logged.
 *
 * A batched run allocates, once per context and grown as needed, the slice table and the
 * padding (B rows of every argument and output, only when B > 1 and B does not divide n). */
#include "ref.h"

#include <stdlib.h>
#include <string.h>

/* An argument's runtime shape, as its leading dim. */
typedef struct {
  odla_value value;
  odla_int64 batch;
} ref_runtime_batch;

/* One argument or output during a batched run: its binding, the caller's buffer and the
 * bytes of one row. */
typedef struct {
  ref_binding *binding;
  unsigned char *base;
  size_t row_bytes;
  int is_output;
} ref_slice;

struct ref_shapes {
  ref_runtime_batch *set;
  int num_set, cap_set;
  ref_slice *slices;
  int cap_slices;
  unsigned char *pad;
  size_t pad_bytes;
};

void ref_free_shapes(odla_context context) {
  if (!context->shapes)
    return;
  ref_free(context->shapes->set);
  ref_free(context->shapes->slices);
  ref_free(context->shapes->pad);
  ref_free(context->shapes);
  context->shapes = NULL;
}

static struct ref_shapes *ref_shapes_of(odla_context context) {
  if (!context->shapes)
    context->shapes = (struct ref_shapes *)ref_calloc(1, sizeof *context->shapes);
  return context->shapes;
}

static const char *ref_batch_item_name(odla_item_type type) {
  switch (type) {
  case ODLA_MIN_BATCH_SIZE:
    return "ODLA_MIN_BATCH_SIZE";
  case ODLA_MAX_BATCH_SIZE:
    return "ODLA_MAX_BATCH_SIZE";
  case ODLA_OPT_BATCH_SIZE:
    return "ODLA_OPT_BATCH_SIZE";
  default:
    return "ODLA_RUN_BATCH_SIZE";
  }
}

/* Stores a batch bound of `comp` after checking it against the bounds already set. */
static odla_status ref_set_bound(odla_computation comp, odla_item_type type, odla_int64 n,
                                 const char *func) {
  odla_int32 min = type == ODLA_MIN_BATCH_SIZE ? (odla_int32)n : comp->batch.min;
  odla_int32 max = type == ODLA_MAX_BATCH_SIZE ? (odla_int32)n : comp->batch.max;
  odla_int32 opt = type == ODLA_OPT_BATCH_SIZE ? (odla_int32)n : comp->batch.opt;
  if (n < 1 || n > 0x7fffffff) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func, "%s must be a positive odla_int32, got %lld",
               ref_batch_item_name(type), (long long)n);
    return ODLA_INVALID_PARAM;
  }
  if ((min && max && min > max) || (opt && min && opt < min) || (opt && max && opt > max)) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func,
               "%s %lld contradicts the other bounds: need min %d <= opt %d <= max %d "
               "(0: unset)",
               ref_batch_item_name(type), (long long)n, (int)min, (int)opt, (int)max);
    return ODLA_INVALID_PARAM;
  }
  comp->batch.min = min;
  comp->batch.max = max;
  comp->batch.opt = opt;
  return ODLA_SUCCESS;
}

odla_status ref_set_batch_item(odla_computation comp, odla_item_type type, odla_item_value value) {
  if (!value) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetComputationItem",
               "item %d: the value must point to the caller's variable", (int)type);
    return ODLA_INVALID_PARAM;
  }
  switch (type) {
  case ODLA_DYNAMIC_BATCH:
    comp->batch.dynamic = *(const odla_bool *)value != 0;
    return ODLA_SUCCESS;
  case ODLA_MIN_BATCH_SIZE:
  case ODLA_MAX_BATCH_SIZE:
  case ODLA_OPT_BATCH_SIZE:
    return ref_set_bound(comp, type, *(const odla_int32 *)value, "SetComputationItem");
  default:
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetComputationItem",
               "ODLA_RUN_BATCH_SIZE is a context item (odla_SetContextItem)");
    return ODLA_INVALID_PARAM;
  }
}

odla_status ref_set_run_batch(odla_context context, odla_item_value value) {
  odla_int32 n = value ? *(const odla_int32 *)value : 0;
  if (n < 1) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetContextItem",
               "ODLA_RUN_BATCH_SIZE must point to a positive odla_int32, got %d", (int)n);
    return ODLA_INVALID_PARAM;
  }
  context->run_batch = n;
  /* The item sets every argument's batch: earlier runtime shapes no longer apply. */
  if (context->shapes)
    context->shapes->num_set = 0;
  return ODLA_SUCCESS;
}

/* Whether `shape` equals the built shape of `v` in every dim but the leading one. */
static int ref_same_but_batch(odla_value v, const odla_value_shape *shape) {
  int i;
  if (shape->size != v->type.shape.size || shape->size < 1)
    return 0;
  for (i = 1; i < shape->size; ++i)
    if (shape->dims[i] != v->type.shape.dims[i])
      return 0;
  return 1;
}

static int ref_belongs(odla_computation comp, odla_value v) {
  return comp && v->index < comp->num_values && comp->values[v->index] == v;
}

/* ---- Value infos (computation building) ---------------------------------------------- */

odla_status odla_SetValueShapeInfo(odla_value value, odla_item_type type,
                                   odla_value_shape value_shape) {
  odla_computation comp = ref_current();
  char got[160], built[160];
  if (!value || !ref_belongs(comp, value) || value->kind != REF_ARGUMENT) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetValueShapeInfo",
               "the value must be an argument of the current computation");
    return ODLA_INVALID_PARAM;
  }
  if (type != ODLA_MIN_SHAPE && type != ODLA_MAX_SHAPE && type != ODLA_OPT_SHAPE) {
    ref_report(ODLA_LOG_LEVEL_WARN, "SetValueShapeInfo",
               "item %d does not apply: only ODLA_MIN_SHAPE, ODLA_MAX_SHAPE and ODLA_OPT_SHAPE",
               (int)type);
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  if (!ref_same_but_batch(value, &value_shape) || value_shape.dims[0] < 1) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetValueShapeInfo",
               "argument '%s': shape %s differs from the built %s in more than a positive "
               "leading (batch) dim; only the batch is dynamic in this backend",
               value->id, ref_shape_str(&value_shape, got, sizeof got),
               ref_shape_str(&value->type.shape, built, sizeof built));
    return ODLA_INVALID_PARAM;
  }
  return ref_set_bound(comp,
                       type == ODLA_MIN_SHAPE   ? ODLA_MIN_BATCH_SIZE
                       : type == ODLA_MAX_SHAPE ? ODLA_MAX_BATCH_SIZE
                                                : ODLA_OPT_BATCH_SIZE,
                       value_shape.dims[0], "SetValueShapeInfo");
}

/* Whether ref_element reads the element type: the plain integer, float and bool types. */
static int ref_bounded_type(odla_element_type t) {
  switch (t) {
  case ODLA_INT8:
  case ODLA_INT16:
  case ODLA_INT32:
  case ODLA_INT64:
  case ODLA_UINT8:
  case ODLA_UINT16:
  case ODLA_UINT32:
  case ODLA_UINT64:
  case ODLA_FLOAT32:
  case ODLA_FLOAT64:
  case ODLA_BOOL:
    return 1;
  default:
    return 0;
  }
}

odla_status odla_SetInputValueInfo(odla_value value, odla_item_type type,
                                   odla_item_value value_input) {
  odla_computation comp = ref_current();
  odla_element_type t;
  ref_value_place *where;
  if (!value || !ref_belongs(comp, value) || value->kind != REF_ARGUMENT || !value_input) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetInputValueInfo",
               "the value must be an argument of the current computation and the item value "
               "its bounds");
    return ODLA_INVALID_PARAM;
  }
  if (type != ODLA_MIN_VALUE && type != ODLA_MAX_VALUE) {
    ref_report(ODLA_LOG_LEVEL_WARN, "SetInputValueInfo",
               "item %d does not apply: an argument's values never change shapes in this "
               "backend; only the ODLA_MIN_VALUE and ODLA_MAX_VALUE bounds are checked",
               (int)type);
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  t = value->type.element_type;
  if (!ref_bounded_type(t)) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetInputValueInfo",
               "argument '%s': bounds on %s values are not supported", value->id, ref_type_name(t));
    return ODLA_INVALID_PARAM;
  }
  where = ref_where(value);
  if (!where->bounds && !(where->bounds = (const void **)ref_calloc(2, sizeof *where->bounds))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetInputValueInfo", "argument '%s': out of memory",
               value->id);
    return ODLA_MEM_ERROR;
  }
  where->bounds[type == ODLA_MIN_VALUE ? 0 : 1] = value_input;
  return ODLA_SUCCESS;
}

/* Element i of `data` (element type t, one ref_bounded_type accepts) as a double. */
static double ref_element(odla_element_type t, const void *data, int64_t i) {
  switch (t) {
  case ODLA_INT8:
    return ((const int8_t *)data)[i];
  case ODLA_INT16:
    return ((const int16_t *)data)[i];
  case ODLA_INT32:
    return ((const int32_t *)data)[i];
  case ODLA_INT64:
    return (double)((const int64_t *)data)[i];
  case ODLA_UINT8:
  case ODLA_BOOL:
    return ((const uint8_t *)data)[i];
  case ODLA_UINT16:
    return ((const uint16_t *)data)[i];
  case ODLA_UINT32:
    return ((const uint32_t *)data)[i];
  case ODLA_UINT64:
    return (double)((const uint64_t *)data)[i];
  case ODLA_FLOAT64:
    return ((const double *)data)[i];
  default:
    return ((const float *)data)[i];
  }
}

/* Checks the bound arguments of `comp` against their ODLA_MIN_VALUE / ODLA_MAX_VALUE bounds
 * (`rows` rows of the built size each, the built size being `batch` rows). */
static odla_status ref_check_value_bounds(odla_computation comp, odla_context ctx, int64_t rows,
                                          int64_t batch) {
  int i;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    const void *data;
    int64_t count, total, k;
    const void *min_value, *max_value;
    const void **bounds = v->kind == REF_ARGUMENT ? ref_where(v)->bounds : NULL;
    if (!bounds || (!bounds[0] && !bounds[1]))
      continue;
    min_value = bounds[0];
    max_value = bounds[1];
    data = ref_value_data(ctx, v);
    count = ref_count(&v->type.shape);
    total = rows == batch ? count : count / batch * rows;
    for (k = 0; k < total; ++k) {
      double x = ref_element(v->type.element_type, data, k);
      const void *bad =
          min_value && x < ref_element(v->type.element_type, min_value, k % count)   ? min_value
          : max_value && x > ref_element(v->type.element_type, max_value, k % count) ? max_value
                                                                                     : NULL;
      if (bad) {
        ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
                   "argument '%s' element %lld is %g, %s its ODLA_%s_VALUE %g", v->id, (long long)k,
                   x, bad == min_value ? "below" : "above", bad == min_value ? "MIN" : "MAX",
                   ref_element(v->type.element_type, bad, k % count));
        return ODLA_INVALID_PARAM;
      }
    }
  }
  return ODLA_SUCCESS;
}

/* ---- Runtime shapes and types (contexts) ------------------------------------------------ */

odla_status odla_SetRuntimeShape(odla_context context, odla_value value,
                                 odla_value_shape value_shape) {
  struct ref_shapes *s;
  char got[160], built[160];
  int i;
  if (!context || !value)
    return ODLA_INVALID_PARAM;
  if (value->kind != REF_ARGUMENT) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetRuntimeShape",
               "'%s' is not an argument: results take their shapes from the arguments (read "
               "them with odla_GetRuntimeShape)",
               value->id);
    return ODLA_INVALID_PARAM;
  }
  if (!ref_same_but_batch(value, &value_shape) || value_shape.dims[0] < 1 ||
      value_shape.dims[0] > 0x7fffffff) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetRuntimeShape",
               "argument '%s': runtime shape %s differs from the built %s in more than a "
               "positive leading (batch) dim; only the batch is dynamic in this backend",
               value->id, ref_shape_str(&value_shape, got, sizeof got),
               ref_shape_str(&value->type.shape, built, sizeof built));
    return ODLA_INVALID_PARAM;
  }
  if (!(s = ref_shapes_of(context)))
    return ODLA_MEM_ERROR;
  for (i = 0; i < s->num_set && s->set[i].value != value; ++i)
    ;
  if (i == s->cap_set) {
    int cap = s->cap_set ? 2 * s->cap_set : 4;
    ref_runtime_batch *set = (ref_runtime_batch *)ref_realloc(s->set, (size_t)cap * sizeof *set);
    if (!set)
      return ODLA_MEM_ERROR;
    s->set = set;
    s->cap_set = cap;
  }
  if (i == s->num_set)
    ++s->num_set;
  s->set[i].value = value;
  s->set[i].batch = value_shape.dims[0];
  context->run_batch = (odla_int32)value_shape.dims[0];
  return ODLA_SUCCESS;
}

odla_status odla_GetRuntimeShape(odla_context context, odla_value value,
                                 odla_value_shape *value_shape_ptr) {
  if (!context || !value || !value_shape_ptr)
    return ODLA_INVALID_PARAM;
  *value_shape_ptr = ref_type_of(value).shape;
  /* Arguments and outputs carry the run batch; everything else keeps its planned shape. */
  if (context->run_batch && (value->kind == REF_ARGUMENT || value->is_output) &&
      value->type.shape.size >= 1)
    value_shape_ptr->dims[0] = context->run_batch;
  return ODLA_SUCCESS;
}

odla_status odla_SetRuntimeValueType(odla_context context, odla_value value,
                                     odla_value_type value_type) {
  if (!context || !value)
    return ODLA_INVALID_PARAM;
  if (value_type.element_type != value->type.element_type) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "SetRuntimeValueType",
               "argument '%s': element type %s differs from the built %s; kernels run the "
               "types the graph was built with",
               value->id, ref_type_name(value_type.element_type),
               ref_type_name(value->type.element_type));
    return ODLA_INVALID_PARAM;
  }
  return odla_SetRuntimeShape(context, value, value_type.shape);
}

odla_status odla_GetRuntimeValueType(odla_context context, odla_value value,
                                     odla_value_type *value_type_ptr) {
  if (!context || !value || !value_type_ptr)
    return ODLA_INVALID_PARAM;
  value_type_ptr->element_type = value->type.element_type;
  return odla_GetRuntimeShape(context, value, &value_type_ptr->shape);
}

odla_status odla_GetRuntimeNumOfOutputs(odla_context context, odla_uint32 *num_output_ptr) {
  int i;
  if (!context || !num_output_ptr)
    return ODLA_INVALID_PARAM;
  if (!context->last_comp) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "GetRuntimeNumOfOutputs",
               "no computation has been executed on this context yet");
    return ODLA_INVALID_PARAM;
  }
  *num_output_ptr = 0;
  for (i = 0; i < context->last_comp->num_values; ++i)
    *num_output_ptr += context->last_comp->values[i]->is_output != 0;
  return ODLA_SUCCESS;
}

/* ---- Batched execution -------------------------------------------------------------- */

/* The built batch of `comp`: the common leading dim of its arguments and outputs, or 0 (with
 * the reason logged) when they have none. */
static odla_int64 ref_built_batch(odla_computation comp) {
  odla_int64 b = 0;
  int i, args = 0;
  char shape[160];
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (v->kind != REF_ARGUMENT && !v->is_output)
      continue;
    if (v->is_variable) { /* training: a variable is whole, not a slice of rows */
      ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
                 "dynamic batch: variable '%s' (odla_CreateVariable) has no batch rows; a "
                 "differentiated computation runs at its built batch only",
                 v->id);
      return 0;
    }
    args += v->kind == REF_ARGUMENT;
    if (v->type.shape.size < 1 || v->type.shape.dims[0] < 1 || (b && v->type.shape.dims[0] != b)) {
      ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
                 "dynamic batch: %s '%s' of shape %s does not have the batch %lld as its "
                 "leading dim",
                 v->is_output ? "output" : "argument", v->id,
                 ref_shape_str(&v->type.shape, shape, sizeof shape), (long long)b);
      return 0;
    }
    b = v->type.shape.dims[0];
  }
  if (!args)
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
               "dynamic batch: the computation has no argument to carry a batch");
  return args ? b : 0;
}

/* The batch this execution runs: the context's, checked against the arguments' runtime
 * shapes and the computation's items. Returns 0 (reason logged) when it cannot run. */
static odla_int64 ref_run_batch_of(odla_computation comp, odla_context ctx, odla_int64 built) {
  odla_int64 n = ctx->run_batch ? ctx->run_batch : built;
  int i;
  if (ctx->shapes)
    for (i = 0; i < ctx->shapes->num_set; ++i) {
      const ref_runtime_batch *r = &ctx->shapes->set[i];
      if (ref_belongs(comp, r->value) && r->batch != n) {
        ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
                   "argument '%s' has runtime batch %lld but the context runs batch %lld: "
                   "give every argument the same leading dim",
                   r->value->id, (long long)r->batch, (long long)n);
        return 0;
      }
    }
  if (!comp->batch.dynamic && n != built) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
               "run batch %lld differs from the built batch %lld of a computation without "
               "ODLA_DYNAMIC_BATCH (its ops may mix rows)",
               (long long)n, (long long)built);
    return 0;
  }
  if (comp->batch.dynamic &&
      ((comp->batch.min && n < comp->batch.min) || (comp->batch.max && n > comp->batch.max))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
               "run batch %lld is outside the computation's batch range [%d, %d] (0: unbounded)",
               (long long)n, (int)comp->batch.min, (int)comp->batch.max);
    return 0;
  }
  return n;
}

static size_t ref_round_up(size_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* Fills `s->slices` with the bound arguments and outputs of `comp`; returns their number,
 * or -1 when out of memory. */
static int ref_collect_slices(odla_computation comp, odla_context ctx, struct ref_shapes *s,
                              odla_int64 built) {
  int i, k, n = 0;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    ref_binding *list = v->kind == REF_ARGUMENT ? ctx->args : ctx->outs;
    int num = v->kind == REF_ARGUMENT ? ctx->num_args : ctx->num_outs;
    if (v->kind != REF_ARGUMENT && !v->is_output)
      continue;
    if (n == s->cap_slices) {
      int cap = s->cap_slices ? 2 * s->cap_slices : 8;
      ref_slice *sl = (ref_slice *)ref_realloc(s->slices, (size_t)cap * sizeof *sl);
      if (!sl)
        return -1;
      s->slices = sl;
      s->cap_slices = cap;
    }
    for (k = 0; k < num && strcmp(list[k].id, v->id) != 0; ++k)
      ;
    if (k == num) /* unbound: empty, or a gradient an inference run does not compute */
      continue;
    s->slices[n].binding = &list[k];
    s->slices[n].base = (unsigned char *)list[k].data;
    s->slices[n].row_bytes = ref_bytes(&v->type) / (size_t)built;
    s->slices[n].is_output = v->is_output;
    ++n;
  }
  return n;
}

odla_status ref_run_batches(ref_exec *x) {
  odla_computation comp = x->comp;
  odla_context ctx = x->ctx;
  struct ref_shapes *s;
  odla_int64 built, n, r0;
  odla_status st = ODLA_SUCCESS;
  int num, i;
  ctx->last_comp = comp;
  built = comp->batch.dynamic || ctx->run_batch ? ref_built_batch(comp) : 0;
  if ((comp->batch.dynamic || ctx->run_batch) && !built)
    return ODLA_INVALID_PARAM;
  n = built ? ref_run_batch_of(comp, ctx, built) : 0;
  if (built && !n)
    return ODLA_INVALID_PARAM;
  if ((st = ref_check_value_bounds(comp, ctx, n ? n : 1, n ? built : 1)) != ODLA_SUCCESS)
    return st;
  if (n == built) /* also: no batch at all */
    return ref_run_nodes(x, 0, comp->num_nodes);

  if (!(s = ref_shapes_of(ctx)) || (num = ref_collect_slices(comp, ctx, s, built)) < 0)
    return ODLA_MEM_ERROR;
  if (n % built) { /* the last pass pads: B rows of every argument and output */
    size_t need = 0;
    for (i = 0; i < num; ++i)
      need += ref_round_up(s->slices[i].row_bytes * (size_t)built);
    if (need > s->pad_bytes) {
      /* malloc aligns for any C type; the kernels need no more than the element's. */
      unsigned char *pad = (unsigned char *)ref_malloc(need);
      if (!pad)
        return ODLA_MEM_ERROR;
      ref_free(s->pad);
      s->pad = pad;
      s->pad_bytes = need;
    }
  }
  for (r0 = 0; r0 < n && st == ODLA_SUCCESS; r0 += built) {
    odla_int64 rows = n - r0 < built ? n - r0 : built;
    size_t at = 0;
    for (i = 0; i < num; ++i) {
      ref_slice *sl = &s->slices[i];
      unsigned char *rows_at = sl->base + (size_t)r0 * sl->row_bytes;
      odla_int64 r;
      if (rows == built) {
        sl->binding->data = rows_at;
        continue;
      }
      sl->binding->data = s->pad + at;
      at += ref_round_up(sl->row_bytes * (size_t)built);
      if (sl->is_output)
        continue;
      memcpy(sl->binding->data, rows_at, (size_t)rows * sl->row_bytes);
      for (r = rows; r < built; ++r) /* padding rows repeat the first: valid data */
        memcpy((unsigned char *)sl->binding->data + (size_t)r * sl->row_bytes, rows_at,
               sl->row_bytes);
    }
    st = ref_run_nodes(x, 0, comp->num_nodes);
    if (rows < built && st == ODLA_SUCCESS)
      for (i = 0; i < num; ++i)
        if (s->slices[i].is_output)
          memcpy(s->slices[i].base + (size_t)r0 * s->slices[i].row_bytes,
                 s->slices[i].binding->data, (size_t)rows * s->slices[i].row_bytes);
  }
  for (i = 0; i < num; ++i) /* the caller's bindings as they were */
    s->slices[i].binding->data = s->slices[i].base;
  return st;
}
