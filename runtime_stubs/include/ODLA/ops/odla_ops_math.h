// ODLA 0.5 math ops: element-wise arithmetic, logic, comparisons, reductions and matrix products.
//
// Op builders take no computation handle: each call adds one op to the calling
// thread's current computation (see odla_compute.h) and returns its result. The
// last parameter is the result's id, a C string cast to odla_value_id (or
// odla_value_ids for ops with several results). output_dims / output_shape is
// the result shape the caller inferred; it may be left undefined (size -1).
// Optional operands are passed as NULL.
//
// Binary element-wise ops follow ONNX (numpy-style) broadcasting.

#ifndef _ODLA_OPERATOR_OPS_MATH_H_
#define _ODLA_OPERATOR_OPS_MATH_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// Element-wise unary ops.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Abs(odla_value input,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Ceil(odla_value input,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Erf(odla_value input,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Exp(odla_value input,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Floor(odla_value input,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_IsNaN(odla_value input,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Log(odla_value input,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Neg(odla_value input,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Reciprocal(odla_value input,
                                                                const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Round(odla_value input,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Rsqrt(odla_value input,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sign(odla_value input,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sqrt(odla_value input,
                                                          const odla_value_id value_id);

// Trigonometric and hyperbolic functions.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sin(odla_value x,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Cos(odla_value x,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Tan(odla_value x,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ASin(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ACos(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ATan(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sinh(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Cosh(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Tanh(odla_value x,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ASinh(odla_value x,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ACosh(odla_value x,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ATanh(odla_value x,
                                                           const odla_value_id value_id);

// Element-wise binary arithmetic. odla_Mod: fmod is a flag, non-zero for C
// fmod semantics (sign of the dividend) instead of integer modulo. odla_Shift:
// is_left_shift selects the direction.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Add(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sub(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Mul(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Div(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Pow(odla_value base, odla_value exponent,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Max(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Min(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Mod(odla_value lhs, odla_value rhs,
                                                         odla_int64 fmod,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_SquaredDifference(odla_value lhs, odla_value rhs, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Shift(odla_value input,
                                                           odla_value shift_amount,
                                                           odla_bool is_left_shift,
                                                           const odla_value_id value_id);

// Logical ops on boolean values.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_And(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Or(odla_value lhs, odla_value rhs,
                                                        const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Xor(odla_value lhs, odla_value rhs,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Not(odla_value input,
                                                         const odla_value_id value_id);

// Comparisons; the result element type is ODLA_BOOL.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Equal(odla_value lhs, odla_value rhs,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_NotEqual(odla_value lhs, odla_value rhs,
                                                              const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Greater(odla_value lhs, odla_value rhs,
                                                             const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_GreaterOrEqual(odla_value lhs, odla_value rhs,
                                                                    const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Less(odla_value lhs, odla_value rhs,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_LessOrEqual(odla_value lhs, odla_value rhs,
                                                                 const odla_value_id value_id);

// Other element-wise ops. odla_Clamp limits input to [lo, hi] (Relu6 is
// odla_Clamp(x, 0, 6)). odla_IsInf tests for +inf and/or -inf. odla_Select
// picks from a where condition is true, else from b. odla_Mean averages all
// of inputs.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Clamp(odla_value input, odla_float32 lo,
                                                           odla_float32 hi,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_IsInf(odla_value input, odla_bool detect_pos,
                                                           odla_bool detect_neg,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Select(odla_value condition, odla_value a,
                                                            odla_value b,
                                                            odla_value_shape output_dims,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Mean(odla_values inputs,
                                                          const odla_value_id value_id);

// odla_CumSum sums along axis (given as a value); exclusion leaves out the
// current element, reverse sums from the end.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_CumSum(odla_value input, odla_value axis,
                                                            odla_bool exclusion, odla_bool reverse,
                                                            const odla_value_id value_id);

// odla_Einsum contracts inputs as described by an einsum equation string.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Einsum(odla_values inputs,
                                                            const odla_char *equation,
                                                            odla_value_shape output_dims,
                                                            const odla_value_id value_id);

// Index of the largest / smallest element along axis. output_value_type is
// the type of the resulting index tensor.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ArgMax(odla_value input, odla_int32 axis,
                                                            odla_bool keep_dims,
                                                            odla_bool return_last_index,
                                                            odla_value_type output_value_type,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ArgMin(odla_value input, odla_int32 axis,
                                                            odla_bool keep_dims,
                                                            odla_bool return_last_index,
                                                            odla_value_type output_value_type,
                                                            const odla_value_id value_id);

// Reductions over num_of_axes axes listed in axes. keep_dims keeps each
// reduced axis with size 1. epsilon guards the L1/L2 norms.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ReduceL1(
    odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes, odla_bool keep_dims,
    odla_float32 epsilon, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ReduceL2(
    odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes, odla_bool keep_dims,
    odla_float32 epsilon, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceLogSum(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                  odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ReduceLogSumExp(
    odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes, odla_bool keep_dims,
    odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceMax(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
               odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceMean(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceMin(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
               odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceProd(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
                odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ReduceSum(odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes,
               odla_bool keep_dims, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ReduceSumSquare(
    odla_value input, odla_size_t num_of_axes, const odla_uint32 *axes, odla_bool keep_dims,
    odla_value_shape output_dims, const odla_value_id value_id);

// Matrix products: alpha * op(A) * op(B) + beta * C, where op transposes its
// operand when the flag is set. C is optional (NULL). HALO maps MatMul,
// BatchMatMul and InnerProduct to odla_Gemm and never emits odla_BatchMatMul.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Gemm(
    odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose, odla_float32 alpha,
    odla_float32 beta, odla_value C, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_BatchMatMul(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                 odla_value_shape output_dims, const odla_value_id value_id);

// Determinant and inverse of (batches of) square matrices.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Det(odla_value input,
                                                         odla_value_shape output_shape,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Inverse(odla_value input,
                                                             const odla_value_id value_id);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_MATH_H_
