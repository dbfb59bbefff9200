// The one lowering interface (DESIGN §3, "one lowering, two sinks"): one typed method per ODLA
// function. Op lowerings call these methods; a sink either prints the call as C
// (codegen's PrintSink) or makes it on the linked ODLA backend (DirectSink). Both sinks see
// the same calls with the same arguments, so what odlac computes itself (constant folding,
// `odlac run`, memory figures) is what the printed C computes.
//
// Add an ODLA function by adding one line below: ODLA_CALL checks the argument types against
// the real prototype from <ODLA/odla.h> at compile time.
#pragma once

#include <ODLA/odla.h>

#include <cstdint>
#include <functional>
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

using Arg = std::variant<Val, Id, Ids, Vals, U32s, I32s, Shape, VType, Flag, Data, Str, EnumArg,
                         int64_t, uint64_t, float>;

// Enumerator names for printing enum arguments.
const char *enumName(odla_element_type v);
const char *enumName(odla_memory_layout v);

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
  odla_value_shape conv(const Shape &s);
  odla_value_type conv(const VType &t) { return odla_value_type{t.elementType, conv(t.shape)}; }
  odla_bool conv(Flag f) { return f.on ? 1 : 0; }
  const odla_void *conv(const Data &d) { return d.ptr; }
  const odla_char *conv(const Str &s) { return s.s.c_str(); }
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>>
  T conv(T v) {
    return v;
  }

  void take(odla_value v) { takeValue(v); }
  void take(const odla_values &vs) { takeValues(vs); }
  void take(odla_status s) { takeStatus(s); }
};

enum class Returns { Value, Values, Status };

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
  Returns returns;
  std::vector<Arg> args;
  std::function<void(Binder &)> invoke; // makes the real call through a Binder
};

class OdlaSink {
public:
  virtual ~OdlaSink() = default;

#define ODLA_CALL(fn, ...) call<&odla_##fn>("odla_" #fn, __VA_ARGS__)
  // Values and outputs (odla_ops_basic.h, odla_value.h).
  Val CreateArgument(const VType &t, const Id &id) { return one(ODLA_CALL(CreateArgument, t, id)); }
  Val CreateConstant(const VType &t, const Data &d, const Id &id) { return one(ODLA_CALL(CreateConstant, t, d, id)); }
  Val CloneValue(Val v, const Id &id) { return one(ODLA_CALL(CloneValue, v, id)); }
  void SetValueAsOutput(Val v) { ODLA_CALL(SetValueAsOutput, v); }

  // Math (odla_ops_math.h).
  Val Add(Val a, Val b, const Id &id) { return one(ODLA_CALL(Add, a, b, id)); }
  Val Sub(Val a, Val b, const Id &id) { return one(ODLA_CALL(Sub, a, b, id)); }
  Val Mul(Val a, Val b, const Id &id) { return one(ODLA_CALL(Mul, a, b, id)); }
  Val Div(Val a, Val b, const Id &id) { return one(ODLA_CALL(Div, a, b, id)); }
  Val Clamp(Val x, odla_float32 lo, odla_float32 hi, const Id &id) { return one(ODLA_CALL(Clamp, x, lo, hi, id)); }
  Val Tanh(Val x, const Id &id) { return one(ODLA_CALL(Tanh, x, id)); }
  Val Gemm(Val a, Flag ta, Val b, Flag tb, odla_float32 alpha, odla_float32 beta, Val c, const Shape &out, const Id &id) { return one(ODLA_CALL(Gemm, a, ta, b, tb, alpha, beta, c, out, id)); }
  Val BatchMatMul(Val a, Flag ta, Val b, Flag tb, const Shape &out, const Id &id) { return one(ODLA_CALL(BatchMatMul, a, ta, b, tb, out, id)); }
  Val ReduceMean(Val x, odla_size_t n, const U32s &axes, Flag keep, const Shape &out, const Id &id) { return one(ODLA_CALL(ReduceMean, x, n, axes, keep, out, id)); }

  // Neural network (odla_ops_nn.h).
  Val Relu(Val x, const Id &id) { return one(ODLA_CALL(Relu, x, id)); }
  Val Sigmoid(Val x, const Id &id) { return one(ODLA_CALL(Sigmoid, x, id)); }
  Val LeakyRelu(Val x, odla_float32 alpha, const Id &id) { return one(ODLA_CALL(LeakyRelu, x, alpha, id)); }
  Val Softmax(Val x, odla_int32 axis, const Id &id) { return one(ODLA_CALL(Softmax, x, axis, id)); }
  Val Conv(Val x, odla_memory_layout xl, odla_uint32 group, Val w, odla_memory_layout wl, const U32s &strides, const U32s &dilations, const U32s &padFront, const U32s &padBack, Val bias, const Shape &out, const Id &id) { return one(ODLA_CALL(Conv, x, xl, group, w, wl, strides, dilations, padFront, padBack, bias, out, id)); }
  Val MaxPool(Val x, odla_memory_layout xl, const U32s &window, const U32s &strides, const U32s &padFront, const U32s &padBack, const Shape &out, const Id &id) { return one(ODLA_CALL(MaxPool, x, xl, window, strides, padFront, padBack, out, id)); }
  Val AveragePool(Val x, odla_memory_layout xl, const U32s &window, const U32s &strides, const U32s &padFront, const U32s &padBack, Flag padIncluded, const Shape &out, const Id &id) { return one(ODLA_CALL(AveragePool, x, xl, window, strides, padFront, padBack, padIncluded, out, id)); }
  Val BatchNormalization(Val x, odla_memory_layout xl, Val mean, Val var, odla_float32 eps, Val scale, Val offset, odla_float32 scalarScale, odla_float32 scalarOffset, const Id &id) { return one(ODLA_CALL(BatchNormalization, x, xl, mean, var, eps, scale, offset, scalarScale, scalarOffset, id)); }

  // Data movement (odla_ops_process.h).
  Val Concat(const Vals &xs, odla_int32 axis, const Shape &out, const Id &id) { return one(ODLA_CALL(Concat, xs, axis, out, id)); }
  Val Reshape(Val x, const Shape &out, const Id &id) { return one(ODLA_CALL(Reshape, x, out, id)); }
  Val Transpose(Val x, const Shape &perm, const Shape &out, const Id &id) { return one(ODLA_CALL(Transpose, x, perm, out, id)); }
  Val Pad(Val x, const U32s &front, const U32s &back, const Shape &out, const Id &id) { return one(ODLA_CALL(Pad, x, front, back, out, id)); }
  Val Gather(Val x, Val indices, odla_int32 axis, const Shape &out, const Id &id) { return one(ODLA_CALL(Gather, x, indices, axis, out, id)); }
#undef ODLA_CALL

  // Says that nothing uses a value the graph must still create (an unused graph input).
  virtual void markUnused(Val) {}

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
  static Arg toArg(const Shape &v) { return v; }
  static Arg toArg(const VType &v) { return v; }
  static Arg toArg(Flag v) { return v; }
  static Arg toArg(const Data &v) { return v; }
  static Arg toArg(const Str &v) { return v; }
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

  template <auto Fn, class... A> std::vector<Val> call(const char *function, const A &...args) {
    Call c{function, returnsOf(Fn), {toArg(args)...},
           [&](Binder &b) { b.take(Fn(b.conv(args)...)); }};
    return emit(c);
  }
  static Val one(const std::vector<Val> &results) { return results.empty() ? Val{} : results[0]; }
};

} // namespace odlac::lower
