// Import rules for the recurrent ONNX ops RNN, LSTM and GRU (opsets 7 and 14). Each becomes
// one IR op of the same name (compiler/ops/Recurrent.cpp) with results Y, Y_h (and Y_c);
// layout=1 (batch-major, opset 14) is imported as transposes around it. Activation names
// become odla_ext_rnn_activation codes and their alpha/beta a constant operand, resolved as
// onnxruntime does: names compare case-insensitively; activation_alpha and activation_beta
// are consumed in order, only by the activations that take that parameter, and the ONNX
// operator's default fills in when a list runs out. ONNX's default activations (spelled out
// or not) leave the IR op on the core ODLA op.
#include "Rules.h"

#include "ops/Activation.h"
#include "ops/OpDef.h"

#include <ODLA/odla_ext.h>

#include <cfloat>

namespace odlac {
namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

// ONNX's default activations of one direction.
std::vector<Activation> defaultActivations(const std::string &op) {
  if (op == "LSTM")
    return {Activation::Sigmoid, Activation::Tanh, Activation::Tanh};
  if (op == "GRU")
    return {Activation::Sigmoid, Activation::Tanh};
  return {Activation::Tanh};
}

// The node's activations: odla_ext_rnn_activation codes per direction and their alpha and
// beta, or nothing when they are ONNX's defaults.
struct Activations {
  std::vector<int64_t> codes; // empty: ONNX's defaults
  std::vector<float> params;  // alpha, beta per activation; empty: none takes any
};

Expected<Activations> resolveActivations(ImportCtx &ctx, int64_t directions) {
  const std::string &op = ctx.proto().op_type();
  std::vector<Activation> defaults;
  for (int64_t d = 0; d < directions; ++d)
    for (Activation a : defaultActivations(op))
      defaults.push_back(a);
  const onnx::AttributeProto *a = ctx.findAttr("activations");
  if (!a)
    return Activations{};
  std::vector<std::string> names(a->strings().begin(), a->strings().end());
  if (names.size() != defaults.size())
    return ctx.fail("activations=" + joined(names) + " has " + str(names.size()) + " entries; " +
                    op + " needs " + str(defaults.size() / directions) + " per direction, " +
                    str(defaults.size()) + " in all");
  std::vector<float> alphas =
      ctx.hasAttr("activation_alpha")
          ? std::vector<float>(ctx.findAttr("activation_alpha")->floats().begin(),
                               ctx.findAttr("activation_alpha")->floats().end())
          : std::vector<float>{};
  std::vector<float> betas =
      ctx.hasAttr("activation_beta")
          ? std::vector<float>(ctx.findAttr("activation_beta")->floats().begin(),
                               ctx.findAttr("activation_beta")->floats().end())
          : std::vector<float>{};
  size_t nextAlpha = 0, nextBeta = 0;
  bool isDefault = true, takesParams = false;
  Activations r;
  for (size_t i = 0; i < names.size(); ++i) {
    const ActivationDef *def = findRecurrentActivation(names[i]);
    if (!def)
      return ctx.fail("activations[" + str(i) + "]='" + names[i] +
                      "' is not an activation function ONNX defines for " + op);
    float alpha = def->alpha, beta = def->beta;
    if (def->usesAlpha && nextAlpha < alphas.size())
      alpha = alphas[nextAlpha++];
    if (def->usesBeta && nextBeta < betas.size())
      beta = betas[nextBeta++];
    isDefault &= def->id == defaults[i];
    takesParams |= def->usesAlpha || def->usesBeta;
    r.codes.push_back(def->rnn);
    r.params.push_back(alpha);
    r.params.push_back(beta);
  }
  if (isDefault)
    return Activations{};
  if (!takesParams)
    r.params.clear();
  return r;
}

// Creates the IR node with all its results (the ImportCtx emits single-result nodes only).
Expected<std::vector<Value *>> emitRecurrent(ImportCtx &ctx, const std::string &irOp,
                                             std::vector<Value *> operands, AttrMap attrs,
                                             const std::vector<std::string> &names) {
  const OpDef *op = findOp(irOp);
  if (!op)
    return ctx.fail("internal: no IR op " + irOp);
  std::vector<Value *> outs;
  for (const std::string &name : names)
    outs.push_back(ctx.graph().addValue(name, TensorType{}));
  Node *n =
      ctx.graph().addNode(*op, ctx.proto().name(), std::move(operands), outs, std::move(attrs));
  if (Status s = verifyAndInfer(*n))
    return s;
  return outs;
}

// A name for an intermediate value of this node, after its first named output (ONNX nodes
// often leave Y unnamed).
std::string tempName(const ImportCtx &ctx, const std::string &suffix) {
  for (int i = 0; i < ctx.numOutputs(); ++i)
    if (ctx.wantsOutput(i))
      return ctx.outputName(i) + "/" + suffix;
  return ctx.tempName(suffix);
}

Expected<Value *> transpose(ImportCtx &ctx, Value *v, std::vector<int64_t> perm,
                            const std::string &name) {
  return ctx.emit("Transpose", {v}, {{"perm", perm}}, name);
}

Status importRecurrent(ImportCtx &ctx) {
  const std::string op = ctx.proto().op_type();
  bool isLstm = op == "LSTM";
  int numResults = isLstm ? 3 : 2;
  std::string direction = ctx.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.fail("direction='" + direction +
                    "' is not supported (forward, reverse, bidirectional)");
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  auto activations = resolveActivations(ctx, directions);
  if (!activations)
    return activations.takeStatus();
  // clip: a positive bound; FLT_MAX or more clips nothing (0 in IR).
  double clip = 0.0;
  if (ctx.hasAttr("clip")) {
    clip = ctx.attrFloat("clip", 0.0);
    if (!(clip > 0))
      return ctx.fail("clip=" + std::to_string(clip) + " must be positive");
    if (clip >= FLT_MAX)
      clip = 0.0;
  }
  int64_t inputForget = isLstm ? ctx.attrInt("input_forget", 0) : 0;
  if (inputForget != 0 && inputForget != 1)
    return ctx.fail("input_forget=" + str(inputForget) + " is not supported (0, 1)");
  int64_t layout = ctx.opset() >= 14 ? ctx.attrInt("layout", 0) : 0;
  if (layout != 0 && layout != 1)
    return ctx.fail("layout=" + str(layout) + " is not supported (0, 1)");

  Value *x = ctx.input(0), *r = ctx.input(2);
  if (x->type().rank() != 3 || r->type().rank() != 3)
    return ctx.fail("X " + toString(x->type()) + " and R " + toString(r->type()) +
                    " must have rank 3");
  int64_t hidden = ctx.attrInt("hidden_size", r->dims()[2]);

  std::vector<Value *> operands;
  for (int i = 0; i < (isLstm ? 8 : 6); ++i)
    operands.push_back(ctx.input(i));
  // layout=1: X [B, T, I] and initial states [B, D, H] are batch-major; the IR op is
  // sequence-major.
  if (layout == 1) {
    for (int i : {0, 5, 6}) {
      if (i >= static_cast<int>(operands.size()) || !operands[i])
        continue;
      if (operands[i]->type().rank() != 3)
        return ctx.fail("operand " + str(i) + " " + toString(operands[i]->type()) +
                        " must have rank 3");
      auto t = transpose(ctx, operands[i], {1, 0, 2}, tempName(ctx, operands[i]->name() + "_seq"));
      if (!t)
        return t.takeStatus();
      operands[i] = *t;
    }
  }

  if (!activations->params.empty()) {
    auto n = static_cast<int64_t>(activations->codes.size());
    operands.push_back(ctx.constant(tempName(ctx, "activation_params"),
                                    TensorType{DType::F32, {n, 2}}, activations->params.data()));
  }
  AttrMap attrs{{"hidden_size", hidden},
                {"direction", direction},
                {"activations", activations->codes},
                {"clip", clip}};
  if (op == "GRU")
    attrs["linear_before_reset"] = ctx.attrInt("linear_before_reset", 0);
  if (isLstm)
    attrs["input_forget"] = inputForget;
  static const char *const kResultNames[] = {"Y", "Y_h", "Y_c"};
  std::vector<std::string> names;
  for (int i = 0; i < numResults; ++i)
    names.push_back(ctx.wantsOutput(i) && layout == 0 ? ctx.outputName(i)
                                                      : tempName(ctx, kResultNames[i]));
  auto results = emitRecurrent(ctx, op, operands, attrs, names);
  if (!results)
    return results.takeStatus();
  for (int i = 0; i < numResults; ++i) {
    if (!ctx.wantsOutput(i))
      continue;
    Value *v = (*results)[i];
    if (layout == 1) {
      // Y [T, D, B, H] -> [B, T, D, H]; Y_h, Y_c [D, B, H] -> [B, D, H].
      auto t = transpose(ctx, v,
                         i == 0 ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{1, 0, 2},
                         ctx.outputName(i));
      if (!t)
        return t.takeStatus();
      v = *t;
    }
    ctx.setOutput(i, v);
  }
  return Status::ok();
}

// The attributes every recurrent op has (layout from opset 14), then each op's own.
#define RECURRENT_ATTRS(...)                                                                       \
  reads({"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", \
         "layout", __VA_ARGS__})

const std::vector<ImportRule> kRules = {
    {"RNN", 7, nullptr, RECURRENT_ATTRS(), importRecurrent},
    {"LSTM", 7, nullptr, RECURRENT_ATTRS("input_forget"), importRecurrent},
    {"GRU", 7, nullptr, RECURRENT_ATTRS("linear_before_reset"), importRecurrent},
};

#undef RECURRENT_ATTRS

} // namespace

const std::vector<ImportRule> &recurrentRules() { return kRules; }

} // namespace odlac
