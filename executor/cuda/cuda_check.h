// Failures of the CUDA runtime and cuBLAS as exceptions that name the call.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

namespace hostir::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void checkCuda(cudaError_t status, const char* call);
void checkCublas(cublasStatus_t status, const char* call);

}  // namespace hostir::cuda
