// Device memory for one rank, stream-ordered (cudaMallocFromPoolAsync) from
// two pools of the rank's device that keep their memory across runs:
//
// * tensors (Backend::allocate): the program may use one on any stream, so
//   its memory is freed only when no work can touch it: a tensor buffer
//   whose last view is dropped is retired, and retired memory is freed at
//   the next synchronizeHost (reclaim). The memory of deallocated tensors
//   is therefore reused after the run, not within it. Nothing in this pool
//   is ever freed with work pending, so a block it hands out is usable on
//   every stream at once, as the CPU backend's memory is.
// * scratch (pack/unpack temporaries of a communication): used by one
//   stream only, so it is freed in that stream's order as soon as the host
//   drops it, and reused by later work of the same stream.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "executor/tensor.h"

namespace hostir::cuda {

class DeviceMemory : public std::enable_shared_from_this<DeviceMemory> {
 public:
  static std::shared_ptr<DeviceMemory> create(int device);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // A tensor buffer, allocated in `stream`'s order.
  std::shared_ptr<Buffer> allocateTensor(size_t bytes, cudaStream_t stream);
  // A buffer that only work on `stream` uses: freed on `stream` when dropped.
  std::shared_ptr<Buffer> allocateScratch(size_t bytes, cudaStream_t stream);

  // Frees the retired tensor buffers. Call only when no stream has work
  // that may still use them.
  void reclaim();

 private:
  class TensorBuffer;
  class ScratchBuffer;
  explicit DeviceMemory(int device);
  void retire(void* data);

  int device_;
  cudaMemPool_t tensors_ = nullptr;
  cudaMemPool_t scratch_ = nullptr;
  std::mutex retiredMutex_;
  std::vector<void*> retired_;  // guarded by retiredMutex_
};

}  // namespace hostir::cuda
