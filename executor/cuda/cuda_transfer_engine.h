// The TransferEngine of a CUDA device (comm/transfer_engine.h): copies on the
// copy engines (cudaMemcpyAsync within a device, cudaMemcpyPeerAsync between
// devices), reductions as small kernels, scratch from a stream-ordered pool
// of its own that the team's other devices may read, and fences from a ring
// of events created once.
//
// A fence's event is handed out again only after the ring has gone round.
// The copy-engine communicator takes at most 1 + kMaxTransferPhases fences per
// collective, and every peer has enqueued its waits for a collective's
// fences before it reaches the next collective's exchange of postings; the
// ring cannot go round before every peer has passed that many exchanges, so
// a wait always sees the record it was meant for.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <memory>

#include "comm/transfer_engine.h"

namespace hostir::cuda {

class CudaTransferEngine final : public TransferEngine {
 public:
  static constexpr size_t kFenceRing = 64;

  explicit CudaTransferEngine(int device);
  ~CudaTransferEngine() override;
  CudaTransferEngine(const CudaTransferEngine&) = delete;
  CudaTransferEngine& operator=(const CudaTransferEngine&) = delete;

  bool asynchronous() const override { return true; }
  int device() const override { return device_; }
  std::unique_ptr<TransferEngine> sibling() const override { return std::make_unique<CudaTransferEngine>(device_); }
  // Enables peer access from this device to the others (where the hardware
  // allows; otherwise the runtime stages peer copies through the host) and
  // lets them read this engine's scratch.
  void connect(const int* devices, int count) override;
  void* defaultStream() override { return stream_; }
  void synchronize(void* stream) override;
  void* allocate(size_t bytes, void* stream) override;
  void release(void* data, void* stream) noexcept override;
  void copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) override;
  void reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) override;
  void scale(void* data, size_t count, DType dtype, double factor, void* stream) override;
  Fence newFence() override;
  void record(Fence fence, void* stream) override;
  void wait(void* stream, Fence fence) override;

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t scratch_ = nullptr;
  std::array<cudaEvent_t, kFenceRing> fences_{};
  size_t nextFence_ = 0;
};

}  // namespace hostir::cuda
