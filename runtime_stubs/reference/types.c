/* types.c: generic element access for the reference backend's kernels, and the conversions of
 * the extension types (ref_types.h). */
#include "ref_types.h"

#include <ODLA/odla_ext.h>

#include <math.h>

int ref_is_float(odla_element_type t) {
  return t == ODLA_FLOAT32 || t == ODLA_FLOAT64 || t == ODLA_FLOAT16 || t == ODLA_BFLOAT16;
}

int ref_is_int(odla_element_type t) {
  switch (t) {
  case ODLA_INT8:
  case ODLA_INT16:
  case ODLA_INT32:
  case ODLA_INT64:
  case ODLA_UINT8:
  case ODLA_UINT16:
  case ODLA_UINT32:
  case ODLA_UINT64:
    return 1;
  default:
    return 0;
  }
}

/* ---- The extension types ------------------------------------------------------------- */

int ref_is_ext_type(odla_element_type t) {
  return t >= ODLA_EXT_TYPE_BASE && t < ODLA_EXT_TYPE_END;
}

int ref_is_ext_int(odla_element_type t) {
  return t == ODLA_EXT_INT4 || t == ODLA_EXT_UINT4 || t == ODLA_EXT_INT2 || t == ODLA_EXT_UINT2;
}

int ref_is_ext_float(odla_element_type t) { return ref_is_ext_type(t) && !ref_is_ext_int(t); }

void ref_ext_int_range(odla_element_type t, int64_t *lo, int64_t *hi) {
  int bits = t == ODLA_EXT_INT4 || t == ODLA_EXT_UINT4 ? 4 : 2;
  int is_signed = t == ODLA_EXT_INT4 || t == ODLA_EXT_INT2;
  *lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
  *hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
}

/* A small float format: exponent and mantissa bits, bias, and how it spends its top codes:
 * FN (no infinity; all ones is NaN), FNUZ (no infinity, no -0; 0x80 is NaN), IEEE (the
 * all-ones exponent holds infinities and NaNs), FINITE (neither: FLOAT4E2M1). */
typedef enum { REF_MF_FN, REF_MF_FNUZ, REF_MF_IEEE, REF_MF_FINITE } ref_mf_kind;
typedef struct {
  int ebits, mbits, bias;
  ref_mf_kind kind;
} ref_minifloat;

static const ref_minifloat *ref_minifloat_of(odla_element_type t) {
  static const ref_minifloat e4m3fn = {4, 3, 7, REF_MF_FN}, e4m3fnuz = {4, 3, 8, REF_MF_FNUZ},
                             e5m2 = {5, 2, 15, REF_MF_IEEE}, e5m2fnuz = {5, 2, 16, REF_MF_FNUZ},
                             e2m1 = {2, 1, 1, REF_MF_FINITE};
  switch ((int)t) {
  case ODLA_EXT_FLOAT8E4M3FN:
    return &e4m3fn;
  case ODLA_EXT_FLOAT8E4M3FNUZ:
    return &e4m3fnuz;
  case ODLA_EXT_FLOAT8E5M2:
    return &e5m2;
  case ODLA_EXT_FLOAT8E5M2FNUZ:
    return &e5m2fnuz;
  default:
    return &e2m1;
  }
}

static double ref_minifloat_max(const ref_minifloat *f) {
  int emax = (1 << f->ebits) - 1 - f->bias;
  double mant = 2.0 - ldexp(1.0, -f->mbits); /* every mantissa bit set */
  if (f->kind == REF_MF_FN)
    mant -= ldexp(1.0, -f->mbits); /* all ones is NaN */
  if (f->kind == REF_MF_IEEE)
    --emax; /* the all-ones exponent is infinities and NaNs */
  return mant * ldexp(1.0, emax);
}

static double ref_minifloat_decode(const ref_minifloat *f, unsigned b) {
  int width = f->ebits + f->mbits, eall = (1 << f->ebits) - 1;
  int sign = (b >> width) & 1, e = (b >> f->mbits) & eall, m = b & ((1 << f->mbits) - 1);
  double v;
  if (f->kind == REF_MF_FNUZ && b == 1u << width)
    return NAN;
  if (f->kind == REF_MF_FN && e == eall && m == (1 << f->mbits) - 1)
    return NAN;
  if (f->kind == REF_MF_IEEE && e == eall)
    return m ? NAN : (sign ? -INFINITY : INFINITY);
  v = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
             : ldexp((double)(m | (1 << f->mbits)), e - f->bias - f->mbits);
  return sign ? -v : v;
}

