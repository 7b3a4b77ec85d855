#include "executor/cuda/cuda_check.h"

#include <fmt/format.h>

namespace hostir::cuda {

void checkCuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw CudaError(
        fmt::format("cuda: {} failed: {} ({})", call, cudaGetErrorString(status), cudaGetErrorName(status)));
}

void checkCublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaError(fmt::format("cublas: {} failed: {}", call, cublasGetStatusString(status)));
}

}  // namespace hostir::cuda
