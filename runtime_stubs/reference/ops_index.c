/* ops_index.c: indexing ops of the reference backend: Gather, GatherElements, GatherND,
 * OneHot, TopK, and the extensions ExtScatterElements, ExtScatterND and ExtNonZero (Resize is
 * in ops_resize.c).
 *
 * Indices are int32 or int64 (OneHot: any numeric type). A negative index counts from the end
 * of its axis, as in ONNX; an index outside [-extent, extent) is a data-dependent error: the
 * kernel stops and execution returns ODLA_INVALID_PARAM. Ops that only move elements accept
 * every element type. */
#include "ref.h"
#include "ref_types.h"
#include "threads.h"

#include <string.h>

/* Index i of an int32 or int64 index tensor. */
static int64_t ref_index_at(const void *indices, int index64, int64_t i) {
  return index64 ? ((const int64_t *)indices)[i] : (int64_t)((const int32_t *)indices)[i];
}

/* Maps an index into [0, extent); -1 when it is out of range. */
static int64_t ref_wrap_index(int64_t k, int64_t extent) {
  if (k < 0)
    k += extent;
  return k < 0 || k >= extent ? -1 : k;
}

static int ref_is_index_type(odla_element_type t) { return t == ODLA_INT32 || t == ODLA_INT64; }

/* Element i of the indices, outside [-extent, extent), found while the kernel runs: logged with
 * the op, its result, the index and where it is among the indices (the executor then names
 * the node); ODLA_INVALID_PARAM. */
static odla_status ref_index_error(const ref_node *node, const void *indices, int index64,
                                   int64_t i, int64_t extent) {
  ref_report(ODLA_LOG_LEVEL_ERROR, node->op,
             "result '%s': index %lld (element %lld of the indices) is outside [%lld, %lld)",
             node->num_outputs ? node->outputs[0]->id : "",
             (long long)ref_index_at(indices, index64, i), (long long)i, (long long)-extent,
             (long long)extent);
  return ODLA_INVALID_PARAM;
}

/* The first of the `count` indices outside [-extent, extent) reported (a kernel found one). */
static odla_status ref_first_index_error(const ref_node *node, const void *indices, int index64,
                                         int64_t count, int64_t extent) {
  int64_t i;
  for (i = 0; i < count && ref_wrap_index(ref_index_at(indices, index64, i), extent) >= 0; ++i) {
  }
  return ref_index_error(node, indices, index64, i < count ? i : 0, extent);
}

static odla_value ref_output_conflict(const char *op, const odla_value_shape *given,
                                      const odla_value_shape *computed) {
  char s1[128], s2[128];
  return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                  ref_shape_str(given, s1, sizeof s1), ref_shape_str(computed, s2, sizeof s2));
}

/* Row-major strides of a shape, in elements. */
static void ref_strides(const odla_value_shape *s, int64_t *strides) {
  int64_t stride = 1;
  int d;
  for (d = s->size - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= s->dims[d];
  }
}

/* ---- Gather --------------------------------------------------------------------------- */

typedef struct {
  int64_t outer, extent, inner, count; /* count: number of indices */
  size_t elem;
  int index64;
} ref_gather_params;

static odla_status ref_gather_run(const ref_node *node, const ref_io *io) {
  const ref_gather_params *p = (const ref_gather_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  unsigned char *y = (unsigned char *)io->out[0];
  size_t row = (size_t)p->inner * p->elem;
  int64_t o, i;
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < p->count; ++i) {
      int64_t k = ref_wrap_index(ref_index_at(io->in[1], p->index64, i), p->extent);
      if (k < 0)
        return ref_index_error(node, io->in[1], p->index64, i, p->extent);
      ref_parallel_copy(io, y, x + ((size_t)(o * p->extent + k)) * row, row); /* a cache layer */
      y += row;
    }
  return ODLA_SUCCESS;
}

