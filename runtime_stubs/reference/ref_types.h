/* ref_types.h: element types in the reference backend's kernels.
 *
 * Kernels are written once per family of types with the X-macros below. Each entry is
 * X(ODLA enum, storage type, compute type, suffix). float16 and bfloat16 are stored as
 * uint16_t and computed in float; REF_LOAD_<suffix>(p, i) and REF_STORE_<suffix>(p, i, v)
 * convert between storage and compute types (plain indexing for the other types):
 *
 *   #define REF_DEFINE_NEG(E, S, C, SFX)                                               \
 *     static void ref_neg_##SFX(const S *x, S *y, int64_t n) {                          \
 *       int64_t i;                                                                      \
 *       for (i = 0; i < n; ++i) REF_STORE_##SFX(y, i, -REF_LOAD_##SFX(x, i));           \
 *     }
 *   REF_FOR_SIGNED_TYPES(REF_DEFINE_NEG)
 *
 * ref_get/ref_set read and write one element of any type as double, for kernels where a
 * generic path is fast enough (index math, casts, small tensors). */
#ifndef ODLA_REFERENCE_REF_TYPES_H_
#define ODLA_REFERENCE_REF_TYPES_H_

#include <ODLA/ext/odla_ext_types.h>
#include <ODLA/odla.h>

#include <stdint.h>
#include <string.h>

/* IEEE half <-> float, round to nearest even; NaN and infinities preserved. */
static inline float ref_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  float f;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else { /* subnormal half: normalize */
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ff) << 13);
  }
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t ref_float_to_half(float f) {
  uint32_t x, sign, mant;
  int32_t exp;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000;
  exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) /* inf or NaN */
    return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
  if (exp >= 0x1f)
    return (uint16_t)(sign | 0x7c00); /* overflow: infinity */
  if (exp <= 0) {                     /* subnormal or zero */
    uint32_t shift, rounded;
    if (exp < -10)
      return (uint16_t)sign;
    mant |= 0x800000;
    shift = (uint32_t)(14 - exp);
    rounded = mant >> shift;
    if ((mant >> (shift - 1)) & 1 && ((mant & ((1u << (shift - 1)) - 1)) || (rounded & 1)))
      ++rounded;
    return (uint16_t)(sign | rounded);
  }
  {
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
      ++h; /* may carry into the exponent, which is the correct rounding */
    return (uint16_t)h;
  }
}

static inline float ref_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t ref_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  x += 0x7fff + ((x >> 16) & 1);         /* round to nearest even */
  return (uint16_t)(x >> 16);
}

#define REF_LOAD_f32(p, i) ((p)[i])
#define REF_LOAD_f64(p, i) ((p)[i])
#define REF_LOAD_f16(p, i) ref_half_to_float((p)[i])
#define REF_LOAD_bf16(p, i) ref_bf16_to_float((p)[i])
#define REF_LOAD_i8(p, i) ((p)[i])
#define REF_LOAD_i16(p, i) ((p)[i])
#define REF_LOAD_i32(p, i) ((p)[i])
#define REF_LOAD_i64(p, i) ((p)[i])
#define REF_LOAD_u8(p, i) ((p)[i])
#define REF_LOAD_u16(p, i) ((p)[i])
#define REF_LOAD_u32(p, i) ((p)[i])
#define REF_LOAD_u64(p, i) ((p)[i])
#define REF_LOAD_bool(p, i) ((p)[i])
#define REF_STORE_f32(p, i, v) ((p)[i] = (float)(v))
#define REF_STORE_f64(p, i, v) ((p)[i] = (double)(v))
#define REF_STORE_f16(p, i, v) ((p)[i] = ref_float_to_half((float)(v)))
#define REF_STORE_bf16(p, i, v) ((p)[i] = ref_float_to_bf16((float)(v)))
#define REF_STORE_i8(p, i, v) ((p)[i] = (int8_t)(v))
#define REF_STORE_i16(p, i, v) ((p)[i] = (int16_t)(v))
#define REF_STORE_i32(p, i, v) ((p)[i] = (int32_t)(v))
#define REF_STORE_i64(p, i, v) ((p)[i] = (int64_t)(v))
#define REF_STORE_u8(p, i, v) ((p)[i] = (uint8_t)(v))
#define REF_STORE_u16(p, i, v) ((p)[i] = (uint16_t)(v))
#define REF_STORE_u32(p, i, v) ((p)[i] = (uint32_t)(v))
#define REF_STORE_u64(p, i, v) ((p)[i] = (uint64_t)(v))
#define REF_STORE_bool(p, i, v) ((p)[i] = (uint8_t)((v) != 0))

/* The element types whose kernels the lists below instantiate: every type, or, built with
 * ODLA_REFERENCE_ONLY_TYPES, those named by ODLA_REFERENCE_WITH_<TYPE> (F32, F64, F16, BF16,
 * I8, I16, I32, I64, U8, U16, U32, U64, BOOL), so that firmware for one model links no kernel
 * of a type the model lacks (odlac --no-heap writes the model's set as NAME_reference.h, for
 * ODLA_REFERENCE_CONFIG). A builder given a type left out fails as for an unsupported one. */
