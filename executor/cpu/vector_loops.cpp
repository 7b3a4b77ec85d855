#include "executor/cpu/vector_loops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "executor/cpu/fast_math.h"

#if defined(__x86_64__)
#include <sleef.h>
#endif

// Every function here in AVX-512, AVX2 and baseline versions, chosen at load
// time (GCC on x86-64); elsewhere, and in sanitizer builds, one version.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(HOSTIR_NO_VECTOR_CLONES)
#define HOSTIR_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define HOSTIR_SLEEF_WIDE 1
#else
#define HOSTIR_VECTOR_CLONES
#endif

namespace hostir::cpu::vec {
namespace {

// expShifted sums in f32 a block at a time, the blocks in f64: an f64 sum of
// every term is a chain of dependent additions (two per vector) that the
// exponentials wait on. 256 terms of one sign add in f32 within 1.6e-5,
// relative, even one by one; split among a vector's lanes, within 2e-6.
constexpr int64_t kExpBlock = 256;

// top_k's k best (orderKey, position) pairs so far, best first. Positions
// arrive in increasing order, so a new one goes after its equals: the lower
// position first among equals.
struct BestKeys {
  int64_t k;
  int64_t* positions;
  int32_t keys[kMaxSmallTopK] = {};
  int64_t kept = 0;

