#include "executor/cpu/cpu_rows.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "executor/cpu/fast_math.h"
#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {
namespace {

bool inF64(GemmKind mode, DType dtype) { return mode == GemmKind::ReferenceF64 || dtype == DType::F64; }

template <typename T>
void loadRow(DType dtype, const std::byte* p, int64_t stride, int64_t n, T* row) {
  const auto step = stride * static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) row[i] = load<T>(dtype, p + i * step);
}

template <typename T>
void storeRow(DType dtype, std::byte* p, int64_t stride, int64_t n, const T* row) {
  const auto step = stride * static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) store<T>(dtype, p + i * step, row[i]);
}

template <typename T>
void rmsNormRows(const TensorView& x, const TensorView& w, double eps, const TensorView& out) {
  const int64_t n = x.shape[x.rank() - 1];
  std::vector<T> weight(static_cast<size_t>(n)), row(static_cast<size_t>(n));
  loadRow(w.dtype, w.data(), w.strides[0], n, weight.data());
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    T* r = row.data();
    const T* g = weight.data();
    loadRow(x.dtype, ptrs[0], inner[0], n, r);
    double squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t i = 0; i < n; ++i) squares += static_cast<double>(r[i]) * static_cast<double>(r[i]);
    const auto inverse = static_cast<T>(1.0 / std::sqrt(squares / static_cast<double>(n) + eps));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) r[i] = r[i] * inverse * g[i];
    storeRow(out.dtype, ptrs[1], inner[1], n, r);
  });
}

template <typename T>
T expOf(T x) {
  if constexpr (std::is_same_v<T, float>)
    return fastExp(x);
  else
    return std::exp(x);
}

template <typename T>
void softmaxRows(const TensorView& x, const TensorView& out) {
  const int64_t n = x.shape[x.rank() - 1];
  std::vector<T> row(static_cast<size_t>(n));
  forEachLastAxisRow<2>({&x, &out}, [&](auto ptrs, int64_t, auto inner) {
    T* r = row.data();
    loadRow(x.dtype, ptrs[0], inner[0], n, r);
    T max = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : max)
    for (int64_t i = 0; i < n; ++i) max = r[i] > max ? r[i] : max;
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) {
      r[i] = expOf<T>(r[i] - max);
      sum += static_cast<double>(r[i]);
    }
    const auto inverse = static_cast<T>(1.0 / sum);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) r[i] *= inverse;
    storeRow(out.dtype, ptrs[1], inner[1], n, r);
  });
}

}  // namespace

void rmsNorm(GemmKind mode, const KernelCall& call) {
  using O = operands::RmsNorm;
  const TensorView &x = call.operand(O::x), &w = call.operand(O::w), &out = call.operand(O::out);
  const double eps = call.scalars[O::eps];
  if (inF64(mode, x.dtype))
    rmsNormRows<double>(x, w, eps, out);
  else
    rmsNormRows<float>(x, w, eps, out);
}

void softmax(GemmKind mode, const KernelCall& call) {
  using O = operands::Unary;
  const TensorView &x = call.operand(O::x), &out = call.operand(O::out);
  if (inF64(mode, x.dtype))
    softmaxRows<double>(x, out);
  else
    softmaxRows<float>(x, out);
}

}  // namespace hostir::cpu
