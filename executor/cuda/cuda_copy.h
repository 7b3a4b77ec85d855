// Elementwise copies and zero-fills of strided views on a CUDA stream, by
// the cheapest means the layout allows: one memcpy or memset for dense
// views, a 2-D memcpy for rows of a chunk, a kernel otherwise. The
// backend's copies, the pack and unpack of collectives and several
// computations (linear's bias, empty sums) use them.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/tensor.h"

namespace hostir::cuda {

// dst = src (same dtype and shape), enqueued on `stream`.
void copyView(cudaStream_t stream, const TensorView& src, const TensorView& dst);

// dst = 0, enqueued on `stream`.
void zeroView(cudaStream_t stream, const TensorView& dst);

}  // namespace hostir::cuda