/* Rounds |v| to the format's grid (nearest, ties to even) and encodes it; see ref_ext_encode
 * for saturate. tests/e2e/test_low_precision.py checks it against ONNX's reference (on
 * ml_dtypes) on every float16 value and every tie of each format. */
static unsigned ref_minifloat_encode(const ref_minifloat *f, double v, int saturate) {
  int width = f->ebits + f->mbits, emin = 1 - f->bias, e;
  unsigned sign = signbit(v) ? 1u << width : 0u, eall = (1u << f->ebits) - 1;
  unsigned nan =
      f->kind == REF_MF_FNUZ ? 1u << width : sign | (eall << f->mbits) | ((1u << f->mbits) - 1);
  double a = fabs(v), max = ref_minifloat_max(f), r;
  saturate = saturate || f->kind == REF_MF_FINITE;
  if (v != v)
    return f->kind == REF_MF_FINITE ? 0
           : f->kind == REF_MF_IEEE ? sign | (eall << f->mbits) | 2u
                                    : nan;
  if (isinf(a) && saturate)
    a = max;
  r = a;
  if (!isinf(a)) {
    frexp(a, &e);
    r = nearbyint(a / ldexp(1.0, (e - 1 < emin ? emin : e - 1) - f->mbits)) *
        ldexp(1.0, (e - 1 < emin ? emin : e - 1) - f->mbits);
  }
  if (r > max) {
    if (saturate)
      r = max;
    else
      return f->kind == REF_MF_IEEE ? sign | (eall << f->mbits) : nan;
  }
  if (r == 0)
    return f->kind == REF_MF_FNUZ ? 0 : sign; /* FNUZ has no negative zero */
  frexp(r, &e);
  --e;
  if (e < emin)
    return sign | (unsigned)(r / ldexp(1.0, emin - f->mbits));
  return sign | ((unsigned)(e + f->bias) << f->mbits) |
         ((unsigned)(r / ldexp(1.0, e - f->mbits)) - (1u << f->mbits));
}

/* FLOAT8E8M0 from the float32 nearest v, on its bits as ONNX's reference (to_float8e8m0)
 * does: the float32 exponent, rounded by the mantissa's bits; the sign is ignored. */
static uint8_t ref_e8m0_encode(double v, int saturate, int round_mode) {
  float f = (float)v;
  uint32_t bits, exponent;
  memcpy(&bits, &f, 4);
  exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff)
    return 0xff; /* NaN and infinities */
  if (round_mode == ODLA_EXT_ROUND_NEAREST) {
    int g = (bits & 0x400000) != 0, r = (bits & 0x200000) != 0, s = (bits & 0x1fffff) != 0;
    if (g && (r || s || exponent > 0) && !(saturate && exponent == 0xfe))
      ++exponent;
  } else if (round_mode == ODLA_EXT_ROUND_UP) {
    if ((bits & 0x7fffff) != 0 && !(saturate && exponent == 0xfe))
      ++exponent;
  }
  return (uint8_t)exponent;
}

double ref_ext_decode(odla_element_type t, uint8_t b) {
  switch ((int)t) {
  case ODLA_EXT_INT4:
    return (double)(int8_t)(b & 0x8 ? b | 0xf0 : b & 0x0f);
  case ODLA_EXT_INT2:
    return (double)(int8_t)(b & 0x2 ? b | 0xfc : b & 0x03);
  case ODLA_EXT_UINT4:
    return (double)(b & 0x0f);
  case ODLA_EXT_UINT2:
    return (double)(b & 0x03);
  case ODLA_EXT_FLOAT8E8M0:
    return b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
  default:
    return ref_minifloat_decode(ref_minifloat_of(t), b);
  }
}

uint8_t ref_ext_encode(odla_element_type t, double v, int saturate, int round_mode) {
  if (ref_is_ext_int(t)) {
    int64_t lo, hi;
    double i = v < 0 ? ceil(v) : floor(v);
    ref_ext_int_range(t, &lo, &hi);
    return i >= (double)lo && i <= (double)hi ? ref_ext_wrap(t, (int64_t)i) : 0;
  }
  if (t == ODLA_EXT_FLOAT8E8M0)
    return ref_e8m0_encode(v, saturate, round_mode);
  return (uint8_t)ref_minifloat_encode(ref_minifloat_of(t), v, saturate);
}

