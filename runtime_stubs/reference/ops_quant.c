/* ops_quant.c: linear quantization ops of the reference backend: odla_Quantize and
 * odla_Dequantize, per tensor or per axis. */
#include "ref.h"
#include "ref_types.h"

#include <math.h>
#include <string.h>

/* ---- Shared ---------------------------------------------------------------------------- */

/* Elements are processed in rows of this many, converted to double on the stack. */
enum { REF_QUANT_CHUNK = 256 };

typedef struct {
  odla_element_type x_type, scale_type, zp_type, y_type;
  int has_zp;
  /* The input viewed as [outer, channels, inner]: channels is the quantization axis' extent
   * (1 per tensor); scale and zero point step by one per channel when per axis. */
  int64_t outer, channels, inner;
  int scale_per_axis, zp_per_axis;
  int float_math; /* compute in float32 (see the builders) instead of double */
  double lo, hi;  /* Quantize: the result type's range */
} ref_quant_params;

static void ref_quant_load(odla_element_type t, const void *base, int64_t off, int64_t n,
                           double *dst) {
  int64_t i;
  switch (t) {
#define REF_QUANT_LOAD_CASE(E, S, C, SFX)                                                          \
  case E: {                                                                                        \
    const S *p = (const S *)base + off;                                                            \
    for (i = 0; i < n; ++i)                                                                        \
      dst[i] = (double)REF_LOAD_##SFX(p, i);                                                       \
  } break;
    REF_FOR_NUMERIC_TYPES(REF_QUANT_LOAD_CASE)
#undef REF_QUANT_LOAD_CASE
  default:
    break;
  }
}

/* Stores values that are already in the range of type t (or floats for float types). */
static void ref_quant_store(odla_element_type t, void *base, int64_t off, int64_t n,
                            const double *src) {
  int64_t i;
  switch (t) {
#define REF_QUANT_STORE_CASE(E, S, C, SFX)                                                         \
  case E: {                                                                                        \
    S *p = (S *)base + off;                                                                        \
    for (i = 0; i < n; ++i)                                                                        \
      REF_STORE_##SFX(p, i, src[i]);                                                               \
  } break;
    REF_FOR_NUMERIC_TYPES(REF_QUANT_STORE_CASE)
#undef REF_QUANT_STORE_CASE
  default:
    break;
  }
}

/* Rounds to the nearest integer, ties to even, independent of the floating-point
 * environment's rounding mode. */
static double ref_round_half_even(double v) {
  double r = floor(v), d = v - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0))
    r += 1.0;
  return r;
}

static int ref_quant_type(odla_element_type t) {
  switch (t) {
  case ODLA_INT8:
  case ODLA_UINT8:
  case ODLA_INT16:
  case ODLA_UINT16:
  case ODLA_INT32:
  case ODLA_UINT32:
    return 1;
  default:
    return 0;
  }
}

static void ref_quant_range(odla_element_type t, double *lo, double *hi) {
  switch (t) {
  case ODLA_INT8:
    *lo = INT8_MIN;
    *hi = INT8_MAX;
    break;
  case ODLA_UINT8:
    *lo = 0;
    *hi = UINT8_MAX;
    break;
  case ODLA_INT16:
    *lo = INT16_MIN;
    *hi = INT16_MAX;
    break;
  case ODLA_UINT16:
    *lo = 0;
    *hi = UINT16_MAX;
    break;
  case ODLA_INT32:
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    break;
  default:
    *lo = 0;
    *hi = UINT32_MAX;
    break;
  }
}

/* Checks the operands shared by both builders and fills the layout part of `p`. `zp_type`
 * is the element type a zero point must have. */
