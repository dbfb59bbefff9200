// No attribute is ignored silently. Two nets catch one: the schema check (Schema.cpp: an
// attribute ONNX's op does not have, or of another kind, named against ONNX 1.23's schemas)
// and the rule check (Rules.h, importNode: an attribute the row does not list, or that the
// row's function did not read for this node). Each is an error naming node, op and attribute.
#include "Import.h"
#include "OnnxBuilder.h"
#include "Rules.h"

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

TEST(AttributeCheck, AnAttributeTheSchemaDoesNotHaveIsAnError) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addIntAttr(lp, "ceil_mod", 1); // misspelt
  EXPECT_EQ(importUnary(18, lp, {1, 1, 3, 3}).message(),
            "node 'lp' (LpPool, opset 18): attribute 'ceil_mod' is not an attribute of LpPool-18 "
            "(it has auto_pad, ceil_mode, dilations, kernel_shape, p, pads, strides)");
  auto relu = node("LeakyRelu", {"x"}, {"y"}, "relu");
  addFloatAttr(relu, "beta", 0.5f);
  EXPECT_EQ(importUnary(18, relu, {2}).message(),
            "node 'relu' (LeakyRelu, opset 18): attribute 'beta' is not an attribute of "
            "LeakyRelu-16 (it has alpha)");
}

TEST(AttributeCheck, AnAttributeOfAnotherKindIsAnError) {
  auto lp = node("LpPool", {"x"}, {"y"}, "lp");
  addIntsAttr(lp, "kernel_shape", {2, 2});
  addFloatAttr(lp, "ceil_mode", 1.0f);
  EXPECT_EQ(importUnary(18, lp, {1, 1, 3, 3}).message(),
            "node 'lp' (LpPool, opset 18): attribute 'ceil_mode' is FLOAT; LpPool-18 takes INT");
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

// The rule net, for what the schemas cannot see (domains without schemas, a row that lags
// its op): rows built here, applied by importNode to one node of a graph.
Status importWith(const ImportRule &rule, const onnx::NodeProto &n) {
  Graph g("g");
  Value *x = g.addInput("x", TensorType{DType::F32, {2}});
  ImportCtx ctx(g, n, 1, {x}, "", {});
  return importNode(ctx, rule);
}

// Reads `alpha`, and `beta` only when alpha is not 1.
Status readsBetaUnlessAlphaIsOne(ImportCtx &ctx) {
  if (ctx.attrFloat("alpha", 1.0) != 1.0)
    ctx.attrFloat("beta", 0.0);
  ctx.setOutput(0, ctx.input(0));
  return Status::ok();
}

const ImportRule kRow = {"Scale", 3, nullptr, reads({"alpha", "beta"}), readsBetaUnlessAlphaIsOne};

TEST(AttributeCheck, AnAttributeTheRowDoesNotKnowIsAnError) {
  auto n = node("Scale", {"x"}, {"y"}, "s");
  addFloatAttr(n, "gamma", 2.0f);
  EXPECT_EQ(importWith(kRow, n).message(),
            "attribute 'gamma' is not supported: odlac's rule for Scale from opset 3 does not "
            "know it, and would ignore it");
}

TEST(AttributeCheck, AnAttributeTheRuleDidNotReadIsAnError) {
  auto n = node("Scale", {"x"}, {"y"}, "s");
  addFloatAttr(n, "beta", 2.0f);
  EXPECT_EQ(importWith(kRow, n).message(),
            "attribute 'beta' is not supported in this form: odlac's rule for Scale from opset 3 "
            "did not read it for this node, and would ignore it");
  addFloatAttr(n, "alpha", 0.5f); // now the rule reads beta
  EXPECT_TRUE(importWith(kRow, n).isOk()) << importWith(kRow, n).message();
}

} // namespace
} // namespace odlac::test