odla_value odla_Gather(odla_value input, odla_value indices, odla_int32 axis,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  ref_gather_params p;
  odla_value in[2], v;
  odla_value_type out;
  const odla_value_shape *xs;
  int i;
  in[0] = input;
  in[1] = indices;
  if (!ref_check_operands("Gather", 2, in))
    return NULL;
  if (!ref_is_index_type(indices->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Gather", "indices must be int32 or int64");
  xs = &input->type.shape;
  if (axis < 0)
    axis += xs->size;
  if (axis < 0 || axis >= xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "Gather", "axis %d out of range for rank %d", axis,
                    xs->size);
  if (xs->size - 1 + indices->type.shape.size > ODLA_MAX_DIMENSION)
    return ref_fail(ODLA_INVALID_PARAM, "Gather", "result rank exceeds %d", ODLA_MAX_DIMENSION);
  out.element_type = input->type.element_type;
  out.shape.size = 0;
  p.outer = p.inner = 1;
  for (i = 0; i < axis; ++i) {
    out.shape.dims[out.shape.size++] = xs->dims[i];
    p.outer *= xs->dims[i];
  }
  for (i = 0; i < indices->type.shape.size; ++i)
    out.shape.dims[out.shape.size++] = indices->type.shape.dims[i];
  for (i = axis + 1; i < xs->size; ++i) {
    out.shape.dims[out.shape.size++] = xs->dims[i];
    p.inner *= xs->dims[i];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_output_conflict("Gather", &output_dims, &out.shape);
  p.extent = xs->dims[axis];
  p.count = ref_count(&indices->type.shape);
  p.elem = ref_elem_size(input->type.element_type);
  p.index64 = indices->type.element_type == ODLA_INT64;
  v = ref_add_op("Gather", ref_gather_run, 2, in, out, value_id, &p, sizeof p);
  /* One constant index along the leading axis (a layer of a decoder's cache): a contiguous
   * block of the input, a view where the input is an argument. */
  if (p.outer == 1 && p.count == 1 && indices->kind == REF_CONSTANT && indices->data &&
      input->type.element_type != ODLA_STRING) {
    int64_t k = ref_wrap_index(ref_index_at(indices->data, p.index64, 0), p.extent);
    if (k >= 0)
      ref_view_of(v, 0, (size_t)k * (size_t)p.inner * p.elem);
  }
  return v;
}

/* ---- GatherElements and ExtScatterElements ---------------------------------------------- */

/* Both walk the positions p of indices in row-major order; `walk` holds data's strides with
 * the axis' stride set to 0, so the running offset is p's data offset without the axis. */
typedef struct {
  int rank, axis, index64, reduction;
  size_t elem;
  odla_element_type type;
  int64_t count;                        /* elements of indices */
  int64_t extent, axis_stride;          /* data's extent and stride along axis */
  int64_t idx_dims[ODLA_MAX_DIMENSION]; /* indices' dims */
  int64_t walk[ODLA_MAX_DIMENSION];     /* data's strides, 0 on axis */
} ref_elements_params;

/* Advances the position counter c over dims; returns the change of the walk offset. */
static int64_t ref_elements_step(const ref_elements_params *p, int64_t *c) {
  int64_t delta = 0;
  int d;
  for (d = p->rank - 1; d >= 0; --d) {
    delta += p->walk[d];
    if (++c[d] < p->idx_dims[d])
      break;
    delta -= p->walk[d] * p->idx_dims[d];
    c[d] = 0;
  }
  return delta;
}

#define REF_GATHER_ELEMENTS_KERNEL(T)                                                              \
  static odla_status ref_gather_elements_##T(const ref_elements_params *p, const T *x,             \
                                             const void *ind, T *y) {                              \
    int64_t c[ODLA_MAX_DIMENSION] = {0}, base = 0, i;                                              \
    for (i = 0; i < p->count; ++i) {                                                               \
      int64_t k = ref_wrap_index(ref_index_at(ind, p->index64, i), p->extent);                     \
      if (k < 0)                                                                                   \
        return ODLA_INVALID_PARAM;                                                                 \
      y[i] = x[base + k * p->axis_stride];                                                         \
      base += ref_elements_step(p, c);                                                             \
    }                                                                                              \
    return ODLA_SUCCESS;                                                                           \
  }
REF_GATHER_ELEMENTS_KERNEL(uint8_t)
REF_GATHER_ELEMENTS_KERNEL(uint16_t)
REF_GATHER_ELEMENTS_KERNEL(uint32_t)
REF_GATHER_ELEMENTS_KERNEL(uint64_t)

static odla_status ref_gather_elements_run(const ref_node *node, const ref_io *io) {
  const ref_elements_params *p = (const ref_elements_params *)node->params;
  odla_status s;
  switch (p->elem) {
  case 1:
    s = ref_gather_elements_uint8_t(p, (const uint8_t *)io->in[0], io->in[1],
                                    (uint8_t *)io->out[0]);
    break;
  case 2:
    s = ref_gather_elements_uint16_t(p, (const uint16_t *)io->in[0], io->in[1],
                                     (uint16_t *)io->out[0]);
    break;
  case 4:
    s = ref_gather_elements_uint32_t(p, (const uint32_t *)io->in[0], io->in[1],
                                     (uint32_t *)io->out[0]);
    break;
  default:
    s = ref_gather_elements_uint64_t(p, (const uint64_t *)io->in[0], io->in[1],
                                     (uint64_t *)io->out[0]);
  }
  return s == ODLA_SUCCESS
             ? s
             : ref_first_index_error(node, io->in[1], p->index64, p->count, p->extent);
}

/* Checks data and indices of GatherElements / ScatterElements and fills the walk. */
static int ref_elements_setup(const char *op, odla_value data, odla_value indices, int axis,
                              ref_elements_params *p) {
  const odla_value_shape *ds = &data->type.shape, *is = &indices->type.shape;
  int64_t strides[ODLA_MAX_DIMENSION];
  char s1[128], s2[128];
  int d;
  memset(p, 0, sizeof *p);
  if (!ref_is_index_type(indices->type.element_type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "indices must be int32 or int64, got %s",
             ref_type_name(indices->type.element_type));
    return 0;
  }
  if (axis < 0)
    axis += ds->size;
  if (ds->size < 1 || axis < 0 || axis >= ds->size) {
    ref_fail(ODLA_INVALID_PARAM, op, "axis %d out of range for rank %d", axis, ds->size);
    return 0;
  }
  if (is->size != ds->size) {
    ref_fail(ODLA_INVALID_PARAM, op, "indices %s must have the rank of data %s",
             ref_shape_str(is, s1, sizeof s1), ref_shape_str(ds, s2, sizeof s2));
    return 0;
  }
  for (d = 0; d < ds->size; ++d)
    if (d != axis && is->dims[d] > ds->dims[d]) {
      ref_fail(ODLA_INVALID_PARAM, op, "indices %s exceed data %s along axis %d",
               ref_shape_str(is, s1, sizeof s1), ref_shape_str(ds, s2, sizeof s2), d);
      return 0;
    }
  ref_strides(ds, strides);
  p->rank = ds->size;
  p->axis = axis;
  p->index64 = indices->type.element_type == ODLA_INT64;
  p->elem = ref_elem_size(data->type.element_type);
  p->type = data->type.element_type;
  p->count = ref_count(is);
  p->extent = ds->dims[axis];
  p->axis_stride = strides[axis];
  for (d = 0; d < ds->size; ++d) {
    p->idx_dims[d] = is->dims[d];
    p->walk[d] = d == axis ? 0 : strides[d];
  }
  return 1;
}

/* ONNX GatherElements: result[p] = input[p with its axis coordinate replaced by indices[p]];
 * the result has the shape of indices. */
odla_value odla_GatherElements(odla_value input, odla_value indices, odla_int32 axis,
                               odla_value_shape output_dims, const odla_value_id value_id) {
  ref_elements_params p;
  odla_value in[2];
  odla_value_type out;
  in[0] = input;
  in[1] = indices;
  if (!ref_check_operands("GatherElements", 2, in) ||
      !ref_elements_setup("GatherElements", input, indices, axis, &p))
    return NULL;
  out.element_type = input->type.element_type;
  out.shape = ref_type_of(indices).shape;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_output_conflict("GatherElements", &output_dims, &out.shape);
  return ref_add_op("GatherElements", ref_gather_elements_run, 2, in, out, value_id, &p, sizeof p);
}

/* Combining an update with an element: integers wrap around (computed unsigned), bool
 * combines as logic (the store turns any non-zero into 1). */
#define REF_COMBINE_F(r, e, u)                                                                     \
  ((r) == ODLA_EXT_SCATTER_ADD   ? (e) + (u)                                                       \
   : (r) == ODLA_EXT_SCATTER_MUL ? (e) * (u)                                                       \
   : (r) == ODLA_EXT_SCATTER_MAX ? ((e) != (e) || (e) > (u) ? (e) : (u))                           \
   : (r) == ODLA_EXT_SCATTER_MIN ? ((e) != (e) || (e) < (u) ? (e) : (u))                           \
                                 : (u))
#define REF_COMBINE_I(r, e, u)                                                                     \
  ((r) == ODLA_EXT_SCATTER_ADD   ? (uint64_t)(e) + (uint64_t)(u)                                   \
   : (r) == ODLA_EXT_SCATTER_MUL ? (uint64_t)(e) * (uint64_t)(u)                                   \
   : (r) == ODLA_EXT_SCATTER_MAX ? (uint64_t)((e) > (u) ? (e) : (u))                               \
   : (r) == ODLA_EXT_SCATTER_MIN ? (uint64_t)((e) < (u) ? (e) : (u))                               \
                                 : (uint64_t)(u))

/* ref_scatter_apply_<SFX>(r, y, j, u, k): y[j] combined with u[k]. */
#define REF_SCATTER_APPLY_F(E, S, C, SFX)                                                          \
  static void ref_scatter_apply_##SFX(int r, void *vy, int64_t j, const void *vu, int64_t k) {     \
    S *y = (S *)vy;                                                                                \
    const C e = REF_LOAD_##SFX(y, j), u = REF_LOAD_##SFX((const S *)vu, k);                        \
    REF_STORE_##SFX(y, j, REF_COMBINE_F(r, e, u));                                                 \
  }
#define REF_SCATTER_APPLY_I(E, S, C, SFX)                                                          \
  static void ref_scatter_apply_##SFX(int r, void *vy, int64_t j, const void *vu, int64_t k) {     \
    S *y = (S *)vy;                                                                                \
    const C e = y[j], u = ((const S *)vu)[k];                                                      \
    y[j] = (S)REF_COMBINE_I(r, e, u);                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_SCATTER_APPLY_F)
