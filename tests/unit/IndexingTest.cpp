// Indexing family: import cases ONNX's backend tests do not cover (data-dependent shapes of
// constants, shapes from ONNX's shape facts, precise rejections, which Resize form is chosen)
// and the runtime checks of the reference kernels.
#include "Import.h"
#include "OnnxBuilder.h"
#include "ops/OpDef.h"

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>
#include <gtest/gtest.h>

namespace odlac::test {
namespace {

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), ImportOptions{});
}

std::vector<int64_t> int64Values(const Graph &g, const std::string &name) {
  const Value *v = g.findValue(name);
  if (!v || !v->isConstant() || v->dtype() != DType::I64)
    return {};
  const int64_t *p = v->data()->as<int64_t>();
  return std::vector<int64_t>(p, p + v->type().numElements());
}

const Node *onlyNode(const Graph &g, const char *op) {
  for (const Node *n : g.nodes())
    if (std::string(n->op().name) == op)
      return n;
  return nullptr;
}

std::string errorOf(const Expected<std::unique_ptr<Graph>> &g) {
  return g ? std::string("(imported)") : g.status().message();
}

// Unique(x) of a constant x with the given attributes, all four results wanted.
onnx::ModelProto uniqueModel(const std::vector<int64_t> &dims, const std::vector<int64_t> &x,
                             bool constant, int64_t sorted) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  if (constant)
    *g->add_initializer() = int64Tensor("x", dims, x);
  else
    *g->add_input() = tensorInfo("x", onnx::TensorProto::INT64, dims);
  auto n = node("Unique", {"x"}, {"y", "indices", "inverse", "counts"}, "unique");
  addIntAttr(n, "sorted", sorted);
  *g->add_node() = n;
  for (const char *out : {"y", "indices", "inverse", "counts"})
    *g->add_output() = tensorInfo(out, onnx::TensorProto::INT64, {4}, {"n"});
  return m;
}

