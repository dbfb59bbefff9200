// Data movement import rules: decompositions checked numerically on the reference backend,
// and the precise rejections that ONNX's own tests do not reach.
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <ODLA/odla.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstring>

namespace odlac::test {
namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return v;
}

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

// The values of graph output 0, computed on the reference backend (the model has no inputs).
std::vector<float> evaluateOutput(const Graph &g) {
  auto data = evaluateValue(*g.outputs()[0]);
  EXPECT_TRUE(data) << data.status().message();
  if (!data)
    return {};
  const float *p = (*data)->as<float>();
  return std::vector<float>(p, p + g.outputs()[0]->type().numElements());
}

// A model computing `op` on the constant x = [0, 1, ..., n - 1] of shape xDims.
onnx::ModelProto unaryOnConstant(int opset, const std::vector<int64_t> &xDims,
                                 const onnx::NodeProto &op, const std::vector<int64_t> &yDims) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  int64_t n = 1;
  for (int64_t d : xDims)
    n *= d;
  *g->add_initializer() = floatTensor("x", xDims, iota(static_cast<int>(n)), true);
  *g->add_node() = op;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, yDims);
  return m;
}

// BitCast keeps the bits (1.0f is 0x3f800000) and refuses another width.
TEST(DataMovement, BitCastReinterpretsTheBitsOfOneWidth) {
  auto cast = node("BitCast", {"x"}, {"y"}, "bc");
  addIntAttr(cast, "to", onnx::TensorProto::INT32);
  auto m = unaryOnConstant(26, {2}, cast, {2});
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT32);
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  auto data = evaluateValue(*(*imported)->outputs()[0]);
  ASSERT_TRUE(data) << data.status().message();
  EXPECT_EQ((*data)->as<int32_t>()[0], 0);
  EXPECT_EQ((*data)->as<int32_t>()[1], 0x3f800000);

  auto wide = node("BitCast", {"x"}, {"y"}, "bc");
  addIntAttr(wide, "to", onnx::TensorProto::INT64);
  auto refused = importModel(unaryOnConstant(26, {2}, wide, {2}));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().message(), "node 'bc' (BitCast, opset 26): BitCast: cannot "
                                        "reinterpret f32 (32 bits) as i64 (64 bits)");
}

TEST(DataMovement, Reshape1TakesItsShapeAttribute) {
  // Reshape-1 to -4 (shape an attribute; 0 copies the input's dim, -1 is inferred), by
  // odlac's own rule, with libonnx off and on: libonnx 1.12's version converter upgrades the
  // model to a Reshape-5 whose shape constant is mistyped, which odlac then imports as it was.
  auto reshape = node("Reshape", {"x"}, {"y"}, "reshape");
  addIntsAttr(reshape, "shape", {2, -1, 0});
  for (int seconds : {0, 20}) {
    ImportOptions opts;
    opts.libonnxSeconds = seconds;
    auto imported =
        importOnnxFile(save(unaryOnConstant(4, {3, 4, 5}, reshape, {2, 6, 5}), tempDir()), opts);
    ASSERT_TRUE(imported) << imported.status().message();
    EXPECT_EQ((*imported)->outputs()[0]->dims(), (Dims{2, 6, 5}));
    EXPECT_EQ(evaluateOutput(**imported), iota(60));
  }
}

TEST(DataMovement, ReflectAndEdgePadsDecomposeIntoSliceAndConcat) {
  // x = [[0 1 2] [3 4 5]]; pads: rows (1, 0), columns (2, 1).
  for (const char *mode : {"reflect", "edge"}) {
    auto pad = node("Pad", {"x"}, {"y"}, "pad");
    addStringAttr(pad, "mode", mode);
    addIntsAttr(pad, "pads", {1, 2, 0, 1});
    auto imported = importModel(unaryOnConstant(10, {2, 3}, pad, {3, 6}));
    ASSERT_TRUE(imported) << mode << ": " << imported.status().message();
    for (const Node *n : (*imported)->nodes())
      EXPECT_STRNE(n->op().name, "PadDynamic") << mode;
    std::vector<float> want =
        std::string(mode) == "reflect"
            ? std::vector<float>{5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}
            : std::vector<float>{0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5};
    EXPECT_EQ(evaluateOutput(**imported), want) << mode;
  }
}

