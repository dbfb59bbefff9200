// Import rules for the training optimizers of ONNX's ai.onnx.preview.training domain
// (version 1): Adagrad, Momentum and Adam, each decomposed into elementwise IR ops (Cast,
// Add, Sub, Mul, Div, Pow, Sqrt, Greater, Select) applied to every optimized tensor.
#include "Rules.h"

#include "ops/OpDef.h"

#include <cstring>

namespace odlac {
namespace {

// Builds the elementwise arithmetic of one optimizer node: scalars in the element type of
// the optimized tensors, binary ops with temporary names.
class Arith {
public:
  Arith(ImportCtx &ctx, DType t) : ctx_(ctx), t_(t) {}

  Value *scalar(const std::string &name, double v) {
    unsigned char bytes[8];
    if (t_ == DType::F64)
      std::memcpy(bytes, &v, 8);
    else {
      float f = static_cast<float>(v);
      std::memcpy(bytes, &f, 4);
    }
    return ctx_.constant(ctx_.tempName(name), TensorType{t_, {}}, bytes);
  }
  Expected<Value *> op(const char *irOp, Value *a, Value *b, const std::string &name) {
    return ctx_.emit(irOp, {a, b}, {}, name.empty() ? ctx_.tempName(tmp()) : name);
  }
  Expected<Value *> unary(const char *irOp, Value *a, AttrMap attrs = {}) {
    return ctx_.emit(irOp, {a}, std::move(attrs), ctx_.tempName(tmp()));
  }
  Expected<Value *> cast(Value *a) {
    return a->dtype() == t_ ? Expected<Value *>(a)
                            : unary("Cast", a, {{"to", std::string(dtypeName(t_))}});
  }

private:
  std::string tmp() { return "t" + std::to_string(next_++); }
  ImportCtx &ctx_;
  DType t_;
  int next_ = 0;
};

#define TRY(var, expr)                                                                             \
  auto var##_e = (expr);                                                                           \
  if (!var##_e)                                                                                    \
    return var##_e.takeStatus();                                                                   \
  Value *var = *var##_e // NOLINT(bugprone-macro-parentheses): `var` names the variable

// The optimized tensors: inputs R, T, then `groups` groups of n tensors each; outputs
// `groups - 1` groups (the updated X and states). Checks the counts and types.
Expected<int> tensorCount(ImportCtx &ctx, int groups) {
  int rest = ctx.numInputs() - 2;
  if (rest < groups || rest % groups != 0 || ctx.numOutputs() != rest / groups * (groups - 1))
    return ctx.fail("takes R, T and " + str(groups) + " groups of n tensors and returns " +
                    str(groups - 1) + " groups; got " + str(ctx.numInputs()) + " inputs and " +
                    str(ctx.numOutputs()) + " outputs");
  int n = rest / groups;
  // The tensors are a variadic parameter, whose names the schema check lets be empty.
  for (int i = 2; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + str(i) + " is empty; every optimized tensor is required");
  DType t = ctx.input(2)->dtype();
  if (t != DType::F32 && t != DType::F64)
    return ctx.fail("the optimized tensors must be float32 or float64, got " +
                    std::string(dtypeName(t)));
  for (int i = 2; i < ctx.numInputs(); ++i)
    if (ctx.input(i)->dtype() != t || ctx.input(i)->dims() != ctx.input(2 + (i - 2) % n)->dims())
      return ctx.fail("input " + str(i) + " " + toString(ctx.input(i)->type()) +
                      " must have the type of the tensor it updates, " +
                      toString(ctx.input(2 + (i - 2) % n)->type()));
  if (ctx.input(0)->type().numElements() != 1 || ctx.input(1)->type().numElements() != 1 ||
      ctx.input(1)->dtype() != DType::I64)
    return ctx.fail("R " + toString(ctx.input(0)->type()) + " must be a float scalar and T " +
                    toString(ctx.input(1)->type()) + " an int64 scalar");
  return n;
}

// A scalar operand reshaped to rank 0 and cast to the tensors' type.
Expected<Value *> scalarOperand(ImportCtx &ctx, Arith &a, int i, const char *name) {
  Value *v = ctx.input(i);
  if (v->type().rank() != 0) {
    auto r = ctx.reshape(v, {}, ctx.tempName(name));
    if (!r)
      return r.takeStatus();
    v = *r;
  }
  return a.cast(v);
}

// Adagrad: r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G; H' = H + G' * G';
// X' = X - r * G' / (sqrt(H') + epsilon).
Status importAdagrad(ImportCtx &ctx) {
  auto count = tensorCount(ctx, 3);
  if (!count)
    return count.takeStatus();
  int n = *count;
  Arith a(ctx, ctx.input(2)->dtype());
  TRY(R, scalarOperand(ctx, a, 0, "R"));
  TRY(T, scalarOperand(ctx, a, 1, "T"));
  TRY(decayed, a.op("Mul", T, a.scalar("decay", ctx.attrFloat("decay_factor", 0)), ""));
  TRY(denom, a.op("Add", decayed, a.scalar("one", 1), ""));
  TRY(r, a.op("Div", R, denom, ""));
  Value *norm = a.scalar("norm", ctx.attrFloat("norm_coefficient", 0));
  Value *eps = a.scalar("epsilon", ctx.attrFloat("epsilon", 1e-6));
  for (int i = 0; i < n; ++i) {
    Value *x = ctx.input(2 + i), *g = ctx.input(2 + n + i), *h = ctx.input(2 + 2 * n + i);
    TRY(nx, a.op("Mul", norm, x, ""));
    TRY(greg, a.op("Add", nx, g, ""));
    TRY(g2, a.op("Mul", greg, greg, ""));
    TRY(hNew, a.op("Add", h, g2, ctx.wantsOutput(n + i) ? ctx.outputName(n + i) : ""));
    TRY(root, a.unary("Sqrt", hNew));
    TRY(adaptive, a.op("Add", root, eps, ""));
    TRY(step, a.op("Mul", r, greg, ""));
    TRY(update, a.op("Div", step, adaptive, ""));
    TRY(xNew, a.op("Sub", x, update, ctx.wantsOutput(i) ? ctx.outputName(i) : ""));
    ctx.setOutput(i, xNew);
    ctx.setOutput(n + i, hNew);
  }
  return Status::ok();
}

// Momentum: G' = norm_coefficient * X + G; b = T > 0 ? beta : 1; V' = alpha * V + b * G';
// X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov).
Status importMomentum(ImportCtx &ctx) {
  std::string mode = ctx.attrString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return ctx.fail("mode '" + mode + "' is not one of standard, nesterov");
  auto count = tensorCount(ctx, 3);
  if (!count)
    return count.takeStatus();
  int n = *count;
  Arith a(ctx, ctx.input(2)->dtype());
  TRY(R, scalarOperand(ctx, a, 0, "R"));
  TRY(T, scalarOperand(ctx, a, 1, "T"));
  Value *alpha = a.scalar("alpha", ctx.attrFloat("alpha", 0));
  Value *norm = a.scalar("norm", ctx.attrFloat("norm_coefficient", 0));
  TRY(started, a.op("Greater", T, a.scalar("zero", 0), ""));
  auto betaAdj =
      ctx.emit("Select", {started, a.scalar("beta", ctx.attrFloat("beta", 0)), a.scalar("one", 1)},
               {}, ctx.tempName("beta_adjusted"));
  if (!betaAdj)
    return betaAdj.takeStatus();
  for (int i = 0; i < n; ++i) {
    Value *x = ctx.input(2 + i), *g = ctx.input(2 + n + i), *v = ctx.input(2 + 2 * n + i);
    TRY(nx, a.op("Mul", norm, x, ""));
    TRY(greg, a.op("Add", nx, g, ""));
    TRY(av, a.op("Mul", alpha, v, ""));
    TRY(bg, a.op("Mul", *betaAdj, greg, ""));
    TRY(vNew, a.op("Add", av, bg, ctx.wantsOutput(n + i) ? ctx.outputName(n + i) : ""));
    Value *direction = vNew;
    if (mode == "nesterov") {
      TRY(avNew, a.op("Mul", alpha, vNew, ""));
      TRY(d, a.op("Add", greg, avNew, ""));
      direction = d;
    }
    TRY(step, a.op("Mul", R, direction, ""));
    TRY(xNew, a.op("Sub", x, step, ctx.wantsOutput(i) ? ctx.outputName(i) : ""));
    ctx.setOutput(i, xNew);
    ctx.setOutput(n + i, vNew);
  }
  return Status::ok();
}

// Adam: G' = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * G';
// H' = beta * H + (1 - beta) * G'^2; r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
// X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon)).
Status importAdam(ImportCtx &ctx) {
  auto count = tensorCount(ctx, 4);
  if (!count)
    return count.takeStatus();
  int n = *count;
  Arith a(ctx, ctx.input(2)->dtype());
  double alphaV = ctx.attrFloat("alpha", 0.9), betaV = ctx.attrFloat("beta", 0.999);
  TRY(R, scalarOperand(ctx, a, 0, "R"));
  TRY(T, scalarOperand(ctx, a, 1, "T"));
  Value *one = a.scalar("one", 1);
  TRY(alphaT, a.op("Pow", a.scalar("alpha", alphaV), T, ""));
  TRY(betaT, a.op("Pow", a.scalar("beta", betaV), T, ""));
  TRY(num0, a.op("Sub", one, betaT, ""));
  TRY(num, a.unary("Sqrt", num0));
  TRY(den, a.op("Sub", one, alphaT, ""));
  TRY(rNum, a.op("Mul", R, num, ""));
  TRY(rBias, a.op("Div", rNum, den, ""));
  TRY(started, a.op("Greater", T, a.scalar("zero", 0), ""));
  auto r = ctx.emit("Select", {started, rBias, R}, {}, ctx.tempName("r_adjusted"));
  if (!r)
    return r.takeStatus();
  Value *norm = a.scalar("norm", ctx.attrFloat("norm_coefficient", 0));
  Value *eps = a.scalar("epsilon", ctx.attrFloat("epsilon", 1e-6));
  Value *alpha = a.scalar("alpha_v", alphaV), *alpha1 = a.scalar("one_minus_alpha", 1 - alphaV);
  Value *beta = a.scalar("beta_h", betaV), *beta1 = a.scalar("one_minus_beta", 1 - betaV);
  Value *post = a.scalar("post", 1 - ctx.attrFloat("norm_coefficient_post", 0));
  for (int i = 0; i < n; ++i) {
    Value *x = ctx.input(2 + i), *g = ctx.input(2 + n + i), *v = ctx.input(2 + 2 * n + i),
          *h = ctx.input(2 + 3 * n + i);
    TRY(nx, a.op("Mul", norm, x, ""));
    TRY(greg, a.op("Add", nx, g, ""));
    TRY(av, a.op("Mul", alpha, v, ""));
    TRY(ag, a.op("Mul", alpha1, greg, ""));
    TRY(vNew, a.op("Add", av, ag, ctx.wantsOutput(n + i) ? ctx.outputName(n + i) : ""));
    TRY(bh, a.op("Mul", beta, h, ""));
    TRY(g2, a.op("Mul", greg, greg, ""));
    TRY(bg, a.op("Mul", beta1, g2, ""));
    TRY(hNew, a.op("Add", bh, bg, ctx.wantsOutput(2 * n + i) ? ctx.outputName(2 * n + i) : ""));
    TRY(root, a.unary("Sqrt", hNew));
    TRY(hSqrt, a.op("Add", root, eps, ""));
    TRY(dir, a.op("Div", vNew, hSqrt, ""));
    TRY(step, a.op("Mul", *r, dir, ""));
    TRY(xNew, a.op("Sub", x, step, ""));
    TRY(xFinal, a.op("Mul", post, xNew, ctx.wantsOutput(i) ? ctx.outputName(i) : ""));
    ctx.setOutput(i, xFinal);
    ctx.setOutput(n + i, vNew);
    ctx.setOutput(2 * n + i, hNew);
  }
  return Status::ok();
}

#undef TRY

constexpr const char *kTraining = "ai.onnx.preview.training";

const std::vector<ImportRule> kRules = {
    {"Adagrad", 1, nullptr, reads({"decay_factor", "epsilon", "norm_coefficient"}), importAdagrad,
     nullptr, kTraining},
    {"Momentum", 1, nullptr, reads({"alpha", "beta", "mode", "norm_coefficient"}), importMomentum,
     nullptr, kTraining},
    {"Adam", 1, nullptr,
     reads({"alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"}), importAdam,
     nullptr, kTraining},
};

} // namespace

const std::vector<ImportRule> &trainingRules() { return kRules; }

} // namespace odlac
