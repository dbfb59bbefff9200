/* ops_binary.c: broadcasting binary elementwise ops of the reference backend (arithmetic on
 * every numeric type). */
#include "ref.h"

#include <string.h>

/* ---- Broadcasting binary ops --------------------------------------------------------- */

/* The iteration space of a broadcast: output dims with each operand's element strides
 * (0 along broadcast axes), adjacent axes merged where both operands allow it. */
typedef struct {
  int rank;
  int64_t dims[ODLA_MAX_DIMENSION];
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION];
} ref_bcast;

/* Computes the numpy broadcast of a and b into `out`; returns 0 if they do not broadcast. */
static int ref_broadcast(const odla_value_shape *a, const odla_value_shape *b,
                         odla_value_shape *out, ref_bcast *bc) {
  int rank = a->size > b->size ? a->size : b->size, i, r = 0;
  int64_t da[ODLA_MAX_DIMENSION], db[ODLA_MAX_DIMENSION], stride_a = 1, stride_b = 1;
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION];
  out->size = rank;
  for (i = 0; i < rank; ++i) {
    da[i] = i < rank - a->size ? 1 : a->dims[i - (rank - a->size)];
    db[i] = i < rank - b->size ? 1 : b->dims[i - (rank - b->size)];
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
      return 0;
    out->dims[i] = da[i] == 1 ? db[i] : da[i];
  }
  for (i = rank - 1; i >= 0; --i) {
    sa[i] = da[i] == 1 && out->dims[i] != 1 ? 0 : stride_a;
    sb[i] = db[i] == 1 && out->dims[i] != 1 ? 0 : stride_b;
    stride_a *= da[i];
    stride_b *= db[i];
  }
  /* Merge axis i into the axis before it when both operands step through them as one. */
  for (i = 0; i < rank; ++i) {
    if (out->dims[i] == 1)
      continue;
    if (r > 0 && sa[i] * out->dims[i] == bc->sa[r - 1] && sb[i] * out->dims[i] == bc->sb[r - 1]) {
      bc->dims[r - 1] *= out->dims[i];
      bc->sa[r - 1] = sa[i];
      bc->sb[r - 1] = sb[i];
      continue;
    }
    bc->dims[r] = out->dims[i];
    bc->sa[r] = sa[i];
    bc->sb[r] = sb[i];
    ++r;
  }
  if (r == 0) { /* one element */
    bc->dims[0] = 1;
    bc->sa[0] = bc->sb[0] = 1;
    r = 1;
  }
  bc->rank = r;
  return 1;
}

/* Integer division without traps: x/0 gives 0, and MIN/-1 wraps. */
#define REF_IDIV(T, a, b) ((b) == 0 ? (T)0 : ((b) == (T)-1 ? (T)(0 - (a)) : (T)((a) / (b))))
#define REF_UDIV(T, a, b) ((b) == 0 ? (T)0 : (T)((a) / (b)))

/* Defines ref_<name>_<suffix>: one inner loop per stride pattern, so that the compiler
 * vectorizes the common contiguous and scalar-operand cases. */
