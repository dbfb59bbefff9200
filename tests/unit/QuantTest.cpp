// Quantization: the reference backend's odla_Quantize/odla_Dequantize semantics (ties to
// even, saturation, NaN, per-axis parameters, result types beyond ONNX's) and the import of
// the integer products (exact accumulation type chosen from the operand bound).
extern "C" {
#include <ODLA/odla.h>
}

#include "Import.h"
#include "OnnxBuilder.h"
#include "ops/OpDef.h"
#include "ops/Requantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace odlac::test {
namespace {

odla_value_shape shape1(int64_t n) {
  odla_value_shape s{};
  s.size = 1;
  s.dims[0] = n;
  return s;
}

// Builds `build` in a fresh computation and returns the bytes of its single result.
template <class Out, class Build> std::vector<Out> runOne(size_t count, Build build) {
  odla_computation comp;
  EXPECT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  std::vector<Out> out(count);
  odla_value v = build();
  EXPECT_NE(v, nullptr);
  if (v) {
    EXPECT_EQ(odla_SetValueAsOutput(v), ODLA_SUCCESS);
    odla_context ctx;
    EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
    EXPECT_EQ(odla_BindToOutput(v, out.data(), ctx), ODLA_SUCCESS);
    EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
    odla_DestroyContext(ctx);
  }
  odla_DestroyComputation(comp);
  return out;
}

const float kTies[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 300.0f, -300.0f, NAN};
constexpr size_t kNumTies = sizeof kTies / sizeof kTies[0];

TEST(QuantReference, QuantizeRoundsHalfToEvenAndSaturates) {
  static const float one = 1.0f;
  static const int8_t zp = -1;
  auto u8 = runOne<uint8_t>(kNumTies, [] {
    odla_value x =
        odla_CreateConstant({ODLA_FLOAT32, shape1(kNumTies)}, kTies, (odla_value_id) "x");
    odla_value s = odla_CreateConstant({ODLA_FLOAT32, {0, {}}}, &one, (odla_value_id) "s");
    return odla_Quantize(x, s, nullptr, 0, ODLA_UINT8, (odla_value_id) "y");
  });
  EXPECT_EQ(u8, (std::vector<uint8_t>{0, 2, 2, 0, 0, 0, 255, 0, 0}));
  auto i8 = runOne<int8_t>(kNumTies, [] {
    odla_value x =
        odla_CreateConstant({ODLA_FLOAT32, shape1(kNumTies)}, kTies, (odla_value_id) "x");
    odla_value s = odla_CreateConstant({ODLA_FLOAT32, shape1(1)}, &one, (odla_value_id) "s");
    odla_value z = odla_CreateConstant({ODLA_INT8, {0, {}}}, &zp, (odla_value_id) "z");
    return odla_Quantize(x, s, z, 0, ODLA_INT8, (odla_value_id) "y");
  });
  // NaN quantizes to the zero point.
  EXPECT_EQ(i8, (std::vector<int8_t>{-1, 1, 1, -1, -3, -3, 127, -128, -1}));
  auto i16 = runOne<int16_t>(kNumTies, [] {
    odla_value x =
        odla_CreateConstant({ODLA_FLOAT32, shape1(kNumTies)}, kTies, (odla_value_id) "x");
    odla_value s = odla_CreateConstant({ODLA_FLOAT32, {0, {}}}, &one, (odla_value_id) "s");
    return odla_Quantize(x, s, nullptr, 0, ODLA_INT16, (odla_value_id) "y");
  });
  EXPECT_EQ(i16, (std::vector<int16_t>{0, 2, 2, 0, -2, -2, 300, -300, 0}));
}

TEST(QuantReference, PerAxisParametersFollowTheAxis) {
  static const float x[] = {1, 2, 3, 4, 5, 6}; // [2, 3]
  static const float scale[] = {1, 2, 4};
  static const uint8_t zp[] = {10, 20, 30};
  auto y = runOne<uint8_t>(6, [] {
    odla_value_shape xs{};
    xs.size = 2;
    xs.dims[0] = 2;
    xs.dims[1] = 3;
    odla_value xv = odla_CreateConstant({ODLA_FLOAT32, xs}, x, (odla_value_id) "x");
    odla_value s = odla_CreateConstant({ODLA_FLOAT32, shape1(3)}, scale, (odla_value_id) "s");
    odla_value z = odla_CreateConstant({ODLA_UINT8, shape1(3)}, zp, (odla_value_id) "z");
    return odla_Quantize(xv, s, z, -1, ODLA_UINT8, (odla_value_id) "y");
  });
  // 1/1+10, 2/2+20, 3/4 -> 1 (0.75 rounds up) +30; 4+10, 5/2 = 2.5 -> 2 +20, 6/4 = 1.5 -> 2 +30.
  EXPECT_EQ(y, (std::vector<uint8_t>{11, 21, 31, 14, 22, 32}));
}

TEST(QuantReference, DequantizeToFloat64IsExact) {
  static const int32_t x[] = {INT32_MIN, -7, 0, 16777217, INT32_MAX};
  static const double scale = 0.5;
  static const int32_t zp = 1;
  auto y = runOne<double>(5, [] {
    odla_value xv = odla_CreateConstant({ODLA_INT32, shape1(5)}, x, (odla_value_id) "x");
    odla_value s = odla_CreateConstant({ODLA_FLOAT64, {0, {}}}, &scale, (odla_value_id) "s");
    odla_value z = odla_CreateConstant({ODLA_INT32, {0, {}}}, &zp, (odla_value_id) "z");
    return odla_Dequantize(xv, s, z, 0, ODLA_FLOAT64, (odla_value_id) "y");
  });
  EXPECT_EQ(y, (std::vector<double>{-1073741824.5, -4.0, -0.5, 8388608.0, 1073741823.0}));
}

TEST(QuantReference, MismatchedParametersAreRejectedAtBuildTime) {
  static const float x[6] = {};
  static const float scale[2] = {1, 1};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value xv = odla_CreateConstant({ODLA_FLOAT32, shape1(6)}, x, (odla_value_id) "x");
  odla_value s = odla_CreateConstant({ODLA_FLOAT32, shape1(2)}, scale, (odla_value_id) "s");
  EXPECT_EQ(odla_Quantize(xv, s, nullptr, 0, ODLA_UINT8, (odla_value_id) "y"), nullptr);
  EXPECT_EQ(odla_Quantize(xv, s, nullptr, 0, ODLA_FLOAT32, (odla_value_id) "y2"), nullptr);
  odla_DestroyComputation(comp);
}

// ---- Import --------------------------------------------------------------------------------

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

onnx::TensorProto scalar(const std::string &name, int type, const void *data, size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  t.set_raw_data(std::string(static_cast<const char *>(data), bytes));
  return t;
}

// QLinearMatMul of uint8 a [2, k] and b [k, 3] with scalar scales and zero points, constants
// unless `scalesAsInputs` (then the scales are graph inputs, known only at run time).
onnx::ModelProto qlinearMatMul(int64_t k, bool scalesAsInputs = false) {
  auto m = model(10);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("a", onnx::TensorProto::UINT8, {2, k});
  *g->add_input() = tensorInfo("b", onnx::TensorProto::UINT8, {k, 3});
  float s = 0.5f;
  uint8_t z = 3;
  for (const char *n : {"as", "bs", "ys"})
    if (scalesAsInputs)
      *g->add_input() = tensorInfo(n, onnx::TensorProto::FLOAT, {});
    else
      *g->add_initializer() = scalar(n, onnx::TensorProto::FLOAT, &s, 4);
  for (const char *n : {"az", "bz", "yz"})
    *g->add_initializer() = scalar(n, onnx::TensorProto::UINT8, &z, 1);
  *g->add_node() =
      node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"}, "qmm");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::UINT8, {2, 3});
  return m;
}

// MatMulInteger of uint8 a [2, k] and b [k, 3] with constant zero points: scalars, or a's one
// per row (`perRow`: the integer product takes one, so the float form computes it).
onnx::ModelProto matMulInteger(int64_t k, bool perRow = false) {
  auto m = model(10);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("a", onnx::TensorProto::UINT8, {2, k});
  *g->add_input() = tensorInfo("b", onnx::TensorProto::UINT8, {k, 3});
  uint8_t z[2] = {3, 4};
  *g->add_initializer() = scalar("az", onnx::TensorProto::UINT8, z, perRow ? 2 : 1);
  if (perRow)
    g->mutable_initializer(0)->add_dims(2);
  *g->add_initializer() = scalar("bz", onnx::TensorProto::UINT8, z, 1);
  *g->add_node() = node("MatMulInteger", {"a", "b", "az", "bz"}, {"y"}, "mmi");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::INT32, {2, 3});
  return m;
}

