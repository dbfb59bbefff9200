// Control flow: the reference backend's odla_BeginIf/odla_EndIf and odla_BeginLoop/
// odla_EndLoop (branch selection, loop variables, the condition, every output mode, memory
// planning across iterations, build-time rejections), the IR text form of bodies (print and
// parse), and the import's precise rejections. Whole ONNX models with If, Loop and Scan run
// end to end in tests/e2e/test_control_flow.py.
extern "C" {
#include <ODLA/odla.h>
}

#include "Import.h"
#include "OnnxBuilder.h"
#include "evaluate/Evaluate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <gtest/gtest.h>

#include <cstring>

namespace odlac::test {
namespace {

odla_value_type f32(std::initializer_list<int64_t> dims) {
  odla_value_type t{};
  t.element_type = ODLA_FLOAT32;
  t.shape.size = static_cast<odla_int32>(dims.size());
  int i = 0;
  for (int64_t d : dims)
    t.shape.dims[i++] = d;
  return t;
}

odla_value_type scalarOf(odla_element_type e) {
  odla_value_type t{};
  t.element_type = e;
  return t;
}

odla_value_ids ids(std::initializer_list<const char *> names) {
  odla_value_ids r{};
  for (const char *n : names)
    r.value_ids[r.size++] = (odla_value_id)n;
  return r;
}

odla_values vals(std::initializer_list<odla_value> vs) {
  odla_values r{};
  for (odla_value v : vs)
    r.values[r.size++] = v;
  return r;
}

// Binds `args` (id, data) and the outputs (value, buffer), runs, returns the status.
odla_status execute(odla_computation comp,
                    const std::vector<std::pair<const char *, const void *>> &args,
                    const std::vector<std::pair<odla_value, void *>> &outs) {
  odla_context ctx;
  EXPECT_EQ(odla_CreateContext(&ctx), ODLA_SUCCESS);
  for (const auto &[id, data] : args)
    EXPECT_EQ(odla_BindToArgumentById((odla_value_id)id, data, ctx), ODLA_SUCCESS);
  for (const auto &[v, data] : outs)
    EXPECT_EQ(odla_BindToOutput(v, data, ctx), ODLA_SUCCESS);
  odla_status s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, nullptr);
  odla_DestroyContext(ctx);
  return s;
}

// ---- If on the reference backend ----------------------------------------------------------

TEST(ControlFlowReference, IfRunsOnlyTheTakenBranch) {
  static const float two[] = {2.0f}, one[] = {1.0f};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value c = odla_CreateArgument(scalarOf(ODLA_BOOL), (odla_value_id) "c");
  odla_value x = odla_CreateArgument(f32({3}), (odla_value_id) "x");
  odla_value k2 = odla_CreateConstant(f32({1}), two, (odla_value_id) "two");
  odla_value k1 = odla_CreateConstant(f32({1}), one, (odla_value_id) "one");
  ASSERT_EQ(odla_BeginIf(c, (odla_value_id) "if"), ODLA_SUCCESS);
  ASSERT_EQ(odla_EnterBranchBody(1), ODLA_SUCCESS);
  ASSERT_EQ(odla_SetValueAsOutput(odla_Mul(x, k2, (odla_value_id) "doubled")), ODLA_SUCCESS);
  ASSERT_EQ(odla_EnterBranchBody(0), ODLA_SUCCESS);
  ASSERT_EQ(odla_SetValueAsOutput(odla_Sub(x, k1, (odla_value_id) "less")), ODLA_SUCCESS);
  odla_values r = odla_EndIf(ids({"r"}));
  ASSERT_EQ(r.size, 1u);
  ASSERT_EQ(odla_SetValueAsOutput(r.values[0]), ODLA_SUCCESS);
  float xs[] = {1.0f, -2.0f, 0.5f}, out[3];
  for (uint8_t cond : {1, 0}) {
    ASSERT_EQ(execute(comp, {{"c", &cond}, {"x", xs}}, {{r.values[0], out}}), ODLA_SUCCESS);
    for (int i = 0; i < 3; ++i)
      EXPECT_FLOAT_EQ(out[i], cond ? 2 * xs[i] : xs[i] - 1) << "cond " << int(cond);
  }
  odla_DestroyComputation(comp);
}

TEST(ControlFlowReference, EndIfRejectsBranchesOfDifferentTypes) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value c = odla_CreateArgument(scalarOf(ODLA_BOOL), (odla_value_id) "c");
  odla_value x = odla_CreateArgument(f32({3}), (odla_value_id) "x");
  odla_value y = odla_CreateArgument(f32({2}), (odla_value_id) "y");
  odla_log_level quiet = ODLA_LOG_LEVEL_OFF;
  odla_SetLogLevel(quiet);
  ASSERT_EQ(odla_BeginIf(c, nullptr), ODLA_SUCCESS);
  odla_EnterBranchBody(1);
  odla_SetValueAsOutput(x);
  odla_EnterBranchBody(0);
  odla_SetValueAsOutput(y);
  odla_values r = odla_EndIf(ids({"r"}));
  EXPECT_EQ(r.size, 0u);
  odla_executable exe = nullptr;
  EXPECT_EQ(odla_CompileComputation(comp, nullptr, &exe), ODLA_INVALID_PARAM);
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  odla_DestroyComputation(comp);
}

