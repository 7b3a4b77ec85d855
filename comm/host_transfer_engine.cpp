#include "comm/host_transfer_engine.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "comm/reduce.h"

namespace hostir {

HostTransferEngine::HostTransferEngine() {
  // release() is noexcept: keeping a block must not allocate.
  kept_.reserve(kKeptBlocks);
  inUse_.reserve(kKeptBlocks);
}

HostTransferEngine::~HostTransferEngine() {
  for (const Block& block : inUse_) std::free(block.data);
  for (const Block& block : kept_) std::free(block.data);
}

void* HostTransferEngine::allocate(size_t bytes, void*) {
  // The smallest kept block that fits, else a new one, aligned for every
  // dtype as device allocations are.
  auto best = kept_.end();
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if (it->capacity >= bytes && (best == kept_.end() || it->capacity < best->capacity)) best = it;
  Block block{};
  if (best != kept_.end()) {
    block = *best;
    kept_.erase(best);
  } else {
    block.capacity = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    block.data = std::aligned_alloc(64, block.capacity);
    if (!block.data) throw std::bad_alloc();
  }
  inUse_.push_back(block);
  return block.data;
}

void HostTransferEngine::release(void* data, void*) noexcept {
  auto it = std::find_if(inUse_.begin(), inUse_.end(), [data](const Block& b) { return b.data == data; });
  if (it == inUse_.end()) return;
  const Block block = *it;
  inUse_.erase(it);
  if (kept_.size() == kKeptBlocks) {
    // Keep the largest blocks: they are the ones worth not faulting in again.
    auto smallest = std::min_element(kept_.begin(), kept_.end(),
                                     [](const Block& a, const Block& b) { return a.capacity < b.capacity; });
    if (smallest->capacity >= block.capacity) {
      std::free(block.data);
      return;
    }
    std::free(smallest->data);
    kept_.erase(smallest);
  }
  kept_.push_back(block);
}

void HostTransferEngine::copy(void* dst, int, const void* src, int, size_t bytes, void*) {
  std::memcpy(dst, src, bytes);
}

void HostTransferEngine::reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void*) {
  reduceInto(acc, in, count, dtype, op);
}

void HostTransferEngine::scale(void* data, size_t count, DType dtype, double factor, void*) {
  scaleInPlace(data, count, dtype, factor);
}

}  // namespace hostir