  int32_t threshold() const { return keys[k - 1]; }  // once k are kept
  void insert(int32_t key, int64_t at) {
    int64_t p = std::min(kept, k - 1);
    for (; p > 0 && keys[p - 1] < key; --p) {
      keys[p] = keys[p - 1];
      positions[p] = positions[p - 1];
    }
    keys[p] = key;
    positions[p] = at;
    kept = std::min(kept + 1, k);
  }
};

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

// ---- SLEEF's functions, one vector at a time ---------------------------------
// Each instruction set's SLEEF functions on its vector type V; what is
// written once over V (mapVectors) is inlined into a function
// compiled for that instruction set, so that V stays in its registers.
// sleef.h declares the AVX2 and AVX-512 ones only where the whole file is
// compiled for them, so the wide ones are declared here.
#if defined(HOSTIR_SLEEF_WIDE)
extern "C" {
__m256 Sleef_expf8_u10avx2(__m256);
__m256 Sleef_logf8_u35avx2(__m256);
__m256 Sleef_sinf8_u35avx2(__m256);
__m256 Sleef_cosf8_u35avx2(__m256);
__m512 Sleef_expf16_u10avx512f(__m512);
__m512 Sleef_logf16_u35avx512f(__m512);
__m512 Sleef_sinf16_u35avx512f(__m512);
__m512 Sleef_cosf16_u35avx512f(__m512);
__m256d Sleef_sind4_u10avx2(__m256d);
__m256d Sleef_cosd4_u10avx2(__m256d);
__m512d Sleef_sind8_u10avx512f(__m512d);
__m512d Sleef_cosd8_u10avx512f(__m512d);
}
// Everything taking or returning a wide V is always inlined into a
// function compiled for its instruction set (else the build fails): the
// ABI of wide vectors passed without AVX, which GCC's -Wpsabi warns of,
// never applies (executor/CMakeLists.txt turns it off for this file).
#define HOSTIR_INLINE __attribute__((always_inline))
#else
#define HOSTIR_INLINE
#endif

// The unary operations that call SLEEF. exp, sigmoid, silu, gelu and tanh
// are fast_math.h's inlined functions instead (fewer instructions than a
// call, and SLEEF's tanh and erfc are several times slower than those);
// log, sin and cos are SLEEF's 3.5-ULP versions, about twice as fast as
// its 1-ULP ones and still far within the f64 comparisons' tolerance.
enum class Math { Exp, Log, Sin, Cos };

#if defined(__x86_64__)
struct Sse2 {
  using V = __m128;
  HOSTIR_INLINE static V exp(V x) { return Sleef_expf4_u10sse2(x); }
  HOSTIR_INLINE static V log(V x) { return Sleef_logf4_u35sse2(x); }
  HOSTIR_INLINE static V sin(V x) { return Sleef_sinf4_u35sse2(x); }
  HOSTIR_INLINE static V cos(V x) { return Sleef_cosf4_u35sse2(x); }
};
#else
// Elsewhere <cmath>, one element at a time.
struct Scalar {
  using V = float;
  static V exp(V x) { return std::exp(x); }
  static V log(V x) { return std::log(x); }
  static V sin(V x) { return std::sin(x); }
  static V cos(V x) { return std::cos(x); }
};
#endif
#if defined(HOSTIR_SLEEF_WIDE)
struct Avx2 {
  using V = __m256;
  HOSTIR_INLINE static V exp(V x) { return Sleef_expf8_u10avx2(x); }
  HOSTIR_INLINE static V log(V x) { return Sleef_logf8_u35avx2(x); }
  HOSTIR_INLINE static V sin(V x) { return Sleef_sinf8_u35avx2(x); }
  HOSTIR_INLINE static V cos(V x) { return Sleef_cosf8_u35avx2(x); }
};
struct Avx512 {
  using V = __m512;
  HOSTIR_INLINE static V exp(V x) { return Sleef_expf16_u10avx512f(x); }
  HOSTIR_INLINE static V log(V x) { return Sleef_logf16_u35avx512f(x); }
  HOSTIR_INLINE static V sin(V x) { return Sleef_sinf16_u35avx512f(x); }
  HOSTIR_INLINE static V cos(V x) { return Sleef_cosf16_u35avx512f(x); }
};
#endif

// out[i] = f(x[i]) a vector at a time (out may be x); the last, partial
// vector through a zero-padded copy.
template <typename V, typename F>
HOSTIR_INLINE inline void mapVectors(const float* x, float* out, int64_t n, F f) {
  constexpr auto kWidth = static_cast<int64_t>(sizeof(V) / sizeof(float));
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(out + i, &v, sizeof v);
  }
  if (i == n) return;
  const auto tail = static_cast<size_t>(n - i) * sizeof(float);
  float padded[kWidth] = {};
  std::memcpy(padded, x + i, tail);
  V v;
  std::memcpy(&v, padded, sizeof v);
  v = f(v);
  std::memcpy(padded, &v, sizeof v);
  std::memcpy(out + i, padded, tail);
}

// `fn` over x[0..n) with instruction set I's functions.
template <typename I>
HOSTIR_INLINE inline void mathWith(Math fn, const float* x, float* out, int64_t n) {
  using V = typename I::V;
  switch (fn) {
    case Math::Exp: return mapVectors<V>(x, out, n, [](V v) HOSTIR_INLINE { return I::exp(v); });
    case Math::Log: return mapVectors<V>(x, out, n, [](V v) HOSTIR_INLINE { return I::log(v); });
    case Math::Sin: return mapVectors<V>(x, out, n, [](V v) HOSTIR_INLINE { return I::sin(v); });
    case Math::Cos: return mapVectors<V>(x, out, n, [](V v) HOSTIR_INLINE { return I::cos(v); });
  }
}

#if defined(HOSTIR_SLEEF_WIDE)
#define HOSTIR_AVX512 __attribute__((target("arch=x86-64-v4")))
#define HOSTIR_AVX2 __attribute__((target("arch=x86-64-v3")))
HOSTIR_AVX512 void mathAvx512(Math fn, const float* x, float* out, int64_t n) { mathWith<Avx512>(fn, x, out, n); }
HOSTIR_AVX2 void mathAvx2(Math fn, const float* x, float* out, int64_t n) { mathWith<Avx2>(fn, x, out, n); }
void mathSse2(Math fn, const float* x, float* out, int64_t n) { mathWith<Sse2>(fn, x, out, n); }

// The instruction set that target_clones picks too, chosen once.
enum class Isa { Avx512, Avx2, Sse2 };
Isa chosenIsa() {
  static const Isa isa = __builtin_cpu_supports("x86-64-v4")   ? Isa::Avx512
                         : __builtin_cpu_supports("x86-64-v3") ? Isa::Avx2
                                                               : Isa::Sse2;
  return isa;
}

void math(Math fn, const float* x, float* out, int64_t n) {
  switch (chosenIsa()) {
    case Isa::Avx512: return mathAvx512(fn, x, out, n);
    case Isa::Avx2: return mathAvx2(fn, x, out, n);
    case Isa::Sse2: return mathSse2(fn, x, out, n);
  }
}

// fastGelu (fast_math.h) with AVX-512's roundscale and scalef, which give
// 2^l = 2^(l - k)·2^k, its underflow included, in one instruction each:
// about a third faster than the compiler's form of fastGelu.
template <size_t N>
HOSTIR_AVX512 HOSTIR_INLINE inline __m512 horner16(const float (&c)[N], __m512 t) {
  __m512 p = _mm512_set1_ps(c[0]);
  for (size_t i = 1; i < N; ++i) p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(c[i]));
  return p;
}

