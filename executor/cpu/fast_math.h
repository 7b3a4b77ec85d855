// Exponentials, tanh and the normal distribution in f32 written so that
// loops over them vectorize (no calls, no branches: selects only), for the
// CPU kernels' f32 fast paths: inlined, they cost fewer instructions than a
// call into a vector math library, which matters where a kernel's speed is
// its arithmetic's. exp, sigmoid and silu are within 2e-7 of the f64
// value, relative, tanh within 5e-7, gelu within 4e-6 (its far negative
// tail, where the value is tiny, within 1e-5); all keep IEEE's special
// values: NaN gives NaN, exp(-inf) = 0, exp(inf) = inf, tanh(±inf) = ±1.
// The f64 paths and the serial reference use <cmath>.
// executor/cpu/vector_loops.cpp runs them over arrays.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

namespace hostir::cpu {

constexpr float kMaxExp = 88.72283f;   // e^kMaxExp is the largest finite f32
constexpr float kMinExp = -87.33654f;  // below it e^x is subnormal
constexpr float kLog2E = 1.44269504f;
// ln 2 split in two, so that n·kLn2High is exact for the integers n of e^x's reduction.
constexpr float kLn2High = 0.693145751953125f;
constexpr float kLn2Low = 1.428606765330187e-06f;
// e^r's Taylor polynomial of degree 7, highest first (relative error below
// 1e-7 for |r| <= ln2/2).
inline constexpr float kExpTaylor[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};

// c[0]·t^(N-1) + ... + c[N-1], by Horner's rule, unrolled at compile time:
// a loop (or a call) here would keep the loops that use it from vectorizing.
template <size_t N, size_t... I>
[[gnu::always_inline]] inline float hornerSteps(const float (&c)[N], float t, std::index_sequence<I...>) {
  float p = c[0];
  ((p = p * t + c[I + 1]), ...);
  return p;
}
template <size_t N>
[[gnu::always_inline]] inline float horner(const float (&c)[N], float t) {
  return hornerSteps(c, t, std::make_index_sequence<N - 1>{});
}

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
  const float shifted = clamped * kLog2E + kRound;
  const float n = shifted - kRound;
  // r = x - n·ln2, with ln2 split in two so that n·ln2's high part is exact.
  const float r = clamped - n * kLn2High - n * kLn2Low;
  const float p = horner(kExpTaylor, r);
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

// gelu(x) = x·Φ(x), Φ(x) = erfc(z)/2 for x < 0 and 1 - erfc(z)/2 above, z = |x|/√2,
// which keeps both tails' relative accuracy. erfc(z)/2 = t·2^(P(t) - z²·log2 e),
// t = 1/(1 + 0.3z), with P the degree-7 polynomial that fits it best (relative
// error 4.4e-7 up to z = 9.5; beyond, the value underflows): one division, 7 + 5
// multiply-adds and an exponent. gelu(inf) = inf, gelu(-inf) = -inf·0 = NaN
// (as the f64 form and PyTorch's). vector_loops.cpp's AVX-512 form uses the
// same constants.
namespace gelu_fit {
inline constexpr float kTScale = 0.3f * 0.70710678118654752f;  // t = 1/(1 + kTScale·|x|)
inline constexpr float kP[] = {0.70071644f, -2.86498601f, 4.19936416f, -3.06636189f,
                               1.84470118f, 0.249992104f, 1.50305526f, -3.56648188f};  // highest first
inline constexpr float kMinusHalfLog2E = -0.72134752044448170f;                        // -z²·log2 e = this·x²
// 2^f for |f| <= 1/2, relative error 7.5e-8, highest first.
inline constexpr float kExp2[] = {0.001327645506782562f, 0.009675566197675123f, 0.05550713516516254f,
                                  0.24022119265723713f,  0.693146966796228f,    1.0000000717467998f};
}  // namespace gelu_fit

inline float fastGelu(float x) {
  using namespace gelu_fit;
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + kTScale * a);
  // log2 of erfc(z)/(2t), at most -1; below -126 the product with |x| is negligible.
  const float l = horner(kP, t) + (kMinusHalfLog2E * a) * a;
  const float clamped = l < -126.0f ? -126.0f : l;
  // 2^clamped = 2^f·2^k, k the nearest integer (expInRange's rounding).
  constexpr float kRound = 12582912.0f;
  const float shifted = clamped + kRound;
  const float f = clamped - (shifted - kRound);
  const uint32_t k = std::bit_cast<uint32_t>(shifted) - 0x4b400000u;
  const float e = std::bit_cast<float>(std::bit_cast<uint32_t>(horner(kExp2, f)) + (k << 23));
  const float half = t * (l < -126.0f ? 0.0f : e);
  return x * (x < 0.0f ? half : 1.0f - half);
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
