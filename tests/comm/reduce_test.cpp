// The element kernels on their own: every dtype and op against a reference
// computed in double and rounded once (f32 arithmetic has enough bits that
// its extra rounding of half types never changes the result).
#include "comm/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "collective_checks.h"
#include "ir/half.h"

namespace {

using namespace hostir;
using commtest::loadElement;
using commtest::roundThrough;
using commtest::storeElement;

// Values stored in a dtype, in a vector of doubles so any dtype is aligned.
std::vector<double> storedValues(DType dtype, const std::vector<double>& values) {
  std::vector<double> words(values.size());
  for (size_t i = 0; i < values.size(); ++i) storeElement(dtype, words.data(), i, values[i]);
  return words;
}

double combineInDouble(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return a + b;
    case ReduceOp::Prod: return a * b;
    case ReduceOp::Min: return std::min(a, b);
    case ReduceOp::Max: return std::max(a, b);
  }
  return 0;
}

class ReduceIntoTest : public ::testing::TestWithParam<std::tuple<DType, ReduceOp>> {};

TEST_P(ReduceIntoTest, MatchesDoubleReferenceRoundedOnce) {
  auto [dtype, op] = GetParam();
  std::mt19937 random(1234);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-12, 12);
  const size_t count = 1001;
  std::vector<double> a(count), b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = roundThrough(dtype, std::ldexp(mantissa(random), exponent(random)));
    b[i] = roundThrough(dtype, std::ldexp(mantissa(random), exponent(random)));
  }
  std::vector<double> acc = storedValues(dtype, a);
  const std::vector<double> in = storedValues(dtype, b);
  reduceInto(acc.data(), in.data(), count, dtype, op);
  for (size_t i = 0; i < count; ++i) {
    const double expected = roundThrough(dtype, combineInDouble(op, a[i], b[i]));
    ASSERT_EQ(loadElement(dtype, acc.data(), i), expected) << "element " << i << ": " << a[i] << ", " << b[i];
    ASSERT_EQ(loadElement(dtype, in.data(), i), b[i]) << "the input changed at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceIntoTest,
                         ::testing::Combine(::testing::ValuesIn(commtest::kDTypes),
                                            ::testing::ValuesIn(commtest::kReduceOps)),
                         [](const auto& info) {
                           return std::string(dtypeName(std::get<0>(info.param))) + "_" +
                                  std::string(reduceOpName(std::get<1>(info.param)));
                         });

TEST(ReduceIntoTest, HalfTypesRoundAfterEveryStep) {
  // 1 + 2^-11 is a tie between two f16 values; it rounds to the even one, 1.
  Half acc[] = {toHalf(1.0f), toHalf(1.0f)};
  const Half in[] = {toHalf(0x1p-11f), toHalf(0x1.8p-10f)};
  reduceInto(acc, in, 2, DType::F16, ReduceOp::Sum);
  EXPECT_EQ(toFloat(acc[0]), 1.0f);
  EXPECT_EQ(toFloat(acc[1]), 1.0f + 0x1p-9f);

  BFloat16 bacc[] = {toBFloat16(1.0f)};
  const BFloat16 bin[] = {toBFloat16(0x1p-8f)};
  reduceInto(bacc, bin, 1, DType::BF16, ReduceOp::Sum);
  EXPECT_EQ(toFloat(bacc[0]), 1.0f);
}

TEST(ReduceIntoTest, MinAndMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    float acc[] = {nan, 1.0f, 2.0f};
    const float in[] = {1.0f, nan, 3.0f};
    reduceInto(acc, in, 3, DType::F32, op);
    EXPECT_TRUE(std::isnan(acc[0]));
    EXPECT_TRUE(std::isnan(acc[1]));
    EXPECT_EQ(acc[2], op == ReduceOp::Min ? 2.0f : 3.0f);

    Half hacc[] = {toHalf(nan), toHalf(1.0f)};
    const Half hin[] = {toHalf(1.0f), toHalf(nan)};
    reduceInto(hacc, hin, 2, DType::F16, op);
    EXPECT_TRUE(std::isnan(toFloat(hacc[0])));
    EXPECT_TRUE(std::isnan(toFloat(hacc[1])));
  }
}

TEST(ReduceIntoTest, CountZeroTouchesNothing) {
  for (DType dtype : commtest::kDTypes)
    for (ReduceOp op : commtest::kReduceOps) reduceInto(nullptr, nullptr, 0, dtype, op);
  scaleInPlace(nullptr, 0, DType::F16, 0.5);
}

TEST(ScaleInPlaceTest, EveryDType) {
  for (DType dtype : commtest::kDTypes) {
    const std::vector<double> values = {6.0, -3.0, 0.0, 1000.0, 7.0};
    std::vector<double> buffer = storedValues(dtype, values);
    scaleInPlace(buffer.data(), values.size(), dtype, 1.0 / 3.0);
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(loadElement(dtype, buffer.data(), i), roundThrough(dtype, values[i] * (1.0 / 3.0)))
          << dtypeName(dtype) << " element " << i;
  }
}

}  // namespace
