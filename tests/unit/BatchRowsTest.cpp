// The --dynamic-batch analysis (passes/BatchRows.h) on text IR: each refusal names the node
// and the rule, each with a twin that must pass. A model is given at batch B and at B + 1
// rows, as odlac imports it twice.
#include "passes/BatchRows.h"
#include "ir/Parser.h"

#include <gtest/gtest.h>

namespace odlac {
namespace {

// The messages checkBatchRows gives for `atB` (batch `batch`) and `atNext` (batch + 1), joined.
std::string check(const std::string &atB, const std::string &atNext, int64_t batch = 1) {
  auto g = parseGraph(atB);
  auto next = parseGraph(atNext);
  EXPECT_TRUE(g && next) << (g ? next.status() : g.status()).messages()[0];
  if (!g || !next)
    return "unparsed";
  std::string all;
  Status s = checkBatchRows(**g, **next, batch);
  for (const std::string &m : s.messages())
    all += m + "\n";
  return all;
}

// An MLP with the batch `b`.
std::string mlp(int b) {
  std::string B = std::to_string(b);
  return "graph @t(%x: f32[" + B +
         ",2]) {\n"
         "  const %w: f32[2,3] = dense<[1.0,2.0,3.0,4.0,5.0,6.0]>\n"
         "  const %c: f32[3] = dense<[0.5,0.5,0.5]>\n"
         "  %h = Gemm(%x, %w, %c) {alpha = 1.0, beta = 1.0, transA = 0, transB = 0} : f32[" +
         B +
         ",3]\n"
         "  %y = Relu(%h) : f32[" +
         B +
         ",3]\n"
         "  return %y\n}\n";
}

TEST(BatchRows, RowWiseGraphPasses) {
  EXPECT_EQ(check(mlp(1), mlp(2)), "");
  EXPECT_EQ(check(mlp(2), mlp(3), 2), "");
}

TEST(BatchRows, ReductionOverTheBatchIsRefused) {
  auto reduce = [](int b, const char *axes) {
    std::string B = std::to_string(b);
    return "graph @t(%x: f32[" + B + ",4]) {\n  %m = ReduceMean(%x) {axes = " + axes +
           ", keepdims = 1} : f32[" + (std::string(axes) == "[0]" ? "1" : B) + "," +
           (std::string(axes) == "[0]" ? "4" : "1") + "]\n  return %m\n}\n";
  };
  EXPECT_NE(check(reduce(1, "[0]"), reduce(2, "[0]"))
                .find("node 'm' (ReduceMean): it reduces over the batch axis 0"),
            std::string::npos);
  EXPECT_EQ(check(reduce(1, "[1]"), reduce(2, "[1]")), "");
}

TEST(BatchRows, TransposedRowsInAProductAreRefused) {
  // x^T w: the batch is the product's inner dim.
  auto product = [](int b) {
    std::string B = std::to_string(b);
    return "graph @t(%x: f32[" + B + ",2]) {\n  const %w: f32[" + B + ",3] = dense<[" +
           (b == 1 ? "1.0,2.0,3.0" : "1.0,2.0,3.0,4.0,5.0,6.0") +
           "]>\n  %h = Gemm(%x, %w) {alpha = 1.0, beta = 1.0, transA = 1, transB = 0} : "
           "f32[2,3]\n  return %h\n}\n";
  };
  EXPECT_NE(check(product(1), product(2)).find("node 'h' (Gemm): transA is set"),
            std::string::npos);
}

TEST(BatchRows, BatchInTheSecondProductOperandIsRefused) {
  auto product = [](int b) {
    std::string B = std::to_string(b);
    return "graph @t(%x: f32[" + B + ",2]) {\n  const %w: f32[2," + B + "] = dense<[" +
           (b == 1 ? "1.0,2.0" : "1.0,2.0,3.0,4.0") +
           "]>\n  %p = MatMul(%w, %x) : f32[2,2]\n  return %p\n}\n";
  };
  EXPECT_NE(check(product(1), product(2)).find("node 'p' (MatMul): operand B carries the rows"),
            std::string::npos);
}

TEST(BatchRows, TransposeThatMovesTheBatchIsRefused) {
  auto transpose = [](int b, const char *perm) {
    std::string B = std::to_string(b);
    bool moves = std::string(perm) == "[1,0]";
    return "graph @t(%x: f32[" + B + ",3]) {\n  %t = Transpose(%x) {perm = " + perm + "} : f32[" +
           (moves ? "3," + B : B + ",3") + "]\n  return %t\n}\n";
  };
  EXPECT_NE(check(transpose(1, "[1,0]"), transpose(2, "[1,0]"))
                .find("node 't' (Transpose): its perm moves the batch axis 0"),
            std::string::npos);
  EXPECT_EQ(check(transpose(1, "[0,1]"), transpose(2, "[0,1]")), "");
}

// A constant folded from the batch size: `value` at batch 1 and `next` at batch 2.
std::string scaled(int b, const char *value) {
  std::string B = std::to_string(b);
  return "graph @t(%x: f32[" + B + ",2]) {\n  const %n: f32[] = dense<[" + value +
         "]>\n  %y = Mul(%x, %n) : f32[" + B + ",2]\n  return %y\n}\n";
}

TEST(BatchRows, ConstantsFoldedFromTheBatchSizeAreRefused) {
  EXPECT_NE(check(scaled(1, "1.0"), scaled(2, "2.0"))
                .find("node 'y' (Mul): operand 1 is a constant 'n' that folding computed from "
                      "the batch size (its value differs between batch 1 and batch 2)"),
            std::string::npos);
  EXPECT_EQ(check(scaled(1, "3.0"), scaled(2, "3.0")), "");
}

// Concat of the rows with a constant of `rows` rows, `data` its elements.
std::string joined(int b, const std::string &data) {
  std::string B = std::to_string(b);
  return "graph @t(%x: f32[" + B + ",2]) {\n  const %k: f32[" + B + ",1] = dense<[" + data +
         "]>\n  %y = Concat(%k, %x) {axis = 1} : f32[" + B + ",3]\n  return %y\n}\n";
}

TEST(BatchRows, ARowRepeatedForEveryRowPassesAnIndexDoesNot) {
  // An Expand of one row to the batch size: the same at any batch.
  EXPECT_EQ(check(joined(1, "7.0"), joined(2, "7.0,7.0")), "");
  // An arange over the batch: row i holds i.
  EXPECT_NE(check(joined(1, "0.0"), joined(2, "0.0,1.0"))
                .find("node 'y' (Concat): operand 0 is a constant 'k' that folding computed "
                      "from the batch size ([1,1] rows differ from [2,1]"),
            std::string::npos);
}

TEST(BatchRows, OpsWithoutARuleAreRefusedByName) {
  auto cumsum = [](int b) {
    std::string B = std::to_string(b);
    return "graph @t(%x: f32[" + B +
           ",4]) {\n  const %a: i64[] = dense<[1]>\n"
           "  %y = CumSum(%x, %a) {exclusive = 0, reverse = 0} : f32[" +
           B + ",4]\n  return %y\n}\n";
  };
  std::string got = check(cumsum(1), cumsum(2));
  EXPECT_NE(got.find("node 'y' (CumSum): odlac has no batch rule for CumSum"), std::string::npos)
      << got;
}

} // namespace
} // namespace odlac