static int ref_quant_check(const char *op, odla_value input, odla_value scale,
                           odla_value zero_point, odla_int32 axis, odla_element_type zp_type,
                           ref_quant_params *p) {
  const odla_value_shape *xs = &input->type.shape;
  odla_value params[2];
  int i, rank = xs->size;
  char s1[128], s2[128];
  memset(p, 0, sizeof *p);
  params[0] = scale;
  params[1] = zero_point;
  if (!ref_is_float(scale->type.element_type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "scale element type %s is not a float type",
             ref_type_name(scale->type.element_type));
    return 0;
  }
  if (zero_point && zero_point->type.element_type != zp_type) {
    ref_fail(ODLA_INVALID_PARAM, op, "zero point element type %s differs from %s",
             ref_type_name(zero_point->type.element_type), ref_type_name(zp_type));
    return 0;
  }
  p->outer = 1;
  p->channels = 1;
  p->inner = ref_count(xs);
  for (i = 0; i < 2; ++i) {
    const odla_value_shape *ps;
    int64_t n, d;
    if (!params[i])
      continue;
    ps = &params[i]->type.shape;
    n = ref_count(ps);
    if (n == 1)
      continue;
    if (axis < -rank || axis >= rank) {
      ref_fail(ODLA_INVALID_PARAM, op, "per-axis %s needs axis in [%d, %d), got %d",
               i ? "zero point" : "scale", -rank, rank, (int)axis);
      return 0;
    }
    if (axis < 0)
      axis += rank;
    if (ps->size != 1 || n != xs->dims[axis]) {
      ref_fail(ODLA_INVALID_PARAM, op, "%s %s must hold 1 element or %lld (input %s, axis %d)",
               i ? "zero point" : "scale", ref_shape_str(ps, s1, sizeof s1),
               (long long)xs->dims[axis], ref_shape_str(xs, s2, sizeof s2), (int)axis);
      return 0;
    }
    if (i == 0)
      p->scale_per_axis = 1;
    else
      p->zp_per_axis = 1;
    p->channels = n;
    p->outer = 1;
    p->inner = 1;
    for (d = 0; d < axis; ++d)
      p->outer *= xs->dims[d];
    for (d = axis + 1; d < rank; ++d)
      p->inner *= xs->dims[d];
  }
  p->x_type = input->type.element_type;
  p->scale_type = scale->type.element_type;
  p->has_zp = zero_point != NULL;
  p->zp_type = zp_type;
  return 1;
}

static int ref_quant_operands(const char *op, odla_value input, odla_value scale,
                              odla_value zero_point, odla_value in[3]) {
  in[0] = input;
  in[1] = scale;
  in[2] = zero_point;
  return ref_check_operands(op, 2, in) && (!zero_point || ref_check_operands(op, 1, &in[2]));
}

/* ---- odla_Quantize --------------------------------------------------------------------- */

static odla_status ref_quantize_run(const ref_node *node, const ref_io *io) {
  const ref_quant_params *p = (const ref_quant_params *)node->params;
  double buf[REF_QUANT_CHUNK];
  int64_t o, ch, k, i;
  for (o = 0; o < p->outer; ++o)
    for (ch = 0; ch < p->channels; ++ch) {
      double scale = ref_get(p->scale_type, io->in[1], p->scale_per_axis ? ch : 0);
      double zp = p->has_zp ? ref_get(p->zp_type, io->in[2], p->zp_per_axis ? ch : 0) : 0.0;
      float scale_f = (float)scale;
      int64_t base = (o * p->channels + ch) * p->inner;
      for (k = 0; k < p->inner; k += REF_QUANT_CHUNK) {
        int64_t n = p->inner - k < REF_QUANT_CHUNK ? p->inner - k : REF_QUANT_CHUNK;
        ref_quant_load(p->x_type, io->in[0], base + k, n, buf);
        for (i = 0; i < n; ++i) {
          double q = p->float_math ? (double)((float)buf[i] / scale_f) : buf[i] / scale;
          double v = ref_round_half_even(q) + zp;
          buf[i] = v != v ? zp : (v < p->lo ? p->lo : (v > p->hi ? p->hi : v));
        }
        ref_quant_store(p->y_type, io->out[0], base + k, n, buf);
      }
    }
  return ODLA_SUCCESS;
}

/* y = saturate(round(x / scale) + zero_point): the quotient rounds to the nearest integer,
 * ties to even; the sum saturates to the range of target_data_type (int8, uint8, int16,
 * uint16, int32, uint32); NaN quantizes to the zero point. zero_point may be NULL (0); when
 * given its element type is target_data_type. scale and zero_point hold either one element
 * (per tensor) or one per slice of input along `axis` (per axis; axis may be negative).
 * input may be any float type or an integer type of that list; scale any float type. The
 * quotient is computed in float32 when input and scale are float32, float16 or bfloat16 (as
 * ONNX's reference does), otherwise in float64. */
