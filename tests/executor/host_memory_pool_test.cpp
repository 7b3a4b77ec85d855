// The CPU backend's host memory pool: blocks are aligned, reused once
// every view of them is gone (never while one lives), and the cache stays
// within its limit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <set>

#include "executor/cpu/host_memory_pool.h"

namespace hostir::cpu {
namespace {

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(HostMemoryPool, BuffersAreAlignedAndHaveTheirSize) {
  auto pool = HostMemoryPool::create();
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{4096}, size_t{1} << 20, size_t{3} << 20 | 5}) {
    auto buffer = pool->allocate(bytes);
    EXPECT_EQ(buffer->bytes(), bytes);
    EXPECT_TRUE(aligned64(buffer->data()));
    std::memset(buffer->data(), 0xab, bytes);  // the whole size is usable (ASan checks)
  }
}

TEST(HostMemoryPool, AFreedBlockIsReusedForTheSameSize) {
  auto pool = HostMemoryPool::create();
  std::byte* first;
  {
    auto buffer = pool->allocate(1 << 20);
    first = buffer->data();
    EXPECT_EQ(pool->cachedBytes(), 0u);
  }
  EXPECT_EQ(pool->cachedBytes(), size_t{1} << 20);
  auto again = pool->allocate(1 << 20);
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool->cachedBytes(), 0u);
}

TEST(HostMemoryPool, ALiveBufferIsNeverHandedOutTwice) {
  auto pool = HostMemoryPool::create();
  std::vector<std::shared_ptr<Buffer>> live;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 8; ++i) live.push_back(pool->allocate(64 * 1024));
    std::set<std::byte*> distinct;
    for (const auto& b : live) distinct.insert(b->data());
    EXPECT_EQ(distinct.size(), live.size());
    live.erase(live.begin(), live.begin() + 4);  // free half, then allocate more
  }
}

TEST(HostMemoryPool, TheCacheStaysWithinItsLimit) {
  auto pool = HostMemoryPool::create(/*cacheLimit=*/3 << 20);
  {
    std::vector<std::shared_ptr<Buffer>> buffers;
    for (int i = 0; i < 5; ++i) buffers.push_back(pool->allocate(1 << 20));
  }
  EXPECT_EQ(pool->cachedBytes(), size_t{3} << 20);
}

TEST(HostMemoryPool, BuffersOutliveThePoolHandle) {
  std::shared_ptr<Buffer> buffer;
  {
    auto pool = HostMemoryPool::create();
    buffer = pool->allocate(256);
  }
  std::memset(buffer->data(), 1, 256);  // the pool lives while its buffers do
  buffer.reset();
}

TEST(HostMemoryPool, ASizeNoRoundingCanHoldIsABadAllocNotATinyBuffer) {
  auto pool = HostMemoryPool::create();
  // Rounded up to whole pages, these wrap around to almost nothing.
  for (size_t bytes : {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() - 100})
    EXPECT_THROW(pool->allocate(bytes), std::bad_alloc) << bytes;
  auto buffer = pool->allocate(4096);
  EXPECT_EQ(buffer->bytes(), 4096u);
  std::memset(buffer->data(), 0xcd, 4096);
}

TEST(HostMemoryPool, AFailedAllocationReturnsTheCacheAndLeavesThePoolUsable) {
  auto pool = HostMemoryPool::create();
  std::byte* block;
  {
    auto buffer = pool->allocate(1 << 20);
    block = buffer->data();
  }
  ASSERT_EQ(pool->cachedBytes(), size_t{1} << 20);
  // 4 TiB: more than this machine has. The cache is given back to the
  // system before the pool gives up.
  EXPECT_THROW(pool->allocate(size_t{1} << 42), std::bad_alloc);
  EXPECT_EQ(pool->cachedBytes(), 0u);
  auto again = pool->allocate(1 << 20);
  std::memset(again->data(), 0x5a, 1 << 20);
  {
    auto other = pool->allocate(1 << 20);
    EXPECT_NE(other->data(), again->data());
  }
  EXPECT_EQ(pool->cachedBytes(), size_t{1} << 20);
  (void)block;
}

}  // namespace
}  // namespace hostir::cpu
