// `run --check`'s comparison with the serial reference: within the dtype's
// tolerance, with an inf equal to the expected inf and a NaN where NaN is
// expected counted as matches, and any other non-finite value a failure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "api/npy.h"
#include "api/output_comparison.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

HostTensor f32(std::vector<float> values) {
  HostTensor t = makeHostTensor(DType::F32, Dims{static_cast<int64_t>(values.size())});
  std::memcpy(t.data.data(), values.data(), values.size() * sizeof(float));
  return t;
}

Comparison compare(std::vector<float> actual, std::vector<float> expected) {
  return compareOutputs({{"y", f32(std::move(actual))}}, {{"y", f32(std::move(expected))}});
}

TEST(OutputComparison, InfEqualToTheExpectedInfAndNanWhereNanIsExpectedMatch) {
  Comparison c = compare({1, kInf, -kInf, kNan, 2}, {1, kInf, -kInf, kNan, 2});
  EXPECT_TRUE(c.ok) << c.report;
  EXPECT_THAT(c.report, HasSubstr("matches"));
  EXPECT_THAT(c.report, Not(HasSubstr("nan")));
}

TEST(OutputComparison, AnyOtherNonFiniteValueOnEitherSideFails) {
  EXPECT_FALSE(compare({1, kInf}, {1, -kInf}).ok);
  EXPECT_FALSE(compare({1, kInf}, {1, 3}).ok);
  EXPECT_FALSE(compare({1, 3}, {1, kInf}).ok);
  EXPECT_FALSE(compare({1, kNan}, {1, 3}).ok);
  EXPECT_FALSE(compare({1, 3}, {1, kNan}).ok);
  EXPECT_FALSE(compare({1, kNan}, {1, kInf}).ok);
}

// The scale of the tolerance comes from the finite expected values only, so
// an inf or NaN elsewhere neither hides an error nor makes one of a match.
TEST(OutputComparison, NonFiniteElementsLeaveTheOthersToleranceAsItWas) {
  Comparison wrong = compare({1, 2.5f, kNan}, {1, 2, kNan});
  EXPECT_FALSE(wrong.ok);
  EXPECT_THAT(wrong.report, HasSubstr("worst element [1] is 2.5, expected 2"));
  EXPECT_THAT(wrong.report, Not(HasSubstr("rms nan")));
  EXPECT_TRUE(compare({1, 2, kInf}, {1, 2, kInf}).ok);
  EXPECT_FALSE(compare({1, 2.5f, kInf}, {1, 2, kInf}).ok);
}

}  // namespace
}  // namespace hostir