// ---- Loop on the reference backend ---------------------------------------------------------

// Three iterations of a = a * 2 (LAST), b = b + a (FWD_BEFORE), c = c - 1 (REV_AFTER), and a
// per-iteration value p = a + b (REV_BEFORE: stacked in reverse). Expected values come from
// the same recurrence written as a plain C++ loop.
TEST(ControlFlowReference, LoopOutputModes) {
  static const int64_t three[] = {3};
  static const float two[] = {2.0f}, one[] = {1.0f};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_type i64{};
  i64.element_type = ODLA_INT64;
  odla_value trip = odla_CreateConstant(i64, three, (odla_value_id) "trip");
  odla_value a0 = odla_CreateArgument(f32({2}), (odla_value_id) "a0");
  odla_value b0 = odla_CreateArgument(f32({2}), (odla_value_id) "b0");
  odla_value c0 = odla_CreateArgument(f32({2}), (odla_value_id) "c0");
  odla_value k2 = odla_CreateConstant(f32({1}), two, (odla_value_id) "two");
  odla_value k1 = odla_CreateConstant(f32({1}), one, (odla_value_id) "one");
  ASSERT_EQ(odla_BeginLoop(trip, (odla_value_id) "loop"), ODLA_SUCCESS);
  odla_value a = odla_CreateLoopVariable(a0, (odla_value_id) "a");
  odla_value b = odla_CreateLoopVariable(b0, (odla_value_id) "b");
  odla_value c = odla_CreateLoopVariable(c0, (odla_value_id) "c");
  odla_value an = odla_Mul(a, k2, (odla_value_id) "a_next");
  odla_value bn = odla_Add(b, a, (odla_value_id) "b_next");
  odla_value cn = odla_Sub(c, k1, (odla_value_id) "c_next");
  odla_value p = odla_Add(a, b, (odla_value_id) "p");
  const odla_loop_output_mode modes[] = {ODLA_LOOP_LAST_VALUE, ODLA_LOOP_FWD_BEFORE,
                                         ODLA_LOOP_REV_AFTER, ODLA_LOOP_REV_BEFORE};
  odla_values r = odla_EndLoop(nullptr, vals({an, bn, cn, p}), modes,
                               ids({"a_last", "b_rows", "c_rows", "p_rows"}));
  ASSERT_EQ(r.size, 4u);
  odla_value_type t;
  ASSERT_EQ(odla_GetValueType(r.values[1], &t), ODLA_SUCCESS);
  ASSERT_EQ(t.shape.size, 2);
  EXPECT_EQ(t.shape.dims[0], 3);
  EXPECT_EQ(t.shape.dims[1], 2);
  for (odla_size_t i = 0; i < r.size; ++i)
    ASSERT_EQ(odla_SetValueAsOutput(r.values[i]), ODLA_SUCCESS);
  float ain[] = {1, -1}, bin[] = {0, 10}, cin[] = {5, 6};
  float aLast[2], bRows[6], cRows[6], pRows[6];
  ASSERT_EQ(
      execute(
          comp, {{"a0", ain}, {"b0", bin}, {"c0", cin}},
          {{r.values[0], aLast}, {r.values[1], bRows}, {r.values[2], cRows}, {r.values[3], pRows}}),
      ODLA_SUCCESS);
  float ea[2] = {1, -1}, eb[2] = {0, 10}, ec[2] = {5, 6};
  float wantB[6], wantC[6], wantP[6];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      wantB[i * 2 + j] = eb[j];               // b before iteration i
      wantP[(2 - i) * 2 + j] = ea[j] + eb[j]; // p of iteration i, reversed
    }
    for (int j = 0; j < 2; ++j) {
      eb[j] += ea[j];
      ea[j] *= 2;
      ec[j] -= 1;
      wantC[(2 - i) * 2 + j] = ec[j]; // c after iteration i, reversed
    }
  }
  for (int j = 0; j < 2; ++j)
    EXPECT_FLOAT_EQ(aLast[j], ea[j]);
  for (int k = 0; k < 6; ++k) {
    EXPECT_FLOAT_EQ(bRows[k], wantB[k]) << k;
    EXPECT_FLOAT_EQ(cRows[k], wantC[k]) << k;
    EXPECT_FLOAT_EQ(pRows[k], wantP[k]) << k;
  }
  odla_DestroyComputation(comp);
}

