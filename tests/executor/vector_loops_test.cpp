// The CPU kernels' f32 building blocks against <cmath> and ir/half.h:
// vector_loops' elementwise loops against f64 <cmath> (special values and
// tails included), fast_math.h's scalar functions and IEEE's special
// values, and the conversions bit for bit, whichever instruction set the
// process chose for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "executor/cpu/cpu_kernels.h"
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
  // fastGelu as the instruction sets without AVX-512 run it.
  auto portableGelu = [](const float* x, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = fastGelu(x[i]);
  };
  auto exactGelu = [](double v) { return v * 0.5 * std::erfc(-v / std::sqrt(2.0)); };
  for (auto form : {+gelu, +portableGelu}) {
    EXPECT_LT(worstRelativeError(form, exactGelu, -6, 10, 0), 1e-5);
    EXPECT_LT(worstRelativeError(form, exactGelu, -13, 10, 1e-37), 2e-5);
  }
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
  // gelu(-inf) is -inf · 0, as in f64; NaN and -0 kept; in both forms.
  const float geluIn[4] = {inf, -inf, nan, -0.0f};
  float geluOut[4];
  vec::unary(vec::Unary::Gelu, geluIn, geluOut, 4, 0);
  const std::array scalarOut{fastGelu(inf), fastGelu(-inf), fastGelu(nan), fastGelu(-0.0f)};
  for (const float* got : {static_cast<const float*>(geluOut), scalarOut.data()}) {
    EXPECT_EQ(got[0], inf);
    EXPECT_TRUE(std::isnan(got[1]));
    EXPECT_TRUE(std::isnan(got[2]));
    EXPECT_TRUE(got[3] == 0.0f && std::signbit(got[3]));
  }
  float x[3] = {nan, -1.0f, 2.0f}, out[3];
  vec::unary(vec::Unary::Relu, x, out, 3, 0);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 2.0f);
}

// Inputs for the elementwise loops: the special values, a dense sweep of
// [-20, 20], and every 40009th f32 bit pattern (all magnitudes, both signs,
// subnormals and NaNs); 16·k + 11 of them, so that every loop has a tail.
std::vector<float> elementwiseInputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,    -0.0f,   inf,    -inf,    std::numeric_limits<float>::quiet_NaN(),
                          1e-45f,  -1e-45f, 1e-38f, -1e-38f, std::numeric_limits<float>::max(),
                          -3e38f,  1.0f,    -1.0f,  88.8f,   -88.0f,
                          -104.0f, 1e4f,    -1e4f};
  for (int i = -20000; i <= 20000; ++i) x.push_back(static_cast<float>(i) * 1e-3f);
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 40009)
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  while (x.size() % 16 != 11) x.push_back(0.5f);
  return x;
}

// Whether `got` is `want` (an f64 value) rounded to f32, or within
// `relative` of it, or within 1e-36 (results near the bottom of the f32
// range, such as silu's below -88.7, where e^-x overflows); NaN matches NaN.
bool close(float got, double want, double relative) {
  if (got == static_cast<float>(want)) return true;  // also infinities, and overflows to them
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(got)) return false;
  return std::fabs(static_cast<double>(got) - want) <= relative * std::fabs(want) + 1e-36;
}

