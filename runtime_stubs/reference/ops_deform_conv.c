/* ops_deform_conv.c: the extension odla_ExtDeformConv (ONNX DeformConv) in the reference
 * backend: odla_Conv's windows with every tap moved by a learned offset and read by linear
 * interpolation (zeros outside the input), optionally scaled by a mask.
 *
 * A direct loop in double over result element, input channel of its group and kernel tap: the
 * taps sit at fractional positions that differ per result element, so there is no im2col
 * matrix shared by the channels of a group to hand to a GEMM. The geometry is ref_window's,
 * padded to 3 spatial axes (a leading padded axis has extent 1, no offset and position 0). */
#include "ops_nn.h"

#include <math.h>
#include <string.h>

typedef struct {
  ref_window w;
  int64_t n, c, m, group, offset_group, sd, taps;
  int has_bias, has_mask;
  odla_element_type type;
} ref_deform_params;

/* Input plane `x` (base: its first element) read at fractional position pos[3], linearly
 * interpolated along every axis with zeros outside. */
static double ref_deform_sample(const ref_deform_params *p, const void *x, int64_t base,
                                const double *pos) {
  int64_t lo[REF_SPATIAL], corner, a;
  double frac[REF_SPATIAL], sum = 0;
  for (a = 0; a < REF_SPATIAL; ++a) {
    double fl = floor(pos[a]);
    if (!(fl > -2 && fl < (double)p->w.in[a])) /* NaN too: every corner lies outside */
      return 0.0;
    lo[a] = (int64_t)fl;
    frac[a] = pos[a] - fl;
  }
  for (corner = 0; corner < 8; ++corner) {
    double weight = 1;
    int64_t off = 0;
    for (a = 0; a < REF_SPATIAL && weight != 0; ++a) {
      int upper = (int)(corner >> (REF_SPATIAL - 1 - a)) & 1;
      int64_t i = lo[a] + upper;
      weight *= upper ? frac[a] : 1 - frac[a];
      if (i < 0 || i >= p->w.in[a])
        weight = 0;
      off = off * p->w.in[a] + i;
    }
    if (weight != 0)
      sum += weight * ref_get(p->type, x, base + off);
  }
  return sum;
}

static odla_status ref_deform_run(const ref_node *node, const ref_io *io) {
  const ref_deform_params *p = (const ref_deform_params *)node->params;
  const ref_window *w = &p->w;
  int64_t opix = ref_window_out_count(w), ipix = ref_window_in_count(w);
  int64_t cpg = p->c / p->group, mpg = p->m / p->group, cpo = p->c / p->offset_group;
  int64_t b, m, o, ci, t, a;
  for (b = 0; b < p->n; ++b)
    for (m = 0; m < p->m; ++m)
      for (o = 0; o < opix; ++o) {
        int64_t at[REF_SPATIAL] = {o / (w->out[1] * w->out[2]), o / w->out[2] % w->out[1],
                                   o % w->out[2]};
        double acc = p->has_bias ? ref_get(p->type, io->in[3], m) : 0.0;
        for (ci = 0; ci < cpg; ++ci) {
          int64_t c = m / mpg * cpg + ci, g = c / cpo;
          for (t = 0; t < p->taps; ++t) {
            int64_t k[REF_SPATIAL] = {t / (w->k[1] * w->k[2]), t / w->k[2] % w->k[1], t % w->k[2]};
            double pos[REF_SPATIAL], scale = 1, v;
            for (a = 0; a < REF_SPATIAL; ++a) {
              int64_t axis = a - (REF_SPATIAL - p->sd); /* < 0: a padded axis */
              pos[a] = (double)(at[a] * w->stride[a] - w->pad[a] + k[a] * w->dil[a]);
              if (axis >= 0)
                pos[a] += ref_get(
                    p->type, io->in[2],
                    ((b * p->offset_group + g) * p->taps * p->sd + t * p->sd + axis) * opix + o);
            }
            if (p->has_mask)
              scale =
                  ref_get(p->type, io->in[4], ((b * p->offset_group + g) * p->taps + t) * opix + o);
            v = ref_deform_sample(p, io->in[0], (b * p->c + c) * ipix, pos);
            acc += ref_get(p->type, io->in[1], (m * cpg + ci) * p->taps + t) * scale * v;
          }
        }
        ref_set(p->type, io->out[0], (b * p->m + m) * opix + o, acc);
      }
  return ODLA_SUCCESS;
}

