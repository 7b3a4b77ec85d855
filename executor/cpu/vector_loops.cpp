#include "executor/cpu/vector_loops.h"

#include <bit>
#include <limits>

#include "executor/cpu/fast_math.h"

// Every function here in AVX-512, AVX2 and baseline versions, chosen at load
// time (GCC on x86-64); elsewhere, and in sanitizer builds, one version.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(HOSTIR_NO_VECTOR_CLONES)
#define HOSTIR_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOSTIR_VECTOR_CLONES
#endif

namespace hostir::cpu::vec {
namespace {

// f32 to f16 bits, round to nearest even, without branches (ir/half.h's toHalf).
inline uint16_t halfBits(float f) {
  const auto u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t magnitude = u & 0x7fffffffu;
  // Subnormal or zero: adding 0.5 lets the hardware round the bits.
  const uint32_t small = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) + 0.5f) - 0x3f000000u;
  const uint32_t normal = (magnitude + 0xc8000fffu + ((magnitude >> 13) & 1u)) >> 13;
  uint32_t bits = magnitude < 0x38800000u ? small : normal;
  bits = magnitude >= 0x477ff000u ? 0x7c00u : bits;  // overflow to inf
  bits = magnitude > 0x7f800000u ? 0x7e00u : bits;   // NaN
  return static_cast<uint16_t>(sign | bits);
}

inline uint16_t bfloat16Bits(float f) {
  const auto u = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? ((u >> 16) | 0x40u) : rounded);
}

// f16 bits to f32, exactly: normal numbers by rebiasing the exponent,
// subnormals as mantissa · 2^-24, inf and NaN with their payload.
inline float halfValue(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  const float subnormal = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  uint32_t bits = ((exponent + 112) << 23) | (mantissa << 13);
  bits = exponent == 0x1f ? (0x7f800000u | (mantissa << 13)) : bits;
  bits = exponent == 0 ? std::bit_cast<uint32_t>(subnormal) : bits;
  return std::bit_cast<float>(sign | bits);
}

}  // namespace

HOSTIR_VECTOR_CLONES void binary(Binary op, const float* a, const float* b, int64_t bStride, float* out, int64_t n) {
  const float b0 = *b;
  switch (op) {
    case Binary::Add:
      if (bStride == 0) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b0;
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      }
      return;
    case Binary::Sub:
      if (bStride == 0) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b0;
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
      }
      return;
    case Binary::Mul:
      if (bStride == 0) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b0;
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
      }
      return;
  }
}

HOSTIR_VECTOR_CLONES void unary(Unary op, const float* x, float* out, int64_t n, float by) {
  switch (op) {
    case Unary::Relu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = x[i] < 0.0f ? 0.0f : x[i];  // NaN stays NaN
      return;
    case Unary::Silu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = fastSilu(x[i]);
      return;
    case Unary::Gelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = fastGelu(x[i]);
      return;
    case Unary::Scale:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[i] = by * x[i];
      return;
  }
}

HOSTIR_VECTOR_CLONES float max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

HOSTIR_VECTOR_CLONES double expShifted(const float* x, float* out, int64_t n, float shift) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    const float e = fastExp(x[i] - shift);
    out[i] = e;
    sum += static_cast<double>(e);
  }
  return sum;
}

HOSTIR_VECTOR_CLONES void scale(float* x, int64_t n, float factor) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

HOSTIR_VECTOR_CLONES double sumSquares(const float* x, int64_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return sum;
}

HOSTIR_VECTOR_CLONES void scaledProduct(const float* x, float factor, const float* w, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * factor * w[i];
}

HOSTIR_VECTOR_CLONES void toHalf(const float* x, uint16_t* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = halfBits(x[i]);
}

HOSTIR_VECTOR_CLONES void toBFloat16(const float* x, uint16_t* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = bfloat16Bits(x[i]);
}

HOSTIR_VECTOR_CLONES void fromHalf(const uint16_t* x, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = halfValue(x[i]);
}

HOSTIR_VECTOR_CLONES void fromBFloat16(const uint16_t* x, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
}

}  // namespace hostir::cpu::vec