TEST(Indexing, UniqueOfAConstantBecomesConstants) {
  auto g = importModel(uniqueModel({6}, {2, 1, 1, 3, 4, 3}, true, 1));
  ASSERT_TRUE(g) << g.status().message();
  // The graph outputs are copies of the constants; the constants keep the outputs' names.
  EXPECT_EQ(int64Values(**g, "y"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(int64Values(**g, "indices"), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(int64Values(**g, "inverse"), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(int64Values(**g, "counts"), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(Indexing, UnsortedUniqueKeepsFirstOccurrenceOrder) {
  auto g = importModel(uniqueModel({6}, {2, 1, 1, 3, 4, 3}, true, 0));
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(int64Values(**g, "y"), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(int64Values(**g, "indices"), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(int64Values(**g, "inverse"), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(int64Values(**g, "counts"), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(Indexing, UniqueOfARuntimeInputIsRejected) {
  auto g = importModel(uniqueModel({6}, {}, false, 1));
  EXPECT_NE(errorOf(g).find("(Unique, opset 11): the shapes of Unique's results depend on the "
                            "values of input 'x'"),
            std::string::npos)
      << errorOf(g);
}

TEST(Indexing, NonZeroOfAConstantBecomesAConstant) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_initializer() = int64Tensor("c", {2, 3}, {0, 5, 0, -1, 0, 7});
  *g->add_node() = node("NonZero", {"c"}, {"nz"});
  *g->add_output() = tensorInfo("nz", onnx::TensorProto::INT64, {2, 3});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(int64Values(**imported, "nz"), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
}

// TopK(x, k) with k a graph input; `declared` gives the outputs a static shape.
onnx::ModelProto topKModel(bool declared) {
  auto m = model(11);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {3, 5});
  *g->add_input() = tensorInfo("k", onnx::TensorProto::INT64, {1});
  *g->add_node() = node("TopK", {"x", "k"}, {"v", "i"}, "topk");
  *g->add_output() = tensorInfo("v", onnx::TensorProto::FLOAT, {3, 2}, {"", declared ? "" : "k"});
  *g->add_output() = tensorInfo("i", onnx::TensorProto::INT64, {3, 2}, {"", declared ? "" : "k"});
  return m;
}

TEST(Indexing, RuntimeTopKTakesKFromTheDeclaredShape) {
  auto g = importModel(topKModel(true));
  ASSERT_TRUE(g) << g.status().message();
  const Node *topk = onlyNode(**g, "TopK");
  ASSERT_NE(topk, nullptr);
  EXPECT_EQ(topk->i("k"), 2);
  EXPECT_EQ(topk->i("axis"), 1);
}

TEST(Indexing, RuntimeTopKWithoutAShapeIsRejected) {
  auto g = importModel(topKModel(false));
  EXPECT_NE(errorOf(g).find("K is computed at run time, and the model declares no static "
                            "shape for output 'v'"),
            std::string::npos)
      << errorOf(g);
}

// Resize(x, scales) of x: f32[1,1,4,4] with constant scales.
onnx::ModelProto resizeModel(int opset, const std::vector<float> &scales, int64_t h, int64_t w) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  *g->add_initializer() = floatTensor("scales", {4}, scales, false);
  *g->add_node() = node("Resize",
                        opset < 11 ? std::vector<std::string>{"x", "scales"}
                                   : std::vector<std::string>{"x", "", "scales"},
                        {"y"}, "resize");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {1, 1, h, w});
  return m;
}

TEST(Indexing, ResizeDropsScalesThatEqualOutOverIn) {
  auto g = importModel(resizeModel(13, {1, 1, 2, 0.5f}, 8, 2));
  ASSERT_TRUE(g) << g.status().message();
  const Node *r = onlyNode(**g, "Resize");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->numInputs(), 1);
  EXPECT_EQ(r->ints("shape"), (std::vector<int64_t>{1, 1, 8, 2}));
}

TEST(Indexing, ResizeKeepsScalesThatChangeTheMapping) {
  auto g = importModel(resizeModel(13, {1, 1, 0.6f, 0.6f}, 2, 2)); // 4 * 0.6 -> 2, not 4 * 0.5
  ASSERT_TRUE(g) << g.status().message();
  const Node *r = onlyNode(**g, "Resize");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->numInputs(), 3);
  EXPECT_EQ(r->input(2)->name(), "scales");
}

TEST(Indexing, Resize10NearestThatGrowsAndShrinksIsRejected) {
  auto g = importModel(resizeModel(10, {1, 1, 2, 0.5f}, 8, 2));
  EXPECT_NE(errorOf(g).find("grows some axes and shrinks others; opset 10 does not define how "
                            "it rounds"),
            std::string::npos)
      << errorOf(g);
}

TEST(Indexing, ScatterMaxBeforeOpset18IsRejected) {
  auto m = model(16);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("d", onnx::TensorProto::FLOAT, {4});
  *g->add_input() = tensorInfo("i", onnx::TensorProto::INT64, {2});
  *g->add_input() = tensorInfo("u", onnx::TensorProto::FLOAT, {2});
  auto n = node("ScatterElements", {"d", "i", "u"}, {"y"}, "scatter");
  addStringAttr(n, "reduction", "max");
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {4});
  auto imported = importModel(m);
  EXPECT_NE(errorOf(imported).find("reduction 'max' exists from opset 18; the model has opset 16"),
            std::string::npos)
      << errorOf(imported);
}

// The reference kernels check at run time what the builders could not: sizes read at run time
// must give output_dims, and NonZero's count must be the declared one.
struct Computation {
  odla_computation comp = nullptr;
  odla_context ctx = nullptr;
  Computation() { odla_CreateComputation(&comp); }
  ~Computation() {
    if (ctx)
      odla_DestroyContext(ctx);
    odla_DestroyComputation(comp);
  }
};

odla_value_shape shape(std::initializer_list<odla_int64> dims) {
  odla_value_shape s{};
  s.size = static_cast<odla_int32>(dims.size());
  int i = 0;
  for (odla_int64 d : dims)
    s.dims[i++] = d;
  return s;
}

TEST(IndexingKernels, ResizeDynamicChecksSizesAtRunTime) {
  for (int64_t width : {4, 3}) {
    Computation r;
    static const float x[4] = {1, 2, 3, 4};
    const int64_t sizes[4] = {1, 1, 2, width};
    float y[8] = {0};
    odla_value in =
        odla_CreateConstant({ODLA_FLOAT32, shape({1, 1, 2, 2})}, x, (odla_value_id) "x");
    odla_value sz = odla_CreateConstant({ODLA_INT64, shape({4})}, sizes, (odla_value_id) "sizes");
    odla_value out = odla_ResizeDynamic(in, nullptr, sz, ODLA_NEAREST, ODLA_ASSYMMETRIC,
                                        shape({1, 1, 2, 4}), (odla_value_id) "y");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(odla_SetValueAsOutput(out), ODLA_SUCCESS);
    ASSERT_EQ(odla_CreateContext(&r.ctx), ODLA_SUCCESS);
    ASSERT_EQ(odla_BindToOutputById((odla_value_id) "y", y, r.ctx), ODLA_SUCCESS);
    odla_status s = odla_ExecuteComputation(r.comp, r.ctx, ODLA_COMPUTE_INFERENCE, nullptr);
    if (width == 4) {
      EXPECT_EQ(s, ODLA_SUCCESS);
      EXPECT_EQ(std::vector<float>(y, y + 8), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
    } else {
      EXPECT_NE(s, ODLA_SUCCESS) << "sizes [1,1,2,3] for output_dims [1,1,2,4]";
    }
  }
}

TEST(IndexingKernels, NonZeroChecksTheCountAtRunTime) {
  for (odla_int64 count : {2, 3}) {
    Computation r;
    static const int32_t x[4] = {0, 7, 0, -2};
    int64_t y[6] = {0};
    odla_value in = odla_CreateConstant({ODLA_INT32, shape({2, 2})}, x, (odla_value_id) "x");
    odla_value out = odla_ExtNonZero(in, shape({2, count}), (odla_value_id) "y");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(odla_SetValueAsOutput(out), ODLA_SUCCESS);
    ASSERT_EQ(odla_CreateContext(&r.ctx), ODLA_SUCCESS);
    ASSERT_EQ(odla_BindToOutputById((odla_value_id) "y", y, r.ctx), ODLA_SUCCESS);
    odla_status s = odla_ExecuteComputation(r.comp, r.ctx, ODLA_COMPUTE_INFERENCE, nullptr);
    if (count == 2) {
      EXPECT_EQ(s, ODLA_SUCCESS);
      EXPECT_EQ(std::vector<int64_t>(y, y + 4), (std::vector<int64_t>{0, 1, 1, 1}));
    } else {
      EXPECT_NE(s, ODLA_SUCCESS);
    }
  }
}

TEST(IndexingKernels, TopKKeepsTiesInOrderOfPosition) {
  Computation r;
  static const float x[6] = {1, 3, 2, 3, 1, 3};
  float v[3];
  int64_t i[3];
  odla_value in = odla_CreateConstant({ODLA_FLOAT32, shape({6})}, x, (odla_value_id) "x");
  odla_value_ids ids{};
  ids.size = 2;
  ids.value_ids[0] = (odla_value_id) "v";
  ids.value_ids[1] = (odla_value_id) "i";
  odla_values outs =
      odla_TopK(in, 3, 1, 1, 0, {ODLA_FLOAT32, shape({3})}, {ODLA_INT64, shape({3})}, ids);
  ASSERT_EQ(outs.size, 2u);
  ASSERT_EQ(odla_SetValueAsOutput(outs.values[0]), ODLA_SUCCESS);
  ASSERT_EQ(odla_SetValueAsOutput(outs.values[1]), ODLA_SUCCESS);
  ASSERT_EQ(odla_CreateContext(&r.ctx), ODLA_SUCCESS);
  ASSERT_EQ(odla_BindToOutputById((odla_value_id) "v", v, r.ctx), ODLA_SUCCESS);
  ASSERT_EQ(odla_BindToOutputById((odla_value_id) "i", i, r.ctx), ODLA_SUCCESS);
  ASSERT_EQ(odla_ExecuteComputation(r.comp, r.ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  EXPECT_EQ(std::vector<int64_t>(i, i + 3), (std::vector<int64_t>{1, 3, 5}));
}

} // namespace
} // namespace odlac::test
