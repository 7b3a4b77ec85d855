// The TransferEngine of host memory: memcpy and the host reduction kernels,
// done before each call returns, so streams and fences mean nothing. It is
// how the copy-engine communicator runs on the CPU backend, the same
// schedule as on a GPU, and the reference its tests compare with.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/transfer_engine.h"

namespace hostir {

class HostTransferEngine final : public TransferEngine {
 public:
  HostTransferEngine();
  ~HostTransferEngine() override;
  HostTransferEngine(const HostTransferEngine&) = delete;
  HostTransferEngine& operator=(const HostTransferEngine&) = delete;

  bool asynchronous() const override { return false; }
  int device() const override { return 0; }
  std::unique_ptr<TransferEngine> sibling() const override { return std::make_unique<HostTransferEngine>(); }
  void* defaultStream() override { return nullptr; }
  void synchronize(void*) override {}
  void* allocate(size_t bytes, void* stream) override;
  void release(void* data, void* stream) noexcept override;
  void copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) override;
  void reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) override;
  void scale(void* data, size_t count, DType dtype, double factor, void* stream) override;
  Fence newFence() override { return 0; }
  void record(Fence, void*) override {}
  void wait(void*, Fence) override {}

 private:
  // Scratch blocks kept for the next calls, as a GPU's memory pool keeps
  // them: a large block fresh from the system costs a page fault per page.
  struct Block {
    void* data;
    size_t capacity;
  };
  static constexpr size_t kKeptBlocks = 4;
  std::vector<Block> inUse_;
  std::vector<Block> kept_;
};

}  // namespace hostir
