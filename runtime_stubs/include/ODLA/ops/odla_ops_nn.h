// ODLA 0.5 neural network ops: convolution, pooling, normalization, activations, RNNs, NMS.
//
// Op builders take no computation handle: each call adds one op to the calling
// thread's current computation (see odla_compute.h) and returns its result. The
// last parameter is the result's id, a C string cast to odla_value_id (or
// odla_value_ids for ops with several results). output_dims / output_shape is
// the result shape the caller inferred; it may be left undefined (size -1).
// Optional operands are passed as NULL.
//
// Spatial arrays (window_dims, strides, dilations, paddings_front,
// paddings_back) have one entry per spatial dimension of input.

#ifndef _ODLA_OPERATOR_OPS_NN_H_
#define _ODLA_OPERATOR_OPS_NN_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// Layout of a data or weight tensor. Data is CHANNELS_FIRST (NCHW) or
// CHANNELS_LAST (NHWC). For kernels, S = spatial dims, I = input channels,
// O = output channels: SIO is HWIO, OIS is OIHW.
typedef enum {
  ODLA_CHANNELS_FIRST,
  ODLA_CHANNELS_LAST,
  ODLA_SIO,
  ODLA_SOI,
  ODLA_OIS,
  ODLA_IOS,
} odla_memory_layout;

typedef enum {
  ODLA_RNN_FORWARD,
  ODLA_RNN_REVERSE,
  ODLA_RNN_BIDIRECTIONAL,
} odla_rnn_direction;

// Which results an RNN op returns besides its output sequence.
typedef enum {
  ODLA_RNN_NO_STATE,
  ODLA_RNN_HIDDEN_STATE,
  ODLA_RNN_CELL_STATE,
  ODLA_RNN_HIDDEN_CELL_STATE,
} odla_rnn_outputs;

typedef enum {
  ODLA_REDUCE_NONE,
  ODLA_REDUCE_MEAN,
  ODLA_REDUCE_SUM,
} odla_reduction_mode;

// Dimension order of RNN weights: L = layers, D = directions, G = gates,
// I = input size, O = hidden size.
typedef enum {
  ODLA_RNN_LDGOI,
  ODLA_RNN_LDIGO,
} odla_rnn_weight_format;

// Order in which gate weights are concatenated (I = input, O = output,
// F = forget, C = cell; URO is the GRU order update, reset, hidden).
typedef enum {
  ODLA_RNN_IOFC,
  ODLA_RNN_IFCO,
  ODLA_RNN_IFOC,
  ODLA_RNN_ICOF,
  ODLA_RNN_URO,
} odla_rnn_gate_order;

typedef enum {
  ODLA_TFIDF_TF,
  ODLA_TFIDF_IDF,
  ODLA_TFIDF_TFIDF,
} odla_tf_idf_mode;

// Convolution and transposed convolution. group > 1 splits channels into
// groups; bias is optional (NULL).
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Conv(
    odla_value input, odla_memory_layout input_layout, odla_uint32 group, odla_value kernel,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_DeConv(
    odla_value input, odla_memory_layout input_layout, odla_uint32 group, odla_value kernel,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value_shape output_dims, const odla_value_id value_id);

// Pooling; padding_included says whether padded cells count in the average.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_AveragePool(
    odla_value input, odla_memory_layout input_layout, const odla_uint32 *window_dims,
    const odla_uint32 *strides, const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
    odla_bool padding_included, odla_value_shape output_dims, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_MaxPool(
    odla_value input, odla_memory_layout input_layout, const odla_uint32 *window_dims,
    const odla_uint32 *strides, const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
    odla_value_shape output_dims, const odla_value_id value_id);

// Normalizations. scale and offset are optional values (NULL); when absent,
// the scalar_scale and scalar_offset floats are used instead.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_BatchNormalization(
    odla_value input, odla_memory_layout input_layout, odla_value mean, odla_value var,
    odla_float32 epsilon, odla_value scale, odla_value offset, odla_float32 scalar_scale,
    odla_float32 scalar_offset, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_GroupNormalization(
    odla_value input, odla_memory_layout input_layout, odla_int32 groups, odla_float32 epsilon,
    odla_value scale, odla_value offset, odla_float32 scalar_scale, odla_float32 scalar_offset,
    const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_InstanceNormalization(odla_value input, odla_memory_layout input_layout, odla_float32 epsilon,
                           odla_value scale, odla_value offset, odla_float32 scalar_scale,
                           odla_float32 scalar_offset, const odla_value_id value_id);

// odla_LpNormalize normalizes over the axes_size axes in axes.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_LpNormalize(
    odla_value input, odla_int32 p, odla_memory_layout input_layout, odla_size_t axes_size,
    const odla_int32 *axes, odla_float32 epsilon, odla_value scale, const odla_value_id value_id);

// odla_LRN: local response normalization across window_size channels.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_LRN(odla_value input,
                                                         odla_memory_layout input_layout,
                                                         odla_int32 window_size, odla_float32 alpha,
                                                         odla_float32 beta, odla_float32 bias,
                                                         const odla_value_id value_id);

