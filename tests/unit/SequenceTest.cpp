// Sequences and optionals lowered at import (frontend/rules/Sequence.cpp): what IR they
// leave (one Concat for ConcatFromSequence, Slices for SplitToSequence, nothing but the
// element for SequenceAt and constants for SequenceLength and OptionalHasElement), the
// flattened graph inputs and outputs, and the numbers against hand-computed references.
#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

namespace odlac::test {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;

size_t countOps(const Graph &g, const char *op) {
  size_t n = 0;
  for (const Node *node : g.nodes())
    n += std::string(node->op().name) == op;
  return n;
}

onnx::ValueInfoProto sequenceInfo(const std::string &name, const std::vector<int64_t> &dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto *tt = v.mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(kF32);
  for (int64_t d : dims)
    tt->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

// xs (a sequence input of 3 float[2]) -> ConcatFromSequence(axis 0) and SequenceAt(-1).
onnx::ModelProto concatAndAt() {
  auto m = model(11);
  auto *g = m.mutable_graph();
  *g->add_input() = sequenceInfo("xs", {2});
  *g->add_initializer() = int64Tensor("last", {}, {-1});
  auto cat = node("ConcatFromSequence", {"xs"}, {"joined"});
  addIntAttr(cat, "axis", 0);
  *g->add_node() = cat;
  *g->add_node() = node("SequenceAt", {"xs", "last"}, {"at"});
  *g->add_node() = node("SequenceLength", {"xs"}, {"n"});
  *g->add_output() = tensorInfo("joined", kF32, {6});
  *g->add_output() = tensorInfo("at", kF32, {2});
  *g->add_output() = tensorInfo("n", onnx::TensorProto::INT64, {});
  return m;
}

TEST(SequenceImport, SequenceInputIsFlattenedAndConcatIsOneNode) {
  ImportOptions opts;
  opts.sequenceLengths["xs"] = 3;
  auto g = importOnnxFile(save(concatAndAt(), tempDir()), opts);
  ASSERT_TRUE(g) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 3u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "xs.0");
  EXPECT_EQ((*g)->inputs()[2]->name(), "xs.2");
  EXPECT_EQ(countOps(**g, "Concat"), 1u);
  const float a[] = {1, 2}, b[] = {3, 4}, c[] = {5, 6};
  auto outs = executeGraph(**g, {Buffer::copyOf(a, 8), Buffer::copyOf(b, 8), Buffer::copyOf(c, 8)});
  ASSERT_TRUE(outs) << outs.status().message();
  const float *joined = (*outs)[0]->as<float>(), *at = (*outs)[1]->as<float>();
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(joined[i], static_cast<float>(i + 1)) << i;
  EXPECT_FLOAT_EQ(at[0], 5.0f);
  EXPECT_FLOAT_EQ(at[1], 6.0f);
  EXPECT_EQ(*(*outs)[2]->as<int64_t>(), 3);
}

TEST(SequenceImport, SequenceInputWithoutLengthNamesTheFlag) {
  auto g = importOnnxFile(save(concatAndAt(), tempDir()), {});
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("give it with --sequence-length xs=N"), std::string::npos)
      << g.status().message();
}

// SplitToSequence of x[2, 3] along axis 1 without split, keepdims 0: three float[2]
// columns, the sequence graph output flattened into ys.0, ys.1, ys.2.
TEST(SequenceImport, SplitToSequenceIsSlicesAndAFlattenedOutput) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {2, 3});
  auto split = node("SplitToSequence", {"x"}, {"ys"});
  addIntAttr(split, "axis", 1);
  addIntAttr(split, "keepdims", 0);
  *g->add_node() = split;
  *g->add_output() = sequenceInfo("ys", {2});
  auto imported = importOnnxFile(save(m, tempDir()), {});
  ASSERT_TRUE(imported) << imported.status().message();
  const Graph &ir = **imported;
  EXPECT_EQ(countOps(ir, "Slice"), 3u);
  ASSERT_EQ(ir.outputs().size(), 3u);
  EXPECT_EQ(ir.outputs()[1]->name(), "ys.1");
  EXPECT_EQ(ir.outputs()[1]->dims(), (Dims{2}));
  const float x[] = {0, 1, 2, 10, 11, 12};
  auto outs = executeGraph(ir, {Buffer::copyOf(x, sizeof x)});
  ASSERT_TRUE(outs) << outs.status().message();
  for (int k = 0; k < 3; ++k) {
    EXPECT_FLOAT_EQ((*outs)[k]->as<float>()[0], static_cast<float>(k)) << k;
    EXPECT_FLOAT_EQ((*outs)[k]->as<float>()[1], static_cast<float>(10 + k)) << k;
  }
}

// An optional tensor input compiled absent has no input in the generated code, and
// OptionalHasElement of it is the constant false.
TEST(SequenceImport, AbsentOptionalInputHasNoInput) {
  auto m = model(18);
  auto *g = m.mutable_graph();
  onnx::ValueInfoProto o;
  o.set_name("o");
  o.mutable_type()
      ->mutable_optional_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kF32);
  *g->add_input() = o;
  *g->add_node() = node("OptionalHasElement", {"o"}, {"has"});
  *g->add_output() = tensorInfo("has", onnx::TensorProto::BOOL, {});
  ImportOptions opts;
  opts.absentOptionals.insert("o");
  auto imported = importOnnxFile(save(m, tempDir()), opts);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_TRUE((*imported)->inputs().empty());
  auto outs = executeGraph(**imported, {});
  ASSERT_TRUE(outs) << outs.status().message();
  EXPECT_EQ(*(*outs)[0]->as<uint8_t>(), 0);
}

// An If over sequences whose condition is a constant imports only the branch it takes: the
// other one, whose SequenceAt is out of range, is never imported.
TEST(SequenceImport, ConstantIfImportsOnlyTheBranchTaken) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", kF32, {2});
  *g->add_initializer() = int64Tensor("nine", {}, {9});
  onnx::TensorProto yes;
  yes.set_name("yes");
  yes.set_data_type(onnx::TensorProto::BOOL);
  yes.add_int32_data(1);
  *g->add_initializer() = yes;
  auto n = node("If", {"yes"}, {"s"}, "the_if");
  for (const char *branch : {"then_branch", "else_branch"}) {
    onnx::GraphProto b;
    b.set_name(branch);
    std::string seq = std::string(branch) + "_seq", at = std::string(branch) + "_at";
    *b.add_node() = node("SequenceConstruct", {"x", "x"}, {seq});
    if (branch[0] == 'e') { // invalid: position 9 of a sequence of 2
      *b.add_node() = node("SequenceAt", {seq, "nine"}, {at});
      *b.add_node() = node("SequenceConstruct", {at}, {seq + "1"});
      seq += "1";
    }
    *b.add_output() = sequenceInfo(seq, {2});
    auto *a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = b;
  }
  *g->add_node() = n;
  *g->add_node() = node("SequenceLength", {"s"}, {"len"});
  *g->add_output() = tensorInfo("len", onnx::TensorProto::INT64, {});
  auto imported = importOnnxFile(save(m, tempDir()), {});
  ASSERT_TRUE(imported) << imported.status().message();
  const float x[] = {1, 2};
  auto outs = executeGraph(**imported, {Buffer::copyOf(x, sizeof x)});
  ASSERT_TRUE(outs) << outs.status().message();
  EXPECT_EQ(*(*outs)[0]->as<int64_t>(), 2);
}

} // namespace
} // namespace odlac::test
