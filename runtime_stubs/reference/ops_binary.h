/* ops_binary.h: numpy broadcasting and the node of a broadcasting elementwise op, shared by
 * the binary family's kernel files (ops_binary.c: arithmetic; ops_binary_logic.c:
 * comparisons, logic, select).
 *
 * A broadcasting op runs as rows: the output is walked in its innermost (merged) axis, and
 * for each row a type-specific row function computes n outputs from its operands, each
 * stepping by its own element stride along the row (0 for a broadcast operand, 1 else). */
#ifndef ODLA_REFERENCE_OPS_BINARY_H_
#define ODLA_REFERENCE_OPS_BINARY_H_

#include "ref.h"

#define REF_BCAST_MAX_OPERANDS 3

/* The iteration space of a broadcast: output dims with each operand's element strides
 * (0 along broadcast axes); adjacent axes are merged where every operand allows it, and
 * axes of extent 1 dropped. rank >= 1. */
typedef struct {
  int rank, num_operands;
  int64_t dims[ODLA_MAX_DIMENSION];
  int64_t strides[REF_BCAST_MAX_OPERANDS][ODLA_MAX_DIMENSION];
} ref_bcast;

/* Computes `y[0..n)` of one row. in[k] points at operand k's first element of the row and
 * steps by strides[k] elements; ctx is the node's parameter block. */
typedef void (*ref_row_fn)(void *y, const void *const *in, const int64_t *strides, int64_t n,
                           const void *ctx);

/* The numpy broadcast of `num` shapes into `out`; returns 0 if they do not broadcast. */
int ref_bcast_shape(int num, const odla_value_shape *const *shapes, odla_value_shape *out);
/* Plans the iteration of `num` operands of the given shapes (which broadcast to `out`). */
void ref_bcast_init(ref_bcast *bc, int num, const odla_value_shape *const *shapes,
                    const odla_value_shape *out);
/* Runs `fn` over every row of the output `y` (element size ey); operand k has element size
 * esize[k]. The output must hold at least one element. */
void ref_bcast_run(const ref_bcast *bc, ref_row_fn fn, void *y, size_t ey, const void *const *in,
                   const size_t *esize, const void *ctx);

/* The parameter block of a broadcasting op node (the row functions' ctx). */
typedef struct {
  ref_bcast bc;
  ref_row_fn fn;
  odla_element_type types[REF_BCAST_MAX_OPERANDS]; /* operand element types */
  odla_element_type out_type;
} ref_bcast_params;

/* Appends the node of a broadcasting op whose operands have been checked (types included)
 * and whose row function is `fn`. With `unidirectional`, the result has operand 0's shape and
 * the others must broadcast to it (PRelu's slope). `output_dims`, when defined (size >= 0),
 * must equal the inferred shape. Fails with a message naming the shapes. */
odla_value ref_bcast_node(const char *op, ref_row_fn fn, int num, const odla_value *in,
                          odla_element_type out_type, int unidirectional,
                          const odla_value_shape *output_dims, odla_value_id id);

/* The builder of a two-operand op whose operands have one element type: checks the operands,
 * asks `pick` for the row function of that type (NULL: the type is not supported; the
 * message names `supported`), and appends the node. The result has the operands' element
 * type, or ODLA_BOOL with `bool_result`. */
odla_value ref_binary_build(const char *op, ref_row_fn (*pick)(odla_element_type),
                            const char *supported, int bool_result, int unidirectional,
                            odla_value lhs, odla_value rhs, odla_value_id id);

/* Defines `static void fn(...)`, a ref_row_fn of two operands of storage type S, computing in
 * C: x and z are the operands' elements (LOAD converts them to C), EXPR the result, which
 * STORE writes into the output of storage type O. One loop per stride pattern, so that the
 * compiler vectorizes the contiguous and scalar-operand cases. */
#define REF_ROW2(fn, S, C, O, LOAD, STORE, EXPR)                                                   \
  static void fn(void *vy, const void *const *in, const int64_t *s, int64_t n, const void *ctx) {  \
    const S *a = (const S *)in[0], *b = (const S *)in[1];                                          \
    O *y = (O *)vy;                                                                                \
    int64_t i;                                                                                     \
    (void)ctx;                                                                                     \
    if (s[0] == 1 && s[1] == 1) {                                                                  \
      for (i = 0; i < n; ++i) {                                                                    \
        const C x = LOAD(a, i), z = LOAD(b, i);                                                    \
        STORE(y, i, EXPR);                                                                         \
      }                                                                                            \
    } else if (s[0] == 1 && s[1] == 0) {                                                           \
      const C z = LOAD(b, 0);                                                                      \
      for (i = 0; i < n; ++i) {                                                                    \
        const C x = LOAD(a, i);                                                                    \
        STORE(y, i, EXPR);                                                                         \
      }                                                                                            \
    } else if (s[0] == 0 && s[1] == 1) {                                                           \
      const C x = LOAD(a, 0);                                                                      \
      for (i = 0; i < n; ++i) {                                                                    \
        const C z = LOAD(b, i);                                                                    \
        STORE(y, i, EXPR);                                                                         \
      }                                                                                            \
    } else {                                                                                       \
      for (i = 0; i < n; ++i) {                                                                    \
        const C x = LOAD(a, i * s[0]), z = LOAD(b, i * s[1]);                                      \
        STORE(y, i, EXPR);                                                                         \
      }                                                                                            \
    }                                                                                              \
  }

#endif /* ODLA_REFERENCE_OPS_BINARY_H_ */
