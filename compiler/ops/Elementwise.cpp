// Elementwise ops: unary math and activations, and broadcasting binary arithmetic.
#include "lower/Lowering.h"
#include "ops/Families.h"
#include "ops/InferUtil.h"

namespace odlac {
namespace {

constexpr DTypeMask kArith = kNumericTypes & ~(maskOf(DType::F16) | maskOf(DType::BF16));
constexpr DTypeMask kFloatCompute = maskOf(DType::F32) | maskOf(DType::F64);

Status inferUnary(InferCtx &c) {
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferBroadcast(InferCtx &c) {
  if (c.in(0).dtype != c.in(1).dtype)
    return c.fail(std::string("operand element types differ: ") + dtypeName(c.in(0).dtype) +
                  " and " + dtypeName(c.in(1).dtype));
  auto dims = broadcastDims(c.in(0).dims, c.in(1).dims);
  if (!dims)
    return c.fail("shapes " + dimsToString(c.in(0).dims) + " and " + dimsToString(c.in(1).dims) +
                  " do not broadcast");
  c.setOut(0, TensorType{c.in(0).dtype, *dims});
  return Status::ok();
}

Status inferClamp(InferCtx &c) {
  if (c.f("min") > c.f("max"))
    return c.fail("min " + std::to_string(c.f("min")) + " exceeds max " + std::to_string(c.f("max")));
  return inferUnary(c);
}

float attrF(const LowerCtx &c, const char *name) { return static_cast<float>(c.node().f(name)); }

#define UNARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.outId(0))); }
#define BINARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.in(1), c.outId(0))); }

const std::vector<OpDef> kOps = {
    {"Identity", {{"x"}}, 1, {}, FusionClass::Injective, kLayoutAgnostic | kShapeOnly, inferUnary,
     [](LowerCtx &c) { c.setOut(0, c.sink().CloneValue(c.in(0), c.outId(0))); }},
    {"Relu", {{"x", OperandDef::Required, kFloatCompute}}, 1, {}, FusionClass::Elementwise,
     kLayoutAgnostic, inferUnary, UNARY(Relu)},
    {"Sigmoid", {{"x", OperandDef::Required, kFloatCompute}}, 1, {}, FusionClass::Elementwise,
     kLayoutAgnostic, inferUnary, UNARY(Sigmoid)},
    {"Tanh", {{"x", OperandDef::Required, kFloatCompute}}, 1, {}, FusionClass::Elementwise,
     kLayoutAgnostic, inferUnary, UNARY(Tanh)},
    {"LeakyRelu", {{"x", OperandDef::Required, kFloatCompute}}, 1,
     {{"alpha", AttrKind::Float, AttrValue(0.01)}}, FusionClass::Elementwise, kLayoutAgnostic,
     inferUnary,
     [](LowerCtx &c) { c.setOut(0, c.sink().LeakyRelu(c.in(0), attrF(c, "alpha"), c.outId(0))); }},
    {"Clamp", {{"x", OperandDef::Required, kFloatCompute}}, 1,
     {{"min", AttrKind::Float, std::nullopt}, {"max", AttrKind::Float, std::nullopt}},
     FusionClass::Elementwise, kLayoutAgnostic, inferClamp,
     [](LowerCtx &c) {
       c.setOut(0, c.sink().Clamp(c.in(0), attrF(c, "min"), attrF(c, "max"), c.outId(0)));
     }},
    {"Add", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kCommutative | kLayoutAgnostic, inferBroadcast, BINARY(Add)},
    {"Sub", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kLayoutAgnostic, inferBroadcast, BINARY(Sub)},
    {"Mul", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kCommutative | kLayoutAgnostic, inferBroadcast, BINARY(Mul)},
    {"Div", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kLayoutAgnostic, inferBroadcast, BINARY(Div)},
};

#undef UNARY
#undef BINARY

} // namespace

const std::vector<OpDef> &elementwiseOps() { return kOps; }

} // namespace odlac
