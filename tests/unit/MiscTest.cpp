// Import tests of the misc family for what ONNX's backend tests do not cover: the core
// odla_NMS path and its -1 rows, run-time checks of shapes fixed at import, generators folded
// into constants, RoiAlign's max mode, MaxRoiPool, and the precise rejections.
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <cmath>

namespace odlac::test {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kI64 = onnx::TensorProto::INT64;

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

std::string rejection(const onnx::ModelProto &m) {
  auto g = importModel(m);
  return g ? std::string("(imported)") : g.status().message();
}

size_t countOps(const Graph &g, const char *op) {
  size_t n = 0;
  for (const Node *node : g.nodes())
    n += std::string(node->op().name) == op;
  return n;
}

template <class T> std::shared_ptr<const Buffer> bufferOf(const std::vector<T> &v) {
  return Buffer::copyOf(v.data(), v.size() * sizeof(T));
}

template <class T> std::vector<T> valuesOf(const Buffer &b) {
  return std::vector<T>(b.as<T>(), b.as<T>() + b.size / sizeof(T));
}

// Six boxes in corner form and one class: boxes 0 to 2 overlap heavily (0 has the best
// score), 3 to 5 apart from them.
const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

// NonMaxSuppression with thresholds as initializers (constParams) or graph inputs, and a
// declared result of `rows` rows (none: rows < 0).
onnx::ModelProto nmsModel(bool constParams, int64_t rows, int64_t centerPointBox = 0) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("boxes", kF32, {1, 6, 4});
  *g->add_input() = tensorInfo("scores", kF32, {1, 1, 6});
  if (constParams) {
    *g->add_initializer() = int64Tensor("max", {1}, {3});
    *g->add_initializer() = floatTensor("iou", {1}, {0.5f}, false);
    *g->add_initializer() = floatTensor("score", {1}, {0.0f}, false);
  } else {
    *g->add_input() = tensorInfo("max", kI64, {1});
    *g->add_input() = tensorInfo("iou", kF32, {1});
    *g->add_input() = tensorInfo("score", kF32, {1});
  }
  auto n = node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"selected"});
  if (centerPointBox)
    addIntAttr(n, "center_point_box", centerPointBox);
  *g->add_node() = n;
  *g->add_output() = rows >= 0 ? tensorInfo("selected", kI64, {rows, 3})
                               : tensorInfo("selected", kI64, {-1, 3}, {"n", ""});
  return m;
}

TEST(MiscImport, NmsWithConstantParametersIsOdlaNmsAndFillsSpareRowsWithMinusOne) {
  auto g = importModel(nmsModel(true, 5));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "NMS"), 1u);
  EXPECT_EQ(countOps(**g, "NonMaxSuppression"), 0u);
  auto out = executeGraph(**g, {bufferOf(kBoxes), bufferOf(kScores)});
  ASSERT_TRUE(out) << out.status().message();
  // Kept: 3 (0.95), 0 (0.9); 1 and 2 overlap 0, 4 overlaps 3; then 5 (0.3).
  std::vector<int64_t> expected = {0, 0, 3, 0, 0, 0, 0, 0, 5, -1, -1, -1, -1, -1, -1};
  EXPECT_EQ(valuesOf<int64_t>(*(*out)[0]), expected);
}

TEST(MiscImport, NmsWithRuntimeParametersReadsThemWhenItRuns) {
  auto g = importModel(nmsModel(false, 3));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "NonMaxSuppression"), 1u);
  auto run = [&](int64_t maxOut, float iou, float score) {
    return executeGraph(**g, {bufferOf(kBoxes), bufferOf(kScores), bufferOf(std::vector{maxOut}),
                              bufferOf(std::vector{iou}), bufferOf(std::vector{score})});
  };
  auto out = run(3, 0.5f, 0.4f); // 5 (0.3) is below the score threshold
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(valuesOf<int64_t>(*(*out)[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, -1, -1, -1}));
  // Without suppression four boxes pass the score threshold: more than the 3 declared rows.
  EXPECT_FALSE(run(10, 1.0f, 0.4f));
}

TEST(MiscImport, NmsNeedsADeclaredResultShape) {
  EXPECT_NE(rejection(nmsModel(true, -1))
                .find("the number of boxes NonMaxSuppression keeps "
                      "depends on the data"),
            std::string::npos)
      << rejection(nmsModel(true, -1));
}

TEST(MiscImport, CenterPointBoxesUseTheExtension) {
  auto g = importModel(nmsModel(true, 2, 1));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "NonMaxSuppression"), 1u);
  EXPECT_EQ(countOps(**g, "NMS"), 0u);
}

