#include "executor/cpu/host_memory_pool.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>

namespace hostir::cpu {
namespace {

// Blocks come in few sizes so that a freed block fits the next request of
// about the same size: 64 bytes for small ones, pages for large ones. A
// size no rounding can represent is one no system can provide.
size_t capacityFor(size_t bytes) {
  constexpr size_t kLine = 64, kPage = 4096;
  size_t granule = bytes >= 16 * kPage ? kPage : kLine;
  if (bytes > std::numeric_limits<size_t>::max() - granule) throw std::bad_alloc();
  return std::max(kLine, (bytes + granule - 1) / granule * granule);
}

}  // namespace

class HostMemoryPool::PooledBuffer : public Buffer {
 public:
  PooledBuffer(std::shared_ptr<HostMemoryPool> pool, std::byte* block, size_t capacity, size_t bytes)
      : pool_(std::move(pool)), block_(block), capacity_(capacity), bytes_(bytes) {}
  ~PooledBuffer() override { pool_->release(block_, capacity_, bytes_); }
  std::byte* data() override { return block_; }
  size_t bytes() const override { return bytes_; }

 private:
  std::shared_ptr<HostMemoryPool> pool_;  // outlives its buffers
  std::byte* block_;
  size_t capacity_;
  size_t bytes_;
};

std::shared_ptr<HostMemoryPool> HostMemoryPool::create(size_t cacheLimit) {
  return std::shared_ptr<HostMemoryPool>(new HostMemoryPool(cacheLimit));
}

HostMemoryPool::~HostMemoryPool() {
  for (auto& [capacity, block] : freeBlocks_) std::free(block);
}

std::shared_ptr<Buffer> HostMemoryPool::allocate(size_t bytes) {
  size_t capacity = capacityFor(bytes);
  std::byte* block = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (auto it = freeBlocks_.find(capacity); it != freeBlocks_.end()) {
      block = it->second;
      freeBlocks_.erase(it);
      cached_ -= capacity;
    }
  }
  if (!block) block = static_cast<std::byte*>(std::aligned_alloc(64, capacity));
  if (!block) {
    // The cache may be what stands in the way: return it to the system and try once more.
    releaseCache();
    block = static_cast<std::byte*>(std::aligned_alloc(64, capacity));
    if (!block) throw std::bad_alloc();
  }
  try {
    auto buffer = std::make_shared<PooledBuffer>(shared_from_this(), block, capacity, bytes);
    usage_.allocated(bytes);
    return buffer;
  } catch (...) {
    std::free(block);
    throw;
  }
}

void HostMemoryPool::releaseCache() {
  std::unordered_multimap<size_t, std::byte*> blocks;
  {
    std::lock_guard lock(mutex_);
    blocks.swap(freeBlocks_);
    cached_ = 0;
  }
  for (auto& [capacity, block] : blocks) std::free(block);
}

void HostMemoryPool::release(std::byte* block, size_t capacity, size_t bytes) {
  usage_.freed(bytes);
  {
    std::lock_guard lock(mutex_);
    if (cached_ + capacity <= cacheLimit_) {
      try {
        freeBlocks_.emplace(capacity, block);
        cached_ += capacity;
        return;
      } catch (const std::bad_alloc&) {  // called from a destructor: no room to cache it, so free it
      }
    }
  }
  std::free(block);
}

size_t HostMemoryPool::cachedBytes() const {
  std::lock_guard lock(mutex_);
  return cached_;
}

}  // namespace hostir::cpu
