/* odla_ext_reduce.h: odlac's extension ops of the reduce family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them. */
#ifndef _ODLA_EXT_REDUCE_H_
#define _ODLA_EXT_REDUCE_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ReduceSum over axes known only at run time (ONNX ReduceSum from opset 13, whose axes are an
 * input). `axes` is a 1-D (or 0-D) int32 or int64 tensor of axes in [-rank, rank), without
 * duplicates. An empty `axes` reduces every axis, or, with noop_with_empty_axes, copies the
 * input. keep_dims keeps reduced axes as extent 1. `output_dims` is required: the result
 * shape the caller expects; execution fails with ODLA_INVALID_PARAM when the axes read at run
 * time are invalid or give another shape. Element types and arithmetic are those of
 * odla_ReduceSum. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtReduceSumDynamic(
    odla_value input, odla_value axes, odla_bool keep_dims, odla_bool noop_with_empty_axes,
    odla_value_shape output_dims, const odla_value_id value_id);

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