#define REF_BINARY_KERNEL(name, suffix, T, EXPR)                                                \
  static void ref_##name##_##suffix##_row(const T *a, const T *b, T *y, int64_t n, int64_t sa,  \
                                          int64_t sb) {                                        \
    int64_t i;                                                                                  \
    if (sa == 1 && sb == 1) {                                                                   \
      for (i = 0; i < n; ++i) {                                                                 \
        const T x = a[i], z = b[i];                                                             \
        y[i] = (T)(EXPR);                                                                       \
      }                                                                                         \
    } else if (sa == 1) {                                                                       \
      const T z = b[0];                                                                         \
      for (i = 0; i < n; ++i) {                                                                 \
        const T x = a[i];                                                                       \
        y[i] = (T)(EXPR);                                                                       \
      }                                                                                         \
    } else if (sb == 1) {                                                                       \
      const T x = a[0];                                                                         \
      for (i = 0; i < n; ++i) {                                                                 \
        const T z = b[i];                                                                       \
        y[i] = (T)(EXPR);                                                                       \
      }                                                                                         \
    } else {                                                                                    \
      for (i = 0; i < n; ++i) {                                                                 \
        const T x = a[i * sa], z = b[i * sb];                                                   \
        y[i] = (T)(EXPR);                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void ref_##name##_##suffix(const ref_bcast *bc, const void *va, const void *vb,        \
                                    void *vy) {                                                 \
    const T *a = (const T *)va, *b = (const T *)vb;                                             \
    T *y = (T *)vy;                                                                             \
    int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0, inner = bc->dims[bc->rank - 1];      \
    int d;                                                                                      \
    for (;;) {                                                                                  \
      ref_##name##_##suffix##_row(a + oa, b + ob, y, inner, bc->sa[bc->rank - 1],               \
                                  bc->sb[bc->rank - 1]);                                        \
      y += inner;                                                                               \
      for (d = bc->rank - 2; d >= 0; --d) {                                                     \
        oa += bc->sa[d];                                                                        \
        ob += bc->sb[d];                                                                        \
        if (++idx[d] < bc->dims[d])                                                             \
          break;                                                                                \
        oa -= bc->sa[d] * bc->dims[d];                                                          \
        ob -= bc->sb[d] * bc->dims[d];                                                          \
        idx[d] = 0;                                                                             \
      }                                                                                         \
      if (d < 0)                                                                                \
        return;                                                                                 \
    }                                                                                           \
  }

#define REF_BINARY_ALL_TYPES(name, FEXPR, SIEXPR, UIEXPR)                                       \
  REF_BINARY_KERNEL(name, f32, float, FEXPR)                                                    \
  REF_BINARY_KERNEL(name, f64, double, FEXPR)                                                   \
  REF_BINARY_KERNEL(name, i8, int8_t, SIEXPR(int8_t))                                           \
  REF_BINARY_KERNEL(name, i16, int16_t, SIEXPR(int16_t))                                        \
  REF_BINARY_KERNEL(name, i32, int32_t, SIEXPR(int32_t))                                        \
  REF_BINARY_KERNEL(name, i64, int64_t, SIEXPR(int64_t))                                        \
  REF_BINARY_KERNEL(name, u8, uint8_t, UIEXPR(uint8_t))                                         \
  REF_BINARY_KERNEL(name, u16, uint16_t, UIEXPR(uint16_t))                                      \
  REF_BINARY_KERNEL(name, u32, uint32_t, UIEXPR(uint32_t))                                      \
  REF_BINARY_KERNEL(name, u64, uint64_t, UIEXPR(uint64_t))                                      \
  static void (*ref_##name##_for(odla_element_type t))(const ref_bcast *, const void *,         \
                                                       const void *, void *) {                 \
    switch (t) {                                                                                \
    case ODLA_FLOAT32: return ref_##name##_f32;                                                 \
    case ODLA_FLOAT64: return ref_##name##_f64;                                                 \
    case ODLA_INT8: return ref_##name##_i8;                                                     \
    case ODLA_INT16: return ref_##name##_i16;                                                   \
    case ODLA_INT32: return ref_##name##_i32;                                                   \
    case ODLA_INT64: return ref_##name##_i64;                                                   \
    case ODLA_UINT8: return ref_##name##_u8;                                                    \
    case ODLA_UINT16: return ref_##name##_u16;                                                  \
    case ODLA_UINT32: return ref_##name##_u32;                                                  \
    case ODLA_UINT64: return ref_##name##_u64;                                                  \
    default: return NULL;                                                                       \
    }                                                                                           \
  }

/* Signed integer add/sub/mul go through unsigned arithmetic so overflow wraps instead of
 * being undefined behaviour. */
#define REF_WRAP(T, OP) (T)((uint64_t)(int64_t)x OP (uint64_t)(int64_t)z)
#define REF_ADD_S(T) REF_WRAP(T, +)
#define REF_SUB_S(T) REF_WRAP(T, -)
#define REF_MUL_S(T) REF_WRAP(T, *)
#define REF_ADD_U(T) x + z
#define REF_SUB_U(T) x - z
#define REF_MUL_U(T) x * z
#define REF_DIV_S(T) REF_IDIV(T, x, z)
#define REF_DIV_U(T) REF_UDIV(T, x, z)

REF_BINARY_ALL_TYPES(add, x + z, REF_ADD_S, REF_ADD_U)
REF_BINARY_ALL_TYPES(sub, x - z, REF_SUB_S, REF_SUB_U)
REF_BINARY_ALL_TYPES(mul, x * z, REF_MUL_S, REF_MUL_U)
REF_BINARY_ALL_TYPES(div, x / z, REF_DIV_S, REF_DIV_U)

typedef void (*ref_binary_fn)(const ref_bcast *, const void *, const void *, void *);

typedef struct {
  ref_bcast bc;
  ref_binary_fn fn;
} ref_binary_params;

static odla_status ref_binary_run(const ref_node *node, const ref_io *io) {
  const ref_binary_params *p = (const ref_binary_params *)node->params;
  if (ref_count(&node->outputs[0]->type.shape) > 0)
    p->fn(&p->bc, io->in[0], io->in[1], io->out[0]);
  return ODLA_SUCCESS;
}

static odla_value ref_binary(const char *op, ref_binary_fn (*pick)(odla_element_type),
                             odla_value a, odla_value b, odla_value_id id) {
  ref_binary_params p;
  odla_value_type out;
  odla_value in[2];
  char sa[128], sb[128];
  in[0] = a;
  in[1] = b;
  if (!ref_check_operands(op, 2, in))
    return NULL;
  if (a->type.element_type != b->type.element_type)
    return ref_fail(ODLA_INVALID_PARAM, op, "operand element types differ: %s and %s",
                    ref_type_name(a->type.element_type), ref_type_name(b->type.element_type));
  p.fn = pick(a->type.element_type);
  if (!p.fn)
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported",
                    ref_type_name(a->type.element_type));
  out.element_type = a->type.element_type;
  if (!ref_broadcast(&a->type.shape, &b->type.shape, &out.shape, &p.bc))
    return ref_fail(ODLA_INVALID_PARAM, op, "shapes %s and %s do not broadcast",
                    ref_shape_str(&a->type.shape, sa, sizeof sa),
                    ref_shape_str(&b->type.shape, sb, sizeof sb));
  return ref_add_op(op, ref_binary_run, 2, in, out, id, &p, sizeof p);
}

odla_value odla_Add(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary("Add", ref_add_for, lhs, rhs, value_id);
}
odla_value odla_Sub(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary("Sub", ref_sub_for, lhs, rhs, value_id);
}
odla_value odla_Mul(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary("Mul", ref_mul_for, lhs, rhs, value_id);
}
odla_value odla_Div(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return ref_binary("Div", ref_div_for, lhs, rhs, value_id);
}