REF_FOR_INT_TYPES(REF_SCATTER_APPLY_I)
REF_FOR_BOOL_TYPE(REF_SCATTER_APPLY_F)

typedef void (*ref_scatter_apply_fn)(int r, void *y, int64_t j, const void *u, int64_t k);

static ref_scatter_apply_fn ref_scatter_apply_for(odla_element_type t) {
  switch (t) {
#define REF_SCATTER_CASE(E, S, C, SFX)                                                             \
  case E:                                                                                          \
    return ref_scatter_apply_##SFX;
    REF_FOR_ALL_TYPES(REF_SCATTER_CASE)
#undef REF_SCATTER_CASE
  default:
    return NULL;
  }
}

static void ref_copy_data(const ref_node *node, const ref_io *io) {
  size_t bytes = ref_bytes(&node->outputs[0]->type);
  if (bytes && io->out[0] != io->in[0])
    memcpy(io->out[0], io->in[0], bytes);
}

static odla_status ref_scatter_elements_run(const ref_node *node, const ref_io *io) {
  const ref_elements_params *p = (const ref_elements_params *)node->params;
  ref_scatter_apply_fn apply = ref_scatter_apply_for(p->type);
  unsigned char *y = (unsigned char *)io->out[0];
  const unsigned char *u = (const unsigned char *)io->in[2];
  int64_t c[ODLA_MAX_DIMENSION] = {0}, base = 0, i;
  ref_copy_data(node, io);
  for (i = 0; i < p->count; ++i) {
    int64_t k = ref_wrap_index(ref_index_at(io->in[1], p->index64, i), p->extent);
    int64_t j = base + k * p->axis_stride;
    if (k < 0)
      return ref_index_error(node, io->in[1], p->index64, i, p->extent);
    if (p->reduction == ODLA_EXT_SCATTER_NONE)
      memcpy(y + (size_t)j * p->elem, u + (size_t)i * p->elem, p->elem);
    else
      apply(p->reduction, y, j, u, i);
    base += ref_elements_step(p, c);
  }
  return ODLA_SUCCESS;
}

