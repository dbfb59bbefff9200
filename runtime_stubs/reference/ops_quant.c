/* ops_quant.c: linear quantization ops of the reference backend: odla_Quantize and
 * odla_Dequantize, per tensor or per axis, and odla_ExtQuantize and odla_ExtDequantize, which
 * add blocked parameters and the extension types (odla_ext_types.h). */
#include "ref.h"
#include "ref_types.h"
#include "threads.h"

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
  /* Blocked parameters: entries per channel block of `block` channels, full rank (0: per
   * tensor or per axis). */
  int64_t block;
  int saturate;   /* Quantize to the 8-bit floats */
  int float_code; /* Quantize to the 8- and 4-bit floats: convert, do not round to integers */
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
  default: /* the extension types */
    for (i = 0; i < n; ++i)
      dst[i] = ref_get(t, base, off + i);
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
  default: /* the extension types, values already in range */
    for (i = 0; i < n; ++i)
      ref_set(t, base, off + i, src[i]);
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
  if (ref_is_ext_type(t))
    return t != ODLA_EXT_FLOAT8E8M0;
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
  if (ref_is_ext_int(t)) {
    int64_t l, h;
    ref_ext_int_range(t, &l, &h);
    *lo = (double)l;
    *hi = (double)h;
    return;
  }
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

static int ref_quant_check_blocked(const char *op, odla_value input, odla_value scale,
                                   odla_value zero_point, odla_int32 axis, int64_t block,
                                   ref_quant_params *p);

/* Checks the operands shared by both builders and fills the layout part of `p`. `zp_type`
 * is the element type a zero point must have. */

static int ref_quant_check(const char *op, odla_value input, odla_value scale,
                           odla_value zero_point, odla_int32 axis, int64_t block,
                           odla_element_type zp_type, ref_quant_params *p) {
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
  p->x_type = input->type.element_type;
  p->scale_type = scale->type.element_type;
  p->has_zp = zero_point != NULL;
  p->zp_type = zp_type;
  if (block > 0)
    return ref_quant_check_blocked(op, input, scale, zero_point, axis, block, p);
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
  return 1;
}

/* Blocked: scale and zero point have input's shape but along axis, ceil(extent / block). */
static int ref_quant_check_blocked(const char *op, odla_value input, odla_value scale,
                                   odla_value zero_point, odla_int32 axis, int64_t block,
                                   ref_quant_params *p) {
  const odla_value_shape *xs = &input->type.shape;
  odla_value params[2];
  int i, d, rank = xs->size;
  char s1[128], s2[128];
  params[0] = scale;
  params[1] = zero_point;
  if (axis < -rank || axis >= rank) {
    ref_fail(ODLA_INVALID_PARAM, op, "blocked parameters need axis in [%d, %d), got %d", -rank,
             rank, (int)axis);
    return 0;
  }
  if (axis < 0)
    axis += rank;
  for (i = 0; i < 2; ++i) {
    const odla_value_shape *ps;
    int fits;
    if (!params[i])
      continue;
    ps = &params[i]->type.shape;
    fits = ps->size == rank;
    for (d = 0; fits && d < rank; ++d)
      fits = ps->dims[d] == (d == axis ? (xs->dims[d] + block - 1) / block : xs->dims[d]);
    if (!fits) {
      ref_fail(ODLA_INVALID_PARAM, op,
               "blocked %s %s must have input %s's shape with ceil(%lld / %lld) along axis %d",
               i ? "zero point" : "scale", ref_shape_str(ps, s1, sizeof s1),
               ref_shape_str(xs, s2, sizeof s2), (long long)xs->dims[axis], (long long)block,
               (int)axis);
      return 0;
    }
  }
  p->block = block;
  p->outer = 1;
  p->inner = 1;
  p->channels = xs->dims[axis];
  for (d = 0; d < axis; ++d)
    p->outer *= xs->dims[d];
  for (d = axis + 1; d < rank; ++d)
    p->inner *= xs->dims[d];
  return 1;
}

