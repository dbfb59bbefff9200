// ODLA 0.5 data movement ops: shape manipulation, slicing, gathering, padding, resizing, casts.
//
// Op builders take no computation handle: each call adds one op to the calling
// thread's current computation (see odla_compute.h) and returns its result. The
// last parameter is the result's id, a C string cast to odla_value_id (or
// odla_value_ids for ops with several results). output_dims / output_shape is
// the result shape the caller inferred; it may be left undefined (size -1).
// Optional operands are passed as NULL.
//
// Per-dimension arrays (odla_Pad, odla_Slice, odla_Tile) have one entry per
// dimension of input.

#ifndef _ODLA_OPERATOR_OPS_PROCESS_H_
#define _ODLA_OPERATOR_OPS_PROCESS_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ODLA_NEAREST,
  ODLA_LINEAR,
  ODLA_CUBIC,
} odla_interpolation_mode;

// How output coordinates map back to input coordinates. ASSYMMETRIC is the
// standard's spelling and part of the ABI.
typedef enum {
  ODLA_ASSYMMETRIC,
  ODLA_HALF_PIXEL,
  ODLA_HALF_PIXEL_TF,
  ODLA_ALIGN_CORNERS,
} odla_resize_coordinate_mode;

// Generator used by odla_Fill. The mixed-case names are the standard's own.
typedef enum {
  ODLA_EyeLike,
  ODLA_RandomNormal,
  ODLA_RandomUniform,
} odla_fill_method;

// Element type conversion.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Cast(odla_value input,
                                                          odla_element_type target_type,
                                                          const odla_value_id value_id);

// Shape manipulation. odla_Transpose passes the permutation as an
// odla_value_shape; odla_Shape returns the shape of input as a value. The
// *Dynamic forms take the target shape as a value computed at run time.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Reshape(odla_value input,
                                                             odla_value_shape output_dims,
                                                             const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ReshapeDynamic(odla_value input,
                                                                    odla_value output_shape,
                                                                    const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExpandDims(odla_value input,
                                                                odla_value_shape output_dims,
                                                                const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_DimsExpand(odla_value input,
                                                                odla_value original,
                                                                odla_value axes,
                                                                odla_value_shape output_dims,
                                                                const odla_value_id id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Squeeze(odla_value input,
                                                             odla_size_t num_of_axes,
                                                             const odla_uint32 *axes,
                                                             odla_value_shape output_dims,
                                                             const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Transpose(odla_value input,
                                                               odla_value_shape permutations,
                                                               odla_value_shape output_dims,
                                                               const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Broadcast(const odla_value input,
                                                               odla_value_shape output_shape,
                                                               const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Shape(odla_value input,
                                                           odla_value_shape output_dims,
                                                           const odla_value_id value_id);

// Joining and splitting. odla_Split takes split_dim as a value, not an
// integer, and returns num_split results.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Concat(odla_values inputs, odla_int32 axis,
                                                            odla_value_shape output_shape,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Stack(odla_values inputs, odla_int32 axis,
                                                           odla_value_shape output_shape,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_Split(odla_value input, odla_value split_dim,
                                                            odla_int32 num_split,
                                                            const odla_value_ids value_ids);

// Slicing. start, end (exclusive) and stride have one entry per dimension.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_Slice(odla_value input, const odla_int32 *start, const odla_int32 *end,
           const odla_int32 *stride, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_SliceDynamic(odla_value input,
                                                                  odla_value start, odla_value size,
                                                                  odla_value stride,
                                                                  odla_value_shape output_dims,
                                                                  const odla_value_id value_id);

// Gathering and selection by indices or a condition.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Gather(odla_value input, odla_value indices,
                                                            odla_int32 axis,
                                                            odla_value_shape output_dims,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_GatherND(odla_value input, odla_value indices,
                                                              odla_int32 num_batch_dims,
                                                              odla_value_shape output_dims,
                                                              const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_GatherElements(odla_value input,
                                                                    odla_value indices,
                                                                    odla_int32 axis,
                                                                    odla_value_shape output_dims,
                                                                    const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Compress(odla_value input,
                                                              odla_value condition, odla_int32 axis,
                                                              odla_value_shape max_output_shape,
                                                              const odla_value_id value_id);

// Padding and tiling.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Pad(odla_value input,
                                                         const odla_uint32 *padding_front,
                                                         const odla_uint32 *padding_back,
                                                         odla_value_shape output_dims,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Tile(odla_value input,
                                                          const odla_uint32 *repeat,
                                                          odla_value_shape output_dims,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_TileDynamic(odla_value input,
                                                                 odla_value repeat,
                                                                 odla_value_shape output_dims,
                                                                 const odla_value_id value_id);

// Resizing. axes_mask selects the axes to resize, least significant bit for
// the innermost axis: 0b0110 resizes H and W of an NHWC tensor.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Resize(
    odla_value input, odla_interpolation_mode interpolation, odla_resize_coordinate_mode mode,
    odla_uint32 axes_mask, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ResizeDynamic(
    odla_value input, odla_value scales, odla_value sizes, odla_interpolation_mode interpolation,
    odla_resize_coordinate_mode mode, odla_value_shape output_dims, const odla_value_id value_id);

// Tensor generators. odla_OneHot: values holds the pair (off, on). odla_Fill
// creates a value of type filled by method with parameters p0, p1 and seed.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_OneHot(odla_value indices, odla_int32 depth,
                                                            odla_value values, odla_int32 axis,
                                                            odla_value_shape output_dims,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Fill(odla_value_type type,
                                                          odla_fill_method method, odla_float32 p0,
                                                          odla_float32 p1, odla_float32 seed,
                                                          const odla_value_id value_id);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_PROCESS_H_
