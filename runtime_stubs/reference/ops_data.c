/* ops_data.c: data movement in the reference backend: Reshape (and ReshapeDynamic, Squeeze,
 * DimsExpand), Shape, Transpose, Broadcast (and ExpandDims), Tile, Slice (and SliceDynamic),
 * Split, Concat (and Stack), Pad, Compress and Fill, and the data family's extension ops
 * (odla_ExtSliceDynamic, odla_ExtPadDynamic, odla_ExtReverseSequence, odla_ExtBitCast). They move
 * bytes, so they accept every element type.
 *
 * Transpose, Broadcast, Tile and Slice are one kernel: each output element is the input
 * element at base + sum(index[d] * stride[d]) for per-axis input strides that may be zero
 * (broadcast) or negative (reversed slices). The builder works the strides out once and
 * merges axes that are contiguous in both tensors; the kernel copies rows. */
#include "ref.h"
#include "ref_types.h"
#include "threads.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A data-dependent error found while a kernel runs (a run-time parameter that disagrees with
 * the shape planned at build time): logged, and the kernel returns the status. */
static odla_status ref_data_error(const char *op, const char *fmt, ...) {
  char msg[256];
  odla_logging_func logger = odla_GetLogger();
  va_list ap;
  va_start(ap, fmt);
  ref_vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (logger)
    logger(__FILE__, __LINE__, op, ODLA_LOG_LEVEL_ERROR, msg);
  else
    fprintf(stderr, "odla_reference: %s: %s\n", op, msg);
  return ODLA_FAILURE;
}

static int ref_is_index_type(odla_element_type t) { return t == ODLA_INT32 || t == ODLA_INT64; }

/* ---- Strided copy: the kernel of Transpose, Broadcast, Tile and Slice ----------------- */

#define REF_COPY_MAX_RANK (2 * ODLA_MAX_DIMENSION) /* Tile views each axis as two */

typedef struct {
  int rank; /* >= 1 after ref_copy_simplify */
  size_t elem;
  int64_t base;                       /* input element offset of output element 0 */
  int64_t dims[REF_COPY_MAX_RANK];    /* output dims */
  int64_t strides[REF_COPY_MAX_RANK]; /* input element stride of each output axis */
} ref_copy_plan;

/* Drops axes of extent 1 and merges neighbours that are contiguous in the input too. The result
 * type is valid (ref_type_bytes), so the product of non-zero dims fits. */
static void ref_copy_simplify(ref_copy_plan *p) {
  int d, n = 0;
  for (d = 0; d < p->rank; ++d)
    if (p->dims[d] == 0) { /* empty: nothing to copy (the other dims may be anything) */
      p->rank = 1;
      p->dims[0] = 0;
      p->strides[0] = 1;
      return;
    }
  for (d = 0; d < p->rank; ++d) {
    if (p->dims[d] == 1)
      continue;
    if (n > 0 && ref_product_is(p->strides[d], p->dims[d], p->strides[n - 1])) {
      p->dims[n - 1] *= p->dims[d];
      p->strides[n - 1] = p->strides[d];
      continue;
    }
    p->dims[n] = p->dims[d];
    p->strides[n] = p->strides[d];
    ++n;
  }
  if (n == 0) {
    p->dims[0] = 1;
    p->strides[0] = 1;
    n = 1;
  }
  p->rank = n;
}

/* Advances the index `idx` of the output axes before `axes` (the last fastest) and the input
 * offset with it; 0 once every index has wrapped round. */
static int ref_copy_next(const ref_copy_plan *p, int64_t *idx, int64_t *off, int axes) {
  int d;
  for (d = axes - 1; d >= 0; --d) {
    *off += p->strides[d];
    if (++idx[d] < p->dims[d])
      return 1;
    *off -= p->strides[d] * p->dims[d];
    idx[d] = 0;
  }
  return 0;
}

/* A transpose of the last two axes (the output's inner axis walks the input with stride s, the
 * one before it with stride 1), as tiles of 8 output rows: each input cache line read serves 8
 * outputs, where the row-at-a-time walk read a line for each element. */
#define REF_TRANSPOSE_KERNEL(T)                                                                    \
  static void ref_transpose_##T(const T *x, T *y, int64_t rows, int64_t cols, int64_t s) {         \
    int64_t r0, c, r;                                                                              \
    for (r0 = 0; r0 < rows; r0 += 8) {                                                             \
      int64_t rn = rows - r0 < 8 ? rows - r0 : 8;                                                  \
      T *out = y + r0 * cols;                                                                      \
      for (c = 0; c < cols; ++c) {                                                                 \
        const T *src = x + r0 + c * s;                                                             \
        for (r = 0; r < rn; ++r)                                                                   \
          out[r * cols + c] = src[r];                                                              \
      }                                                                                            \
    }                                                                                              \
  }

#define REF_COPY_KERNEL(T)                                                                         \
  REF_TRANSPOSE_KERNEL(T)                                                                          \
  static void ref_copy_##T(const ref_copy_plan *p, const T *x, T *y) {                             \
    int64_t idx[REF_COPY_MAX_RANK] = {0}, off = p->base, i;                                        \
    int64_t inner = p->dims[p->rank - 1], s = p->strides[p->rank - 1];                             \
    if (p->rank >= 2 && s > 1 && p->strides[p->rank - 2] == 1) {                                   \
      int64_t rows = p->dims[p->rank - 2];                                                         \
      do { /* the tiles of each index of the outer axes */                                         \
        ref_transpose_##T(x + off, y, rows, inner, s);                                             \
        y += rows * inner;                                                                         \
      } while (ref_copy_next(p, idx, &off, p->rank - 2));                                          \
      return;                                                                                      \
    }                                                                                              \
    do {                                                                                           \
      const T *src = x + off;                                                                      \
      if (s == 1) {                                                                                \
        memcpy(y, src, (size_t)inner * sizeof(T));                                                 \
      } else if (s == 0) {                                                                         \
        T v = *src;                                                                                \
        for (i = 0; i < inner; ++i)                                                                \
          y[i] = v;                                                                                \
      } else {                                                                                     \
        for (i = 0; i < inner; ++i)                                                                \
          y[i] = src[i * s];                                                                       \
      }                                                                                            \
      y += inner;                                                                                  \
    } while (ref_copy_next(p, idx, &off, p->rank - 1));                                            \
  }
REF_COPY_KERNEL(uint8_t)
REF_COPY_KERNEL(uint16_t)
REF_COPY_KERNEL(uint32_t)
REF_COPY_KERNEL(uint64_t)

static void ref_copy(const ref_copy_plan *p, const void *x, void *y) {
  int d;
  for (d = 0; d < p->rank; ++d)
    if (p->dims[d] == 0)
      return;
  switch (p->elem) {
  case 1:
    ref_copy_uint8_t(p, (const uint8_t *)x, (uint8_t *)y);
    break;
  case 2:
    ref_copy_uint16_t(p, (const uint16_t *)x, (uint16_t *)y);
    break;
  case 4:
    ref_copy_uint32_t(p, (const uint32_t *)x, (uint32_t *)y);
    break;
  default:
    ref_copy_uint64_t(p, (const uint64_t *)x, (uint64_t *)y);
    break;
  }
}

static odla_status ref_copy_run(const ref_node *node, const ref_io *io) {
  ref_copy((const ref_copy_plan *)node->params, io->in[0], io->out[0]);
  return ODLA_SUCCESS;
}

/* Row-major element strides of a shape. */
static void ref_strides_of(const odla_value_shape *s, int64_t *strides) {
  int64_t stride = 1;
  int d;
  for (d = s->size - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= s->dims[d];
  }
}

/* Adds a node that copies `input` into a result of type `out` along `plan`. */
static odla_value ref_add_copy(const char *op, odla_value input, odla_value_type out,
                               ref_copy_plan *plan, const odla_value_id value_id) {
  plan->elem = ref_elem_size(input->type.element_type);
  uint64_t bytes;
  if (ref_type_bytes(&out, &bytes)) /* else ref_add_op refuses it: dims are multiplied here */
    ref_copy_simplify(plan);
  return ref_add_op(op, ref_copy_run, 1, &input, out, value_id, plan, sizeof *plan);
}

static odla_value ref_conflict(const char *op, const odla_value_shape *given,
                               const odla_value_shape *computed) {
  char s1[128], s2[128];
  return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                  ref_shape_str(given, s1, sizeof s1), ref_shape_str(computed, s2, sizeof s2));
}

/* ---- Reshape --------------------------------------------------------------------------- */

static odla_status ref_reshape_run(const ref_node *node, const ref_io *io) {
  size_t bytes = ref_bytes(&node->outputs[0]->type);
  if (bytes && io->out[0] != io->in[0])
    memcpy(io->out[0], io->in[0], bytes);
  return ODLA_SUCCESS;
}

