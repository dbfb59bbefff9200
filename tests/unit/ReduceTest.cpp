// Reduce family: import edge cases the ONNX backend tests do not cover (precise rejections,
// empty axes, scalars, run-time axes) and the reference kernels' defined results (integer
// wrap-around and truncation, empty reductions, NaN, run-time checks of data-dependent axes).
#include "Import.h"
#include "OnnxBuilder.h"
#include "ops/OpDef.h"

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace odlac::test {
namespace {

Expected<std::unique_ptr<Graph>> importModel(const onnx::ModelProto &m) {
  return importOnnxFile(save(m, tempDir()), {});
}

// A model with one node over float inputs (dims given per input) and one output.
onnx::ModelProto oneNode(int opset, const onnx::NodeProto &n,
                         const std::vector<std::vector<int64_t>> &inputDims,
                         const std::vector<int64_t> &outDims,
                         int outType = onnx::TensorProto::FLOAT) {
  auto m = model(opset);
  auto *g = m.mutable_graph();
  for (int i = 0; i < n.input_size() && i < static_cast<int>(inputDims.size()); ++i)
    *g->add_input() = tensorInfo(n.input(i), onnx::TensorProto::FLOAT, inputDims[i]);
  *g->add_node() = n;
  *g->add_output() = tensorInfo(n.output(0), outType, outDims);
  return m;
}

onnx::TensorProto int64Tensor(const std::string &name, const std::vector<int64_t> &v,
                              bool scalar = false) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  if (!scalar)
    t.add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v)
    t.add_int64_data(x);
  return t;
}

