// builders.cpp: the op builders of the ops oneDNN may run. Each calls the reference builder
// (which validates the operands, infers the result and records the node) and then records
// the op's attributes for compile.cpp; whether oneDNN runs the node is decided there.
#include "dnnl_backend.h"

using odla_dnnl::OpKind;
using odla_dnnl::OpRecord;

namespace {

std::vector<int64_t> axes(const odla_uint32 *v, int n, int64_t absent) {
  std::vector<int64_t> out(static_cast<size_t>(n > 0 ? n : 0), absent);
  for (int i = 0; v && i < n; ++i)
    out[static_cast<size_t>(i)] = v[i];
  return out;
}

int spatialRank(odla_value input) { return input ? input->type.shape.size - 2 : 0; }

OpRecord convRecord(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                    odla_value kernel, odla_memory_layout kernel_layout, const odla_uint32 *strides,
                    const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                    const odla_uint32 *paddings_back, odla_value bias) {
  OpRecord r;
  int s = spatialRank(input);
  r.kind = OpKind::Conv;
  r.input = input;
  r.weights = kernel;
  r.bias = bias;
  r.input_layout = input_layout;
  r.kernel_layout = kernel_layout;
  r.group = group;
  r.strides = axes(strides, s, 1);
  r.dilations = axes(dilations, s, 1);
  r.pad_front = axes(paddings_front, s, 0);
  r.pad_back = axes(paddings_back, s, 0);
  return r;
}

OpRecord gemmRecord(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                    odla_float32 alpha, odla_float32 beta, odla_value C) {
  OpRecord r;
  r.kind = OpKind::Gemm;
  r.input = A;
  r.weights = B;
  r.bias = C;
  r.trans_a = A_transpose != 0;
  r.trans_b = B_transpose != 0;
  r.alpha = alpha;
  r.beta = beta;
  return r;
}

OpRecord poolRecord(OpKind kind, odla_value input, odla_memory_layout input_layout,
                    const odla_uint32 *window_dims, const odla_uint32 *strides,
                    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back) {
  OpRecord r;
  int s = spatialRank(input);
  r.kind = kind;
  r.input = input;
  r.input_layout = input_layout;
  r.window = axes(window_dims, s, 1);
  r.strides = axes(strides, s, 1);
  r.dilations = axes(nullptr, s, 1);
  r.pad_front = axes(paddings_front, s, 0);
  r.pad_back = axes(paddings_back, s, 0);
  return r;
}

void quantRecord(OpRecord &r, odla_value input_zero_point, odla_value kernel_zero_point,
                 odla_value multiplier, odla_value shift, odla_value output_zero_point,
                 odla_int32 output_min, odla_int32 output_max) {
  r.input_zero_point = input_zero_point;
  r.weights_zero_point = kernel_zero_point;
  r.multiplier = multiplier;
  r.shift = shift;
  r.output_zero_point = output_zero_point;
  r.output_min = output_min;
  r.output_max = output_max;
}

odla_value eltwise(odla_value v, odla_value input, odla_ext_fused_activation act, float alpha,
                   float beta, dnnl::algorithm alg = dnnl::algorithm::undef) {
  OpRecord r;
  r.kind = OpKind::Eltwise;
  r.input = input;
  r.act = act;
  r.eltwise_alg = alg;
  r.act_alpha = alpha;
  r.act_beta = beta;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value binary(odla_value v, odla_value lhs, odla_value rhs, dnnl::algorithm alg) {
  OpRecord r;
  r.kind = OpKind::Binary;
  r.input = lhs;
  r.weights = rhs;
  r.binary_alg = alg;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

} // namespace

extern "C" {

odla_value odla_Conv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                     odla_value kernel, odla_memory_layout kernel_layout,
                     const odla_uint32 *strides, const odla_uint32 *dilations,
                     const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                     odla_value bias, odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value v =
      odla_ref_Conv(input, input_layout, group, kernel, kernel_layout, strides, dilations,
                    paddings_front, paddings_back, bias, output_dims, value_id);
  odla_dnnl::recordOp(v,
                      convRecord(input, input_layout, group, kernel, kernel_layout, strides,
                                 dilations, paddings_front, paddings_back, bias),
                      false);
  return v;
}

odla_value odla_ExtConv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                        odla_value kernel, odla_memory_layout kernel_layout,
                        const odla_uint32 *strides, const odla_uint32 *dilations,
                        const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                        odla_value bias, odla_value residual, odla_ext_fused_activation activation,
                        odla_float32 alpha, odla_float32 beta, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  odla_value v = odla_ref_ExtConv(input, input_layout, group, kernel, kernel_layout, strides,
                                  dilations, paddings_front, paddings_back, bias, residual,
                                  activation, alpha, beta, output_dims, value_id);
  OpRecord r = convRecord(input, input_layout, group, kernel, kernel_layout, strides, dilations,
                          paddings_front, paddings_back, bias);
  r.residual = residual;
  r.act = activation;
  r.act_alpha = alpha;
  r.act_beta = beta;
  odla_dnnl::recordOp(v, r, true);
  return v;
}

odla_value odla_ExtQLinearConv(
    odla_value input, odla_value input_zero_point, odla_memory_layout input_layout,
    odla_uint32 group, odla_value kernel, odla_value kernel_zero_point,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value multiplier, odla_value shift, odla_value output_zero_point, odla_int32 output_min,
    odla_int32 output_max, odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value v = odla_ref_ExtQLinearConv(
      input, input_zero_point, input_layout, group, kernel, kernel_zero_point, kernel_layout,
      strides, dilations, paddings_front, paddings_back, bias, multiplier, shift, output_zero_point,
      output_min, output_max, output_dims, value_id);
  if (v) // the lowering may run a oneDNN convolution, which reads its input while it writes
    v->node->inplace_input = -1;
  OpRecord r = convRecord(input, input_layout, group, kernel, kernel_layout, strides, dilations,
                          paddings_front, paddings_back, bias);
  r.kind = OpKind::QConv;
  quantRecord(r, input_zero_point, kernel_zero_point, multiplier, shift, output_zero_point,
              output_min, output_max);
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_ExtQLinearMatMul(odla_value input, odla_value input_zero_point, odla_value kernel,
                                 odla_value kernel_zero_point, odla_value bias,
                                 odla_value multiplier, odla_value shift,
                                 odla_value output_zero_point, odla_int32 output_min,
                                 odla_int32 output_max, odla_value_shape output_dims,
                                 const odla_value_id value_id) {
  odla_value v = odla_ref_ExtQLinearMatMul(input, input_zero_point, kernel, kernel_zero_point, bias,
                                           multiplier, shift, output_zero_point, output_min,
                                           output_max, output_dims, value_id);
  OpRecord r;
  r.kind = OpKind::QMatMul;
  r.input = input;
  r.weights = kernel;
  r.bias = bias;
  quantRecord(r, input_zero_point, kernel_zero_point, multiplier, shift, output_zero_point,
              output_min, output_max);
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_Gemm(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                     odla_float32 alpha, odla_float32 beta, odla_value C,
                     odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value v =
      odla_ref_Gemm(A, A_transpose, B, B_transpose, alpha, beta, C, output_dims, value_id);
  odla_dnnl::recordOp(v, gemmRecord(A, A_transpose, B, B_transpose, alpha, beta, C), false);
  return v;
}

odla_value odla_ExtGemm(odla_value A, odla_bool A_transpose, odla_value B, odla_bool B_transpose,
                        odla_float32 alpha, odla_float32 beta, odla_value C, odla_value residual,
                        odla_ext_fused_activation activation, odla_float32 act_alpha,
                        odla_float32 act_beta, odla_value_shape output_dims,
                        const odla_value_id value_id) {
  odla_value v = odla_ref_ExtGemm(A, A_transpose, B, B_transpose, alpha, beta, C, residual,
                                  activation, act_alpha, act_beta, output_dims, value_id);
  OpRecord r = gemmRecord(A, A_transpose, B, B_transpose, alpha, beta, C);
  r.residual = residual;
  r.act = activation;
  r.act_alpha = act_alpha;
  r.act_beta = act_beta;
  odla_dnnl::recordOp(v, r, true);
  return v;
}

odla_value odla_MaxPool(odla_value input, odla_memory_layout input_layout,
                        const odla_uint32 *window_dims, const odla_uint32 *strides,
                        const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                        odla_value_shape output_dims, const odla_value_id value_id) {
  odla_value v = odla_ref_MaxPool(input, input_layout, window_dims, strides, paddings_front,
                                  paddings_back, output_dims, value_id);
  odla_dnnl::recordOp(v,
                      poolRecord(OpKind::MaxPool, input, input_layout, window_dims, strides,
                                 paddings_front, paddings_back),
                      false);
  return v;
}

odla_value odla_AveragePool(odla_value input, odla_memory_layout input_layout,
                            const odla_uint32 *window_dims, const odla_uint32 *strides,
                            const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                            odla_bool padding_included, odla_value_shape output_dims,
                            const odla_value_id value_id) {
  odla_value v = odla_ref_AveragePool(input, input_layout, window_dims, strides, paddings_front,
                                      paddings_back, padding_included, output_dims, value_id);
  OpRecord r = poolRecord(OpKind::AvgPool, input, input_layout, window_dims, strides,
                          paddings_front, paddings_back);
  r.include_pad = padding_included != 0;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_Concat(odla_values inputs, odla_int32 axis, odla_value_shape output_shape,
                       const odla_value_id value_id) {
  odla_value v = odla_ref_Concat(inputs, axis, output_shape, value_id);
  OpRecord r;
  r.kind = OpKind::Concat;
  r.axis = v && axis < 0 ? axis + v->type.shape.size : axis;
  odla_dnnl::recordOp(v, r, false);
  return v;
}

odla_value odla_Relu(odla_value input, const odla_value_id value_id) {
  return eltwise(odla_ref_Relu(input, value_id), input, ODLA_EXT_FUSED_RELU, 0.0f, 0.0f);
}

odla_value odla_LeakyRelu(odla_value input, odla_float32 alpha, const odla_value_id value_id) {
  return eltwise(odla_ref_LeakyRelu(input, alpha, value_id), input, ODLA_EXT_FUSED_LEAKY_RELU,
                 alpha, 0.0f);
}

odla_value odla_Clamp(odla_value input, odla_float32 lo, odla_float32 hi,
                      const odla_value_id value_id) {
  return eltwise(odla_ref_Clamp(input, lo, hi, value_id), input, ODLA_EXT_FUSED_CLAMP, lo, hi);
}

odla_value odla_Sigmoid(odla_value input, const odla_value_id value_id) {
  return eltwise(odla_ref_Sigmoid(input, value_id), input, ODLA_EXT_FUSED_SIGMOID, 0.0f, 0.0f);
}

odla_value odla_Tanh(odla_value x, const odla_value_id value_id) {
  return eltwise(odla_ref_Tanh(x, value_id), x, ODLA_EXT_FUSED_TANH, 0.0f, 0.0f);
}

/* GPT-2's Gelu is the tanh form, which is no fused activation: oneDNN's vectorized kernel in
 * place of the reference's libm tanh a float (0.6 ms of a GPT-2-small token on one thread). */
odla_value odla_Gelu(odla_value input, odla_bool use_approx, const odla_value_id value_id) {
  return eltwise(odla_ref_Gelu(input, use_approx, value_id), input, ODLA_EXT_FUSED_GELU, 0.0f, 0.0f,
                 use_approx ? dnnl::algorithm::eltwise_gelu_tanh
                            : dnnl::algorithm::eltwise_gelu_erf);
}

odla_value odla_Add(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return binary(odla_ref_Add(lhs, rhs, value_id), lhs, rhs, dnnl::algorithm::binary_add);
}

odla_value odla_Mul(odla_value lhs, odla_value rhs, const odla_value_id value_id) {
  return binary(odla_ref_Mul(lhs, rhs, value_id), lhs, rhs, dnnl::algorithm::binary_mul);
}

} // extern "C"