/* The index of element (o, ch, i) of the [outer, channels, inner] view in a blocked scale or
 * zero point. */
static int64_t ref_quant_block_index(const ref_quant_params *p, int64_t o, int64_t ch, int64_t i) {
  int64_t blocks = (p->channels + p->block - 1) / p->block;
  return (o * blocks + ch / p->block) * p->inner + i;
}

static int ref_quant_operands(const char *op, odla_value input, odla_value scale,
                              odla_value zero_point, odla_value in[3]) {
  in[0] = input;
  in[1] = scale;
  in[2] = zero_point;
  return ref_check_operands(op, 2, in) && (!zero_point || ref_check_operands(op, 1, &in[2]));
}

/* ---- odla_Quantize --------------------------------------------------------------------- */

/* The scale and zero point of element (o, ch, k + i). */
static void ref_quant_params_at(const ref_quant_params *p, const ref_io *io, int64_t o, int64_t ch,
                                int64_t i, double *scale, double *zp) {
  int64_t s = p->scale_per_axis ? ch : 0, z = p->zp_per_axis ? ch : 0;
  if (p->block > 0)
    s = z = ref_quant_block_index(p, o, ch, i);
  *scale = ref_get(p->scale_type, io->in[1], s);
  *zp = p->has_zp ? ref_get(p->zp_type, io->in[2], z) : 0.0;
}

/* One quantized value: an integer target rounds half to even and saturates, the 8-bit floats
 * take x / scale (converted when stored), FLOAT4E2M1 x / scale + zero point. */
static double ref_quantize_one(const ref_quant_params *p, double x, double scale, double zp) {
  double q = p->float_math ? (double)((float)x / (float)scale) : x / scale, v;
  if (p->float_code)
    return p->y_type == ODLA_EXT_FLOAT4E2M1 ? q + zp : q;
  v = ref_round_half_even(q) + zp;
  return v != v ? zp : (v < p->lo ? p->lo : (v > p->hi ? p->hi : v));
}

/* The common case of quantized models, float32 to uint8 or int8 with float32 scales, neither
 * blocked, in float32 and branch-free so that compilers vectorize it: the same numbers as
 * ref_quantize_one in the default rounding mode (round to nearest, ties to even; ONNX
 * Runtime's kernels assume it too). The quotient x / scale rounds to an integer by adding and
 * subtracting 1.5 * 2^23 (exact below 2^22; beyond, any result saturates alike); the zero
 * point is added and the sum saturated in float32; NaN gives the zero point. On 32-bit Arm
 * with a single-precision FPU (Cortex-M4F and up, no vector unit to fill) one VCVTR rounds the
 * quotient in the same mode and saturates (NaN: 0), and the clamp is in integers (to the
 * type's whole range by a saturating add of the zero point and USAT or SSAT). */
#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && !defined(__ARM_NEON) &&             \
    !defined(__ARM_FEATURE_MVE)
static inline int32_t ref_quantize_round(float q) {
  float r;
  int32_t i;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r) : "t"(q));
  memcpy(&i, &r, sizeof i);
  return i;
}
#if defined(__ARM_FEATURE_SAT) && defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
/* The type's whole range: QADD's saturating sum, then USAT or SSAT (SAT); 4 values a step (one
 * loop test for 4). */