TEST(DataMovement, ConstantPadWithValueAndNegativePads) {
  // Crop one column at the front, pad one row at the back with 9.
  auto pad = node("Pad", {"x"}, {"y"}, "pad");
  addIntsAttr(pad, "pads", {0, -1, 1, 0});
  auto *value = pad.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::FLOAT);
  value->set_f(9.0f);
  auto imported = importModel(unaryOnConstant(10, {2, 3}, pad, {3, 2}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(evaluateOutput(**imported), (std::vector<float>{1, 2, 4, 5, 9, 9}));
}

TEST(DataMovement, SliceClampsIndicesLikeNumpy) {
  struct Case {
    int64_t start, end, step;
    std::vector<float> want;
  };
  for (const Case &c : std::vector<Case>{{-1, INT64_MIN, -2, {5, 3, 1}},
                                         {10, -100, -1, {5, 4, 3, 2, 1, 0}},
                                         {-100, 100, 4, {0, 4}},
                                         {2, 1, 1, {}},
                                         {INT64_MAX, INT64_MIN, INT64_MIN, {5}}}) {
    auto m = model(13);
    auto *g = m.mutable_graph();
    *g->add_initializer() = floatTensor("x", {6}, iota(6), true);
    *g->add_initializer() = int64Tensor("starts", {1}, {c.start});
    *g->add_initializer() = int64Tensor("ends", {1}, {c.end});
    *g->add_initializer() = int64Tensor("steps", {1}, {c.step});
    *g->add_initializer() = int64Tensor("axes", {1}, {0});
    *g->add_node() = node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
    *g->add_output() =
        tensorInfo("y", onnx::TensorProto::FLOAT, {static_cast<int64_t>(c.want.size())});
    auto imported = importModel(m);
    ASSERT_TRUE(imported) << imported.status().message();
    EXPECT_EQ(evaluateOutput(**imported), c.want) << c.start << ":" << c.end << ":" << c.step;
  }
}

TEST(DataMovement, ConcatOfMoreInputsThanOdlaTakesJoinsInGroups) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  std::vector<std::string> names;
  for (int i = 0; i < 150; ++i) {
    names.push_back("c" + std::to_string(i));
    *g->add_initializer() = floatTensor(names.back(), {1}, {static_cast<float>(i)}, true);
  }
  auto concat = node("Concat", names, {"y"}, "concat");
  addIntAttr(concat, "axis", 0);
  *g->add_node() = concat;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {150});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(evaluateOutput(**imported), iota(150));
}

TEST(DataMovement, ConstantConditionCompressIsASliceOrAGather) {
  for (bool contiguous : {true, false}) {
    auto m = unaryOnConstant(11, {2, 3}, node("Compress", {"x", "c"}, {"y"}, "compress"), {2, 2});
    auto *cmp = m.mutable_graph()->mutable_node(0);
    addIntAttr(*cmp, "axis", 1);
    onnx::TensorProto c;
    c.set_name("c");
    c.set_data_type(onnx::TensorProto::BOOL);
    c.add_dims(3);
    for (int v : contiguous ? std::vector<int>{0, 1, 1} : std::vector<int>{1, 0, 1})
      c.add_int32_data(v);
    *m.mutable_graph()->add_initializer() = c;
    auto imported = importModel(m);
    ASSERT_TRUE(imported) << imported.status().message();
    EXPECT_STREQ((*imported)->outputs()[0]->producer()->op().name, contiguous ? "Slice" : "Gather");
    EXPECT_EQ(evaluateOutput(**imported),
              contiguous ? (std::vector<float>{1, 2, 4, 5}) : (std::vector<float>{0, 2, 3, 5}));
  }
}

