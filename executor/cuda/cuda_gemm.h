// GEMMs of row-major strided views through cuBLAS. cuBLAS is column-major,
// and a row-major matrix with row stride ld is, read column-major, its
// transpose with leading dimension ld; so
//   out = x · wᵀ   is computed as   outᵀ = w · xᵀ   (w read transposed),
//   out = a · b    is computed as   outᵀ = bᵀ · aᵀ,
// with every view's row stride as its leading dimension: chunks along any
// axis need no copies. Leading batch dims of linear that do not merge into
// the rows are looped; matmul's batch axis is one strided batched call.
// f32, f16 and bf16 compute in f32 (CUBLAS_COMPUTE_32F, no TF32), f64 in f64.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "runtime/tensor.h"

namespace hostir::cuda {

// out = x · wᵀ, or out += x · wᵀ when `accumulate`; x [.., K], w [N, K],
// out [.., N], K > 0. Enqueued on the handle's stream.
void gemmLinear(cublasHandle_t blas, const TensorView& x, const TensorView& w, const TensorView& out, bool accumulate);

// out = op(a) · op(b), op transposing when asked; a [M, K] (given as
// [K, M] when transposeA), b [K, N] (given as [N, K] when transposeB), out
// [M, N]; or all three with a leading batch axis. K > 0.
void gemmMatmul(cublasHandle_t blas, const TensorView& a, const TensorView& b, const TensorView& out, bool transposeA,
                bool transposeB);

// One column-major GEMM, or a batch of them at constant strides:
//   C_i = alpha · op(A_i) · op(B_i)  (+ C_i when accumulate),
// op(A_i) m × k, op(B_i) k × n, C_i m × n; X_i = x + i · strideX elements.
struct ColumnMajorGemm {
  cublasOperation_t opA = CUBLAS_OP_N;
  cublasOperation_t opB = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 1, strideA = 0;
  const void* b = nullptr;
  int64_t ldb = 1, strideB = 0;
  void* c = nullptr;
  int64_t ldc = 1, strideC = 0;
  int64_t batches = 1;
  DType inputs = DType::F32;  // A's and B's
  DType output = DType::F32;  // C's: the inputs' or, for half inputs, f32
  double alpha = 1.0;
  bool accumulate = false;
};
void runGemm(cublasHandle_t blas, const ColumnMajorGemm& gemm);

// The row stride of a row-major matrix view [rows, cols] as a leading
// dimension: any value of at least cols serves a single row.
int64_t leadingDim(int64_t rows, int64_t rowStride, int64_t cols);

}  // namespace hostir::cuda
