/* odla_ext_reduce.h: odlac's extension ops of the reduce family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_REDUCE_H_
#define _ODLA_EXT_REDUCE_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reductions odla_ExtReduceDynamic computes, as ODLA 0.5's odla_Reduce* of the same name
 * (ReduceL1 and ReduceL2 with epsilon 0). */
#define ODLA_EXT_REDUCE_SUM 0
#define ODLA_EXT_REDUCE_MEAN 1
#define ODLA_EXT_REDUCE_MAX 2
#define ODLA_EXT_REDUCE_MIN 3
#define ODLA_EXT_REDUCE_PROD 4
#define ODLA_EXT_REDUCE_L1 5
#define ODLA_EXT_REDUCE_L2 6
#define ODLA_EXT_REDUCE_LOG_SUM 7
#define ODLA_EXT_REDUCE_LOG_SUM_EXP 8
#define ODLA_EXT_REDUCE_SUM_SQUARE 9

/* A reduction over axes known only at run time (ONNX's Reduce* ops whose axes are an input:
 * ReduceSum from opset 13, the others from 18). `reduction` is one of ODLA_EXT_REDUCE_*.
 * `axes` is a 1-D (or 0-D) int32 or int64 tensor of axes in [-rank, rank), without
 * duplicates. An empty `axes` reduces every axis, or, with noop_with_empty_axes, none: each
 * element alone takes the reduction's other steps (ONNX's rule: L1 and L2 give |x|, LOG_SUM
 * log x, SUM_SQUARE x * x, the others x). keep_dims keeps reduced axes as extent 1. `output_dims`
 * is required: the result shape the caller expects; execution fails with ODLA_INVALID_PARAM when
 * the axes read at run time are invalid or give another shape. Element types and arithmetic are
 * those of the odla_Reduce* function it names. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtReduceDynamic(
    odla_value input, odla_value axes, odla_int32 reduction, odla_bool keep_dims,
    odla_bool noop_with_empty_axes, odla_value_shape output_dims, const odla_value_id value_id);

/* The running product along `axis` (ONNX CumProd), as odla_CumSum's running sum: `axis` is one
 * int32 or int64 element in [-rank, rank), read when the computation runs; `exclusion` leaves
 * out the element itself (the first is 1), `reverse` runs from the end. Numeric types;
 * integers wrap, float16 and bfloat16 multiply in float32. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtCumProd(odla_value input, odla_value axis,
                                                                odla_bool exclusion,
                                                                odla_bool reverse,
                                                                const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_REDUCE_H_ */
