/* types.c: generic element access for the reference backend's kernels (ref_types.h). */
#include "ref_types.h"

#include <math.h>

int ref_is_float(odla_element_type t) {
  return t == ODLA_FLOAT32 || t == ODLA_FLOAT64 || t == ODLA_FLOAT16 || t == ODLA_BFLOAT16;
}

int ref_is_int(odla_element_type t) {
  switch (t) {
  case ODLA_INT8: case ODLA_INT16: case ODLA_INT32: case ODLA_INT64:
  case ODLA_UINT8: case ODLA_UINT16: case ODLA_UINT32: case ODLA_UINT64: return 1;
  default: return 0;
  }
}

double ref_get(odla_element_type t, const void *base, int64_t i) {
  switch (t) {
#define REF_GET_CASE(E, S, C, SFX)                                                              \
  case E:                                                                                       \
    return (double)REF_LOAD_##SFX((const S *)base, i);
    REF_FOR_ALL_TYPES(REF_GET_CASE)
#undef REF_GET_CASE
  default: return 0.0;
  }
}

static double ref_saturate(double v, double lo, double hi) {
  if (v != v)
    return 0.0;
  v = v < 0 ? ceil(v) : floor(v); /* truncate toward zero, as C conversion does */
  return v < lo ? lo : (v > hi ? hi : v);
}

void ref_set(odla_element_type t, void *base, int64_t i, double v) {
  switch (t) {
  case ODLA_FLOAT32: REF_STORE_f32((float *)base, i, v); break;
  case ODLA_FLOAT64: REF_STORE_f64((double *)base, i, v); break;
  case ODLA_FLOAT16: REF_STORE_f16((uint16_t *)base, i, v); break;
  case ODLA_BFLOAT16: REF_STORE_bf16((uint16_t *)base, i, v); break;
  case ODLA_INT8: ((int8_t *)base)[i] = (int8_t)ref_saturate(v, INT8_MIN, INT8_MAX); break;
  case ODLA_INT16: ((int16_t *)base)[i] = (int16_t)ref_saturate(v, INT16_MIN, INT16_MAX); break;
  case ODLA_INT32: ((int32_t *)base)[i] = (int32_t)ref_saturate(v, INT32_MIN, INT32_MAX); break;
  case ODLA_INT64:
    ((int64_t *)base)[i] = (int64_t)ref_saturate(v, -9223372036854775808.0, 9223372036854774784.0);
    break;
  case ODLA_UINT8: ((uint8_t *)base)[i] = (uint8_t)ref_saturate(v, 0, UINT8_MAX); break;
  case ODLA_UINT16: ((uint16_t *)base)[i] = (uint16_t)ref_saturate(v, 0, UINT16_MAX); break;
  case ODLA_UINT32: ((uint32_t *)base)[i] = (uint32_t)ref_saturate(v, 0, UINT32_MAX); break;
  case ODLA_UINT64:
    ((uint64_t *)base)[i] = (uint64_t)ref_saturate(v, 0, 18446744073709549568.0);
    break;
  case ODLA_BOOL: ((uint8_t *)base)[i] = (uint8_t)(v != 0); break;
  default: break;
  }
}

int64_t ref_get_int(odla_element_type t, const void *base, int64_t i) {
  switch (t) {
  case ODLA_INT8: return ((const int8_t *)base)[i];
  case ODLA_INT16: return ((const int16_t *)base)[i];
  case ODLA_INT32: return ((const int32_t *)base)[i];
  case ODLA_INT64: return ((const int64_t *)base)[i];
  case ODLA_UINT8: case ODLA_BOOL: return ((const uint8_t *)base)[i];
  case ODLA_UINT16: return ((const uint16_t *)base)[i];
  case ODLA_UINT32: return ((const uint32_t *)base)[i];
  case ODLA_UINT64: return (int64_t)((const uint64_t *)base)[i];
  default: return (int64_t)ref_get(t, base, i);
  }
}
