/* odla_ext_misc.h: odlac's extension ops of the misc family (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them.
 *
 * ODLA 0.5's detection ops take their thresholds as numbers fixed when the graph is built and
 * know only one box encoding (odla_NMS), or take the batch index inside each box and have no
 * max mode or half-pixel flag (odla_ROIAlign); it has no grid sampling, no spectral ops and no
 * window generators. odlac calls the core ops whenever they express a case exactly and these
 * otherwise.
 *
 * Ops whose result shape depends on the values of scalar operands (a window's size, a DFT's
 * length and axis, STFT's frame step) take those operands as values and the result shape as known
 * in advance (from ONNX's shape facts): execution fails (a non-success status) when the values at
 * run time imply another shape. */
#ifndef _ODLA_EXT_MISC_H_
#define _ODLA_EXT_MISC_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Detection --------------------------------------------------------------------------- */

/* How odla_ExtNonMaxSuppression reads a box (ONNX's center_point_box). */
#define ODLA_EXT_BOX_CORNERS 0 /* [y1, x1, y2, x2]: any two opposite corners (odla_NMS's) */
#define ODLA_EXT_BOX_CENTER 1  /* [x_center, y_center, width, height] */

/* ONNX NonMaxSuppression. boxes [num_batches, num_boxes, 4] and scores [num_batches,
 * num_classes, num_boxes] of one float type. For every batch and class, boxes whose score is
 * above score_threshold are taken in order of decreasing score (ties: lower box index first);
 * a box is kept unless its intersection over union with a box already kept for that batch and
 * class is above iou_threshold, until max_output_boxes_per_class are kept. The optional
 * scalar operands are read at run time: max_output_boxes_per_class (int32 or int64; absent or
 * <= 0: nothing is kept), iou_threshold and score_threshold (float types; absent: 0 and no
 * threshold). The result (output_value_type: int32 or int64, shape [rows, 3]) holds one row
 * (batch, class, box) per kept box, by batch, then class, then order of keeping, as odla_NMS
 * does; rows beyond the kept boxes hold -1, and execution fails when more than `rows` boxes
 * are kept. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtNonMaxSuppression(
    odla_value boxes, odla_value scores, odla_value max_output_boxes_per_class,
    odla_value iou_threshold, odla_value score_threshold, odla_int32 box_encoding,
    odla_value_type output_value_type, const odla_value_id value_id);

/* How odla_ExtRoiAlign pools the samples of one bin. */
#define ODLA_EXT_ROI_AVG 0 /* the mean of the bilinearly interpolated samples */
/* The largest weighted corner term w * x over the samples' bilinear terms (ONNX Runtime's and
 * ONNX's reference max mode; not the largest interpolated sample). */
#define ODLA_EXT_ROI_MAX 1

/* ONNX RoiAlign (opsets 10 and 16). input [N, C, H, W] (channels first), rois [num_rois, 4]
 * as (x1, y1, x2, y2) in input coordinates before spatial_scale, both of one float type;
 * batch_indices [num_rois] (int32 or int64; execution fails for one outside [0, N)). The
 * result is [num_rois, C, output_height, output_width]. Each region starts at x1 * scale - o
 * and ends at x2 * scale - o, where o = 0.5 with half_pixel and 0 otherwise; without
 * half_pixel a region is at least 1 x 1. A bin is sampled on a grid of sampling_ratio (when
 * > 0, otherwise ceil(region / output extent)) points per axis at the centers of the grid's
 * cells; a sample more than one pixel outside the input counts as 0, others are clamped to
 * the input and interpolated bilinearly. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtRoiAlign(odla_value input, odla_value rois, odla_value batch_indices, odla_int32 mode,
                 odla_int32 output_height, odla_int32 output_width, odla_int32 sampling_ratio,
                 odla_float32 spatial_scale, odla_bool half_pixel, const odla_value_id value_id);

/* ---- Sampling ---------------------------------------------------------------------------- */

/* odla_ExtGridSample's interpolation. */
#define ODLA_EXT_GRID_BILINEAR 0
#define ODLA_EXT_GRID_NEAREST 1 /* the coordinate rounded half to even */
#define ODLA_EXT_GRID_BICUBIC 2 /* cubic convolution with a = -0.75 over 4 x 4 pixels */
/* What odla_ExtGridSample reads outside the input. */
#define ODLA_EXT_GRID_PAD_ZEROS 0      /* 0 */
#define ODLA_EXT_GRID_PAD_BORDER 1     /* the coordinate clamped to the input */
#define ODLA_EXT_GRID_PAD_REFLECTION 2 /* the coordinate reflected at the borders */