static int ref_check_reduction(const char *op, int reduction, odla_element_type t) {
  if (reduction < ODLA_EXT_SCATTER_NONE || reduction > ODLA_EXT_SCATTER_MIN) {
    ref_fail(ODLA_INVALID_PARAM, op, "unknown reduction %d", reduction);
    return 0;
  }
  if (!ref_scatter_apply_for(t)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported", ref_type_name(t));
    return 0;
  }
  return 1;
}

odla_value odla_ExtScatterElements(odla_value data, odla_value indices, odla_value updates,
                                   odla_int32 axis, odla_int32 reduction,
                                   const odla_value_id value_id) {
  ref_elements_params p;
  odla_value in[3];
  char s1[128], s2[128];
  in[0] = data;
  in[1] = indices;
  in[2] = updates;
  if (!ref_check_operands("ExtScatterElements", 3, in) ||
      !ref_elements_setup("ExtScatterElements", data, indices, axis, &p) ||
      !ref_check_reduction("ExtScatterElements", reduction, data->type.element_type))
    return NULL;
  if (updates->type.element_type != data->type.element_type ||
      !ref_same_shape(&updates->type.shape, &indices->type.shape))
    return ref_fail(ODLA_INVALID_PARAM, "ExtScatterElements",
                    "updates (%s %s) must have data's element type %s and the shape of "
                    "indices %s",
                    ref_type_name(updates->type.element_type),
                    ref_shape_str(&updates->type.shape, s1, sizeof s1),
                    ref_type_name(data->type.element_type),
                    ref_shape_str(&indices->type.shape, s2, sizeof s2));
  p.reduction = reduction;
  return ref_add_op("ExtScatterElements", ref_scatter_elements_run, 3, in, ref_type_of(data),
                    value_id, &p, sizeof p);
}

/* ---- GatherND and ExtScatterND ----------------------------------------------------------- */

typedef struct {
  int k, index64, reduction;
  size_t elem;
  odla_element_type type;
  int64_t batches;                  /* product of the batch dims */
  int64_t tuples;                   /* index tuples per batch entry */
  int64_t batch_size;               /* data elements per batch entry */
  int64_t slice;                    /* elements of one selected slice */
  int64_t dims[ODLA_MAX_DIMENSION]; /* data's dims indexed by a tuple */
} ref_nd_params;

/* The data offset (in elements, within one batch entry) that tuple t selects; -1 when an index
 * is out of range. */
static int64_t ref_nd_offset(const ref_nd_params *p, const void *ind, int64_t t) {
  int64_t off = 0;
  int j;
  for (j = 0; j < p->k; ++j) {
    int64_t v = ref_wrap_index(ref_index_at(ind, p->index64, t * p->k + j), p->dims[j]);
    if (v < 0)
      return -1;
    off = off * p->dims[j] + v;
  }
  return off * p->slice;
}

/* Tuple t's first index outside its dim reported (ref_nd_offset found one). */
static odla_status ref_nd_error(const ref_node *node, const ref_nd_params *p, const void *ind,
                                int64_t t) {
  int j;
  for (j = 0;
       j + 1 < p->k && ref_wrap_index(ref_index_at(ind, p->index64, t * p->k + j), p->dims[j]) >= 0;
       ++j) {
  }
  return ref_index_error(node, ind, p->index64, t * p->k + j, p->dims[j]);
}

