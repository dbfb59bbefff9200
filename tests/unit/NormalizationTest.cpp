// Import tests of the normalization family for what ONNX's backend tests do not cover:
// precise rejections, the shape of the decompositions, and edge-case numerics defined by
// the reference backend (zero norms, every target ignored).
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <ODLA/odla.h>

#include <cmath>
#include <initializer_list>

namespace odlac::test {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kI64 = onnx::TensorProto::INT64;

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

// The import error of a model expected to be rejected.
std::string rejection(const onnx::ModelProto &m) {
  auto g = importModel(m);
  return g ? std::string("(imported)") : g.status().message();
}

// A one-node model `op(x, ...) -> y` on a graph input x.
onnx::ModelProto oneNode(int opset, const onnx::NodeProto &n, const std::vector<int64_t> &xDims,
                         const std::vector<int64_t> &yDims) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, xDims);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, yDims);
  return m;
}

// Evaluates graph output `i` of a model whose inputs are all initializers.
std::vector<float> evaluateOutput(const Graph &g, size_t i) {
  auto data = evaluateValue(*g.outputs().at(i));
  if (!data)
    return {};
  const float *p = (*data)->as<float>();
  return std::vector<float>(p, p + g.outputs()[i]->type().numElements());
}

size_t countOps(const Graph &g, const char *op) {
  size_t n = 0;
  for (const Node *node : g.nodes())
    n += std::string(node->op().name) == op;
  return n;
}

onnx::ModelProto layerNorm(const std::vector<int64_t> &wDims, int outputs, int64_t stash = 1) {
  auto n = node("LayerNormalization", {"x", "w"},
                {"y", outputs > 1 ? "mean" : "", outputs > 2 ? "inv" : ""}, "ln");
  if (stash != 1)
    addIntAttr(n, "stash_type", stash);
  auto m = oneNode(17, n, {2, 3, 4}, {2, 3, 4});
  int64_t count = 1;
  for (int64_t d : wDims)
    count *= d;
  *m.mutable_graph()->add_initializer() =
      floatTensor("w", wDims, std::vector<float>(static_cast<size_t>(count), 1.0f), true);
  if (outputs > 1)
    *m.mutable_graph()->add_output() = tensorInfo("mean", kF32, {2, 3, 1});
  if (outputs > 2)
    *m.mutable_graph()->add_output() = tensorInfo("inv", kF32, {2, 3, 1});
  return m;
}

TEST(Normalization, LayerNormWithoutStatisticsIsOneLayerNorm) {
  auto g = importModel(layerNorm({4}, 1));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "LayerNorm"), 1u);
  EXPECT_EQ(countOps(**g, "Mul"), 0u); // the scale is LayerNorm's operand
  EXPECT_EQ(countOps(**g, "ReduceMean"), 0u);
}

TEST(Normalization, LayerNormStatisticsAreComputedWhenAsked) {
  auto g = importModel(layerNorm({4}, 3));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "ReduceMean"), 2u);
  EXPECT_EQ((*g)->outputs()[2]->dims(), (Dims{2, 3, 1}));
}

TEST(Normalization, LayerNormScaleMayHaveAnyShapeOfTheRightSize) {
  auto g = importModel(layerNorm({2, 2}, 1));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(rejection(layerNorm({3}, 1)),
            "node 'ln' (LayerNormalization, opset 17): Scale f32[3] must have 4 elements (the "
            "normalized shape [4]) or 1");
}

TEST(Normalization, LayerNormStashTypeOtherThanFloatIsRejected) {
  EXPECT_EQ(rejection(layerNorm({4}, 3, onnx::TensorProto::BFLOAT16)),
            "node 'ln' (LayerNormalization, opset 17): attribute stash_type=16 (bfloat16) is not "
            "supported; only 1 (float32 statistics)");
}

TEST(Normalization, LpNormalizationRejectsOtherNorms) {
  auto n = node("LpNormalization", {"x"}, {"y"}, "lp");
  addIntAttr(n, "p", 3);
  EXPECT_EQ(rejection(oneNode(13, n, {2, 3}, {2, 3})),
            "node 'lp' (LpNormalization, opset 13): attribute p=3 is not supported "
            "(LpNormalization allows 1 or 2)");
}

TEST(Normalization, LpNormalizationOfAZeroSliceIsZero) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_initializer() = floatTensor("x", {2, 2}, {3.0f, -1.0f, 0.0f, 0.0f}, true);
  auto n = node("LpNormalization", {"x"}, {"y"}, "lp");
  addIntAttr(n, "p", 1);
  addIntAttr(n, "axis", 1);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {2, 2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(evaluateOutput(**imported, 0), (std::vector<float>{0.75f, -0.25f, 0.0f, 0.0f}));
}

