// NN import rules: what the rules resolve (ConvTranspose's output_shape into pads, MaxPool's
// Indices into a second node, global pooling into one window) checked structurally and on the
// reference backend, and the precise rejections ONNX's own tests do not reach.
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <cmath>

namespace odlac::test {
namespace {

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

std::vector<float> iota(int n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) * scale;
  return v;
}

// A model applying `op` to the constant x = iota(...) of shape xDims; outputs named by yNames.
onnx::ModelProto onConstant(int opset, const std::vector<int64_t> &xDims, const onnx::NodeProto &op,
                            const std::vector<std::pair<std::string, int>> &outputs) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  int64_t n = 1;
  for (int64_t d : xDims)
    n *= d;
  *g->add_initializer() = floatTensor("x", xDims, iota(static_cast<int>(n)), true);
  *g->add_node() = op;
  for (const auto &[name, type] : outputs)
    *g->add_output() = tensorInfo(name, type, {});
  return m;
}

template <class T> std::vector<T> evaluate(const Value &v) {
  auto data = evaluateValue(v);
  EXPECT_TRUE(data) << data.status().message();
  if (!data)
    return {};
  const T *p = (*data)->as<T>();
  return std::vector<T>(p, p + v.type().numElements());
}

const Node *producer(const Graph &g, const std::string &value) {
  for (const Node *n : g.nodes())
    for (const Value *out : n->outputs())
      if (out->name() == value)
        return n;
  return nullptr;
}

TEST(NnImport, MaxPoolIndicesBecomeASecondNode) {
  auto pool = node("MaxPool", {"x"}, {"y", "i"}, "pool");
  addIntsAttr(pool, "kernel_shape", {2, 2});
  addIntsAttr(pool, "strides", {2, 2});
  addIntAttr(pool, "storage_order", 1);
  auto imported = importModel(onConstant(
      12, {1, 1, 4, 4}, pool, {{"y", onnx::TensorProto::FLOAT}, {"i", onnx::TensorProto::INT64}}));
  ASSERT_TRUE(imported) << imported.status().message();
  const Graph &g = **imported;
  ASSERT_STREQ(producer(g, "y")->op().name, "MaxPool");
  const Node *idx = producer(g, "i");
  ASSERT_STREQ(idx->op().name, "MaxPoolIndices");
  EXPECT_EQ(idx->i("storage_order"), 1);
  // x = 0..15 row-major: each 2x2 window's max is its bottom-right cell.
  EXPECT_EQ(evaluate<float>(*g.outputs()[0]), (std::vector<float>{5, 7, 13, 15}));
  // Column-major positions of rows 1, 3 and columns 1, 3 of a 4x4 plane: col * 4 + row.
  EXPECT_EQ(evaluate<int64_t>(*g.outputs()[1]), (std::vector<int64_t>{5, 13, 7, 15}));
}

TEST(NnImport, DilatedMaxPoolWithCeilMode) {
  auto pool = node("MaxPool", {"x"}, {"y"}, "pool");
  addIntsAttr(pool, "kernel_shape", {2});
  addIntsAttr(pool, "strides", {2});
  addIntsAttr(pool, "dilations", {2});
  addIntAttr(pool, "ceil_mode", 1);
  auto imported = importModel(onConstant(12, {1, 1, 6}, pool, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(imported) << imported.status().message();
  // Windows {0,2}, {2,4}, and in ceil mode {4,6->clipped}: maxima 2, 4, 4.
  EXPECT_EQ(evaluate<float>(*(*imported)->outputs()[0]), (std::vector<float>{2, 4, 4}));
}

TEST(NnImport, ConvTransposeOutputShapeBecomesPadsAndOutputPadding) {
  // x [1,1,3], w [1,1,3], stride 2: the full result has (3-1)*2+3 = 7 cells.
  for (auto [shape, pads, extra] :
       {std::tuple<int64_t, std::vector<int64_t>, int64_t>{5, {1, 1}, 0},
        {6, {1, 0}, 0},    // total 1: NOTSET puts the larger half first
        {9, {0, 0}, 2}}) { // larger than the full result: output_padding
    auto m = model(13);
    auto *g = m.mutable_graph();
    *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {1, 1, 3});
    *g->add_initializer() = floatTensor("w", {1, 1, 3}, {1, 1, 1}, true);
    auto ct = node("ConvTranspose", {"x", "w"}, {"y"}, "ct");
    addIntsAttr(ct, "strides", {2});
    addIntsAttr(ct, "output_shape", {shape});
    *g->add_node() = ct;
    *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 1, shape});
    auto imported = importModel(m);
    ASSERT_TRUE(imported) << imported.status().message();
    const Node *n = producer(**imported, "y");
    EXPECT_EQ(n->ints("pads"), pads) << "output_shape " << shape;
    EXPECT_EQ(n->ints("output_padding"), (std::vector<int64_t>{extra}));
    EXPECT_EQ(n->output(0)->dims(), (Dims{1, 1, shape}));
  }
}

