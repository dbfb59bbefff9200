// Broadcasting binary and variadic elementwise ops: arithmetic, comparisons, logic, bitwise
// logic, selection. Operands broadcast numpy-style and share one element type (except Pow's
// exponent); each op lowers to the ODLA function of the same name (Select: odla_Select; the
// bitwise ops: the extensions odla_ExtBitwise*). The reference backend
// (runtime_stubs/reference/ops_binary*.c) documents the semantics of edge cases: integer
// overflow wraps, integer division and remainder by zero give 0, Max/Min propagate NaN.
#include "lower/Lowering.h"
#include "ops/InferUtil.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

constexpr DTypeMask kBool = maskOf(DType::Bool);
constexpr int kMaxMeanInputs = ODLA_MAX_OUTPUTS; // what one odla_values holds

Status sameTypes(InferCtx &c) {
  for (int i = 1; i < c.numInputs(); ++i)
    if (c.in(i).dtype != c.in(0).dtype)
      return c.fail("operand element types differ: " + std::string(dtypeName(c.in(0).dtype)) +
                    " (operand 0) and " + dtypeName(c.in(i).dtype) + " (operand " +
                    std::to_string(i) + ")");
  return Status::ok();
}

// The numpy broadcast of every operand's dims, from operand `first` on.
Expected<Dims> broadcastAll(InferCtx &c, int first = 0) {
  Dims dims = c.in(first).dims;
  std::string shapes = dimsToString(dims);
  bool ok = true;
  for (int i = first + 1; i < c.numInputs(); ++i) {
    shapes += " and " + dimsToString(c.in(i).dims);
    auto d = broadcastDims(dims, c.in(i).dims);
    if (!d)
      ok = false;
    else
      dims = *d;
  }
  if (!ok)
    return c.fail("shapes " + shapes + " do not broadcast");
  return dims;
}

// Operands of one type broadcast together; the result has their type (or bool).
template <bool BoolResult> Status inferBroadcast(InferCtx &c) {
  if (Status s = sameTypes(c); !s.isOk())
    return s;
  auto dims = broadcastAll(c);
  if (!dims)
    return dims.takeStatus();
  c.setOut(0, TensorType{BoolResult ? DType::Bool : c.in(0).dtype, *dims});
  return Status::ok();
}

// The exponent may have another numeric type; the result has the base's type.
Status inferPow(InferCtx &c) {
  auto dims = broadcastAll(c);
  if (!dims)
    return dims.takeStatus();
  c.setOut(0, TensorType{c.in(0).dtype, *dims});
  return Status::ok();
}

// fmod=1: remainder with the dividend's sign (C's fmod); fmod=0: with the divisor's sign
// (floored, ONNX Mod-28's definition for floating-point types too).
Status inferMod(InferCtx &c) {
  int64_t fmod = c.i("fmod");
  if (fmod != 0 && fmod != 1)
    return c.fail("attribute fmod=" + std::to_string(fmod) + " is not supported (0 or 1)");
  return inferBroadcast<false>(c);
}

