// The one lowering interface (DESIGN §3, "one lowering, two sinks"): one typed method per ODLA
// function. Op lowerings call these methods; a sink either prints the call as C
// (codegen's PrintSink) or makes it on the linked ODLA backend (DirectSink). Both sinks see
// the same calls with the same arguments, so what odlac computes itself (constant folding,
// the frontend's constant operands, the reference memory plan) is what the printed C computes.
//
// The methods cover every op builder of ODLA 0.5; an extension function (odla_ext.h) is added
// with one line in the same form: ODLA_CALL checks the argument types against the real
// prototype at compile time.
#pragma once

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace odlac::lower {

// A value handle inside one sink; index -1 is NULL (an absent optional operand).
struct Val {
  int index = -1;
  bool isNull() const { return index < 0; }
};
struct Id { // an odla_value_id: the tensor's name as a C string
  std::string name;
};
struct Ids {
  std::vector<std::string> names;
};
struct Vals {
  std::vector<Val> vals;
};
struct U32s {
  std::vector<odla_uint32> v;
};
struct I32s {
  std::vector<odla_int32> v;
};
struct Shape { // an odla_value_shape; rank -1 is an undefined shape
  int rank = -1;
  std::vector<int64_t> dims;
};
struct VType {
  odla_element_type elementType;
  Shape shape;
};
struct Flag { // an odla_bool
  bool on;
};
struct Data { // the bytes of a constant: where they are now, and how generated C names them
  const void *ptr;
  std::string cExpr;
};
struct Str { // a const char* argument, such as an einsum equation
  std::string s;
};
struct EnumArg { // an enum argument as its C enumerator name
  std::string name;
};
struct LoopModes { // a const odla_loop_output_mode* array
  std::vector<odla_loop_output_mode> v;
};
// odla_CustomOp's variadic argument, a const odla_ext_custom_params* (odla_ext_custom.h): the
// node's attributes and its result types. `kind` is an ODLA_EXT_ATTR_* value; ints holds an
// INT or INTS, floats a FLOAT or FLOATS, str a STRING.
struct CustomAttr {
  std::string name;
  int kind;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string str;
};
struct CustomParams {
  std::vector<CustomAttr> attrs;
  std::vector<VType> resultTypes;
};

using Arg = std::variant<Val, Id, Ids, Vals, U32s, I32s, Shape, VType, Flag, Data, Str, EnumArg,
                         LoopModes, CustomParams, int64_t, uint64_t, float>;

// Enumerator names for printing enum arguments.
const char *enumName(odla_element_type v);
const char *enumName(odla_memory_layout v);
const char *enumName(odla_rnn_weight_format v);
const char *enumName(odla_rnn_gate_order v);
const char *enumName(odla_rnn_direction v);
const char *enumName(odla_rnn_outputs v);
const char *enumName(odla_reduction_mode v);
const char *enumName(odla_tf_idf_mode v);
const char *enumName(odla_interpolation_mode v);
const char *enumName(odla_resize_coordinate_mode v);
const char *enumName(odla_fill_method v);
const char *enumName(odla_loop_output_mode v);
const char *enumName(odla_ext_fused_activation v);

// Converts the sink-level arguments of one call to the C types of the real function, and
// takes its result. Implemented by DirectSink.
class Binder {
public:
  virtual ~Binder() = default;
  virtual odla_value value(Val v) = 0;
  virtual void takeValue(odla_value v) = 0;
  virtual void takeValues(const odla_values &vs) = 0;
  virtual void takeStatus(odla_status s) = 0;

  odla_value conv(Val v) { return value(v); }
  odla_value_id conv(const Id &id) { return (odla_value_id)id.name.c_str(); }
  odla_value_ids conv(const Ids &ids);
  odla_values conv(const Vals &vs);
  const odla_uint32 *conv(const U32s &a) { return a.v.empty() ? nullptr : a.v.data(); }
  const odla_int32 *conv(const I32s &a) { return a.v.empty() ? nullptr : a.v.data(); }
  odla_value_shape conv(const lower::Shape &s);
  odla_value_type conv(const VType &t) { return odla_value_type{t.elementType, conv(t.shape)}; }
  odla_bool conv(Flag f) { return f.on ? 1 : 0; }
  const odla_void *conv(const Data &d) { return d.ptr; }
  const odla_char *conv(const Str &s) { return s.s.c_str(); }
  const odla_loop_output_mode *conv(const LoopModes &m) {
    return m.v.empty() ? nullptr : m.v.data();
  }
  // Valid until the binder is destroyed (after the call).
  const odla_ext_custom_params *conv(const CustomParams &p);
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>>
  T conv(T v) {
    return v;
  }

  void take(odla_value v) { takeValue(v); }
  void take(const odla_values &vs) { takeValues(vs); }
  void take(odla_status s) { takeStatus(s); }

private:
  std::vector<std::shared_ptr<void>> keep_; // storage behind converted arguments
};

enum class Returns { Value, Values, Status };

// odla_CustomOp, whose attributes are a C variadic argument.
template <class R, class... P> constexpr Returns returnsOf(R (*)(P..., ...)) {
  static_assert(std::is_same_v<R, odla_values>, "unexpected variadic ODLA function");
  return Returns::Values;
}
template <class R, class... P> constexpr Returns returnsOf(R (*)(P...)) {
  if constexpr (std::is_same_v<R, odla_value>)
    return Returns::Value;
  else if constexpr (std::is_same_v<R, odla_values>)
    return Returns::Values;
  else {
    static_assert(std::is_same_v<R, odla_status>, "unexpected ODLA return type");
    return Returns::Status;
  }
}

// One ODLA call as both sinks see it.
struct Call {
  const char *function;
  const char *params; // its parameters' names as in the ODLA header: "input, id"
  Returns returns;
  std::vector<Arg> args;
  std::function<void(Binder &)> invoke; // makes the real call through a Binder

  // The parameters' names, one per argument.
  std::vector<std::string> paramNames() const;
};

// The name of a call's (first) result: its last Id or Ids argument's; "" when it has none.
std::string lastId(const std::vector<Arg> &args);

class OdlaSink {
public:
  virtual ~OdlaSink() = default;

#define ODLA_CALL(fn, ...) (call<&odla_##fn>("odla_" #fn, #__VA_ARGS__, __VA_ARGS__))
  // Every op builder of ODLA 0.5, in the order of the headers, with the headers' parameter
  // names; argument types are checked against the real prototypes by ODLA_CALL.
  void SetValueAsOutput(Val value) { ODLA_CALL(SetValueAsOutput, value); }

  // ops/odla_ops_basic.h
  Val CreateArgument(const VType &value_type, const Id &id) {
    return one(ODLA_CALL(CreateArgument, value_type, id));
  }
  Val CreateValue(const VType &value_type, const Id &id) {
    return one(ODLA_CALL(CreateValue, value_type, id));
  }
  Val CreateConstant(const VType &value_type, const Data &data_ptr, const Id &id) {
    return one(ODLA_CALL(CreateConstant, value_type, data_ptr, id));
  }
  Val CloneValue(Val src_value, const Id &id) { return one(ODLA_CALL(CloneValue, src_value, id)); }
  Val CloneValueById(const Id &src_value_id, const Id &id) {
    return one(ODLA_CALL(CloneValueById, src_value_id, id));
  }
  Val CreateVariable(const VType &value_type, const Id &id) {
    return one(ODLA_CALL(CreateVariable, value_type, id));
  }

  // ops/odla_ops_custom.h, with odla_ext_custom.h's convention for the variadic argument
  std::vector<Val> CustomOp(const Vals &inputs, const Str &op_name, const Str &function_name,
                            const Ids &ids, const CustomParams &params) {
    return ODLA_CALL(CustomOp, inputs, op_name, function_name, ids, params);
  }

  // ops/odla_ops_control_flow.h
  Val CreateLoopVariable(Val init_value, const Id &id) {
    return one(ODLA_CALL(CreateLoopVariable, init_value, id));
  }
  void BeginLoop(Val trip_count, const Id &id) { ODLA_CALL(BeginLoop, trip_count, id); }
  std::vector<Val> EndLoop(Val condition, const Vals &output_values, const LoopModes &flags,
                           const Ids &ids) {
    return ODLA_CALL(EndLoop, condition, output_values, flags, ids);
  }
  void BeginIf(Val condition, const Id &id) { ODLA_CALL(BeginIf, condition, id); }
  void EnterBranchBody(Flag true_branch) { ODLA_CALL(EnterBranchBody, true_branch); }
  std::vector<Val> EndIf(const Ids &ids) { return ODLA_CALL(EndIf, ids); }

  // ops/odla_ops_quantization.h
  Val Dequantize(Val input, Val scale, Val zero_point, odla_int32 axis,
                 odla_element_type target_data_type, const Id &id) {
    return one(ODLA_CALL(Dequantize, input, scale, zero_point, axis, target_data_type, id));
  }
  Val Quantize(Val input, Val scale, Val zero_point, odla_int32 axis,
               odla_element_type target_data_type, const Id &id) {
    return one(ODLA_CALL(Quantize, input, scale, zero_point, axis, target_data_type, id));
  }

  // ops/odla_ops_math.h
  Val Abs(Val input, const Id &id) { return one(ODLA_CALL(Abs, input, id)); }
  Val ACos(Val x, const Id &id) { return one(ODLA_CALL(ACos, x, id)); }
  Val ACosh(Val x, const Id &id) { return one(ODLA_CALL(ACosh, x, id)); }
  Val Add(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Add, lhs, rhs, id)); }
  Val And(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(And, lhs, rhs, id)); }
  Val ArgMax(Val input, odla_int32 axis, Flag keep_dims, Flag return_last_index,
             const VType &output_value_type, const Id &id) {
    return one(ODLA_CALL(ArgMax, input, axis, keep_dims, return_last_index, output_value_type, id));
  }
  Val ArgMin(Val input, odla_int32 axis, Flag keep_dims, Flag return_last_index,
             const VType &output_value_type, const Id &id) {
    return one(ODLA_CALL(ArgMin, input, axis, keep_dims, return_last_index, output_value_type, id));
  }
  Val ASin(Val x, const Id &id) { return one(ODLA_CALL(ASin, x, id)); }
  Val ASinh(Val x, const Id &id) { return one(ODLA_CALL(ASinh, x, id)); }
  Val ATan(Val x, const Id &id) { return one(ODLA_CALL(ATan, x, id)); }
  Val ATanh(Val x, const Id &id) { return one(ODLA_CALL(ATanh, x, id)); }
  Val Ceil(Val input, const Id &id) { return one(ODLA_CALL(Ceil, input, id)); }
  Val Clamp(Val input, odla_float32 lo, odla_float32 hi, const Id &id) {
    return one(ODLA_CALL(Clamp, input, lo, hi, id));
  }
  Val Det(Val input, const lower::Shape &output_shape, const Id &id) {
    return one(ODLA_CALL(Det, input, output_shape, id));
  }
  Val CumSum(Val input, Val axis, Flag exclusion, Flag reverse, const Id &id) {
    return one(ODLA_CALL(CumSum, input, axis, exclusion, reverse, id));
  }
  Val Div(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Div, lhs, rhs, id)); }
  Val Einsum(const Vals &inputs, const Str &equation, const lower::Shape &output_dims,
             const Id &id) {
    return one(ODLA_CALL(Einsum, inputs, equation, output_dims, id));
  }
  Val Erf(Val input, const Id &id) { return one(ODLA_CALL(Erf, input, id)); }
  Val Equal(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Equal, lhs, rhs, id)); }
  Val Exp(Val input, const Id &id) { return one(ODLA_CALL(Exp, input, id)); }
  Val Floor(Val input, const Id &id) { return one(ODLA_CALL(Floor, input, id)); }
  Val BatchMatMul(Val A, Flag A_transpose, Val B, Flag B_transpose, const lower::Shape &output_dims,
                  const Id &id) {
    return one(ODLA_CALL(BatchMatMul, A, A_transpose, B, B_transpose, output_dims, id));
  }
  Val Gemm(Val A, Flag A_transpose, Val B, Flag B_transpose, odla_float32 alpha, odla_float32 beta,
           Val C, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Gemm, A, A_transpose, B, B_transpose, alpha, beta, C, output_dims, id));
  }
  Val Greater(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Greater, lhs, rhs, id)); }
  Val GreaterOrEqual(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(GreaterOrEqual, lhs, rhs, id));
  }
  Val Inverse(Val input, const Id &id) { return one(ODLA_CALL(Inverse, input, id)); }
  Val IsInf(Val input, Flag detect_pos, Flag detect_neg, const Id &id) {
    return one(ODLA_CALL(IsInf, input, detect_pos, detect_neg, id));
  }
  Val IsNaN(Val input, const Id &id) { return one(ODLA_CALL(IsNaN, input, id)); }
  Val Less(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Less, lhs, rhs, id)); }
  Val LessOrEqual(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(LessOrEqual, lhs, rhs, id));
  }
  Val Log(Val input, const Id &id) { return one(ODLA_CALL(Log, input, id)); }
  Val Max(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Max, lhs, rhs, id)); }
  Val Mean(const Vals &inputs, const Id &id) { return one(ODLA_CALL(Mean, inputs, id)); }
  Val Min(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Min, lhs, rhs, id)); }
  Val Mod(Val lhs, Val rhs, odla_int64 fmod, const Id &id) {
    return one(ODLA_CALL(Mod, lhs, rhs, fmod, id));
  }
  Val Mul(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Mul, lhs, rhs, id)); }
  Val Neg(Val input, const Id &id) { return one(ODLA_CALL(Neg, input, id)); }
  Val Not(Val input, const Id &id) { return one(ODLA_CALL(Not, input, id)); }
  Val NotEqual(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(NotEqual, lhs, rhs, id)); }
  Val Or(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Or, lhs, rhs, id)); }
  Val Xor(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Xor, lhs, rhs, id)); }
  Val Pow(Val base, Val exponent, const Id &id) { return one(ODLA_CALL(Pow, base, exponent, id)); }
  Val Reciprocal(Val input, const Id &id) { return one(ODLA_CALL(Reciprocal, input, id)); }
  Val ReduceL1(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
               odla_float32 epsilon, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceL1, input, num_of_axes, axes, keep_dims, epsilon, output_dims, id));
  }
  Val ReduceL2(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
               odla_float32 epsilon, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceL2, input, num_of_axes, axes, keep_dims, epsilon, output_dims, id));
  }
  Val ReduceLogSum(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                   const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceLogSum, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceLogSumExp(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                      const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceLogSumExp, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceMax(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceMax, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceMean(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                 const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceMean, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceMin(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceMin, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceProd(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                 const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceProd, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceSum(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceSum, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val ReduceSumSquare(Val input, odla_size_t num_of_axes, const U32s &axes, Flag keep_dims,
                      const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ReduceSumSquare, input, num_of_axes, axes, keep_dims, output_dims, id));
  }
  Val Round(Val input, const Id &id) { return one(ODLA_CALL(Round, input, id)); }
  Val Rsqrt(Val input, const Id &id) { return one(ODLA_CALL(Rsqrt, input, id)); }
  Val Select(Val condition, Val a, Val b, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Select, condition, a, b, output_dims, id));
  }
  Val Shift(Val input, Val shift_amount, Flag is_left_shift, const Id &id) {
    return one(ODLA_CALL(Shift, input, shift_amount, is_left_shift, id));
  }
  Val Sign(Val input, const Id &id) { return one(ODLA_CALL(Sign, input, id)); }
  Val Sqrt(Val input, const Id &id) { return one(ODLA_CALL(Sqrt, input, id)); }
  Val SquaredDifference(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(SquaredDifference, lhs, rhs, id));
  }
  Val Sub(Val lhs, Val rhs, const Id &id) { return one(ODLA_CALL(Sub, lhs, rhs, id)); }
  Val Sin(Val x, const Id &id) { return one(ODLA_CALL(Sin, x, id)); }
  Val Sinh(Val x, const Id &id) { return one(ODLA_CALL(Sinh, x, id)); }
  Val Cos(Val x, const Id &id) { return one(ODLA_CALL(Cos, x, id)); }
  Val Cosh(Val x, const Id &id) { return one(ODLA_CALL(Cosh, x, id)); }
  Val Tan(Val x, const Id &id) { return one(ODLA_CALL(Tan, x, id)); }
  Val Tanh(Val x, const Id &id) { return one(ODLA_CALL(Tanh, x, id)); }

  // ops/odla_ops_nn.h
  Val AveragePool(Val input, odla_memory_layout input_layout, const U32s &window_dims,
                  const U32s &strides, const U32s &paddings_front, const U32s &paddings_back,
                  Flag padding_included, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(AveragePool, input, input_layout, window_dims, strides, paddings_front,
                         paddings_back, padding_included, output_dims, id));
  }
  Val Hardmax(Val input, odla_int32 axis, const Id &id) {
    return one(ODLA_CALL(Hardmax, input, axis, id));
  }
  Val LRN(Val input, odla_memory_layout input_layout, odla_int32 window_size, odla_float32 alpha,
          odla_float32 beta, odla_float32 bias, const Id &id) {
    return one(ODLA_CALL(LRN, input, input_layout, window_size, alpha, beta, bias, id));
  }
  Val BatchNormalization(Val input, odla_memory_layout input_layout, Val mean, Val var,
                         odla_float32 epsilon, Val scale, Val offset, odla_float32 scalar_scale,
                         odla_float32 scalar_offset, const Id &id) {
    return one(ODLA_CALL(BatchNormalization, input, input_layout, mean, var, epsilon, scale, offset,
                         scalar_scale, scalar_offset, id));
  }
  Val Celu(Val input, odla_float32 alpha, const Id &id) {
    return one(ODLA_CALL(Celu, input, alpha, id));
  }
  Val Conv(Val input, odla_memory_layout input_layout, odla_uint32 group, Val kernel,
           odla_memory_layout kernel_layout, const U32s &strides, const U32s &dilations,
           const U32s &paddings_front, const U32s &paddings_back, Val bias,
           const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Conv, input, input_layout, group, kernel, kernel_layout, strides,
                         dilations, paddings_front, paddings_back, bias, output_dims, id));
  }
  Val DeConv(Val input, odla_memory_layout input_layout, odla_uint32 group, Val kernel,
             odla_memory_layout kernel_layout, const U32s &strides, const U32s &dilations,
             const U32s &paddings_front, const U32s &paddings_back, Val bias,
             const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(DeConv, input, input_layout, group, kernel, kernel_layout, strides,
                         dilations, paddings_front, paddings_back, bias, output_dims, id));
  }
  Val Elu(Val input, odla_float32 alpha, const Id &id) {
    return one(ODLA_CALL(Elu, input, alpha, id));
  }
  Val Gelu(Val input, Flag use_approx, const Id &id) {
    return one(ODLA_CALL(Gelu, input, use_approx, id));
  }
  std::vector<Val> GRU(Val input, odla_rnn_weight_format weight_format,
                       odla_rnn_gate_order gate_order, const lower::Shape &weight_dims, Val W,
                       Val R, Val B, Val sequence_lens, Val initial_h, odla_int32 hidden_size,
                       odla_rnn_direction direction, Flag linear_before_reset,
                       odla_rnn_outputs outputs, const Ids &ids) {
    return ODLA_CALL(GRU, input, weight_format, gate_order, weight_dims, W, R, B, sequence_lens,
                     initial_h, hidden_size, direction, linear_before_reset, outputs, ids);
  }
  Val HardSigmoid(Val input, odla_float32 alpha, odla_float32 beta, const Id &id) {
    return one(ODLA_CALL(HardSigmoid, input, alpha, beta, id));
  }
  Val GroupNormalization(Val input, odla_memory_layout input_layout, odla_int32 groups,
                         odla_float32 epsilon, Val scale, Val offset, odla_float32 scalar_scale,
                         odla_float32 scalar_offset, const Id &id) {
    return one(ODLA_CALL(GroupNormalization, input, input_layout, groups, epsilon, scale, offset,
                         scalar_scale, scalar_offset, id));
  }
  Val InstanceNormalization(Val input, odla_memory_layout input_layout, odla_float32 epsilon,
                            Val scale, Val offset, odla_float32 scalar_scale,
                            odla_float32 scalar_offset, const Id &id) {
    return one(ODLA_CALL(InstanceNormalization, input, input_layout, epsilon, scale, offset,
                         scalar_scale, scalar_offset, id));
  }
  Val LpNormalize(Val input, odla_int32 p, odla_memory_layout input_layout, odla_size_t axes_size,
                  const I32s &axes, odla_float32 epsilon, Val scale, const Id &id) {
    return one(ODLA_CALL(LpNormalize, input, p, input_layout, axes_size, axes, epsilon, scale, id));
  }
  Val LeakyRelu(Val input, odla_float32 alpha, const Id &id) {
    return one(ODLA_CALL(LeakyRelu, input, alpha, id));
  }
  Val LogSoftmax(Val input, odla_int32 axis, const Id &id) {
    return one(ODLA_CALL(LogSoftmax, input, axis, id));
  }
  std::vector<Val> LSTM(Val input, odla_rnn_weight_format weight_format,
                        odla_rnn_gate_order gate_order, const lower::Shape &weight_dims, Val W,
                        Val R, Val B, Val sequence_lens, Val initial_h, Val initial_c, Val P,
                        odla_int32 hidden_size, odla_rnn_direction direction,
                        odla_rnn_outputs outputs, const Ids &ids) {
    return ODLA_CALL(LSTM, input, weight_format, gate_order, weight_dims, W, R, B, sequence_lens,
                     initial_h, initial_c, P, hidden_size, direction, outputs, ids);
  }
  Val MaxPool(Val input, odla_memory_layout input_layout, const U32s &window_dims,
              const U32s &strides, const U32s &paddings_front, const U32s &paddings_back,
              const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(MaxPool, input, input_layout, window_dims, strides, paddings_front,
                         paddings_back, output_dims, id));
  }
  Val NegativeLogLikeliHoodLoss(Val input, Val gt, odla_int32 ignored,
                                odla_reduction_mode reduction, Val weight,
                                const lower::Shape &output_shape, const Id &id) {
    return one(ODLA_CALL(NegativeLogLikeliHoodLoss, input, gt, ignored, reduction, weight,
                         output_shape, id));
  }
  Val NMS(Val boxes, Val scores, odla_uint32 max_num_outputs, odla_float32 iou_threshold,
          odla_float32 score_threshold, const VType &output_value_type, const Id &id) {
    return one(ODLA_CALL(NMS, boxes, scores, max_num_outputs, iou_threshold, score_threshold,
                         output_value_type, id));
  }
  Val PRelu(Val input, Val slope, const Id &id) { return one(ODLA_CALL(PRelu, input, slope, id)); }
  Val Relu(Val input, const Id &id) { return one(ODLA_CALL(Relu, input, id)); }
  std::vector<Val> RNN(Val input, odla_rnn_weight_format weight_format,
                       const lower::Shape &weight_dims, Val W, Val R, Val B, Val sequence_lens,
                       Val initial_h, odla_int32 hidden_size, odla_rnn_direction direction,
                       odla_rnn_outputs outputs, const Ids &ids) {
    return ODLA_CALL(RNN, input, weight_format, weight_dims, W, R, B, sequence_lens, initial_h,
                     hidden_size, direction, outputs, ids);
  }
  Val ROIAlign(Val input, odla_memory_layout input_layout, Val rois, odla_int32 sampling_ratio,
               odla_float32 scale, const lower::Shape &output_dim, const Id &id) {
    return one(
        ODLA_CALL(ROIAlign, input, input_layout, rois, sampling_ratio, scale, output_dim, id));
  }
  Val ROIMaxPool(Val input, odla_memory_layout input_layout, Val rois, odla_int32 win_h,
                 odla_int32 win_w, odla_float32 scale, const lower::Shape &output_dim,
                 const Id &id) {
    return one(
        ODLA_CALL(ROIMaxPool, input, input_layout, rois, win_h, win_w, scale, output_dim, id));
  }
  Val Selu(Val input, odla_float32 alpha, odla_float32 gamma, const Id &id) {
    return one(ODLA_CALL(Selu, input, alpha, gamma, id));
  }
  Val Shrink(Val input, odla_float32 bias, odla_float32 lambd, const Id &id) {
    return one(ODLA_CALL(Shrink, input, bias, lambd, id));
  }
  Val Sigmoid(Val input, const Id &id) { return one(ODLA_CALL(Sigmoid, input, id)); }
  Val Softmax(Val input, odla_int32 axis, const Id &id) {
    return one(ODLA_CALL(Softmax, input, axis, id));
  }
  Val Softplus(Val input, const Id &id) { return one(ODLA_CALL(Softplus, input, id)); }
  Val Softsign(Val input, const Id &id) { return one(ODLA_CALL(Softsign, input, id)); }
  Val TFIDFVectorize(Val input, odla_int32 min_gram_length, odla_int32 max_gram_length,
                     odla_int32 max_skip_count, odla_tf_idf_mode mode, Val pool, Val gram_counts,
                     Val output_indices, Val weights, const lower::Shape &output_shape,
                     const Id &id) {
    return one(ODLA_CALL(TFIDFVectorize, input, min_gram_length, max_gram_length, max_skip_count,
                         mode, pool, gram_counts, output_indices, weights, output_shape, id));
  }
  Val ThresholdedRelu(Val input, odla_float32 alpha, const Id &id) {
    return one(ODLA_CALL(ThresholdedRelu, input, alpha, id));
  }
  std::vector<Val> TopK(Val input, odla_uint32 K, Flag largest, Flag sorted, odla_uint32 axis,
                        const VType &output_value_type, const VType &output_value_index_type,
                        const Ids &ids) {
    return ODLA_CALL(TopK, input, K, largest, sorted, axis, output_value_type,
                     output_value_index_type, ids);
  }
  std::vector<Val> PostProcess(Val orig_img_w, Val orig_img_h, Val bb13, Val bb26, Val bb52,
                               const Id &id) {
    return ODLA_CALL(PostProcess, orig_img_w, orig_img_h, bb13, bb26, bb52, id);
  }

  // ops/odla_ops_process.h
  Val Broadcast(Val input, const lower::Shape &output_shape, const Id &id) {
    return one(ODLA_CALL(Broadcast, input, output_shape, id));
  }
  Val Cast(Val input, odla_element_type target_type, const Id &id) {
    return one(ODLA_CALL(Cast, input, target_type, id));
  }
  Val Compress(Val input, Val condition, odla_int32 axis, const lower::Shape &max_output_shape,
               const Id &id) {
    return one(ODLA_CALL(Compress, input, condition, axis, max_output_shape, id));
  }
  Val Concat(const Vals &inputs, odla_int32 axis, const lower::Shape &output_shape, const Id &id) {
    return one(ODLA_CALL(Concat, inputs, axis, output_shape, id));
  }
  Val ExpandDims(Val input, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExpandDims, input, output_dims, id));
  }
  Val Fill(const VType &type, odla_fill_method method, odla_float32 p0, odla_float32 p1,
           odla_float32 seed, const Id &id) {
    return one(ODLA_CALL(Fill, type, method, p0, p1, seed, id));
  }
  Val Gather(Val input, Val indices, odla_int32 axis, const lower::Shape &output_dims,
             const Id &id) {
    return one(ODLA_CALL(Gather, input, indices, axis, output_dims, id));
  }
  Val GatherND(Val input, Val indices, odla_int32 num_batch_dims, const lower::Shape &output_dims,
               const Id &id) {
    return one(ODLA_CALL(GatherND, input, indices, num_batch_dims, output_dims, id));
  }
  Val GatherElements(Val input, Val indices, odla_int32 axis, const lower::Shape &output_dims,
                     const Id &id) {
    return one(ODLA_CALL(GatherElements, input, indices, axis, output_dims, id));
  }
  Val OneHot(Val indices, odla_int32 depth, Val values, odla_int32 axis,
             const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(OneHot, indices, depth, values, axis, output_dims, id));
  }
  Val Pad(Val input, const U32s &padding_front, const U32s &padding_back,
          const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Pad, input, padding_front, padding_back, output_dims, id));
  }
  Val Reshape(Val input, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Reshape, input, output_dims, id));
  }
  Val ReshapeDynamic(Val input, Val output_shape, const Id &id) {
    return one(ODLA_CALL(ReshapeDynamic, input, output_shape, id));
  }
  Val Resize(Val input, odla_interpolation_mode interpolation, odla_resize_coordinate_mode mode,
             odla_uint32 axes_mask, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Resize, input, interpolation, mode, axes_mask, output_dims, id));
  }
  Val ResizeDynamic(Val input, Val scales, Val sizes, odla_interpolation_mode interpolation,
                    odla_resize_coordinate_mode mode, const lower::Shape &output_dims,
                    const Id &id) {
    return one(
        ODLA_CALL(ResizeDynamic, input, scales, sizes, interpolation, mode, output_dims, id));
  }
  Val Shape(Val input, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Shape, input, output_dims, id));
  }
  Val Slice(Val input, const I32s &start, const I32s &end, const I32s &stride,
            const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Slice, input, start, end, stride, output_dims, id));
  }
  Val DimsExpand(Val input, Val original, Val axes, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(DimsExpand, input, original, axes, output_dims, id));
  }
  Val SliceDynamic(Val input, Val start, Val size, Val stride, const lower::Shape &output_dims,
                   const Id &id) {
    return one(ODLA_CALL(SliceDynamic, input, start, size, stride, output_dims, id));
  }
  std::vector<Val> Split(Val input, Val split_dim, odla_int32 num_split, const Ids &ids) {
    return ODLA_CALL(Split, input, split_dim, num_split, ids);
  }
  Val Squeeze(Val input, odla_size_t num_of_axes, const U32s &axes, const lower::Shape &output_dims,
              const Id &id) {
    return one(ODLA_CALL(Squeeze, input, num_of_axes, axes, output_dims, id));
  }
  Val Stack(const Vals &inputs, odla_int32 axis, const lower::Shape &output_shape, const Id &id) {
    return one(ODLA_CALL(Stack, inputs, axis, output_shape, id));
  }
  Val Transpose(Val input, const lower::Shape &permutations, const lower::Shape &output_dims,
                const Id &id) {
    return one(ODLA_CALL(Transpose, input, permutations, output_dims, id));
  }
  Val Tile(Val input, const U32s &repeat, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(Tile, input, repeat, output_dims, id));
  }
  Val TileDynamic(Val input, Val repeat, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(TileDynamic, input, repeat, output_dims, id));
  }

  // odlac's extension ops (odla_ext.h), one line each, grouped by family.
  // Extensions: unary family.
  Val ExtBitwiseNot(Val input, const Id &id) { return one(ODLA_CALL(ExtBitwiseNot, input, id)); }
  Val ExtCast(Val input, odla_element_type target_type, Flag saturate, odla_int32 round_mode,
              const Id &id) {
    return one(ODLA_CALL(ExtCast, input, target_type, saturate, round_mode, id));
  }
  // Extensions: binary family.
  Val ExtBitwiseAnd(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(ExtBitwiseAnd, lhs, rhs, id));
  }
  Val ExtBitwiseOr(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(ExtBitwiseOr, lhs, rhs, id));
  }
  Val ExtBitwiseXor(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(ExtBitwiseXor, lhs, rhs, id));
  }
  // Extensions: reduce family.
  Val ExtCumProd(Val input, Val axis, Flag exclusion, Flag reverse, const Id &id) {
    return one(ODLA_CALL(ExtCumProd, input, axis, exclusion, reverse, id));
  }
  Val ExtReduceDynamic(Val input, Val axes, odla_int32 reduction, Flag keep_dims,
                       Flag noop_with_empty_axes, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtReduceDynamic, input, axes, reduction, keep_dims, noop_with_empty_axes,
                         output_dims, id));
  }
  // Extensions: normalization family.
  // Extensions: nn family.
  Val ExtMaxPool(Val input, odla_memory_layout input_layout, const U32s &window_dims,
                 const U32s &strides, const U32s &dilations, const U32s &paddings_front,
                 const U32s &paddings_back, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtMaxPool, input, input_layout, window_dims, strides, dilations,
                         paddings_front, paddings_back, output_dims, id));
  }
  Val ExtMaxPoolIndices(Val input, odla_memory_layout input_layout, const U32s &window_dims,
                        const U32s &strides, const U32s &dilations, const U32s &paddings_front,
                        const U32s &paddings_back, Flag column_major,
                        const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtMaxPoolIndices, input, input_layout, window_dims, strides, dilations,
                         paddings_front, paddings_back, column_major, output_dims, id));
  }
  Val ExtDeformConv(Val input, Val kernel, Val offset, Val bias, Val mask, odla_uint32 group,
                    odla_uint32 offset_group, const U32s &strides, const U32s &dilations,
                    const U32s &paddings_front, const U32s &paddings_back,
                    const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtDeformConv, input, kernel, offset, bias, mask, group, offset_group,
                         strides, dilations, paddings_front, paddings_back, output_dims, id));
  }
  Val ExtCol2Im(Val input, Val image_shape, Val block_shape, const U32s &dilations,
                const U32s &paddings_front, const U32s &paddings_back, const U32s &strides,
                const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtCol2Im, input, image_shape, block_shape, dilations, paddings_front,
                         paddings_back, strides, output_dims, id));
  }
  Val ExtAveragePool(Val input, odla_memory_layout input_layout, const U32s &window_dims,
                     const U32s &strides, const U32s &dilations, const U32s &paddings_front,
                     const U32s &paddings_back, Flag padding_included,
                     const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtAveragePool, input, input_layout, window_dims, strides, dilations,
                         paddings_front, paddings_back, padding_included, output_dims, id));
  }
  Val ExtLpPool(Val input, odla_memory_layout input_layout, odla_float32 p, const U32s &window_dims,
                const U32s &strides, const U32s &dilations, const U32s &paddings_front,
                const U32s &paddings_back, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtLpPool, input, input_layout, p, window_dims, strides, dilations,
                         paddings_front, paddings_back, output_dims, id));
  }
  // Extensions: recurrent family.
  std::vector<Val> ExtRNN(Val input, odla_rnn_weight_format weight_format,
                          const lower::Shape &weight_dims, Val W, Val R, Val B, Val sequence_lens,
                          Val initial_h, odla_int32 hidden_size, odla_rnn_direction direction,
                          odla_rnn_outputs outputs, const I32s &activations, Val activation_params,
                          odla_float32 clip, const Ids &ids) {
    return ODLA_CALL(ExtRNN, input, weight_format, weight_dims, W, R, B, sequence_lens, initial_h,
                     hidden_size, direction, outputs, activations, activation_params, clip, ids);
  }
  std::vector<Val> ExtGRU(Val input, odla_rnn_weight_format weight_format,
                          odla_rnn_gate_order gate_order, const lower::Shape &weight_dims, Val W,
                          Val R, Val B, Val sequence_lens, Val initial_h, odla_int32 hidden_size,
                          odla_rnn_direction direction, Flag linear_before_reset,
                          odla_rnn_outputs outputs, const I32s &activations, Val activation_params,
                          odla_float32 clip, const Ids &ids) {
    return ODLA_CALL(ExtGRU, input, weight_format, gate_order, weight_dims, W, R, B, sequence_lens,
                     initial_h, hidden_size, direction, linear_before_reset, outputs, activations,
                     activation_params, clip, ids);
  }
  std::vector<Val> ExtLSTM(Val input, odla_rnn_weight_format weight_format,
                           odla_rnn_gate_order gate_order, const lower::Shape &weight_dims, Val W,
                           Val R, Val B, Val sequence_lens, Val initial_h, Val initial_c, Val P,
                           odla_int32 hidden_size, odla_rnn_direction direction,
                           odla_rnn_outputs outputs, const I32s &activations, Val activation_params,
                           odla_float32 clip, Flag input_forget, const Ids &ids) {
    return ODLA_CALL(ExtLSTM, input, weight_format, gate_order, weight_dims, W, R, B, sequence_lens,
                     initial_h, initial_c, P, hidden_size, direction, outputs, activations,
                     activation_params, clip, input_forget, ids);
  }
  // Extensions: quant family.
  Val ExtQuantize(Val input, Val scale, Val zero_point, odla_int32 axis, odla_int32 block_size,
                  odla_element_type target_data_type, Flag saturate, const Id &id) {
    return one(ODLA_CALL(ExtQuantize, input, scale, zero_point, axis, block_size, target_data_type,
                         saturate, id));
  }
  Val ExtDequantize(Val input, Val scale, Val zero_point, odla_int32 axis, odla_int32 block_size,
                    odla_element_type target_data_type, const Id &id) {
    return one(
        ODLA_CALL(ExtDequantize, input, scale, zero_point, axis, block_size, target_data_type, id));
  }
  Val ExtQLinearConv(Val input, Val input_zero_point, odla_memory_layout input_layout,
                     odla_uint32 group, Val kernel, Val kernel_zero_point,
                     odla_memory_layout kernel_layout, const U32s &strides, const U32s &dilations,
                     const U32s &paddings_front, const U32s &paddings_back, Val bias,
                     Val multiplier, Val shift, Val output_zero_point, odla_int32 output_min,
                     odla_int32 output_max, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtQLinearConv, input, input_zero_point, input_layout, group, kernel,
                         kernel_zero_point, kernel_layout, strides, dilations, paddings_front,
                         paddings_back, bias, multiplier, shift, output_zero_point, output_min,
                         output_max, output_dims, id));
  }
  Val ExtQLinearMatMul(Val input, Val input_zero_point, Val kernel, Val kernel_zero_point, Val bias,
                       Val multiplier, Val shift, Val output_zero_point, odla_int32 output_min,
                       odla_int32 output_max, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtQLinearMatMul, input, input_zero_point, kernel, kernel_zero_point, bias,
                         multiplier, shift, output_zero_point, output_min, output_max, output_dims,
                         id));
  }
  Val ExtQLinearAdd(Val a, Val a_zero_point, odla_int32 a_multiplier, Val b, Val b_zero_point,
                    odla_int32 b_multiplier, odla_int32 shift, Val output_zero_point,
                    odla_int32 output_min, odla_int32 output_max, const lower::Shape &output_dims,
                    const Id &id) {
    return one(ODLA_CALL(ExtQLinearAdd, a, a_zero_point, a_multiplier, b, b_zero_point,
                         b_multiplier, shift, output_zero_point, output_min, output_max,
                         output_dims, id));
  }
  Val ExtQLinearMul(Val a, Val a_zero_point, Val b, Val b_zero_point, odla_int32 multiplier,
                    odla_int32 shift, Val output_zero_point, odla_int32 output_min,
                    odla_int32 output_max, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtQLinearMul, a, a_zero_point, b, b_zero_point, multiplier, shift,
                         output_zero_point, output_min, output_max, output_dims, id));
  }
  // Extensions: data family.
  Val ExtBitCast(Val input, odla_element_type target_type, const Id &id) {
    return one(ODLA_CALL(ExtBitCast, input, target_type, id));
  }
  Val ExtSliceDynamic(Val input, Val starts, Val ends, Val axes, Val steps,
                      const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtSliceDynamic, input, starts, ends, axes, steps, output_dims, id));
  }
  Val ExtPadDynamic(Val input, Val pads, Val constant_value, odla_int32 mode,
                    const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtPadDynamic, input, pads, constant_value, mode, output_dims, id));
  }
  Val ExtReverseSequence(Val input, Val sequence_lens, odla_int32 batch_axis, odla_int32 time_axis,
                         const Id &id) {
    return one(ODLA_CALL(ExtReverseSequence, input, sequence_lens, batch_axis, time_axis, id));
  }
  // Extensions: indexing family.
  Val ExtScatterElements(Val data, Val indices, Val updates, odla_int32 axis, odla_int32 reduction,
                         const Id &id) {
    return one(ODLA_CALL(ExtScatterElements, data, indices, updates, axis, reduction, id));
  }
  Val ExtScatterND(Val data, Val indices, Val updates, odla_int32 reduction, const Id &id) {
    return one(ODLA_CALL(ExtScatterND, data, indices, updates, reduction, id));
  }
  Val ExtNonZero(Val input, const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtNonZero, input, output_dims, id));
  }

  // Extensions: string ops (odla_ext_string.h)
  Val ExtStringConcat(Val lhs, Val rhs, const Id &id) {
    return one(ODLA_CALL(ExtStringConcat, lhs, rhs, id));
  }
  Val ExtStringNormalizer(Val input, Val stopwords, odla_int32 case_change_action,
                          Flag is_case_sensitive, const Str &locale,
                          const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtStringNormalizer, input, stopwords, case_change_action,
                         is_case_sensitive, locale, output_dims, id));
  }
  std::vector<Val> ExtStringSplit(Val input, const Str &delimiter, odla_int64 maxsplit,
                                  const lower::Shape &output_dims, const Ids &ids) {
    return ODLA_CALL(ExtStringSplit, input, delimiter, maxsplit, output_dims, ids);
  }
  Val ExtRegexFullMatch(Val input, const Str &pattern, const Id &id) {
    return one(ODLA_CALL(ExtRegexFullMatch, input, pattern, id));
  }
  Val ExtLabelEncoder(Val input, Val keys, Val values, Val default_value, const Id &id) {
    return one(ODLA_CALL(ExtLabelEncoder, input, keys, values, default_value, id));
  }
  Val ExtTreeEnsemble(Val input, Val nodes, Val splits, Val members, Val leaf_targets,
                      Val leaf_weights, Val roots, odla_int32 aggregate_function,
                      odla_int32 post_transform, odla_int32 num_targets, const Id &id) {
    return one(ODLA_CALL(ExtTreeEnsemble, input, nodes, splits, members, leaf_targets, leaf_weights,
                         roots, aggregate_function, post_transform, num_targets, id));
  }
  Val ExtResize(Val input, Val roi, Val scales, Val sizes, odla_interpolation_mode interpolation,
                odla_int32 coordinate_mode, odla_int32 nearest_mode, odla_float32 cubic_coeff_a,
                Flag exclude_outside, odla_float32 extrapolation_value, Flag antialias,
                odla_int32 aspect_policy, odla_uint32 aspect_axes_mask,
                const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtResize, input, roi, scales, sizes, interpolation, coordinate_mode,
                         nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value,
                         antialias, aspect_policy, aspect_axes_mask, output_dims, id));
  }
  // Extensions: misc family.
  Val ExtNonMaxSuppression(Val boxes, Val scores, Val max_output_boxes_per_class, Val iou_threshold,
                           Val score_threshold, odla_int32 box_encoding,
                           const VType &output_value_type, const Id &id) {
    return one(ODLA_CALL(ExtNonMaxSuppression, boxes, scores, max_output_boxes_per_class,
                         iou_threshold, score_threshold, box_encoding, output_value_type, id));
  }
  Val ExtRoiAlign(Val input, Val rois, Val batch_indices, odla_int32 mode, odla_int32 output_height,
                  odla_int32 output_width, odla_int32 sampling_ratio, odla_float32 spatial_scale,
                  Flag half_pixel, const Id &id) {
    return one(ODLA_CALL(ExtRoiAlign, input, rois, batch_indices, mode, output_height, output_width,
                         sampling_ratio, spatial_scale, half_pixel, id));
  }
  Val ExtGridSample(Val input, Val grid, odla_int32 mode, odla_int32 padding_mode,
                    Flag align_corners, const Id &id) {
    return one(ODLA_CALL(ExtGridSample, input, grid, mode, padding_mode, align_corners, id));
  }
  Val ExtAffineGrid(Val theta, Val size, Flag align_corners, const lower::Shape &output_dims,
                    const Id &id) {
    return one(ODLA_CALL(ExtAffineGrid, theta, size, align_corners, output_dims, id));
  }
  Val ExtWindow(Val size, odla_int32 window, Flag periodic, const VType &output_value_type,
                const Id &id) {
    return one(ODLA_CALL(ExtWindow, size, window, periodic, output_value_type, id));
  }
  Val ExtDFT(Val input, Val dft_length, Val axis_value, odla_int32 axis, Flag inverse,
             Flag onesided, const lower::Shape &output_dims, const Id &id) {
    return one(
        ODLA_CALL(ExtDFT, input, dft_length, axis_value, axis, inverse, onesided, output_dims, id));
  }
  Val ExtSTFT(Val signal, Val frame_step, Val window, Val frame_length, Flag onesided,
              const lower::Shape &output_dims, const Id &id) {
    return one(
        ODLA_CALL(ExtSTFT, signal, frame_step, window, frame_length, onesided, output_dims, id));
  }
  Val ExtMelWeightMatrix(Val num_mel_bins, Val dft_length, Val sample_rate, Val lower_edge_hertz,
                         Val upper_edge_hertz, const VType &output_value_type, const Id &id) {
    return one(ODLA_CALL(ExtMelWeightMatrix, num_mel_bins, dft_length, sample_rate,
                         lower_edge_hertz, upper_edge_hertz, output_value_type, id));
  }
  // Extensions: fused ops (odla_ext_fused.h), formed by the optimizer.
  Val ExtConv(Val input, odla_memory_layout input_layout, odla_uint32 group, Val kernel,
              odla_memory_layout kernel_layout, const U32s &strides, const U32s &dilations,
              const U32s &paddings_front, const U32s &paddings_back, Val bias, Val residual,
              odla_ext_fused_activation activation, odla_float32 alpha, odla_float32 beta,
              const lower::Shape &output_dims, const Id &id) {
    return one(ODLA_CALL(ExtConv, input, input_layout, group, kernel, kernel_layout, strides,
                         dilations, paddings_front, paddings_back, bias, residual, activation,
                         alpha, beta, output_dims, id));
  }
  Val ExtGemm(Val A, Flag A_transpose, Val B, Flag B_transpose, odla_float32 alpha,
              odla_float32 beta, Val C, Val residual, odla_ext_fused_activation activation,
              odla_float32 act_alpha, odla_float32 act_beta, const lower::Shape &output_dims,
              const Id &id) {
    return one(ODLA_CALL(ExtGemm, A, A_transpose, B, B_transpose, alpha, beta, C, residual,
                         activation, act_alpha, act_beta, output_dims, id));
  }
  // Extensions: transformer family (odla_ext_transformer.h), recognized by the optimizer.
  Val ExtLayerNorm(Val input, odla_int32 axis, odla_float32 epsilon, Val scale, Val bias,
                   const Id &id) {
    return one(ODLA_CALL(ExtLayerNorm, input, axis, epsilon, scale, bias, id));
  }
  Val ExtAttention(Val query, Val key, Val value, Val scale, Val mask, const Id &id) {
    return one(ODLA_CALL(ExtAttention, query, key, value, scale, mask, id));
  }