// A condition variable stops the loop after two of five iterations: the counter ends at 2
// and the stacked rows of the iterations that did not run are zero. With the condition
// initially false, no iteration runs.
TEST(ControlFlowReference, LoopConditionStopsEarly) {
  static const int64_t five[] = {5};
  static const int32_t one[] = {1}, two[] = {2};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_type i64{}, i32{};
  i64.element_type = ODLA_INT64;
  i32.element_type = ODLA_INT32;
  odla_value trip = odla_CreateConstant(i64, five, (odla_value_id) "trip");
  odla_value n0 = odla_CreateArgument(i32, (odla_value_id) "n0");
  odla_value go = odla_CreateArgument(scalarOf(ODLA_BOOL), (odla_value_id) "go");
  odla_value k1 = odla_CreateConstant(i32, one, (odla_value_id) "one");
  odla_value k2 = odla_CreateConstant(i32, two, (odla_value_id) "two");
  ASSERT_EQ(odla_BeginLoop(trip, nullptr), ODLA_SUCCESS);
  odla_value cond = odla_CreateLoopVariable(go, (odla_value_id) "cond");
  odla_value n = odla_CreateLoopVariable(n0, (odla_value_id) "n");
  odla_value nn = odla_Add(n, k1, (odla_value_id) "n_next");
  odla_value more = odla_Less(nn, k2, (odla_value_id) "more");
  const odla_loop_output_mode modes[] = {ODLA_LOOP_LAST_VALUE, ODLA_LOOP_LAST_VALUE,
                                         ODLA_LOOP_FWD_AFTER};
  odla_values r = odla_EndLoop(cond, vals({more, nn, nn}), modes, ids({"c", "n", "rows"}));
  ASSERT_EQ(r.size, 3u);
  ASSERT_EQ(odla_SetValueAsOutput(r.values[1]), ODLA_SUCCESS);
  ASSERT_EQ(odla_SetValueAsOutput(r.values[2]), ODLA_SUCCESS);
  int32_t start = 0, last = -1, rows[5];
  uint8_t yes = 1, no = 0;
  ASSERT_EQ(
      execute(comp, {{"n0", &start}, {"go", &yes}}, {{r.values[1], &last}, {r.values[2], rows}}),
      ODLA_SUCCESS);
  EXPECT_EQ(last, 2);
  const int32_t want[] = {1, 2, 0, 0, 0};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(rows[i], want[i]) << i;
  ASSERT_EQ(
      execute(comp, {{"n0", &start}, {"go", &no}}, {{r.values[1], &last}, {r.values[2], rows}}),
      ODLA_SUCCESS);
  EXPECT_EQ(last, 0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(rows[i], 0) << i;
  odla_DestroyComputation(comp);
}

// Memory planning across iterations: o is an arena value computed before the loop and read
// by the body's Neg, which may reuse its operand's buffer when the operand dies there. The
// body runs three times, so o must survive every iteration: v = v0 - 3 * (a + a).
TEST(ControlFlowReference, ValuesReadByALoopBodyLiveAcrossIterations) {
  static const int64_t three[] = {3};
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_type i64{};
  i64.element_type = ODLA_INT64;
  odla_value trip = odla_CreateConstant(i64, three, (odla_value_id) "trip");
  odla_value a = odla_CreateArgument(f32({4}), (odla_value_id) "a");
  odla_value v0 = odla_CreateArgument(f32({4}), (odla_value_id) "v0");
  odla_value o = odla_Add(a, a, (odla_value_id) "o");
  ASSERT_EQ(odla_BeginLoop(trip, nullptr), ODLA_SUCCESS);
  odla_value v = odla_CreateLoopVariable(v0, (odla_value_id) "v");
  odla_value r = odla_Neg(o, (odla_value_id) "r");
  odla_value vn = odla_Add(v, r, (odla_value_id) "v_next");
  odla_values out = odla_EndLoop(nullptr, vals({vn}), nullptr, ids({"v_final"}));
  ASSERT_EQ(out.size, 1u);
  ASSERT_EQ(odla_SetValueAsOutput(out.values[0]), ODLA_SUCCESS);
  float as[] = {1, 2, -3, 0.5f}, vs[] = {0, 1, 2, 3}, got[4];
  ASSERT_EQ(execute(comp, {{"a", as}, {"v0", vs}}, {{out.values[0], got}}), ODLA_SUCCESS);
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(got[i], vs[i] - 3 * (2 * as[i])) << i;
  odla_DestroyComputation(comp);
}

TEST(ControlFlowReference, StackedOutputNeedsConstantTripCount) {
  odla_computation comp;
  ASSERT_EQ(odla_CreateComputation(&comp), ODLA_SUCCESS);
  odla_value_type i64{};
  i64.element_type = ODLA_INT64;
  odla_value trip = odla_CreateArgument(i64, (odla_value_id) "trip");
  odla_value x0 = odla_CreateArgument(f32({2}), (odla_value_id) "x0");
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  ASSERT_EQ(odla_BeginLoop(trip, nullptr), ODLA_SUCCESS);
  odla_value x = odla_CreateLoopVariable(x0, (odla_value_id) "x");
  odla_value y = odla_Add(x, x, (odla_value_id) "y");
  const odla_loop_output_mode modes[] = {ODLA_LOOP_FWD_AFTER};
  odla_values r = odla_EndLoop(nullptr, vals({y}), modes, ids({"rows"}));
  EXPECT_EQ(r.size, 0u);
  odla_executable exe = nullptr;
  EXPECT_EQ(odla_CompileComputation(comp, nullptr, &exe), ODLA_INVALID_PARAM);
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  odla_DestroyComputation(comp);
}

// ---- IR text form and execution through the direct sink -------------------------------------

const char *kLoopIr = R"(graph @g(%x: f32[2], %c: bool[]) {
  const %trip: i64[] = dense<[3]>
  const %yes: bool[] = dense<[1]>
  %acc, %rows = Loop(%trip, %yes, %x, %c) {num_carried = 1, scan_reverse = [0]} : f32[2], f32[3,2]
    body = graph @body(%go: bool[], %a: f32[2], %flag: bool[]) {
      %b = Add(%a, %a) : f32[2]
      %r = If(%flag, %b, %a) : f32[2]
        then_branch = graph @then(%t: f32[2]) {
          %t2 = Neg(%t) : f32[2]
          return %t2
        }
        else_branch = graph @else(%e: f32[2]) {
          return %e
        }
      return %go, %b, %r
    }
  return %acc, %rows
}
)";

