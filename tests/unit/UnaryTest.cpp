// Tests of the unary family for what ONNX's backend tests do not cover: the reference
// backend's defined semantics (Cast rounding without double rounding, float-to-int
// saturation, integer wrap; Clamp exact on int64 and with lo > hi; Round half to even), the
// shape of the decompositions (HardSwish, Clip through Max/Min) and precise rejections.
#include "Import.h"
#include "OnnxBuilder.h"
#include "ir/Printer.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <ODLA/odla.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace odlac::test {
namespace {

// ---- Reference kernels through the ODLA API --------------------------------------------

odla_value_shape shape1(int64_t n) {
  odla_value_shape s{};
  s.size = 1;
  s.dims[0] = n;
  return s;
}

// Builds `build(x)` on a constant x of `n` elements of type `in`, runs it and returns the
// result's bytes (`outBytes` per element).
template <class Build>
std::vector<unsigned char> runUnary(odla_element_type in, const void *x, int64_t n, size_t outBytes,
                                    Build build) {
  std::vector<unsigned char> out(static_cast<size_t>(n) * outBytes);
  odla_computation comp;
  EXPECT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value xv = odla_CreateConstant({in, shape1(n)}, x, (odla_value_id) "x");
  odla_value y = build(xv);
  EXPECT_NE(y, nullptr);
  if (y) {
    odla_context ctx;
    EXPECT_EQ(odla_SetValueAsOutput(y), ODLA_SUCCESS);
    EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
    EXPECT_EQ(odla_BindToOutput(y, out.data(), ctx), ODLA_SUCCESS);
    EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
    odla_DestroyContext(ctx);
  }
  odla_DestroyComputation(comp);
  return out;
}

template <class To, class From>
std::vector<To> cast(const std::vector<From> &x, odla_element_type from, odla_element_type to) {
  auto bytes = runUnary(from, x.data(), static_cast<int64_t>(x.size()), sizeof(To),
                        [&](odla_value v) { return odla_Cast(v, to, (odla_value_id) "y"); });
  std::vector<To> out(x.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(UnaryReference, CastToFloat16AndBfloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 midpoint between 1 and 1 + 2^-10; rounding
  // to float32 first would land on the midpoint and round down to even.
  std::vector<double> d{1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 65519.0, 65520.0};
  EXPECT_EQ((cast<uint16_t>(d, ODLA_FLOAT64, ODLA_FLOAT16)),
            (std::vector<uint16_t>{0x3c01, 0x7bff, 0x7c00}));
  // 2^24 + 2^16 + 1 is just above the bfloat16 midpoint between 2^24 and 2^24 + 2^17.
  std::vector<int64_t> i{(int64_t{1} << 24) + (1 << 16) + 1, (int64_t{1} << 24) + (1 << 16)};
  EXPECT_EQ((cast<uint16_t>(i, ODLA_INT64, ODLA_BFLOAT16)),
            (std::vector<uint16_t>{0x4b81, 0x4b80}));
}

TEST(UnaryReference, CastFloatToIntTruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{2.9f, -2.9f, 300.0f, -300.0f, nan, -0.5f, 1e30f};
  EXPECT_EQ((cast<int8_t>(x, ODLA_FLOAT32, ODLA_INT8)),
            (std::vector<int8_t>{2, -2, 127, -128, 0, 0, 127}));
  EXPECT_EQ((cast<uint8_t>(x, ODLA_FLOAT32, ODLA_UINT8)),
            (std::vector<uint8_t>{2, 0, 255, 0, 0, 0, 255}));
  EXPECT_EQ((cast<int64_t>(std::vector<double>{9.3e18, -9.3e18}, ODLA_FLOAT64, ODLA_INT64)),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
}

TEST(UnaryReference, CastBetweenIntegersWrapsAndBoolIsNonzero) {
  std::vector<int32_t> x{300, -1, 255, 0};
  EXPECT_EQ((cast<uint8_t>(x, ODLA_INT32, ODLA_UINT8)), (std::vector<uint8_t>{44, 255, 255, 0}));
  EXPECT_EQ((cast<int8_t>(x, ODLA_INT32, ODLA_INT8)), (std::vector<int8_t>{44, -1, -1, 0}));
  EXPECT_EQ((cast<uint8_t>(x, ODLA_INT32, ODLA_BOOL)), (std::vector<uint8_t>{1, 1, 1, 0}));
  std::vector<uint64_t> big{(uint64_t{1} << 63) + 3};
  EXPECT_EQ((cast<double>(big, ODLA_UINT64, ODLA_FLOAT64)),
            (std::vector<double>{9223372036854775808.0}));
}

TEST(UnaryReference, ClampIsExactOnInt64) {
  const int64_t p62 = int64_t{1} << 62;
  std::vector<int64_t> x{p62 + 1, -p62 - 3, (int64_t{1} << 53) + 1, 5};
  auto bytes = runUnary(ODLA_INT64, x.data(), 4, 8, [&](odla_value v) {
    return odla_Clamp(v, -static_cast<float>(p62), static_cast<float>(p62), (odla_value_id) "y");
  });
  std::vector<int64_t> y(4);
  std::memcpy(y.data(), bytes.data(), 32);
  EXPECT_EQ(y, (std::vector<int64_t>{p62, -p62, (int64_t{1} << 53) + 1, 5}));
}

TEST(UnaryReference, ClampRoundsIntegerBoundsInwardAndLoAboveHiGivesHi) {
  std::vector<int8_t> x{-100, 0, 1, 2, 100};
  auto run = [&](float lo, float hi) {
    auto b = runUnary(ODLA_INT8, x.data(), 5, 1,
                      [&](odla_value v) { return odla_Clamp(v, lo, hi, (odla_value_id) "y"); });
    return std::vector<int8_t>(b.begin(), b.end());
  };
  EXPECT_EQ(run(0.5f, 1e9f), (std::vector<int8_t>{1, 1, 1, 2, 100}));
  EXPECT_EQ(run(-INFINITY, 1.5f), (std::vector<int8_t>{-100, 0, 1, 1, 1}));
  EXPECT_EQ(run(5.0f, -5.0f), (std::vector<int8_t>{-5, -5, -5, -5, -5}));
}

TEST(UnaryReference, RoundIsHalfToEven) {
  std::vector<float> x{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f};
  auto b = runUnary(ODLA_FLOAT32, x.data(), 7, 4,
                    [](odla_value v) { return odla_Round(v, (odla_value_id) "y"); });
  std::vector<float> y(7);
  std::memcpy(y.data(), b.data(), b.size());
  EXPECT_EQ(y, (std::vector<float>{0, 2, 2, -0.0f, -2, -2, 2}));
}

TEST(UnaryReference, BuildersRejectUnsupportedTypes) {
  std::vector<int32_t> x{1, 2};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value xv = odla_CreateConstant({ODLA_INT32, shape1(2)}, x.data(), (odla_value_id) "x");
  EXPECT_EQ(odla_Exp(xv, (odla_value_id) "e"), nullptr);
  odla_executable exe = nullptr;
  EXPECT_EQ(odla_CompileComputation(comp, nullptr, &exe), ODLA_UNSUPPORTED_DATATYPE);
  odla_DestroyComputation(comp);
}

// ---- Import --------------------------------------------------------------------------

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kI64 = onnx::TensorProto::INT64;
constexpr int kBool = onnx::TensorProto::BOOL;

Expected<std::unique_ptr<Graph>> importUnary(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

std::string rejection(const onnx::ModelProto &m) {
  auto g = importUnary(m);
  return g ? std::string("(imported)") : g.status().message();
}

std::string irOf(const onnx::ModelProto &m) {
  auto g = importUnary(m);
  return g ? printGraph(**g) : "error: " + g.status().message();
}

onnx::TensorProto scalarTensor(const std::string &name, int type, double v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == kF32)
    t.add_float_data(static_cast<float>(v));
  else if (type == kI64)
    t.add_int64_data(static_cast<int64_t>(v));
  else
    t.add_int32_data(v != 0);
  return t;
}

// x (type `type`, [4]) -> node -> y, with the given initializers.
onnx::ModelProto oneNode(int opset, const onnx::NodeProto &n, int type,
                         const std::vector<onnx::TensorProto> &inits = {}, int yType = -1) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", type, {4});
  for (const auto &t : inits)
    *g->add_initializer() = t;
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", yType < 0 ? type : yType, {4});
  return m;
}

TEST(UnaryImport, HardSwishIsXTimesHardSigmoid) {
  std::string ir = irOf(oneNode(14, node("HardSwish", {"x"}, {"y"}, "hs"), kF32));
  EXPECT_NE(ir.find("HardSigmoid(%x)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("Mul(%x, "), std::string::npos) << ir;
}

TEST(UnaryImport, ClipWithFloat32BoundsIsClamp) {
  auto m = oneNode(13, node("Clip", {"x", "lo", "hi"}, {"y"}, "clip"), kI64,
                   {scalarTensor("lo", kI64, -7), scalarTensor("hi", kI64, 9.0)});
  std::string ir = irOf(m);
  EXPECT_NE(ir.find("Clamp(%x)"), std::string::npos) << ir;
}

TEST(UnaryImport, ClipWithInt64BoundBeyondFloat32TakesMaxMin) {
  auto m = oneNode(13, node("Clip", {"x", "lo"}, {"y"}, "clip"), kI64,
                   {scalarTensor("lo", kI64, static_cast<double>((int64_t{1} << 40) + 1))});
  std::string ir = irOf(m);
  if (findOp("Max"))
    EXPECT_NE(ir.find("Max(%x, %lo)"), std::string::npos) << ir;
  else
    EXPECT_NE(ir.find("min 1099511627777 of a i64 input is not exactly a float32"),
              std::string::npos)
        << ir;
}

TEST(UnaryImport, ClipWithNaNBoundIsRejected) {
  auto m = oneNode(13, node("Clip", {"x", "lo"}, {"y"}, "clip"), kF32,
                   {scalarTensor("lo", kF32, std::nan(""))});
  EXPECT_EQ(rejection(m), "node 'clip' (Clip, opset 13): min is NaN");
}

TEST(UnaryImport, CastToStringIsRejected) {
  auto n = node("Cast", {"x"}, {"y"}, "cast");
  addIntAttr(n, "to", onnx::TensorProto::STRING);
  EXPECT_EQ(rejection(oneNode(13, n, kF32, {}, onnx::TensorProto::STRING)),
            "node 'cast' (Cast, opset 13): cast from f32 to str is not supported (odlac does "
            "not format or parse numbers as text)");
}

TEST(UnaryImport, CastLikeTakesTheTargetTypeOfItsSecondOperand) {
  auto m = oneNode(15, node("CastLike", {"x", "like"}, {"y"}, "cl"), kF32,
                   {scalarTensor("like", kBool, 0)}, kBool);
  std::string ir = irOf(m);
  // saturate and round_mode take ONNX's defaults (they matter for the 8-bit floats only).
  EXPECT_NE(ir.find("Cast(%x) {round_mode = \"up\", saturate = 1, to = \"bool\"}"),
            std::string::npos)
      << ir;
}

TEST(UnaryImport, DropoutInTrainingModeIsRejectedUnlessRatioIsZero) {
  auto n = node("Dropout", {"x", "r", "t"}, {"y"}, "drop");
  auto withRatio = [&](double r) {
    return oneNode(13, n, kF32, {scalarTensor("r", kF32, r), scalarTensor("t", kBool, 1)});
  };
  EXPECT_EQ(rejection(withRatio(0.5)),
            "node 'drop' (Dropout, opset 13): training_mode=true with ratio 0.5 is not "
            "supported: it drops elements at random; odlac compiles for inference");
  EXPECT_TRUE(importUnary(withRatio(0)));

  auto m = oneNode(13, n, kF32, {scalarTensor("r", kF32, 0.5)});
  *m.mutable_graph()->add_input() = tensorInfo("t", kBool, {});
  EXPECT_EQ(rejection(m), "node 'drop' (Dropout, opset 13): training_mode (input 2, 't') must be "
                          "known at compile time, but it depends on a graph input");
}

} // namespace
} // namespace odlac::test
