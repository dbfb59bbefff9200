/* odla_ext_indexing.h: odlac's extension ops of the indexing family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them.
 *
 * ODLA 0.5 has no scatter op, no op whose result shape depends on the data (NonZero), and its
 * odla_Resize / odla_ResizeDynamic enums cannot say how nearest rounds, which cubic
 * coefficient to use, whether samples outside the input count, or crop boxes (ONNX's
 * nearest_mode, cubic_coeff_a, exclude_outside, pytorch_half_pixel, tf_crop_and_resize).
 * odlac calls the core ops whenever they express a case exactly and these otherwise. */
#ifndef _ODLA_EXT_INDEXING_H_
#define _ODLA_EXT_INDEXING_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>
#include <ODLA/ops/odla_ops_process.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a scatter combines an update u with the element e it lands on. */
#define ODLA_EXT_SCATTER_NONE 0 /* e = u; with repeated indices the last update wins */
#define ODLA_EXT_SCATTER_ADD 1  /* e = e + u (integers wrap around; bool: or) */
#define ODLA_EXT_SCATTER_MUL 2  /* e = e * u (integers wrap around; bool: and) */
#define ODLA_EXT_SCATTER_MAX 3  /* e = max(e, u) (a NaN operand gives NaN) */
#define ODLA_EXT_SCATTER_MIN 4  /* e = min(e, u) (a NaN operand gives NaN) */

/* ONNX ScatterElements (and the older Scatter): the result is a copy of data in which, for
 * every position p of indices (int32 or int64, the rank of data, each extent at most data's
 * outside axis), the element at p with its axis coordinate replaced by indices[p] combines
 * with updates[p] (updates has the shape of indices, data's element type) as `reduction`
 * says, in the row-major order of p. A negative index counts from the end of axis; execution
 * fails (a non-success status) for an index outside [-extent, extent). axis may be negative.
 * Every element type. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtScatterElements(odla_value data, odla_value indices, odla_value updates, odla_int32 axis,
                        odla_int32 reduction, const odla_value_id value_id);

/* ONNX ScatterND: indices (int32 or int64) has shape [i_1..i_q-1, k] with 1 <= k <= rank of
 * data; each of its index tuples selects a slice data[t_1..t_k, :] that combines with the
 * matching slice of updates (shape [i_1..i_q-1] + data's dims after k) as `reduction` says,
 * in row-major order of the tuples. Negative indices count from the end; execution fails for
 * an index out of range. Element types as odla_ExtScatterElements. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtScatterND(odla_value data,
                                                                  odla_value indices,
                                                                  odla_value updates,
                                                                  odla_int32 reduction,
                                                                  const odla_value_id value_id);

/* ONNX NonZero with a result shape known in advance (ONNX's shape facts): the int64
 * coordinates of the elements of input that are not zero, shape [rank, count], in row-major
 * order of the elements (NaN counts as non-zero, -0.0 as zero). output_dims must be [rank, count];
 * execution fails when input has another number of non-zero elements. Every element type. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtNonZero(odla_value input,
                                                                odla_value_shape output_dims,
                                                                const odla_value_id value_id);

/* How odla_ExtResize maps a result coordinate x to an input coordinate (ONNX's
 * coordinate_transformation_mode). scale is the axis' scale (see odla_ExtResize), in and out
 * its input and result extents, L = in * scale (the fractional result length). */
#define ODLA_EXT_RESIZE_HALF_PIXEL 0           /* (x + 0.5) / scale - 0.5 */
#define ODLA_EXT_RESIZE_PYTORCH_HALF_PIXEL 1   /* L > 1 ? (x + 0.5) / scale - 0.5 : 0 */
#define ODLA_EXT_RESIZE_ALIGN_CORNERS 2        /* L == 1 ? 0 : x * (in - 1) / (L - 1) */
#define ODLA_EXT_RESIZE_ASYMMETRIC 3           /* x / scale */
#define ODLA_EXT_RESIZE_TF_HALF_PIXEL_FOR_NN 4 /* (x + 0.5) / scale; x at scale 1 */
/* L > 1 ? start * (in - 1) + x * (end - start) * (in - 1) / (L - 1)
 *       : (start + end) * (in - 1) / 2, with the axis' start and end from roi; a coordinate
 * outside [0, in - 1] on any axis makes the result element extrapolation_value. */