// Each unary loop against its f64 formula over every input, and again over
// short runs (the tails alone), which must not write past their end.
TEST(VectorLoops, ElementwiseUnaryMatchesCmathInF64) {
  struct Case {
    const char* name;
    vec::Unary op;
    double (*exact)(double);
    double relative;  // as fast_math.h and SLEEF state them (1 ULP is up to 1.2e-7)
  };
  const Case cases[] = {
      {"relu", vec::Unary::Relu, [](double v) { return v < 0 ? 0.0 : v; }, 0},
      {"silu", vec::Unary::Silu, [](double v) { return v / (1 + std::exp(-v)); }, 3e-7},
      {"gelu", vec::Unary::Gelu, [](double v) { return v * 0.5 * std::erfc(-v * M_SQRT1_2); }, 2e-5},
      {"scale", vec::Unary::Scale, [](double v) { return 0.375 * v; }, 0},
      {"exp", vec::Unary::Exp, [](double v) { return std::exp(v); }, 2e-7},
      {"log", vec::Unary::Log, [](double v) { return std::log(v); }, 2e-7},
      {"sqrt", vec::Unary::Sqrt, [](double v) { return std::sqrt(v); }, 1e-7},
      {"rsqrt", vec::Unary::Rsqrt, [](double v) { return 1 / std::sqrt(v); }, 2e-7},
      {"sigmoid", vec::Unary::Sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }, 3e-7},
      {"tanh", vec::Unary::Tanh, [](double v) { return std::tanh(v); }, 5e-7},
      {"sin", vec::Unary::Sin, [](double v) { return std::sin(v); }, 2e-7},
      {"cos", vec::Unary::Cos, [](double v) { return std::cos(v); }, 2e-7},
      {"abs", vec::Unary::Abs, [](double v) { return std::fabs(v); }, 0},
      {"neg", vec::Unary::Neg, [](double v) { return -v; }, 0},
  };
  const std::vector<float> x = elementwiseInputs();
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> out(x.size());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    vec::unary(c.op, x.data(), out.data(), n, 0.375f);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(close(out[i], c.exact(static_cast<double>(x[i])), c.relative))
          << c.name << "(" << x[i] << ") = " << out[i] << ", f64 " << c.exact(static_cast<double>(x[i]));
    for (int64_t length = 1; length <= 40; ++length) {
      const int64_t offset = 3 * length;  // special values and small ones
      std::vector<float> part(static_cast<size_t>(length) + 1, -7.0f);
      vec::unary(c.op, x.data() + offset, part.data(), length, 0.375f);
      EXPECT_EQ(part.back(), -7.0f) << "wrote past the end at length " << length;
      // Within the tolerance, not bit for bit: SLEEF picks a vector's
      // argument reduction by all of its lanes.
      for (int64_t i = 0; i < length; ++i) {
        const double v = static_cast<double>(x[static_cast<size_t>(offset + i)]);
        ASSERT_TRUE(close(part[static_cast<size_t>(i)], c.exact(v), c.relative))
            << c.name << "(" << v << ") at length " << length << " = " << part[static_cast<size_t>(i)];
      }
    }
  }
  // The special values <cmath> and NumPy give.
  const float inf = std::numeric_limits<float>::infinity();
  auto one = [](vec::Unary op, float v) {
    float r;
    vec::unary(op, &v, &r, 1, 1.0f);
    return r;
  };
  EXPECT_EQ(one(vec::Unary::Exp, -inf), 0.0f);
  EXPECT_EQ(one(vec::Unary::Exp, inf), inf);
  EXPECT_EQ(one(vec::Unary::Log, 0.0f), -inf);
  EXPECT_EQ(one(vec::Unary::Log, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(vec::Unary::Log, -1.0f)));
  EXPECT_TRUE(std::signbit(one(vec::Unary::Sqrt, -0.0f)));
  EXPECT_EQ(one(vec::Unary::Rsqrt, 0.0f), inf);
  EXPECT_EQ(one(vec::Unary::Tanh, inf), 1.0f);
  EXPECT_EQ(one(vec::Unary::Tanh, -inf), -1.0f);
  EXPECT_EQ(one(vec::Unary::Sigmoid, -inf), 0.0f);
  EXPECT_EQ(one(vec::Unary::Sigmoid, inf), 1.0f);
  EXPECT_TRUE(std::isnan(one(vec::Unary::Sin, inf)));
  EXPECT_TRUE(std::signbit(one(vec::Unary::Sin, -0.0f)));
  EXPECT_TRUE(std::signbit(one(vec::Unary::Tanh, -0.0f)));
  EXPECT_TRUE(std::signbit(one(vec::Unary::Neg, 0.0f)));
  EXPECT_FALSE(std::signbit(one(vec::Unary::Abs, -0.0f)));
}

