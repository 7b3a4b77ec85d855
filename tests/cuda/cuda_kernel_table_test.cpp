// The CUDA backend's dispatch against the op table (host code, no device
// needed): every operation of category Compute reaches a kernel, and no
// other operation claims one, so a computation added to the table without
// its CUDA kernel fails here rather than on a GPU.
#include <gtest/gtest.h>

#include "executor/cuda/cuda_has_kernel.h"

namespace hostir::cuda {
namespace {

TEST(CudaKernelTable, EveryComputationAndNothingElseHasAKernel) {
  for (const OpSignature& sig : allSignatures()) {
    const bool computation = sig.category == OpCategory::Compute;
    EXPECT_EQ(cudaHasKernel(sig.kind), computation)
        << sig.name << (computation ? " has no CUDA kernel" : " is not a computation, yet has a CUDA kernel");
  }
}

}  // namespace
}  // namespace hostir::cuda
