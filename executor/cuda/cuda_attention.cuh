// The CUDA backend's attention kernels: the masked softmax between the two
// GEMMs of attention (cuda_attention.h runs those through cuBLAS), and
// merge_attention's online-softmax fold. (C++17 for nvcc.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ir/dtype.h"

namespace hostir::cuda {

// One block of query rows, every head: turns the scores into the
// probabilities the second GEMM multiplies with V, and writes each row's
// log-sum-exp. A row sees keys [0, visible): all `keys` of them, or with
// `causal` those at global positions kOffset + j <= firstQuery + i; a row
// that sees none gets zero probabilities and an lse of −inf.
struct AttentionSoftmax {
  const void* scores = nullptr;   // [heads, rows, keys], already scaled by 1/√D: f32, or f64 for f64 inputs
  void* probabilities = nullptr;  // [heads, rows, keys] in the inputs' dtype; `scores` itself when the types agree
  float* lse = nullptr;           // null, or the lse tensor's element [the block's first row, 0]
  int64_t lseRowStride = 0;
  int64_t lseHeadStride = 0;
  int64_t heads = 0;
  int64_t rows = 0;
  int64_t keys = 0;
  bool causal = false;
  int64_t firstQuery = 0;  // the global position of the block's row 0 (q_offset + its index in q)
  int64_t kOffset = 0;     // the global position of key 0
};
cudaError_t launchAttentionSoftmax(DType dtype, const AttentionSoftmax& softmax, cudaStream_t stream);

// merge_attention: per row and head, o ← (e^lse·o + e^part_lse·part) /
// (e^lse + e^part_lse) and lse ← log(e^lse + e^part_lse), where a side
// whose lse is −inf contributes nothing. o and part are [rows, heads·headDim]
// with unit column strides; lse and part_lse f32 [rows, heads].
struct AttentionMerge {
  void* o = nullptr;
  int64_t oRowStride = 0;
  const void* part = nullptr;
  int64_t partRowStride = 0;
  float* lse = nullptr;
  int64_t lseRowStride = 0;
  int64_t lseHeadStride = 0;
  const float* partLse = nullptr;
  int64_t partLseRowStride = 0;
  int64_t partLseHeadStride = 0;
  int64_t rows = 0;
  int64_t heads = 0;
  int64_t headDim = 0;
};
cudaError_t launchMergeAttention(DType dtype, const AttentionMerge& merge, cudaStream_t stream);

}  // namespace hostir::cuda
