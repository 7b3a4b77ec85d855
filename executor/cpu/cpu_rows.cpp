// The CPU backend's row operations, over the last axis of strided views:
// rms_norm, softmax, layer_norm and rope. Each row is loaded into a buffer of the compute
// type (f32 for f32, f16 and bf16, f64 for f64 and for the serial
// reference), reduced, and stored: a row is read whole before any of it is
// written, so the very view in and out is in place.
#include "executor/cpu/cpu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "executor/cpu/strided_rows.h"
#include "executor/cpu/vector_loops.h"

namespace hostir::cpu {
namespace {

bool inF64(GemmKind mode, DType dtype) { return mode == GemmKind::ReferenceF64 || dtype == DType::F64; }

template <typename T>
void loadRow(DType dtype, const std::byte* p, int64_t stride, int64_t n, T* row) {
  if constexpr (std::is_same_v<T, float>) {
    if (stride == 1 && dtype == DType::F32) return static_cast<void>(std::memcpy(row, p, static_cast<size_t>(n) * 4));
    if (stride == 1 && dtype == DType::F16) return vec::fromHalf(reinterpret_cast<const uint16_t*>(p), row, n);
    if (stride == 1 && dtype == DType::BF16) return vec::fromBFloat16(reinterpret_cast<const uint16_t*>(p), row, n);
  }
  const auto step = stride * static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) row[i] = load<T>(dtype, p + i * step);
}

template <typename T>
void storeRow(DType dtype, std::byte* p, int64_t stride, int64_t n, const T* row) {
  if constexpr (std::is_same_v<T, float>) {
    if (stride == 1 && dtype == DType::F32) return static_cast<void>(std::memcpy(p, row, static_cast<size_t>(n) * 4));
    if (stride == 1 && dtype == DType::F16) return vec::toHalf(row, reinterpret_cast<uint16_t*>(p), n);
    if (stride == 1 && dtype == DType::BF16) return vec::toBFloat16(row, reinterpret_cast<uint16_t*>(p), n);
  }
  const auto step = stride * static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) store<T>(dtype, p + i * step, row[i]);
}

// Whether a row of x and of out are both f32 with unit stride: then it is
// computed straight from x into out, without the row buffer.
template <typename Inner>
bool bothF32Contiguous(const TensorView& x, const TensorView& out, const Inner& inner) {
  return x.dtype == DType::F32 && out.dtype == DType::F32 && inner[0] == 1 && inner[1] == 1;
}

template <typename T>
void rmsNormRows(const TensorView& x, const TensorView& w, double eps, const TensorView& out) {
  const int64_t n = x.shape[x.rank() - 1];
  std::vector<T> weight(static_cast<size_t>(n)), row(static_cast<size_t>(n));
  loadRow(w.dtype, w.data(), w.strides[0], n, weight.data());
  const T* g = weight.data();
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    if constexpr (std::is_same_v<T, float>) {
      const bool direct = bothF32Contiguous(x, out, inner);
      float* r = direct ? reinterpret_cast<float*>(ptrs[0]) : row.data();
      if (!direct) loadRow(x.dtype, ptrs[0], inner[0], n, r);
      const auto inverse = static_cast<float>(1.0 / std::sqrt(vec::sumSquares(r, n) / static_cast<double>(n) + eps));
      vec::scaledProduct(r, inverse, g, direct ? reinterpret_cast<float*>(ptrs[1]) : r, n);
      if (!direct) storeRow(out.dtype, ptrs[1], inner[1], n, r);
    } else {
      T* r = row.data();
      loadRow(x.dtype, ptrs[0], inner[0], n, r);
      double squares = 0;
#pragma omp simd reduction(+ : squares)
      for (int64_t i = 0; i < n; ++i) squares += r[i] * r[i];
      const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) r[i] = r[i] * inverse * g[i];
      storeRow(out.dtype, ptrs[1], inner[1], n, r);
    }
  });
}