odla_value odla_ExtDeformConv(odla_value input, odla_value kernel, odla_value offset,
                              odla_value bias, odla_value mask, odla_uint32 group,
                              odla_uint32 offset_group, const odla_uint32 *strides,
                              const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                              const odla_uint32 *paddings_back, odla_value_shape output_dims,
                              const odla_value_id value_id) {
  static const char *const names[5] = {"input", "kernel", "offset", "bias", "mask"};
  const char *op = "ExtDeformConv";
  ref_deform_params p;
  odla_value in[5], v;
  odla_value_type out;
  odla_value_shape want;
  const odla_value_shape *xs, *ws;
  int64_t kernel_dims[ODLA_MAX_DIMENSION];
  int i;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = kernel;
  in[2] = offset;
  in[3] = bias;
  in[4] = mask;
  if (!ref_check_operands(op, 3, in) || (bias && !ref_check_operands(op, 1, &in[3])) ||
      (mask && !ref_check_operands(op, 1, &in[4])))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "input has element type %s; a float type is "
                    "required",
                    ref_type_name(input->type.element_type));
  for (i = 1; i < 5; ++i)
    if (in[i] && in[i]->type.element_type != input->type.element_type)
      return ref_fail(ODLA_INVALID_PARAM, op, "%s has element type %s, the input %s", names[i],
                      ref_type_name(in[i]->type.element_type),
                      ref_type_name(input->type.element_type));
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  if (xs->size < 3 || xs->size > 2 + REF_SPATIAL || ws->size != xs->size || group < 1 ||
      !ref_product_is(ws->dims[1], group, xs->dims[1]) || ws->dims[0] % group != 0 ||
      offset_group < 1 || xs->dims[1] % offset_group != 0)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "input %s, kernel %s, group %u and offset_group %u do not fit: 1 to 3 "
                    "spatial axes, input channels must be kernel dim 1 times group and a "
                    "multiple of offset_group, kernel dim 0 a multiple of group",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group,
                    offset_group);
  if (bias && (bias->type.shape.size != 1 || bias->type.shape.dims[0] != ws->dims[0]))
    return ref_fail(ODLA_INVALID_PARAM, op, "bias %s must have %lld elements",
                    ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)ws->dims[0]);
  for (i = 2; i < ws->size; ++i)
    kernel_dims[i - 2] = ws->dims[i];
  memset(&p, 0, sizeof p);
  if (!ref_make_window(op, xs, kernel_dims, strides, dilations, paddings_front, paddings_back, NULL,
                       &p.w))
    return NULL;
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.m = ws->dims[0];
  p.group = group;
  p.offset_group = offset_group;
  p.sd = xs->size - 2;
  p.taps = ref_window_k_count(&p.w);
  p.has_bias = bias != NULL;
  p.has_mask = mask != NULL;
  p.type = input->type.element_type;
  if (!ref_window_result(op, xs, p.m, p.type, &p.w, &output_dims, &out))
    return NULL;
  want = out.shape; /* offset [N, offset_group * taps * r, out...], mask without the r */
  want.dims[1] = ref_mul_sat(ref_mul_sat(offset_group, p.taps), p.sd); /* saturated: conflicts */
  if (ref_shape_conflicts(&offset->type.shape, &want))
    return ref_fail(ODLA_INVALID_PARAM, op, "offset %s must be %s",
                    ref_shape_str(&offset->type.shape, s1, sizeof s1),
                    ref_shape_str(&want, s2, sizeof s2));
  want.dims[1] = ref_mul_sat(offset_group, p.taps);
  if (mask && ref_shape_conflicts(&mask->type.shape, &want))
    return ref_fail(ODLA_INVALID_PARAM, op, "mask %s must be %s",
                    ref_shape_str(&mask->type.shape, s1, sizeof s1),
                    ref_shape_str(&want, s2, sizeof s2));
  v = ref_add_op(op, ref_deform_run, 5, in, out, value_id, &p, sizeof p);
  if (v) /* a multiply-add per tap, plus the interpolation's 2^r reads */
    v->node->flops =
        ref_mul_sat(2 * p.n * p.m * ref_window_out_count(&p.w), (p.c / p.group) * p.taps);
  return v;
}
