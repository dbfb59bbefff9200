// Custom ops in odlac (--custom-op-domain): import (result types from value_info, attributes
// under attr.<name>, precise rejections), and the numbers of a graph with a custom op run on
// the linked reference backend with a kernel registered here, as an application would.
// This binary registers "Twice" (y = 2x, float32, any shape) before any test runs, so the
// pass tests of tests/passes that hold custom ops check their numbers with it too.
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <ODLA/odla_ext.h>

#include <gtest/gtest.h>

#include <cstring>

namespace odlac::test {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;

odla_status sameAsInput(const odla_ext_custom_call *call, odla_value_type *out) {
  for (odla_int32 i = 0; i < call->num_outputs; ++i)
    out[i] = call->input_types[0];
  return call->input_types[0].element_type == ODLA_FLOAT32 ? ODLA_SUCCESS
                                                           : ODLA_UNSUPPORTED_DATATYPE;
}

odla_status twice(const odla_ext_custom_call *call, const odla_void *const *in,
                  odla_void *const *out) {
  int64_t n = 1;
  for (odla_int32 d = 0; d < call->input_types[0].shape.size; ++d)
    n *= call->input_types[0].shape.dims[d];
  for (odla_int32 o = 0; o < call->num_outputs; ++o)
    for (int64_t i = 0; i < n; ++i)
      static_cast<float *>(out[o])[i] = 2 * static_cast<const float *>(in[0])[i];
  return ODLA_SUCCESS;
}

// Before main(): the kernel must be the registered one before odlac's own stand-in
// (DirectSink) would register the name.
const bool kRegistered =
    odla_ExtRegisterCustomOp("Twice", twice, sameAsInput, nullptr) == ODLA_SUCCESS;

Expected<std::unique_ptr<Graph>> importCustom(const onnx::ModelProto &m) {
  ImportOptions opts;
  opts.customOpDomains.insert("com.example");
  return importOnnxFile(save(m, tempDir()), opts);
}

// x [2, 3] -> com.example.Twice (attributes of every kind) -> y -> Relu -> r.
onnx::ModelProto twiceModel(bool declareY) {
  auto m = model(13);
  auto *custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {2, 3});
  auto t = node("Twice", {"x"}, {"y"}, "twice");
  t.set_domain("com.example");
  addIntAttr(t, "k", -7);
  addFloatAttr(t, "scale", 0.5f);
  addStringAttr(t, "mode", "fast");
  addIntsAttr(t, "axes", {0, 1});
  *g->add_node() = t;
  *g->add_node() = node("Relu", {"y"}, {"r"}, "relu");
  if (declareY)
    *g->add_value_info() = tensorInfo("y", kF32, {2, 3});
  *g->add_output() = tensorInfo("r", kF32, {2, 3});
  return m;
}

TEST(CustomOp, ImportsWithDeclaredTypesAndAttributesAndRuns) {
  ASSERT_TRUE(kRegistered);
  auto g = importCustom(twiceModel(true));
  ASSERT_TRUE(g) << g.status().message();
  const Node *n = (*g)->findValue("y")->producer();
  ASSERT_NE(n, nullptr);
  EXPECT_STREQ(n->op().name, "CustomOp");
  EXPECT_EQ(n->s("op_type"), "Twice");
  EXPECT_EQ(n->s("domain"), "com.example");
  EXPECT_EQ(n->i("attr.k"), -7);
  EXPECT_EQ(n->f("attr.scale"), 0.5);
  EXPECT_EQ(n->s("attr.mode"), "fast");
  EXPECT_EQ(n->ints("attr.axes"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(toString(n->output(0)->type()), "f32[2,3]");

  const float x[6] = {1, -2, 3, -4, 5, -6};
  auto out = executeGraph(**g, {Buffer::copyOf(x, sizeof x)});
  ASSERT_TRUE(out) << out.status().message();
  const float *r = (*out)[0]->as<float>();
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(r[i], x[i] > 0 ? 2 * x[i] : 0) << i;
}

TEST(CustomOp, MissingOutputTypeIsAnErrorNamingNodeAndOutput) {
  auto g = importCustom(twiceModel(false));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().message(),
            "node 'twice' (com.example.Twice, opset 1): output 0 ('y') has no static type in "
            "the model's value_info or graph outputs; odlac does not guess a custom op's output "
            "types: declare its element type and every dim");
}

TEST(CustomOp, UnsupportedAttributeKindIsRejected) {
  auto m = twiceModel(true);
  auto *a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("names");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("a");
  auto g = importCustom(m);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().message(),
            "node 'twice' (com.example.Twice, opset 1): attribute 'names' is a list of "
            "strings; custom ops take int, float, string, ints and floats attributes");
}

TEST(CustomOp, ACustomOpOnConstantsIsNotAConstant) {
  // Reshape's shape computed by a custom op from a constant: odlac cannot run the kernel, so
  // the shape is data known at run time only (Reshape then takes the declared result shape).
  auto m = model(13);
  auto *custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {6});
  *g->add_initializer() = int64Tensor("s", {2}, {1, 3});
  auto t = node("Twice", {"s"}, {"s2"}, "twice");
  t.set_domain("com.example");
  *g->add_node() = t;
  *g->add_value_info() = tensorInfo("s2", onnx::TensorProto::INT64, {2});
  *g->add_node() = node("Reshape", {"x", "s2"}, {"y"}, "reshape");
  *g->add_output() = tensorInfo("y", kF32, {2, 3});
  auto imported = importCustom(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Value *s2 = (*imported)->findValue("s2");
  ASSERT_NE(s2, nullptr);
  EXPECT_FALSE(isComputableFromConstants(*s2));
  EXPECT_EQ(notConstantBecause(*s2), "the custom op 'twice'");
  auto data = evaluateValue(*s2);
  ASSERT_FALSE(data);
  EXPECT_EQ(data.status().message(), "value 's2' depends on the custom op 'twice'");
}

} // namespace
} // namespace odlac::test
