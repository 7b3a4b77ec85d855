// The CUDA backend's computations: one per kernel family, from a KernelCall
// to the kernels (cuda_kernels.cu, cuda_rows.cu, cuda_attention.cu,
// cuda_gather.cu) and cuBLAS calls (cuda_gemm, cuda_attention) that compute
// it on one stream. Kernels read the non-tensor operands from the call's
// scalars; f16 and bf16 compute in f32.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "executor/cuda/cuda_index_faults.h"
#include "executor/cuda/cuda_memory.h"
#include "ir/diagnostic.h"
#include "runtime/backend.h"

namespace hostir::cuda {

// What a computation needs from the backend.
struct ComputeContext {
  cudaStream_t stream;
  cublasHandle_t blas;   // bound to `stream`
  DeviceMemory& memory;  // scratch in the stream's order (attention's scores)
  IndexFaults& indexFaults;
  SourceLoc loc;                                            // the statement being issued, for its errors
  const std::array<std::string_view, kMaxOperands>& names;  // its operands' names in the program
};

// Enqueues `call`'s work on context.stream.
void runComputation(const ComputeContext& context, const KernelCall& call);

// The computation of each kernel family (ir/op_list.h's
// HOSTIR_KERNEL_FAMILY_LIST), declared here for every family and defined
// beside the launches it makes: runComputation's table, built by the same
// expansion, names each one, so a family without its computation does not
// link.
template <KernelFamily Family>
void familyComputation(const ComputeContext& context, const KernelCall& call);
#define HOSTIR_CUDA_FAMILY_COMPUTATION(family) \
  template <>                                  \
  void familyComputation<KernelFamily::family>(const ComputeContext& context, const KernelCall& call);
HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_CUDA_FAMILY_COMPUTATION)
#undef HOSTIR_CUDA_FAMILY_COMPUTATION

}  // namespace hostir::cuda
