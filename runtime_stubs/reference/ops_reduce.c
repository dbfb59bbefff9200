/* ops_reduce.c: reductions over a set of axes, and softmax along an axis, in the reference
 * backend (float32). */
#include "ref.h"

#include <math.h>
#include <string.h>

typedef struct {
  int rank;
  int64_t dims[ODLA_MAX_DIMENSION];
  int64_t out_strides[ODLA_MAX_DIMENSION]; /* 0 along reduced axes */
  int64_t out_count;
  float scale; /* 1 / elements per output, for the mean */
} ref_reduce_params;

/* One pass over the input: each element adds into the output it reduces to. */
static odla_status ref_reduce_mean_run(const ref_node *node, const ref_io *io) {
  const ref_reduce_params *p = (const ref_reduce_params *)node->params;
  const float *x = (const float *)io->in[0];
  float *y = (float *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, o = 0, i, inner = p->dims[p->rank - 1];
  int64_t inner_stride = p->out_strides[p->rank - 1];
  int d;
  memset(y, 0, (size_t)p->out_count * sizeof *y);
  if (p->out_count == 0 || p->scale == 0.0f)
    return ODLA_SUCCESS;
  for (;;) {
    if (inner_stride == 0) {
      float acc = 0.0f;
      for (i = 0; i < inner; ++i)
        acc += x[i];
      y[o] += acc;
    } else {
      for (i = 0; i < inner; ++i)
        y[o + i] += x[i];
    }
    x += inner;
    for (d = p->rank - 2; d >= 0; --d) {
      o += p->out_strides[d];
      if (++idx[d] < p->dims[d])
        break;
      o -= p->out_strides[d] * p->dims[d];
      idx[d] = 0;
    }
    if (d < 0)
      break;
  }
  for (i = 0; i < p->out_count; ++i)
    y[i] *= p->scale;
  return ODLA_SUCCESS;
}

odla_value odla_ReduceMean(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                           odla_bool keep_dims, odla_value_shape output_dims,
                           const odla_value_id value_id) {
  ref_reduce_params p;
  odla_value_type out;
  int reduced[ODLA_MAX_DIMENSION] = {0};
  int64_t stride = 1, per_output = 1;
  int i;
  size_t k;
  char s1[128], s2[128];
  if (!ref_check_operands("ReduceMean", 1, &input))
    return NULL;
  if (input->type.element_type != ODLA_FLOAT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ReduceMean", "only float32 is supported");
  memset(&p, 0, sizeof p);
  p.rank = input->type.shape.size;
  for (k = 0; k < num_of_axes; ++k) {
    if (axes[k] >= (odla_uint32)p.rank)
      return ref_fail(ODLA_INVALID_PARAM, "ReduceMean", "axis %u out of range for rank %d",
                      axes[k], p.rank);
    reduced[axes[k]] = 1;
  }
  out.element_type = ODLA_FLOAT32;
  out.shape.size = 0;
  for (i = 0; i < p.rank; ++i) {
    p.dims[i] = input->type.shape.dims[i];
    if (reduced[i])
      per_output *= p.dims[i];
    if (!reduced[i] || keep_dims)
      out.shape.dims[out.shape.size++] = reduced[i] ? 1 : p.dims[i];
  }
  for (i = p.rank - 1; i >= 0; --i) {
    p.out_strides[i] = reduced[i] ? 0 : stride;
    stride *= reduced[i] ? 1 : p.dims[i];
  }
  if (p.rank == 0) { /* a scalar reduces to itself */
    p.rank = 1;
    p.dims[0] = 1;
    p.out_strides[0] = 1;
  }
  p.out_count = ref_count(&out.shape);
  p.scale = per_output > 0 ? 1.0f / (float)per_output : 0.0f;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "ReduceMean", "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  return ref_add_op("ReduceMean", ref_reduce_mean_run, 1, &input, out, value_id, &p, sizeof p);
}

/* ---- Softmax ----------------------------------------------------------------------- */

typedef struct {
  int64_t outer, axis, inner;
} ref_softmax_params;

static odla_status ref_softmax_run(const ref_node *node, const ref_io *io) {
  const ref_softmax_params *p = (const ref_softmax_params *)node->params;
  const float *x = (const float *)io->in[0];
  float *y = (float *)io->out[0];
  int64_t o, a, i;
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < p->inner; ++i) {
      const float *xs = x + o * p->axis * p->inner + i;
      float *ys = y + o * p->axis * p->inner + i;
      float max = -HUGE_VALF, sum = 0.0f;
      for (a = 0; a < p->axis; ++a)
        max = xs[a * p->inner] > max ? xs[a * p->inner] : max;
      for (a = 0; a < p->axis; ++a) {
        ys[a * p->inner] = expf(xs[a * p->inner] - max);
        sum += ys[a * p->inner];
      }
      for (a = 0; a < p->axis; ++a)
        ys[a * p->inner] /= sum;
    }
  return ODLA_SUCCESS;
}

odla_value odla_Softmax(odla_value input, odla_int32 axis, const odla_value_id value_id) {
  ref_softmax_params p;
  int rank, i;
  if (!ref_check_operands("Softmax", 1, &input))
    return NULL;
  if (input->type.element_type != ODLA_FLOAT32)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Softmax", "only float32 is supported");
  rank = input->type.shape.size;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return ref_fail(ODLA_INVALID_PARAM, "Softmax", "axis %d out of range for rank %d", axis, rank);
  p.outer = p.inner = 1;
  p.axis = input->type.shape.dims[axis];
  for (i = 0; i < rank; ++i) {
    if (i < axis)
      p.outer *= input->type.shape.dims[i];
    else if (i > axis)
      p.inner *= input->type.shape.dims[i];
  }
  return ref_add_op("Softmax", ref_softmax_run, 1, &input, input->type, value_id, &p, sizeof p);
}
