// A CUDA stream of the backend: a non-blocking stream created once, its
// cuBLAS handle (bound to the stream, with a workspace of its own, so GEMMs
// on different streams never share scratch), and a ring of events created
// once. Events are positions: recording takes the ring's next event, and a
// wait for position p waits on ring[p % size]; if that event was recorded
// again since, the wait is for a later position of the same stream, which
// is stronger and still correct (it only covers work issued before it).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

#include "runtime/backend.h"

namespace hostir::cuda {

class CudaStream final : public Stream {
 public:
  static constexpr size_t kEventRing = 256;
  static constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;  // cuBLAS's recommendation for Hopper

  // `external`: the caller's stream, used and never destroyed; null: one of its own.
  explicit CudaStream(int slot, cudaStream_t external = nullptr);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  int slot() const override { return slot_; }
  cudaStream_t native() const { return stream_; }
  cublasHandle_t blas() const { return blas_; }

  // Called for everything issued on the stream (work or a wait), so that a
  // record with nothing new since the last one can reuse its position.
  void issued() { dirty_ = true; }
  // The position after everything issued so far (0: nothing to wait for).
  uint64_t record();
  // Makes this stream wait for `position` of `other`.
  void waitFor(const CudaStream& other, uint64_t position);
  // Whether the stream has run everything up to `position` (host side; a
  // reused ring event may answer for a later position, so "no" can be early).
  bool reached(uint64_t position) const;
  // The host saw the stream idle: every position so far is reached.
  void markIdle();

 private:
  void release();

  int slot_;
  cudaStream_t stream_ = nullptr;
  bool external_ = false;
  cublasHandle_t blas_ = nullptr;
  void* workspace_ = nullptr;
  std::array<cudaEvent_t, kEventRing> ring_{};
  uint64_t recorded_ = 0;  // positions handed out so far
  uint64_t reached_ = 0;   // positions known complete
  bool dirty_ = false;     // issued since the last record
};

}  // namespace hostir::cuda
