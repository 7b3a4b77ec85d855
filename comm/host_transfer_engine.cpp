#include "comm/host_transfer_engine.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "comm/reduce.h"

namespace hostir {

void* HostTransferEngine::allocate(size_t bytes, void*) {
  // Aligned for every dtype, as device allocations are.
  void* data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!data && bytes > 0) throw std::bad_alloc();
  return data;
}

void HostTransferEngine::release(void* data, void*) noexcept { std::free(data); }

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