TEST(ControlFlowIr, BodiesPrintAndParseBack) {
  auto g = parseGraph(kLoopIr);
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(printGraph(**g), kLoopIr);
}

// The loop doubles x three times; each row is -(2a) when %c is true, else the iteration's a.
TEST(ControlFlowIr, NestedIfInLoopRunsOnTheReferenceBackend) {
  auto g = parseGraph(kLoopIr);
  ASSERT_TRUE(g) << g.status().message();
  float x[] = {1.5f, -1.0f};
  for (uint8_t c : {1, 0}) {
    auto outs = executeGraph(**g, {Buffer::copyOf(x, sizeof x), Buffer::copyOf(&c, 1)});
    ASSERT_TRUE(outs) << outs.status().message();
    const float *acc = (*outs)[0]->as<float>(), *rows = (*outs)[1]->as<float>();
    float a[] = {x[0], x[1]};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        float b = 2 * a[j];
        EXPECT_FLOAT_EQ(rows[i * 2 + j], c ? -b : a[j]) << i << "," << j;
        a[j] = b;
      }
    EXPECT_FLOAT_EQ(acc[0], a[0]);
    EXPECT_FLOAT_EQ(acc[1], a[1]);
  }
}

TEST(ControlFlowIr, ParserRejectsConstantsInBodies) {
  auto g = parseGraph(R"(graph @g(%c: bool[], %x: f32[1]) {
  %r = If(%c, %x, %x) : f32[1]
    then_branch = graph @t(%a: f32[1]) {
      const %k: f32[1] = dense<[1.0]>
      return %k
    }
    else_branch = graph @e(%b: f32[1]) {
      return %b
    }
  return %r
})");
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("a body holds no constants"), std::string::npos)
      << g.status().message();
}

