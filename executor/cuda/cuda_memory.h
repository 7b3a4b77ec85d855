// Device memory for one rank, stream-ordered (cudaMallocFromPoolAsync) from
// two pools of the rank's device that keep their memory across runs:
//
// * tensors (Backend::allocate): the program may use one on any stream.
//   A tensor the program deallocates is freed in the order of the
//   deallocating stream (freeInStreamOrder), which the backend first makes
//   wait for every other stream that used it (runtime/buffer_users.h), so
//   its memory is reused within the run. A buffer whose last view is
//   dropped without a deallocate is retired and freed at the next
//   synchronizeHost (reclaim), when no work can touch it. Either way a block
//   the pool hands out again is past every earlier use, on every stream.
// * scratch (pack/unpack temporaries of a communication): used by one
//   stream only, so it is freed in that stream's order as soon as the host
//   drops it, and reused by later work of the same stream.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "runtime/memory_high_water.h"
#include "runtime/tensor.h"

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

  // Frees a tensor buffer (from allocateTensor) in `stream`'s order. The
  // caller has made `stream` wait for every use of it on other streams, and
  // no work issued later may use it.
  void freeInStreamOrder(const std::shared_ptr<Buffer>& buffer, cudaStream_t stream);

  // Lets the other `devices` read and write both pools' memory, where the
  // hardware allows peer access (the copy-engine communicator's peers copy
  // from this rank's tensors); this rank's own device is skipped.
  void grantAccess(const std::vector<int>& devices);

  // Frees the retired tensor buffers. Call only when no stream has work
  // that may still use them.
  void reclaim();
  // Frees the retired tensor buffers in `stream`'s order, which has waited
  // for every use of them (the end of a captured run: the frees are the
  // graph's).
  void freeRetiredOn(cudaStream_t stream);

  // The bytes held: allocated and not yet freed (retired buffers count
  // until reclaimed), and their peak.
  MemoryHighWater& usage() { return usage_; }

 private:
  class TensorBuffer;
  class ScratchBuffer;
  explicit DeviceMemory(int device);
  void retire(void* data, size_t bytes);

  int device_;
  cudaMemPool_t tensors_ = nullptr;
  cudaMemPool_t scratch_ = nullptr;
  std::mutex retiredMutex_;
  struct Retired {
    void* data;
    size_t bytes;
  };
  std::vector<Retired> retired_;  // guarded by retiredMutex_
  MemoryHighWater usage_;
};

}  // namespace hostir::cuda
