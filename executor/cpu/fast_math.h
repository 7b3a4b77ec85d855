// Exponentials, tanh and the normal distribution in f32 written so that
// loops over them vectorize (no calls, no branches: selects only), for the
// CPU kernels' f32 fast paths: inlined, they cost fewer instructions than a
// call into a vector math library, which matters where a kernel's speed is
// its arithmetic's. exp, sigmoid and silu are within 2e-7 of the f64
// value, relative, tanh within 5e-7, gelu within 4e-6 (its far negative
// tail, where the value is tiny, within 2e-5); all keep IEEE's special
// values: NaN gives NaN, exp(-inf) = 0, exp(inf) = inf, tanh(±inf) = ±1.
// The f64 paths and the serial reference use <cmath>.
// executor/cpu/vector_loops.cpp runs them over arrays.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace hostir::cpu {

constexpr float kMaxExp = 88.72283f;   // e^kMaxExp is the largest finite f32
constexpr float kMinExp = -87.33654f;  // below it e^x is subnormal

// e^x for x in [kMinExp, kMaxExp] (elsewhere, or for NaN, garbage, for a
// caller that selects another value there): x = n·ln2 + r with
// |r| <= ln2/2, e^r by its Taylor polynomial of degree 7 (relative error
// below 1e-7), 2^n added to the exponent bits of e^r. n is in [-126, 128]
// and the sum a normal number: e^r < 1 where n = 128, e^r >= 1 where
// n = -126. The functions below add only the selects they need (each
// selects inf above kMaxExp).
inline float expInRange(float clamped) {
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
  // n sits in the low bits of `shifted`, biased by 0x4b400000. Unsigned:
  // the bits of a NaN's garbage wrap around rather than overflow.
  const uint32_t n2 = std::bit_cast<uint32_t>(shifted) - 0x4b400000u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(p) + (n2 << 23));
}

// The same on x clamped to kMinExp from below.
inline float expClamped(float x) { return expInRange(x < kMinExp ? kMinExp : x); }

// e^x; below kMinExp (subnormal results) 0.
inline float fastExp(float x) {
  float e = x > kMaxExp ? std::numeric_limits<float>::infinity() : expClamped(x);
  e = x < kMinExp ? 0.0f : e;
  return x != x ? x : e;  // NaN
}

// e^x for x <= 0 or NaN (softmax's x - max): fastExp without the select
// that only a positive x can need.
inline float fastExpNonPositive(float x) {
  const float e = x < kMinExp ? 0.0f : expInRange(x);
  return x != x ? x : e;
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

// silu(x) = x / (1 + e^-x). Where e^-x is below kMinExp the clamped value
// divides x the same; a NaN x gives NaN whatever e^-x is.
inline float fastSilu(float x) {
  const float e = -x > kMaxExp ? std::numeric_limits<float>::infinity() : expClamped(-x);
  return x / (1.0f + e);
}

// sigmoid(x) = 1 / (1 + e^-x), as silu.
inline float fastSigmoid(float x) {
  const float e = -x > kMaxExp ? std::numeric_limits<float>::infinity() : expClamped(-x);
  return x != x ? x : 1.0f / (1.0f + e);
}

// tanh(x) as the rational function of Eigen's fast tanh (odd numerator of
// degree 13, even denominator of degree 6) on x clamped to ±7.9053 (where
// tanh is within 3e-7 of ±1), within 5e-7 of tanh, absolute and relative
// (3e-7 with fused multiply-adds); below 0.0004 tanh(x) is x (x³/3 is
// under half an ULP), which keeps -0 and subnormals.
inline float fastTanh(float x) {
  constexpr float kClamp = 7.90531110763549805f;
  float c = x < -kClamp ? -kClamp : x;
  c = c > kClamp ? kClamp : c;
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float t = c * p / q;
  return x < 0.0004f && x > -0.0004f ? x : t;  // NaN stays NaN through the clamps
}

}  // namespace hostir::cpu
