#include "executor/cpu/blas_buffers.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <new>

namespace hostir::cpu {
namespace {

// OpenBLAS's BUFFER_SIZE on x86-64, and a margin: for its alignment, and
// for what other threads map between the check and OpenBLAS's mapping (a
// new thread's malloc arena maps 128 MiB for a moment, its stack 8 MiB).
// Without the margin a check that passed could still leave OpenBLAS
// retrying for ever.
constexpr size_t kBufferBytes = size_t{128} << 20;
constexpr size_t kMarginBytes = size_t{288} << 20;
// Below OpenBLAS's table size (NUM_BUFFERS, at least 50), past which it aborts.
constexpr int kMostBuffers = 32;

bool addressSpaceFor(size_t bytes) {
  void* probe = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe == MAP_FAILED) return false;
  ::munmap(probe, bytes);
  return true;
}

}  // namespace

BlasBufferPool& BlasBufferPool::process() {
  static BlasBufferPool pool(blasLibrary());
  return pool;
}

void BlasBufferPool::acquire() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (inUse_ < reserved_ || (reserved_ < kMostBuffers && reserve())) {
      ++inUse_;
      return;
    }
    if (reserved_ == 0) throw std::bad_alloc();
    returned_.wait(lock);
  }
}

void BlasBufferPool::release() {
  {
    std::lock_guard lock(mutex_);
    --inUse_;
  }
  returned_.notify_one();
}

int BlasBufferPool::reserved() {
  std::lock_guard lock(mutex_);
  return reserved_;
}

void BlasBufferPool::reserveUpTo(int buffers) {
  std::lock_guard lock(mutex_);
  while (reserved_ < std::min(buffers, kMostBuffers) && reserve()) {
  }
}

// With mutex_ held, so no GEMM starts meanwhile. The buffer is mapped through
// OpenBLAS now and handed straight back, staying in its table for a GEMM to
// take. Buffers OpenBLAS hands out that it mapped before are free ones (a
// GEMM may have ended without having returned its lease yet): they are held
// until a new one comes. Where the library does not export its allocator,
// the GEMM maps the buffer, a moment after the check.
bool BlasBufferPool::reserve() {
  if (!addressSpaceFor(kBufferBytes + kMarginBytes)) return false;
  if (blas_.memoryAlloc && blas_.memoryFree) {
    std::vector<void*> held;
    do {
      held.push_back(blas_.memoryAlloc(0));
    } while (std::find(mapped_.begin(), mapped_.end(), held.back()) != mapped_.end());
    mapped_.push_back(held.back());
    for (void* buffer : held) blas_.memoryFree(buffer);
  }
  ++reserved_;
  return true;
}

}  // namespace hostir::cpu
