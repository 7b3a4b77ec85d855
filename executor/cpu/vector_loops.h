// The f32 loops of the CPU kernels, each compiled for several instruction
// sets (AVX-512, AVX2, and the baseline SSE2) with the best one chosen when
// the process loads it: the binary stays portable, and an exponential, a
// logarithm or a sine per element runs 16 wide where the CPU can. exp,
// log, sin and cos are SLEEF's (exp within 1 ULP, the others 3.5), called
// one vector at a time; sigmoid, silu, gelu, tanh and softmax's exponential
// are fast_math.h's, inlined; the rest are plain loops the compiler
// vectorizes. Everything else of a kernel (strides, dtypes, rows) stays in
// the kernel's own file; these take dense arrays only. Values may differ in
// their last bits between instruction sets (fused multiply-adds, the order
// in which sums add their terms, SLEEF's argument reduction), never more.
#pragma once

#include <bit>
#include <cstdint>

namespace hostir::cpu::vec {

// Max and Min are NaN where either operand is; the comparisons give 1 or 0,
// NaN comparing as in NumPy (false, but Ne true).
enum class Binary { Add, Sub, Mul, Div, Max, Min, Gt, Ge, Lt, Le, Eq, Ne };
// out[i] = a[i] op b[i · bStride]; bStride 1, or 0 for one b broadcast.
void binary(Binary op, const float* a, const float* b, int64_t bStride, float* out, int64_t n);

// IEEE's special values as <cmath> gives them (exp(-inf) = 0, log(0) =
// -inf, sqrt(-0) = -0, tanh(inf) = 1, sigmoid(-inf) = 0, NaN stays NaN).
enum class Unary { Relu, Silu, Gelu, Scale, Exp, Log, Sqrt, Rsqrt, Sigmoid, Tanh, Sin, Cos, Abs, Neg };
// out[i] = f(x[i]); `by` is scale's factor.
void unary(Unary op, const float* x, float* out, int64_t n, float by);

// out[i] = c[i] != 0 ? a[i] : b[i], bit for bit (a NaN in c selects a,
// NumPy's truth of NaN).
void select(const float* c, const float* a, const float* b, float* out, int64_t n);

// The largest of x[0..n) (NaNs skipped; -inf for n == 0).
float max(const float* x, int64_t n);
// The largest of x[0..n), NaN where any is, as NumPy's max (-inf for n == 0).
float maxOrNaN(const float* x, int64_t n);
// The sum of x[0..n) in f64 (in 32 lanes, added at the end).
double sum(const float* x, int64_t n);
// out[i] = x[0] + ... + x[i], summed in f64; out may be x (each vector of
// x is read before out at its positions is written).
void cumsum(const float* x, float* out, int64_t n);

// top_k's order as an integer: larger first, every NaN above every number
// (all NaNs equal), -0 equal to +0.
inline int32_t orderKey(float v) {
  const auto s = std::bit_cast<int32_t>(v);
  const int32_t magnitude = s & 0x7fffffff;
  int32_t key = s ^ ((s >> 31) & 0x7fffffff);
  key = magnitude == 0 ? 0 : key;
  return magnitude > 0x7f800000 ? 0x7fffffff : key;
}
// The first i in [from, n) with orderKey(x[i]) > threshold, or n.
int64_t nextAbove(const float* x, int64_t from, int64_t n, int32_t threshold);
// The positions of the k largest of x[0..n) by orderKey, largest first and
// the lower position first among equals (0 < k <= min(n, kMaxSmallTopK));
// `candidates` is scratch space of n + 16 entries; the n floats at `next`
// (the next row, or null) are prefetched.
constexpr int64_t kMaxSmallTopK = 64;
void topPositions(const float* x, int64_t n, int64_t k, int64_t* positions, int32_t* candidates, const float* next);
// out[i] = e^(x[i] - shift) (out may be x); returns the sum of the results
// (in f32 within each block of 256, the blocks in f64).
double expShifted(const float* x, float* out, int64_t n, float shift);
// x[i] *= factor.
void scale(float* x, int64_t n, float factor);
// The sum of x[i]² in f64.
double sumSquares(const float* x, int64_t n);
// out[i] = x[i] · factor · w[i].
void scaledProduct(const float* x, float factor, const float* w, float* out, int64_t n);
// Σ (x[i] - shift) and Σ (x[i] - shift)² in f64, in one pass. With a
// shift near the mean (a value of x), n · variance = squares - sum² / n
// loses almost nothing to cancellation, even for x far from zero.
struct ShiftedSums {
  double sum, squares;
};
ShiftedSums shiftedSums(const float* x, int64_t n, double shift);
// out[i] = ((x[i] - meanHigh) - meanLow) · inverse · w[i] + b[i] (out may be
// x): layer_norm's last pass, the mean split into an f32 and the f32 rest
// of it, so that x[i] - mean keeps nearly f64's accuracy for rows far from
// zero.
void normalized(const float* x, float meanHigh, float meanLow, float inverse, const float* w, const float* b,
                float* out, int64_t n);
// Each of `heads` heads of 2·half values of x, rotated as rope's rotate-half
// form: out[j] = x[j]·cos[j] - x[j+half]·sin[j], out[j+half] =
// x[j+half]·cos[j] + x[j]·sin[j], j < half (out may be x).
void rotateHalves(const float* x, const float* cos, const float* sin, float* out, int64_t half, int64_t heads);
// sine[i] = sin(angle[i]), cosine[i] = cos(angle[i]), in f64 (SLEEF's 1-ULP
// functions where it has them, else <cmath>'s).
void sinCos(const double* angle, double* sine, double* cosine, int64_t n);

// Conversions rounding to nearest even, as ir/half.h's toHalf and
// toBFloat16 do (NaN stays NaN), and back, exactly.
void toHalf(const float* x, uint16_t* out, int64_t n);
void toBFloat16(const float* x, uint16_t* out, int64_t n);
void fromHalf(const uint16_t* x, float* out, int64_t n);
void fromBFloat16(const uint16_t* x, float* out, int64_t n);

}  // namespace hostir::cpu::vec