#define REF_QUANTIZE_WHOLE(T, MIN, MAX, SAT)                                                       \
  if (lo == (MIN) && hi == (MAX)) {                                                                \
    const float *end4 = x + (n - n % 4);                                                           \
    for (; x != end4; x += 4, y += 4) {                                                            \
      const float x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];                                      \
      const int32_t r0 = ref_quantize_round(x0 / scale), r1 = ref_quantize_round(x1 / scale);      \
      const int32_t r2 = ref_quantize_round(x2 / scale), r3 = ref_quantize_round(x3 / scale);      \
      y[0] = (T)SAT(__qadd(r0, zp), 8);                                                            \
      y[1] = (T)SAT(__qadd(r1, zp), 8);                                                            \
      y[2] = (T)SAT(__qadd(r2, zp), 8);                                                            \
      y[3] = (T)SAT(__qadd(r3, zp), 8);                                                            \
    }                                                                                              \
    for (; x != end; ++x, ++y)                                                                     \
      *y = (T)SAT(__qadd(ref_quantize_round(*x / scale), zp), 8);                                  \
    return;                                                                                        \
  }
#else
#define REF_QUANTIZE_WHOLE(T, MIN, MAX, SAT)
#endif
#define REF_QUANTIZE_F32_TO(T, SFX, MIN, MAX, SAT)                                                 \
  static void ref_quantize_f32_to_##SFX(const float *x, int64_t n, float scale, int32_t zp,        \
                                        int32_t lo, int32_t hi, T *y) {                            \
    const int32_t qlo = lo - zp, qhi = hi - zp;                                                    \
    const float *end = x + n;                                                                      \
    REF_QUANTIZE_WHOLE(T, MIN, MAX, SAT)                                                           \
    for (; x != end; ++x, ++y) {                                                                   \
      const int32_t r = ref_quantize_round(*x / scale);                                            \
      *y = (T)((r < qlo ? qlo : r > qhi ? qhi : r) + zp);                                          \
    }                                                                                              \
  }
#else
#define REF_QUANTIZE_F32_TO(T, SFX, MIN, MAX, SAT)                                                 \
  REF_HOT static void ref_quantize_f32_to_##SFX(const float *x, int64_t n, float scale,            \
                                                int32_t zp, int32_t lo, int32_t hi, T *y) {        \
    const float zf = (float)zp, lof = (float)lo, hif = (float)hi;                                  \
    int64_t i;                                                                                     \
    for (i = 0; i < n; ++i) {                                                                      \
      const float q = x[i] / scale;                                                                \
      float v = ((q + 12582912.0f) - 12582912.0f) + zf;                                            \
      int32_t r;                                                                                   \
      v = v >= lof ? v : lof; /* NaN: lof, so that the conversion is defined */                    \
      v = v > hif ? hif : v;                                                                       \
      r = (int32_t)v;                                                                              \
      y[i] = (T)(q == q ? r : zp);                                                                 \
    }                                                                                              \
  }
#endif
REF_QUANTIZE_F32_TO(uint8_t, u8, 0, 255, __usat)
REF_QUANTIZE_F32_TO(int8_t, i8, -128, 127, __ssat)
#undef REF_QUANTIZE_F32_TO
#undef REF_QUANTIZE_WHOLE

static int ref_quantize_fast(const ref_quant_params *p) {
  return p->x_type == ODLA_FLOAT32 && p->scale_type == ODLA_FLOAT32 && p->block == 0 &&
         !p->float_code && (p->y_type == ODLA_UINT8 || p->y_type == ODLA_INT8);
}

/* The fast paths' work split over the context's threads: per tensor in blocks of elements,
 * otherwise by slices (one scale and zero point each). Part of `parts`: [lo, hi) of the
 * elements, in whole slices unless per tensor. */
typedef struct {
  const ref_quant_params *p;
  const ref_io *io;
} ref_quant_fast_job;

/* Slices below this many elements in all are not worth a second thread. */
enum { REF_QUANT_PARALLEL_MIN = 1 << 15 };

static int ref_quant_fast_parts(const ref_quant_params *p, const ref_io *io) {
  int threads = ref_threads_count(ref_io_threads(io));
  return p->outer * p->channels * p->inner < REF_QUANT_PARALLEL_MIN ? 1 : threads;
}

