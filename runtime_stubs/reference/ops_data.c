/* ops_data.c: data movement in the reference backend: Reshape, Transpose, Concat and Pad.
 * They move bytes, so they accept every element type. */
#include "ref.h"

#include <string.h>

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
  char s1[128], s2[128];
  if (!ref_check_operands("Reshape", 1, &input))
    return NULL;
  out.element_type = input->type.element_type;
  out.shape = output_dims;
  if (output_dims.size < 0 || output_dims.size > ODLA_MAX_DIMENSION ||
      ref_count(&output_dims) != ref_count(&input->type.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Reshape", "cannot reshape %s to %s",
                    ref_shape_str(&input->type.shape, s1, sizeof s1),
                    ref_shape_str(&output_dims, s2, sizeof s2));
  return ref_add_op("Reshape", ref_reshape_run, 1, &input, out, value_id, NULL, 0);
}

/* ---- Transpose ------------------------------------------------------------------------ */

typedef struct {
  int rank;
  size_t elem;
  int64_t out_dims[ODLA_MAX_DIMENSION];
  int64_t in_strides[ODLA_MAX_DIMENSION]; /* input element stride of each output axis */
} ref_transpose_params;

#define REF_TRANSPOSE_KERNEL(T)                                                                 \
  static void ref_transpose_##T(const ref_transpose_params *p, const T *x, T *y) {             \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, off = 0, i;                                          \
    int64_t inner = p->out_dims[p->rank - 1], s = p->in_strides[p->rank - 1];                   \
    int d;                                                                                      \
    for (;;) {                                                                                  \
      for (i = 0; i < inner; ++i)                                                               \
        y[i] = x[off + i * s];                                                                  \
      y += inner;                                                                               \
      for (d = p->rank - 2; d >= 0; --d) {                                                      \
        off += p->in_strides[d];                                                                \
        if (++idx[d] < p->out_dims[d])                                                          \
          break;                                                                                \
        off -= p->in_strides[d] * p->out_dims[d];                                               \
        idx[d] = 0;                                                                             \
      }                                                                                         \
      if (d < 0)                                                                                \
        return;                                                                                 \
    }                                                                                           \
  }
REF_TRANSPOSE_KERNEL(uint8_t)
REF_TRANSPOSE_KERNEL(uint16_t)
REF_TRANSPOSE_KERNEL(uint32_t)
REF_TRANSPOSE_KERNEL(uint64_t)

static odla_status ref_transpose_run(const ref_node *node, const ref_io *io) {
  const ref_transpose_params *p = (const ref_transpose_params *)node->params;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  switch (p->elem) {
  case 1: ref_transpose_uint8_t(p, (const uint8_t *)io->in[0], (uint8_t *)io->out[0]); break;
  case 2: ref_transpose_uint16_t(p, (const uint16_t *)io->in[0], (uint16_t *)io->out[0]); break;
  case 4: ref_transpose_uint32_t(p, (const uint32_t *)io->in[0], (uint32_t *)io->out[0]); break;
  default: ref_transpose_uint64_t(p, (const uint64_t *)io->in[0], (uint64_t *)io->out[0]); break;
  }
  return ODLA_SUCCESS;
}

odla_value odla_Transpose(odla_value input, odla_value_shape permutations,
                          odla_value_shape output_dims, const odla_value_id value_id) {
  ref_transpose_params p;
  odla_value_type out;
  int64_t strides[ODLA_MAX_DIMENSION], stride = 1;
  int seen[ODLA_MAX_DIMENSION] = {0}, i, rank;
  char s1[128], s2[128];
  if (!ref_check_operands("Transpose", 1, &input))
    return NULL;
  rank = input->type.shape.size;
  if (permutations.size != rank)
    return ref_fail(ODLA_INVALID_PARAM, "Transpose", "permutation has %d entries for rank %d",
                    permutations.size, rank);
  for (i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= input->type.shape.dims[i];
  }
  memset(&p, 0, sizeof p);
  out = input->type;
  for (i = 0; i < rank; ++i) {
    int64_t a = permutations.dims[i];
    if (a < 0 || a >= rank || seen[a]++)
      return ref_fail(ODLA_INVALID_PARAM, "Transpose", "%s is not a permutation",
                      ref_shape_str(&permutations, s1, sizeof s1));
    out.shape.dims[i] = input->type.shape.dims[a];
    p.out_dims[i] = out.shape.dims[i];
    p.in_strides[i] = strides[a];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Transpose", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  p.rank = rank;
  if (rank == 0) {
    p.rank = 1;
    p.out_dims[0] = 1;
    p.in_strides[0] = 1;
  }
  p.elem = ref_elem_size(input->type.element_type);
  return ref_add_op("Transpose", ref_transpose_run, 1, &input, out, value_id, &p, sizeof p);
}

/* ---- Concat ------------------------------------------------------------------------- */

typedef struct {
  int64_t outer;  /* product of dims before the axis */
  size_t out_row; /* bytes of one output row (from the axis on) */
  size_t rows[ODLA_MAX_OUTPUTS]; /* bytes of each input's row */
} ref_concat_params;

static odla_status ref_concat_run(const ref_node *node, const ref_io *io) {
  const ref_concat_params *p = (const ref_concat_params *)node->params;
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t o;
  int i;
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < node->num_inputs; ++i) {
      if (p->rows[i])
        memcpy(y, (const unsigned char *)io->in[i] + o * p->rows[i], p->rows[i]);
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
  out = inputs.values[0]->type;
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
    return ref_fail(ODLA_INVALID_PARAM, "Concat", "output_shape %s differs from the computed %s",
                    ref_shape_str(&output_shape, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  elem = ref_elem_size(out.element_type);
  memset(&p, 0, sizeof p);
  p.outer = 1;
  for (d = 0; d < axis; ++d)
    p.outer *= out.shape.dims[d];
  for (d = axis + 1; d < rank; ++d)
    inner *= (size_t)out.shape.dims[d];
  for (i = 0; i < (int)inputs.size; ++i)
    p.rows[i] = (size_t)inputs.values[i]->type.shape.dims[axis] * inner * elem;
  p.out_row = (size_t)out.shape.dims[axis] * inner * elem;
  return ref_add_op("Concat", ref_concat_run, (int)inputs.size, inputs.values, out, value_id, &p,
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

odla_value odla_Pad(odla_value input, const odla_uint32 *padding_front,
                    const odla_uint32 *padding_back, odla_value_shape output_dims,
                    const odla_value_id value_id) {
  ref_pad_params p;
  odla_value_type out;
  int i;
  char s1[128], s2[128];
  if (!ref_check_operands("Pad", 1, &input))
    return NULL;
  memset(&p, 0, sizeof p);
  p.rank = input->type.shape.size;
  p.elem = ref_elem_size(input->type.element_type);
  out = input->type;
  for (i = 0; i < p.rank; ++i) {
    p.in_dims[i] = input->type.shape.dims[i];
    p.front[i] = padding_front ? padding_front[i] : 0;
    p.out_dims[i] = p.in_dims[i] + p.front[i] + (padding_back ? padding_back[i] : 0);
    out.shape.dims[i] = p.out_dims[i];
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Pad", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (p.rank == 0) {
    p.rank = 1;
    p.in_dims[0] = p.out_dims[0] = 1;
  }
  return ref_add_op("Pad", ref_pad_run, 1, &input, out, value_id, &p, sizeof p);
}