#define ODLA_EXT_RESIZE_TF_CROP_AND_RESIZE 5
/* c * (1 - out / L) + (x + 0.5) / scale - 0.5 with c = in / 2: half_pixel with the result
 * centered on the input when L is fractional (ONNX's half_pixel_symmetric, opset 19). */
#define ODLA_EXT_RESIZE_HALF_PIXEL_SYMMETRIC 6

/* How sizes set the scales (ONNX's keep_aspect_ratio_policy, opset 18). STRETCH: each axis
 * has scale sizes / in. NOT_LARGER and NOT_SMALLER: every axis in the aspect mask takes one
 * scale, the smallest (largest) sizes / in among them, and its result extent is
 * floor(in * scale + 0.5); the other axes keep their extent. */
#define ODLA_EXT_RESIZE_STRETCH 0
#define ODLA_EXT_RESIZE_NOT_LARGER 1
#define ODLA_EXT_RESIZE_NOT_SMALLER 2

/* How ODLA_NEAREST rounds a fractional input coordinate (ONNX's nearest_mode). Integral
 * coordinates are taken as they are; the index is then clamped to [0, in - 1]. */
#define ODLA_EXT_NEAREST_ROUND_PREFER_FLOOR 0 /* halves round down */
#define ODLA_EXT_NEAREST_ROUND_PREFER_CEIL 1  /* halves round up */
#define ODLA_EXT_NEAREST_FLOOR 2
#define ODLA_EXT_NEAREST_CEIL 3

/* ONNX Resize (opsets 10 to 19) with all its parameters, the axes attribute expanded to every
 * axis by the caller. output_dims must be defined, of input's rank. Each axis has a scale:
 * the scales operand's entry when scales is given (a float32, float64 or float16 vector of
 * rank entries, read at run time, each > 0, and floor(in * scale) must equal the result
 * extent, TF_CROP_AND_RESIZE's too, as ONNX's shape inference has it), otherwise out / in,
 * or with sizes the scale aspect_policy gives (axes in aspect_axes_mask, bit d for axis d).
 * sizes, when given (int32 or int64, rank entries, read at run time), must give output_dims
 * (equal them with ODLA_EXT_RESIZE_STRETCH); at most one of scales and sizes is given.
 * roi (floats, 2 * rank entries: all starts, then all ends) is read only by
 * TF_CROP_AND_RESIZE; NULL means starts 0 and ends 1.
 *
 * interpolation: ODLA_NEAREST picks one input element per axis (nearest_mode); ODLA_LINEAR
 * weighs the 2 nearest input elements (1 - t, t) and ODLA_CUBIC the 4 nearest with Keys'
 * cubic convolution of coefficient cubic_coeff_a (-0.75 in PyTorch, -0.5 in TensorFlow),
 * for t the fractional part of the input coordinate; samples before the first element or
 * past the last repeat the edge element, unless exclude_outside is set (linear and cubic
 * only): then their weights become 0 and the others are scaled to sum to 1. Linear and cubic
 * resizing of N axes is the product of the 1-D weights (N-linear, N-cubic), computed in
 * float64. With antialias, linear and cubic downsampling (scale < 1) stretch the filter by
 * 1 / scale (ONNX's antialias, opset 18): the taps are the input elements within 1 / scale
 * (linear) or 2 / scale (cubic) of the coordinate, weighed by the filter at scale * distance
 * and normalized to sum to 1.
 *
 * Element types: nearest resizes every type; linear and cubic every numeric type (integer
 * results truncate toward zero and saturate). */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtResize(
    odla_value input, odla_value roi, odla_value scales, odla_value sizes,
    odla_interpolation_mode interpolation, odla_int32 coordinate_mode, odla_int32 nearest_mode,
    odla_float32 cubic_coeff_a, odla_bool exclude_outside, odla_float32 extrapolation_value,
    odla_bool antialias, odla_int32 aspect_policy, odla_uint32 aspect_axes_mask,
    odla_value_shape output_dims, const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_INDEXING_H_ */
