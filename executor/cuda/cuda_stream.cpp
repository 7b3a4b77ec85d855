#include "executor/cuda/cuda_stream.h"

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {

CudaStream::CudaStream(int slot, cudaStream_t external)
    : slot_(slot), stream_(external), external_(external != nullptr) {
  try {
    // Non-blocking: no implicit synchronization with the legacy default stream.
    if (!external_) checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (cudaEvent_t& event : ring_)
      checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    checkCuda(cudaMalloc(&workspace_, kBlasWorkspaceBytes), "cudaMalloc");
    checkCublas(cublasCreate(&blas_), "cublasCreate");
    // cublasSetStream resets the workspace, so the workspace comes second.
    checkCublas(cublasSetStream(blas_, stream_), "cublasSetStream");
    checkCublas(cublasSetWorkspace(blas_, workspace_, kBlasWorkspaceBytes), "cublasSetWorkspace");
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

CudaStream::~CudaStream() { release(); }

void CudaStream::release() {
  if (blas_) cublasDestroy(blas_);
  blas_ = nullptr;
  if (workspace_) cudaFree(workspace_);
  workspace_ = nullptr;
  for (cudaEvent_t& event : ring_) {
    if (event) cudaEventDestroy(event);
    event = nullptr;
  }
  if (stream_ && !external_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

uint64_t CudaStream::record() {
  if (!dirty_) return recorded_;
  const uint64_t position = recorded_ + 1;
  checkCuda(cudaEventRecord(ring_[position % kEventRing], stream_), "cudaEventRecord");
  recorded_ = position;
  dirty_ = false;
  return position;
}

void CudaStream::waitFor(const CudaStream& other, uint64_t position) {
  if (&other == this || position <= other.reached_) return;  // in order, or already done
  checkCuda(cudaStreamWaitEvent(stream_, other.ring_[position % kEventRing], 0), "cudaStreamWaitEvent");
  dirty_ = true;
}

bool CudaStream::reached(uint64_t position) const {
  return position <= reached_ || cudaEventQuery(ring_[position % kEventRing]) == cudaSuccess;
}

void CudaStream::markIdle() {
  // Later records get new positions, all above this one.
  if (dirty_) {
    ++recorded_;
    dirty_ = false;
  }
  reached_ = recorded_;
}

}  // namespace hostir::cuda
