// Host memory for the CPU backend's tensors, cached for reuse. Every run
// allocates the same tensors again; fresh pages from the kernel would be
// faulted in and zeroed on first touch each time (about as costly as
// moving the bytes), so freed blocks are kept and handed out again, as
// PyTorch's caching allocators do.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/memory_high_water.h"
#include "runtime/tensor.h"

namespace hostir::cpu {

class HostMemoryPool : public std::enable_shared_from_this<HostMemoryPool> {
 public:
  // `cacheLimit`: freed bytes kept beyond this are returned to the system.
  static std::shared_ptr<HostMemoryPool> create(size_t cacheLimit = size_t{4} << 30);
  ~HostMemoryPool();
  HostMemoryPool(const HostMemoryPool&) = delete;
  HostMemoryPool& operator=(const HostMemoryPool&) = delete;

  // A 64-byte aligned buffer of `bytes`; its block comes back to the pool
  // when the last view of it is gone (so reuse is ordered after every task
  // that held it). Throws std::bad_alloc when the system has no such block
  // even after the cache is returned to it; the pool stays usable.
  std::shared_ptr<Buffer> allocate(size_t bytes);
  size_t cachedBytes() const;
  // The bytes of the buffers handed out and not yet back (cached blocks do
  // not count): the tensors' live set, and its peak.
  MemoryHighWater& usage() { return usage_; }

 private:
  class PooledBuffer;
  explicit HostMemoryPool(size_t cacheLimit) : cacheLimit_(cacheLimit) {}
  void release(std::byte* block, size_t capacity, size_t bytes);
  // Returns every cached block to the system.
  void releaseCache();

  const size_t cacheLimit_;
  mutable std::mutex mutex_;
  std::unordered_multimap<size_t, std::byte*> freeBlocks_;  // by capacity; guarded by mutex_
  size_t cached_ = 0;                                       // guarded by mutex_
  MemoryHighWater usage_;
};

}  // namespace hostir::cpu
