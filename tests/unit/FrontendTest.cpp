// Frontend tests: tensor encodings, Constant nodes, external data confinement, symbolic dims,
// opset-dependent import rules, and reporting every bad node in one run.
#include "Import.h"
#include "OnnxBuilder.h"
#include "ir/Printer.h"
#include "ops/OpDef.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace odlac::test {

// A fresh folder per call, all inside one folder of this process that is removed at exit.
std::string tempDir() {
  struct Root {
    std::string path;
    Root() {
      char tmpl[] = "/tmp/odlac-unit-XXXXXX";
      const char *d = mkdtemp(tmpl);
      path = d ? d : "";
    }
    ~Root() {
      std::error_code ec;
      if (!path.empty())
        std::filesystem::remove_all(path, ec);
    }
  };
  static Root root;
  std::string tmpl = (root.path.empty() ? std::string("/tmp/odlac-unit") : root.path) + "/XXXXXX";
  const char *d = mkdtemp(tmpl.data());
  return d ? d : "/tmp";
}

namespace {

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m,
                                             const ImportOptions &opts = {}) {
  return importOnnxFile(save(m, tempDir()), opts);
}

std::vector<float> constantValues(const Graph &g, const std::string &name) {
  const Value *v = g.findValue(name);
  if (!v || !v->isConstant())
    return {};
  const float *p = v->data()->as<float>();
  return std::vector<float>(p, p + v->type().numElements());
}

// A model y = x + w with w given as `w`.
onnx::ModelProto addModel(const onnx::TensorProto &w) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 2});
  *g->add_initializer() = w;
  *g->add_node() = node("Add", {"x", "w"}, {"y"}, "add");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 2});
  return m;
}

TEST(Frontend, RawAndTypedInitializersDecodeTheSame) {
  std::vector<float> values{1.5f, -2.0f, 3.25f, 0.0f};
  auto raw = importModel(addModel(floatTensor("w", {2, 2}, values, true)));
  auto typed = importModel(addModel(floatTensor("w", {2, 2}, values, false)));
  ASSERT_TRUE(raw) << raw.status().message();
  ASSERT_TRUE(typed) << typed.status().message();
  EXPECT_EQ(constantValues(**raw, "w"), values);
  EXPECT_EQ(constantValues(**typed, "w"), values);
}

TEST(Frontend, InitializerWithWrongByteCountIsRejected) {
  auto w = floatTensor("w", {2, 2}, {1, 2, 3}, true);
  auto g = importModel(addModel(w));
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("raw_data holds 12 bytes"), std::string::npos)
      << g.status().message();
}

TEST(Frontend, ConstantNodeBecomesConstant) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2});
  auto c = node("Constant", {}, {"c"});
  auto *a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = floatTensor("", {2}, {4.0f, 5.0f}, false);
  *g->add_node() = c;
  *g->add_node() = node("Mul", {"x", "c"}, {"y"});
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(constantValues(**imported, "c"), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ((*imported)->numNodes(), 1u);
}

onnx::TensorProto externalTensor(const std::string &location, int64_t count) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_dims(2);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = t.add_external_data();
  kv->set_key("length");
  kv->set_value(std::to_string(count * 4));
  return t;
}

TEST(Frontend, ExternalDataInsideTheModelFolderLoads) {
  std::string dir = tempDir();
  std::vector<float> values{1, 2, 3, 4};
  std::ofstream(dir + "/weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char *>(values.data()), 16);
  auto g = importOnnxFile(save(addModel(externalTensor("weights.bin", 4)), dir), {});
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(constantValues(**g, "w"), values);
}

TEST(Frontend, ExternalDataOutsideTheModelFolderIsRefused) {
  std::string outer = tempDir();
  std::string dir = outer + "/model";
  ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
  std::vector<float> values{1, 2, 3, 4};
  std::ofstream(outer + "/secret.bin", std::ios::binary)
      .write(reinterpret_cast<const char *>(values.data()), 16);
  auto escaped = importOnnxFile(save(addModel(externalTensor("../secret.bin", 4)), dir), {});
  ASSERT_FALSE(escaped);
  EXPECT_NE(escaped.status().message().find("outside the model's folder"), std::string::npos)
      << escaped.status().message();
  auto absolute = importOnnxFile(save(addModel(externalTensor(outer + "/secret.bin", 4)), dir), {});
  ASSERT_FALSE(absolute);
  EXPECT_NE(absolute.status().message().find("absolute path"), std::string::npos)
      << absolute.status().message();
}

onnx::ModelProto symbolicModel() {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {0, 3}, {"N", ""});
  *g->add_node() = node("Relu", {"x"}, {"y"});
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {0, 3}, {"N", ""});
  return m;
}

TEST(Frontend, SymbolicDimsNeedPinning) {
  auto g = importModel(symbolicModel());
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("--input-shape x:"), std::string::npos)
      << g.status().message();
}