static void ref_quant_fast_range(const ref_quant_params *p, int index, int parts, int64_t *lo,
                                 int64_t *hi) {
  int64_t n = p->outer * p->channels * p->inner;
  ref_split(n, p->outer * p->channels == 1 ? 64 : p->inner, index, parts, lo, hi);
}

static void ref_quantize_fast_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_quant_fast_job *job = (const ref_quant_fast_job *)arg;
  const ref_quant_params *p = job->p;
  int64_t lo, hi, at;
  (void)scratch;
  ref_quant_fast_range(p, index, parts, &lo, &hi);
  for (at = lo; at < hi;) {
    int64_t slice = at / p->inner, end = (slice + 1) * p->inner;
    double scale, zp;
    const float *x = (const float *)job->io->in[0] + at;
    if (end > hi)
      end = hi;
    ref_quant_params_at(p, job->io, slice / p->channels, slice % p->channels, 0, &scale, &zp);
    if (p->y_type == ODLA_INT8)
      ref_quantize_f32_to_i8(x, end - at, (float)scale, (int32_t)zp, (int32_t)p->lo, (int32_t)p->hi,
                             (int8_t *)job->io->out[0] + at);
    else
      ref_quantize_f32_to_u8(x, end - at, (float)scale, (int32_t)zp, (int32_t)p->lo, (int32_t)p->hi,
                             (uint8_t *)job->io->out[0] + at);
    at = end;
  }
}

