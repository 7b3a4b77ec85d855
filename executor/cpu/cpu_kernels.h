// The CPU backend's kernels on strided views: copy and zero-fill, and every
// computation (Backend::compute) through runKernel, whose table holds each
// kernel family's kernel (familyKernel, below). Each family's kernel is
// defined in the file of its concept:
//   cpu_gemm        linear, matmul (OpenBLAS; naive f64 loops for the reference)
//   cpu_elementwise the unary and binary operations (b broadcast), scale, cast, where
//   cpu_rows        rms_norm, softmax, layer_norm, rope (over the last axis)
//   cpu_reductions  sum, mean, max along an axis; cumsum; top_k
//   cpu_attention   attention (blocked GEMMs, online softmax), merge_attention
//   cpu_gather      gather_rows, scatter_add_rows
//   cpu_routing     bucket
//   cpu_constants   fill, iota
// and copy's path for transpose's layout in transposed_copy. f16/bf16 are
// stored as such and computed in f32.
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

// The kernel of each kernel family (ir/op_list.h's HOSTIR_KERNEL_FAMILY_LIST),
// declared here for every family and defined in the file of its concept:
// runKernel's table, built by the same expansion, names each one, so a
// family without its kernel does not link.
template <KernelFamily Family>
void familyKernel(GemmKind gemm, const KernelCall& call);
#define HOSTIR_CPU_FAMILY_KERNEL(family) \
  template <>                            \
  void familyKernel<KernelFamily::family>(GemmKind gemm, const KernelCall& call);
HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_CPU_FAMILY_KERNEL)
#undef HOSTIR_CPU_FAMILY_KERNEL

}  // namespace hostir::cpu