// e^(in[i] - shift) into out, returning their sum, while `next` (the row
// after, or null) is prefetched, a part before each slice of the
// exponentials: the max of the next row then reads it from cache, and the
// reads from memory overlap this row's arithmetic.
double expShiftedPrefetching(const float* in, float* out, int64_t n, float shift, const float* next) {
  constexpr int64_t kSlice = 1024, kLine = 16;  // floats: 4 KiB, a 64-byte cache line
  double sum = 0;
  for (int64_t start = 0; start < n; start += kSlice) {
    const int64_t count = std::min(kSlice, n - start);
    if (next != nullptr)
      for (int64_t i = start; i < start + count; i += kLine) __builtin_prefetch(next + i, 0, 2);
    sum += vec::expShifted(in + start, out + start, count, shift);
  }
  return sum;
}

template <typename T>
void softmaxRows(const TensorView& x, const TensorView& out) {
  const int64_t n = x.shape[x.rank() - 1];
  std::vector<T> row(static_cast<size_t>(n));
  // Rows one after another in memory: each is followed by the next.
  const bool rowsFollow = x.isContiguous();
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    if constexpr (std::is_same_v<T, float>) {
      const bool direct = bothF32Contiguous(x, out, inner);
      const float* in = direct ? reinterpret_cast<const float*>(ptrs[0]) : row.data();
      float* o = direct ? reinterpret_cast<float*>(ptrs[1]) : row.data();
      if (!direct) loadRow(x.dtype, ptrs[0], inner[0], n, row.data());
      const float* next = direct && rowsFollow ? in + n : nullptr;  // past the last row: a prefetch never faults
      const double sum = expShiftedPrefetching(in, o, n, vec::max(in, n), next);
      vec::scale(o, n, static_cast<float>(1.0 / sum));
      if (!direct) storeRow(out.dtype, ptrs[1], inner[1], n, o);
    } else {
      T* r = row.data();
      loadRow(x.dtype, ptrs[0], inner[0], n, r);
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
#pragma omp simd reduction(max : max)
      for (int64_t i = 0; i < n; ++i) max = r[i] > max ? r[i] : max;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < n; ++i) sum += (r[i] = std::exp(r[i] - max));
      for (int64_t i = 0; i < n; ++i) r[i] /= sum;
      storeRow(out.dtype, ptrs[1], inner[1], n, r);
    }
  });
}

// f(start, count) over slices of [0, n), each slice's part of `next` (a
// row of n floats, or null) prefetched before it: the next row's reads from
// memory overlap this row's arithmetic in cache.
template <typename F>
void slicesPrefetching(int64_t n, const float* next, F f) {
  constexpr int64_t kSlice = 1024, kLine = 16;  // floats: 4 KiB, a 64-byte cache line
  for (int64_t start = 0; start < n; start += kSlice) {
    const int64_t count = std::min(kSlice, n - start);
    if (next != nullptr)
      for (int64_t i = start; i < start + count; i += kLine) __builtin_prefetch(next + i, 0, 2);
    f(start, count);
  }
}

