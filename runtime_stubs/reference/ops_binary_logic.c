/* ops_binary_logic.c: broadcasting comparisons, logic and selection of the reference backend
 * (Equal, NotEqual, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Select) and the
 * extensions ExtBitwiseAnd, ExtBitwiseOr and ExtBitwiseXor.
 *
 * Operands broadcast numpy-style (ops_binary.h). Comparisons take two operands of one element
 * type, any type (strings by their bytes, Equal and NotEqual only; float16 and bfloat16
 * compare as float; NaN compares unequal to everything,
 * itself included; false < true) and give ODLA_BOOL. Logic ops take ODLA_BOOL (any non-zero
 * byte is true) and give ODLA_BOOL; the bitwise ones take any integer type and give it. */
#include "ops_binary.h"
#include "ref_types.h"

#include <string.h>

/* ---- Comparisons and logic ------------------------------------------------------------ */

#define REF_CMP_ROW(op, E, S, C, SFX, EXPR)                                                        \
  REF_ROW2(ref_##op##_##SFX, S, C, uint8_t, REF_LOAD_##SFX, REF_STORE_bool, EXPR)
#define REF_CASE(op, E, SFX)                                                                       \
  case E:                                                                                          \
    return ref_##op##_##SFX;
#define REF_PICK(op, FOR_TYPES)                                                                    \
  static ref_row_fn ref_##op##_pick(odla_element_type t) {                                         \
    switch (t) {                                                                                   \
      FOR_TYPES(REF_CASE_##op)                                                                     \
    default:                                                                                       \
      return NULL;                                                                                 \
    }                                                                                              \
  }

#define REF_COMPARE(E, S, C, SFX)                                                                  \
  REF_CMP_ROW(eq, E, S, C, SFX, x == z)                                                            \
  REF_CMP_ROW(ne, E, S, C, SFX, x != z)                                                            \
  REF_CMP_ROW(lt, E, S, C, SFX, x < z)                                                             \
  REF_CMP_ROW(le, E, S, C, SFX, x <= z)                                                            \
  REF_CMP_ROW(gt, E, S, C, SFX, x > z)                                                             \
  REF_CMP_ROW(ge, E, S, C, SFX, x >= z)
REF_FOR_ALL_TYPES(REF_COMPARE)
#define REF_CASE_eq(E, S, C, SFX) REF_CASE(eq, E, SFX)
#define REF_CASE_ne(E, S, C, SFX) REF_CASE(ne, E, SFX)
#define REF_CASE_lt(E, S, C, SFX) REF_CASE(lt, E, SFX)
#define REF_CASE_le(E, S, C, SFX) REF_CASE(le, E, SFX)
#define REF_CASE_gt(E, S, C, SFX) REF_CASE(gt, E, SFX)
#define REF_CASE_ge(E, S, C, SFX) REF_CASE(ge, E, SFX)
REF_PICK(eq, REF_FOR_ALL_TYPES)
REF_PICK(ne, REF_FOR_ALL_TYPES)
REF_PICK(lt, REF_FOR_ALL_TYPES)
REF_PICK(le, REF_FOR_ALL_TYPES)
REF_PICK(gt, REF_FOR_ALL_TYPES)
REF_PICK(ge, REF_FOR_ALL_TYPES)

#define REF_LOGIC(E, S, C, SFX)                                                                    \
  REF_CMP_ROW(and, E, S, C, SFX, (x != 0) & (z != 0))                                              \
  REF_CMP_ROW(or, E, S, C, SFX, (x != 0) | (z != 0))                                               \
  REF_CMP_ROW(xor, E, S, C, SFX, (x != 0) ^ (z != 0))
REF_FOR_BOOL_TYPE(REF_LOGIC)
#define REF_CASE_and(E, S, C, SFX) REF_CASE(and, E, SFX)
#define REF_CASE_or(E, S, C, SFX) REF_CASE(or, E, SFX)
#define REF_CASE_xor(E, S, C, SFX) REF_CASE(xor, E, SFX)
REF_PICK(and, REF_FOR_BOOL_TYPE)
REF_PICK(or, REF_FOR_BOOL_TYPE)
REF_PICK(xor, REF_FOR_BOOL_TYPE)

#define REF_BITWISE_ROW(op, E, S, C, SFX, EXPR)                                                    \
  REF_ROW2(ref_##op##_##SFX, S, C, S, REF_LOAD_##SFX, REF_STORE_##SFX, EXPR)
#define REF_BITWISE(E, S, C, SFX)                                                                  \
  REF_BITWISE_ROW(bitand, E, S, C, SFX, (C)(x & z))                                                \
  REF_BITWISE_ROW(bitor, E, S, C, SFX, (C)(x | z))                                                 \
  REF_BITWISE_ROW(bitxor, E, S, C, SFX, (C)(x ^ z))
REF_FOR_INT_TYPES(REF_BITWISE)
#define REF_CASE_bitand(E, S, C, SFX) REF_CASE(bitand, E, SFX)
#define REF_CASE_bitor(E, S, C, SFX) REF_CASE(bitor, E, SFX)
#define REF_CASE_bitxor(E, S, C, SFX) REF_CASE(bitxor, E, SFX)
REF_PICK(bitand, REF_FOR_INT_TYPES)
REF_PICK(bitor, REF_FOR_INT_TYPES)
REF_PICK(bitxor, REF_FOR_INT_TYPES)

/* Strings (ODLA_STRING, odla_ext_string.h) are equal when their bytes are. */
#define REF_LOAD_str(p, i) ((p)[i])
REF_ROW2(ref_eq_str, odla_string, odla_string, uint8_t, REF_LOAD_str, REF_STORE_bool,
         strcmp(x, z) == 0)
REF_ROW2(ref_ne_str, odla_string, odla_string, uint8_t, REF_LOAD_str, REF_STORE_bool,
         strcmp(x, z) != 0)
static ref_row_fn ref_eq_or_str_pick(odla_element_type t) {
  return t == ODLA_STRING ? ref_eq_str : ref_eq_pick(t);
}
static ref_row_fn ref_ne_or_str_pick(odla_element_type t) {
  return t == ODLA_STRING ? ref_ne_str : ref_ne_pick(t);
}

odla_value odla_Equal(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Equal", ref_eq_or_str_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_NotEqual(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("NotEqual", ref_ne_or_str_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_Less(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Less", ref_lt_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_LessOrEqual(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("LessOrEqual", ref_le_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_Greater(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Greater", ref_gt_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_GreaterOrEqual(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("GreaterOrEqual", ref_ge_pick, "every type", 1, 0, lhs, rhs, value_id);
}
odla_value odla_And(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("And", ref_and_pick, "bool only", 1, 0, lhs, rhs, value_id);
}
odla_value odla_Or(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Or", ref_or_pick, "bool only", 1, 0, lhs, rhs, value_id);
}
odla_value odla_Xor(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("Xor", ref_xor_pick, "bool only", 1, 0, lhs, rhs, value_id);
}
odla_value odla_ExtBitwiseAnd(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("ExtBitwiseAnd", ref_bitand_pick, "integer types", 0, 0, lhs, rhs,
                          value_id);
}
odla_value odla_ExtBitwiseOr(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("ExtBitwiseOr", ref_bitor_pick, "integer types", 0, 0, lhs, rhs,
                          value_id);
}
odla_value odla_ExtBitwiseXor(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary_build("ExtBitwiseXor", ref_bitxor_pick, "integer types", 0, 0, lhs, rhs,
                          value_id);
}

/* ---- Select --------------------------------------------------------------------------- */

/* One row of Select per element size: the element type does not matter to a copy. */
#define REF_SELECT_ROW(T)                                                                          \
  static void ref_select_##T(void *vy, const void *const *in, const int64_t *s, int64_t n,         \
                             const void *ctx) {                                                    \
    const uint8_t *c = (const uint8_t *)in[0];                                                     \
    const T *a = (const T *)in[1], *b = (const T *)in[2];                                          \
    T *y = (T *)vy;                                                                                \
    int64_t i;                                                                                     \
    (void)ctx;                                                                                     \
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                                                     \
      for (i = 0; i < n; ++i)                                                                      \
        y[i] = c[i] ? a[i] : b[i];                                                                 \
    } else {                                                                                       \
      for (i = 0; i < n; ++i)                                                                      \
        y[i] = c[i * s[0]] ? a[i * s[1]] : b[i * s[2]];                                            \
    }                                                                                              \
  }
REF_SELECT_ROW(uint8_t)
REF_SELECT_ROW(uint16_t)
REF_SELECT_ROW(uint32_t)
REF_SELECT_ROW(uint64_t)

/* y = condition ? a : b, element by element; condition (ODLA_BOOL), a and b (one element
 * type, any) broadcast together numpy-style. output_dims may be undefined (size -1); when
 * given, it must be the broadcast shape. */
odla_value odla_Select(odla_value condition, odla_value a, odla_value b,
                       odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value in[3];
  odla_element_type t;
  ref_row_fn fn;
  in[0] = condition;
  in[1] = a;
  in[2] = b;
  if (!ref_check_operands("Select", 3, in))
    return NULL;
  if (condition->type.element_type != ODLA_BOOL)
    return ref_fail(ODLA_INVALID_PARAM, "Select", "condition has element type %s, not bool",
                    ref_type_name(condition->type.element_type));
  t = a->type.element_type;
  if (t != b->type.element_type)
    return ref_fail(ODLA_INVALID_PARAM, "Select", "operand element types differ: %s and %s",
                    ref_type_name(t), ref_type_name(b->type.element_type));
  switch (ref_elem_size(t)) {
  case 1:
    fn = ref_select_uint8_t;
    break;
  case 2:
    fn = ref_select_uint16_t;
    break;
  case 4:
    fn = ref_select_uint32_t;
    break;
  case 8:
    fn = ref_select_uint64_t;
    break;
  default:
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Select", "element type %s is not supported",
                    ref_type_name(t));
  }
  return ref_bcast_node("Select", fn, 3, in, t, 0, &output_dims, value_id);
}