// Activations without parameters.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Relu(odla_value input,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Sigmoid(odla_value input,
                                                             const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Softplus(odla_value input,
                                                              const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Softsign(odla_value input,
                                                              const odla_value_id value_id);

// Activations with parameters.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Celu(odla_value input, odla_float32 alpha,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Elu(odla_value input, odla_float32 alpha,
                                                         const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Gelu(odla_value input, odla_bool use_approx,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_HardSigmoid(odla_value input,
                                                                 odla_float32 alpha,
                                                                 odla_float32 beta,
                                                                 const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_LeakyRelu(odla_value input, odla_float32 alpha,
                                                               const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_PRelu(odla_value input, odla_value slope,
                                                           const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Selu(odla_value input, odla_float32 alpha,
                                                          odla_float32 gamma,
                                                          const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Shrink(odla_value input, odla_float32 bias,
                                                            odla_float32 lambd,
                                                            const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ThresholdedRelu(odla_value input,
                                                                     odla_float32 alpha,
                                                                     const odla_value_id value_id);

// Normalized exponentials and one-hot maximum along axis.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Softmax(odla_value input, odla_int32 axis,
                                                             const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_LogSoftmax(odla_value input, odla_int32 axis,
                                                                const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_Hardmax(odla_value input, odla_int32 axis,
                                                             const odla_value_id value_id);

// Recurrent layers. Weights W (input), R (recurrence) and B (bias) are laid
// out as weight_format and gate_order say; sequence_lens, initial states and
// peepholes P are optional (NULL). outputs selects the extra state results.
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_RNN(odla_value input, odla_rnn_weight_format weight_format, odla_value_shape weight_dims,
         odla_value W, odla_value R, odla_value B, odla_value sequence_lens, odla_value initial_h,
         odla_int32 hidden_size, odla_rnn_direction direction, odla_rnn_outputs outputs,
         const odla_value_ids value_id);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_GRU(odla_value input, odla_rnn_weight_format weight_format, odla_rnn_gate_order gate_order,
         odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
         odla_value sequence_lens, odla_value initial_h, odla_int32 hidden_size,
         odla_rnn_direction direction, odla_bool linear_before_reset, odla_rnn_outputs outputs,
         const odla_value_ids value_id);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_LSTM(odla_value input, odla_rnn_weight_format weight_format, odla_rnn_gate_order gate_order,
          odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
          odla_value sequence_lens, odla_value initial_h, odla_value initial_c, odla_value P,
          odla_int32 hidden_size, odla_rnn_direction direction, odla_rnn_outputs outputs,
          const odla_value_ids value_ids);

// Regions of interest pooled to output_dim.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ROIAlign(
    odla_value input, odla_memory_layout input_layout, odla_value rois, odla_int32 sampling_ratio,
    odla_float32 scale, odla_value_shape output_dim, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ROIMaxPool(odla_value input, odla_memory_layout input_layout, odla_value rois,
                odla_int32 win_h, odla_int32 win_w, odla_float32 scale, odla_value_shape output_dim,
                const odla_value_id value_id);

// Detection helpers. odla_NMS returns the indices of the boxes kept by
// non-maximum suppression. odla_TopK returns the K largest (or smallest)
// values along axis and their indices. odla_PostProcess is a YOLOv3 decoding
// helper that returns several values under a single id.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_NMS(
    odla_value boxes, odla_value scores, odla_uint32 max_num_outputs, odla_float32 iou_threshold,
    odla_float32 score_threshold, odla_value_type output_value_type, const odla_value_id value_id);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_TopK(odla_value input, odla_uint32 K,
                                                           odla_bool largest, odla_bool sorted,
                                                           odla_uint32 axis,
                                                           odla_value_type output_value_type,
                                                           odla_value_type output_value_index_type,
                                                           const odla_value_ids value_ids);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_PostProcess(odla_value orig_img_w,
                                                                  odla_value orig_img_h,
                                                                  odla_value bb13, odla_value bb26,
                                                                  odla_value bb52,
                                                                  const odla_value_id value_id);

// Loss and text features. These two take a non-const value_id, as in the
// standard.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_NegativeLogLikeliHoodLoss(
    odla_value input, odla_value gt, odla_int32 ignored, odla_reduction_mode reduction,
    odla_value weight, odla_value_shape output_shape, odla_value_id value_id);
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_TFIDFVectorize(odla_value input, odla_int32 min_gram_length, odla_int32 max_gram_length,
                    odla_int32 max_skip_count, odla_tf_idf_mode mode, odla_value pool,
                    odla_value gram_counts, odla_value output_indices, odla_value weights,
                    odla_value_shape output_shape, odla_value_id value_id);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_NN_H_