TEST(DataMovement, EyeLikeDiagonalOutsideTheMatrixGivesZeros) {
  auto eye = node("EyeLike", {"x"}, {"y"}, "eye");
  addIntAttr(eye, "k", 7);
  auto imported = importModel(unaryOnConstant(9, {2, 3}, eye, {2, 3}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(evaluateOutput(**imported), std::vector<float>(6, 0.0f));
}

TEST(DataMovement, RuntimeShapeWithoutShapeFactsIsRejected) {
  auto m = model(14);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
  *g->add_input() = tensorInfo("shape", onnx::TensorProto::INT64, {2});
  *g->add_node() = node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  // Symbolic output dims: ONNX's shape facts then know nothing static about y.
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {0, 0}, {"rows", "cols"});
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_NE(imported.status().message().find(
                "node 'reshape' (Reshape, opset 14): shape (input 1, 'shape') is known only at run "
                "time and the model declares no static shape for output 'y'"),
            std::string::npos)
      << imported.status().message();
}

TEST(DataMovement, UnsupportedPadModeAndUnevenSplitAreRejected) {
  auto pad = node("Pad", {"x"}, {"y"}, "pad");
  addStringAttr(pad, "mode", "circular");
  addIntsAttr(pad, "pads", {0, 1, 0, 1});
  auto imported = importModel(unaryOnConstant(10, {2, 3}, pad, {2, 5}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'pad' (Pad, opset 10): attribute mode='circular' is not a padding mode "
            "(constant, reflect, edge, wrap)");

  auto m = unaryOnConstant(13, {5}, node("Split", {"x"}, {"y", "z"}, "split"), {3});
  *m.mutable_graph()->add_output() = tensorInfo("z", onnx::TensorProto::FLOAT, {2});
  imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'split' (Split, opset 13): axis 0 of f32[5] does not split into 2 equal parts");
}

// The reference backend's data builders that odlac's lowering does not call, run directly.
TEST(DataMovement, ReferenceSplitSqueezeShapeAndSliceDynamic) {
  float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, first[6], second[6], sliced[4];
  int64_t axis = 1, dims[3];
  int32_t start[2] = {2, -1}, size[2] = {2, 2}, stride[2] = {-1, -2};
  odla_computation comp = nullptr;
  odla_context ctx = nullptr;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_shape undefined{-1, {}};
  odla_value in = odla_CreateArgument({ODLA_FLOAT32, {3, {1, 3, 4}}}, (odla_value_id) "x");
  odla_value squeezed = odla_Squeeze(in, 0, nullptr, undefined, (odla_value_id) "squeezed");
  odla_value_ids ids{2, {(odla_value_id) "first", (odla_value_id) "second"}};
  odla_value axisValue = odla_CreateConstant({ODLA_INT64, {0, {}}}, &axis, (odla_value_id) "axis");
  odla_values parts = odla_Split(squeezed, axisValue, 2, ids);
  odla_value shape = odla_Shape(in, undefined, (odla_value_id) "dims");
  odla_value_type index{ODLA_INT32, {1, {2}}};
  odla_value slice = odla_SliceDynamic(
      squeezed, odla_CreateArgument(index, (odla_value_id) "start"),
      odla_CreateArgument(index, (odla_value_id) "size"),
      odla_CreateArgument(index, (odla_value_id) "stride"), {2, {2, 2}}, (odla_value_id) "sliced");
  ASSERT_EQ(parts.size, 2u);
  for (odla_value v : {parts.values[0], parts.values[1], shape, slice})
    ASSERT_EQ(odla_SetValueAsOutput(v), ODLA_SUCCESS);
  ASSERT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
  odla_BindToArgumentById((odla_value_id) "x", x, ctx);
  odla_BindToArgumentById((odla_value_id) "start", start, ctx);
  odla_BindToArgumentById((odla_value_id) "size", size, ctx);
  odla_BindToArgumentById((odla_value_id) "stride", stride, ctx);
  odla_BindToOutputById((odla_value_id) "first", first, ctx);
  odla_BindToOutputById((odla_value_id) "second", second, ctx);
  odla_BindToOutputById((odla_value_id) "dims", dims, ctx);
  odla_BindToOutputById((odla_value_id) "sliced", sliced, ctx);
  EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  EXPECT_EQ(std::vector<float>(first, first + 6), (std::vector<float>{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(std::vector<float>(second, second + 6), (std::vector<float>{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(std::vector<int64_t>(dims, dims + 3), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(std::vector<float>(sliced, sliced + 4), (std::vector<float>{11, 9, 7, 5}));
  stride[1] = -4; // runs off the axis: a run-time error, not a wrong answer
  EXPECT_NE(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

} // namespace
} // namespace odlac::test