TEST(Reduce, DuplicateAxesAreRejected) {
  auto n = node("ReduceMax", {"x"}, {"y"}, "rmax");
  addIntsAttr(n, "axes", {1, -2});
  auto imported = importModel(oneNode(11, n, {{2, 3, 4}}, {2, 1, 4}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'rmax' (ReduceMax, opset 11): axes [1,-2] name axis 1 twice");
}

TEST(Reduce, KeepdimsMustBeZeroOrOne) {
  auto n = node("ReduceMean", {"x"}, {"y"}, "rmean");
  addIntAttr(n, "keepdims", 2);
  auto imported = importModel(oneNode(11, n, {{2, 3}}, {1, 1}));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'rmean' (ReduceMean, opset 11): attribute keepdims=2 is not supported (0 or 1)");
}

TEST(Reduce, NoAxesMeansEveryAxisAndAxesAreSorted) {
  auto all = node("ReduceL2", {"x"}, {"y"}, "l2");
  auto imported = importModel(oneNode(11, all, {{2, 3, 4}}, {1, 1, 1}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ((*imported)->nodes()[0]->ints("axes"), (std::vector<int64_t>{0, 1, 2}));

  auto some = node("ReduceLogSum", {"x"}, {"y"}, "ls");
  addIntsAttr(some, "axes", {-1, 0});
  addIntAttr(some, "keepdims", 0);
  imported = importModel(oneNode(11, some, {{2, 3, 4}}, {3}));
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ((*imported)->nodes()[0]->ints("axes"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ((*imported)->outputs()[0]->dims(), (Dims{3}));
}

TEST(Reduce, ScalarReducesOverNoAxis) {
  auto n = node("ReduceSumSquare", {"x"}, {"y"}, "ss");
  addIntAttr(n, "keepdims", 0);
  auto imported = importModel(oneNode(11, n, {{}}, {}));
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *r = (*imported)->nodes()[0];
  EXPECT_STREQ(r->op().name, "ReduceSumSquare");
  EXPECT_TRUE(r->ints("axes").empty());
  EXPECT_EQ(r->output(0)->dims(), (Dims{}));
}

TEST(Reduce, ReduceSum13WithEmptyAxesAndNoopIsIdentity) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
  *g->add_initializer() = int64Tensor("axes", {});
  auto n = node("ReduceSum", {"x", "axes"}, {"y"}, "rs");
  addIntAttr(n, "noop_with_empty_axes", 1);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  ASSERT_EQ((*imported)->nodes().size(), 1u);
  EXPECT_STREQ((*imported)->nodes()[0]->op().name, "Identity");
}

// The declared output pins the dims of a ReduceSum whose result reaches it through Cast and
// Sqrt (shape-keeping); through a broadcasting Add it would not (tests/hostile/test_ops5.py).
TEST(Reduce, RunTimeAxesPinnedThroughShapeKeepingNodes) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {3, 2, 2});
  *g->add_input() = tensorInfo("axes", onnx::TensorProto::INT64, {1});
  *g->add_node() = node("ReduceSum", {"x", "axes"}, {"s"}, "rs");
  auto cast = node("Cast", {"s"}, {"d"}, "cast");
  addIntAttr(cast, "to", onnx::TensorProto::DOUBLE);
  *g->add_node() = cast;
  *g->add_node() = node("Sqrt", {"d"}, {"y"}, "sqrt");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::DOUBLE, {3, 1, 2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *r = (*imported)->nodes()[0];
  EXPECT_STREQ(r->op().name, "ReduceDynamic");
  EXPECT_EQ(r->ints("shape"), (std::vector<int64_t>{3, 1, 2}));
}

TEST(Reduce, ReduceSum13RunTimeAxesUseTheDeclaredShape) {
  auto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {3, 2, 2});
  *g->add_input() = tensorInfo("axes", onnx::TensorProto::INT64, {1});
  auto n = node("ReduceSum", {"x", "axes"}, {"y"}, "rs");
  addIntAttr(n, "keepdims", 0);
  *g->add_node() = n;
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {3, 2});
  auto imported = importModel(m);
  ASSERT_TRUE(imported) << imported.status().message();
  const Node *r = (*imported)->nodes()[0];
  EXPECT_STREQ(r->op().name, "ReduceDynamic");
  EXPECT_EQ(r->s("reduction"), "ReduceSum");
  EXPECT_EQ(r->ints("shape"), (std::vector<int64_t>{3, 2}));

  // Without a static result shape there is nothing to size the result with.
  *g->mutable_output(0) = tensorInfo("y", onnx::TensorProto::FLOAT, {3, 2}, {"n", ""});
  imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'rs' (ReduceSum, opset 13): axes (input 1, 'axes') is known only at run time "
            "and the model declares no static shape for the result");
}

TEST(Reduce, CumSumConstantAxisIsChecked) {
  auto m = model(14);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
  *g->add_initializer() = int64Tensor("axis", {2}, true);
  *g->add_node() = node("CumSum", {"x", "axis"}, {"y"}, "cs");
  *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
  auto imported = importModel(m);
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'cs' (CumSum, opset 14): axis 2 is out of range [-2, 2) for rank 2");
}

TEST(Reduce, ArgMaxOverAnEmptyAxisIsRejected) {
  auto n = node("ArgMax", {"x"}, {"y"}, "am");
  addIntAttr(n, "axis", 1);
  auto imported = importModel(oneNode(13, n, {{2, 0}}, {2, 1}, onnx::TensorProto::INT64));
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.status().message(),
            "node 'am' (ArgMax, opset 13): ArgMax: axis 1 of [2,0] has extent 0: there is no "
            "element to pick");
}

TEST(Reduce, LogSoftmaxAndHardmaxBeforeOpset13FlattenToRows) {
  for (const char *op : {"LogSoftmax", "Hardmax"}) {
    auto n = node(op, {"x"}, {"y"}, "sm");
    auto imported = importModel(oneNode(11, n, {{2, 3, 4}}, {2, 3, 4}));
    ASSERT_TRUE(imported) << imported.status().message();
    auto nodes = (*imported)->nodes();
    ASSERT_EQ(nodes.size(), 3u) << op;
    EXPECT_EQ(nodes[0]->ints("shape"), (std::vector<int64_t>{2, 12})) << op;
    EXPECT_STREQ(nodes[1]->op().name, op);
    EXPECT_EQ(nodes[1]->i("axis"), 1) << op;
  }
}

// ---- Reference kernels ---------------------------------------------------------------------

odla_value_shape shapeOf(std::initializer_list<odla_int64> dims) {
  odla_value_shape s{};
  s.size = static_cast<odla_int32>(dims.size());
  int i = 0;
  for (odla_int64 d : dims)
    s.dims[i++] = d;
  return s;
}