#undef ODLA_CALL

  // Says that nothing uses a value the graph must still create (an unused graph input).
  virtual void markUnused(Val) {}
  // Says what the calls that follow lower ("node 'conv1' (Conv)", "graph input 'x'"), for
  // sinks that report on them.
  virtual void beginLowering(const std::string &) {}

protected:
  // Handles one call; returns the handles of its results (none for status-returning calls).
  // Results are named after the call's last Id or Ids argument.
  virtual std::vector<Val> emit(Call &call) = 0;

private:
  static Arg toArg(Val v) { return v; }
  static Arg toArg(const Id &v) { return v; }
  static Arg toArg(const Ids &v) { return v; }
  static Arg toArg(const Vals &v) { return v; }
  static Arg toArg(const U32s &v) { return v; }
  static Arg toArg(const I32s &v) { return v; }
  static Arg toArg(const lower::Shape &v) { return v; }
  static Arg toArg(const VType &v) { return v; }
  static Arg toArg(Flag v) { return v; }
  static Arg toArg(const Data &v) { return v; }
  static Arg toArg(const Str &v) { return v; }
  static Arg toArg(const LoopModes &v) { return v; }
  static Arg toArg(const CustomParams &v) { return v; }
  static Arg toArg(float v) { return v; }
  template <class T> static std::enable_if_t<std::is_integral_v<T>, Arg> toArg(T v) {
    if constexpr (std::is_signed_v<T>)
      return static_cast<int64_t>(v);
    else
      return static_cast<uint64_t>(v);
  }
  template <class T> static std::enable_if_t<std::is_enum_v<T>, Arg> toArg(T v) {
    return EnumArg{enumName(v)};
  }

  template <auto Fn, class... A>
  std::vector<Val> call(const char *function, const char *params, const A &...args) {
    Call c{function, params, returnsOf(Fn), {toArg(args)...}, [&](Binder &b) {
             b.take(Fn(b.conv(args)...));
           }};
    return emit(c);
  }
  static Val one(const std::vector<Val> &results) { return results.empty() ? Val{} : results[0]; }
};

} // namespace odlac::lower