template <typename T>
void layerNormRows(const TensorView& x, const TensorView& w, const TensorView& b, double eps, const TensorView& out) {
  const int64_t n = x.shape[x.rank() - 1];
  std::vector<T> weight(static_cast<size_t>(n)), bias(static_cast<size_t>(n)), row(static_cast<size_t>(n));
  loadRow(w.dtype, w.data(), w.strides[0], n, weight.data());
  loadRow(b.dtype, b.data(), b.strides[0], n, bias.data());
  // Rows one after another in memory: each is followed by the next.
  const bool rowsFollow = x.isContiguous();
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    if constexpr (std::is_same_v<T, float>) {
      const bool direct = bothF32Contiguous(x, out, inner);
      float* r = direct ? reinterpret_cast<float*>(ptrs[0]) : row.data();
      if (!direct) loadRow(x.dtype, ptrs[0], inner[0], n, r);
      // About the row's first value: no cancellation for rows far from zero.
      const double shift = n > 0 ? static_cast<double>(r[0]) : 0.0;
      const vec::ShiftedSums sums = vec::shiftedSums(r, n, shift);
      const double shiftedMean = sums.sum / static_cast<double>(n), mean = shift + shiftedMean;
      const double variance = std::max(0.0, sums.squares / static_cast<double>(n) - shiftedMean * shiftedMean);
      const auto meanHigh = static_cast<float>(mean);
      const auto meanLow = static_cast<float>(mean - static_cast<double>(meanHigh));
      const auto inverse = static_cast<float>(1.0 / std::sqrt(variance + eps));
      float* o = direct ? reinterpret_cast<float*>(ptrs[1]) : r;
      slicesPrefetching(n, direct && rowsFollow ? r + n : nullptr, [&](int64_t start, int64_t count) {
        vec::normalized(r + start, meanHigh, meanLow, inverse, weight.data() + start, bias.data() + start, o + start,
                        count);
      });
      if (!direct) storeRow(out.dtype, ptrs[1], inner[1], n, r);
    } else {
      T* r = row.data();
      loadRow(x.dtype, ptrs[0], inner[0], n, r);
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < n; ++i) sum += r[i];
      const double mean = sum / static_cast<double>(n);
      double squares = 0;  // about the mean: no cancellation for rows far from zero
#pragma omp simd reduction(+ : squares)
      for (int64_t i = 0; i < n; ++i) squares += (r[i] - mean) * (r[i] - mean);
      const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
      for (int64_t i = 0; i < n; ++i)
        r[i] = static_cast<T>((r[i] - mean) * inverse * weight[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)]);
      storeRow(out.dtype, ptrs[1], inner[1], n, r);
    }
  });
}

// rope's angles: exact (SLEEF's sine and cosine) every kRowsPerExactAngle
// rows, and in between each row's from the row before by the angle-addition
// formulas, which cost a few multiplications where the sines cost about a
// fifth of the kernel. Each step adds about an f64 rounding (1e-16), so the
// drift stays near 1e-14, far below f32's precision.
constexpr int64_t kRowsPerExactAngle = 64;

// (sine, cosine) of angle a + step, from those of a and of step.
void advanceAngles(double* sine, double* cosine, const double* stepSine, const double* stepCosine, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    const double s = sine[j], c = cosine[j];
    sine[j] = s * stepCosine[j] + c * stepSine[j];
    cosine[j] = c * stepCosine[j] - s * stepSine[j];
  }
}

}  // namespace

// y = (x - mean) / sqrt(var + eps) · w + b, mean and variance in f64.
template <>
void familyKernel<KernelFamily::LayerNorm>(GemmKind mode, const KernelCall& call) {
  using O = operands::LayerNorm;
  const TensorView &x = call.operand(O::x), &w = call.operand(O::w), &b = call.operand(O::b);
  const TensorView& out = call.operand(O::out);
  if (inF64(mode, x.dtype))
    layerNormRows<double>(x, w, b, call.scalars[O::eps], out);
  else
    layerNormRows<float>(x, w, b, call.scalars[O::eps], out);
}