#ifdef ODLA_REFERENCE_CONFIG
#include ODLA_REFERENCE_CONFIG
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_F32)
#define REF_IF_f32(x) x
#else
#define REF_IF_f32(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_F64)
#define REF_IF_f64(x) x
#else
#define REF_IF_f64(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_F16)
#define REF_IF_f16(x) x
#else
#define REF_IF_f16(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_BF16)
#define REF_IF_bf16(x) x
#else
#define REF_IF_bf16(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_I8)
#define REF_IF_i8(x) x
#else
#define REF_IF_i8(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_I16)
#define REF_IF_i16(x) x
#else
#define REF_IF_i16(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_I32)
#define REF_IF_i32(x) x
#else
#define REF_IF_i32(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_I64)
#define REF_IF_i64(x) x
#else
#define REF_IF_i64(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_U8)
#define REF_IF_u8(x) x
#else
#define REF_IF_u8(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_U16)
#define REF_IF_u16(x) x
#else
#define REF_IF_u16(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_U32)
#define REF_IF_u32(x) x
#else
#define REF_IF_u32(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_U64)
#define REF_IF_u64(x) x
#else
#define REF_IF_u64(x)
#endif
#if !defined(ODLA_REFERENCE_ONLY_TYPES) || defined(ODLA_REFERENCE_WITH_BOOL)
#define REF_IF_bool(x) x
#else
#define REF_IF_bool(x)
#endif
#define REF_FOR_FLOAT_TYPES(X)                                                                     \
  REF_IF_f32(X(ODLA_FLOAT32, float, float, f32)) REF_IF_f64(X(ODLA_FLOAT64, double, double, f64))  \
      REF_IF_f16(X(ODLA_FLOAT16, uint16_t, float, f16))                                            \
          REF_IF_bf16(X(ODLA_BFLOAT16, uint16_t, float, bf16))
#define REF_FOR_SIGNED_INT_TYPES(X)                                                                \
  REF_IF_i8(X(ODLA_INT8, int8_t, int8_t, i8)) REF_IF_i16(X(ODLA_INT16, int16_t, int16_t, i16))     \
      REF_IF_i32(X(ODLA_INT32, int32_t, int32_t, i32))                                             \
          REF_IF_i64(X(ODLA_INT64, int64_t, int64_t, i64))
#define REF_FOR_UNSIGNED_INT_TYPES(X)                                                              \
  REF_IF_u8(X(ODLA_UINT8, uint8_t, uint8_t, u8))                                                   \
      REF_IF_u16(X(ODLA_UINT16, uint16_t, uint16_t, u16))                                          \
          REF_IF_u32(X(ODLA_UINT32, uint32_t, uint32_t, u32))                                      \
              REF_IF_u64(X(ODLA_UINT64, uint64_t, uint64_t, u64))
#define REF_FOR_INT_TYPES(X) REF_FOR_SIGNED_INT_TYPES(X) REF_FOR_UNSIGNED_INT_TYPES(X)
#define REF_FOR_SIGNED_TYPES(X) REF_FOR_FLOAT_TYPES(X) REF_FOR_SIGNED_INT_TYPES(X)
#define REF_FOR_NUMERIC_TYPES(X) REF_FOR_FLOAT_TYPES(X) REF_FOR_INT_TYPES(X)
#define REF_FOR_BOOL_TYPE(X) REF_IF_bool(X(ODLA_BOOL, uint8_t, uint8_t, bool))
#define REF_FOR_ALL_TYPES(X) REF_FOR_NUMERIC_TYPES(X) REF_FOR_BOOL_TYPE(X)

/* One element of any type, read or written as double. Integers convert with saturation
 * (NaN becomes 0) so that no conversion is undefined behaviour. */
double ref_get(odla_element_type t, const void *base, int64_t i);
void ref_set(odla_element_type t, void *base, int64_t i, double v);
/* Integers read exactly (int64 and uint64 beyond 2^53 lose nothing). */
int64_t ref_get_int(odla_element_type t, const void *base, int64_t i);
int ref_is_float(odla_element_type t);
int ref_is_int(odla_element_type t);

/* ---- The extension types (odla_ext_types.h): one byte per element ------------------------ */

/* Whether t is one of them; the 8-bit and 4-bit floats among them; their integers (INT4, UINT4,
 * INT2, UINT2). ref_is_float and ref_is_int are false for all of them: kernels that compute
 * accept them explicitly. */
int ref_is_ext_type(odla_element_type t);
int ref_is_ext_float(odla_element_type t);
int ref_is_ext_int(odla_element_type t);
/* The range of an extension integer type. */
void ref_ext_int_range(odla_element_type t, int64_t *lo, int64_t *hi);
/* The value of one element's byte (exact); integers as their value. */
double ref_ext_decode(odla_element_type t, uint8_t b);
/* The byte of the value nearest v for the floats (ties to even; FLOAT8E8M0 rounds as
 * round_mode says, ODLA_EXT_ROUND_*), with saturate as odla_ExtCast describes; for the
 * integers, v's integral part when in range, else 0 (ONNX's reference, ml_dtypes, converts
 * floats so). */
uint8_t ref_ext_encode(odla_element_type t, double v, int saturate, int round_mode);
/* The byte of integer v wrapped to an extension integer type (two's complement, as integer
 * casts wrap). */
uint8_t ref_ext_wrap(odla_element_type t, int64_t v);

#endif /* ODLA_REFERENCE_REF_TYPES_H_ */
