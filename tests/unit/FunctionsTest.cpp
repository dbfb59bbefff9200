// Local-function inlining (frontend/Functions.cpp): calls replaced by the function's nodes
// under fresh names, nested calls, attribute references with the call's value or the
// function's default, omitted optional inputs, calls in bodies, and each refusal; then a
// model with functions imported and folded to numbers.
#include "Functions.h"
#include "Import.h"
#include "OnnxBuilder.h"

#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

namespace odlac::test {

std::string tempDir();

namespace {

constexpr int kAttributeProtoField = 11; // FunctionProto.attribute_proto, newer than ONNX 1.12

onnx::FunctionProto function(const std::string &name, const std::vector<std::string> &inputs,
                             const std::vector<std::string> &outputs,
                             const std::vector<onnx::NodeProto> &nodes, int opset = 18) {
  onnx::FunctionProto f;
  f.set_domain("pkg.test");
  f.set_name(name);
  for (const auto &i : inputs)
    f.add_input(i);
  for (const auto &o : outputs)
    f.add_output(o);
  for (const auto &n : nodes)
    *f.add_node() = n;
  auto *os = f.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  return f;
}

onnx::NodeProto call(const std::string &fn, const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs, const std::string &name = "") {
  onnx::NodeProto n = node(fn, inputs, outputs, name);
  n.set_domain("pkg.test");
  return n;
}

// A model y = f(x, z) over float[3] inputs with the given functions.
onnx::ModelProto callModel(const std::vector<onnx::FunctionProto> &functions,
                           const std::vector<onnx::NodeProto> &nodes) {
  auto m = model(18);
  m.set_ir_version(8);
  auto *os = m.add_opset_import();
  os->set_domain("pkg.test");
  os->set_version(1);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {3});
  *g->add_input() = tensorInfo("z", onnx::TensorProto::FLOAT, {3});
  for (const auto &n : nodes)
    *g->add_node() = n;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {3});
  for (const auto &f : functions)
    *m.add_functions() = f;
  return m;
}

// AddMul(a, b) = (a + b) * b.
onnx::FunctionProto addMul() {
  return function("AddMul", {"a", "b"}, {"out"},
                  {node("Add", {"a", "b"}, {"s"}), node("Mul", {"s", "b"}, {"out"})});
}

std::vector<std::string> ops(const onnx::GraphProto &g) {
  std::vector<std::string> v;
  for (const auto &n : g.node())
    v.push_back(n.op_type());
  return v;
}

onnx::AttributeProto refAttr(const std::string &name, const std::string &ref,
                             onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_ref_attr_name(ref);
  a.set_type(type);
  return a;
}

TEST(Functions, CallBecomesTheBodyUnderFreshNames) {
  auto m = callModel({addMul()}, {call("AddMul", {"x", "z"}, {"y"}, "am")});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  const auto &g = m.graph();
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Add", "Mul"}));
  EXPECT_EQ(g.node(0).input(0), "x");
  EXPECT_EQ(g.node(0).input(1), "z");
  EXPECT_EQ(g.node(0).output(0), "am#0/s");
  EXPECT_EQ(g.node(1).input(0), "am#0/s");
  EXPECT_EQ(g.node(1).output(0), "y");
  EXPECT_EQ(m.functions_size(), 0);
}

TEST(Functions, FreshNamesAvoidTheModelsNames) {
  // The model already has a value named like the first prefix would make.
  auto m = callModel({addMul()}, {node("Identity", {"x"}, {"am#0/s"}),
                                  call("AddMul", {"am#0/s", "z"}, {"y"}, "am")});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  EXPECT_EQ(m.graph().node(1).output(0), "am#1/s");
}

TEST(Functions, NestedCallsAndTwoCallsOfOneFunction) {
  auto twice = function("Twice", {"a", "b"}, {"out"},
                        {call("AddMul", {"a", "b"}, {"t"}), call("AddMul", {"t", "b"}, {"out"})});
  auto m = callModel({addMul(), twice}, {call("Twice", {"x", "z"}, {"y"})});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  const auto &g = m.graph();
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Add", "Mul", "Add", "Mul"}));
  EXPECT_EQ(g.node(1).output(0), g.node(2).input(0));  // t, renamed once
  EXPECT_NE(g.node(0).output(0), g.node(2).output(0)); // each call's s is its own
  EXPECT_EQ(g.node(3).output(0), "y");
}

