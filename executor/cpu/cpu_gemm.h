// The CPU backend's GEMMs: linear and matmul (transposes, a batch axis)
// through OpenBLAS, f16/bf16 stored as such and computed in f32, or, for
// the serial reference (GemmKind::ReferenceF64), naive loops accumulating
// in f64. Attention builds on the same calls (executor/cpu/cpu_attention).
#pragma once

#include <cstdint>

#include "executor/cpu/blas_library.h"
#include "executor/cpu/cpu_kernels.h"

namespace hostir::cpu {

// A row-major matrix: rows × cols elements, `ld` elements between rows, unit column stride.
struct Matrix {
  std::byte* data;
  int64_t rows, cols, ld;
  DType dtype;
  std::byte* at(int64_t r, int64_t c) const { return data + (r * ld + c) * static_cast<int64_t>(dtypeSize(dtype)); }
};

// A 2-D view (a 1-D one is one row) as a Matrix.
Matrix matrixOf(const TensorView& t);

// C = op(A) · op(B) (+ C when accumulate): op(A) [M, K], op(B) [K, N],
// C [M, N]; op(X) is Xᵀ when its flag is set.
void gemm(GemmKind kind, const Matrix& A, bool transA, const Matrix& B, bool transB, const Matrix& C, bool accumulate);

// C = alpha · op(A) · op(B) + beta · C on dense row-major arrays of float or
// double, through the loaded OpenBLAS; the caller holds a BlasBufferLease.
void blasGemm(const BlasLibrary& blas, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void blasGemm(const BlasLibrary& blas, bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
              const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace hostir::cpu