TEST(Normalization, InstanceNormNeedsSpatialAxes) {
  auto m = oneNode(13, node("InstanceNormalization", {"x", "s", "b"}, {"y"}, "in"), {2, 3}, {2, 3});
  *m.mutable_graph()->add_initializer() = floatTensor("s", {3}, {1, 1, 1}, true);
  *m.mutable_graph()->add_initializer() = floatTensor("b", {3}, {0, 0, 0}, true);
  EXPECT_EQ(rejection(m), "node 'in' (InstanceNormalization, opset 13): InstanceNormalization: "
                          "input [2,3] must have rank >= 3 (N, C, D1, ...)");
}

TEST(Normalization, MeanVarianceNormTransposesOnlyWhenAxesInterleave) {
  auto mvn = node("MeanVarianceNormalization", {"x"}, {"y"}, "mvn");
  auto batch1 = importModel(oneNode(13, mvn, {1, 3, 2, 2}, {1, 3, 2, 2}));
  ASSERT_TRUE(batch1) << batch1.status().message();
  EXPECT_EQ(countOps(**batch1, "Transpose"), 0u);
  auto batch2 = importModel(oneNode(13, mvn, {2, 3, 2, 2}, {2, 3, 2, 2}));
  ASSERT_TRUE(batch2) << batch2.status().message();
  EXPECT_EQ(countOps(**batch2, "Transpose"), 2u);
}

// A model `loss(x, t)` with x [3, 2] log-probabilities and targets t, all constants.
onnx::ModelProto loss(const char *op, const std::vector<int64_t> &targets,
                      const std::string &reduction, std::optional<int64_t> ignore) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_initializer() = floatTensor("x", {3, 2}, {-1, -2, -3, -4, -5, -6}, true);
  *g->add_initializer() = int64Tensor("t", {3}, targets);
  auto n = node(op, {"x", "t"}, {"y"}, "loss");
  addStringAttr(n, "reduction", reduction);
  if (ignore)
    addIntAttr(n, "ignore_index", *ignore);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {});
  return m;
}

TEST(Normalization, LossReductionMustBeKnown) {
  EXPECT_EQ(rejection(loss("NegativeLogLikelihoodLoss", {0, 1, 0}, "avg", std::nullopt)),
            "node 'loss' (NegativeLogLikelihoodLoss, opset 13): attribute reduction='avg' is not "
            "supported (none, mean, sum)");
  EXPECT_EQ(rejection(loss("SoftmaxCrossEntropyLoss", {0, 1, 0}, "avg", std::nullopt)),
            "node 'loss' (SoftmaxCrossEntropyLoss, opset 13): attribute reduction='avg' is not "
            "supported (none, mean, sum)");
}

TEST(Normalization, LossIgnoreIndexMustFitOdlaInt32) {
  EXPECT_EQ(rejection(loss("NegativeLogLikelihoodLoss", {0, 1, 0}, "sum", int64_t{1} << 40)),
            "node 'loss' (NegativeLogLikelihoodLoss, opset 13): attribute ignore_index="
            "1099511627776 is not supported: ODLA takes an int32 above -2^31");
}

TEST(Normalization, NllMeanWeighsAndIgnores) {
  auto g = importModel(loss("NegativeLogLikelihoodLoss", {0, 1, 1}, "mean", int64_t{0}));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(evaluateOutput(**g, 0), (std::vector<float>{5.0f})); // (4 + 6) / 2
}

