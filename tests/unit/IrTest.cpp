// IR and op-table tests: the element type table, the registry's rows, verification errors,
// and the text printer.
#include "ir/Graph.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ops/Activation.h"
#include "ops/Ops.h"

#include <gtest/gtest.h>

#include <set>

namespace odlac {
namespace {

TEST(DType, TableMatchesOnnxNumbering) {
  EXPECT_EQ(*dtypeFromOnnx(1), DType::F32);
  EXPECT_EQ(*dtypeFromOnnx(7), DType::I64);
  EXPECT_EQ(*dtypeFromOnnx(9), DType::Bool);
  EXPECT_EQ(*dtypeFromOnnx(16), DType::BF16);
  EXPECT_EQ(*dtypeFromOnnx(8), DType::Str);
  EXPECT_FALSE(dtypeFromOnnx(14)); // complex64
  for (int t = 0; t < kNumDTypes; ++t) {
    const DTypeInfo &info = dtypeInfo(static_cast<DType>(t));
    EXPECT_EQ(*dtypeFromName(info.irName), info.dtype);
    EXPECT_EQ(*dtypeFromOnnx(info.onnxType), info.dtype);
  }
  EXPECT_EQ(dtypeBytes(DType::Bool), 1u);
}

TEST(OpTable, EveryRowIsComplete) {
  std::set<std::string> names;
  for (const OpDef *op : allOps()) {
    EXPECT_TRUE(names.insert(op->name).second) << "duplicate op " << op->name;
    EXPECT_NE(op->infer, nullptr) << op->name;
    EXPECT_NE(op->lower, nullptr) << op->name;
    EXPECT_GE(op->numResults, 1) << op->name;
    EXPECT_EQ(findOp(op->name), op);
  }
  EXPECT_EQ(findOp("NoSuchOp"), nullptr);
}

// Each handle of ops/Ops.h is the row that carries its name, and the registry holds them all.
TEST(OpTable, HandlesAreTheirRows) {
  size_t handles = 0;
#define ODLAC_CHECK_HANDLE(op)                                                                     \
  EXPECT_STREQ(ops::op.name, #op);                                                                 \
  EXPECT_EQ(findOp(#op), &ops::op);                                                                \
  ++handles;
  ODLAC_OP_TABLE(ODLAC_CHECK_HANDLE)
#undef ODLAC_CHECK_HANDLE
  EXPECT_EQ(handles, allOps().size());
}

// The activation table: in enum order, spellings unique, an activation fused from an op names
// an elementwise row with the attributes it reads, a recurrent one has its ODLA code.
TEST(OpTable, ActivationTable) {
  std::set<std::string> spellings, onnxNames;
  for (size_t i = 0; i < activations().size(); ++i) {
    const ActivationDef &a = activations()[i];
    EXPECT_EQ(static_cast<size_t>(a.id), i) << a.spelling;
    EXPECT_EQ(&activationDef(a.id), &a);
    EXPECT_TRUE(spellings.insert(a.spelling).second) << a.spelling;
    if (a.fused >= 0) {
      EXPECT_EQ(findActivation(a.spelling), &a);
      EXPECT_EQ(a.decompose == nullptr, a.id == Activation::None) << a.spelling;
    } else {
      EXPECT_EQ(findActivation(a.spelling), nullptr) << a.spelling;
    }
    if (a.op) {
      EXPECT_GE(a.fused, 0) << a.spelling;
      EXPECT_EQ(a.op->fusion, FusionClass::Elementwise) << a.spelling;
      for (const char *attr : {a.alphaAttr, a.betaAttr})
        EXPECT_TRUE(!attr || a.op->findAttr(attr)) << a.spelling << " reads " << attr;
    }
    if (a.onnxName) {
      EXPECT_GE(a.rnn, 0) << a.spelling;
      EXPECT_TRUE(onnxNames.insert(a.onnxName).second) << a.onnxName;
      EXPECT_EQ(findRecurrentActivation(a.onnxName), &a);
    }
  }
  EXPECT_EQ(findRecurrentActivation("LeakyRelu"), &activationDef(Activation::LeakyRelu));
  EXPECT_EQ(findActivation("affine"), nullptr); // recurrent only
}

// y = Conv(x, w) with the given group; the graph reports verification errors.
Status verifyConv(const Dims &x, const Dims &w, int64_t group) {
  Graph g;
  Value *in = g.addInput("x", {DType::F32, x});
  std::vector<float> zeros(TensorType{DType::F32, w}.numElements(), 0.0f);
  Value *wt = g.addConstant("w", {DType::F32, w}, Buffer::copyOf(zeros.data(), zeros.size() * 4));
  Value *out = g.addValue("y", {});
  size_t spatial = x.size() - 2;
  Node *n = g.addNode(ops::Conv, "conv", {in, wt, nullptr}, {out},
                      {{"group", group},
                       {"strides", std::vector<int64_t>(spatial, 1)},
                       {"dilations", std::vector<int64_t>(spatial, 1)},
                       {"pads", std::vector<int64_t>(2 * spatial, 0)}});
  return verifyAndInfer(*n);
}

TEST(OpTable, ConvInfersShapeAndRejectsBadChannels) {
  EXPECT_TRUE(verifyConv({1, 4, 8, 8}, {6, 2, 3, 3}, 2).isOk());
  Status bad = verifyConv({1, 4, 8, 8}, {6, 3, 3, 3}, 2);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.message(), "Conv: input channels 4 must equal kernel dim 1 (3) times group 2, "
                           "and kernel dim 0 (6) must be a multiple of group");
}

TEST(OpTable, VerifyChecksOperandTypesAndAttributes) {
  Graph g;
  Value *a = g.addInput("a", {DType::I64, {2}});
  Value *out = g.addValue("r", {});
  Node *exp = g.addNode(ops::Exp, "exp", {a}, {out});
  Status s = verifyAndInfer(*exp);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "Exp: operand 'x' has element type i64; supported: f32, f64, f16, bf16");

  Value *b = g.addInput("b", {DType::F32, {2}});
  Value *out2 = g.addValue("s", {});
  Node *soft = g.addNode(ops::Softmax, "sm", {b}, {out2}, {{"axis", std::string("x")}});
  s = verifyAndInfer(*soft);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "Softmax: attribute 'axis' must be int, got string");
}

TEST(OpTable, BroadcastInference) {
  Graph g;
  Value *a = g.addInput("a", {DType::F32, {2, 1, 4}});
  Value *b = g.addInput("b", {DType::F32, {3, 1}});
  Value *out = g.addValue("c", {});
  Node *n = g.addNode(ops::Add, "add", {a, b}, {out});
  ASSERT_TRUE(verifyAndInfer(*n).isOk());
  EXPECT_EQ(out->dims(), (Dims{2, 3, 4}));
  Value *c = g.addInput("c2", {DType::F32, {3}});
  Value *out2 = g.addValue("d", {});
  Node *bad = g.addNode(ops::Mul, "mul", {a, c}, {out2});
  EXPECT_EQ(verifyAndInfer(*bad).message(), "Mul: shapes [2,1,4] and [3] do not broadcast");
}

TEST(Printer, PrintsTheTextForm) {
  Graph g("tiny");
  Value *x = g.addInput("x", {DType::F32, {1, 4}});
  float half = 0.5f;
  Value *s = g.addConstant("scale", {DType::F32, {}}, Buffer::copyOf(&half, 4));
  Value *y = g.addValue("conv/out:0", {});
  Node *n = g.addNode(ops::Mul, "mul", {x, s}, {y});
  ASSERT_TRUE(verifyAndInfer(*n).isOk());
  Value *z = g.addValue("z", {});
  Node *sm = g.addNode(ops::Softmax, "sm", {y}, {z}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(verifyAndInfer(*sm).isOk());
  g.addOutput(z);
  EXPECT_EQ(printGraph(g), "graph @tiny(%x: f32[1,4]) {\n"
                           "  const %scale: f32[] = dense<[0.5]>\n"
                           "  %\"conv/out:0\" = Mul(%x, %scale) : f32[1,4]\n"
                           "  %z = Softmax(%\"conv/out:0\") {axis = 1} : f32[1,4]\n"
                           "  return %z\n"
                           "}\n");
}

// Names and strings of any bytes: escaped so that they neither add lines nor reach the
// terminal as control sequences, and parsed back to the same bytes.
TEST(Printer, HostileNamesStayOnTheirLineAndRoundTrip) {
  const std::string evil = "a\"\\\n  %forged = Relu(%x)\x1b[2J\xe2\x80\xae\xff";
  Graph g("g\nraph");
  Value *x = g.addInput(evil, {DType::F32, {2}});
  Value *y = g.addValue("y", {});
  Node *n = g.addNode(ops::Einsum, "e", {x}, {y}, {{"equation", std::string("i->i")}});
  ASSERT_TRUE(verifyAndInfer(*n).isOk());
  g.addOutput(y);
  std::string text = printGraph(g);
  EXPECT_EQ(text,
            "graph @\"g\\x0araph\"(%\"a\\\"\\\\\\x0a  %forged = Relu(%x)\\x1b[2J\\xe2\\x80"
            "\\xae\\xff\": f32[2]) {\n"
            "  %y = Einsum(%\"a\\\"\\\\\\x0a  %forged = Relu(%x)\\x1b[2J\\xe2\\x80\\xae\\xff\") "
            "{equation = \"i->i\"} : f32[2]\n"
            "  return %y\n"
            "}\n");
  auto back = parseGraph(text);
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ((*back)->name(), "g\nraph");
  EXPECT_EQ((*back)->inputs()[0]->name(), evil);
  EXPECT_EQ(printGraph(**back), text);
}

TEST(Graph, UseListsFollowOperandChanges) {
  Graph g;
  Value *a = g.addInput("a", {DType::F32, {2}});
  Value *b = g.addInput("b", {DType::F32, {2}});
  Value *out = g.addValue("c", {});
  Node *n = g.addNode(ops::Add, "add", {a, a}, {out});
  EXPECT_EQ(a->uses().size(), 2u);
  n->setInput(1, b);
  EXPECT_EQ(a->uses().size(), 1u);
  ASSERT_EQ(b->uses().size(), 1u);
  EXPECT_EQ(b->uses()[0].operand, 1);
  EXPECT_EQ(out->producer(), n);
  EXPECT_EQ(g.uniqueName("a"), "a_1");
}

TEST(Graph, InlineBodyBindsInputsAndKeepsTheSchedule) {
  Graph g;
  Value *x = g.addInput("x", {DType::F32, {2}});
  Value *y = g.addInput("y", {DType::F32, {2}});
  Value *last = g.addValue("last", {DType::F32, {2}});
  Node *tail = g.addNode(ops::Neg, "tail", {x}, {last});
  // body(a, b) = (a * b, b): one computed result, one passed through.
  Graph body("body");
  Value *a = body.addInput("a", {DType::F32, {2}});
  Value *b = body.addInput("b", {DType::F32, {2}});
  Value *prod = body.addValue("prod", {DType::F32, {2}});
  body.addNode(ops::Mul, "mul", {a, b}, {prod});
  body.addOutput(prod);
  body.addOutput(b);
  std::vector<Value *> results = g.inlineBody(body, {x, y}, tail);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], y);
  Node *mul = results[0]->producer();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->input(0), x);
  EXPECT_EQ(mul->input(1), y);
  std::vector<Node *> order = g.nodes();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], mul); // before `tail`
  EXPECT_EQ(order[1], tail);
}

} // namespace
} // namespace odlac
