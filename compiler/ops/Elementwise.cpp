// Elementwise unary ops: math and activations, Identity.
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

constexpr DTypeMask kFloatCompute = maskOf(DType::F32) | maskOf(DType::F64);

Status inferUnary(InferCtx &c) {
  c.setOut(0, c.in(0));
  return Status::ok();
}

Status inferClamp(InferCtx &c) {
  if (c.f("min") > c.f("max"))
    return c.fail("min " + std::to_string(c.f("min")) + " exceeds max " + std::to_string(c.f("max")));
  return inferUnary(c);
}

float attrF(const LowerCtx &c, const char *name) { return static_cast<float>(c.node().f(name)); }

#define UNARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.outId(0))); }

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
};

#undef UNARY

} // namespace

const std::vector<OpDef> &elementwiseOps() { return kOps; }

} // namespace odlac