const Node *findNode(const Graph &g, const char *op) {
  for (const Node *n : g.nodes())
    if (std::string(n->op().name) == op)
      return n;
  return nullptr;
}

std::string accumulatorOf(const Graph &g) {
  const Node *n = findNode(g, "MatMul");
  return n ? dtypeName(n->output(0)->dtype()) : "none";
}

TEST(QuantImport, ProductsAccumulateInFloat32OnlyWhileExact) {
  // 258 terms of at most 255 * 255 stay below 2^24; 259 do not.
  auto small = importModel(matMulInteger(258, true));
  ASSERT_TRUE(small) << small.status().message();
  EXPECT_EQ(accumulatorOf(**small), "f32");
  auto big = importModel(matMulInteger(259, true));
  ASSERT_TRUE(big) << big.status().message();
  EXPECT_EQ(accumulatorOf(**big), "f64");
  // With run-time scales QLinearMatMul keeps the float form too.
  auto computed = importModel(qlinearMatMul(259, true));
  ASSERT_TRUE(computed) << computed.status().message();
  EXPECT_EQ(accumulatorOf(**computed), "f64");
  EXPECT_EQ(findNode(**computed, "QLinearMatMul"), nullptr);
}

TEST(QuantImport, MatMulIntegerIsTheIntegerProductWithoutRequantization) {
  auto imported = importModel(matMulInteger(300));
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *n = findNode(**imported, "QLinearMatMul");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(accumulatorOf(**imported), "none");
  EXPECT_EQ(n->input(5), nullptr); // no multiplier, shift or output zero point
  EXPECT_EQ(n->input(7), nullptr);
  EXPECT_EQ(n->output(0)->dtype(), DType::I32);
  EXPECT_EQ(n->i("output_min"), INT32_MIN);
  EXPECT_EQ(n->i("output_max"), INT32_MAX);
}