HOSTIR_AVX512 HOSTIR_INLINE inline __m512 gelu16(__m512 x) {
  using namespace gelu_fit;
  const __m512 a = _mm512_abs_ps(x);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(a, _mm512_set1_ps(kTScale), one));
  __m512 l = _mm512_fmadd_ps(_mm512_mul_ps(a, _mm512_set1_ps(kMinusHalfLog2E)), a, horner16(kP, t));
  l = _mm512_max_ps(l, _mm512_set1_ps(-152.0f));  // 2^-152 is 0 in f32
  const __m512 k = _mm512_roundscale_ps(l, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 half = _mm512_mul_ps(t, _mm512_scalef_ps(horner16(kExp2, _mm512_sub_ps(l, k)), k));
  const __mmask16 nonNegative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
  return _mm512_mul_ps(x, _mm512_mask_sub_ps(half, nonNegative, one, half));
}

// e^x for x <= 0 or NaN (fastExpNonPositive) with roundscale and scalef,
// which flushes what f32 cannot hold to 0.
HOSTIR_AVX512 HOSTIR_INLINE inline __m512 expNonPositive16(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // NaN kept: max_ps returns its second operand
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  return _mm512_scalef_ps(horner16(kExpTaylor, r), n);
}

// expShifted's loop (below) a vector at a time.
HOSTIR_AVX512 double expShiftedAvx512(const float* x, float* out, int64_t n, float shift) {
  const __m512 by = _mm512_set1_ps(shift);
  double sum = 0;
  for (int64_t start = 0; start < n; start += kExpBlock) {
    const int64_t end = std::min(n, start + kExpBlock);
    __m512 block = _mm512_setzero_ps();
    int64_t i = start;
    for (; i + 16 <= end; i += 16) {
      const __m512 e = expNonPositive16(_mm512_sub_ps(_mm512_loadu_ps(x + i), by));
      _mm512_storeu_ps(out + i, e);
      block = _mm512_add_ps(block, e);
    }
    if (i < end) {
      const auto tail = static_cast<__mmask16>((1u << (end - i)) - 1);
      const __m512 e = expNonPositive16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), by));
      _mm512_mask_storeu_ps(out + i, tail, e);
      block = _mm512_mask_add_ps(block, tail, block, e);
    }
    sum += static_cast<double>(_mm512_reduce_add_ps(block));
  }
  return sum;
}