/* ONNX GridSample (opsets 16 and 20). input [N, C, D1, ..., Dr] (r from 1 to 3) of any numeric
 * or bool type (others than floats are computed in double and truncated toward zero, saturating;
 * bool: non-zero), grid [N, O1, ..., Or, r] of a float type holding the coordinates innermost axis
 * first ((x, y) for an image, (x, y, z) for a volume) in [-1, 1] (-1 is the left / top border: the
 * center of the first pixel with align_corners, its outer edge without). The result is [N, C, O1,
 * ..., Or]. The interpolations are separable: linear reads 2 and cubic 4 pixels per axis (BILINEAR
 * and BICUBIC name the 2-D case). The borders used by BORDER and REFLECTION are the centers of the
 * edge pixels with align_corners and their outer edges without; coordinates are clamped or
 * reflected before interpolating, and the pixels an interpolation reads outside the input follow
 * padding_mode again. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtGridSample(odla_value input,
                                                                   odla_value grid, odla_int32 mode,
                                                                   odla_int32 padding_mode,
                                                                   odla_bool align_corners,
                                                                   const odla_value_id value_id);

/* ONNX AffineGrid (opset 20). theta [N, r, r + 1] (r = 2 or 3) of a float type; output_dims
 * [N, D1, ..., Dr, r] (the result has theta's type); size is an int64 vector [N, C, D1, ..., Dr]
 * read at run time that must match output_dims (C is free). Result point (i1, ..., ir) holds
 * theta[n] times (x, y[, z], 1), where x is the normalized coordinate of the innermost index: -1 +
 * 2 i / (D - 1) with align_corners (-1 when D is 1, as ONNX's reference has it; PyTorch gives 0),
 * -1 + (2 i + 1) / D without.
 * Computed in double. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtAffineGrid(odla_value theta,
                                                                   odla_value size,
                                                                   odla_bool align_corners,
                                                                   odla_value_shape output_dims,
                                                                   const odla_value_id value_id);

/* ---- Signal processing ------------------------------------------------------------------- */

/* odla_ExtWindow's windows: y[n] = a0 - a1 cos(2 pi n / L) + a2 cos(4 pi n / L). */
#define ODLA_EXT_WINDOW_HANN 0     /* a0 = a1 = 0.5, a2 = 0 */
#define ODLA_EXT_WINDOW_HAMMING 1  /* a0 = 25/46, a1 = 21/46, a2 = 0 */
#define ODLA_EXT_WINDOW_BLACKMAN 2 /* a0 = 0.42, a1 = 0.5, a2 = 0.08 */

/* ONNX HannWindow, HammingWindow and BlackmanWindow (opset 17). output_value_type must be a
 * vector [n] of any numeric type (integers truncate toward zero); size is an int32 or int64
 * scalar read at run time that must equal n. L is n when periodic, n - 1 otherwise (a
 * symmetric window of 1 element is [1]). Computed in double. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtWindow(odla_value size, odla_int32 window,
                                                               odla_bool periodic,
                                                               odla_value_type output_value_type,
                                                               const odla_value_id value_id);

/* ONNX DFT (opsets 17 and 20). input has a last dim of 1 (real) or 2 (real, imaginary) and a
 * float type; the transform runs along one axis of it, not the last. That axis is `axis`
 * (from -rank to rank - 2; negative counts from the end), or, when axis_value is given (an
 * int32 or int64 scalar: DFT-20's axis known only when the model runs), the value axis_value
 * holds at run time, and `axis` is ignored. Its length L is the run-time value of dft_length
 * (an int32 or int64 scalar) when given, else the extent n of the axis (2 (n - 1) with
 * inverse and onesided).
 * - Forward: the signal is cut or padded with zeros to L; X[k] = sum_n x[n] e^(-2 pi i k n / L).
 *   The result: input's dims with the last one 2 and the axis' extent L, or L / 2 + 1 with
 *   onesided (the first half of the bins).
 * - inverse: e^(+...) and a division by L, the result as the forward one's (not onesided).
 * - inverse with onesided (numpy's irfft): input holds a one-sided spectrum of n bins along
 *   the axis; bins k < min(n, L / 2 + 1) are read (zeros beyond) and the rest of the L bins is
 *   their Hermitian mirror, so the imaginary parts of bin 0 and, for an even L, of bin L / 2
 *   are ignored. The result is real: input's dims with the last one 1 and the axis' extent L.
 * output_dims must be defined, and with axis_value some axis from 0 to rank - 2 must give
 * them; execution fails (ODLA_INVALID_PARAM) when the run-time axis is out of range or the
 * run-time axis or dft_length imply other dims. Computed in double. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtDFT(odla_value input, odla_value dft_length,
                                                            odla_value axis_value, odla_int32 axis,
                                                            odla_bool inverse, odla_bool onesided,
                                                            odla_value_shape output_dims,
                                                            const odla_value_id value_id);

/* ONNX STFT (opset 17). signal [batch, length, 1 or 2] of a float type; frame_step (int32 or
 * int64 scalar) is required; window [L] (signal's type) and frame_length (int32 or int64
 * scalar) are optional but one must be given, and they must agree. Frame f is the DFT of
 * signal[f * step + n] * window[n], n < L (window 1 when absent). output_dims must be defined:
 * [batch, frames, bins, 2] with frames = (length - L) / step + 1 and bins = L / 2 + 1 when
 * onesided, else L; execution fails when the run-time step and length imply other dims. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtSTFT(odla_value signal, odla_value frame_step, odla_value window, odla_value frame_length,
             odla_bool onesided, odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX MelWeightMatrix (opset 17): triangular filters mapping the dft_length / 2 + 1 bins of a
 * one-sided spectrum to num_mel_bins mel bands, as ONNX's reference computes them (band edges
 * on the mel scale 2595 log10(1 + f / 700), spaced over num_mel_bins + 2 points, mapped to bin
 * floor((dft_length + 1) * f / sample_rate)). The operands are scalars read at run time:
 * num_mel_bins, dft_length and sample_rate of an integer type, lower_edge_hertz and
 * upper_edge_hertz of a float type. output_value_type: [dft_length / 2 + 1, num_mel_bins] of
 * any numeric type; execution fails when the operands imply another shape or a band edge
 * outside the bins. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtMelWeightMatrix(odla_value num_mel_bins, odla_value dft_length, odla_value sample_rate,
                        odla_value lower_edge_hertz, odla_value upper_edge_hertz,
                        odla_value_type output_value_type, const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_MISC_H_ */