// Rotary embedding, rotate-half form, on x [T, H·D]: angles in f64.
template <>
void familyKernel<KernelFamily::Rope>(GemmKind, const KernelCall& call) {
  using O = operands::Rope;
  const TensorView &x = call.operand(O::x), &out = call.operand(O::out);
  const int64_t heads = call.integer(O::heads), width = x.shape[1];
  const int64_t half = width / heads / 2;
  const auto halfSize = static_cast<size_t>(half);
  // theta^(-2j/D), j < D/2, the frequency of pair (j, j + D/2) of every head.
  std::vector<double> frequency(halfSize);
  for (int64_t j = 0; j < half; ++j)
    frequency[static_cast<size_t>(j)] =
        std::pow(call.scalars[O::theta], -2.0 * static_cast<double>(j) / static_cast<double>(2 * half));
  // A row's angles, their sines and cosines in f64, shared by all its heads;
  // and the sines and cosines of one position's step, by which the next
  // row's follow from this row's (angle addition) between exact ones.
  std::vector<double> angle(halfSize), sine(halfSize), cosine(halfSize), stepSine(halfSize), stepCosine(halfSize);
  vec::sinCos(frequency.data(), stepSine.data(), stepCosine.data(), half);
  int64_t rowsSinceExact = kRowsPerExactAngle;
  std::vector<float> sineF32(halfSize), cosineF32(halfSize);
  const bool inF64 = x.dtype == DType::F64 || out.dtype == DType::F64;
  std::vector<double> rowF64(inF64 ? static_cast<size_t>(width) : 0);
  std::vector<float> rowF32(inF64 ? 0 : static_cast<size_t>(width));
  int64_t position = call.integer(O::offset);
  const bool prefetch = x.dtype == DType::F32 && x.isContiguous();
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    // This row's first 4 KiB, read from memory while the sines are computed.
    if (prefetch)
      for (int64_t i = 0; i < std::min<int64_t>(width, 1024); i += 16)
        __builtin_prefetch(reinterpret_cast<const float*>(ptrs[0]) + i, 0, 2);
    if (rowsSinceExact == kRowsPerExactAngle) {
      for (int64_t j = 0; j < half; ++j)
        angle[static_cast<size_t>(j)] = static_cast<double>(position) * frequency[static_cast<size_t>(j)];
      vec::sinCos(angle.data(), sine.data(), cosine.data(), half);
      rowsSinceExact = 0;
    } else {
      advanceAngles(sine.data(), cosine.data(), stepSine.data(), stepCosine.data(), half);
    }
    ++rowsSinceExact;
    ++position;
    if (inF64) {
      double* row = rowF64.data();
      loadRow(x.dtype, ptrs[0], inner[0], width, row);
      for (int64_t h = 0; h < heads; ++h) {
        double* head = row + h * 2 * half;
#pragma omp simd
        for (int64_t j = 0; j < half; ++j) {
          const double c = cosine[static_cast<size_t>(j)], s = sine[static_cast<size_t>(j)];
          const double first = head[j], second = head[j + half];
          head[j] = first * c - second * s;
          head[j + half] = second * c + first * s;
        }
      }
      storeRow(out.dtype, ptrs[1], inner[1], width, row);
      return;
    }
    for (size_t j = 0; j < halfSize; ++j) {
      sineF32[j] = static_cast<float>(sine[j]);
      cosineF32[j] = static_cast<float>(cosine[j]);
    }
    const bool direct = bothF32Contiguous(x, out, inner);
    float* row = direct ? reinterpret_cast<float*>(ptrs[0]) : rowF32.data();
    if (!direct) loadRow(x.dtype, ptrs[0], inner[0], width, row);
    vec::rotateHalves(row, cosineF32.data(), sineF32.data(), direct ? reinterpret_cast<float*>(ptrs[1]) : row, half,
                      heads);
    if (!direct) storeRow(out.dtype, ptrs[1], inner[1], width, row);
  });
}

// y = x / sqrt(mean(x²) + eps) · w, the sum of squares in f64.
template <>
void familyKernel<KernelFamily::RmsNorm>(GemmKind mode, const KernelCall& call) {
  using O = operands::RmsNorm;
  const TensorView &x = call.operand(O::x), &w = call.operand(O::w), &out = call.operand(O::out);
  const double eps = call.scalars[O::eps];
  if (inF64(mode, x.dtype))
    rmsNormRows<double>(x, w, eps, out);
  else
    rmsNormRows<float>(x, w, eps, out);
}

// y = e^(x - max) / sum e^(x - max) per row.
template <>
void familyKernel<KernelFamily::Softmax>(GemmKind mode, const KernelCall& call) {
  using O = operands::Unary;
  const TensorView &x = call.operand(O::x), &out = call.operand(O::out);
  if (inF64(mode, x.dtype))
    softmaxRows<double>(x, out);
  else
    softmaxRows<float>(x, out);
}

}  // namespace hostir::cpu
