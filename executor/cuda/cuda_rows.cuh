// The CUDA backend's computations over the last axis of a tensor: rms_norm
// softmax and layer_norm, and rope. One block per row reduces the row (in f32 for f32, f16 and
// bf16, in f64 for f64), then writes it; each element is read by the thread
// that writes it, after the reductions, so the output may be the input
// view itself. (C++17 for nvcc.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda {

// The rows of a computation over the last axis: `rows` walks the leading
// dims (operand 0 is out, operand 1 is x; rank 0 for a 1-d tensor, one
// row), and each row has `length` elements at the given strides.
struct RowLayout {
  ElementwiseLayout rows;
  int64_t length = 0;
  int64_t outStride = 1;
  int64_t xStride = 1;
};

// out = x / √(mean(x²) + eps) · w per row; w has `length` elements `wStride` apart.
cudaError_t launchRmsNorm(DType dtype, void* out, const void* x, const void* w, int64_t wStride, double eps,
                          const RowLayout& layout, cudaStream_t stream);

// out = exp(x - max) / Σ exp(x - max) per row.
cudaError_t launchSoftmax(DType dtype, void* out, const void* x, const RowLayout& layout, cudaStream_t stream);

// out = (x - mean) / √(var + eps) · w + b per row; w and b have `length`
// elements, `wStride` and `bStride` apart.
cudaError_t launchLayerNorm(DType dtype, void* out, const void* x, const void* w, int64_t wStride, const void* b,
                            int64_t bStride, double eps, const RowLayout& layout, cudaStream_t stream);

// Rotary embedding on rows of `heads` heads of width 2·half: row r sits at
// position offset + r; pair (j, j + half) of each head turns by
// (offset + r) · theta^(-j/half), the angle in f64. One thread per pair,
// which reads both elements before writing them.
cudaError_t launchRope(DType dtype, void* out, const void* x, int64_t heads, int64_t offset, double theta,
                       const RowLayout& layout, cudaStream_t stream);

}  // namespace hostir::cuda
