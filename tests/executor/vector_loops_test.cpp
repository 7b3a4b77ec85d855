// The CPU kernels' f32 building blocks against <cmath> and ir/half.h:
// fast_math.h's exp, silu and gelu within their stated accuracy, IEEE's
// special values, and vector_loops' conversions bit for bit, whichever
// instruction set the process chose for them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "executor/cpu/fast_math.h"
#include "executor/cpu/vector_loops.h"
#include "ir/half.h"

namespace hostir::cpu {
namespace {

// The largest relative error of f against exact over [lo, hi), where |exact| > floor.
template <typename F, typename Exact>
double worstRelativeError(F f, Exact exact, double lo, double hi, double floor) {
  std::vector<float> x;
  for (double v = lo; v < hi; v += (hi - lo) / 200000) x.push_back(static_cast<float>(v));
  std::vector<float> got(x.size());
  f(x.data(), got.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = exact(static_cast<double>(x[i]));
    if (std::fabs(want) > floor) worst = std::max(worst, std::fabs(got[i] - want) / std::fabs(want));
  }
  return worst;
}

TEST(FastMath, ExpSiluAndGeluWithinTheirStatedAccuracy) {
  auto silu = [](const float* x, float* out, int64_t n) { vec::unary(vec::Unary::Silu, x, out, n, 0); };
  auto gelu = [](const float* x, float* out, int64_t n) { vec::unary(vec::Unary::Gelu, x, out, n, 0); };
  auto exp = [](const float* x, float* out, int64_t n) { vec::expShifted(x, out, n, 0.0f); };
  EXPECT_LT(worstRelativeError(
                exp, [](double v) { return std::exp(v); }, -87, 88.7, 0),
            2e-7);
  EXPECT_LT(worstRelativeError(
                silu, [](double v) { return v / (1 + std::exp(-v)); }, -80, 80, 1e-30),
            2e-7);
  auto exactGelu = [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); };
  // 4.3e-6 at -O1 (the sanitizer builds), where fewer products fuse into FMAs than at -O2.
  EXPECT_LT(worstRelativeError(gelu, exactGelu, -6, 10, 0), 1e-5);
  EXPECT_LT(worstRelativeError(gelu, exactGelu, -13, 10, 1e-37), 2e-5);
}

TEST(FastMath, SpecialValuesAsIeeeSays) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fastExp(inf), inf);
  EXPECT_EQ(fastExp(-inf), 0.0f);
  EXPECT_EQ(fastExp(-100.0f), 0.0f);
  EXPECT_EQ(fastExp(89.0f), inf);
  EXPECT_TRUE(std::isnan(fastExp(nan)));
  EXPECT_EQ(fastSilu(inf), inf);
  EXPECT_TRUE(std::isnan(fastSilu(-inf)));  // -inf / (1 + inf), as x / (1 + e^-x) in f64
  EXPECT_EQ(fastGelu(inf), inf);
  EXPECT_TRUE(std::isnan(fastGelu(-inf)));  // -inf · 0
  EXPECT_TRUE(std::isnan(fastGelu(nan)));
  float x[3] = {nan, -1.0f, 2.0f}, out[3];
  vec::unary(vec::Unary::Relu, x, out, 3, 0);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 2.0f);
}

TEST(VectorLoops, ConversionsMatchTheScalarOnesBitForBit) {
  std::vector<float> x;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 40009)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float special : {65519.99f, 65520.0f, 5.96e-8f, 2.98e-8f, 0.0f, -0.0f, std::numeric_limits<float>::infinity()})
    x.push_back(special);
  std::vector<uint16_t> half(x.size()), bf16(x.size());
  vec::toHalf(x.data(), half.data(), static_cast<int64_t>(x.size()));
  vec::toBFloat16(x.data(), bf16.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(half[i], toHalf(x[i]).bits) << std::hex << std::bit_cast<uint32_t>(x[i]);
    ASSERT_EQ(bf16[i], toBFloat16(x[i]).bits) << std::hex << std::bit_cast<uint32_t>(x[i]);
  }
  std::vector<uint16_t> every(65536);
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<uint16_t>(i);
  std::vector<float> fromHalf(every.size()), fromBF16(every.size());
  vec::fromHalf(every.data(), fromHalf.data(), 65536);
  vec::fromBFloat16(every.data(), fromBF16.data(), 65536);
  for (size_t i = 0; i < every.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(fromHalf[i]), std::bit_cast<uint32_t>(toFloat(Half{every[i]}))) << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(fromBF16[i]), std::bit_cast<uint32_t>(toFloat(BFloat16{every[i]}))) << i;
  }
}

}  // namespace
}  // namespace hostir::cpu