// topPositions in two passes over x and no data-dependent branch per
// vector (one per insertion, about k · ln(n / k) of them on random rows,
// costs more than the whole scan). The largest number of each of 64 lanes
// (16 for k <= 16: each the largest of four lanes; NaN skipped) bounds the
// k-th largest of x from below, those being elements of x; the positions at
// or above the bound, or NaN, a superset of the answer, are compressed into
// `candidates` (n + 16 entries) and ranked by orderKey one by one: about a
// dozen on random rows. The second pass, in cache, prefetches `next` (the
// next row, or null): a third more than without.
HOSTIR_AVX512 void topPositionsAvx512(const float* x, int64_t n, BestKeys& best, int32_t* candidates,
                                      const float* next) {
  const auto lanesOf = [n](int64_t i) { return static_cast<__mmask16>(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1); };
  // max_ps(v, most) is `most` where v is NaN.
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 most0 = lowest, most1 = lowest, most2 = lowest, most3 = lowest;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    most0 = _mm512_max_ps(_mm512_loadu_ps(x + i), most0);
    most1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), most1);
    most2 = _mm512_max_ps(_mm512_loadu_ps(x + i + 32), most2);
    most3 = _mm512_max_ps(_mm512_loadu_ps(x + i + 48), most3);
  }
  for (; i < n; i += 16) most0 = _mm512_mask_max_ps(most0, lanesOf(i), _mm512_maskz_loadu_ps(lanesOf(i), x + i), most0);
  alignas(64) float lanes[64];
  int64_t laneCount = 64;
  if (best.k <= 16) {
    _mm512_store_ps(lanes, _mm512_max_ps(_mm512_max_ps(most0, most1), _mm512_max_ps(most2, most3)));
    laneCount = 16;
  } else {
    _mm512_store_ps(lanes, most0);
    _mm512_store_ps(lanes + 16, most1);
    _mm512_store_ps(lanes + 32, most2);
    _mm512_store_ps(lanes + 48, most3);
  }
  // The k-th largest lane: the largest one that k lanes are not below.
  float kth = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < laneCount; ++j) {
    int notBelow = 0;
    for (int64_t v = 0; v < laneCount; v += 16)
      notBelow += std::popcount(
          static_cast<unsigned>(_mm512_cmp_ps_mask(_mm512_load_ps(lanes + v), _mm512_set1_ps(lanes[j]), _CMP_GE_OQ)));
    kth = notBelow >= best.k ? std::max(kth, lanes[j]) : kth;
  }
  const __m512 bound = _mm512_set1_ps(kth);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int64_t count = 0;
  for (i = 0; i < n; i += 16) {
    if (next != nullptr) __builtin_prefetch(next + i, 0, 3);
    // Not below the bound: at or above it, or NaN.
    const __mmask16 keep = _mm512_mask_cmp_ps_mask(lanesOf(i), _mm512_loadu_ps(x + i), bound, _CMP_NLT_UQ);
    if (keep == 0) continue;  // nearly always: a branch the CPU predicts
    const __m512i at = _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(i)));
    _mm512_storeu_si512(candidates + count, _mm512_maskz_compress_epi32(keep, at));
    count += std::popcount(static_cast<unsigned>(keep));
  }
  for (int64_t c = 0; c < count; ++c) {
    const int32_t key = orderKey(x[candidates[c]]);
    if (best.kept < best.k || key > best.threshold()) best.insert(key, candidates[c]);
  }
}

HOSTIR_AVX512 void geluAvx512(const float* x, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, gelu16(_mm512_loadu_ps(x + i)));
  if (i == n) return;
  const auto tail = static_cast<__mmask16>((1u << (n - i)) - 1);  // the last, partial vector
  _mm512_mask_storeu_ps(out + i, tail, gelu16(_mm512_maskz_loadu_ps(tail, x + i)));
}

// sinCos's loop, a vector of V (doubles) at a time, the last partial one
// through a zero-padded copy.
template <typename V, typename Sin, typename Cos>
HOSTIR_INLINE inline void sinCosVectors(const double* angle, double* sine, double* cosine, int64_t n, Sin sinOf,
                                        Cos cosOf) {
  constexpr auto kWidth = static_cast<int64_t>(sizeof(V) / sizeof(double));
  for (int64_t i = 0; i < n; i += kWidth) {
    const auto count = static_cast<size_t>(std::min(kWidth, n - i));
    double padded[kWidth] = {};
    std::memcpy(padded, angle + i, count * sizeof(double));
    V v;
    std::memcpy(&v, padded, sizeof v);
    const V s = sinOf(v), c = cosOf(v);
    std::memcpy(padded, &s, sizeof s);
    std::memcpy(sine + i, padded, count * sizeof(double));
    std::memcpy(padded, &c, sizeof c);
    std::memcpy(cosine + i, padded, count * sizeof(double));
  }
}