odla_value odla_Quantize(odla_value input, odla_value scale, odla_value zero_point, odla_int32 axis,
                         odla_element_type target_data_type, const odla_value_id value_id) {
  ref_quant_params p;
  odla_value in[3];
  odla_value_type out;
  odla_element_type xt;
  if (!ref_quant_operands("Quantize", input, scale, zero_point, in))
    return NULL;
  xt = input->type.element_type;
  if (!ref_is_float(xt) && !ref_quant_type(xt))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Quantize",
                    "input element type %s is not supported (float types, int8, uint8, int16, "
                    "uint16, int32, uint32)",
                    ref_type_name(xt));
  if (!ref_quant_type(target_data_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Quantize",
                    "target type %s is not supported (int8, uint8, int16, uint16, int32, uint32)",
                    ref_type_name(target_data_type));
  if (!ref_quant_check("Quantize", input, scale, zero_point, axis, target_data_type, &p))
    return NULL;
  p.y_type = target_data_type;
  p.float_math = xt != ODLA_FLOAT64 && ref_is_float(xt) && scale->type.element_type != ODLA_FLOAT64;
  ref_quant_range(target_data_type, &p.lo, &p.hi);
  out.element_type = target_data_type;
  out.shape = input->type.shape;
  return ref_add_op("Quantize", ref_quantize_run, 3, in, out, value_id, &p, sizeof p);
}

/* ---- odla_Dequantize ------------------------------------------------------------------- */

static odla_status ref_dequantize_run(const ref_node *node, const ref_io *io) {
  const ref_quant_params *p = (const ref_quant_params *)node->params;
  double buf[REF_QUANT_CHUNK];
  int64_t o, ch, k, i;
  for (o = 0; o < p->outer; ++o)
    for (ch = 0; ch < p->channels; ++ch) {
      double scale = ref_get(p->scale_type, io->in[1], p->scale_per_axis ? ch : 0);
      double zp = p->has_zp ? ref_get(p->zp_type, io->in[2], p->zp_per_axis ? ch : 0) : 0.0;
      float scale_f = (float)scale;
      int64_t base = (o * p->channels + ch) * p->inner;
      for (k = 0; k < p->inner; k += REF_QUANT_CHUNK) {
        int64_t n = p->inner - k < REF_QUANT_CHUNK ? p->inner - k : REF_QUANT_CHUNK;
        ref_quant_load(p->x_type, io->in[0], base + k, n, buf);
        if (p->float_math)
          for (i = 0; i < n; ++i)
            buf[i] = (double)((float)(buf[i] - zp) * scale_f);
        else
          for (i = 0; i < n; ++i)
            buf[i] = (buf[i] - zp) * scale;
        ref_quant_store(p->y_type, io->out[0], base + k, n, buf);
      }
    }
  return ODLA_SUCCESS;
}

/* y = (input - zero_point) * scale. input is int8, uint8, int16, uint16, int32 or uint32;
 * zero_point (NULL: 0) has input's element type; scale and zero_point are per tensor or per
 * axis as for odla_Quantize. target_data_type is a float type. The difference is exact; the
 * product is computed in float32 (rounded once) unless target_data_type or scale is float64. */
odla_value odla_Dequantize(odla_value input, odla_value scale, odla_value zero_point,
                           odla_int32 axis, odla_element_type target_data_type,
                           const odla_value_id value_id) {
  ref_quant_params p;
  odla_value in[3];
  odla_value_type out;
  if (!ref_quant_operands("Dequantize", input, scale, zero_point, in))
    return NULL;
  if (!ref_quant_type(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Dequantize",
                    "input element type %s is not supported (int8, uint8, int16, uint16, int32, "
                    "uint32)",
                    ref_type_name(input->type.element_type));
  if (!ref_is_float(target_data_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Dequantize", "target type %s is not a float type",
                    ref_type_name(target_data_type));
  if (!ref_quant_check("Dequantize", input, scale, zero_point, axis, input->type.element_type, &p))
    return NULL;
  p.y_type = target_data_type;
  p.float_math = target_data_type != ODLA_FLOAT64 && scale->type.element_type != ODLA_FLOAT64;
  out.element_type = target_data_type;
  out.shape = input->type.shape;
  return ref_add_op("Dequantize", ref_dequantize_run, 3, in, out, value_id, &p, sizeof p);
}
