// No attribute is ignored silently (Rules.h, importNode): an attribute a node carries that its
// row does not list, that the row's function did not read for this node, or that has another
// kind than the rule reads, is an error naming node, op, opset and attribute.
#include "Import.h"
#include "OnnxBuilder.h"

#include <gtest/gtest.h>

namespace odlac::test {
namespace {

// y = op(x) for a float x of shape `dims` at `opset`.
Status importUnary(int opset, const onnx::NodeProto &n, const std::vector<int64_t> &dims) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, dims);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {});
  auto imported = importOnnxFile(save(m, tempDir()), {});
  return imported ? Status::ok() : imported.takeStatus();
}

TEST(AttributeCheck, AnAttributeTheRowDoesNotKnowIsAnError) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addIntAttr(lp, "ceil_mod", 1); // misspelt
  EXPECT_EQ(importUnary(18, lp, {1, 1, 3, 3}).message(),
            "node 'lp' (LpPool, opset 18): attribute 'ceil_mod' is not supported: odlac's rule "
            "for LpPool from opset 1 does not know it, and would ignore it");
  auto relu = node("LeakyRelu", {"x"}, {"y"}, "relu"); // a 1:1 row
  addFloatAttr(relu, "beta", 0.5f);
  EXPECT_EQ(importUnary(18, relu, {2}).message(),
            "node 'relu' (LeakyRelu, opset 18): attribute 'beta' is not supported: odlac's rule "
            "for LeakyRelu from opset 6 does not know it, and would ignore it");
}

// BatchNormalization's spatial exists until opset 8; a rule that does not read it at opset 18
// must not let it pass. (Opset 18 and later: libonnx's checker, which knows opsets up to 17,
// would refuse these models before import.)
TEST(AttributeCheck, AnAttributeTheRuleDidNotReadIsAnError) {
  auto m = model(18);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {1, 2, 3});
  for (const char *p : {"s", "b", "mean", "var"})
    *g->add_initializer() = floatTensor(p, {2}, {1, 1}, true);
  auto bn = node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn");
  addIntAttr(bn, "spatial", 0);
  *g->add_node() = bn;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 2, 3});
  auto imported = importOnnxFile(save(m, tempDir()), {});
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'bn' (BatchNormalization, opset 18): attribute 'spatial' is not supported in "
            "this form: odlac's rule for BatchNormalization from opset 1 did not read it for "
            "this node, and would ignore it");
}

TEST(AttributeCheck, AnAttributeOfAnotherKindIsAnError) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addFloatAttr(lp, "ceil_mode", 1.0f);
  EXPECT_EQ(importUnary(18, lp, {1, 1, 3, 3}).message(),
            "node 'lp' (LpPool, opset 18): attribute 'ceil_mode' is FLOAT, but LpPool takes INT");
}

// Every problem of every node is reported in one run.
TEST(AttributeCheck, EveryUnhandledAttributeIsReported) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addIntAttr(lp, "a", 1);
  addIntAttr(lp, "b", 1);
  Status s = importUnary(18, lp, {1, 1, 3, 3});
  ASSERT_EQ(s.messages().size(), 2u) << s.message();
  EXPECT_NE(s.messages()[0].find("attribute 'a'"), std::string::npos);
  EXPECT_NE(s.messages()[1].find("attribute 'b'"), std::string::npos);
}

} // namespace
} // namespace odlac::test