static odla_status ref_quantize_run(const ref_node *node, const ref_io *io) {
  const ref_quant_params *p = (const ref_quant_params *)node->params;
  double buf[REF_QUANT_CHUNK];
  int64_t o, ch, k, i;
  if (ref_quantize_fast(p)) {
    ref_quant_fast_job job;
    job.p = p;
    job.io = io;
    ref_parallel(ref_io_threads(io), ref_quant_fast_parts(p, io), ref_quantize_fast_part, &job,
                 (unsigned char *)io->scratch);
    return ODLA_SUCCESS;
  }
  for (o = 0; o < p->outer; ++o)
    for (ch = 0; ch < p->channels; ++ch) {
      double scale, zp;
      int64_t base = (o * p->channels + ch) * p->inner;
      ref_quant_params_at(p, io, o, ch, 0, &scale, &zp);
      for (k = 0; k < p->inner; k += REF_QUANT_CHUNK) {
        int64_t n = p->inner - k < REF_QUANT_CHUNK ? p->inner - k : REF_QUANT_CHUNK;
        ref_quant_load(p->x_type, io->in[0], base + k, n, buf);
        for (i = 0; i < n; ++i) {
          if (p->block > 0)
            ref_quant_params_at(p, io, o, ch, k + i, &scale, &zp);
          buf[i] = ref_quantize_one(p, buf[i], scale, zp);
        }
        if (p->float_code)
          for (i = 0; i < n; ++i)
            ((uint8_t *)io->out[0])[base + k + i] =
                ref_ext_encode(p->y_type, buf[i], p->saturate, ODLA_EXT_ROUND_UP);
        else
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
static odla_value ref_quantize_build(const char *op, odla_value input, odla_value scale,
                                     odla_value zero_point, odla_int32 axis, int64_t block,
                                     odla_element_type target_data_type, int saturate,
                                     const odla_value_id value_id) {
  ref_quant_params p;
  odla_value in[3];
  odla_value_type out;
  odla_element_type xt;
  if (!ref_quant_operands(op, input, scale, zero_point, in))
    return NULL;
  xt = input->type.element_type;
  if ((!ref_is_float(xt) && !ref_quant_type(xt)) || ref_is_ext_type(xt))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "input element type %s is not supported (float types, int8, uint8, int16, "
                    "uint16, int32, uint32)",
                    ref_type_name(xt));
  if (!ref_quant_type(target_data_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "target type %s is not supported (int8, uint8, int16, uint16, int32, uint32%s)",
                    ref_type_name(target_data_type),
                    strcmp(op, "Quantize") ? ", the odla_ext_types.h types but FLOAT8E8M0" : "");
  if (!ref_quant_check(op, input, scale, zero_point, axis, block, target_data_type, &p))
    return NULL;
  p.y_type = target_data_type;
  p.float_math = xt != ODLA_FLOAT64 && ref_is_float(xt) && scale->type.element_type != ODLA_FLOAT64;
  p.float_code = ref_is_ext_float(target_data_type);
  p.saturate = saturate != 0;
  ref_quant_range(target_data_type, &p.lo, &p.hi);
  out.element_type = target_data_type;
  out.shape = ref_type_of(input).shape;
  return ref_add_op(op, ref_quantize_run, 3, in, out, value_id, &p, sizeof p);
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
  if (ref_is_ext_type(target_data_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Quantize", "target type %s needs odla_ExtQuantize",
                    ref_type_name(target_data_type));
  return ref_quantize_build("Quantize", input, scale, zero_point, axis, 0, target_data_type, 1,
                            value_id);
}

odla_value odla_ExtQuantize(odla_value input, odla_value scale, odla_value zero_point,
                            odla_int32 axis, odla_int32 block_size,
                            odla_element_type target_data_type, odla_bool saturate,
                            const odla_value_id value_id) {
  if (block_size < 0)
    return ref_fail(ODLA_INVALID_PARAM, "ExtQuantize", "block_size %d is negative",
                    (int)block_size);
  return ref_quantize_build("ExtQuantize", input, scale, zero_point, axis, block_size,
                            target_data_type, saturate, value_id);
}

/* ---- odla_Dequantize ------------------------------------------------------------------- */

/* uint8 or int8 to float32 with float32 scales, not blocked (quantized models' common case):
 * (x - zero point) * scale in float32, as the general path computes it; split as Quantize's. */
REF_HOT static void ref_dequantize_8bit(const void *vx, int x_signed, int64_t n, float s, float z,
                                        float *y) {
  int64_t i;
  if (x_signed) {
    const int8_t *x = (const int8_t *)vx;
    for (i = 0; i < n; ++i)
      y[i] = ((float)x[i] - z) * s;
  } else {
    const uint8_t *x = (const uint8_t *)vx;
    for (i = 0; i < n; ++i)
      y[i] = ((float)x[i] - z) * s;
  }
}

static void ref_dequantize_fast_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_quant_fast_job *job = (const ref_quant_fast_job *)arg;
  const ref_quant_params *p = job->p;
  int64_t lo, hi, at;
  (void)scratch;
  ref_quant_fast_range(p, index, parts, &lo, &hi);
  for (at = lo; at < hi;) {
    int64_t slice = at / p->inner, end = (slice + 1) * p->inner;
    double scale, zp;
    if (end > hi)
      end = hi;
    ref_quant_params_at(p, job->io, slice / p->channels, slice % p->channels, 0, &scale, &zp);
    ref_dequantize_8bit((const unsigned char *)job->io->in[0] + at, p->x_type == ODLA_INT8,
                        end - at, (float)scale, (float)zp, (float *)job->io->out[0] + at);
    at = end;
  }
}

static odla_status ref_dequantize_run(const ref_node *node, const ref_io *io) {
  const ref_quant_params *p = (const ref_quant_params *)node->params;
  double buf[REF_QUANT_CHUNK];
  int64_t o, ch, k, i;
  if ((p->x_type == ODLA_UINT8 || p->x_type == ODLA_INT8) && p->scale_type == ODLA_FLOAT32 &&
      p->y_type == ODLA_FLOAT32 && p->block == 0 && !p->float_code) {
    ref_quant_fast_job job;
    job.p = p;
    job.io = io;
    ref_parallel(ref_io_threads(io), ref_quant_fast_parts(p, io), ref_dequantize_fast_part, &job,
                 (unsigned char *)io->scratch);
    return ODLA_SUCCESS;
  }
  for (o = 0; o < p->outer; ++o)
    for (ch = 0; ch < p->channels; ++ch) {
      double scale, zp;
      int64_t base = (o * p->channels + ch) * p->inner;
      ref_quant_params_at(p, io, o, ch, 0, &scale, &zp);
      for (k = 0; k < p->inner; k += REF_QUANT_CHUNK) {
        int64_t n = p->inner - k < REF_QUANT_CHUNK ? p->inner - k : REF_QUANT_CHUNK;
        ref_quant_load(p->x_type, io->in[0], base + k, n, buf);
        for (i = 0; i < n; ++i) {
          if (p->block > 0)
            ref_quant_params_at(p, io, o, ch, k + i, &scale, &zp);
          if (p->float_code) /* a float zero point is not subtracted */
            zp = 0;
          buf[i] =
              p->float_math ? (double)((float)(buf[i] - zp) * (float)scale) : (buf[i] - zp) * scale;
        }
        ref_quant_store(p->y_type, io->out[0], base + k, n, buf);
      }
    }
  return ODLA_SUCCESS;
}

static odla_value ref_dequantize_build(const char *op, odla_value input, odla_value scale,
                                       odla_value zero_point, odla_int32 axis, int64_t block,
                                       odla_element_type target_data_type,
                                       const odla_value_id value_id) {
  ref_quant_params p;
  odla_value in[3];
  odla_value_type out;
  if (!ref_quant_operands(op, input, scale, zero_point, in))
    return NULL;
  if (!ref_quant_type(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "input element type %s is not supported (int8, uint8, int16, uint16, int32, "
                    "uint32%s)",
                    ref_type_name(input->type.element_type),
                    strcmp(op, "Dequantize") ? ", the odla_ext_types.h types but FLOAT8E8M0" : "");
  if (!ref_is_float(target_data_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "target type %s is not a float type",
                    ref_type_name(target_data_type));
  if (!ref_quant_check(op, input, scale, zero_point, axis, block, input->type.element_type, &p))
    return NULL;
  p.y_type = target_data_type;
  p.float_math = target_data_type != ODLA_FLOAT64 && scale->type.element_type != ODLA_FLOAT64;
  p.float_code = ref_is_ext_float(input->type.element_type);
  out.element_type = target_data_type;
  out.shape = ref_type_of(input).shape;
  return ref_add_op(op, ref_dequantize_run, 3, in, out, value_id, &p, sizeof p);
}

/* y = (input - zero_point) * scale. input is int8, uint8, int16, uint16, int32 or uint32;
 * zero_point (NULL: 0) has input's element type; scale and zero_point are per tensor or per
 * axis as for odla_Quantize. target_data_type is a float type. The difference is exact; the
 * product is computed in float32 (rounded once) unless target_data_type or scale is float64. */
odla_value odla_Dequantize(odla_value input, odla_value scale, odla_value zero_point,
                           odla_int32 axis, odla_element_type target_data_type,
                           const odla_value_id value_id) {
  if (input && ref_is_ext_type(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Dequantize",
                    "input type %s needs odla_ExtDequantize",
                    ref_type_name(input->type.element_type));
  return ref_dequantize_build("Dequantize", input, scale, zero_point, axis, 0, target_data_type,
                              value_id);
}

odla_value odla_ExtDequantize(odla_value input, odla_value scale, odla_value zero_point,
                              odla_int32 axis, odla_int32 block_size,
                              odla_element_type target_data_type, const odla_value_id value_id) {
  if (block_size < 0)
    return ref_fail(ODLA_INVALID_PARAM, "ExtDequantize", "block_size %d is negative",
                    (int)block_size);
  return ref_dequantize_build("ExtDequantize", input, scale, zero_point, axis, block_size,
                              target_data_type, value_id);
}
