// The CUDA backend's constants: fill and iota write every element of a new
// tensor of any dtype (i32 included). (C++17 for nvcc.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda {

// Every element of `layout` (one operand) = value, rounded to the dtype.
cudaError_t launchFill(DType dtype, void* out, const ElementwiseLayout& layout, double value, cudaStream_t stream);

// Every element = its index along an axis: element `linear` (row-major) has
// index (linear / inner) % extent, `inner` the product of the extents after
// the axis (merging dims in `layout` keeps that row-major numbering).
cudaError_t launchIota(DType dtype, void* out, const ElementwiseLayout& layout, int64_t inner, int64_t extent,
                       cudaStream_t stream);

}  // namespace hostir::cuda
