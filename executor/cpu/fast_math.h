// Exponentials and the normal distribution in f32 written so that loops over
// them vectorize (no calls, no branches: selects only), for the CPU
// kernels' f32 fast paths. glibc's expf and erff are calls a loop cannot
// vectorize, several times slower than the memory traffic of an
// elementwise kernel. exp and silu are within 2e-7 of the f64 value,
// relative, gelu within 4e-6 (its far negative tail, where the value is
// tiny, within 2e-5); all keep IEEE's special values: NaN gives NaN,
// exp(-inf) = 0, exp(inf) = inf. The f64 paths and the serial reference use
// <cmath>. executor/cpu/vector_loops.cpp runs them over arrays.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace hostir::cpu {

// e^x: x = n·ln2 + r with |r| <= ln2/2, e^r by its Taylor polynomial of
// degree 7 (relative error below 1e-7), 2^n built in the exponent bits.
inline float fastExp(float x) {
  constexpr float kMax = 88.72283f;   // e^kMax is the largest finite f32
  constexpr float kMin = -87.33654f;  // below it e^x is subnormal: taken as 0
  float clamped = x < kMin ? kMin : x;
  clamped = clamped > kMax ? kMax : clamped;
  // Adding 1.5·2^23 rounds to an integer (to nearest even) in the low mantissa bits.
  constexpr float kRound = 12582912.0f;
  const float shifted = clamped * 1.44269504f + kRound;
  const float n = shifted - kRound;
  // r = x - n·ln2, with ln2 split in two so that n·ln2's high part is exact.
  const float r = clamped - n * 0.693145751953125f - n * 1.428606765330187e-06f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // n (in [-126, 128]) sits in the low bits of `shifted`, biased by
  // 0x4b400000; 2^n is built as 2^h · 2^(n - h), h = n / 2, so that both
  // factors are normal numbers ((k + 127) << 23 is 2^k).
  const int32_t n2 = std::bit_cast<int32_t>(shifted) - 0x4b400000;
  const int32_t h = n2 >> 1;
  float e = p * std::bit_cast<float>((h + 127) << 23) * std::bit_cast<float>((n2 - h + 127) << 23);
  e = x > kMax ? std::numeric_limits<float>::infinity() : e;
  e = x < kMin ? 0.0f : e;
  return x != x ? x : e;  // NaN
}

// erfc(z) for z >= 0 (and +inf), with relative error about 1e-7: the
// Chebyshev fit of Numerical Recipes' erfcc, t·exp(-z² + P(t)), t = 1/(1 + z/2).
inline float erfcNonNegative(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * fastExp(-z * z + p);
}

// gelu(x) = x·Φ(x), Φ(x) = erfc(-x/√2)/2, with erfc taken on |x|/√2 so that
// both tails keep their relative accuracy: Φ(x) = erfc(|x|/√2)/2 for x <= 0,
// 1 - erfc(|x|/√2)/2 above.
inline float fastGelu(float x) {
  const float z = (x < 0 ? -x : x) * 0.70710678118654752f;
  const float half = 0.5f * erfcNonNegative(z);
  const float phi = x < 0 ? half : 1.0f - half;
  return x * phi;
}

// silu(x) = x / (1 + e^-x).
inline float fastSilu(float x) { return x / (1.0f + fastExp(-x)); }

}  // namespace hostir::cpu