static odla_status ref_gather_nd_run(const ref_node *node, const ref_io *io) {
  const ref_nd_params *p = (const ref_nd_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  unsigned char *y = (unsigned char *)io->out[0];
  size_t row = (size_t)p->slice * p->elem;
  int64_t b, t;
  for (b = 0; b < p->batches; ++b)
    for (t = 0; t < p->tuples; ++t) {
      int64_t off = ref_nd_offset(p, io->in[1], b * p->tuples + t);
      if (off < 0)
        return ref_nd_error(node, p, io->in[1], b * p->tuples + t);
      memcpy(y, x + (size_t)(b * p->batch_size + off) * p->elem, row);
      y += row;
    }
  return ODLA_SUCCESS;
}

/* Checks data and indices of GatherND / ScatterND; computes the gathered shape. */
static int ref_nd_setup(const char *op, odla_value data, odla_value indices, int batch_dims,
                        ref_nd_params *p, odla_value_shape *gathered) {
  const odla_value_shape *ds = &data->type.shape, *is = &indices->type.shape;
  char s1[128], s2[128];
  int d, q = is->size, r = ds->size;
  memset(p, 0, sizeof *p);
  if (!ref_is_index_type(indices->type.element_type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "indices must be int32 or int64, got %s",
             ref_type_name(indices->type.element_type));
    return 0;
  }
  if (q < 1 || r < 1 || batch_dims < 0 || batch_dims >= q || batch_dims >= r) {
    ref_fail(ODLA_INVALID_PARAM, op, "batch_dims %d needs indices %s and data %s of higher rank",
             batch_dims, ref_shape_str(is, s1, sizeof s1), ref_shape_str(ds, s2, sizeof s2));
    return 0;
  }
  p->k = (int)is->dims[q - 1];
  if (p->k < 1 || p->k > r - batch_dims) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "the last dim of indices %s must be in [1, %d] for data %s and batch_dims %d",
             ref_shape_str(is, s1, sizeof s1), r - batch_dims, ref_shape_str(ds, s2, sizeof s2),
             batch_dims);
    return 0;
  }
  for (d = 0; d < batch_dims; ++d)
    if (is->dims[d] != ds->dims[d]) {
      ref_fail(ODLA_INVALID_PARAM, op, "batch dim %d differs: indices %s, data %s", d,
               ref_shape_str(is, s1, sizeof s1), ref_shape_str(ds, s2, sizeof s2));
      return 0;
    }
  if ((q - 1) + (r - batch_dims - p->k) > ODLA_MAX_DIMENSION) {
    ref_fail(ODLA_INVALID_PARAM, op, "result rank exceeds %d", ODLA_MAX_DIMENSION);
    return 0;
  }
  p->batches = p->tuples = p->batch_size = p->slice = 1;
  gathered->size = 0;
  for (d = 0; d < q - 1; ++d) {
    gathered->dims[gathered->size++] = is->dims[d];
    if (d < batch_dims)
      p->batches *= is->dims[d];
    else
      p->tuples *= is->dims[d];
  }
  for (d = batch_dims; d < r; ++d) {
    p->batch_size *= ds->dims[d];
    if (d < batch_dims + p->k) {
      p->dims[d - batch_dims] = ds->dims[d];
    } else {
      p->slice *= ds->dims[d];
      gathered->dims[gathered->size++] = ds->dims[d];
    }
  }
  p->index64 = indices->type.element_type == ODLA_INT64;
  p->elem = ref_elem_size(data->type.element_type);
  p->type = data->type.element_type;
  return 1;
}

/* ONNX GatherND: indices [b_1..b_B, i_1..i_m, k] select slices data[b.., t_1..t_k, :] for
 * num_batch_dims = B leading dims shared by data and indices; the result has shape
 * [b_1..b_B, i_1..i_m] + data's dims after B + k. */
odla_value odla_GatherND(odla_value input, odla_value indices, odla_int32 num_batch_dims,
                         odla_value_shape output_dims, const odla_value_id value_id) {
  ref_nd_params p;
  odla_value in[2];
  odla_value_type out;
  in[0] = input;
  in[1] = indices;
  if (!ref_check_operands("GatherND", 2, in) ||
      !ref_nd_setup("GatherND", input, indices, num_batch_dims, &p, &out.shape))
    return NULL;
  out.element_type = input->type.element_type;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_output_conflict("GatherND", &output_dims, &out.shape);
  return ref_add_op("GatherND", ref_gather_nd_run, 2, in, out, value_id, &p, sizeof p);
}