TEST(Frontend, InputShapePinsSymbolicDims) {
  ImportOptions opts;
  ASSERT_TRUE(parseInputShape("x:5x3", opts).isOk());
  auto g = importModel(symbolicModel(), opts);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ((*g)->inputs()[0]->dims(), (Dims{5, 3}));
  EXPECT_EQ((*g)->outputs()[0]->dims(), (Dims{5, 3}));
}

// --dim: a symbolic dim takes the value its name is given, by the model's dim_param or by a
// name --input-shape writes; naming a fixed dim, or a dim without a name, is refused.
TEST(Frontend, DimValuesBindNamedDims) {
  ImportOptions opts;
  opts.dimValues["N"] = 7;
  auto g = importModel(symbolicModel(), opts);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ((*g)->inputs()[0]->dims(), (Dims{7, 3}));
  EXPECT_EQ((*g)->info().symbolicDims, (std::set<std::string>{"N"}));
  ImportOptions renamed;
  renamed.dimValues["B"] = 4;
  ASSERT_TRUE(parseInputShape("x:Bx3", renamed).isOk());
  g = importModel(symbolicModel(), renamed);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ((*g)->inputs()[0]->dims(), (Dims{4, 3}));
  ImportOptions fixed;
  fixed.dimValues["C"] = 4;
  ASSERT_TRUE(parseInputShape("x:?xC", fixed).isOk());
  g = importModel(symbolicModel(), fixed);
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("the model fixes it at 3"), std::string::npos)
      << g.status().message();
}

TEST(Frontend, InputShapeMustFitFixedDims) {
  ImportOptions opts;
  ASSERT_TRUE(parseInputShape("x:5x4", opts).isOk());
  auto g = importModel(symbolicModel(), opts);
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("does not fit"), std::string::npos);
}

TEST(Frontend, InputShapeSyntax) {
  ImportOptions opts;
  EXPECT_TRUE(parseInputShape("data:1x3x224x224", opts).isOk());
  EXPECT_EQ(opts.inputShapes["data"].dims, (Dims{1, 3, 224, 224}));
  EXPECT_FALSE(parseInputShape("data", opts).isOk());
  EXPECT_FALSE(parseInputShape("data:1xx3", opts).isOk());
  EXPECT_FALSE(parseInputShape(":1x3", opts).isOk());
  EXPECT_FALSE(parseInputShape("data:1x-3", opts).isOk());
  // Names make symbolic dims for --dim; ? and -1 keep the model's.
  ASSERT_TRUE(parseInputShape("tokens:Nx?x-1x8", opts).isOk());
  EXPECT_EQ(opts.inputShapes["tokens"].dims, (Dims{-1, -1, -1, 8}));
  EXPECT_EQ(opts.inputShapes["tokens"].names, (std::vector<std::string>{"N", "", "", ""}));
  EXPECT_FALSE(parseInputShape("t:2Tx3", opts).isOk());
}

TEST(Frontend, EveryUnsupportedNodeIsReportedInOneRun) {
  auto m = model(13);
  auto *custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {4});
  *g->add_input() = tensorInfo("i", onnx::TensorProto::INT64, {4});
  auto foo = node("Foo", {"x"}, {"a"}, "first");
  foo.set_domain("com.example");
  *g->add_node() = foo;
  *g->add_node() = node("Relu", {"a"}, {"b"}, "fed_by_failure");
  *g->add_node() = node("LeakyRelu", {"i"}, {"c"}, "second");
  auto sm = node("Softmax", {"x"}, {"d"}, "third");
  addIntAttr(sm, "axis", 3);
  *g->add_node() = sm;
  *g->add_output() = tensorInfo("b", onnx::TensorProto::FLOAT, {4});
  *g->add_output() = tensorInfo("c", onnx::TensorProto::INT64, {4});
  *g->add_output() = tensorInfo("d", onnx::TensorProto::FLOAT, {4});
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  const auto &msgs = imported.status().messages();
  ASSERT_EQ(msgs.size(), 3u) << imported.status().message();
  EXPECT_EQ(msgs[0], "node 'first' (com.example.Foo, opset 1): unsupported: domain 'com.example' "
                     "has no import rules");
  EXPECT_NE(msgs[1].find("node 'second' (LeakyRelu, opset 13)"), std::string::npos) << msgs[1];
  EXPECT_NE(msgs[1].find("i64"), std::string::npos) << msgs[1];
  EXPECT_NE(msgs[2].find("node 'third' (Softmax, opset 13)"), std::string::npos) << msgs[2];
  EXPECT_NE(msgs[2].find("axis 3"), std::string::npos) << msgs[2];
}

