// Whether two byte ranges share memory: how the communicators tell an
// in-place call, which they support, from a partial overlap, which they
// stage through a private copy.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostir {

inline bool bytesOverlap(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  if (aBytes == 0 || bBytes == 0) return false;
  auto aBegin = reinterpret_cast<uintptr_t>(a);
  auto bBegin = reinterpret_cast<uintptr_t>(b);
  return aBegin < bBegin + bBytes && bBegin < aBegin + aBytes;
}

}  // namespace hostir
