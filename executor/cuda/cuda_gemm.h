// GEMMs of row-major strided views through cublasGemmEx. cuBLAS is
// column-major, and a row-major matrix with row stride ld is, read
// column-major, its transpose with leading dimension ld; so
//   out = x · wᵀ   is computed as   outᵀ = w · xᵀ   (w read transposed),
//   out = a · b    is computed as   outᵀ = bᵀ · aᵀ,
// with every view's row stride as its leading dimension: chunks along any
// axis need no copies. Leading batch dims of linear that do not merge into
// the rows are looped. f32, f16 and bf16 compute in f32 (CUBLAS_COMPUTE_32F,
// no TF32), f64 in f64.
#pragma once

#include <cublas_v2.h>

#include "runtime/tensor.h"

namespace hostir::cuda {

// out = x · wᵀ, or out += x · wᵀ when `accumulate`; x [.., K], w [N, K],
// out [.., N], K > 0. Enqueued on the handle's stream.
void gemmLinear(cublasHandle_t blas, const TensorView& x, const TensorView& w, const TensorView& out, bool accumulate);

// out = a · b; a [M, K], b [K, N], K > 0.
void gemmMatmul(cublasHandle_t blas, const TensorView& a, const TensorView& b, const TensorView& out);

}  // namespace hostir::cuda