TEST(Functions, AttributeReferencesTakeTheCallsValueElseTheDefault) {
  // Scale(a) = a * alpha, alpha an attribute (default 2 in attribute_proto), as
  // Constant(value_float = alpha) feeding Mul.
  onnx::NodeProto constant = node("Constant", {}, {"k"});
  *constant.add_attribute() = refAttr("value_float", "alpha", onnx::AttributeProto::FLOAT);
  auto scale = function("Scale", {"a"}, {"out"}, {constant, node("Mul", {"a", "k"}, {"out"})});
  scale.add_attribute("alpha");
  onnx::AttributeProto def;
  def.set_name("alpha");
  def.set_type(onnx::AttributeProto::FLOAT);
  def.set_f(2.0f);
  scale.GetReflection()->MutableUnknownFields(&scale)->AddLengthDelimited(kAttributeProtoField,
                                                                          def.SerializeAsString());
  onnx::NodeProto withValue = call("Scale", {"x"}, {"y1"});
  addFloatAttr(withValue, "alpha", 3.0f);
  auto m = callModel({scale},
                     {withValue, call("Scale", {"z"}, {"y2"}), node("Add", {"y1", "y2"}, {"y"})});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  const auto &g = m.graph();
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Constant", "Mul", "Constant", "Mul", "Add"}));
  ASSERT_EQ(g.node(0).attribute_size(), 1);
  EXPECT_EQ(g.node(0).attribute(0).name(), "value_float");
  EXPECT_TRUE(g.node(0).attribute(0).ref_attr_name().empty());
  EXPECT_EQ(g.node(0).attribute(0).f(), 3.0f);
  EXPECT_EQ(g.node(2).attribute(0).f(), 2.0f);
}

TEST(Functions, OmittedOptionalInputStaysEmpty) {
  // Clip's min and max are optional: Clamp(a, lo, hi) called without lo.
  auto clamp =
      function("Clamp", {"a", "lo", "hi"}, {"out"}, {node("Clip", {"a", "lo", "hi"}, {"out"})});
  auto m = callModel({clamp}, {call("Clamp", {"x", "", "z"}, {"y"})});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  const auto &n = m.graph().node(0);
  ASSERT_EQ(n.input_size(), 3);
  EXPECT_EQ(n.input(1), "");
  EXPECT_EQ(n.input(2), "z");
}

TEST(Functions, CallsInsideBodiesAreInlined) {
  onnx::GraphProto then;
  then.set_name("then");
  *then.add_node() = call("AddMul", {"x", "z"}, {"t"});
  *then.add_output() = tensorInfo("t", onnx::TensorProto::FLOAT, {3});
  onnx::NodeProto iff = node("If", {"c"}, {"y"});
  auto *a = iff.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = then;
  auto m = callModel({addMul()}, {iff});
  ASSERT_TRUE(inlineLocalFunctions(m).isOk());
  EXPECT_EQ(ops(m.graph().node(0).attribute(0).g()), (std::vector<std::string>{"Add", "Mul"}));
}

void expectRefused(onnx::ModelProto m, const std::string &fragment) {
  Status s = inlineLocalFunctions(m);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(Functions, Refusals) {
  auto loop = function("Loop1", {"a"}, {"out"}, {call("Loop1", {"a"}, {"out"})});
  expectRefused(callModel({loop}, {call("Loop1", {"x"}, {"y"}, "rec")}),
                "node 'rec' (call of local function 'pkg.test.Loop1'): calls nest more than 64 "
                "deep");
  expectRefused(callModel({addMul()}, {call("AddMul", {"x", "z", "x"}, {"y"})}),
                "3 inputs and 1 outputs, the function has 2 and 1");
  expectRefused(callModel({addMul(), addMul()}, {call("AddMul", {"x", "z"}, {"y"})}),
                "local function 'pkg.test.AddMul' is defined twice");
  auto old = addMul();
  old.mutable_opset_import(0)->set_version(13);
  expectRefused(callModel({old}, {call("AddMul", {"x", "z"}, {"y"})}),
                "imports opset 13 of domain 'ai.onnx', the model imports 18");
  onnx::NodeProto extra = call("AddMul", {"x", "z"}, {"y"});
  addIntAttr(extra, "axis", 1);
  expectRefused(callModel({addMul()}, {extra}),
                "attribute 'axis' is not one of the function's attributes");
  auto standard = addMul();
  standard.set_domain("");
  expectRefused(callModel({standard}, {node("AddMul", {"x", "z"}, {"y"})}),
                "is in the default ONNX domain");
}

TEST(Functions, ExpansionIsBounded) {
  // F0 calls F1 twice, F1 calls F2 twice, ...: 2^30 nodes from 60 lines.
  std::vector<onnx::FunctionProto> fs;
  for (int i = 0; i < 30; ++i) {
    std::string next = "F" + std::to_string(i + 1);
    fs.push_back(function("F" + std::to_string(i), {"a"}, {"out"},
                          {call(next, {"a"}, {"t"}), call(next, {"t"}, {"out"})}));
  }
  fs.push_back(function("F30", {"a"}, {"out"}, {node("Relu", {"a"}, {"out"})}));
  expectRefused(callModel(fs, {call("F0", {"x"}, {"y"})}), "expand to more than 1048576 nodes");
}

TEST(Functions, ImportOfAModelWithFunctions) {
  // The file's path goes through the whole import (the numbers: tests/zoo/test_dynamo_export.py).
  auto imported = importOnnxFile(
      save(callModel({addMul()}, {call("AddMul", {"x", "z"}, {"y"})}), tempDir()), {});
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_NE((*imported)->findValue("AddMul#0/s"), nullptr);
}

} // namespace
} // namespace odlac::test
