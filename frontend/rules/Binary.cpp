// Import rules for broadcasting binary and variadic ONNX ops: arithmetic, comparisons, logic,
// Where, Min/Max/Sum/Mean, PRelu. Models older than opset 7 arrive upgraded to opset 7
// (legacy broadcast=1/axis attributes already turned into numpy broadcasting by libonnx's
// version converter), so the first rows start at 7.
#include "Rules.h"

#include "ops/OpDef.h"

namespace odlac {
namespace {

// Max, Min, Sum: 1 to N inputs, folded left into a chain of binary IR ops (numpy broadcasting
// is associative, so the chain broadcasts all inputs together).
template <const char *IrOp> Status importVariadicChain(ImportCtx &ctx) {
  if (ctx.numInputs() < 1)
    return ctx.fail("takes 1 or more inputs, got 0");
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + std::to_string(i) + " is empty; every input is required");
  Value *acc = ctx.input(0);
  if (ctx.numInputs() == 1) {
    // One input is the identity, but its element type must still be one the op accepts.
    const OperandDef &od = findOp(IrOp)->operands[0];
    if (!(od.types & maskOf(acc->dtype())))
      return ctx.fail(std::string("input 0 has element type ") + dtypeName(acc->dtype()) +
                      ", which " + IrOp + " does not support");
    ctx.setOutput(0, acc);
    return Status::ok();
  }
  for (int i = 1; i < ctx.numInputs(); ++i) {
    bool last = i + 1 == ctx.numInputs();
    auto out = ctx.emit(IrOp, {acc, ctx.input(i)}, {},
                        last ? "" : ctx.tempName(std::string(IrOp) + std::to_string(i)));
    if (!out)
      return out.takeStatus();
    acc = *out;
  }
  ctx.setOutput(0, acc);
  return Status::ok();
}

constexpr char kMax[] = "Max", kMin[] = "Min", kAdd[] = "Add";

// PRelu-7 and -8. PRelu-6 applied a slope of C values per channel (axis 1), and libonnx's
// 6→7 adapter keeps such a slope as it is; a 1-D slope that matches x's axis 1 but does not
// broadcast to x numpy-style is therefore read as per-channel and reshaped to [C,1,...,1].
// Anything else goes to the PRelu row, which checks unidirectional broadcasting.
Status importPRelu7(ImportCtx &ctx) {
  Value *x = ctx.input(0), *slope = ctx.input(1);
  const Dims &xd = x->dims(), &sd = slope->dims();
  bool numpy = xd.size() >= sd.size();
  for (size_t i = 0; numpy && i < sd.size(); ++i) {
    int64_t d = sd[sd.size() - 1 - i];
    numpy = d == 1 || d == xd[xd.size() - 1 - i];
  }
  if (!numpy && sd.size() == 1 && xd.size() >= 2 && sd[0] == xd[1]) {
    Dims perChannel(xd.size() - 1, 1);
    perChannel[0] = sd[0];
    auto r = ctx.reshape(slope, perChannel, ctx.tempName("slope"));
    if (!r)
      return r.takeStatus();
    slope = *r;
  }
  auto out = ctx.emit("PRelu", {x, slope});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// Mod-10 to -27 define fmod=0 (the divisor's sign) for integers only; Mod-28 defines it for
// floating-point operands too, which is the IR's Mod.
Status importMod10(ImportCtx &ctx) {
  int64_t fmod = ctx.attrInt("fmod", 0);
  DType t = ctx.input(0)->dtype();
  if (fmod == 0 && isFloat(t))
    return ctx.fail(std::string("fmod=0 is not defined for ") + dtypeName(t) +
                    " operands before Mod-28 (Mod-10 to -27 require fmod=1 for floating-point "
                    "types)");
  auto out = ctx.emit("Mod", {ctx.input(0), ctx.input(1)}, {{"fmod", fmod}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

// BitShift-11 to -27 take unsigned integers; BitShift-28 adds the signed ones (arithmetic
// right shift), which is the IR's Shift.
Status importBitShift11(ImportCtx &ctx) {
  DType t = ctx.input(0)->dtype();
  if (maskOf(t) & kSignedIntTypes)
    return ctx.fail(std::string("operand 'X' has element type ") + dtypeName(t) +
                    ", which BitShift takes only from opset 28 (BitShift-11 takes u8, u16, u32, "
                    "u64)");
  auto out = ctx.emit("Shift", {ctx.input(0), ctx.input(1)},
                      {{"direction", ctx.attrString("direction", "")}});
  if (!out)
    return out.takeStatus();
  ctx.setOutput(0, *out);
  return Status::ok();
}

const std::vector<ImportRule> kRules = {
    {"Add", 7, "Add", {}, nullptr},
    {"Sub", 7, "Sub", {}, nullptr},
    {"Mul", 7, "Mul", {}, nullptr},
    {"Div", 7, "Div", {}, nullptr},
    {"Pow", 7, "Pow", {}, nullptr}, // from 12 the exponent may have another type
    {"Mod", 10, nullptr, reads({"fmod"}), importMod10},
    {"Mod", 28, "Mod", {{"fmod", "fmod", AttrValue(int64_t{0})}}, nullptr},
    {"BitShift", 11, nullptr, reads({"direction"}), importBitShift11},
    {"BitShift", 28, "Shift", {{"direction", "direction", std::nullopt}}, nullptr},
    {"Max", 7, nullptr, {}, importVariadicChain<kMax>},
    {"Min", 7, nullptr, {}, importVariadicChain<kMin>},
    {"Sum", 7, nullptr, {}, importVariadicChain<kAdd>},
    {"Mean", 7, "Mean", {}, nullptr},
    {"PRelu", 7, nullptr, {}, importPRelu7},
    {"PRelu", 9, "PRelu", {}, nullptr},
    {"Equal", 7, "Equal", {}, nullptr},
    {"Less", 7, "Less", {}, nullptr},
    {"LessOrEqual", 12, "LessOrEqual", {}, nullptr},
    {"Greater", 7, "Greater", {}, nullptr},
    {"GreaterOrEqual", 12, "GreaterOrEqual", {}, nullptr},
    {"And", 7, "And", {}, nullptr},
    {"Or", 7, "Or", {}, nullptr},
    {"Xor", 7, "Xor", {}, nullptr},
    {"BitwiseAnd", 18, "BitwiseAnd", {}, nullptr},
    {"BitwiseOr", 18, "BitwiseOr", {}, nullptr},
    {"BitwiseXor", 18, "BitwiseXor", {}, nullptr},
    {"Where", 9, "Select", {}, nullptr},
};

} // namespace

const std::vector<ImportRule> &binaryRules() { return kRules; }

} // namespace odlac
