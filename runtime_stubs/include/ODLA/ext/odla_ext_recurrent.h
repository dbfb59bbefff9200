/* odla_ext_recurrent.h: odlac's extension ops of the recurrent family (beyond ODLA 0.5).
 * Included by odla_ext.h; see there for when generated code may use them.
 *
 * ODLA 0.5's odla_RNN, odla_LSTM and odla_GRU compute ONNX's default activations (sigmoid
 * gates, tanh candidates and outputs), never clip and never couple the LSTM's input and
 * forget gates. ONNX models choose other activations (PyTorch's RNN with
 * nonlinearity='relu', Keras' hard_sigmoid recurrent activation), clip, or input_forget; with
 * a static but arbitrary sequence length, per-batch lengths and reverse directions, unrolling
 * the recurrence into core ops is impractical. These extensions are the core ops with those
 * options; every other argument means what it means for the core op (see odla_LSTM in
 * odla_ops_nn.h and the reference backend's ops_rnn.c). */
#ifndef _ODLA_EXT_RECURRENT_H_
#define _ODLA_EXT_RECURRENT_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>
#include <ODLA/ops/odla_ops_nn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Activation functions, ONNX's names; alpha and beta are per activation. */
typedef enum {
  ODLA_EXT_ACT_RELU,             /* max(x, 0) */
  ODLA_EXT_ACT_TANH,             /* tanh(x) */
  ODLA_EXT_ACT_SIGMOID,          /* 1 / (1 + exp(-x)) */
  ODLA_EXT_ACT_AFFINE,           /* alpha * x + beta */
  ODLA_EXT_ACT_LEAKY_RELU,       /* x >= 0 ? x : alpha * x */
  ODLA_EXT_ACT_THRESHOLDED_RELU, /* x > alpha ? x : 0 */
  ODLA_EXT_ACT_SCALED_TANH,      /* alpha * tanh(beta * x) */
  ODLA_EXT_ACT_HARD_SIGMOID,     /* max(0, min(1, alpha * x + beta)) */
  ODLA_EXT_ACT_ELU,              /* x >= 0 ? x : alpha * (exp(x) - 1) */
  ODLA_EXT_ACT_SOFTSIGN,         /* x / (1 + |x|) */
  ODLA_EXT_ACT_SOFTPLUS          /* log(1 + exp(x)) */
} odla_ext_rnn_activation;

/* The extra arguments, in this order before value_ids:
 *   activations: odla_ext_rnn_activation codes, per direction (direction 0 first): RNN f;
 *     LSTM f (input, forget, output gates), g (cell candidate), h (output); GRU f (update,
 *     reset gates), g (hidden candidate). NULL: ONNX's defaults (tanh; sigmoid, tanh, tanh;
 *     sigmoid, tanh).
 *   activation_params: NULL, or an ODLA_FLOAT32 [number of activations, 2] value holding
 *     alpha and beta of each activation in the list. NULL gives each activation ONNX's
 *     defaults: LeakyRelu 0.01; ThresholdedRelu 1; HardSigmoid 0.2, 0.5; Elu 1; Affine 1, 0;
 *     ScaledTanh 1, 1.
 *   clip: when positive and finite, every gate's input (peephole terms and biases included)
 *     is clipped to [-clip, clip] before its activation; the LSTM cell state is not.
 *   input_forget (LSTM): the forget gate is 1 - the input gate.
 */
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_ExtRNN(odla_value input, odla_rnn_weight_format weight_format, odla_value_shape weight_dims,
            odla_value W, odla_value R, odla_value B, odla_value sequence_lens,
            odla_value initial_h, odla_int32 hidden_size, odla_rnn_direction direction,
            odla_rnn_outputs outputs, const odla_int32 *activations, odla_value activation_params,
            odla_float32 clip, const odla_value_ids value_ids);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_ExtGRU(odla_value input, odla_rnn_weight_format weight_format, odla_rnn_gate_order gate_order,
            odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
            odla_value sequence_lens, odla_value initial_h, odla_int32 hidden_size,
            odla_rnn_direction direction, odla_bool linear_before_reset, odla_rnn_outputs outputs,
            const odla_int32 *activations, odla_value activation_params, odla_float32 clip,
            const odla_value_ids value_ids);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_ExtLSTM(odla_value input, odla_rnn_weight_format weight_format, odla_rnn_gate_order gate_order,
             odla_value_shape weight_dims, odla_value W, odla_value R, odla_value B,
             odla_value sequence_lens, odla_value initial_h, odla_value initial_c, odla_value P,
             odla_int32 hidden_size, odla_rnn_direction direction, odla_rnn_outputs outputs,
             const odla_int32 *activations, odla_value activation_params, odla_float32 clip,
             odla_bool input_forget, const odla_value_ids value_ids);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_RECURRENT_H_ */