onnx::ModelProto windowModel(bool constSize, int64_t declared) {
  auto m = model(17);
  auto *g = m.mutable_graph();
  if (constSize)
    *g->add_initializer() = int64Tensor("size", {}, {4});
  else
    *g->add_input() = tensorInfo("size", kI64, {});
  *g->add_node() = node("HannWindow", {"size"}, {"y"});
  *g->add_output() =
      declared >= 0 ? tensorInfo("y", kF32, {declared}) : tensorInfo("y", kF32, {-1}, {"n"});
  return m;
}

TEST(MiscImport, WindowOfAConstantSizeIsAConstant) {
  auto g = importModel(windowModel(true, -1));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(countOps(**g, "Window"), 0u);
  auto out = executeGraph(**g, {});
  ASSERT_TRUE(out) << out.status().message();
  auto y = valuesOf<float>(*(*out)[0]);
  ASSERT_EQ(y.size(), 4u); // periodic Hann: 0.5 - 0.5 cos(2 pi n / 4)
  EXPECT_NEAR(y[0], 0.0f, 1e-7);
  EXPECT_NEAR(y[1], 0.5f, 1e-7);
  EXPECT_NEAR(y[2], 1.0f, 1e-7);
  EXPECT_NEAR(y[3], 0.5f, 1e-7);
}

TEST(MiscImport, WindowOfARuntimeSizeChecksTheSizeWhenItRuns) {
  auto g = importModel(windowModel(false, 4));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_TRUE(executeGraph(**g, {bufferOf(std::vector<int64_t>{4})}));
  EXPECT_FALSE(executeGraph(**g, {bufferOf(std::vector<int64_t>{5})}));
  EXPECT_NE(rejection(windowModel(false, -1)).find("size is computed at run time"),
            std::string::npos);
}

// numpy's irfft of the one-sided spectrum [4+9i, 1+2i, 0+7i]: length 4, the imaginary parts of
// bin 0 and of the Nyquist bin 2 ignored, gives [1.5, 0, 0.5, 2].
TEST(MiscImport, InverseOneSidedDftIsNumpysIrfft) {
  auto m = model(17);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {1, 3, 2});
  auto n = node("DFT", {"x"}, {"y"});
  addIntAttr(n, "inverse", 1);
  addIntAttr(n, "onesided", 1);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {1, 4, 1});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  auto out = executeGraph(**imported, {bufferOf(std::vector<float>{4, 9, 1, 2, 0, 7})});
  ASSERT_TRUE(out) << out.status().message();
  auto y = valuesOf<float>(*(*out)[0]);
  ASSERT_EQ(y.size(), 4u);
  const float want[] = {1.5f, 0.0f, 0.5f, 2.0f};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], want[i], 1e-6) << i;
}

// DFT-20 of x [2, 3, 1] along an axis given when the model runs: both axes give [2, 3, 2].
onnx::ModelProto runTimeAxisDft(const std::vector<int64_t> &declared) {
  auto m = model(20);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {2, 3, 1});
  *g->add_input() = tensorInfo("axis", kI64, {});
  *g->add_node() = node("DFT", {"x", "", "axis"}, {"y"});
  *g->add_output() = tensorInfo("y", kF32, declared);
  return m;
}

TEST(MiscImport, DftReadsItsAxisWhenItRuns) {
  auto g = importModel(runTimeAxisDft({2, 3, 2}));
  ASSERT_TRUE(g) << g.status().message();
  auto x = bufferOf(std::vector<float>{1, 2, 3, 4, 5, 7});
  // numpy.fft.fft(x, axis=0) and (axis=1), real and imaginary parts interleaved.
  const double h = std::sqrt(3.0) / 2;
  const std::vector<double> byColumns = {5, 0, 7, 0, 10, 0, -3, 0, -3, 0, -4, 0};
  const std::vector<double> byRows = {6, 0, -1.5, h, -1.5, -h, 16, 0, -2, 2 * h, -2, -2 * h};
  for (auto [axis, want] : {std::pair{int64_t{0}, byColumns}, std::pair{int64_t{-3}, byColumns},
                            std::pair{int64_t{1}, byRows}, std::pair{int64_t{-2}, byRows}}) {
    auto out = executeGraph(**g, {x, bufferOf(std::vector<int64_t>{axis})});
    ASSERT_TRUE(out) << axis << ": " << out.status().message();
    auto y = valuesOf<float>(*(*out)[0]);
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i)
      EXPECT_NEAR(y[i], want[i], 1e-5) << "axis " << axis << ", element " << i;
  }
  for (int64_t axis : std::vector<int64_t>{2, -1, 3, -4, int64_t{1} << 40})
    EXPECT_FALSE(executeGraph(**g, {x, bufferOf(std::vector<int64_t>{axis})})) << axis;
}

