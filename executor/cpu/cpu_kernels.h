// The CPU backend's kernels on strided views: copy and zero-fill, and every
// computation (Backend::compute) through runKernel, whose table names each
// computation's kernel. The kernels live by concept:
//   cpu_gemm        linear, matmul (OpenBLAS; naive f64 loops for the reference)
//   cpu_elementwise add, sub, mul (broadcast), relu, silu, gelu, scale, cast
//   cpu_rows        rms_norm, softmax (over the last axis)
//   cpu_attention   attention (blocked GEMMs, online softmax), merge_attention
//   cpu_gather      gather_rows, scatter_add_rows
// f16/bf16 are stored as such and computed in f32.
#pragma once

#include <stdexcept>

#include "runtime/backend.h"
#include "runtime/tensor.h"

namespace hostir::cpu {

void fillZero(const TensorView& t);
void copy(const TensorView& src, const TensorView& dst);

// Blas: the run (GEMMs through OpenBLAS, f32 computed in f32). ReferenceF64:
// the serial reference of `run --check`, which computes every operation in
// f64 (sums, exponentials and products in double) with naive loops.
enum class GemmKind { Blas, ReferenceF64 };

// Runs the computation `call` now, on the calling thread; `gemm` picks the
// implementation. A failure the data causes (an index out of range) throws
// IndexOutOfRange (runtime/index_fault.h): the backend reports it as an
// error at the statement that issued the kernel.
void runKernel(GemmKind gemm, const KernelCall& call);

}  // namespace hostir::cpu