odla_value odla_Reshape(odla_value input, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  odla_value_type out;
  uint64_t bytes;
  char s1[128], s2[128];
  if (!ref_check_operands("Reshape", 1, &input))
    return NULL;
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  if (!ref_type_bytes(&out, &bytes) || ref_count(&output_dims) != ref_count(&input->type.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Reshape", "cannot reshape %s to %s",
                    ref_shape_str(&input->type.shape, s1, sizeof s1),
                    ref_shape_str(&output_dims, s2, sizeof s2));
  /* Its kernel skips the copy when the planner gave the result the operand's buffer; of an
   * argument, the result is a view. */
  return ref_view_of(
      ref_inplace_of(ref_add_op("Reshape", ref_reshape_run, 1, &input, out, value_id, NULL, 0), 0),
      0, 0);
}

/* Whether values of `t` are narrower than the byte each takes in memory (FLOAT4E2M1, INT4,
 * UINT4, INT2, UINT2: odla_ext_types.h). */
static int ref_is_sub_byte(odla_element_type t) {
  return t >= ODLA_EXT_FLOAT4E2M1 && t < ODLA_EXT_TYPE_END;
}

/* Reshape's kernel: the bytes stay, the type changes. The sub-byte types keep one value per
 * byte, so they are reinterpreted only as themselves. */
odla_value odla_ExtBitCast(odla_value input, odla_element_type target_type,
                           const odla_value_id value_id) {
  odla_value_type out;
  if (!ref_check_operands("ExtBitCast", 1, &input))
    return NULL;
  out.element_type = target_type;
  out.shape = ref_type_of(input).shape;
  if (ref_elem_size(target_type) == 0 ||
      ref_elem_size(target_type) != ref_elem_size(input->type.element_type) ||
      ((ref_is_sub_byte(target_type) || ref_is_sub_byte(input->type.element_type)) &&
       target_type != input->type.element_type))
    return ref_fail(ODLA_INVALID_PARAM, "ExtBitCast", "cannot reinterpret %s as %s",
                    ref_type_name(input->type.element_type), ref_type_name(target_type));
  return ref_inplace_of(
      ref_add_op("ExtBitCast", ref_reshape_run, 1, &input, out, value_id, NULL, 0), 0);
}

/* The result dims come from output_shape's data, so the reference backend, which plans every
 * shape when the graph is built, needs output_shape to be a constant (an int32 or int64
 * vector; 0 copies input's dim, -1 is inferred, as in ONNX Reshape). */
odla_value odla_ReshapeDynamic(odla_value input, odla_value output_shape,
                               const odla_value_id value_id) {
  odla_value in[2];
  odla_value_shape dims;
  int64_t known = 1;
  int d, infer = -1;
  char s1[128];
  in[0] = input;
  in[1] = output_shape;
  if (!ref_check_operands("ReshapeDynamic", 2, in))
    return NULL;
  if (output_shape->kind != REF_CONSTANT)
    return ref_fail(ODLA_UNSUPPORTED_OP, "ReshapeDynamic",
                    "output_shape must be a constant: this backend plans shapes at build time");
  if (!ref_is_index_type(output_shape->type.element_type) || output_shape->type.shape.size != 1 ||
      output_shape->type.shape.dims[0] > ODLA_MAX_DIMENSION)
    return ref_fail(ODLA_INVALID_PARAM, "ReshapeDynamic",
                    "output_shape must be an int32 or int64 vector of at most %d entries",
                    ODLA_MAX_DIMENSION);
  dims.size = (odla_int32)output_shape->type.shape.dims[0];
  for (d = 0; d < dims.size; ++d) {
    dims.dims[d] = ref_get_int(output_shape->type.element_type, output_shape->data, d);
    if (dims.dims[d] == 0 && d < input->type.shape.size)
      dims.dims[d] = input->type.shape.dims[d];
    if (dims.dims[d] == -1 && infer < 0)
      infer = d;
    else if (dims.dims[d] < 0 || (dims.dims[d] > 0 && known > INT64_MAX / dims.dims[d]))
      return ref_fail(ODLA_INVALID_PARAM, "ReshapeDynamic", "output_shape %s is invalid",
                      ref_shape_str(&dims, s1, sizeof s1));
    else
      known *= dims.dims[d];
  }
  if (infer >= 0)
    dims.dims[infer] = known ? ref_count(&input->type.shape) / known : 0;
  return odla_Reshape(input, dims, value_id);
}

/* Removes the given axes (each of extent 1), or every axis of extent 1 when num_of_axes is 0. */
odla_value odla_Squeeze(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                        odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value_shape dims;
  int drop[ODLA_MAX_DIMENSION] = {0}, d;
  odla_size_t i;
  char s1[128];
  if (!ref_check_operands("Squeeze", 1, &input))
    return NULL;
  for (i = 0; i < num_of_axes; ++i) {
    if (!axes || axes[i] >= (odla_uint32)input->type.shape.size ||
        input->type.shape.dims[axes[i]] != 1)
      return ref_fail(ODLA_INVALID_PARAM, "Squeeze", "axis %u of %s is not of extent 1",
                      axes ? axes[i] : 0u, ref_shape_str(&input->type.shape, s1, sizeof s1));
    drop[axes[i]] = 1;
  }
  dims.size = 0;
  for (d = 0; d < input->type.shape.size; ++d)
    if (num_of_axes ? !drop[d] : input->type.shape.dims[d] != 1)
      dims.dims[dims.size++] = input->type.shape.dims[d];
  if (ref_shape_conflicts(&output_dims, &dims))
    return ref_conflict("Squeeze", &output_dims, &dims);
  return odla_Reshape(input, dims, value_id);
}

/* ---- Shape --------------------------------------------------------------------------------- */

static odla_status ref_shape_run(const ref_node *node, const ref_io *io) {
  const odla_value_shape *s = &node->inputs[0]->type.shape;
  int d;
  for (d = 0; d < s->size; ++d)
    ref_set(node->outputs[0]->type.element_type, io->out[0], d, (double)s->dims[d]);
  return ODLA_SUCCESS;
}

/* The dims of input as an int64 vector; output_dims, when defined, must be [rank]. */
odla_value odla_Shape(odla_value input, odla_value_shape output_dims,
                      const odla_value_id value_id) {
  odla_value_type out;
  if (!ref_check_operands("Shape", 1, &input))
    return NULL;
  out.element_type = ODLA_INT64;
  out.shape.size = 1;
  out.shape.dims[0] = input->type.shape.size;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_conflict("Shape", &output_dims, &out.shape);
  return ref_add_op("Shape", ref_shape_run, 1, &input, out, value_id, NULL, 0);
}

/* ---- Transpose ------------------------------------------------------------------------ */

odla_value odla_Transpose(odla_value input, odla_value_shape permutations,
                          odla_value_shape output_dims, const odla_value_id value_id) {
  ref_copy_plan p;
  odla_value_type out;
  int64_t strides[ODLA_MAX_DIMENSION];
  int seen[ODLA_MAX_DIMENSION] = {0}, i, rank;
  char s1[128];
  if (!ref_check_operands("Transpose", 1, &input))
    return NULL;
  rank = input->type.shape.size;
  if (permutations.size != rank)
    return ref_fail(ODLA_INVALID_PARAM, "Transpose", "permutation has %d entries for rank %d",
                    permutations.size, rank);
  ref_strides_of(&input->type.shape, strides);
  memset(&p, 0, sizeof p);
  out = ref_type_of(input);
  for (i = 0; i < rank; ++i) {
    int64_t a = permutations.dims[i];
    if (a < 0 || a >= rank || seen[a]++)
      return ref_fail(ODLA_INVALID_PARAM, "Transpose", "%s is not a permutation",
                      ref_shape_str(&permutations, s1, sizeof s1));
    out.shape.dims[i] = input->type.shape.dims[a];
    p.dims[i] = out.shape.dims[i];
    p.strides[i] = strides[a];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_conflict("Transpose", &output_dims, &out.shape);
  p.rank = rank;
  return ref_add_copy("Transpose", input, out, &p, value_id);
}

/* ---- Broadcast ------------------------------------------------------------------------- */

/* Numpy's unidirectional broadcast: input's dims align with output_shape's from the right;
 * each is 1 (repeated) or equal. output_shape must be defined. */
static odla_value ref_broadcast_to(const char *op, odla_value input, odla_value_shape output_shape,
                                   const odla_value_id value_id) {
  ref_copy_plan p;
  odla_value_type out;
  odla_value in = input;
  const odla_value_shape *xs;
  int64_t strides[ODLA_MAX_DIMENSION];
  int d, lead;
  char s1[128], s2[128];
  if (!ref_check_operands(op, 1, &in))
    return NULL;
  xs = &input->type.shape;
  if (output_shape.size < xs->size || output_shape.size > ODLA_MAX_DIMENSION)
    return ref_fail(ODLA_INVALID_PARAM, op, "cannot broadcast %s to %s",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(&output_shape, s2, sizeof s2));
  ref_strides_of(xs, strides);
  memset(&p, 0, sizeof p);
  lead = output_shape.size - xs->size;
  for (d = 0; d < output_shape.size; ++d) {
    int64_t n = d < lead ? 1 : xs->dims[d - lead];
    if (output_shape.dims[d] < 0 || (n != 1 && n != output_shape.dims[d]))
      return ref_fail(ODLA_INVALID_PARAM, op, "cannot broadcast %s to %s",
                      ref_shape_str(xs, s1, sizeof s1),
                      ref_shape_str(&output_shape, s2, sizeof s2));
    p.dims[d] = output_shape.dims[d];
    p.strides[d] = n == 1 ? 0 : strides[d - lead];
  }
  p.rank = output_shape.size;
  out.element_type = input->type.element_type;
  out.shape = output_shape;
  return ref_add_copy(op, input, out, &p, value_id);
}

odla_value odla_Broadcast(const odla_value input, odla_value_shape output_shape,
                          const odla_value_id value_id) {
  return ref_broadcast_to("Broadcast", input, output_shape, value_id);
}

/* ONNX Expand as ODLA 0.5 backends implement it: output_dims is the result's shape (HALO
 * passes the inferred one), to which input broadcasts as in odla_Broadcast. output_dims
 * must be defined: this backend takes no shape from run-time data. */
odla_value odla_ExpandDims(odla_value input, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  return ref_broadcast_to("ExpandDims", input, output_dims, value_id);
}

/* ---- DimsExpand ------------------------------------------------------------------------ */

/* ODLA 0.5 does not define odla_DimsExpand; this backend defines it as the inverse of
 * odla_Squeeze (ONNX Unsqueeze): the result is input with an axis of extent 1 inserted at
 * each entry of `axes`, a constant int32 or int64 vector of positions in the result (negative
 * ones count from its end; no repeats). `original` is optional (NULL): when given it is the
 * value input was squeezed from, and the result must have its shape; with `axes` NULL the
 * axes are then the extent-1 axes that make input's shape original's. output_dims, when
 * defined, must agree. Any element type; the data is not moved (a Reshape). */
odla_value odla_DimsExpand(odla_value input, odla_value original, odla_value axes,
                           odla_value_shape output_dims, const odla_value_id id) {
  odla_value_shape dims;
  int insert[ODLA_MAX_DIMENSION] = {0}, d, k, rank;
  char s1[128], s2[128];
  if (!ref_check_operands("DimsExpand", 1, &input) ||
      (original && !ref_check_operands("DimsExpand", 1, &original)) ||
      (axes && !ref_check_operands("DimsExpand", 1, &axes)))
    return NULL;
  if (!axes && !original)
    return ref_fail(ODLA_INVALID_PARAM, "DimsExpand", "needs axes, original or both");
  if (axes) {
    int64_t n;
    if (axes->kind != REF_CONSTANT)
      return ref_fail(ODLA_UNSUPPORTED_OP, "DimsExpand",
                      "axes must be a constant: this backend plans shapes at build time");
    n = ref_count(&axes->type.shape);
    if (!ref_is_index_type(axes->type.element_type) || axes->type.shape.size > 1)
      return ref_fail(ODLA_INVALID_PARAM, "DimsExpand",
                      "axes must be an int32 or int64 scalar or vector, not %s %s",
                      ref_type_name(axes->type.element_type),
                      ref_shape_str(&axes->type.shape, s1, sizeof s1));
    if (input->type.shape.size + n > ODLA_MAX_DIMENSION)
      return ref_fail(ODLA_INVALID_PARAM, "DimsExpand",
                      "rank %d plus %lld axes exceeds ODLA_MAX_DIMENSION (%d)",
                      input->type.shape.size, (long long)n, ODLA_MAX_DIMENSION);
    rank = input->type.shape.size + (int)n;
    for (k = 0; k < (int)n; ++k) {
      int64_t a = ref_get_int(axes->type.element_type, axes->data, k), a0 = a;
      if (a < 0)
        a += rank;
      if (a < 0 || a >= rank || insert[a])
        return ref_fail(ODLA_INVALID_PARAM, "DimsExpand",
                        "axis %lld is out of range [%d, %d) or repeated", (long long)a0, -rank,
                        rank);
      insert[a] = 1;
    }
    dims.size = rank;
    for (d = 0, k = 0; d < rank; ++d)
      dims.dims[d] = insert[d] ? 1 : input->type.shape.dims[k++];
    if (original && !ref_same_shape(&dims, &original->type.shape))
      return ref_fail(
          ODLA_INVALID_PARAM, "DimsExpand", "the result %s differs from original's shape %s",
          ref_shape_str(&dims, s1, sizeof s1), ref_shape_str(&original->type.shape, s2, sizeof s2));
  } else {
    /* Input's dims, in order, must be original's with some extent-1 axes left out. */
    const odla_value_shape *os = &original->type.shape;
    for (d = 0, k = 0; d < os->size; ++d)
      if (k < input->type.shape.size && os->dims[d] == input->type.shape.dims[k])
        ++k;
      else if (os->dims[d] != 1)
        break;
    if (d < os->size || k < input->type.shape.size)
      return ref_fail(
          ODLA_INVALID_PARAM, "DimsExpand", "%s is not %s with axes of extent 1 removed",
          ref_shape_str(&input->type.shape, s1, sizeof s1), ref_shape_str(os, s2, sizeof s2));
    dims = ref_shape_copy(os);
  }
  if (ref_shape_conflicts(&output_dims, &dims))
    return ref_conflict("DimsExpand", &output_dims, &dims);
  return odla_Reshape(input, dims, id);
}

/* ---- Tile ------------------------------------------------------------------------------- */

/* Output axis d of extent repeat[d] * n[d] is viewed as two axes (repeat[d], n[d]); the first
 * has input stride 0. */
static void ref_tile_plan(const odla_value_shape *xs, const int64_t *repeat, ref_copy_plan *p) {
  int64_t strides[ODLA_MAX_DIMENSION];
  int d;
  ref_strides_of(xs, strides);
  memset(p, 0, sizeof *p);
  for (d = 0; d < xs->size; ++d) {
    p->dims[2 * d] = repeat[d];
    p->strides[2 * d] = 0;
    p->dims[2 * d + 1] = xs->dims[d];
    p->strides[2 * d + 1] = strides[d];
  }
  p->rank = 2 * xs->size;
}

odla_value odla_Tile(odla_value input, const odla_uint32 *repeat, odla_value_shape output_dims,
                     const odla_value_id value_id) {
  ref_copy_plan p;
  odla_value_type out;
  int64_t reps[ODLA_MAX_DIMENSION];
  int d;
  if (!ref_check_operands("Tile", 1, &input))
    return NULL;
  if (!repeat && input->type.shape.size > 0)
    return ref_fail(ODLA_INVALID_PARAM, "Tile", "repeat is NULL");
  out = ref_type_of(input);
  for (d = 0; d < input->type.shape.size; ++d) {
    reps[d] = repeat[d]; /* up to 2^32 - 1, times a dim of up to 2^48 */
    if (reps[d] > 0 && input->type.shape.dims[d] > INT64_MAX / reps[d])
      return ref_fail(ODLA_INVALID_PARAM, "Tile", "repeat[%d] = %lld times extent %lld passes 2^63",
                      d, (long long)reps[d], (long long)input->type.shape.dims[d]);
    out.shape.dims[d] = input->type.shape.dims[d] * reps[d];
  }
  if (!ref_result_fits("Tile", &out))
    return NULL;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_conflict("Tile", &output_dims, &out.shape);
  ref_tile_plan(&input->type.shape, reps, &p);
  return ref_add_copy("Tile", input, out, &p, value_id);
}

typedef struct {
  ref_copy_plan plan;
  int64_t repeat[ODLA_MAX_DIMENSION]; /* what the repeat operand must hold; -1: anything */
  int rank;
} ref_tile_dynamic_params;

static odla_status ref_tile_dynamic_run(const ref_node *node, const ref_io *io) {
  const ref_tile_dynamic_params *p = (const ref_tile_dynamic_params *)node->params;
  odla_element_type rt = node->inputs[1]->type.element_type;
  int d;
  for (d = 0; d < p->rank; ++d) {
    int64_t r = ref_get_int(rt, io->in[1], d);
    if (r < 0 || (p->repeat[d] >= 0 && r != p->repeat[d]))
      return ref_data_error("TileDynamic", "repeat[%d] is %lld; the planned shape needs %lld", d,
                            (long long)r, (long long)p->repeat[d]);
  }
  ref_copy(&p->plan, io->in[0], io->out[0]);
  return ODLA_SUCCESS;
}

/* The repeats are read at run time and must agree with output_dims, which must be defined. */
odla_value odla_TileDynamic(odla_value input, odla_value repeat, odla_value_shape output_dims,
                            const odla_value_id value_id) {
  ref_tile_dynamic_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *xs;
  int d;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = repeat;
  if (!ref_check_operands("TileDynamic", 2, in))
    return NULL;
  xs = &input->type.shape;
  if (!ref_is_index_type(repeat->type.element_type) || ref_count(&repeat->type.shape) != xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "TileDynamic",
                    "repeat must be an int32 or int64 vector of %d entries", xs->size);
  if (output_dims.size != xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "TileDynamic",
                    "output_dims %s must be defined, with the rank of input %s",
                    ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  if (!ref_result_fits("TileDynamic", &out)) /* the copy plan multiplies its dims */
    return NULL;
  memset(&p, 0, sizeof p);
  p.rank = xs->size;
  for (d = 0; d < xs->size; ++d) {
    int64_t n = xs->dims[d], o = output_dims.dims[d];
    if (n == 0 ? o != 0 : (o < 0 || o % n != 0))
      return ref_fail(ODLA_INVALID_PARAM, "TileDynamic",
                      "output_dims %s are not a tiling of input %s",
                      ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
    p.repeat[d] = n == 0 ? -1 : o / n;
  }
  ref_tile_plan(xs, p.repeat, &p.plan);
  for (d = 0; d < xs->size; ++d)
    if (p.plan.dims[2 * d] < 0)
      p.plan.dims[2 * d] = 0; /* an empty axis: nothing to copy */
  p.plan.elem = ref_elem_size(input->type.element_type);
  ref_copy_simplify(&p.plan);
  return ref_add_op("TileDynamic", ref_tile_dynamic_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- Slice ------------------------------------------------------------------------------ */

/* The number of elements start, start + stride, ... before end (exclusive). */
static int64_t ref_slice_count(int64_t start, int64_t end, int64_t stride) {
  if (stride > 0)
    return end > start ? (end - start + stride - 1) / stride : 0;
  return start > end ? (start - end - stride - 1) / -stride : 0;
}

/* start and end are indices into the axis, not counted from the end: the caller resolves
 * negative indices. They are clamped to the axis, [0, n] for a positive stride and
 * [-1, n - 1] for a negative one, so that end = -1 with a negative stride runs through
 * element 0. The result takes elements start, start + stride, ... before end. */
odla_value odla_Slice(odla_value input, const odla_int32 *start, const odla_int32 *end,
                      const odla_int32 *stride, odla_value_shape output_dims,
                      const odla_value_id value_id) {
  ref_copy_plan p;
  odla_value_type out;
  int64_t strides[ODLA_MAX_DIMENSION];
  int d;
  if (!ref_check_operands("Slice", 1, &input))
    return NULL;
  if ((!start || !end || !stride) && input->type.shape.size > 0)
    return ref_fail(ODLA_INVALID_PARAM, "Slice", "start, end and stride must not be NULL");
  ref_strides_of(&input->type.shape, strides);
  memset(&p, 0, sizeof p);
  out = ref_type_of(input);
  for (d = 0; d < input->type.shape.size; ++d) {
    int64_t n = input->type.shape.dims[d], s = stride[d], b = start[d], e = end[d];
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    if (s == 0)
      return ref_fail(ODLA_INVALID_PARAM, "Slice", "stride of axis %d is 0", d);
    b = b < lo ? lo : b > hi ? hi : b;
    e = e < lo ? lo : e > hi ? hi : e;
    out.shape.dims[d] = ref_slice_count(b, e, s);
    p.dims[d] = out.shape.dims[d];
    p.strides[d] = s * strides[d];
    if (out.shape.dims[d] > 0)
      p.base += b * strides[d];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_conflict("Slice", &output_dims, &out.shape);
  p.rank = input->type.shape.size;
  return ref_add_copy("Slice", input, out, &p, value_id);
}

typedef struct {
  int rank;
  int64_t in_dims[ODLA_MAX_DIMENSION], out_dims[ODLA_MAX_DIMENSION];
  size_t elem;
} ref_slice_runtime_params;

static odla_status ref_slice_runtime_run(const ref_node *node, const ref_io *io) {
  const ref_slice_runtime_params *p = (const ref_slice_runtime_params *)node->params;
  ref_copy_plan plan;
  int64_t stride = 1;
  int d;
  memset(&plan, 0, sizeof plan);
  for (d = p->rank - 1; d >= 0; --d) {
    int64_t n = p->in_dims[d], m = p->out_dims[d];
    int64_t b = ref_get_int(node->inputs[1]->type.element_type, io->in[1], d);
    int64_t c = ref_get_int(node->inputs[2]->type.element_type, io->in[2], d);
    int64_t s = ref_get_int(node->inputs[3]->type.element_type, io->in[3], d);
    if (b < 0)
      b += n;
    if (c != m || s == 0 ||
        (m > 0 && (b < 0 || b >= n || b + (m - 1) * s < 0 || b + (m - 1) * s >= n)))
      return ref_data_error("SliceDynamic",
                            "axis %d: start %lld, size %lld, stride %lld do not "
                            "take the planned %lld of its %lld elements",
                            d, (long long)b, (long long)c, (long long)s, (long long)m,
                            (long long)n);
    plan.dims[d] = m;
    plan.strides[d] = s * stride;
    if (m > 0)
      plan.base += b * stride;
    stride *= n;
  }
  plan.rank = p->rank;
  plan.elem = p->elem;
  if (plan.rank == 0) {
    plan.rank = 1;
    plan.dims[0] = plan.strides[0] = 1;
  }
  ref_copy(&plan, io->in[0], io->out[0]);
  return ODLA_SUCCESS;
}

/* start, size and stride are int32 or int64 vectors with one entry per axis of input, read at
 * run time: the result takes size[d] elements start[d], start[d] + stride[d], ... along axis d
 * (a negative start counts from the end). output_dims must be defined; execution fails when
 * size differs from it or an element lies outside the axis. */
odla_value odla_SliceDynamic(odla_value input, odla_value start, odla_value size, odla_value stride,
                             odla_value_shape output_dims, const odla_value_id value_id) {
  ref_slice_runtime_params p;
  odla_value in[4];
  odla_value_type out;
  int i, d;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = start;
  in[2] = size;
  in[3] = stride;
  if (!ref_check_operands("SliceDynamic", 4, in))
    return NULL;
  for (i = 1; i < 4; ++i)
    if (!ref_is_index_type(in[i]->type.element_type) ||
        ref_count(&in[i]->type.shape) != input->type.shape.size)
      return ref_fail(ODLA_INVALID_PARAM, "SliceDynamic",
                      "start, size and stride must be int32 or int64 vectors of %d entries",
                      input->type.shape.size);
  if (output_dims.size != input->type.shape.size)
    return ref_fail(ODLA_INVALID_PARAM, "SliceDynamic",
                    "output_dims %s must be defined, with the rank of input %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&input->type.shape, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.rank = input->type.shape.size;
  p.elem = ref_elem_size(input->type.element_type);
  for (d = 0; d < p.rank; ++d) {
    if (output_dims.dims[d] < 0)
      return ref_fail(ODLA_INVALID_PARAM, "SliceDynamic", "output_dims %s has a negative dim",
                      ref_shape_str(&output_dims, s1, sizeof s1));
    p.in_dims[d] = input->type.shape.dims[d];
    p.out_dims[d] = output_dims.dims[d];
  }
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  return ref_add_op("SliceDynamic", ref_slice_runtime_run, 4, in, out, value_id, &p, sizeof p);
}

/* ---- Split ---------------------------------------------------------------------------- */

/* num_split equal parts along the axis that split_dim holds (a constant int32 or int64
 * scalar: this backend plans shapes at build time). Each part is a Slice. */
odla_values odla_Split(odla_value input, odla_value split_dim, odla_int32 num_split,
                       const odla_value_ids value_ids) {
  odla_values result;
  odla_value in[2];
  int64_t axis, part;
  odla_int32 start[ODLA_MAX_DIMENSION], end[ODLA_MAX_DIMENSION], stride[ODLA_MAX_DIMENSION];
  odla_value_shape undefined;
  int i, d, rank;
  memset(&result, 0, sizeof result); /* NULL results when the split is rejected */
  in[0] = input;
  in[1] = split_dim;
  if (!ref_check_operands("Split", 2, in))
    return result;
  rank = input->type.shape.size;
  if (split_dim->kind != REF_CONSTANT || !ref_is_index_type(split_dim->type.element_type) ||
      ref_count(&split_dim->type.shape) != 1) {
    ref_fail(ODLA_INVALID_PARAM, "Split", "split_dim must be a constant int32 or int64 scalar");
    return result;
  }
  axis = ref_get_int(split_dim->type.element_type, split_dim->data, 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || num_split < 1 || num_split > ODLA_MAX_OUTPUTS ||
      (odla_size_t)num_split != value_ids.size || input->type.shape.dims[axis] % num_split != 0) {
    ref_fail(ODLA_INVALID_PARAM, "Split",
             "cannot split axis %lld of a rank-%d value into %d equal parts with %d ids",
             (long long)axis, rank, num_split, (int)value_ids.size);
    return result;
  }
  part = input->type.shape.dims[axis] / num_split;
  for (d = 0; d < rank; ++d) {
    start[d] = 0;
    end[d] = (odla_int32)input->type.shape.dims[d];
    stride[d] = 1;
  }
  undefined.size = -1;
  for (i = 0; i < num_split; ++i) {
    start[axis] = (odla_int32)(i * part);
    end[axis] = (odla_int32)((i + 1) * part);
    result.values[i] = odla_Slice(input, start, end, stride, undefined, value_ids.value_ids[i]);
    if (!result.values[i]) {
      result.size = 0;
      return result;
    }
  }
  result.size = (odla_size_t)num_split;
  return result;
}

/* ---- Concat ------------------------------------------------------------------------- */

typedef struct {
  int64_t outer;                 /* product of dims before the axis */
  size_t rows[ODLA_MAX_OUTPUTS]; /* bytes of each input's row (from the axis on) */
} ref_concat_params;

typedef struct {
  const ref_node *node;
  const ref_io *io;
  size_t row; /* bytes of one outer index's result: the inputs' rows */
} ref_concat_job;

/* Part `index` of the result's bytes, copied from the inputs' rows it covers: a Concat of
 * REF_PARALLEL_COPY_MIN bytes or more splits its copies over the context's threads. */
static void ref_concat_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_concat_job *job = (const ref_concat_job *)arg;
  const ref_concat_params *p = (const ref_concat_params *)job->node->params;
  unsigned char *y = (unsigned char *)job->io->out[0];
  int64_t lo, hi;
  (void)scratch;
  ref_split(p->outer * (int64_t)job->row, 64, index, parts, &lo, &hi);
  while (lo < hi) {
    const int64_t o = lo / (int64_t)job->row;
    const size_t at = (size_t)(lo % (int64_t)job->row);
    size_t base = 0, n;
    int i = 0;
    while (at >= base + p->rows[i]) /* the input whose row holds byte `at` */
      base += p->rows[i++];
    n = base + p->rows[i] - at;
    if ((int64_t)n > hi - lo)
      n = (size_t)(hi - lo);
    {
      const unsigned char *from =
          (const unsigned char *)job->io->in[i] + o * (int64_t)p->rows[i] + (at - base);
      if (from != y + lo) /* a part its producer wrote in place (odlac's --dim stages) */
        memcpy(y + lo, from, n);
    }
    lo += (int64_t)n;
  }
}

static odla_status ref_concat_run(const ref_node *node, const ref_io *io) {
  const ref_concat_params *p = (const ref_concat_params *)node->params;
  unsigned char *y = (unsigned char *)io->out[0];
  int parts = ref_threads_count(ref_io_threads(io));
  ref_concat_job job;
  int64_t o;
  int i;
  job.node = node;
  job.io = io;
  job.row = 0;
  for (i = 0; i < node->num_inputs; ++i)
    job.row += p->rows[i];
  if (parts > 1 && job.row && (size_t)p->outer * job.row >= REF_PARALLEL_COPY_MIN) {
    ref_parallel(ref_io_threads(io), parts, ref_concat_part, &job, (unsigned char *)io->scratch);
    return ODLA_SUCCESS;
  }
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < node->num_inputs; ++i) {
      const unsigned char *from = (const unsigned char *)io->in[i] + o * p->rows[i];
      if (p->rows[i] && from != y) /* not a part its producer wrote in place */
        memcpy(y, from, p->rows[i]);
      y += p->rows[i];
    }
  return ODLA_SUCCESS;
}

odla_value odla_Concat(odla_values inputs, odla_int32 axis, odla_value_shape output_shape,
                       const odla_value_id value_id) {
  ref_concat_params p;
  odla_value_type out;
  size_t elem, inner = 1;
  int i, d, rank;
  char s1[128], s2[128];
  if (inputs.size < 1 || inputs.size > ODLA_MAX_OUTPUTS)
    return ref_fail(ODLA_INVALID_PARAM, "Concat", "needs 1 to %d inputs", ODLA_MAX_OUTPUTS);
  if (!ref_check_operands("Concat", (int)inputs.size, inputs.values))
    return NULL;
  out = ref_type_of(inputs.values[0]);
  rank = out.shape.size;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ref_fail(ODLA_INVALID_PARAM, "Concat", "axis %d out of range for rank %d", axis, rank);
  out.shape.dims[axis] = 0;
  for (i = 0; i < (int)inputs.size; ++i) {
    const odla_value_type *t = &inputs.values[i]->type;
    int fits = t->element_type == out.element_type && t->shape.size == rank;
    for (d = 0; fits && d < rank; ++d)
      fits = d == axis || t->shape.dims[d] == out.shape.dims[d];
    if (!fits)
      return ref_fail(ODLA_INVALID_PARAM, "Concat", "input %d %s does not match input 0 %s", i,
                      ref_shape_str(&t->shape, s1, sizeof s1),
                      ref_shape_str(&inputs.values[0]->type.shape, s2, sizeof s2));
    out.shape.dims[axis] += t->shape.dims[axis];
  }
  if (ref_shape_conflicts(&output_shape, &out.shape))
    return ref_conflict("Concat", &output_shape, &out.shape);
  elem = ref_elem_size(out.element_type);
  memset(&p, 0, sizeof p);
  p.outer = 1;
  for (d = 0; d < axis; ++d)
    p.outer *= out.shape.dims[d];
  for (d = axis + 1; d < rank; ++d)
    inner *= (size_t)out.shape.dims[d];
  for (i = 0; i < (int)inputs.size; ++i)
    p.rows[i] = (size_t)inputs.values[i]->type.shape.dims[axis] * inner * elem;
  return ref_add_op("Concat", ref_concat_run, (int)inputs.size, inputs.values, out, value_id, &p,
                    sizeof p);
}

/* ---- Stack ---------------------------------------------------------------------------- */

/* numpy.stack: 1 to ODLA_MAX_OUTPUTS inputs of one element type and shape are joined along a
 * new axis `axis` of the result (negative: counted from the result's rank). It is a Concat
 * of the inputs viewed with an extent-1 axis there, so it shares Concat's kernel. */
odla_value odla_Stack(odla_values inputs, odla_int32 axis, odla_value_shape output_shape,
                      const odla_value_id value_id) {
  ref_concat_params p;
  odla_value_type out;
  const odla_value_type *t0;
  size_t row;
  int i, d, rank, given = axis;
  char s1[128], s2[128];
  if (inputs.size < 1 || inputs.size > ODLA_MAX_OUTPUTS)
    return ref_fail(ODLA_INVALID_PARAM, "Stack", "needs 1 to %d inputs", ODLA_MAX_OUTPUTS);
  if (!ref_check_operands("Stack", (int)inputs.size, inputs.values))
    return NULL;
  t0 = &inputs.values[0]->type;
  rank = t0->shape.size + 1;
  if (rank > ODLA_MAX_DIMENSION)
    return ref_fail(ODLA_INVALID_PARAM, "Stack", "the result's rank %d exceeds %d", rank,
                    ODLA_MAX_DIMENSION);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ref_fail(ODLA_INVALID_PARAM, "Stack", "axis %d out of range for result rank %d", given,
                    rank);
  for (i = 1; i < (int)inputs.size; ++i) {
    const odla_value_type *t = &inputs.values[i]->type;
    if (t->element_type != t0->element_type || !ref_same_shape(&t->shape, &t0->shape))
      return ref_fail(ODLA_INVALID_PARAM, "Stack", "input %d %s %s differs from input 0 %s %s", i,
                      ref_type_name(t->element_type), ref_shape_str(&t->shape, s1, sizeof s1),
                      ref_type_name(t0->element_type), ref_shape_str(&t0->shape, s2, sizeof s2));
  }
  out.element_type = t0->element_type;
  out.shape.size = rank;
  for (d = 0; d < rank; ++d)
    out.shape.dims[d] =
        d < axis ? t0->shape.dims[d] : (d == axis ? (int64_t)inputs.size : t0->shape.dims[d - 1]);
  if (ref_shape_conflicts(&output_shape, &out.shape))
    return ref_conflict("Stack", &output_shape, &out.shape);
  memset(&p, 0, sizeof p);
  p.outer = 1;
  row = ref_elem_size(out.element_type);
  for (d = 0; d < t0->shape.size; ++d) {
    if (d < axis)
      p.outer *= t0->shape.dims[d];
    else
      row *= (size_t)t0->shape.dims[d];
  }
  for (i = 0; i < (int)inputs.size; ++i)
    p.rows[i] = row;
  return ref_add_op("Stack", ref_concat_run, (int)inputs.size, inputs.values, out, value_id, &p,
                    sizeof p);
}

/* ---- Pad (zeros) ---------------------------------------------------------------------- */

typedef struct {
  int rank;
  size_t elem;
  int64_t in_dims[ODLA_MAX_DIMENSION], out_dims[ODLA_MAX_DIMENSION], front[ODLA_MAX_DIMENSION];
} ref_pad_params;

static odla_status ref_pad_run(const ref_node *node, const ref_io *io) {
  const ref_pad_params *p = (const ref_pad_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, out_strides[ODLA_MAX_DIMENSION], stride = 1, off;
  int64_t row = p->in_dims[p->rank - 1];
  int d;
  memset(y, 0, ref_bytes(&node->outputs[0]->type));
  if (ref_count(&node->inputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  for (d = p->rank - 1; d >= 0; --d) {
    out_strides[d] = stride;
    stride *= p->out_dims[d];
  }
  /* Copy each innermost input row to its place in the output. */
  for (;;) {
    off = 0;
    for (d = 0; d < p->rank; ++d)
      off += (idx[d] + p->front[d]) * out_strides[d];
    memcpy(y + (size_t)off * p->elem, x, (size_t)row * p->elem);
    x += (size_t)row * p->elem;
    for (d = p->rank - 2; d >= 0; --d) {
      if (++idx[d] < p->in_dims[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      return ODLA_SUCCESS;
  }
}

/* Pads with zeros (all bits zero, which is 0 in every element type). */
odla_value odla_Pad(odla_value input, const odla_uint32 *padding_front,
                    const odla_uint32 *padding_back, odla_value_shape output_dims,
                    const odla_value_id value_id) {
  ref_pad_params p;
  odla_value_type out;
  int i;
  if (!ref_check_operands("Pad", 1, &input))
    return NULL;
  memset(&p, 0, sizeof p);
  p.rank = input->type.shape.size;
  p.elem = ref_elem_size(input->type.element_type);
  out = ref_type_of(input);
  for (i = 0; i < p.rank; ++i) {
    p.in_dims[i] = input->type.shape.dims[i];
    p.front[i] = padding_front ? padding_front[i] : 0;
    p.out_dims[i] = p.in_dims[i] + p.front[i] + (padding_back ? padding_back[i] : 0);
    out.shape.dims[i] = p.out_dims[i];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_conflict("Pad", &output_dims, &out.shape);
  if (p.rank == 0) {
    p.rank = 1;
    p.in_dims[0] = p.out_dims[0] = 1;
  }
  return ref_add_op("Pad", ref_pad_run, 1, &input, out, value_id, &p, sizeof p);
}

/* ---- Compress --------------------------------------------------------------------------- */

typedef struct {
  int64_t outer, extent, inner; /* input viewed as [outer, extent, inner] around the axis */
  int64_t slots;                /* the result's extent along the axis */
  int64_t cond_count;           /* entries of condition */
  size_t elem;
} ref_compress_params;

static odla_status ref_compress_run(const ref_node *node, const ref_io *io) {
  const ref_compress_params *p = (const ref_compress_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  const unsigned char *cond = (const unsigned char *)io->in[1];
  unsigned char *y = (unsigned char *)io->out[0];
  size_t row = (size_t)p->inner * p->elem;
  int64_t o, j, taken = 0;
  for (j = 0; j < p->cond_count; ++j)
    taken += cond[j] != 0;
  if (taken != p->slots)
    return ref_data_error("Compress", "condition keeps %lld slices; the planned result has %lld",
                          (long long)taken, (long long)p->slots);
  for (o = 0; o < p->outer; ++o) {
    const unsigned char *xo = x + (size_t)(o * p->extent) * row;
    for (j = 0; j < p->cond_count; ++j)
      if (cond[j]) {
        memcpy(y, xo + (size_t)j * row, row);
        y += row;
      }
  }
  return ODLA_SUCCESS;
}

/* Keeps the slices along `axis` whose condition entry (bool, at most the axis' extent
 * entries) is true. The result has max_output_shape, which must be defined and equal to
 * input's shape outside the axis. A value's shape is fixed when the graph is built, so a
 * shorter result could not be reported: execution fails when the condition keeps another
 * number of slices than max_output_shape has along the axis. */
odla_value odla_Compress(odla_value input, odla_value condition, odla_int32 axis,
                         odla_value_shape max_output_shape, const odla_value_id value_id) {
  ref_compress_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *xs;
  int d;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = condition;
  if (!ref_check_operands("Compress", 2, in))
    return NULL;
  xs = &input->type.shape;
  if (axis < 0)
    axis += xs->size;
  if (axis < 0 || axis >= xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "Compress", "axis %d out of range for rank %d", axis,
                    xs->size);
  if (condition->type.element_type != ODLA_BOOL || condition->type.shape.size != 1 ||
      condition->type.shape.dims[0] > xs->dims[axis])
    return ref_fail(ODLA_INVALID_PARAM, "Compress",
                    "condition must be a bool vector of at most %lld entries",
                    (long long)xs->dims[axis]);
  if (max_output_shape.size != xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "Compress", "max_output_shape %s must have rank %d",
                    ref_shape_str(&max_output_shape, s1, sizeof s1), xs->size);
  memset(&p, 0, sizeof p);
  p.outer = p.inner = 1;
  for (d = 0; d < xs->size; ++d) {
    if (d != axis && max_output_shape.dims[d] != xs->dims[d])
      return ref_fail(ODLA_INVALID_PARAM, "Compress",
                      "max_output_shape %s differs from input %s outside axis %d",
                      ref_shape_str(&max_output_shape, s1, sizeof s1),
                      ref_shape_str(xs, s2, sizeof s2), axis);
    if (d < axis)
      p.outer *= xs->dims[d];
    else if (d > axis)
      p.inner *= xs->dims[d];
  }
  p.extent = xs->dims[axis];
  p.slots = max_output_shape.dims[axis];
  if (p.slots < 0)
    return ref_fail(ODLA_INVALID_PARAM, "Compress", "max_output_shape %s has a negative dim",
                    ref_shape_str(&max_output_shape, s1, sizeof s1));
  p.cond_count = condition->type.shape.dims[0];
  p.elem = ref_elem_size(input->type.element_type);
  out.element_type = input->type.element_type;
  out.shape = max_output_shape;
  return ref_add_op("Compress", ref_compress_run, 2, in, out, value_id, &p, sizeof p);
}

/* ---- Fill ------------------------------------------------------------------------------- */

typedef struct {
  int64_t rows, cols, k;
} ref_eye_params;

static odla_status ref_eye_run(const ref_node *node, const ref_io *io) {
  const ref_eye_params *p = (const ref_eye_params *)node->params;
  odla_element_type t = node->outputs[0]->type.element_type;
  int64_t i;
  memset(io->out[0], 0, ref_bytes(&node->outputs[0]->type));
  for (i = 0; i < p->rows; ++i)
    if (i + p->k >= 0 && i + p->k < p->cols)
      ref_set(t, io->out[0], i * p->cols + i + p->k, 1.0);
  return ODLA_SUCCESS;
}

/* ODLA_EyeLike: a rank-2 value of `type` with ones on the diagonal p0 (an integer: 0 is the
 * main diagonal, positive above it) and zeros elsewhere; p1 and seed are ignored. The random
 * methods are not implemented: results that differ from every other backend's are no use to
 * a reference. */
odla_value odla_Fill(odla_value_type type, odla_fill_method method, odla_float32 p0,
                     odla_float32 p1, odla_float32 seed, const odla_value_id value_id) {
  ref_eye_params p;
  char s1[128];
  (void)p1;
  (void)seed;
  if (!ref_check_operands("Fill", 0, NULL))
    return NULL;
  if (method != ODLA_EyeLike)
    return ref_fail(ODLA_UNSUPPORTED_OP, "Fill", "method %d is not supported (only ODLA_EyeLike)",
                    (int)method);
  if (type.shape.size != 2 || type.shape.dims[0] < 0 || type.shape.dims[1] < 0)
    return ref_fail(ODLA_INVALID_PARAM, "Fill", "ODLA_EyeLike needs a rank-2 shape, got %s",
                    ref_shape_str(&type.shape, s1, sizeof s1));
  if (!(p0 > -1e9f && p0 < 1e9f) || p0 != (odla_float32)(int64_t)p0)
    return ref_fail(ODLA_INVALID_PARAM, "Fill", "diagonal %g is not an integer", (double)p0);
  p.rows = type.shape.dims[0];
  p.cols = type.shape.dims[1];
  p.k = (int64_t)p0;
  return ref_add_op("Fill", ref_eye_run, 0, NULL, type, value_id, &p, sizeof p);
}

/* ---- odla_ExtSliceDynamic --------------------------------------------------------------- */

typedef struct {
  int rank;
  int64_t count;                        /* entries of starts (and of axes and steps) */
  int64_t in_dims[ODLA_MAX_DIMENSION];  /* input dims */
  int64_t out_dims[ODLA_MAX_DIMENSION]; /* the planned result dims */
  size_t elem;
} ref_slice_dynamic_params;

static odla_status ref_slice_dynamic_run(const ref_node *node, const ref_io *io) {
  const ref_slice_dynamic_params *p = (const ref_slice_dynamic_params *)node->params;
  int64_t begin[ODLA_MAX_DIMENSION], step[ODLA_MAX_DIMENSION], strides[ODLA_MAX_DIMENSION];
  int64_t stride = 1, i;
  int seen[ODLA_MAX_DIMENSION] = {0}, d;
  ref_copy_plan plan;
  for (d = 0; d < p->rank; ++d) {
    begin[d] = 0;
    step[d] = 1;
  }
  for (i = 0; i < p->count; ++i) {
    int64_t a = node->inputs[3] ? ref_get_int(node->inputs[3]->type.element_type, io->in[3], i) : i;
    int64_t s = node->inputs[4] ? ref_get_int(node->inputs[4]->type.element_type, io->in[4], i) : 1;
    int64_t b = ref_get_int(node->inputs[1]->type.element_type, io->in[1], i);
    int64_t e = ref_get_int(node->inputs[2]->type.element_type, io->in[2], i);
    int64_t n, lo, hi;
    if (a < 0)
      a += p->rank;
    if (a < 0 || a >= p->rank || seen[a]++)
      return ref_data_error("ExtSliceDynamic", "axes[%lld] is out of range or repeated",
                            (long long)i);
    if (s == 0)
      return ref_data_error("ExtSliceDynamic", "steps[%lld] is 0", (long long)i);
    n = p->in_dims[a];
    /* A step longer than the axis takes at most one element, as the axis' length would. */
    if (s > n + 1 || s < -(n + 1))
      s = s > 0 ? n + 1 : -(n + 1);
    /* Negative indices count from the end; then clamp as ONNX does. */
    if (b < 0)
      b = b < -n ? -1 : b + n;
    if (e < 0)
      e = e < -n ? -1 : e + n;
    lo = s > 0 ? 0 : -1;
    hi = s > 0 ? n : n - 1;
    b = b < 0 ? 0 : b > hi ? hi : b; /* a start clamps to [0, n - 1] with a negative step */
    e = e < lo ? lo : e > hi ? hi : e;
    if (ref_slice_count(b, e, s) != p->out_dims[a])
      return ref_data_error("ExtSliceDynamic",
                            "axis %lld: start %lld, end %lld, step %lld take %lld elements; the "
                            "planned shape has %lld",
                            (long long)a, (long long)b, (long long)e, (long long)s,
                            (long long)ref_slice_count(b, e, s), (long long)p->out_dims[a]);
    begin[a] = b;
    step[a] = s;
  }
  for (d = p->rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= p->in_dims[d];
  }
  memset(&plan, 0, sizeof plan);
  for (d = 0; d < p->rank; ++d) {
    if (!seen[d] && p->out_dims[d] != p->in_dims[d])
      return ref_data_error("ExtSliceDynamic",
                            "axis %d is not sliced but the planned shape "
                            "changes it",
                            d);
    plan.dims[d] = p->out_dims[d];
    plan.strides[d] = step[d] * strides[d];
    if (p->out_dims[d] > 0)
      plan.base += begin[d] * strides[d];
  }
  plan.rank = p->rank;
  plan.elem = p->elem;
  if (plan.rank == 0) {
    plan.rank = 1;
    plan.dims[0] = 1;
    plan.strides[0] = 1;
  }
  ref_copy(&plan, io->in[0], io->out[0]);
  return ODLA_SUCCESS;
}

odla_value odla_ExtSliceDynamic(odla_value input, odla_value starts, odla_value ends,
                                odla_value axes, odla_value steps, odla_value_shape output_dims,
                                const odla_value_id value_id) {
  ref_slice_dynamic_params p;
  odla_value in[5];
  odla_value_type out;
  const odla_value_shape *xs;
  int i, d;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = starts;
  in[2] = ends;
  in[3] = axes;
  in[4] = steps;
  if (!ref_check_operands("ExtSliceDynamic", 3, in) ||
      (axes && !ref_check_operands("ExtSliceDynamic", 1, &in[3])) ||
      (steps && !ref_check_operands("ExtSliceDynamic", 1, &in[4])))
    return NULL;
  xs = &input->type.shape;
  memset(&p, 0, sizeof p);
  p.count = ref_count(&starts->type.shape);
  for (i = 1; i < 5; ++i)
    if (in[i] && (!ref_is_index_type(in[i]->type.element_type) || in[i]->type.shape.size != 1 ||
                  in[i]->type.shape.dims[0] != p.count || p.count > xs->size))
      return ref_fail(ODLA_INVALID_PARAM, "ExtSliceDynamic",
                      "starts, ends, axes and steps must be int32 or int64 vectors of the same "
                      "length, at most the rank %d of input",
                      xs->size);
  if (output_dims.size != xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "ExtSliceDynamic",
                    "output_dims %s must be defined, with the rank of input %s",
                    ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
  p.rank = xs->size;
  for (d = 0; d < xs->size; ++d) {
    if (output_dims.dims[d] < 0 || output_dims.dims[d] > xs->dims[d])
      return ref_fail(ODLA_INVALID_PARAM, "ExtSliceDynamic",
                      "output_dims %s do not fit in input %s",
                      ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
    p.in_dims[d] = xs->dims[d];
    p.out_dims[d] = output_dims.dims[d];
  }
  p.elem = ref_elem_size(input->type.element_type);
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  return ref_add_op("ExtSliceDynamic", ref_slice_dynamic_run, 5, in, out, value_id, &p, sizeof p);
}

/* ---- odla_ExtPadDynamic ------------------------------------------------------------------ */

typedef struct {
  int rank;
  int mode;
  size_t elem;
  int64_t in_dims[ODLA_MAX_DIMENSION], out_dims[ODLA_MAX_DIMENSION];
} ref_pad_dynamic_params;

/* The input index that output index i (of an axis of n elements padded with `front` and
 * `back`) reads; -1: the constant. */
static int64_t ref_pad_source(int mode, int64_t i, int64_t front, int64_t back, int64_t n) {
  int64_t j = i - front;
  if (mode == ODLA_EXT_PAD_WRAP) { /* cyclic over [first, first + kept): what is not cropped */
    int64_t first = front < 0 ? -front : 0;
    int64_t kept = n - first - (back < 0 ? -back : 0); /* > 0: checked by the caller */
    if (j >= first && j < first + kept)
      return j;
    return first + ((j - first) % kept + kept) % kept;
  }
  if (j >= 0 && j < n)
    return j;
  if (mode == ODLA_EXT_PAD_CONSTANT)
    return -1;
  if (mode == ODLA_EXT_PAD_EDGE)
    return j < 0 ? 0 : n - 1;
  return j < 0 ? -j : 2 * (n - 1) - j; /* reflect: pads are smaller than n */
}

static odla_status ref_pad_dynamic_run(const ref_node *node, const ref_io *io) {
  const ref_pad_dynamic_params *p = (const ref_pad_dynamic_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  unsigned char *y = (unsigned char *)io->out[0];
  unsigned char value[8] = {0};
  int64_t front[ODLA_MAX_DIMENSION], back[ODLA_MAX_DIMENSION], in_strides[ODLA_MAX_DIMENSION];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, stride = 1, i, row, n_last;
  odla_element_type pt = node->inputs[1]->type.element_type;
  size_t e = p->elem;
  int d, r = p->rank;
  if (node->inputs[2])
    memcpy(value, io->in[2], e);
  for (d = 0; d < r; ++d) {
    int64_t b = ref_get_int(pt, io->in[1], d), a = ref_get_int(pt, io->in[1], d + r);
    int64_t n = p->in_dims[d];
    if (n + b + a != p->out_dims[d])
      return ref_data_error("ExtPadDynamic",
                            "axis %d: pads %lld and %lld give %lld elements; "
                            "the planned shape has %lld",
                            d, (long long)b, (long long)a, (long long)(n + b + a),
                            (long long)p->out_dims[d]);
    if (p->mode == ODLA_EXT_PAD_REFLECT && p->out_dims[d] > 0 && (b >= n || a >= n))
      return ref_data_error("ExtPadDynamic",
                            "axis %d: reflect pads %lld and %lld must be "
                            "smaller than the extent %lld",
                            d, (long long)b, (long long)a, (long long)n);
    if (p->mode == ODLA_EXT_PAD_EDGE && n == 0 && p->out_dims[d] > 0)
      return ref_data_error("ExtPadDynamic", "axis %d: edge padding of an empty axis", d);
    if (p->mode == ODLA_EXT_PAD_WRAP && p->out_dims[d] > 0 &&
        n - (b < 0 ? -b : 0) - (a < 0 ? -a : 0) <= 0)
      return ref_data_error("ExtPadDynamic",
                            "axis %d: wrap pads %lld and %lld leave none of "
                            "its %lld elements to repeat",
                            d, (long long)b, (long long)a, (long long)n);
    front[d] = b;
    back[d] = a;
  }
  for (d = r - 1; d >= 0; --d) {
    in_strides[d] = stride;
    stride *= p->in_dims[d];
  }
  for (d = 0; d < r; ++d)
    if (p->out_dims[d] == 0)
      return ODLA_SUCCESS;
  row = p->out_dims[r - 1];
  n_last = p->in_dims[r - 1];
  /* One output row at a time: find the input row it reads (or none), then fill it. */
  for (;;) {
    int64_t off = 0, lo, hi;
    int constant = 0;
    for (d = 0; d < r - 1; ++d) {
      int64_t j = ref_pad_source(p->mode, idx[d], front[d], back[d], p->in_dims[d]);
      if (j < 0)
        constant = 1;
      else
        off += j * in_strides[d];
    }
    /* Output columns [lo, hi) copy input columns [lo - front, hi - front). */
    lo = front[r - 1] < 0 ? 0 : front[r - 1];
    hi = front[r - 1] + n_last > row ? row : front[r - 1] + n_last;
    if (constant || hi <= lo) {
      lo = hi = 0;
      if (constant && p->mode == ODLA_EXT_PAD_CONSTANT) {
        for (i = 0; i < row; ++i)
          memcpy(y + i * e, value, e);
        y += row * e;
        goto next;
      }
    } else {
      memcpy(y + lo * e, x + (off + lo - front[r - 1]) * e, (size_t)(hi - lo) * e);
    }
    for (i = 0; i < row; ++i) {
      int64_t j;
      if (i >= lo && i < hi)
        continue;
      j = ref_pad_source(p->mode, i, front[r - 1], back[r - 1], n_last);
      memcpy(y + i * e, j < 0 ? value : x + (off + j) * e, e);
    }
    y += row * e;
  next:
    for (d = r - 2; d >= 0; --d) {
      if (++idx[d] < p->out_dims[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      return ODLA_SUCCESS;
  }
}

odla_value odla_ExtPadDynamic(odla_value input, odla_value pads, odla_value constant_value,
                              odla_int32 mode, odla_value_shape output_dims,
                              const odla_value_id value_id) {
  ref_pad_dynamic_params p;
  odla_value in[3];
  odla_value_type out;
  const odla_value_shape *xs;
  int d;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = pads;
  in[2] = constant_value;
  if (!ref_check_operands("ExtPadDynamic", 2, in) ||
      (constant_value && !ref_check_operands("ExtPadDynamic", 1, &in[2])))
    return NULL;
  xs = &input->type.shape;
  if (mode != ODLA_EXT_PAD_CONSTANT && mode != ODLA_EXT_PAD_REFLECT && mode != ODLA_EXT_PAD_EDGE &&
      mode != ODLA_EXT_PAD_WRAP)
    return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic", "mode %d is not a padding mode", mode);
  if (xs->size < 1)
    return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic", "input must have rank 1 or more");
  if (!ref_is_index_type(pads->type.element_type) || ref_count(&pads->type.shape) != 2 * xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic",
                    "pads must be an int32 or int64 vector of %d entries", 2 * xs->size);
  if (constant_value && (constant_value->type.element_type != input->type.element_type ||
                         ref_count(&constant_value->type.shape) != 1))
    return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic",
                    "constant_value must hold one element of input's element type");
  if (output_dims.size != xs->size)
    return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic",
                    "output_dims %s must be defined, with the rank of input %s",
                    ref_shape_str(&output_dims, s1, sizeof s1), ref_shape_str(xs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.rank = xs->size;
  p.mode = mode;
  p.elem = ref_elem_size(input->type.element_type);
  for (d = 0; d < xs->size; ++d) {
    if (output_dims.dims[d] < 0)
      return ref_fail(ODLA_INVALID_PARAM, "ExtPadDynamic", "output_dims %s has a negative dim",
                      ref_shape_str(&output_dims, s1, sizeof s1));
    p.in_dims[d] = xs->dims[d];
    p.out_dims[d] = output_dims.dims[d];
  }
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  return ref_add_op("ExtPadDynamic", ref_pad_dynamic_run, 3, in, out, value_id, &p, sizeof p);
}

/* ---- odla_ExtReverseSequence --------------------------------------------------------------- */

typedef struct {
  int64_t d0, d1; /* extents of axes 0 and 1 */
  size_t row;     /* bytes of one [i0, i1] block (the axes after 1) */
  int batch_axis;
} ref_reverse_sequence_params;

static odla_status ref_reverse_sequence_run(const ref_node *node, const ref_io *io) {
  const ref_reverse_sequence_params *p = (const ref_reverse_sequence_params *)node->params;
  const unsigned char *x = (const unsigned char *)io->in[0];
  unsigned char *y = (unsigned char *)io->out[0];
  odla_element_type lt = node->inputs[1]->type.element_type;
  int64_t batches = p->batch_axis == 0 ? p->d0 : p->d1, steps = p->batch_axis == 0 ? p->d1 : p->d0;
  int64_t i0, i1, b;
  for (b = 0; b < batches; ++b) {
    int64_t len = ref_get_int(lt, io->in[1], b);
    if (len < 0 || len > steps)
      return ref_data_error("ExtReverseSequence", "sequence_lens[%lld] is %lld, outside [0, %lld]",
                            (long long)b, (long long)len, (long long)steps);
  }
  for (i0 = 0; i0 < p->d0; ++i0)
    for (i1 = 0; i1 < p->d1; ++i1) {
      int64_t bi = p->batch_axis == 0 ? i0 : i1, t = p->batch_axis == 0 ? i1 : i0;
      int64_t len = ref_get_int(lt, io->in[1], bi), src = t < len ? len - 1 - t : t;
      int64_t s0 = p->batch_axis == 0 ? i0 : src, s1 = p->batch_axis == 0 ? src : i1;
      memcpy(y + (size_t)(i0 * p->d1 + i1) * p->row, x + (size_t)(s0 * p->d1 + s1) * p->row,
             p->row);
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtReverseSequence(odla_value input, odla_value sequence_lens,
                                   odla_int32 batch_axis, odla_int32 time_axis,
                                   const odla_value_id value_id) {
  ref_reverse_sequence_params p;
  odla_value in[2];
  const odla_value_shape *xs;
  int d;
  in[0] = input;
  in[1] = sequence_lens;
  if (!ref_check_operands("ExtReverseSequence", 2, in))
    return NULL;
  xs = &input->type.shape;
  if (xs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, "ExtReverseSequence", "input must have rank 2 or more");
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    return ref_fail(ODLA_INVALID_PARAM, "ExtReverseSequence",
                    "batch_axis %d and time_axis %d must be 0 and 1", batch_axis, time_axis);
  if (!ref_is_index_type(sequence_lens->type.element_type) || sequence_lens->type.shape.size != 1 ||
      sequence_lens->type.shape.dims[0] != xs->dims[batch_axis])
    return ref_fail(ODLA_INVALID_PARAM, "ExtReverseSequence",
                    "sequence_lens must be an int32 or int64 vector of %lld entries",
                    (long long)xs->dims[batch_axis]);
  memset(&p, 0, sizeof p);
  p.d0 = xs->dims[0];
  p.d1 = xs->dims[1];
  p.batch_axis = batch_axis;
  p.row = ref_elem_size(input->type.element_type);
  for (d = 2; d < xs->size; ++d)
    p.row *= (size_t)xs->dims[d];
  return ref_add_op("ExtReverseSequence", ref_reverse_sequence_run, 2, in, ref_type_of(input),
                    value_id, &p, sizeof p);
}
