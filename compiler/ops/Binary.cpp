// Broadcasting binary and variadic elementwise ops: arithmetic (and later logic and
// comparisons). Results broadcast numpy-style.
#include "lower/Lowering.h"
#include "ops/Families.h"
#include "ops/InferUtil.h"

namespace odlac {
namespace {

constexpr DTypeMask kArith = kNumericTypes & ~(maskOf(DType::F16) | maskOf(DType::BF16));

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

#define BINARY(Name) [](LowerCtx &c) { c.setOut(0, c.sink().Name(c.in(0), c.in(1), c.outId(0))); }

const std::vector<OpDef> kOps = {
    {"Add", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kCommutative | kLayoutAgnostic, inferBroadcast, BINARY(Add)},
    {"Sub", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kLayoutAgnostic, inferBroadcast, BINARY(Sub)},
    {"Mul", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kCommutative | kLayoutAgnostic, inferBroadcast, BINARY(Mul)},
    {"Div", {{"a", OperandDef::Required, kArith}, {"b", OperandDef::Required, kArith}}, 1, {},
     FusionClass::Broadcast, kLayoutAgnostic, inferBroadcast, BINARY(Div)},
};

#undef BINARY

} // namespace

const std::vector<OpDef> &binaryOps() { return kOps; }

} // namespace odlac