static odla_status ref_scatter_nd_run(const ref_node *node, const ref_io *io) {
  const ref_nd_params *p = (const ref_nd_params *)node->params;
  ref_scatter_apply_fn apply = ref_scatter_apply_for(p->type);
  unsigned char *y = (unsigned char *)io->out[0];
  const unsigned char *u = (const unsigned char *)io->in[2];
  int64_t t, i;
  ref_copy_data(node, io);
  for (t = 0; t < p->tuples; ++t) {
    int64_t off = ref_nd_offset(p, io->in[1], t);
    if (off < 0)
      return ref_nd_error(node, p, io->in[1], t);
    if (p->reduction == ODLA_EXT_SCATTER_NONE)
      memcpy(y + (size_t)off * p->elem, u + (size_t)(t * p->slice) * p->elem,
             (size_t)p->slice * p->elem);
    else
      for (i = 0; i < p->slice; ++i)
        apply(p->reduction, y, off + i, u, t * p->slice + i);
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtScatterND(odla_value data, odla_value indices, odla_value updates,
                             odla_int32 reduction, const odla_value_id value_id) {
  ref_nd_params p;
  odla_value in[3];
  odla_value_shape expected;
  char s1[128], s2[128];
  in[0] = data;
  in[1] = indices;
  in[2] = updates;
  if (!ref_check_operands("ExtScatterND", 3, in) ||
      !ref_nd_setup("ExtScatterND", data, indices, 0, &p, &expected) ||
      !ref_check_reduction("ExtScatterND", reduction, data->type.element_type))
    return NULL;
  if (updates->type.element_type != data->type.element_type ||
      !ref_same_shape(&updates->type.shape, &expected))
    return ref_fail(ODLA_INVALID_PARAM, "ExtScatterND",
                    "updates (%s %s) must have data's element type %s and shape %s",
                    ref_type_name(updates->type.element_type),
                    ref_shape_str(&updates->type.shape, s1, sizeof s1),
                    ref_type_name(data->type.element_type),
                    ref_shape_str(&expected, s2, sizeof s2));
  p.reduction = reduction;
  return ref_add_op("ExtScatterND", ref_scatter_nd_run, 3, in, ref_type_of(data), value_id, &p,
                    sizeof p);
}

/* ---- OneHot ----------------------------------------------------------------------------- */

typedef struct {
  int64_t outer, depth, inner;
  odla_element_type index_type;
  size_t elem;
} ref_one_hot_params;

/* Index i of a numeric index tensor as a position in [0, depth), or -1 (all off). */
static int64_t ref_one_hot_index(const ref_one_hot_params *p, const void *ind, int64_t i) {
  int64_t k;
  if (ref_is_float(p->index_type)) {
    double v = ref_get(p->index_type, ind, i);
    if (!(v > (double)-p->depth - 1 && v < (double)p->depth))
      return -1; /* also NaN */
    k = (int64_t)v;
  } else if (p->index_type == ODLA_UINT64) {
    uint64_t u = ((const uint64_t *)ind)[i];
    if (u >= (uint64_t)p->depth)
      return -1;
    k = (int64_t)u;
  } else {
    k = ref_get_int(p->index_type, ind, i);
  }
  return ref_wrap_index(k, p->depth);
}

static odla_status ref_one_hot_run(const ref_node *node, const ref_io *io) {
  const ref_one_hot_params *p = (const ref_one_hot_params *)node->params;
  const unsigned char *off = (const unsigned char *)io->in[1], *on = off + p->elem;
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t n = p->outer * p->depth * p->inner, o, i;
  for (i = 0; i < n; ++i)
    memcpy(y + (size_t)i * p->elem, off, p->elem);
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < p->inner; ++i) {
      int64_t k = ref_one_hot_index(p, io->in[0], o * p->inner + i);
      if (k >= 0)
        memcpy(y + (size_t)((o * p->depth + k) * p->inner + i) * p->elem, on, p->elem);
    }
  return ODLA_SUCCESS;
}

/* ONNX OneHot (opset 11 semantics): the result has values' element type and indices' shape
 * with a new axis of extent depth inserted at axis (negative: counts from the end of the
 * result's rank). values is the pair (off, on). An index of any numeric type selects position
 * k = index (floats truncated toward zero), k + depth when negative; an index outside
 * [-depth, depth) leaves its row all off. */
odla_value odla_OneHot(odla_value indices, odla_int32 depth, odla_value values, odla_int32 axis,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  ref_one_hot_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *is;
  int d, rank;
  char s1[128];
  in[0] = indices;
  in[1] = values;
  if (!ref_check_operands("OneHot", 2, in))
    return NULL;
  is = &indices->type.shape;
  rank = is->size + 1;
  if (!ref_is_float(indices->type.element_type) && !ref_is_int(indices->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "OneHot", "indices of type %s are not supported",
                    ref_type_name(indices->type.element_type));
  if (ref_count(&values->type.shape) != 2)
    return ref_fail(ODLA_INVALID_PARAM, "OneHot", "values %s must hold 2 elements (off, on)",
                    ref_shape_str(&values->type.shape, s1, sizeof s1));
  if (depth < 1)
    return ref_fail(ODLA_INVALID_PARAM, "OneHot", "depth %d must be positive", depth);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || rank > ODLA_MAX_DIMENSION)
    return ref_fail(ODLA_INVALID_PARAM, "OneHot", "axis %d out of range for result rank %d", axis,
                    rank);
  out.element_type = values->type.element_type;
  out.shape.size = rank;
  p.outer = p.inner = 1;
  for (d = 0; d < rank; ++d) {
    if (d == axis) {
      out.shape.dims[d] = depth;
      continue;
    }
    out.shape.dims[d] = is->dims[d < axis ? d : d - 1];
    if (d < axis)
      p.outer *= out.shape.dims[d];
    else
      p.inner *= out.shape.dims[d];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_output_conflict("OneHot", &output_dims, &out.shape);
  p.depth = depth;
  p.index_type = indices->type.element_type;
  p.elem = ref_elem_size(out.element_type);
  return ref_add_op("OneHot", ref_one_hot_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- TopK ------------------------------------------------------------------------------- */

typedef struct {
  int64_t outer, n, inner, k;
  int largest, index64;
  odla_element_type type;
} ref_top_k_params;

/* Per type: copies one column of x (stride inner) into the compute-type array v, sorts the
 * positions 0..n-1 by value with a stable merge sort (so equal values keep the lower index
 * first) and writes the first k values and positions. NaN ranks above every number, as in
 * PyTorch. */
#define REF_TOPK_KERNEL(E, S, C, SFX)                                                              \
  static void ref_top_k_##SFX(const ref_top_k_params *p, const S *x, S *y, void *yi,               \
                              void *scratch) {                                                     \
    int64_t *a = (int64_t *)scratch, *b = a + p->n, *t;                                            \
    C *v = (C *)(b + p->n);                                                                        \
    int64_t o, i, j, w, lo, mid, hi, l, r, n = p->n;                                               \
    for (o = 0; o < p->outer; ++o)                                                                 \
      for (i = 0; i < p->inner; ++i) {                                                             \
        const S *col = x + o * n * p->inner + i;                                                   \
        for (j = 0; j < n; ++j) {                                                                  \
          v[j] = REF_LOAD_##SFX(col, j * p->inner);                                                \
          a[j] = j;                                                                                \
        }                                                                                          \
        for (w = 1; w < n; w *= 2) {                                                               \
          for (lo = 0; lo < n; lo += 2 * w) {                                                      \
            mid = lo + w < n ? lo + w : n;                                                         \
            hi = lo + 2 * w < n ? lo + 2 * w : n;                                                  \
            for (l = lo, r = mid, j = lo; j < hi; ++j) {                                           \
              int take_right = 0;                                                                  \
              if (l >= mid) {                                                                      \
                take_right = 1;                                                                    \
              } else if (r < hi) {                                                                 \
                const C vr = v[a[r]], vl = v[a[l]];                                                \
                take_right = p->largest ? (vr > vl || (vr != vr && vl == vl))                      \
                                        : (vr < vl || (vl != vl && vr == vr));                     \
              }                                                                                    \
              b[j] = take_right ? a[r++] : a[l++];                                                 \
            }                                                                                      \
          }                                                                                        \
          t = a;                                                                                   \
          a = b;                                                                                   \
          b = t;                                                                                   \
        }                                                                                          \
        for (j = 0; j < p->k; ++j) {                                                               \
          int64_t at = (o * p->k + j) * p->inner + i;                                              \
          y[at] = col[a[j] * p->inner];                                                            \
          if (p->index64)                                                                          \
            ((int64_t *)yi)[at] = a[j];                                                            \
          else                                                                                     \
            ((int32_t *)yi)[at] = (int32_t)a[j];                                                   \
        }                                                                                          \
        a = (int64_t *)scratch;                                                                    \
        b = a + p->n;                                                                              \
      }                                                                                            \
  }
REF_FOR_NUMERIC_TYPES(REF_TOPK_KERNEL)

static odla_status ref_top_k_run(const ref_node *node, const ref_io *io) {
  const ref_top_k_params *p = (const ref_top_k_params *)node->params;
  switch (p->type) {
#define REF_TOPK_CASE(E, S, C, SFX)                                                                \
  case E:                                                                                          \
    ref_top_k_##SFX(p, (const S *)io->in[0], (S *)io->out[0], io->out[1], io->scratch);            \
    break;
    REF_FOR_NUMERIC_TYPES(REF_TOPK_CASE)
#undef REF_TOPK_CASE
  default:
    break;
  }
  return ODLA_SUCCESS;
}

/* ONNX TopK: the K largest (or smallest) elements along axis and their int32 or int64
 * positions, always sorted (best first; ONNX leaves the order of sorted = 0 open), equal
 * values in order of position (ONNX's rule). output_value_type must have input's element
 * type; both types' shapes, when defined, must be input's shape with K at axis. Every numeric
 * element type. */
odla_values odla_TopK(odla_value input, odla_uint32 K, odla_bool largest, odla_bool sorted,
                      odla_uint32 axis, odla_value_type output_value_type,
                      odla_value_type output_value_index_type, const odla_value_ids value_ids) {
  ref_top_k_params p;
  odla_values result;
  odla_value_type types[2];
  odla_value_id ids[2];
  const odla_value_shape *xs;
  ref_node *node;
  int d;
  (void)sorted;
  memset(&result, 0, sizeof result);
  if (!ref_check_operands("TopK", 1, &input))
    return result;
  xs = &input->type.shape;
  if (!ref_is_float(input->type.element_type) && !ref_is_int(input->type.element_type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, "TopK", "element type %s is not supported",
             ref_type_name(input->type.element_type));
    return result;
  }
  if (axis >= (odla_uint32)xs->size || (int64_t)K > xs->dims[axis]) {
    ref_fail(ODLA_INVALID_PARAM, "TopK", "axis %u or K %u out of range for rank %d", axis, K,
             xs->size);
    return result;
  }
  if (output_value_type.element_type != input->type.element_type ||
      !ref_is_index_type(output_value_index_type.element_type)) {
    ref_fail(ODLA_INVALID_PARAM, "TopK",
             "result types must be %s and int32 or int64, got %s and %s",
             ref_type_name(input->type.element_type), ref_type_name(output_value_type.element_type),
             ref_type_name(output_value_index_type.element_type));
    return result;
  }
  if (value_ids.size < 2) {
    ref_fail(ODLA_INVALID_PARAM, "TopK", "needs 2 value ids, got %d", (int)value_ids.size);
    return result;
  }
  types[0].element_type = input->type.element_type;
  types[1].element_type = output_value_index_type.element_type;
  types[0].shape = types[1].shape = ref_shape_copy(xs);
  types[0].shape.dims[axis] = types[1].shape.dims[axis] = K;
  if (ref_shape_conflicts(&output_value_type.shape, &types[0].shape)) {
    ref_output_conflict("TopK", &output_value_type.shape, &types[0].shape);
    return result;
  }
  if (ref_shape_conflicts(&output_value_index_type.shape, &types[1].shape)) {
    ref_output_conflict("TopK", &output_value_index_type.shape, &types[1].shape);
    return result;
  }
  p.outer = p.inner = 1;
  for (d = 0; d < xs->size; ++d) {
    if (d < (int)axis)
      p.outer *= xs->dims[d];
    else if (d > (int)axis)
      p.inner *= xs->dims[d];
  }
  p.n = xs->dims[axis];
  p.k = K;
  p.largest = largest != 0;
  p.index64 = types[1].element_type == ODLA_INT64;
  p.type = input->type.element_type;
  ids[0] = value_ids.value_ids[0];
  ids[1] = value_ids.value_ids[1];
  node = ref_add_node("TopK", ref_top_k_run, 1, &input, 2, types, ids, &p, sizeof p);
  if (!node)
    return result;
  /* One column of values (8 bytes covers every compute type) and two position arrays. */
  node->scratch_bytes = (size_t)p.n * 3 * 8;
  result.size = 2;
  result.values[0] = node->outputs[0];
  result.values[1] = node->outputs[1];
  return result;
}

/* ---- ExtNonZero ------------------------------------------------------------------------- */

typedef struct {
  int rank;
  int64_t count, total;
  int64_t dims[ODLA_MAX_DIMENSION];
  odla_element_type type;
} ref_non_zero_params;

static int ref_non_zero_at(odla_element_type t, const void *x, int64_t i) {
  switch (t) {
#define REF_NONZERO_CASE(E, S, C, SFX)                                                             \
  case E:                                                                                          \
    return REF_LOAD_##SFX((const S *)x, i) != 0;
    REF_FOR_ALL_TYPES(REF_NONZERO_CASE)
#undef REF_NONZERO_CASE
  default:
    return 0;
  }
}

static odla_status ref_non_zero_run(const ref_node *node, const ref_io *io) {
  const ref_non_zero_params *p = (const ref_non_zero_params *)node->params;
  int64_t *y = (int64_t *)io->out[0];
  int64_t c[ODLA_MAX_DIMENSION] = {0}, found = 0, i;
  int d;
  for (i = 0; i < p->total; ++i)
    found += ref_non_zero_at(p->type, io->in[0], i);
  if (found != p->count)
    return ODLA_INVALID_PARAM; /* the data has another number of non-zero elements */
  for (i = 0, found = 0; i < p->total; ++i) {
    if (ref_non_zero_at(p->type, io->in[0], i)) {
      for (d = 0; d < p->rank; ++d)
        y[d * p->count + found] = c[d];
      ++found;
    }
    for (d = p->rank - 1; d >= 0 && ++c[d] == p->dims[d]; --d)
      c[d] = 0;
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtNonZero(odla_value input, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  ref_non_zero_params p;
  odla_value_type out;
  int d;
  char s1[128];
  if (!ref_check_operands("ExtNonZero", 1, &input))
    return NULL;
  if (output_dims.size != 2 || output_dims.dims[0] != input->type.shape.size ||
      output_dims.dims[1] < 0 || output_dims.dims[1] > ref_count(&input->type.shape))
    return ref_fail(ODLA_INVALID_PARAM, "ExtNonZero",
                    "output_dims %s must be [%d, count] with count at most %lld",
                    ref_shape_str(&output_dims, s1, sizeof s1), input->type.shape.size,
                    (long long)ref_count(&input->type.shape));
  if (ref_elem_size(input->type.element_type) == 0 || input->type.element_type == ODLA_STRING)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtNonZero", "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  memset(&p, 0, sizeof p);
  p.rank = input->type.shape.size;
  for (d = 0; d < p.rank; ++d)
    p.dims[d] = input->type.shape.dims[d];
  p.count = output_dims.dims[1];
  p.total = ref_count(&input->type.shape);
  p.type = input->type.element_type;
  out.element_type = ODLA_INT64;
  out.shape = output_dims;
  return ref_add_op("ExtNonZero", ref_non_zero_run, 1, &input, out, value_id, &p, sizeof p);
}
