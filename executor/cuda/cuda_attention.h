// attention on the CUDA backend: for each block of query rows, per group
// of query heads that share a key/value head, one strided batched cuBLAS
// GEMM for the scores Q·Kᵀ/√D (f32, or f64 for f64 inputs), a kernel for
// the masked softmax and the lse (cuda_attention.cuh), and one for P·V.
// Blocks bound the scores buffer, taken from the stream-ordered scratch
// pool; with causal masks a block's GEMMs stop at the last key its last
// row sees. For half inputs P is rounded to the inputs' dtype for the
// second GEMM, as fused attention kernels do.
#pragma once

#include <cstddef>

#include "runtime/backend.h"

namespace hostir::cuda {

struct ComputeContext;  // cuda_compute.h

void attention(const ComputeContext& context, const KernelCall& call);

// The bytes one block's scores (and probabilities) may take; at least one
// query row per block whatever it says. Tests lower it to run many blocks.
size_t attentionScoresBudget();
void setAttentionScoresBudget(size_t bytes);

}  // namespace hostir::cuda
