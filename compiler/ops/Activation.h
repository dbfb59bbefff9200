// The activation functions odlac knows by name, in one table: the IR op that applies one
// alone, the spelling of the fused ops' `activation` attribute, the ODLA enumerators the
// extensions take (odla_ext_fused_activation, odla_ext_rnn_activation), ONNX's name in a
// recurrent op's `activations` list with its parameters, and the core ODLA calls that compute
// it where the backend lacks the extension. FuseActivations walks the table to fuse, the
// fused ops and the recurrent ops' import read it; nothing else spells an activation.
#pragma once

#include "ir/Graph.h"
#include "lower/OdlaSink.h"
#include "ops/OpDef.h"

#include <string>

namespace odlac {

enum class Activation {
  None,
  Relu,
  Clamp,
  Sigmoid,
  Tanh,
  LeakyRelu,
  HardSwish,
  Swish,
  Gelu,
  Affine,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus,
};

struct ActivationDef {
  Activation id;
  const char *spelling; // the `activation` attribute of FusedConv and FusedGemm
  // The IR op that computes it alone, its alpha and beta attributes (null: none), for fusing
  // that op into a product; null: fused as a pattern (HardSwish, Swish) or not at all.
  const OpDef *op;
  const char *alphaAttr, *betaAttr;
  int fused; // its odla_ext_fused_activation, or -1: a fused op cannot end with it
  // ONNX's name in the `activations` of RNN, LSTM and GRU, lower case (they compare
  // case-insensitively), its odla_ext_rnn_activation, and which parameters it takes with
  // their defaults; null: not a recurrent activation.
  const char *onnxName;
  int rnn;
  bool usesAlpha, usesBeta;
  float alpha, beta;
  // v through the activation as core ODLA calls, the last one with `id`; null for None.
  lower::Val (*decompose)(lower::OdlaSink &s, lower::Val v, float alpha, float beta,
                          const std::string &id);
};

// Every activation, None first.
const std::vector<ActivationDef> &activations();
// By the fused ops' attribute spelling, by ONNX's recurrent name (any case); null: unknown.
const ActivationDef *findActivation(const std::string &spelling);
const ActivationDef *findRecurrentActivation(const std::string &onnxName);
// The activation a fused op's attribute names (checked by its inference).
const ActivationDef &activationOf(const Node &fused);
const ActivationDef &activationDef(Activation a);

} // namespace odlac
