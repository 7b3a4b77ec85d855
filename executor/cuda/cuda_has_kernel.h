// Whether the CUDA backend computes an operation, answered by the dispatch
// switch of cuda_compute.cpp: every operation of category Compute has a
// kernel, and no other operation has one. Plain host code (no CUDA
// headers), so that a test without a device can walk the op table.
#pragma once

#include "ir/ops.h"

namespace hostir::cuda {

bool cudaHasKernel(OpKind kind);

}  // namespace hostir::cuda
