// The f32 loops of the CPU kernels, each compiled for several instruction
// sets (AVX-512, AVX2, and the baseline SSE2) with the best one chosen when
// the process loads it (GCC's target_clones on x86-64): the binary stays
// portable, and an exponential or erfc per element (fast_math.h) runs
// 16 wide where the CPU can. Everything else of a kernel (strides, dtypes,
// rows) stays in the kernel's own file; these take dense arrays only.
// Values may differ in their last bits between instruction sets (fused
// multiply-adds, the order in which sums add their terms), never more.
#pragma once

#include <cstdint>

namespace hostir::cpu::vec {

enum class Binary { Add, Sub, Mul };
// out[i] = a[i] op b[i · bStride]; bStride 1, or 0 for one b broadcast.
void binary(Binary op, const float* a, const float* b, int64_t bStride, float* out, int64_t n);

enum class Unary { Relu, Silu, Gelu, Scale };
// out[i] = f(x[i]); `by` is scale's factor.
void unary(Unary op, const float* x, float* out, int64_t n, float by);

// The largest of x[0..n) (NaNs skipped; -inf for n == 0).
float max(const float* x, int64_t n);
// out[i] = e^(x[i] - shift) (out may be x); returns the sum of the results in f64.
double expShifted(const float* x, float* out, int64_t n, float shift);
// x[i] *= factor.
void scale(float* x, int64_t n, float factor);
// The sum of x[i]² in f64.
double sumSquares(const float* x, int64_t n);
// out[i] = x[i] · factor · w[i].
void scaledProduct(const float* x, float factor, const float* w, float* out, int64_t n);

// Conversions rounding to nearest even, as ir/half.h's toHalf and
// toBFloat16 do (NaN stays NaN), and back, exactly.
void toHalf(const float* x, uint16_t* out, int64_t n);
void toBFloat16(const float* x, uint16_t* out, int64_t n);
void fromHalf(const uint16_t* x, float* out, int64_t n);
void fromBFloat16(const uint16_t* x, float* out, int64_t n);

}  // namespace hostir::cpu::vec
