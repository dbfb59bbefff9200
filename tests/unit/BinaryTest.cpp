// Binary family: import edge cases the ONNX backend tests do not cover (precise rejections,
// variadic chains, PRelu-6's per-channel slope) and the reference kernels' defined results
// for integer edge cases (division by zero, INT_MIN / -1, remainders, shifts, powers).
#include "Import.h"
#include "OnnxBuilder.h"
#include "ops/OpDef.h"

#include <ODLA/odla.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace odlac::test {
namespace {

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

// A model with one node `op` over inputs named a, b, c... of the given types and dims.
onnx::ModelProto oneNode(int opset, const onnx::NodeProto &n, int elemType,
                         const std::vector<std::vector<int64_t>> &inputDims, int outType,
                         const std::vector<int64_t> &outDims) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  for (int i = 0; i < n.input_size(); ++i)
    *g->add_input() = tensorInfo(n.input(i), elemType, inputDims[i]);
  *g->add_node() = n;
  *g->add_output() = tensorInfo(n.output(0), outType, outDims);
  return m;
}

TEST(Binary, ModFmod0OnFloatsIsRejected) {
  auto n = node("Mod", {"a", "b"}, {"y"}, "mod");
  addIntAttr(n, "fmod", 0);
  auto imported = importModel(
      oneNode(13, n, onnx::TensorProto::FLOAT, {{4}, {4}}, onnx::TensorProto::FLOAT, {4}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'mod' (Mod, opset 13): fmod=0 is not defined for f32 operands before Mod-28 "
            "(Mod-10 to -27 require fmod=1 for floating-point types)");
}

TEST(Binary, BitShiftDirectionMustBeLeftOrRight) {
  auto n = node("BitShift", {"a", "b"}, {"y"}, "shift");
  addStringAttr(n, "direction", "UP");
  auto imported = importModel(
      oneNode(11, n, onnx::TensorProto::UINT8, {{4}, {4}}, onnx::TensorProto::UINT8, {4}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(), "node 'shift' (BitShift, opset 11): Shift: attribute "
                                         "direction='UP' is not supported (LEFT or RIGHT)");
}

TEST(Binary, BitShiftOnSignedIntegersIsRejected) {
  auto n = node("BitShift", {"a", "b"}, {"y"}, "shift");
  addStringAttr(n, "direction", "LEFT");
  auto imported = importModel(
      oneNode(11, n, onnx::TensorProto::INT32, {{4}, {4}}, onnx::TensorProto::INT32, {4}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'shift' (BitShift, opset 11): operand 'X' has element type i32, which BitShift "
            "takes only from opset 28 (BitShift-11 takes u8, u16, u32, u64)");
}

TEST(Binary, VariadicMaxBecomesAChainOfBinaryMax) {
  auto imported =
      importModel(oneNode(13, node("Max", {"a", "b", "c"}, {"y"}, "max"), onnx::TensorProto::FLOAT,
                          {{2, 1}, {3}, {1, 1}}, onnx::TensorProto::FLOAT, {2, 3}));
  ASSERT_TRUE(imported) << imported.status().message();
  auto nodes = (*imported)->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_STREQ(nodes[0]->op().name, "Max");
  EXPECT_STREQ(nodes[1]->op().name, "Max");
  EXPECT_EQ(nodes[1]->input(0), nodes[0]->output(0));
  EXPECT_EQ(nodes[1]->output(0)->dims(), (Dims{2, 3}));
}

TEST(Binary, SingleInputSumIsItsInput) {
  auto imported =
      importModel(oneNode(13, node("Sum", {"a"}, {"y"}, "sum"), onnx::TensorProto::FLOAT, {{3}},
                          onnx::TensorProto::FLOAT, {3}));
  ASSERT_TRUE(imported) << imported.status().message();
  auto nodes = (*imported)->nodes();
  ASSERT_EQ(nodes.size(), 1u); // the graph output's own copy
  EXPECT_STREQ(nodes[0]->op().name, "Identity");
}

TEST(Binary, SingleInputMaxStillChecksTheType) {
  auto imported = importModel(oneNode(13, node("Max", {"a"}, {"y"}, "max"), onnx::TensorProto::BOOL,
                                      {{3}}, onnx::TensorProto::BOOL, {3}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'max' (Max, opset 13): input 0 has element type bool, which Max does not "
            "support");
}

TEST(Binary, PRelu7ReadsAPerChannelSlopeAsPRelu6Did) {
  auto imported = importModel(oneNode(7, node("PRelu", {"x", "slope"}, {"y"}, "prelu"),
                                      onnx::TensorProto::FLOAT, {{2, 3, 4}, {3}},
                                      onnx::TensorProto::FLOAT, {2, 3, 4}));
  ASSERT_TRUE(imported) << imported.status().message();
  auto nodes = (*imported)->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_STREQ(nodes[0]->op().name, "Reshape");
  EXPECT_EQ(nodes[0]->output(0)->dims(), (Dims{3, 1}));
  EXPECT_STREQ(nodes[1]->op().name, "PRelu");
}

TEST(Binary, PRelu9SlopeMustBroadcastToX) {
  auto imported = importModel(oneNode(9, node("PRelu", {"x", "slope"}, {"y"}, "prelu"),
                                      onnx::TensorProto::FLOAT, {{2, 3, 4}, {3}},
                                      onnx::TensorProto::FLOAT, {2, 3, 4}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(), "node 'prelu' (PRelu, opset 9): PRelu: slope [3] does "
                                         "not broadcast to x [2,3,4] (unidirectionally)");
}

TEST(Binary, WhereBroadcastsThreeWays) {
  auto m = model(16);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("c", onnx::TensorProto::BOOL, {3, 1});
  *g->add_input() = tensorInfo("x", onnx::TensorProto::INT64, {1, 4});
  *g->add_input() = tensorInfo("y", onnx::TensorProto::INT64, {});
  *g->add_node() = node("Where", {"c", "x", "y"}, {"z"}, "where");
  *g->add_output() = tensorInfo("z", onnx::TensorProto::INT64, {3, 4});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_STREQ((*imported)->nodes()[0]->op().name, "Select");
  EXPECT_EQ((*imported)->nodes()[0]->output(0)->type(), (TensorType{DType::I64, {3, 4}}));
}

// ---- Reference kernels -------------------------------------------------------------------

// Runs y = build(a, b) on the reference backend for 1-D operands of types ta and tb.
template <class R, class A, class B, class Build>
std::vector<R> run(odla_element_type ta, const std::vector<A> &a, odla_element_type tb,
                   const std::vector<B> &b, Build build) {
  odla_computation comp = nullptr;
  EXPECT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_type typeA{ta, {1, {static_cast<odla_int64>(a.size())}}};
  odla_value_type typeB{tb, {1, {static_cast<odla_int64>(b.size())}}};
  odla_value y = build(odla_CreateConstant(typeA, a.data(), (odla_value_id) "a"),
                       odla_CreateConstant(typeB, b.data(), (odla_value_id) "b"));
  std::vector<R> out(std::max(a.size(), b.size()));
  if (!y) {
    odla_DestroyComputation(comp);
    ADD_FAILURE() << "the builder rejected its operands";
    return {};
  }
  EXPECT_EQ(odla_SetValueAsOutput(y), ODLA_SUCCESS);
  odla_context ctx = nullptr;
  EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
  EXPECT_EQ(odla_BindToOutputById((odla_value_id) "y", out.data(), ctx), ODLA_SUCCESS);
  EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
  return out;
}

// The same for two operands of one type T, with a result of type R.
template <class T, class R = T, class Build>
std::vector<R> run2(odla_element_type t, const std::vector<T> &a, const std::vector<T> &b,
                    Build build) {
  return run<R>(t, a, t, b, build);
}

#define ODLA_BINARY(Fn) [](odla_value a, odla_value b) { return Fn(a, b, (odla_value_id) "y"); }

TEST(BinaryKernels, IntegerDivisionTruncatesAndNeverTraps) {
  std::vector<int32_t> a{7, -7, 7, INT32_MIN, 5}, b{2, 2, 0, -1, -3};
  EXPECT_EQ(run2<int32_t>(ODLA_INT32, a, b, ODLA_BINARY(odla_Div)),
            (std::vector<int32_t>{3, -3, 0, INT32_MIN, -1}));
}

TEST(BinaryKernels, IntegerOverflowWraps) {
  std::vector<int8_t> a{127, -128, 100}, b{1, -1, 3};
  EXPECT_EQ(run2<int8_t>(ODLA_INT8, a, b, ODLA_BINARY(odla_Add)),
            (std::vector<int8_t>{-128, 127, 103}));
  EXPECT_EQ(run2<int8_t>(ODLA_INT8, a, b, ODLA_BINARY(odla_Mul)),
            (std::vector<int8_t>{127, -128, 44}));
}

TEST(BinaryKernels, ModTakesTheDivisorsSignUnlessFmod) {
  std::vector<int16_t> a{7, -7, 7, -7, 5, INT16_MIN}, b{3, 3, -3, -3, 0, -1};
  auto floored = [](odla_value x, odla_value y) { return odla_Mod(x, y, 0, (odla_value_id) "y"); };
  auto truncated = [](odla_value x, odla_value y) {
    return odla_Mod(x, y, 1, (odla_value_id) "y");
  };
  EXPECT_EQ(run2<int16_t>(ODLA_INT16, a, b, floored), (std::vector<int16_t>{1, 2, -2, -1, 0, 0}));
  EXPECT_EQ(run2<int16_t>(ODLA_INT16, a, b, truncated), (std::vector<int16_t>{1, -1, 1, -1, 0, 0}));
  std::vector<float> fa{5.5f, -5.5f}, fb{2.0f, 2.0f};
  EXPECT_EQ(run2<float>(ODLA_FLOAT32, fa, fb, truncated), (std::vector<float>{1.5f, -1.5f}));
  EXPECT_EQ(run2<float>(ODLA_FLOAT32, fa, fb, floored), (std::vector<float>{1.5f, 0.5f}));
}

TEST(BinaryKernels, ShiftsByTheWidthOrMoreGiveZero) {
  std::vector<uint8_t> a{0x81, 0x81, 0x81, 0x81}, b{1, 7, 8, 200};
  auto left = [](odla_value x, odla_value y) { return odla_Shift(x, y, 1, (odla_value_id) "y"); };
  auto right = [](odla_value x, odla_value y) { return odla_Shift(x, y, 0, (odla_value_id) "y"); };
  EXPECT_EQ(run2<uint8_t>(ODLA_UINT8, a, b, left), (std::vector<uint8_t>{0x02, 0x80, 0, 0}));
  EXPECT_EQ(run2<uint8_t>(ODLA_UINT8, a, b, right), (std::vector<uint8_t>{0x40, 0x01, 0, 0}));
}

TEST(BinaryKernels, IntegerPowIsExactAndNegativeExponentsTruncate) {
  std::vector<int64_t> a{3, -2, 2, 1, -1, -1, 0}, b{39, 63, -1, -5, -3, -4, -2};
  EXPECT_EQ(run2<int64_t>(ODLA_INT64, a, b, ODLA_BINARY(odla_Pow)),
            (std::vector<int64_t>{4052555153018976267LL, INT64_MIN, 0, 1, -1, 1, 0}));
}

TEST(BinaryKernels, PowWithAFloatExponentKeepsTheBaseType) {
  // pow in double, truncated toward zero and saturated; NaN (a negative base to a fractional
  // power) becomes 0.
  std::vector<int32_t> a{2, 3, -8, 10};
  std::vector<float> b{0.5f, 2.5f, 0.5f, 20.0f};
  EXPECT_EQ(run<int32_t>(ODLA_INT32, a, ODLA_FLOAT32, b, ODLA_BINARY(odla_Pow)),
            (std::vector<int32_t>{1, 15, 0, INT32_MAX}));
  std::vector<float> fa{2.0f, 9.0f};
  std::vector<int64_t> eb{-2, 3};
  EXPECT_EQ(run<float>(ODLA_FLOAT32, fa, ODLA_INT64, eb, ODLA_BINARY(odla_Pow)),
            (std::vector<float>{0.25f, 729.0f}));
}

TEST(BinaryKernels, MaxAndMinPropagateNaN) {
  const float nan = std::nanf("");
  std::vector<float> a{nan, 1.0f, 2.0f}, b{1.0f, nan, 1.0f};
  auto mx = run2<float>(ODLA_FLOAT32, a, b, ODLA_BINARY(odla_Max));
  auto mn = run2<float>(ODLA_FLOAT32, a, b, ODLA_BINARY(odla_Min));
  ASSERT_EQ(mx.size(), 3u);
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 2.0f);
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 1.0f);
}

TEST(BinaryKernels, ComparisonsGiveBool) {
  const float nan = std::nanf("");
  std::vector<float> a{1.0f, 2.0f, nan}, b{2.0f, 2.0f, nan};
  EXPECT_EQ((run2<float, uint8_t>(ODLA_FLOAT32, a, b, ODLA_BINARY(odla_LessOrEqual))),
            (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ((run2<float, uint8_t>(ODLA_FLOAT32, a, b, ODLA_BINARY(odla_NotEqual))),
            (std::vector<uint8_t>{1, 0, 1}));
}

#undef ODLA_BINARY

} // namespace
} // namespace odlac::test