TEST(NnImport, ConvTransposeSameUpperPutsTheSmallerHalfFirst) {
  auto ct = node("ConvTranspose", {"x", "w"}, {"y"}, "ct");
  addIntsAttr(ct, "strides", {2});
  addStringAttr(ct, "auto_pad", "SAME_UPPER");
  auto m = onConstant(13, {1, 1, 3}, ct, {{"y", onnx::TensorProto::FLOAT}});
  *m.mutable_graph()->add_initializer() = floatTensor("w", {1, 1, 3}, {1, 10, 100}, true);
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  // Output 3 * 2 = 6 of the full 7: total padding 1, at the end.
  EXPECT_EQ(producer(**imported, "y")->ints("pads"), (std::vector<int64_t>{0, 1}));
  // Full result of x = [0, 1, 2] with w = [1, 10, 100], stride 2: [0, 0, 1, 10, 102, 20, 200].
  EXPECT_EQ(evaluate<float>(*(*imported)->outputs()[0]),
            (std::vector<float>{0, 0, 1, 10, 102, 20}));
}

TEST(NnImport, GlobalPoolingIsOneWindow) {
  auto gp = node("GlobalLpPool", {"x"}, {"y"}, "gp");
  addIntAttr(gp, "p", 1);
  auto imported = importModel(onConstant(13, {1, 2, 2, 2}, gp, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *n = producer(**imported, "y");
  ASSERT_STREQ(n->op().name, "LpPool");
  EXPECT_EQ(n->ints("kernel_shape"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(evaluate<float>(*(*imported)->outputs()[0]), (std::vector<float>{6, 22}));
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << "element " << i;
}

// LpPool-18's ceil_mode keeps the windows that stick out past the input (issue 15: it was
// dropped, giving [1,1,1,1]). Numbers from ONNX Runtime 1.31, which clips those windows at the
// input as PyTorch does.
TEST(NnImport, LpPoolCeilModeKeepsThePartialWindows) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addIntsAttr(lp, "strides", {2, 2});
  addIntAttr(lp, "ceil_mode", 1);
  auto imported = importModel(onConstant(18, {1, 1, 3, 3}, lp, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ((*imported)->outputs()[0]->dims(), (Dims{1, 1, 2, 2}));
  expectNear(evaluate<float>(*(*imported)->outputs()[0]),
             {5.0990195f, 5.3851647f, 9.2195444f, 8.0f});
}

// Dilated AveragePool (opset 19) and LpPool (opset 18); numbers from ONNX Runtime 1.31 and
// ONNX's reference evaluator, which agree here. With count_include_pad the divisor counts the
// taps inside the padded input.
TEST(NnImport, DilatedAverageAndLpPooling) {
  auto avg = node("AveragePool", {"x"}, {"y"}, "avg");
  addIntsAttr(avg, "kernel_shape", {2, 2});
  addIntsAttr(avg, "dilations", {2, 2});
  addIntsAttr(avg, "pads", {1, 1, 1, 1});
  addIntAttr(avg, "count_include_pad", 1);
  auto a = importModel(onConstant(19, {1, 1, 4, 4}, avg, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(a) << a.status().message();
  expectNear(evaluate<float>(*(*a)->outputs()[0]),
             {1.25f, 2.5f, 3, 1.5f, 2.5f, 5, 6, 3, 4.5f, 9, 10, 5, 2.25f, 4.5f, 5, 2.5f});
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2});
  addIntsAttr(lp, "dilations", {2});
  addIntAttr(lp, "p", 1);
  auto l = importModel(onConstant(18, {1, 1, 5}, lp, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(l) << l.status().message();
  expectNear(evaluate<float>(*(*l)->outputs()[0]), {2, 4, 6});
}

TEST(NnImport, EinsumImplicitOutputAndDiagonal) {
  auto es = node("Einsum", {"x"}, {"y"}, "es");
  addStringAttr(es, "equation", "ii");
  auto imported = importModel(onConstant(12, {3, 3}, es, {{"y", onnx::TensorProto::FLOAT}}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ((*imported)->outputs()[0]->dims(), Dims{});
  EXPECT_EQ(evaluate<float>(*(*imported)->outputs()[0]), (std::vector<float>{0 + 4 + 8}));
}

// Each rejection names the rule and the numbers.
struct Rejection {
  const char *what;
  onnx::NodeProto node;
  std::vector<int64_t> xDims;
  std::string message;
};

TEST(NnImport, PreciseRejections) {
  std::vector<Rejection> cases;
  {
    auto n = node("Einsum", {"x"}, {"y"}, "es");
    addStringAttr(n, "equation", "ij->k");
    cases.push_back({"einsum output letter",
                     n,
                     {2, 3},
                     "node 'es' (Einsum, opset 12): Einsum: equation 'ij->k': output letter 'k' "
                     "is in no input term"});
  }
  {
    auto n = node("Einsum", {"x"}, {"y"}, "es");
    addStringAttr(n, "equation", "ijk->i");
    cases.push_back({"einsum rank",
                     n,
                     {2, 3},
                     "node 'es' (Einsum, opset 12): Einsum: equation 'ijk->i': term 'ijk' does not "
                     "fit operand 0 of shape [2,3]"});
  }
  {
    auto n = node("ConvTranspose", {"x", "x"}, {"y"}, "ct");
    addIntsAttr(n, "kernel_shape", {2, 2});
    cases.push_back({"kernel_shape",
                     n,
                     {1, 1, 3, 3},
                     "node 'ct' (ConvTranspose, opset 12): kernel_shape [2,2] disagrees with the "
                     "weights' spatial dims [3,3]"});
  }
  {
    auto n = node("Conv", {"x", "x"}, {"y"}, "conv");
    cases.push_back({"conv with 4 spatial axes",
                     n,
                     {1, 1, 2, 2, 2, 2},
                     "node 'conv' (Conv, opset 12): Conv: input [1,1,2,2,2,2] has 4 spatial axes; "
                     "1 to 3 are supported"});
  }
  {
    auto n = node("MaxPool", {"x"}, {"y", "i"}, "mp");
    addIntsAttr(n, "kernel_shape", {2});
    addIntAttr(n, "storage_order", 2);
    cases.push_back(
        {"storage order",
         n,
         {1, 1, 4},
         "node 'mp' (MaxPool, opset 12): MaxPoolIndices: storage_order 2 must be 0 or 1"});
  }
  {
    auto n = node("MaxPool", {"x"}, {"y"}, "mp");
    addIntsAttr(n, "kernel_shape", {5});
    cases.push_back({"window too large",
                     n,
                     {1, 1, 4},
                     "node 'mp' (MaxPool, opset 12): MaxPool: spatial axis 0: window of 5 "
                     "(dilation 1) does not fit input extent 4 with pads 0+0"});
  }
  for (const Rejection &r : cases) {
    auto imported = importModel(onConstant(12, r.xDims, r.node, {{"y", onnx::TensorProto::FLOAT}}));
    ASSERT_FALSE(imported) << r.what;
    EXPECT_EQ(imported.status().message(), r.message) << r.what;
  }
}

// x = [[0, 1, 2], [3, 4, 5]] per channel: batch means 1 and 4, population variances 2/3; the
// running statistics start at 1 and move by 1 - momentum (0.1 by default) towards the batch's.
TEST(NnImport, BatchNormTrainingModeUsesTheBatchStatistics) {
  auto m = model(15);
  auto *g = m.mutable_graph();
  *g->add_initializer() = floatTensor("x", {1, 2, 3}, iota(6), true);
  for (const char *p : {"s", "mean", "var"})
    *g->add_initializer() = floatTensor(p, {2}, {1, 1}, true);
  *g->add_initializer() = floatTensor("b", {2}, {0, 0}, true);
  auto bn = node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y", "rm", "rv"}, "bn");
  addIntAttr(bn, "training_mode", 1);
  *g->add_node() = bn;
  for (const char *o : {"y", "rm", "rv"})
    *g->add_output() = tensorInfo(o, onnx::TensorProto::FLOAT, {});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Graph &g2 = **imported;
  float d = 1.0f / std::sqrt(2.0f / 3.0f + 1e-5f);
  std::vector<float> y = evaluate<float>(*g2.outputs()[0]), rm = evaluate<float>(*g2.outputs()[1]),
                     rv = evaluate<float>(*g2.outputs()[2]);
  std::vector<float> wantY = {-d, 0, d, -d, 0, d}, wantRm = {1.0f, 1.3f},
                     wantRv = {0.9f + 0.2f / 3, 0.9f + 0.2f / 3};
  ASSERT_EQ(y.size(), 6u);
  ASSERT_EQ(rm.size(), 2u);
  ASSERT_EQ(rv.size(), 2u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(y[i], wantY[i], 1e-5) << i;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(rm[i], wantRm[i], 1e-6) << i;
    EXPECT_NEAR(rv[i], wantRv[i], 1e-6) << i;
  }
}

} // namespace
} // namespace odlac::test