// Each binary loop exactly as its f64 formula rounded to f32 (f64 holds
// every f32 sum, difference, product and quotient to within a rounding
// that rounds once more to the same f32), with b whole and broadcast.
TEST(VectorLoops, ElementwiseBinaryMatchesCmathInF64) {
  struct Case {
    const char* name;
    vec::Binary op;
    double (*exact)(double, double);
  };
  const Case cases[] = {
      {"add", vec::Binary::Add, [](double a, double b) { return a + b; }},
      {"sub", vec::Binary::Sub, [](double a, double b) { return a - b; }},
      {"mul", vec::Binary::Mul, [](double a, double b) { return a * b; }},
      {"div", vec::Binary::Div, [](double a, double b) { return a / b; }},
      {"max", vec::Binary::Max, [](double a, double b) { return a != a || b != b ? a + b : (a > b ? a : b); }},
      {"min", vec::Binary::Min, [](double a, double b) { return a != a || b != b ? a + b : (a < b ? a : b); }},
      {"gt", vec::Binary::Gt, [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"ge", vec::Binary::Ge, [](double a, double b) { return a >= b ? 1.0 : 0.0; }},
      {"lt", vec::Binary::Lt, [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"le", vec::Binary::Le, [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"eq", vec::Binary::Eq, [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"ne", vec::Binary::Ne, [](double a, double b) { return a != b ? 1.0 : 0.0; }},
  };
  const std::vector<float> a = elementwiseInputs();
  std::vector<float> b(a.rbegin(), a.rend());   // pairs every special value with the others
  for (size_t i = 0; i < 40; ++i) b[i] = a[i];  // and with itself (NaN with NaN, inf with inf)
  const auto n = static_cast<int64_t>(a.size());
  std::vector<float> out(a.size());
  auto same = [](float got, double want) {
    const auto w = static_cast<float>(want);
    return std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(w) || (got != got && w != w);
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    vec::binary(c.op, a.data(), b.data(), 1, out.data(), n);
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(same(out[i], c.exact(a[i], b[i]))) << c.name << "(" << a[i] << ", " << b[i] << ") = " << out[i];
    for (float b0 : {2.5f, -0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      vec::binary(c.op, a.data(), &b0, 0, out.data(), n);
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_TRUE(same(out[i], c.exact(a[i], b0))) << c.name << "(" << a[i] << ", " << b0 << ") = " << out[i];
    }
  }
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

// where's f32 loop: a NaN condition selects a (NumPy's truth of NaN), -0 is
// zero and selects b, and the chosen elements keep their bits (NaN payloads).
TEST(VectorLoops, SelectTakesAWhereTheConditionIsNotZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float payload = std::bit_cast<float>(0x7fc01234u);
  std::vector<float> c, a, b;
  for (int i = 0; i < 37; ++i) {  // more than two vectors and a partial one
    const float conditions[] = {1.0f, 0.0f, -0.0f, nan, -2.5f, 1e-45f};
    c.push_back(conditions[i % 6]);
    a.push_back(i % 5 == 0 ? payload : static_cast<float>(i));
    b.push_back(-static_cast<float>(i) - 0.5f);
  }
  std::vector<float> out(c.size() + 1, 7.0f);
  vec::select(c.data(), a.data(), b.data(), out.data(), static_cast<int64_t>(c.size()));
  for (size_t i = 0; i < c.size(); ++i) {
    const float want = c[i] != 0.0f ? a[i] : b[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(want)) << "element " << i;
  }
  EXPECT_EQ(out.back(), 7.0f) << "wrote past the end";
}

// Sums and maxima of every length around the vector widths (tails
// included), NaN anywhere making the maximum NaN.
TEST(VectorLoops, SumAndMaxOrNaNOverEveryTail) {
  std::vector<float> x;
  for (int i = 0; i < 200; ++i) x.push_back(static_cast<float>((i * 37 % 101) - 50) / 7.0f);
  for (int64_t n = 0; n <= 200; ++n) {
    double want = 0, largest = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      want += x[static_cast<size_t>(i)];
      largest = std::max(largest, static_cast<double>(x[static_cast<size_t>(i)]));
    }
    ASSERT_NEAR(vec::sum(x.data(), n), want, 1e-9) << n;
    ASSERT_EQ(vec::maxOrNaN(x.data(), n), largest) << n;
    for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
      if (n == 0) break;
      std::vector<float> y(x.begin(), x.begin() + n);
      y[static_cast<size_t>(at)] = std::numeric_limits<float>::quiet_NaN();
      ASSERT_TRUE(std::isnan(vec::maxOrNaN(y.data(), n))) << n << " " << at;
      ASSERT_TRUE(std::isnan(vec::sum(y.data(), n))) << n << " " << at;
    }
  }
}

// The running sum of every length around the vector widths, into another
// array and in place, against an f64 loop.
TEST(VectorLoops, CumsumOverEveryTailAndInPlace) {
  std::vector<float> x;
  for (int i = 0; i < 100; ++i) x.push_back(static_cast<float>((i * 37 % 101) - 50) / 7.0f);
  for (int64_t n = 0; n <= 100; ++n) {
    std::vector<float> out(static_cast<size_t>(n)), inPlace(x.begin(), x.begin() + n);
    vec::cumsum(x.data(), out.data(), n);
    vec::cumsum(inPlace.data(), inPlace.data(), n);
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      total += x[static_cast<size_t>(i)];
      ASSERT_EQ(out[static_cast<size_t>(i)], static_cast<float>(total)) << n << " " << i;
      ASSERT_EQ(inPlace[static_cast<size_t>(i)], static_cast<float>(total)) << n << " " << i;
    }
  }
}

// top_k's order keys: NaN above inf, -0 equal to +0, numbers in order;
// nextAbove finds the first key past a threshold, in every tail.
TEST(VectorLoops, OrderKeysAndNextAbove) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> ascending{-inf, -3.0f, -1e-40f, 0.0f, 1e-40f, 2.0f, inf};
  for (size_t i = 1; i < ascending.size(); ++i)
    EXPECT_LT(vec::orderKey(ascending[i - 1]), vec::orderKey(ascending[i])) << ascending[i];
  EXPECT_EQ(vec::orderKey(-0.0f), vec::orderKey(0.0f));
  EXPECT_GT(vec::orderKey(nan), vec::orderKey(inf));
  EXPECT_EQ(vec::orderKey(-nan), vec::orderKey(nan));
  for (int64_t n = 1; n <= 150; ++n)
    for (int64_t at : {int64_t{0}, n / 3, n - 1}) {
      std::vector<float> x(static_cast<size_t>(n), 1.0f);
      x[static_cast<size_t>(at)] = 2.0f;
      EXPECT_EQ(vec::nextAbove(x.data(), 0, n, vec::orderKey(1.0f)), at);
      EXPECT_EQ(vec::nextAbove(x.data(), at + 1, n, vec::orderKey(1.0f)), n);
    }
}

// layer_norm's one-pass sums about the row's first value give the variance
// of an f64 two-pass loop, for rows near zero and rows far from it (a mean
// of 1e4 around a spread of 1e-2, where sums about zero cancel to nothing),
// over every tail.
TEST(VectorLoops, ShiftedSumsGiveTheVarianceFarFromZero) {
  for (const float centre : {0.0f, 1e4f})
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        x[static_cast<size_t>(i)] = centre + static_cast<float>((i * 37) % 11 - 5) * 2e-3f;
      double mean = 0, variance = 0;
      for (float v : x) mean += v;
      mean /= static_cast<double>(n);
      for (float v : x) variance += (v - mean) * (v - mean);
      variance /= static_cast<double>(n);
      const double shift = x[0];
      const vec::ShiftedSums sums = vec::shiftedSums(x.data(), n, shift);
      const double shiftedMean = sums.sum / static_cast<double>(n);
      EXPECT_NEAR(shift + shiftedMean, mean, 1e-9 * std::max(1.0, std::fabs(mean))) << centre << " " << n;
      EXPECT_NEAR(sums.squares / static_cast<double>(n) - shiftedMean * shiftedMean, variance, 1e-9 * variance + 1e-15)
          << centre << " " << n;
    }
}

// topPositions against a stable sort by orderKey, for every k up to 64 on
// rows of every length around the vector widths: rows with many ties, NaNs,
// signed zeros and infinities, rows in ascending order (a new best at every
// element), and rows where every element is NaN.
TEST(VectorLoops, TopPositionsMatchAStableSort) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const auto expected = [](const std::vector<float>& x, int64_t k) {
    std::vector<int64_t> order(x.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::stable_sort(order.begin(), order.end(), [&x](int64_t a, int64_t b) {
      return vec::orderKey(x[static_cast<size_t>(a)]) > vec::orderKey(x[static_cast<size_t>(b)]);
    });
    order.resize(static_cast<size_t>(k));
    return order;
  };
  for (int64_t n : {1, 2, 15, 16, 17, 63, 64, 65, 100, 129, 300, 1000}) {
    std::vector<std::vector<float>> rows(4, std::vector<float>(static_cast<size_t>(n)));
    for (int64_t i = 0; i < n; ++i) {
      const auto at = static_cast<size_t>(i);
      rows[0][at] = static_cast<float>(i * 7919 % 23) - 11.0f;  // many ties
      rows[1][at] = static_cast<float>(i);                      // ascending
      rows[2][at] = nan;
      rows[3][at] = static_cast<float>((i * 104729) % 1009) * 0.01f - 5.0f;
    }
    rows[3][static_cast<size_t>(n / 2)] = -0.0f, rows[3][0] = 0.0f, rows[3][static_cast<size_t>(n - 1)] = -inf;
    if (n > 3) rows[3][static_cast<size_t>(n / 3)] = nan, rows[3][static_cast<size_t>(n - 2)] = inf;
    for (const auto& x : rows)
      for (int64_t k = 1; k <= std::min<int64_t>(n, vec::kMaxSmallTopK); ++k) {
        std::vector<int64_t> positions(static_cast<size_t>(k));
        std::vector<int32_t> candidates(static_cast<size_t>(n) + 16);
        vec::topPositions(x.data(), n, k, positions.data(), candidates.data(), k % 2 == 0 ? x.data() : nullptr);
        ASSERT_EQ(positions, expected(x, k)) << "n " << n << " k " << k;
      }
  }
}

// top_k's one-pass path (f32, small k) against a stable sort: NaN first,
// ties to the lower position, rows not a multiple of the vector width.
TEST(VectorLoops, TopKKeepsNaNsFirstAndTiesInOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t rows = 3, n = 203, k = 9;
  std::vector<float> x(static_cast<size_t>(rows * n)), top(static_cast<size_t>(rows * k));
  std::vector<int32_t> positions(static_cast<size_t>(rows * k));
  for (int64_t i = 0; i < rows * n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i * 7919 % 13) - 6.0f;
  x[150] = nan, x[5] = -0.0f, x[300] = nan, x[301] = std::numeric_limits<float>::infinity();
  auto view = [](void* data, DType dtype, Dims shape, size_t bytes) {
    TensorView v = TensorView::contiguous(nullptr, dtype, shape);
    v.buffer = std::make_shared<BorrowedBuffer>(static_cast<std::byte*>(data), bytes);
    return v;
  };
  TensorView xv = view(x.data(), DType::F32, Dims{rows, n}, x.size() * 4);
  TensorView tv = view(top.data(), DType::F32, Dims{rows, k}, top.size() * 4);
  TensorView iv = view(positions.data(), DType::I32, Dims{rows, k}, positions.size() * 4);
  using O = operands::TopK;
  KernelCall call{OpKind::TopK};
  call.operands[O::x] = &xv, call.operands[O::out] = &tv, call.operands[O::indices] = &iv;
  call.integers[O::k] = k;
  runKernel(GemmKind::Blas, call);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    const float* row = x.data() + r * n;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const float u = row[a], v = row[b];
      if (std::isnan(u) != std::isnan(v)) return std::isnan(u);
      return !std::isnan(u) && u > v;
    });
    for (int64_t j = 0; j < k; ++j) {
      const int64_t want = order[static_cast<size_t>(j)];
      ASSERT_EQ(positions[static_cast<size_t>(r * k + j)], want) << r << " " << j;
      ASSERT_EQ(std::bit_cast<uint32_t>(top[static_cast<size_t>(r * k + j)]), std::bit_cast<uint32_t>(row[want]));
    }
  }
}

}  // namespace
}  // namespace hostir::cpu