TEST(QuantImport, ConstantScalesMakeTheIntegerProduct) {
  auto imported = importModel(qlinearMatMul(300));
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *n = findNode(**imported, "QLinearMatMul");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(accumulatorOf(**imported), "none");
  // 0.5 * 0.5 / 0.5 = 2^30 / 2^31.
  const Value *multiplier = n->input(5), *shift = n->input(6);
  ASSERT_TRUE(multiplier->isConstant() && shift->isConstant());
  EXPECT_EQ(multiplier->data()->as<int32_t>()[0], 1 << 30);
  EXPECT_EQ(shift->data()->as<int32_t>()[0], 31);
  EXPECT_EQ(n->i("output_min"), 0);
  EXPECT_EQ(n->i("output_max"), 255);
}

TEST(Requantize, FixedPointFactorsRoundToNearest) {
  auto check = [](double factor, int32_t multiplier, int32_t shift) {
    auto fp = fixedPoint(factor);
    ASSERT_TRUE(fp) << fp.status().message();
    EXPECT_EQ(fp->multiplier, multiplier) << factor;
    EXPECT_EQ(fp->shift, shift) << factor;
  };
  check(1.0, 1 << 30, 30);
  check(0.5, 1 << 30, 31);
  check(0.75, 0x60000000, 31);
  check(0.125, 1 << 30, 33);
  check(1.0 - std::ldexp(1.0, -40), 1 << 30, 30); // rounds up to 1.0
  check(std::ldexp(1.0, -33), 0, 1);              // below 2^-32: zero
  check(std::ldexp(1.0, -32), 1 << 30, 62);
  check(0.0, 0, 1);
  auto big = fixedPoint(std::ldexp(1.0, 30));
  ASSERT_FALSE(big);
  EXPECT_EQ(big.status().message(), "requantization factor 1.07374e+09 is 2^30 or more (input "
                                    "scale times kernel scale over output scale)");
  EXPECT_FALSE(fixedPoint(NAN));
  EXPECT_FALSE(fixedPoint(-1.0));
}

TEST(QuantImport, PerAxisParametersNeedOpset13) {
  auto m = model(10);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
  *g->add_initializer() = floatTensor("s", {3}, {1, 2, 3}, true);
  *g->add_node() = node("QuantizeLinear", {"x", "s"}, {"y"}, "q");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::UINT8, {2, 3});
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'q' (QuantizeLinear, opset 10): per-axis scale f32[3] needs opset 13; before, "
            "scale and zero point are scalars (input f32[2,3])");
}

} // namespace
} // namespace odlac::test
