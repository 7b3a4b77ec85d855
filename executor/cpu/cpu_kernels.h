// The CPU backend's kernels on strided views: copy and zero-fill, and every
// computation (Backend::compute) through runKernel: elementwise ones row by
// row, GEMMs through OpenBLAS (f16/bf16 stored as such, computed in f32) or,
// for the serial reference, naive f64-accumulating GEMMs. A computation's
// kernel and its case in runKernel's switch both live in cpu_kernels.cpp.
#pragma once

#include "runtime/backend.h"
#include "runtime/tensor.h"

namespace hostir::cpu {

void fillZero(const TensorView& t);
void copy(const TensorView& src, const TensorView& dst);

enum class GemmKind { Blas, ReferenceF64 };

// Runs the computation `call` now, on the calling thread; `gemm` picks the
// GEMMs' implementation.
void runKernel(GemmKind gemm, const KernelCall& call);

}  // namespace hostir::cpu