TEST(Frontend, InvalidAttributeNamesNodeAndRule) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {1, 2, 5, 5});
  *g->add_initializer() = floatTensor("w", {3, 2, 3, 3}, std::vector<float>(54, 1.0f), true);
  auto conv = node("Conv", {"x", "w"}, {"y"}, "conv");
  addIntsAttr(conv, "strides", {1, 1, 1});
  *g->add_node() = conv;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 3, 3, 3});
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'conv' (Conv, opset 13): strides has 3 entries; the input has 2 spatial axes");
}

TEST(Frontend, AutoPadSameUpperComputesPads) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {1, 1, 5, 6});
  *g->add_initializer() = floatTensor("w", {1, 1, 2, 3}, std::vector<float>(6, 1.0f), true);
  auto conv = node("Conv", {"x", "w"}, {"y"}, "conv");
  addStringAttr(conv, "auto_pad", "SAME_UPPER");
  addIntsAttr(conv, "strides", {2, 2});
  *g->add_node() = conv;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 1, 3, 3});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *n = (*imported)->nodes()[0];
  // H: out 3, total pad (3-1)*2+2-5 = 1 -> [0, 1]; W: out 3, total (3-1)*2+3-6 = 1 -> [0, 1].
  EXPECT_EQ(n->ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(n->output(0)->dims(), (Dims{1, 1, 3, 3}));
}

TEST(Frontend, SoftmaxBeforeOpset13FlattensToRows) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3, 4});
  auto sm = node("Softmax", {"x"}, {"y"}, "sm");
  addIntAttr(sm, "axis", 1);
  *g->add_node() = sm;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3, 4});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  auto nodes = (*imported)->nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_STREQ(nodes[0]->op().name, "Reshape");
  EXPECT_EQ(nodes[0]->ints("shape"), (std::vector<int64_t>{2, 12}));
  EXPECT_STREQ(nodes[1]->op().name, "Softmax");
  EXPECT_EQ(nodes[1]->i("axis"), 1);
  EXPECT_EQ(nodes[2]->output(0)->dims(), (Dims{2, 3, 4}));
}

TEST(Frontend, UnsqueezeAxesMoveFromAttributeToInputAtOpset13) {
  for (int opset : {11, 13}) {
    auto m = model(opset);
    auto *g = m.mutable_graph();
    *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {3});
    auto un = node("Unsqueeze", {"x"}, {"y"});
    if (opset < 13) {
      addIntsAttr(un, "axes", {0, -1});
    } else {
      onnx::TensorProto axes;
      axes.set_name("axes");
      axes.set_data_type(onnx::TensorProto::INT64);
      axes.add_dims(2);
      axes.add_int64_data(0);
      axes.add_int64_data(-1);
      *g->add_initializer() = axes;
      un.add_input("axes");
    }
    *g->add_node() = un;
    *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 3, 1});
    auto imported = importModel(m);
    ASSERT_TRUE(imported) << "opset " << opset << ": " << imported.status().message();
    EXPECT_EQ((*imported)->outputs()[0]->dims(), (Dims{1, 3, 1})) << "opset " << opset;
  }
}

TEST(Frontend, GraphOutputThatIsAnInputGetsItsOwnCopy) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2});
  *g->add_output() = tensorInfo("x", onnx::TensorProto::FLOAT, {2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  ASSERT_EQ((*imported)->numNodes(), 1u);
  EXPECT_STREQ((*imported)->nodes()[0]->op().name, "Identity");
}

// The in-memory entry (the fuzz targets' way in) imports what the file entry imports, and
// refuses external data, which only a model file can have.
TEST(Frontend, ModelBytesImportLikeTheFile) {
  std::vector<float> values{1, 2, 3, 4};
  std::string bytes = addModel(floatTensor("w", {2, 2}, values, true)).SerializeAsString();
  auto g = importOnnxBytes(bytes.data(), bytes.size(), "m.onnx", {});
  ASSERT_TRUE(g) << g.status().message();
  bytes.assign(bytes.size(), '\0'); // the graph holds copies of the weights
  EXPECT_EQ(constantValues(**g, "w"), values);
  EXPECT_EQ((*g)->info().fileName, "m.onnx");

  std::string external = addModel(externalTensor("weights.bin", 4)).SerializeAsString();
  auto refused = importOnnxBytes(external.data(), external.size(), "m.onnx", {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().message(),
            "m.onnx: the model keeps tensor data in external files, which a model read from "
            "memory cannot have (import it from its file)");

  auto junk = importOnnxBytes("\xff\xff", 2, "junk.onnx", {});
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.status().message(), "junk.onnx: not a valid ONNX model (protobuf parse failed)");
}

TEST(Frontend, NotAModelIsAClearError) {
  std::string dir = tempDir();
  std::ofstream(dir + "/junk.onnx") << "this is not protobuf";
  auto g = importOnnxFile(dir + "/junk.onnx", {});
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("not a valid ONNX model"), std::string::npos);
  auto missing = importOnnxFile(dir + "/missing.onnx", {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
}

} // namespace
} // namespace odlac::test