const odla_value_shape kUndefined = {-1, {}};

// Builds y = build(x) with x a constant, runs it, returns y's bytes (empty on any failure)
// and the execution status.
struct Run {
  std::vector<unsigned char> out;
  odla_status status = ODLA_FAILURE;
};

template <class Build> Run run(odla_value_type xType, const void *x, size_t outBytes, Build build) {
  Run r;
  odla_computation comp = nullptr;
  odla_CreateComputation(&comp);
  odla_value y = build(odla_CreateConstant(xType, x, (odla_value_id) "x"));
  if (y && odla_SetValueAsOutput(y) == ODLA_SUCCESS) {
    odla_context ctx = nullptr;
    odla_CreateContext(&ctx);
    r.out.resize(outBytes);
    odla_BindToOutputById((odla_value_id) "y", r.out.data(), ctx);
    r.status = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr);
    odla_DestroyContext(ctx);
  }
  odla_DestroyComputation(comp);
  return r;
}

template <class T> std::vector<T> as(const Run &r) {
  std::vector<T> v(r.out.size() / sizeof(T));
  if (!v.empty())
    std::memcpy(v.data(), r.out.data(), v.size() * sizeof(T));
  return v;
}

TEST(ReduceKernels, IntegerSumsWrapAndMeansTruncateTowardZero) {
  std::vector<int8_t> x{100, 100, -7, 0};
  const odla_uint32 axis1[] = {1};
  auto sum = run({ODLA_INT8, shapeOf({2, 2})}, x.data(), 2, [&](odla_value v) {
    return odla_ReduceSum(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  EXPECT_EQ(as<int8_t>(sum), (std::vector<int8_t>{-56, -7}));
  auto mean = run({ODLA_INT8, shapeOf({2, 2})}, x.data(), 2, [&](odla_value v) {
    return odla_ReduceMean(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  EXPECT_EQ(as<int8_t>(mean), (std::vector<int8_t>{100, -3}));
}

TEST(ReduceKernels, Int64SumsAreExact) {
  std::vector<int64_t> x{(1LL << 62), 3, (1LL << 53) + 1};
  const odla_uint32 axis0[] = {0};
  auto sum = run({ODLA_INT64, shapeOf({3})}, x.data(), 8, [&](odla_value v) {
    return odla_ReduceSum(v, 1, axis0, 0, kUndefined, (odla_value_id) "y");
  });
  EXPECT_EQ(as<int64_t>(sum), (std::vector<int64_t>{(1LL << 62) + (1LL << 53) + 4}));
}

TEST(ReduceKernels, EmptyReductionsGiveTheIdentity) {
  const odla_uint32 axis1[] = {1};
  int8_t none = 0;
  auto mx = run({ODLA_INT8, shapeOf({2, 0})}, &none, 2, [&](odla_value v) {
    return odla_ReduceMax(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  EXPECT_EQ(as<int8_t>(mx), (std::vector<int8_t>{-128, -128}));
  float fnone = 0;
  auto mean = run({ODLA_FLOAT32, shapeOf({1, 0})}, &fnone, 4, [&](odla_value v) {
    return odla_ReduceMean(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  ASSERT_EQ(as<float>(mean).size(), 1u);
  EXPECT_TRUE(std::isnan(as<float>(mean)[0]));
  auto prod = run({ODLA_FLOAT32, shapeOf({1, 0})}, &fnone, 4, [&](odla_value v) {
    return odla_ReduceProd(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  EXPECT_EQ(as<float>(prod), (std::vector<float>{1.0f}));
}

TEST(ReduceKernels, MaxPropagatesNaNAndLogSumExpIsStable) {
  const float nan = std::nanf(""), inf = HUGE_VALF;
  // Rows of 40: 32 partial maxima, then a scalar tail of 8.
  std::vector<float> x(120, 1.0f);
  x[3] = 7.0f;
  x[40 + 5] = nan;  // row 1: in the partial maxima
  x[80 + 35] = nan; // row 2: in the tail
  const odla_uint32 axis1[] = {1};
  auto mx = run({ODLA_FLOAT32, shapeOf({3, 40})}, x.data(), 12, [&](odla_value v) {
    return odla_ReduceMax(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  auto m = as<float>(mx);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], 7.0f);
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_TRUE(std::isnan(m[2]));
  std::vector<float> big{1000.0f, 1000.0f, -inf, -inf};
  auto lse = run({ODLA_FLOAT32, shapeOf({2, 2})}, big.data(), 8, [&](odla_value v) {
    return odla_ReduceLogSumExp(v, 1, axis1, 0, kUndefined, (odla_value_id) "y");
  });
  auto l = as<float>(lse);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_NEAR(l[0], 1000.0f + std::log(2.0f), 1e-3);
  EXPECT_EQ(l[1], -inf);
}

TEST(ReduceKernels, ArgMaxTakesTheFirstOrLastTieAndNaNWins) {
  const float nan = std::nanf("");
  std::vector<float> x{1, 3, 3, 0, nan, 2, nan, 1};
  odla_value_type idx{ODLA_INT64, shapeOf({2})};
  auto first = run({ODLA_FLOAT32, shapeOf({2, 4})}, x.data(), 16, [&](odla_value v) {
    return odla_ArgMax(v, -1, 0, 0, idx, (odla_value_id) "y");
  });
  EXPECT_EQ(as<int64_t>(first), (std::vector<int64_t>{1, 0}));
  auto last = run({ODLA_FLOAT32, shapeOf({2, 4})}, x.data(), 16,
                  [&](odla_value v) { return odla_ArgMax(v, -1, 0, 1, idx, (odla_value_id) "y"); });
  EXPECT_EQ(as<int64_t>(last), (std::vector<int64_t>{2, 2}));
}

TEST(ReduceKernels, RunTimeAxesMustGiveTheDeclaredShape) {
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  for (int64_t axis : {int64_t{1}, int64_t{0}}) {
    odla_computation comp = nullptr;
    odla_CreateComputation(&comp);
    odla_value xv =
        odla_CreateConstant({ODLA_FLOAT32, shapeOf({2, 3})}, x.data(), (odla_value_id) "x");
    odla_value axes = odla_CreateArgument({ODLA_INT64, shapeOf({1})}, (odla_value_id) "axes");
    odla_value y = odla_ExtReduceDynamic(xv, axes, ODLA_EXT_REDUCE_SUM, 0, 0, shapeOf({2}),
                                         (odla_value_id) "y");
    ASSERT_NE(y, nullptr);
    odla_SetValueAsOutput(y);
    odla_context ctx = nullptr;
    odla_CreateContext(&ctx);
    std::vector<float> out(2);
    odla_BindToArgumentById((odla_value_id) "axes", &axis, ctx);
    odla_BindToOutputById((odla_value_id) "y", out.data(), ctx);
    odla_status s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr);
    if (axis == 1) {
      EXPECT_EQ(s, ODLA_SUCCESS);
      EXPECT_EQ(out, (std::vector<float>{6, 15}));
    } else { // [3] is not the declared [2]
      EXPECT_EQ(s, ODLA_INVALID_PARAM);
    }
    odla_DestroyContext(ctx);
    odla_DestroyComputation(comp);
  }
}

TEST(ReduceKernels, CumSumExclusiveReverseWrapsIntegers) {
  std::vector<uint8_t> x{200, 100, 1, 2};
  int64_t axis = -1;
  odla_computation comp = nullptr;
  odla_CreateComputation(&comp);
  odla_value xv = odla_CreateConstant({ODLA_UINT8, shapeOf({4})}, x.data(), (odla_value_id) "x");
  odla_value av = odla_CreateConstant({ODLA_INT64, shapeOf({})}, &axis, (odla_value_id) "axis");
  odla_value y = odla_CumSum(xv, av, 1, 1, (odla_value_id) "y");
  ASSERT_NE(y, nullptr);
  odla_SetValueAsOutput(y);
  odla_context ctx = nullptr;
  odla_CreateContext(&ctx);
  std::vector<uint8_t> out(4);
  odla_BindToOutputById((odla_value_id) "y", out.data(), ctx);
  EXPECT_EQ(odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr), ODLA_SUCCESS);
  // reverse exclusive: y[i] = sum of x[j] for j > i, modulo 256.
  EXPECT_EQ(out, (std::vector<uint8_t>{103, 3, 2, 0}));
  odla_DestroyContext(ctx);
  odla_DestroyComputation(comp);
}

TEST(ReduceKernels, SoftmaxOnHalfComputesInFloat) {
  // 0x3c00 = 1.0, 0x4000 = 2.0 in IEEE half.
  std::vector<uint16_t> x{0x3c00, 0x4000};
  auto r = run({ODLA_FLOAT16, shapeOf({2})}, x.data(), 4,
               [&](odla_value v) { return odla_Softmax(v, 0, (odla_value_id) "y"); });
  auto h = as<uint16_t>(r);
  ASSERT_EQ(h.size(), 2u);
  // softmax([1, 2]) = [0.26894, 0.73106]: halves 0x344e and 0x39d9.
  EXPECT_EQ(h[0], 0x344e);
  EXPECT_EQ(h[1], 0x39d9);
}

// Rows of 37 (two blocks of the row maximum's 16 lanes and a tail): a NaN anywhere makes the
// Softmax row NaN and Hardmax's 1 its first NaN (numpy's max and argmax); masked scores (-1e4
// below the row's maximum, far past exp's underflow) give exactly 0 and the rest sums to 1.
TEST(ReduceKernels, SoftmaxRowsOfManyLanesKeepNaNAndMaskedScores) {
  const int len = 37;
  const int nans[][2] = {{0, -1}, {5, -1}, {16, -1}, {31, -1}, {36, -1}, {16, 31}};
  for (const auto &nan : nans) {
    const int at = nan[0];
    std::vector<float> x(len);
    for (int i = 0; i < len; ++i)
      x[i] = 0.25f * static_cast<float>(i % 7);
    x[at] = NAN;
    if (nan[1] >= 0)
      x[nan[1]] = NAN; // a second NaN after the first
    auto sm = as<float>(run({ODLA_FLOAT32, shapeOf({1, len})}, x.data(), len * sizeof(float),
                            [&](odla_value v) { return odla_Softmax(v, 1, (odla_value_id) "y"); }));
    ASSERT_EQ(sm.size(), static_cast<size_t>(len));
    for (float v : sm)
      EXPECT_TRUE(std::isnan(v)) << "NaN at " << at;
    auto hm = as<float>(run({ODLA_FLOAT32, shapeOf({1, len})}, x.data(), len * sizeof(float),
                            [&](odla_value v) { return odla_Hardmax(v, 1, (odla_value_id) "y"); }));
    ASSERT_EQ(hm.size(), static_cast<size_t>(len));
    for (int i = 0; i < len; ++i)
      EXPECT_EQ(hm[i], i == at ? 1.0f : 0.0f) << "NaN at " << at << ", element " << i;
  }
  std::vector<float> x(len);
  double want = 0;
  for (int i = 0; i < len; ++i) {
    x[i] = i % 3 == 0 ? -10000.0f : 0.5f * static_cast<float>(i % 5);
    want += i % 3 == 0 ? 0.0 : std::exp(0.5 * (i % 5) - 2.0);
  }
  x[20] = -std::numeric_limits<float>::infinity();
  want -= std::exp(0.5 * (20 % 5) - 2.0);
  auto sm = as<float>(run({ODLA_FLOAT32, shapeOf({1, len})}, x.data(), len * sizeof(float),
                          [&](odla_value v) { return odla_Softmax(v, 1, (odla_value_id) "y"); }));
  ASSERT_EQ(sm.size(), static_cast<size_t>(len));
  for (int i = 0; i < len; ++i) {
    const double e = i % 3 == 0 || i == 20 ? 0.0 : std::exp(0.5 * (i % 5) - 2.0) / want;
    if (e == 0.0)
      EXPECT_EQ(sm[i], 0.0f) << "element " << i;
    else
      EXPECT_NEAR(sm[i], e, 2e-7) << "element " << i;
  }
}

} // namespace
} // namespace odlac::test
