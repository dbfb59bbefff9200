// The activation table (Activation.h).
#include "ops/Activation.h"

#include "ops/Ops.h"

#include <ODLA/odla_ext.h>

#include <algorithm>
#include <cassert>
#include <cctype>

namespace odlac {
namespace {

using lower::OdlaSink;
using lower::Val;

Val relu(OdlaSink &s, Val v, float, float, const std::string &id) { return s.Relu(v, {id}); }
Val clamp(OdlaSink &s, Val v, float lo, float hi, const std::string &id) {
  return s.Clamp(v, lo, hi, {id});
}
Val sigmoid(OdlaSink &s, Val v, float, float, const std::string &id) { return s.Sigmoid(v, {id}); }
Val tanhOf(OdlaSink &s, Val v, float, float, const std::string &id) { return s.Tanh(v, {id}); }
Val leakyRelu(OdlaSink &s, Val v, float alpha, float, const std::string &id) {
  return s.LeakyRelu(v, alpha, {id});
}
Val hardSwish(OdlaSink &s, Val v, float, float, const std::string &id) {
  return s.Mul(v, s.HardSigmoid(v, 1.0f / 6.0f, 0.5f, {id + "/gate"}), {id});
}
Val swish(OdlaSink &s, Val v, float, float, const std::string &id) {
  return s.Mul(v, s.Sigmoid(v, {id + "/gate"}), {id});
}
Val gelu(OdlaSink &s, Val v, float, float, const std::string &id) {
  return s.Gelu(v, {false}, {id});
}

constexpr int kNo = -1;

} // namespace

const std::vector<ActivationDef> &activations() {
  // Ops and attributes are the rows of ops/Ops.h; the parameters are ONNX's defaults.
  static const std::vector<ActivationDef> kTable = {
      {Activation::None, "none", nullptr, nullptr, nullptr, ODLA_EXT_FUSED_NONE, nullptr, kNo,
       false, false, 0, 0, nullptr},
      {Activation::Relu, "relu", &ops::Relu, nullptr, nullptr, ODLA_EXT_FUSED_RELU, "relu",
       ODLA_EXT_ACT_RELU, false, false, 0, 0, relu},
      {Activation::Clamp, "clamp", &ops::Clamp, "min", "max", ODLA_EXT_FUSED_CLAMP, nullptr, kNo,
       false, false, 0, 0, clamp},
      {Activation::Sigmoid, "sigmoid", &ops::Sigmoid, nullptr, nullptr, ODLA_EXT_FUSED_SIGMOID,
       "sigmoid", ODLA_EXT_ACT_SIGMOID, false, false, 0, 0, sigmoid},
      {Activation::Tanh, "tanh", &ops::Tanh, nullptr, nullptr, ODLA_EXT_FUSED_TANH, "tanh",
       ODLA_EXT_ACT_TANH, false, false, 0, 0, tanhOf},
      {Activation::LeakyRelu, "leaky_relu", &ops::LeakyRelu, "alpha", nullptr,
       ODLA_EXT_FUSED_LEAKY_RELU, "leakyrelu", ODLA_EXT_ACT_LEAKY_RELU, true, false, 0.01f, 0,
       leakyRelu},
      {Activation::HardSwish, "hard_swish", nullptr, nullptr, nullptr, ODLA_EXT_FUSED_HARD_SWISH,
       nullptr, kNo, false, false, 0, 0, hardSwish},
      {Activation::Swish, "swish", nullptr, nullptr, nullptr, ODLA_EXT_FUSED_SWISH, nullptr, kNo,
       false, false, 0, 0, swish},
      // Gelu fuses in its erf form only (approximate = 0), which FuseActivations checks.
      {Activation::Gelu, "gelu", &ops::Gelu, nullptr, nullptr, ODLA_EXT_FUSED_GELU, nullptr, kNo,
       false, false, 0, 0, gelu},
      // Recurrent only: no fused form.
      {Activation::Affine, "affine", nullptr, nullptr, nullptr, kNo, "affine", ODLA_EXT_ACT_AFFINE,
       true, true, 1.0f, 0.0f, nullptr},
      {Activation::ThresholdedRelu, "thresholded_relu", nullptr, nullptr, nullptr, kNo,
       "thresholdedrelu", ODLA_EXT_ACT_THRESHOLDED_RELU, true, false, 1.0f, 0, nullptr},
      {Activation::ScaledTanh, "scaled_tanh", nullptr, nullptr, nullptr, kNo, "scaledtanh",
       ODLA_EXT_ACT_SCALED_TANH, true, true, 1.0f, 1.0f, nullptr},
      {Activation::HardSigmoid, "hard_sigmoid", nullptr, nullptr, nullptr, kNo, "hardsigmoid",
       ODLA_EXT_ACT_HARD_SIGMOID, true, true, 0.2f, 0.5f, nullptr},
      {Activation::Elu, "elu", nullptr, nullptr, nullptr, kNo, "elu", ODLA_EXT_ACT_ELU, true, false,
       1.0f, 0, nullptr},
      {Activation::Softsign, "softsign", nullptr, nullptr, nullptr, kNo, "softsign",
       ODLA_EXT_ACT_SOFTSIGN, false, false, 0, 0, nullptr},
      {Activation::Softplus, "softplus", nullptr, nullptr, nullptr, kNo, "softplus",
       ODLA_EXT_ACT_SOFTPLUS, false, false, 0, 0, nullptr},
  };
  return kTable;
}

const ActivationDef *findActivation(const std::string &spelling) {
  for (const ActivationDef &a : activations())
    if (a.fused != kNo && spelling == a.spelling)
      return &a;
  return nullptr;
}

const ActivationDef *findRecurrentActivation(const std::string &onnxName) {
  std::string lower = onnxName;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const ActivationDef &a : activations())
    if (a.onnxName && lower == a.onnxName)
      return &a;
  return nullptr;
}

const ActivationDef &activationDef(Activation id) {
  const ActivationDef &a = activations()[static_cast<size_t>(id)];
  assert(a.id == id && "the activation table is in enum order");
  return a;
}

const ActivationDef &activationOf(const Node &fused) {
  const ActivationDef *a = findActivation(fused.s("activation"));
  assert(a && "the fused op's inference checked its activation");
  return *a;
}

} // namespace odlac
