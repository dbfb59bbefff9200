// Recurrent ops: the reference backend's odla_LSTM/odla_GRU/odla_RNN options that ONNX import
// never uses (weight formats, gate orders, state selection), the odla_Ext variants'
// activations and clipping, and the import of RNN, LSTM and GRU: layout=1, activations and
// their alpha/beta, and precise rejections.
extern "C" {
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>
}

#include "Import.h"
#include "OnnxBuilder.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace odlac::test {
namespace {

// ---- odla_LSTM / odla_GRU / odla_RNN on the reference backend -----------------------------

odla_value_shape shapeOf(std::initializer_list<int64_t> dims) {
  odla_value_shape s{};
  s.size = static_cast<odla_int32>(dims.size());
  int i = 0;
  for (int64_t d : dims)
    s.dims[i++] = d;
  return s;
}

odla_value constant(const std::vector<float> &data, std::initializer_list<int64_t> dims,
                    const char *id) {
  return odla_CreateConstant({ODLA_FLOAT32, shapeOf(dims)}, data.data(), (odla_value_id)id);
}

std::vector<float> randoms(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

// Runs a computation whose outputs are `outs`, returning each output's data.
std::vector<std::vector<float>> run(odla_computation comp, const std::vector<odla_value> &outs) {
  std::vector<std::vector<float>> data;
  for (odla_value v : outs) {
    EXPECT_EQ(odla_SetValueAsOutput(v), ODLA_SUCCESS);
    odla_value_type t;
    EXPECT_EQ(odla_GetValueType(v, &t), ODLA_SUCCESS);
    int64_t n = 1;
    for (int i = 0; i < t.shape.size; ++i)
      n *= t.shape.dims[i];
    data.emplace_back(static_cast<size_t>(n));
  }
  odla_context ctx;
  EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_EQ(odla_BindToOutput(outs[i], data[i].data(), ctx), ODLA_SUCCESS);
  EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  odla_DestroyContext(ctx);
  return data;
}

void expectNear(const std::vector<float> &a, const std::vector<float> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-5) << "at " << i;
}

odla_value_ids ids(std::initializer_list<const char *> names) {
  odla_value_ids r{};
  for (const char *n : names)
    r.value_ids[r.size++] = (odla_value_id)n;
  return r;
}

constexpr int64_t kT = 3, kB = 2, kI = 3, kH = 4;

// Gate blocks of [4H, K] weights reordered from ONNX's i, o, f, c to `order` (indices into
// i, o, f, c), optionally transposed to [K, 4H] (LDIGO).
std::vector<float> regate(const std::vector<float> &w, int64_t k, const int order[4], bool igo) {
  std::vector<float> r(w.size());
  for (int g = 0; g < 4; ++g)
    for (int64_t j = 0; j < kH; ++j)
      for (int64_t q = 0; q < k; ++q) {
        float v = w[(order[g] * kH + j) * k + q];
        int64_t row = g * kH + j;
        r[igo ? q * 4 * kH + row : row * k + q] = v;
      }
  return r;
}

std::vector<float> regateBias(const std::vector<float> &b, const int order[4]) {
  std::vector<float> r(b.size());
  for (int half = 0; half < 2; ++half)
    for (int g = 0; g < 4; ++g)
      for (int64_t j = 0; j < kH; ++j)
        r[half * 4 * kH + g * kH + j] = b[half * 4 * kH + order[g] * kH + j];
  return r;
}

TEST(RecurrentReference, LstmWeightFormatsAndGateOrdersAgree) {
  auto x = randoms(kT * kB * kI, 1), w = randoms(4 * kH * kI, 2), r = randoms(4 * kH * kH, 3);
  auto b = randoms(8 * kH, 4), p = randoms(3 * kH, 5), h0 = randoms(kB * kH, 6);
  auto c0 = randoms(kB * kH, 7);
  std::vector<std::vector<float>> want;
  {
    odla_computation comp;
    ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
    odla_values res = odla_LSTM(
        constant(x, {kT, kB, kI}, "x"), ODLA_RNN_LDGOI, ODLA_RNN_IOFC, shapeOf({1, 4 * kH, kI}),
        constant(w, {1, 4 * kH, kI}, "w"), constant(r, {1, 4 * kH, kH}, "r"),
        constant(b, {1, 8 * kH}, "b"), nullptr, constant(h0, {1, kB, kH}, "h0"),
        constant(c0, {1, kB, kH}, "c0"), constant(p, {1, 3 * kH}, "p"), kH, ODLA_RNN_FORWARD,
        ODLA_RNN_HIDDEN_CELL_STATE, ids({"y", "yh", "yc"}));
    ASSERT_EQ(res.size, 3u);
    want = run(comp, {res.values[0], res.values[1], res.values[2]});
    odla_DestroyComputation(comp);
  }
  // Orders as indices into ONNX's i, o, f, c.
  struct Case {
    odla_rnn_gate_order order;
    int perm[4];
    odla_rnn_weight_format format;
  } cases[] = {{ODLA_RNN_IFCO, {0, 2, 3, 1}, ODLA_RNN_LDIGO},
               {ODLA_RNN_IFOC, {0, 2, 1, 3}, ODLA_RNN_LDGOI},
               {ODLA_RNN_ICOF, {0, 3, 1, 2}, ODLA_RNN_LDIGO}};
  for (const Case &c : cases) {
    bool igo = c.format == ODLA_RNN_LDIGO;
    auto w2 = regate(w, kI, c.perm, igo), r2 = regate(r, kH, c.perm, igo);
    auto b2 = regateBias(b, c.perm);
    odla_computation comp;
    ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
    odla_value wv = igo ? constant(w2, {1, kI, 4 * kH}, "w") : constant(w2, {1, 4 * kH, kI}, "w");
    odla_value rv = igo ? constant(r2, {1, kH, 4 * kH}, "r") : constant(r2, {1, 4 * kH, kH}, "r");
    // Only the cell state besides Y: results are Y, Y_c.
    odla_values res =
        odla_LSTM(constant(x, {kT, kB, kI}, "x"), c.format, c.order, odla_value_shape{-1, {}}, wv,
                  rv, constant(b2, {1, 8 * kH}, "b"), nullptr, constant(h0, {1, kB, kH}, "h0"),
                  constant(c0, {1, kB, kH}, "c0"), constant(p, {1, 3 * kH}, "p"), kH,
                  ODLA_RNN_FORWARD, ODLA_RNN_CELL_STATE, ids({"y", "yc"}));
    ASSERT_EQ(res.size, 2u);
    auto got = run(comp, {res.values[0], res.values[1]});
    expectNear(got[0], want[0]);
    expectNear(got[1], want[2]);
    odla_DestroyComputation(comp);
  }
}

TEST(RecurrentReference, SequenceLengthsZeroTheTailAndKeepTheLastState) {
  auto x = randoms(kT * kB * kI, 8), w = randoms(kH * kI, 9), r = randoms(kH * kH, 10);
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  std::vector<int64_t> lens{1, 5}; // 5 is clamped to T = 3
  odla_value lv =
      odla_CreateConstant({ODLA_INT64, shapeOf({kB})}, lens.data(), (odla_value_id) "l");
  odla_values res =
      odla_RNN(constant(x, {kT, kB, kI}, "x"), ODLA_RNN_LDGOI, shapeOf({1, kH, kI}),
               constant(w, {1, kH, kI}, "w"), constant(r, {1, kH, kH}, "r"), nullptr, lv, nullptr,
               kH, ODLA_RNN_FORWARD, ODLA_RNN_HIDDEN_STATE, ids({"y", "yh"}));
  ASSERT_EQ(res.size, 2u);
  auto got = run(comp, {res.values[0], res.values[1]});
  // Batch 0 runs one step: Y[1..2, 0, 0] are zero, Y_h[0, 0] is Y[0, 0, 0].
  for (int64_t t = 1; t < kT; ++t)
    for (int64_t j = 0; j < kH; ++j)
      EXPECT_EQ(got[0][(t * kB + 0) * kH + j], 0.0f);
  for (int64_t j = 0; j < kH; ++j) {
    EXPECT_EQ(got[1][j], got[0][j]);
    EXPECT_EQ(got[1][kH + j], got[0][((kT - 1) * kB + 1) * kH + j]);
    // Step 0 of batch 0 from zero state: tanh(x W^T).
    float s = 0;
    for (int64_t q = 0; q < kI; ++q)
      s += x[q] * w[j * kI + q];
    EXPECT_NEAR(got[0][j], std::tanh(s), 1e-6);
  }
  odla_DestroyComputation(comp);
}

TEST(RecurrentReference, InvalidOptionsAreRejectedAtBuildTime) {
  auto x = randoms(kT * kB * kI, 11), w = randoms(3 * kH * kI, 12), r = randoms(3 * kH * kH, 13);
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value xv = constant(x, {kT, kB, kI}, "x");
  odla_value wv = constant(w, {1, 3 * kH, kI}, "w"), rv = constant(r, {1, 3 * kH, kH}, "r");
  // GRU gates come in URO order only; a failed builder still returns one NULL per result.
  odla_values res =
      odla_GRU(xv, ODLA_RNN_LDGOI, ODLA_RNN_IOFC, shapeOf({1, 3 * kH, kI}), wv, rv, nullptr,
               nullptr, nullptr, kH, ODLA_RNN_FORWARD, 0, ODLA_RNN_HIDDEN_STATE, ids({"y", "yh"}));
  ASSERT_EQ(res.size, 2u);
  EXPECT_EQ(res.values[0], nullptr);
  // weight_dims must be W's shape.
  res = odla_GRU(xv, ODLA_RNN_LDGOI, ODLA_RNN_URO, shapeOf({1, kI, 3 * kH}), wv, rv, nullptr,
                 nullptr, nullptr, kH, ODLA_RNN_FORWARD, 0, ODLA_RNN_NO_STATE, ids({"y"}));
  ASSERT_EQ(res.size, 1u);
  EXPECT_EQ(res.values[0], nullptr);
  odla_executable exe;
  EXPECT_NE(odla_CompileComputation(comp, nullptr, &exe), ODLA_SUCCESS);
  odla_DestroyComputation(comp);
}

TEST(RecurrentReference, ExtensionAppliesActivationsAndClip) {
  // One step, no recurrence yet: Y = min(relu(x W^T), 0.1) with clip 0.1 on the input of relu;
  // the second direction (reverse, same single step) uses LeakyRelu with alpha 0.5.
  std::vector<float> x{1.0f, -2.0f},
      w{0.3f, 0.0f, -0.2f, 0.0f, 0.0f, 0.04f, 0.3f, 0.0f, -0.2f, 0.0f, 0.0f, 0.04f};
  std::vector<float> r(2 * 3 * 3, 0.0f), params{0, 0, 0.5f, 0};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  const odla_int32 acts[] = {ODLA_EXT_ACT_RELU, ODLA_EXT_ACT_LEAKY_RELU};
  odla_values res = odla_ExtRNN(constant(x, {1, 1, 2}, "x"), ODLA_RNN_LDGOI, shapeOf({2, 3, 2}),
                                constant(w, {2, 3, 2}, "w"), constant(r, {2, 3, 3}, "r"), nullptr,
                                nullptr, nullptr, 3, ODLA_RNN_BIDIRECTIONAL, ODLA_RNN_NO_STATE,
                                acts, constant(params, {2, 2}, "ab"), 0.1f, ids({"y"}));
  ASSERT_EQ(res.size, 1u);
  auto y = run(comp, {res.values[0]});
  // Pre-activations 0.3, -0.2, -0.08 clip to 0.1, -0.1, -0.08.
  expectNear(y[0], {0.1f, 0.0f, 0.0f, 0.1f, -0.05f, -0.04f});
  odla_DestroyComputation(comp);
}

// ---- Import --------------------------------------------------------------------------------

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

// An LSTM over X [T=3, B=2, I=4] (or [B, T, I] for layout=1) with H=5 and the given outputs.
onnx::ModelProto lstmModel(int opset, const std::vector<std::string> &outputs,
                           const std::function<void(onnx::NodeProto &)> &attrs,
                           bool batchMajor = false) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  Dims x = batchMajor ? Dims{2, 3, 4} : Dims{3, 2, 4};
  *g->add_input() = tensorInfo("X", onnx::TensorProto::FLOAT, x);
  *g->add_initializer() = floatTensor("W", {1, 20, 4}, std::vector<float>(80, 0.1f), true);
  *g->add_initializer() = floatTensor("R", {1, 20, 5}, std::vector<float>(100, 0.1f), true);
  auto n = node("LSTM", {"X", "W", "R"}, outputs, "lstm");
  addIntAttr(n, "hidden_size", 5);
  attrs(n);
  *g->add_node() = n;
  Dims y = batchMajor ? Dims{2, 3, 1, 5} : Dims{3, 1, 2, 5};
  Dims h = batchMajor ? Dims{2, 1, 5} : Dims{1, 2, 5};
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].empty())
      *g->add_output() = tensorInfo(outputs[i], onnx::TensorProto::FLOAT, i == 0 ? y : h);
  return m;
}