TEST(MiscImport, DftOfARunTimeAxisNeedsADeclaredShapeSomeAxisGives) {
  EXPECT_NE(rejection(runTimeAxisDft({2, 4, 2}))
                .find("no axis in [-3, -2] or [0, 1] of input f32[2,3,1] gives the dims [2,4,2] "
                      "declared for output 'y' (axis 0 gives [2,3,2], axis 1 gives [2,3,2])"),
            std::string::npos)
      << rejection(runTimeAxisDft({2, 4, 2}));
}

// RoiAlign over the whole of [[1, 2], [3, 4]] into one bin of 2 x 2 samples at (0.5 | 1.5)^2:
// the samples are 2.5, 3, 3.5 and 4; max mode takes the largest weighted corner term.
float roiAlign(const char *mode) {
  auto m = model(16);
  auto *g = m.mutable_graph();
  *g->add_initializer() = floatTensor("x", {1, 1, 2, 2}, {1, 2, 3, 4}, false);
  *g->add_initializer() = floatTensor("rois", {1, 4}, {0, 0, 2, 2}, false);
  *g->add_initializer() = int64Tensor("batch", {1}, {0});
  auto n = node("RoiAlign", {"x", "rois", "batch"}, {"y"});
  addStringAttr(n, "mode", mode);
  addStringAttr(n, "coordinate_transformation_mode", "output_half_pixel");
  addIntAttr(n, "sampling_ratio", 2);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {1, 1, 1, 1});
  auto imported = importModel(m);
  if (!imported)
    return NAN;
  auto out = executeGraph(**imported, {});
  return out ? *(*out)[0]->as<float>() : NAN;
}

TEST(MiscImport, RoiAlignAverageAndMax) {
  EXPECT_FLOAT_EQ(roiAlign("avg"), 3.25f);
  EXPECT_FLOAT_EQ(roiAlign("max"), 4.0f);
}

TEST(MiscImport, MaxRoiPoolIsOdlaRoiMaxPool) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i)
    x[i] = static_cast<float>(i);
  *g->add_initializer() = floatTensor("x", {1, 1, 4, 4}, x, false);
  // The region covers rows 1..3 and columns 0..1 (corners rounded after scaling by 0.5).
  *g->add_initializer() = floatTensor("rois", {1, 5}, {0, 0, 2, 2, 6}, false);
  auto n = node("MaxRoiPool", {"x", "rois"}, {"y"});
  addIntsAttr(n, "pooled_shape", {2, 1});
  addFloatAttr(n, "spatial_scale", 0.5f);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {1, 1, 2, 1});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  auto out = executeGraph(**imported, {});
  ASSERT_TRUE(out) << out.status().message();
  // Region rows 1..3 (3 rows) in 2 bins: rows [1, 3) and [2, 4); columns 0..1 in one bin.
  EXPECT_EQ(valuesOf<float>(*(*out)[0]), (std::vector<float>{9, 13}));
}

TEST(MiscImport, RandomOpsAndSequencesAsTensorsAreRejectedPrecisely) {
  auto oneNode = [](int opset, const char *op, const std::vector<std::string> &ins) {
    auto m = model(opset);
    auto *g = m.mutable_graph();
    *g->add_input() = tensorInfo("x", kF32, {4});
    *g->add_node() = node(op, ins, {"y"});
    *g->add_output() = tensorInfo("y", kF32, {4});
    return m;
  };
  EXPECT_NE(rejection(oneNode(15, "Bernoulli", {"x"}))
                .find("draws random numbers, which cannot "
                      "be reproduced"),
            std::string::npos);
  // Sequences are resolved at compile time; one cannot be a tensor graph output.
  std::string seq = rejection(oneNode(12, "SequenceConstruct", {"x"}));
  EXPECT_NE(seq.find("graph output 'y' is declared a tensor but computes a sequence of 1"),
            std::string::npos)
      << seq;
}

TEST(MiscImport, StringPoolsOfTfIdfAreRejected) {
  auto m = model(9);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::INT32, {4});
  auto n = node("TfIdfVectorizer", {"x"}, {"y"});
  addIntAttr(n, "min_gram_length", 1);
  addIntAttr(n, "max_gram_length", 1);
  addIntAttr(n, "max_skip_count", 0);
  addStringAttr(n, "mode", "TF");
  addIntsAttr(n, "ngram_counts", {0});
  addIntsAttr(n, "ngram_indexes", {0});
  auto *a = n.add_attribute();
  a->set_name("pool_strings");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("a");
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", kF32, {1});
  EXPECT_NE(rejection(m).find("pool_strings: string n-grams cannot be represented"),
            std::string::npos)
      << rejection(m);
}

} // namespace
} // namespace odlac::test
