/* odla_ext_data.h: odlac's extension ops of the data family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them.
 *
 * ODLA 0.5 plans every shape when the graph is built. These ops serve ONNX models whose
 * slicing or padding parameters are tensors computed at run time while the result's shape is
 * still known (ONNX's shape facts): the caller passes that shape as output_dims, and the op
 * reads its parameters when it runs and fails (a non-success odla_status from execution) when
 * they describe a different shape. ReverseSequence has no ODLA 0.5 counterpart at all. */
#ifndef _ODLA_EXT_DATA_H_
#define _ODLA_EXT_DATA_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX Slice (opset 10 and later) with parameters read at run time. starts and ends are
 * int32 or int64 vectors of k entries; axes (NULL: 0..k-1) and steps (NULL: all 1) are
 * int32 or int64 vectors of k entries. Negative starts, ends and axes count from the end;
 * starts and ends are clamped to the axis as ONNX specifies (for a negative step, an end
 * before the first element means "through element 0"); steps must not be 0. output_dims must
 * be defined; execution fails when the parameters give another shape. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtSliceDynamic(odla_value input, odla_value starts, odla_value ends, odla_value axes,
                     odla_value steps, odla_value_shape output_dims, const odla_value_id value_id);

/* Padding modes of odla_ExtPadDynamic. */
#define ODLA_EXT_PAD_CONSTANT 0 /* pad with constant_value */
#define ODLA_EXT_PAD_REFLECT 1  /* mirror without repeating the edge: 3 2 | 1 2 3 | 2 1 */
#define ODLA_EXT_PAD_EDGE 2     /* repeat the edge element: 1 1 | 1 2 3 | 3 3 */
#define ODLA_EXT_PAD_WRAP 3     /* repeat the axis cyclically: 2 3 | 1 2 3 | 1 2 */

/* ONNX Pad (opset 11 and later) with pads read at run time: pads is an int32 or int64 vector
 * of 2 * rank entries, all begins then all ends; a negative entry removes elements.
 * constant_value is NULL (zero) or a one-element value of input's element type, read at run
 * time; it is used only in ODLA_EXT_PAD_CONSTANT mode. Reflect padding needs pads smaller
 * than the axis, edge and wrap padding a non-empty axis (wrap repeats what is left after the
 * negative pads remove elements, as often as the pads need). output_dims must be defined;
 * execution fails when the pads give another shape. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtPadDynamic(odla_value input, odla_value pads, odla_value constant_value, odla_int32 mode,
                   odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] elements
 * along time_axis and copies the rest. batch_axis and time_axis are 0 and 1 in either order;
 * sequence_lens (int32 or int64, one entry per batch entry) is read at run time, and
 * execution fails for a length outside [0, extent of time_axis]. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtReverseSequence(odla_value input, odla_value sequence_lens, odla_int32 batch_axis,
                        odla_int32 time_axis, const odla_value_id value_id);

/* The input's bytes read as another element type of the same width (ONNX BitCast, little
 * endian): same shape, no value converted. Fails with ODLA_INVALID_PARAM when the widths
 * differ; the 4- and 2-bit types of odla_ext_types.h (one value per byte) only as themselves. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtBitCast(odla_value input,
                                                                odla_element_type target_type,
                                                                const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_DATA_H_ */