void addStringsAttr(onnx::NodeProto &n, const std::string &name,
                    const std::vector<std::string> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string &s : v)
    a->add_strings(s);
}

void addFloatsAttr(onnx::NodeProto &n, const std::string &name, const std::vector<float> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v)
    a->add_floats(f);
}

TEST(RecurrentImport, LayoutOneTransposesAroundTheOp) {
  auto imported = importModel(lstmModel(
      14, {"Y", "Y_h", "Y_c"}, [](onnx::NodeProto &n) { addIntAttr(n, "layout", 1); }, true));
  ASSERT_TRUE(imported) << imported.status().message();
  auto nodes = (*imported)->nodes();
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_STREQ(nodes[0]->op().name, "Transpose");
  EXPECT_EQ(nodes[0]->output(0)->dims(), (Dims{3, 2, 4}));
  EXPECT_STREQ(nodes[1]->op().name, "LSTM");
  EXPECT_EQ(nodes[1]->output(0)->dims(), (Dims{3, 1, 2, 5}));
  EXPECT_EQ(nodes[2]->ints("perm"), (std::vector<int64_t>{2, 0, 1, 3}));
  EXPECT_EQ(nodes[2]->output(0)->name(), "Y");
  EXPECT_EQ(nodes[3]->ints("perm"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(nodes[4]->output(0)->name(), "Y_c");
}

TEST(RecurrentImport, DefaultActivationsSpelledOutStayOnTheCoreOpAndHiddenSizeComesFromR) {
  auto m = lstmModel(14, {"", "Y_h"}, [](onnx::NodeProto &n) {
    addStringsAttr(n, "activations", {"sigmoid", "TANH", "Tanh"});
    addFloatsAttr(n, "activation_alpha", {0.5f});    // taken by none of them
    addFloatAttr(n, "clip", 3.4028234663852886e38f); // FLT_MAX clips nothing
  });
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *lstm = (*imported)->nodes()[0];
  EXPECT_EQ(lstm->i("hidden_size"), 5);
  EXPECT_TRUE(lstm->ints("activations").empty());
  EXPECT_EQ(lstm->f("clip"), 0.0);
  EXPECT_EQ(lstm->input(8), nullptr);
  EXPECT_EQ(lstm->output(0)->name(), "Y_h/Y"); // Y is unnamed in the model
}

TEST(RecurrentImport, ActivationParametersAreConsumedByTheActivationsThatTakeThem) {
  auto imported = importModel(lstmModel(14, {"", "Y_h"}, [](onnx::NodeProto &n) {
    addStringsAttr(n, "activations", {"HardSigmoid", "Relu", "leakyrelu"});
    addFloatsAttr(n, "activation_alpha", {0.3f}); // HardSigmoid's; LeakyRelu keeps 0.01
    addFloatAttr(n, "clip", 2.5f);
    addIntAttr(n, "input_forget", 1);
  }));
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *lstm = (*imported)->nodes()[0];
  EXPECT_EQ(lstm->ints("activations"),
            (std::vector<int64_t>{ODLA_EXT_ACT_HARD_SIGMOID, ODLA_EXT_ACT_RELU,
                                  ODLA_EXT_ACT_LEAKY_RELU}));
  EXPECT_EQ(lstm->f("clip"), 2.5);
  EXPECT_EQ(lstm->i("input_forget"), 1);
  const Value *params = lstm->input(8);
  ASSERT_TRUE(params && params->isConstant());
  EXPECT_EQ(params->dims(), (Dims{3, 2}));
  const float *ab = params->data()->as<float>();
  EXPECT_EQ(std::vector<float>(ab, ab + 6), (std::vector<float>{0.3f, 0.5f, 0, 0, 0.01f, 0}));
}

TEST(RecurrentImport, WhatOnnxDoesNotDefineIsRejectedPrecisely) {
  auto swish = importModel(lstmModel(14, {"", "Y_h"}, [](onnx::NodeProto &n) {
    addStringsAttr(n, "activations", {"Sigmoid", "Swish", "Tanh"});
  }));
  ASSERT_FALSE(swish);
  EXPECT_EQ(swish.status().message(),
            "node 'lstm' (LSTM, opset 14): activations[1]='Swish' is not an activation function "
            "ONNX defines for LSTM");
  auto count = importModel(lstmModel(14, {"", "Y_h"}, [](onnx::NodeProto &n) {
    addStringsAttr(n, "activations", {"Sigmoid", "Tanh"});
  }));
  ASSERT_FALSE(count);
  EXPECT_EQ(count.status().message(),
            "node 'lstm' (LSTM, opset 14): activations=[Sigmoid, Tanh] has 2 entries; LSTM "
            "needs 3 per direction, 3 in all");
  auto clip = importModel(
      lstmModel(7, {"", "Y_h"}, [](onnx::NodeProto &n) { addFloatAttr(n, "clip", -1.0f); }));
  ASSERT_FALSE(clip);
  EXPECT_EQ(clip.status().message(),
            "node 'lstm' (LSTM, opset 7): clip=-1.000000 must be positive");
}

TEST(RecurrentImport, WeightShapesAreChecked) {
  auto m = lstmModel(14, {"", "Y_h"}, [](onnx::NodeProto &n) { addIntAttr(n, "hidden_size", 4); });
  // hidden_size is now given twice; keep the last (4), which disagrees with R [1, 20, 5].
  auto *attrs = m.mutable_graph()->mutable_node(0)->mutable_attribute();
  attrs->erase(attrs->begin());
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'lstm' (LSTM, opset 14): LSTM: W must be [1,16,4], got [1,20,4]");
}

} // namespace
} // namespace odlac::test
