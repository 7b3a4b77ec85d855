// f16 and bf16 storage types and their conversions to and from f32, for
// the CPU paths that store half types and compute in f32.
#pragma once

#include <cstdint>
#include <cstring>

namespace hostir {

struct Half {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; NaN stays NaN.
inline BFloat16 toBFloat16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((u >> 16) | 0x40)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>(u >> 16)};
}

inline float toFloat(BFloat16 h) { return bitsFloat(static_cast<uint32_t>(h.bits) << 16); }

// IEEE binary16, round to nearest even, with subnormals, infinities and NaN.
inline Half toHalf(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t absBits = u & 0x7fffffffu;
  if (absBits > 0x7f800000u) return Half{static_cast<uint16_t>(sign | 0x7e00u)};   // NaN
  if (absBits >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // overflow to inf
  if (absBits < 0x38800000u) {
    // Subnormal or zero: add 0.5 (as a float) so the hardware rounds the bits for us.
    float magnitude = bitsFloat(absBits) + 0.5f;
    return Half{static_cast<uint16_t>(sign | static_cast<uint16_t>(floatBits(magnitude) - floatBits(0.5f)))};
  }
  uint32_t mantissaOdd = (absBits >> 13) & 1u;
  absBits += 0xc8000fffu + mantissaOdd;  // rebias exponent (-112 << 23) and round
  return Half{static_cast<uint16_t>(sign | (absBits >> 13))};
}

inline float toFloat(Half h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1fu;
  uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));  // inf or NaN
  if (exponent == 0) {
    if (mantissa == 0) return bitsFloat(sign);
    float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -value : value;
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace hostir