Status inferShift(InferCtx &c) {
  const std::string &dir = c.node().s("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    return c.fail("attribute direction='" + dir + "' is not supported (LEFT or RIGHT)");
  return inferBroadcast<false>(c);
}

// The slope broadcasts to x (unidirectionally): the result has x's type and shape.
Status inferPRelu(InferCtx &c) {
  if (Status s = sameTypes(c); !s.isOk())
    return s;
  auto dims = broadcastDims(c.in(0).dims, c.in(1).dims);
  if (!dims || *dims != c.in(0).dims)
    return c.fail("slope " + dimsToString(c.in(1).dims) + " does not broadcast to x " +
                  dimsToString(c.in(0).dims) + " (unidirectionally)");
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferSelect(InferCtx &c) {
  if (c.in(1).dtype != c.in(2).dtype)
    return c.fail("operand element types differ: " + std::string(dtypeName(c.in(1).dtype)) +
                  " (a) and " + dtypeName(c.in(2).dtype) + " (b)");
  auto dims = broadcastAll(c);
  if (!dims)
    return dims.takeStatus();
  c.setOut(0, TensorType{c.in(1).dtype, *dims});
  return Status::ok();
}

Status inferMean(InferCtx &c) {
  if (c.numInputs() > kMaxMeanInputs)
    return c.fail("takes at most " + std::to_string(kMaxMeanInputs) +
                  " operands (odla_values), got " + std::to_string(c.numInputs()));
  return inferBroadcast<false>(c);
}

#define BINARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.in(1), c.outId(0))); }

// Two operands named a and b of the given types.
std::vector<OperandDef> ab(DTypeMask types) {
  return {{"a", OperandDef::Required, types}, {"b", OperandDef::Required, types}};
}

constexpr unsigned kCommutativeEw = kCommutative | kLayoutAgnostic;
constexpr FusionClass kBcast = FusionClass::Broadcast;

} // namespace

namespace ops {

// Arithmetic.
const OpDef Add = {"Add",          ab(kNumericTypes),     1,          {}, kBcast,
                   kCommutativeEw, inferBroadcast<false>, BINARY(Add)};
const OpDef Sub = {"Sub",           ab(kNumericTypes),     1,          {}, kBcast,
                   kLayoutAgnostic, inferBroadcast<false>, BINARY(Sub)};
const OpDef Mul = {"Mul",          ab(kNumericTypes),     1,          {}, kBcast,
                   kCommutativeEw, inferBroadcast<false>, BINARY(Mul)};
const OpDef Div = {"Div",           ab(kNumericTypes),     1,          {}, kBcast,
                   kLayoutAgnostic, inferBroadcast<false>, BINARY(Div)};
const OpDef Pow = {"Pow",
                   {{"base", OperandDef::Required, kNumericTypes},
                    {"exponent", OperandDef::Required, kNumericTypes}},
                   1,
                   {},
                   kBcast,
                   kLayoutAgnostic,
                   inferPow,
                   BINARY(Pow)};
const OpDef Mod = {"Mod",
                   ab(kNumericTypes),
                   1,
                   {{"fmod", AttrKind::Int, AttrValue(int64_t{0})}},
                   kBcast,
                   kLayoutAgnostic,
                   inferMod,
                   [](LowerCtx &c) {
                     c.setOut(0, c.sink().Mod(c.in(0), c.in(1), c.node().i("fmod"), c.outId(0)));
                   }};
const OpDef Max = {"Max",          ab(kNumericTypes),     1,          {}, kBcast,
                   kCommutativeEw, inferBroadcast<false>, BINARY(Max)};
const OpDef Min = {"Min",          ab(kNumericTypes),     1,          {}, kBcast,
                   kCommutativeEw, inferBroadcast<false>, BINARY(Min)};
const OpDef Mean = {
    "Mean",    {{"x", OperandDef::Variadic, kFloatTypes}},
    1,         {},
    kBcast,    kCommutativeEw,
    inferMean, [](LowerCtx &c) { c.setOut(0, c.sink().Mean(c.ins(), c.outId(0))); }};
const OpDef Shift = {"Shift",
                     ab(kIntTypes),
                     1,
                     {{"direction", AttrKind::String, std::nullopt}},
                     kBcast,
                     kLayoutAgnostic,
                     inferShift,
                     [](LowerCtx &c) {
                       bool left = c.node().s("direction") == "LEFT";
                       c.setOut(0, c.sink().Shift(c.in(0), c.in(1), lower::Flag{left}, c.outId(0)));
                     }};
const OpDef PRelu = {
    "PRelu",
    {{"x", OperandDef::Required, kNumericTypes}, {"slope", OperandDef::Required, kNumericTypes}},
    1,
    {},
    kBcast,
    kLayoutAgnostic,
    inferPRelu,
    BINARY(PRelu)};
// Comparisons (bool results).
const OpDef Equal = {
    "Equal",      ab(kAllTypes | kStringTypes), 1, {}, kBcast, kCommutativeEw, inferBroadcast<true>,
    BINARY(Equal)};
const OpDef NotEqual = {"NotEqual",           ab(kAllTypes),   1, {}, kBcast, kCommutativeEw,
                        inferBroadcast<true>, BINARY(NotEqual)};
const OpDef Less = {"Less",          ab(kNumericTypes),    1,           {}, kBcast,
                    kLayoutAgnostic, inferBroadcast<true>, BINARY(Less)};
const OpDef LessOrEqual = {"LessOrEqual",        ab(kNumericTypes),  1, {}, kBcast, kLayoutAgnostic,
                           inferBroadcast<true>, BINARY(LessOrEqual)};
const OpDef Greater = {
    "Greater",      ab(kNumericTypes), 1, {}, kBcast, kLayoutAgnostic, inferBroadcast<true>,
    BINARY(Greater)};
const OpDef GreaterOrEqual = {
    "GreaterOrEqual",     ab(kNumericTypes),     1, {}, kBcast, kLayoutAgnostic,
    inferBroadcast<true>, BINARY(GreaterOrEqual)};
// Logic on bool.
const OpDef And = {"And",      ab(kBool), 1, {}, kBcast, kCommutativeEw, inferBroadcast<true>,
                   BINARY(And)};
const OpDef Or = {"Or", ab(kBool), 1, {}, kBcast, kCommutativeEw, inferBroadcast<true>, BINARY(Or)};
const OpDef Xor = {"Xor",      ab(kBool), 1, {}, kBcast, kCommutativeEw, inferBroadcast<true>,
                   BINARY(Xor)};
// Bitwise on integers (extensions: ODLA's And, Or and Xor are logical).
const OpDef BitwiseAnd = {
    "BitwiseAnd",          ab(kIntTypes),        1, {}, kBcast, kCommutativeEw,
    inferBroadcast<false>, BINARY(ExtBitwiseAnd)};
const OpDef BitwiseOr = {"BitwiseOr",           ab(kIntTypes),       1, {}, kBcast, kCommutativeEw,
                         inferBroadcast<false>, BINARY(ExtBitwiseOr)};
const OpDef BitwiseXor = {
    "BitwiseXor",          ab(kIntTypes),        1, {}, kBcast, kCommutativeEw,
    inferBroadcast<false>, BINARY(ExtBitwiseXor)};
// Selection: condition ? a : b.
const OpDef Select = {
    "Select",
    {{"condition", OperandDef::Required, kBool},
     {"a", OperandDef::Required, kAllTypes},
     {"b", OperandDef::Required, kAllTypes}},
    1,
    {},
    kBcast,
    kLayoutAgnostic,
    inferSelect,
    [](LowerCtx &c) {
      c.setOut(0, c.sink().Select(c.in(0), c.in(1), c.in(2), c.outShape(0), c.outId(0)));
    }};

} // namespace ops

namespace {

#undef BINARY

} // namespace

} // namespace odlac