HOSTIR_AVX512 void sinCosAvx512(const double* angle, double* sine, double* cosine, int64_t n) {
  sinCosVectors<__m512d>(
      angle, sine, cosine, n, [](__m512d v) HOSTIR_INLINE { return Sleef_sind8_u10avx512f(v); },
      [](__m512d v) HOSTIR_INLINE { return Sleef_cosd8_u10avx512f(v); });
}
HOSTIR_AVX2 void sinCosAvx2(const double* angle, double* sine, double* cosine, int64_t n) {
  sinCosVectors<__m256d>(
      angle, sine, cosine, n, [](__m256d v) HOSTIR_INLINE { return Sleef_sind4_u10avx2(v); },
      [](__m256d v) HOSTIR_INLINE { return Sleef_cosd4_u10avx2(v); });
}
void sinCosSse2(const double* angle, double* sine, double* cosine, int64_t n) {
  sinCosVectors<__m128d>(
      angle, sine, cosine, n, [](__m128d v) { return Sleef_sind2_u10sse2(v); },
      [](__m128d v) { return Sleef_cosd2_u10sse2(v); });
}

#else
#if defined(__x86_64__)
using Baseline = Sse2;
#else
using Baseline = Scalar;
#endif
void math(Math fn, const float* x, float* out, int64_t n) { mathWith<Baseline>(fn, x, out, n); }
#endif

// out[i] = f(x[i]), vectorized.
template <typename F>
HOSTIR_INLINE inline void unaryLoop(const float* x, float* out, int64_t n, F f) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
}

// out[i] = f(a[i], b[i · bStride]) for both strides, vectorized.
template <typename F>
HOSTIR_INLINE inline void binaryLoop(const float* a, const float* b, int64_t bStride, float* out, int64_t n, F f) {
  if (bStride == 0) {
    const float b0 = *b;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b0);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  }
}

}  // namespace

HOSTIR_VECTOR_CLONES void binary(Binary op, const float* a, const float* b, int64_t bStride, float* out, int64_t n) {
  switch (op) {
    case Binary::Add: return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x + y; });
    case Binary::Sub: return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x - y; });
    case Binary::Mul: return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x * y; });
    case Binary::Div: return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x / y; });
    // x + y: NaN when either is.
    case Binary::Max:
      return binaryLoop(a, b, bStride, out, n,
                        [](float x, float y) HOSTIR_INLINE { return x != x || y != y ? x + y : (x > y ? x : y); });
    case Binary::Min:
      return binaryLoop(a, b, bStride, out, n,
                        [](float x, float y) HOSTIR_INLINE { return x != x || y != y ? x + y : (x < y ? x : y); });
    case Binary::Gt:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x > y ? 1.0f : 0.0f; });
    case Binary::Ge:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x >= y ? 1.0f : 0.0f; });
    case Binary::Lt:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x < y ? 1.0f : 0.0f; });
    case Binary::Le:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x <= y ? 1.0f : 0.0f; });
    case Binary::Eq:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x == y ? 1.0f : 0.0f; });
    case Binary::Ne:
      return binaryLoop(a, b, bStride, out, n, [](float x, float y) HOSTIR_INLINE { return x != y ? 1.0f : 0.0f; });
  }
}

HOSTIR_VECTOR_CLONES void unary(Unary op, const float* x, float* out, int64_t n, float by) {
  switch (op) {
    case Unary::Relu:  // NaN stays NaN
      return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return v < 0.0f ? 0.0f : v; });
    case Unary::Scale: return unaryLoop(x, out, n, [by](float v) HOSTIR_INLINE { return by * v; });
    case Unary::Sqrt: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return std::sqrt(v); });
    case Unary::Rsqrt: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return 1.0f / std::sqrt(v); });
    case Unary::Abs: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return std::fabs(v); });
    case Unary::Neg: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return -v; });
    case Unary::Silu: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return fastSilu(v); });
    case Unary::Gelu:
#if defined(HOSTIR_SLEEF_WIDE)
      if (chosenIsa() == Isa::Avx512) return geluAvx512(x, out, n);
#endif
      return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return fastGelu(v); });
    case Unary::Sigmoid: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return fastSigmoid(v); });
    case Unary::Tanh: return unaryLoop(x, out, n, [](float v) HOSTIR_INLINE { return fastTanh(v); });
    case Unary::Exp: return math(Math::Exp, x, out, n);
    case Unary::Log: return math(Math::Log, x, out, n);
    case Unary::Sin: return math(Math::Sin, x, out, n);
    case Unary::Cos: return math(Math::Cos, x, out, n);
  }
}

HOSTIR_VECTOR_CLONES void select(const float* c, const float* a, const float* b, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = c[i] != 0.0f ? a[i] : b[i];
}

HOSTIR_VECTOR_CLONES float max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

HOSTIR_VECTOR_CLONES float maxOrNaN(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
  for (int64_t i = 0; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan |= x[i] != x[i];
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

// f64 sums in four vectors of eight lanes: one chain of dependent
// additions would wait an addition's latency per vector.
using Floats8 = float __attribute__((vector_size(32)));
using Doubles8 = double __attribute__((vector_size(64)));

inline Doubles8 widen8(const float* x) {
  Floats8 f;
  std::memcpy(&f, x, sizeof f);
  return __builtin_convertvector(f, Doubles8);
}

// The sum of f(x[i]) in f64 (f takes a double or eight of them), in four
// vectors of eight lanes.
template <typename F>
HOSTIR_INLINE inline double widenedSum(const float* x, int64_t n, F f) {
  Doubles8 a = {}, b = {}, c = {}, d = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a += f(widen8(x + i));
    b += f(widen8(x + i + 8));
    c += f(widen8(x + i + 16));
    d += f(widen8(x + i + 24));
  }
  for (; i + 8 <= n; i += 8) a += f(widen8(x + i));
  const Doubles8 lanes = (a + b) + (c + d);
  double total = 0;
  for (int j = 0; j < 8; ++j) total += lanes[j];
  for (; i < n; ++i) total += f(static_cast<double>(x[i]));
  return total;
}

HOSTIR_VECTOR_CLONES double sum(const float* x, int64_t n) {
  return widenedSum(x, n, [](auto v) HOSTIR_INLINE { return v; });
}

// The running sum eight lanes at a time: each vector's own prefix in three
// shifted additions, then the total so far; the only chain from one vector
// to the next is one addition to that total.
HOSTIR_VECTOR_CLONES void cumsum(const float* x, float* out, int64_t n) {
  const Doubles8 zero = {};
  Doubles8 carry = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Doubles8 v = widen8(x + i);
    v += __builtin_shufflevector(zero, v, 0, 8, 9, 10, 11, 12, 13, 14);
    v += __builtin_shufflevector(zero, v, 0, 1, 8, 9, 10, 11, 12, 13);
    v += __builtin_shufflevector(zero, v, 0, 1, 2, 3, 8, 9, 10, 11);
    const Floats8 running = __builtin_convertvector(v + carry, Floats8);
    carry += __builtin_shufflevector(v, v, 7, 7, 7, 7, 7, 7, 7, 7);
    std::memcpy(out + i, &running, sizeof running);
  }
  double total = carry[0];
  for (; i < n; ++i) {
    total += static_cast<double>(x[i]);
    out[i] = static_cast<float>(total);
  }
}

HOSTIR_VECTOR_CLONES int64_t nextAbove(const float* x, int64_t from, int64_t n, int32_t threshold) {
  constexpr int64_t kBlock = 16;
  for (int64_t start = from; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    int any = 0;
#pragma omp simd reduction(| : any)
    for (int64_t i = start; i < end; ++i) any |= orderKey(x[i]) > threshold;
    if (any)
      for (int64_t i = start; i < end; ++i)
        if (orderKey(x[i]) > threshold) return i;
  }
  return n;
}

