/* ops_index.c: indexing ops of the reference backend (Gather). They move bytes, so they
 * accept every element type. */
#include "ref.h"

#include <string.h>

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
      int64_t k = p->index64 ? ((const int64_t *)io->in[1])[i] : ((const int32_t *)io->in[1])[i];
      if (k < 0)
        k += p->extent;
      if (k < 0 || k >= p->extent)
        return ODLA_INVALID_PARAM; /* an index out of range */
      memcpy(y, x + ((size_t)(o * p->extent + k)) * row, row);
      y += row;
    }
  return ODLA_SUCCESS;
}

odla_value odla_Gather(odla_value input, odla_value indices, odla_int32 axis,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  ref_gather_params p;
  odla_value in[2];
  odla_value_type out;
  const odla_value_shape *xs;
  int i;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = indices;
  if (!ref_check_operands("Gather", 2, in))
    return NULL;
  if (indices->type.element_type != ODLA_INT32 && indices->type.element_type != ODLA_INT64)
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
    return ref_fail(ODLA_INVALID_PARAM, "Gather", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  p.extent = xs->dims[axis];
  p.count = ref_count(&indices->type.shape);
  p.elem = ref_elem_size(input->type.element_type);
  p.index64 = indices->type.element_type == ODLA_INT64;
  return ref_add_op("Gather", ref_gather_run, 2, in, out, value_id, &p, sizeof p);
}