uint8_t ref_ext_wrap(odla_element_type t, int64_t v) {
  int bits = t == ODLA_EXT_INT4 || t == ODLA_EXT_UINT4 ? 4 : 2;
  uint8_t low = (uint8_t)((uint64_t)v & ((1u << bits) - 1));
  if ((t == ODLA_EXT_INT4 || t == ODLA_EXT_INT2) && (low >> (bits - 1)))
    low |= (uint8_t)(0xff << bits); /* sign-extended in the byte */
  return low;
}

double ref_get(odla_element_type t, const void *base, int64_t i) {
  if (ref_is_ext_type(t))
    return ref_ext_decode(t, ((const uint8_t *)base)[i]);
  switch (t) {
#define REF_GET_CASE(E, S, C, SFX)                                                                 \
  case E:                                                                                          \
    return (double)REF_LOAD_##SFX((const S *)base, i);
    REF_FOR_ALL_TYPES(REF_GET_CASE)
#undef REF_GET_CASE
  default:
    return 0.0;
  }
}

static double ref_saturate(double v, double lo, double hi) {
  if (v != v)
    return 0.0;
  v = v < 0 ? ceil(v) : floor(v); /* truncate toward zero, as C conversion does */
  return v < lo ? lo : (v > hi ? hi : v);
}

void ref_set(odla_element_type t, void *base, int64_t i, double v) {
  if (ref_is_ext_type(t)) { /* saturated, as odla_Cast converts */
    ((uint8_t *)base)[i] = ref_ext_encode(t, v, 1, ODLA_EXT_ROUND_UP);
    return;
  }
  switch (t) {
  case ODLA_FLOAT32:
    REF_STORE_f32((float *)base, i, v);
    break;
  case ODLA_FLOAT64:
    REF_STORE_f64((double *)base, i, v);
    break;
  case ODLA_FLOAT16:
    REF_STORE_f16((uint16_t *)base, i, v);
    break;
  case ODLA_BFLOAT16:
    REF_STORE_bf16((uint16_t *)base, i, v);
    break;
  case ODLA_INT8:
    ((int8_t *)base)[i] = (int8_t)ref_saturate(v, INT8_MIN, INT8_MAX);
    break;
  case ODLA_INT16:
    ((int16_t *)base)[i] = (int16_t)ref_saturate(v, INT16_MIN, INT16_MAX);
    break;
  case ODLA_INT32:
    ((int32_t *)base)[i] = (int32_t)ref_saturate(v, INT32_MIN, INT32_MAX);
    break;
  case ODLA_INT64:
    ((int64_t *)base)[i] = (int64_t)ref_saturate(v, -9223372036854775808.0, 9223372036854774784.0);
    break;
  case ODLA_UINT8:
    ((uint8_t *)base)[i] = (uint8_t)ref_saturate(v, 0, UINT8_MAX);
    break;
  case ODLA_UINT16:
    ((uint16_t *)base)[i] = (uint16_t)ref_saturate(v, 0, UINT16_MAX);
    break;
  case ODLA_UINT32:
    ((uint32_t *)base)[i] = (uint32_t)ref_saturate(v, 0, UINT32_MAX);
    break;
  case ODLA_UINT64:
    ((uint64_t *)base)[i] = (uint64_t)ref_saturate(v, 0, 18446744073709549568.0);
    break;
  case ODLA_BOOL:
    ((uint8_t *)base)[i] = (uint8_t)(v != 0);
    break;
  default:
    break;
  }
}

int64_t ref_get_int(odla_element_type t, const void *base, int64_t i) {
  switch (t) {
  case ODLA_INT8:
    return ((const int8_t *)base)[i];
  case ODLA_INT16:
    return ((const int16_t *)base)[i];
  case ODLA_INT32:
    return ((const int32_t *)base)[i];
  case ODLA_INT64:
    return ((const int64_t *)base)[i];
  case ODLA_UINT8:
  case ODLA_BOOL:
    return ((const uint8_t *)base)[i];
  case ODLA_UINT16:
    return ((const uint16_t *)base)[i];
  case ODLA_UINT32:
    return ((const uint32_t *)base)[i];
  case ODLA_UINT64:
    return (int64_t)((const uint64_t *)base)[i];
  default:
    return (int64_t)ref_get(t, base, i);
  }
}