void topPositions(const float* x, int64_t n, int64_t k, int64_t* positions, int32_t* candidates, const float* next) {
  BestKeys best{k, positions};
#if defined(HOSTIR_SLEEF_WIDE)
  if (chosenIsa() == Isa::Avx512) return topPositionsAvx512(x, n, best, candidates, next);
#else
  static_cast<void>(candidates), static_cast<void>(next);
#endif
  for (int64_t i = 0; i < k; ++i) best.insert(orderKey(x[i]), i);
  for (int64_t i = nextAbove(x, k, n, best.threshold()); i < n; i = nextAbove(x, i + 1, n, best.threshold()))
    best.insert(orderKey(x[i]), i);
}

HOSTIR_VECTOR_CLONES double expShifted(const float* x, float* out, int64_t n, float shift) {
#if defined(HOSTIR_SLEEF_WIDE)
  if (chosenIsa() == Isa::Avx512) return expShiftedAvx512(x, out, n, shift);
#endif
  double sum = 0;
  for (int64_t start = 0; start < n; start += kExpBlock) {
    const int64_t end = std::min(n, start + kExpBlock);
    float block = 0;
#pragma omp simd reduction(+ : block)
    for (int64_t i = start; i < end; ++i) {
      const float e = fastExpNonPositive(x[i] - shift);
      out[i] = e;
      block += e;
    }
    sum += static_cast<double>(block);
  }
  return sum;
}

HOSTIR_VECTOR_CLONES void scale(float* x, int64_t n, float factor) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

HOSTIR_VECTOR_CLONES double sumSquares(const float* x, int64_t n) {
  return widenedSum(x, n, [](auto v) HOSTIR_INLINE { return v * v; });
}

HOSTIR_VECTOR_CLONES void scaledProduct(const float* x, float factor, const float* w, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * factor * w[i];
}

HOSTIR_VECTOR_CLONES ShiftedSums shiftedSums(const float* x, int64_t n, double shift) {
  // Two vectors of eight lanes for each sum: four chains of additions.
  Doubles8 sum[2] = {}, squares[2] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int half = 0; half < 2; ++half) {
      const Doubles8 d = widen8(x + i + 8 * half) - shift;
      sum[half] += d;
      squares[half] += d * d;
    }
  const Doubles8 sums = sum[0] + sum[1], squareSums = squares[0] + squares[1];
  ShiftedSums total{0, 0};
  for (int j = 0; j < 8; ++j) {
    total.sum += sums[j];
    total.squares += squareSums[j];
  }
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - shift;
    total.sum += d;
    total.squares += d * d;
  }
  return total;
}

HOSTIR_VECTOR_CLONES void normalized(const float* x, float meanHigh, float meanLow, float inverse, const float* w,
                                     const float* b, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = ((x[i] - meanHigh) - meanLow) * inverse * w[i] + b[i];
}

HOSTIR_VECTOR_CLONES void rotateHalves(const float* x, const float* cos, const float* sin, float* out, int64_t half,
                                       int64_t heads) {
  for (int64_t h = 0; h < heads; ++h) {
    const float* first = x + h * 2 * half;
    float* o = out + h * 2 * half;
    // Each j reads its pair before writing it, and no other j touches it.
#pragma omp simd
    for (int64_t j = 0; j < half; ++j) {
      const float a = first[j], b = first[j + half];
      o[j] = a * cos[j] - b * sin[j];
      o[j + half] = b * cos[j] + a * sin[j];
    }
  }
}

void sinCos(const double* angle, double* sine, double* cosine, int64_t n) {
#if defined(HOSTIR_SLEEF_WIDE)
  switch (chosenIsa()) {
    case Isa::Avx512: return sinCosAvx512(angle, sine, cosine, n);
    case Isa::Avx2: return sinCosAvx2(angle, sine, cosine, n);
    case Isa::Sse2: return sinCosSse2(angle, sine, cosine, n);
  }
#else
  for (int64_t i = 0; i < n; ++i) {
    sine[i] = std::sin(angle[i]);
    cosine[i] = std::cos(angle[i]);
  }
#endif
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
