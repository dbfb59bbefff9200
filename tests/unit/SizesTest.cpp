// Size arithmetic and limits: CheckedInt's overflow flags against the exact values, the
// representable-type check (rank, negative dims, element and byte counts, strides of empty
// tensors), the per-target limit and its messages, and the IR text parser refusing types
// beyond them.
#include "ir/Limits.h"
#include "ir/Parser.h"
#include "support/Checked.h"

#include <gtest/gtest.h>

#include <climits>

namespace odlac::test {
namespace {

TEST(CheckedInt, ExactResultsAreValid) {
  EXPECT_EQ((CheckedInt(3) * 4 + 5 - 6).get(), 11);
  EXPECT_EQ((CheckedInt(INT64_MAX - 1) + 1).get(), INT64_MAX);
  EXPECT_EQ((CheckedInt(INT64_MIN + 1) - 1).get(), INT64_MIN);
  EXPECT_EQ((CheckedInt(int64_t{1} << 31) * (int64_t{1} << 31)).get(), int64_t{1} << 62);
  EXPECT_EQ((CheckedInt(-7) / 2).get(), -3); // truncates, as C does
  EXPECT_EQ((CheckedInt(-7) % 2).get(), -1);
  EXPECT_EQ((-CheckedInt(INT64_MAX)).get(), -INT64_MAX);
}

TEST(CheckedInt, OverflowsAreFlaggedNotWrapped) {
  EXPECT_FALSE((CheckedInt(INT64_MAX) + 1).valid());
  EXPECT_FALSE((CheckedInt(INT64_MIN) - 1).valid());
  EXPECT_FALSE((CheckedInt(int64_t{1} << 32) * (int64_t{1} << 32)).valid());
  EXPECT_FALSE((CheckedInt(INT64_MIN) * -1).valid());
  EXPECT_FALSE((-CheckedInt(INT64_MIN)).valid());
  EXPECT_FALSE((CheckedInt(INT64_MIN) / -1).valid());
  EXPECT_FALSE((CheckedInt(INT64_MIN) % -1).valid());
  EXPECT_FALSE((CheckedInt(5) / 0).valid());
  EXPECT_FALSE((CheckedInt(5) % 0).valid());
  EXPECT_EQ((CheckedInt(INT64_MAX) + 1).get(), std::nullopt);
}

TEST(CheckedInt, AnOverflowStaysFlaggedThroughLaterSteps) {
  CheckedInt x = CheckedInt(INT64_MAX) * 2; // overflows
  x = x / 4 - INT64_MAX;                    // would bring a wrapped value back in range
  EXPECT_FALSE(x.valid());
  CheckedInt y = 1;
  y *= INT64_MAX;
  y += 1;
  y -= 5;
  EXPECT_FALSE(y.valid());
}

TEST(CheckedInt, ProductsAndSumsOfRanges) {
  EXPECT_EQ(checkedProduct(Dims{}), 1);
  EXPECT_EQ(checkedProduct(Dims{2, 3, 4}), 24);
  EXPECT_EQ(checkedProduct(Dims{0, int64_t{1} << 40, int64_t{1} << 40}), 0);
  EXPECT_EQ(checkedProduct(Dims{int64_t{1} << 40, int64_t{1} << 40, 0}), std::nullopt)
      << "the partial product overflows before the zero";
  EXPECT_EQ(checkedProduct(Dims{int64_t{1} << 32, int64_t{1} << 32}), std::nullopt);
  EXPECT_EQ(checkedSum(Dims{1, 2, 3}), 6);
  EXPECT_EQ(checkedSum(Dims{INT64_MAX, 1}), std::nullopt);
  EXPECT_EQ(checkedSum(Dims{INT64_MAX, 1, -1}), std::nullopt);
}

TEST(Limits, RepresentableTypes) {
  EXPECT_EQ(shapeProblem({DType::F32, {}}), "");
  EXPECT_EQ(shapeProblem({DType::F32, {1, 3, 224, 224}}), "");
  EXPECT_EQ(shapeProblem({DType::F32, {0, 12, 64}}), "");
  EXPECT_EQ(shapeProblem({DType::F32, Dims(10, 1)}), "");
  EXPECT_EQ(shapeProblem({DType::Bool, {kMaxElements}}), "") << "2^48 one-byte elements";
  EXPECT_EQ(shapeProblem({DType::F64, {kMaxElements / 8}}), "");
  EXPECT_EQ(shapeProblem({DType::F32, {0, kMaxElements}}), "");
}

TEST(Limits, TypesBeyondTheLimitsSayWhy) {
  EXPECT_EQ(shapeProblem({DType::F32, Dims(11, 1)}),
            "rank 11 exceeds 10, the most axes an ODLA value has (ODLA_MAX_DIMENSION)");
  EXPECT_EQ(shapeProblem({DType::F32, {2, -3}}), "dim 1 is negative (-3)");
  EXPECT_EQ(shapeProblem({DType::F32, {int64_t{1} << 32, int64_t{1} << 32}}),
            "its element count exceeds 2^48 (281474976710656), the most elements of any tensor");
  EXPECT_EQ(shapeProblem({DType::F32, {int64_t{1} << 62}}),
            "its element count exceeds 2^48 (281474976710656), the most elements of any tensor");
  EXPECT_EQ(shapeProblem({DType::Bool, {kMaxElements + 1}}),
            "its element count exceeds 2^48 (281474976710656), the most elements of any tensor");
  EXPECT_EQ(shapeProblem({DType::F32, {kMaxElements / 2}}),
            "its 562949953421312 bytes (512 TiB) exceed 2^48 bytes, the most of any tensor");
  EXPECT_EQ(shapeProblem({DType::F32, {0, int64_t{1} << 30, int64_t{1} << 30}}),
            "the product of its nonzero dims exceeds 2^48 (281474976710656), which bounds the "
            "strides kernels compute even for an empty tensor");
}

TEST(Limits, BytesText) {
  EXPECT_EQ(bytesText(0), "0 bytes");
  EXPECT_EQ(bytesText(1023), "1023 bytes");
  EXPECT_EQ(bytesText(1024), "1024 bytes (1 KiB)");
  EXPECT_EQ(bytesText(1536), "1536 bytes (about 1 KiB)");
  EXPECT_EQ(bytesText(uint64_t{4} << 40), "4398046511104 bytes (4 TiB)");
  EXPECT_EQ(bytesText(INT32_MAX), "2147483647 bytes (about 1 GiB)");
}

TEST(Limits, PerTargetDefaultsAndMessages) {
  SizeLimits l64 = SizeLimits::forPointerBits(64), l32 = SizeLimits::forPointerBits(32);
  EXPECT_EQ(l64.maxBytes, int64_t{1} << 40);
  EXPECT_EQ(l32.maxBytes, INT32_MAX);
  EXPECT_EQ(SizeLimits::hardMax(64), kMaxTensorBytes);
  EXPECT_EQ(SizeLimits::hardMax(32), INT32_MAX);
  EXPECT_EQ(sizeLimitProblem({DType::F32, {int64_t{1} << 38}}, l64), "") << "exactly 1 TiB";
  EXPECT_EQ(sizeLimitProblem({DType::F32, {int64_t{1} << 40}}, l64),
            "its 4398046511104 bytes (4 TiB) exceed the size limit of 1099511627776 bytes "
            "(1 TiB) for 64-bit targets; raise it with --size-limit (at most 281474976710656 "
            "bytes (256 TiB) there)");
  EXPECT_EQ(sizeLimitProblem({DType::U8, {int64_t{1} << 31}}, l32),
            "its 2147483648 bytes (2 GiB) exceed the size limit of 2147483647 bytes (about 1 "
            "GiB) for 32-bit targets, the most a tensor there can have (a C object's size, "
            "PTRDIFF_MAX)");
  SizeLimits flag{1 << 20, 64, true};
  EXPECT_EQ(sizeLimitProblem({DType::F32, {1 << 20}}, flag),
            "its 4194304 bytes (4 MiB) exceed the size limit of 1048576 bytes (1 MiB) set by "
            "--size-limit");
}

TEST(Limits, TheTextIrRefusesTypesBeyondThem) {
  auto g = parseGraph("graph @g(%x: f32[4294967296,4294967296]) {\n  return %x\n}\n");
  ASSERT_FALSE(g);
  EXPECT_NE(g.status().message().find("type f32[4294967296,4294967296]: its element count "
                                      "exceeds 2^48"),
            std::string::npos)
      << g.status().message();
  auto neg = parseGraph("graph @g(%x: f32[-1]) {\n  return %x\n}\n");
  ASSERT_FALSE(neg);
  EXPECT_NE(neg.status().message().find("dim 0 is negative (-1)"), std::string::npos);
}

} // namespace
} // namespace odlac::test