TEST(Normalization, NllMeanOfOnlyIgnoredTargetsIsNaN) {
  auto g = importModel(loss("NegativeLogLikelihoodLoss", {1, 1, 1}, "mean", int64_t{1}));
  ASSERT_TRUE(g) << g.status().message();
  auto y = evaluateOutput(**g, 0);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(Normalization, NllTargetOutOfRangeFailsAtRunTime) {
  auto g = importModel(loss("NegativeLogLikelihoodLoss", {0, 2, 1}, "sum", std::nullopt));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_FALSE(evaluateValue(*(*g)->outputs()[0]));
}

TEST(Normalization, LrnAlphaIsDividedBySize) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_initializer() = floatTensor("x", {1, 2}, {1.0f, 2.0f}, true);
  auto n = node("LRN", {"x"}, {"y"}, "lrn");
  addIntAttr(n, "size", 2); // channel c sums channels c and c + 1
  addFloatAttr(n, "alpha", 2.0f);
  addFloatAttr(n, "beta", 1.0f);
  addFloatAttr(n, "bias", 0.0f);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {1, 2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  // y0 = 1 / (2 / 2 * (1 + 4)), y1 = 2 / (2 / 2 * 4)
  EXPECT_EQ(evaluateOutput(**imported, 0), (std::vector<float>{0.2f, 0.5f}));
}

// ---- The reference backend's builders, for options the import rules do not use -------------

odla_value_shape shapeOf(std::initializer_list<int64_t> dims) {
  odla_value_shape s{};
  s.size = static_cast<odla_int32>(dims.size());
  int i = 0;
  for (int64_t d : dims)
    s.dims[i++] = d;
  return s;
}

odla_value constantF32(const std::vector<float> &data, std::initializer_list<int64_t> dims,
                       const char *id) {
  return odla_CreateConstant({ODLA_FLOAT32, shapeOf(dims)}, data.data(), (odla_value_id)id);
}

// Runs a computation whose only output is `out` and returns its data.
std::vector<float> runToVector(odla_computation comp, odla_value out) {
  std::vector<float> data;
  odla_value_type t;
  if (!out || odla_SetValueAsOutput(out) != ODLA_SUCCESS ||
      odla_GetValueType(out, &t) != ODLA_SUCCESS)
    return data;
  int64_t count = 1;
  for (int i = 0; i < t.shape.size; ++i)
    count *= t.shape.dims[i];
  data.resize(static_cast<size_t>(count));
  odla_context ctx;
  EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
  EXPECT_EQ(odla_BindToOutput(out, data.data(), ctx), ODLA_SUCCESS);
  EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  odla_DestroyContext(ctx);
  return data;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

TEST(NormalizationReference, GroupNormWithPerGroupScale) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  // [1, 4, 2]: group 0 holds 0..3 (mean 1.5), group 1 holds 4..7 (mean 5.5); variance 1.25.
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7}, scale{2, 3};
  odla_value y = odla_GroupNormalization(constantF32(x, {1, 4, 2}, "x"), ODLA_CHANNELS_FIRST, 2,
                                         0.0f, constantF32(scale, {2}, "s"), nullptr, 1.0f, 0.5f,
                                         (odla_value_id) "y");
  std::vector<double> want;
  for (int i = 0; i < 8; ++i)
    want.push_back((x[i] - (i < 4 ? 1.5 : 5.5)) / std::sqrt(1.25) * (i < 4 ? 2 : 3) + 0.5);
  expectNear(runToVector(comp, y), want);
  odla_DestroyComputation(comp);
}

TEST(NormalizationReference, InstanceNormChannelsLast) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  // [N=1, S=2, C=3]: channel c holds x[c] and x[3 + c].
  std::vector<float> x{1, 10, 0, 3, 20, 4}, offset{0, 1, 2};
  odla_value y =
      odla_InstanceNormalization(constantF32(x, {1, 2, 3}, "x"), ODLA_CHANNELS_LAST, 0.0f, nullptr,
                                 constantF32(offset, {3}, "o"), 1.0f, 0.0f, (odla_value_id) "y");
  expectNear(runToVector(comp, y), {-1, -1 + 1, -1 + 2, 1, 1 + 1, 1 + 2});
  odla_DestroyComputation(comp);
}

TEST(NormalizationReference, LrnChannelsLast) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  std::vector<float> x{1, 2, 3};
  odla_value y = odla_LRN(constantF32(x, {1, 1, 3}, "x"), ODLA_CHANNELS_LAST, 3, 3.0f, 1.0f, 1.0f,
                          (odla_value_id) "y");
  // alpha / size = 1: y_c = x_c / (1 + squares of channels c-1..c+1).
  expectNear(runToVector(comp, y), {1.0 / 6, 2.0 / 15, 3.0 / 14});
  odla_DestroyComputation(comp);
}

TEST(NormalizationReference, LpNormalizeOverTwoAxesWithChannelScale) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  std::vector<float> x{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}, scale{1, 2, 3};
  const odla_int32 axes[] = {1, -1};
  odla_value y = odla_LpNormalize(constantF32(x, {2, 3, 2}, "x"), 2, ODLA_CHANNELS_FIRST, 2, axes,
                                  0.0f, constantF32(scale, {3}, "s"), (odla_value_id) "y");
  double norm = std::sqrt(91.0);
  std::vector<double> want;
  for (int i = 0; i < 12; ++i)
    want.push_back(i < 6 ? x[i] / norm * scale[i / 2] : 0.0);
  expectNear(runToVector(comp, y), want);
  odla_DestroyComputation(comp);
}

TEST(NormalizationReference, GroupsMustDivideChannels) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  std::vector<float> x(6, 1.0f);
  EXPECT_EQ(odla_GroupNormalization(constantF32(x, {1, 3, 2}, "x"), ODLA_CHANNELS_FIRST, 2, 0.0f,
                                    nullptr, nullptr, 1.0f, 0.0f, (odla_value_id) "y"),
            nullptr);
  odla_DestroyComputation(comp);
}

} // namespace
} // namespace odlac::test
