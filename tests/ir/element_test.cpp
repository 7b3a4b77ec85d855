// Storing an f64 into f16 or bf16 rounds once, to nearest even, as cast
// promises: never through an f32 rounding first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

#include "ir/element.h"

namespace hostir {
namespace {

double roundTrip(DType dtype, double value) {
  std::byte bits[8]{};
  storeElement<double>(dtype, bits, value);
  return loadElement<double>(dtype, bits);
}

TEST(Element, F64ToHalfRoundsOnce) {
  // Just above the midpoint of 1 and the next f16 (1 + 2^-10): up. An f32
  // first would round to the midpoint itself, which then ties to even, 1.
  EXPECT_EQ(roundTrip(DType::F16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(roundTrip(DType::BF16, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 1.0 + std::ldexp(1.0, -7));
  // Just below it: down; the midpoint itself ties to even.
  EXPECT_EQ(roundTrip(DType::F16, 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40)), 1.0);
  EXPECT_EQ(roundTrip(DType::F16, 1.0 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(roundTrip(DType::F16, -(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))), -(1.0 + std::ldexp(1.0, -10)));
}

TEST(Element, F64ToHalfKeepsSpecialValues) {
  EXPECT_TRUE(std::isinf(roundTrip(DType::F16, 1e300)));
  EXPECT_TRUE(std::isnan(roundTrip(DType::BF16, NAN)));
  EXPECT_EQ(roundTrip(DType::F16, 0.5), 0.5);
  EXPECT_EQ(roundTrip(DType::I32, 7.0), 7.0);
}

}  // namespace
}  // namespace hostir