TEST(ControlFlowIr, IfBranchesMustAgreeOnTypes) {
  auto g = parseGraph(R"(graph @g(%c: bool[], %x: f32[1], %y: f32[2]) {
  %r = If(%c, %x, %y) : f32[1]
    then_branch = graph @t(%a: f32[1]) {
      return %a
    }
    else_branch = graph @e(%b: f32[2]) {
      return %b
    }
  return %r
})");
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("result 0 is f32[1] in then_branch but f32[2] in "
                                      "else_branch"),
            std::string::npos)
      << g.status().message();
}

// ---- Import rejections ---------------------------------------------------------------------

// Loop(M, cond, y) with a scan output whose length depends on M (a graph input) and no
// declared shape for it.
onnx::ModelProto loopWithScanOutput(bool declareLength) {
  onnx::ModelProto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("M", onnx::TensorProto::INT64, {});
  *g->add_input() = tensorInfo("y", onnx::TensorProto::FLOAT, {2});
  onnx::GraphProto body;
  body.set_name("loop_body");
  *body.add_input() = tensorInfo("i", onnx::TensorProto::INT64, {});
  *body.add_input() = tensorInfo("cond_in", onnx::TensorProto::BOOL, {});
  *body.add_input() = tensorInfo("y_in", onnx::TensorProto::FLOAT, {2});
  *body.add_node() = node("Identity", {"cond_in"}, {"cond_out"});
  *body.add_node() = node("Add", {"y_in", "y_in"}, {"y_out"});
  *body.add_node() = node("Identity", {"y_out"}, {"scan"});
  *body.add_output() = tensorInfo("cond_out", onnx::TensorProto::BOOL, {});
  *body.add_output() = tensorInfo("y_out", onnx::TensorProto::FLOAT, {2});
  *body.add_output() = tensorInfo("scan", onnx::TensorProto::FLOAT, {2});
  onnx::NodeProto loop = node("Loop", {"M", "", "y"}, {"y_final", "scans"}, "the_loop");
  auto *a = loop.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  *g->add_node() = loop;
  *g->add_output() = tensorInfo("y_final", onnx::TensorProto::FLOAT, {2});
  *g->add_output() = declareLength ? tensorInfo("scans", onnx::TensorProto::FLOAT, {4, 2})
                                   : tensorInfo("scans", onnx::TensorProto::FLOAT, {0, 2}, {"n"});
  return m;
}

TEST(ControlFlowImport, ScanOutputWithDataDependentLengthNeedsABound) {
  auto g = importOnnxFile(save(loopWithScanOutput(false), tempDir()), {});
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("node 'the_loop' (Loop, opset 13): scan output 0 ('scans') "
                                      "has a length that depends on data"),
            std::string::npos)
      << g.status().message();
}

TEST(ControlFlowImport, DeclaredLengthBoundsTheLoop) {
  auto g = importOnnxFile(save(loopWithScanOutput(true), tempDir()), {});
  ASSERT_TRUE(g) << g.status().message();
  // M = 3 of the 4 rows: the last row is zero; y doubles three times.
  int64_t trip = 3;
  float y[] = {1.0f, -0.5f};
  auto outs = executeGraph(**g, {Buffer::copyOf(&trip, 8), Buffer::copyOf(y, sizeof y)});
  ASSERT_TRUE(outs) << outs.status().message();
  const float *yf = (*outs)[0]->as<float>(), *rows = (*outs)[1]->as<float>();
  EXPECT_FLOAT_EQ(yf[0], 8.0f);
  EXPECT_FLOAT_EQ(yf[1], -4.0f);
  const float want[] = {2, -1, 4, -2, 8, -4, 0, 0};
  for (int i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(rows[i], want[i]) << i;
}

// Branches returning sequences of one structure, with a condition known only at run time:
// the If is inlined and each element selected (docs/cli.md "Sequences and optionals"); the
// sequence graph output is flattened into r.0.
TEST(ControlFlowImport, SequenceBranchesAreSelectedElementwise) {
  onnx::ModelProto m = model(13);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("c", onnx::TensorProto::BOOL, {});
  *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2});
  for (const char *branch : {"then_branch", "else_branch"}) {
    onnx::GraphProto b;
    b.set_name(branch);
    std::string element = std::string(branch) + "_x";
    *b.add_node() = node(branch[0] == 't' ? "Identity" : "Neg", {"x"}, {element});
    *b.add_node() = node("SequenceConstruct", {element}, {std::string(branch) + "_seq"});
    onnx::ValueInfoProto out;
    out.set_name(std::string(branch) + "_seq");
    out.mutable_type()
        ->mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(onnx::TensorProto::FLOAT);
    *b.add_output() = out;
    onnx::NodeProto *n = g->node_size() ? g->mutable_node(0) : g->add_node();
    if (n->op_type().empty())
      *n = node("If", {"c"}, {"r"}, "the_if");
    auto *a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = b;
  }
  onnx::ValueInfoProto r;
  r.set_name("r");
  r.mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  *g->add_output() = r;
  auto imported = importOnnxFile(save(m, tempDir()), {});
  ASSERT_TRUE(imported) << imported.status().message();
  ASSERT_EQ((*imported)->outputs().size(), 1u);
  EXPECT_EQ((*imported)->outputs()[0]->name(), "r.0");
  const float x[] = {1.5f, -2.0f};
  for (uint8_t c : {uint8_t{1}, uint8_t{0}}) {
    auto outs = executeGraph(**imported, {Buffer::copyOf(&c, 1), Buffer::copyOf(x, sizeof x)});
    ASSERT_TRUE(outs) << outs.status().message();
    const float *y = (*outs)[0]->as<float>();
    EXPECT_FLOAT_EQ(y[0], c ? 1.5f : -1.5f);
    EXPECT_FLOAT_EQ(y[1], c ? -2.0f : 2.0f);
  }
}

} // namespace
} // namespace odlac::test
