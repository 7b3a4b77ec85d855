#include "ir/byte_size.h"

#include <fmt/format.h>

namespace hostir {

std::string formatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return value < 10    ? fmt::format("{:.2f} {}", value, kUnits[unit])
         : value < 100 ? fmt::format("{:.1f} {}", value, kUnits[unit])
                       : fmt::format("{:.0f} {}", value, kUnits[unit]);
}

uint64_t tensorBytes(size_t elementBytes, std::span<const int64_t> shape) {
  uint64_t bytes = elementBytes;
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(extent < 0 ? 0 : extent), &bytes)) return UINT64_MAX;
  return bytes;
}

}  // namespace hostir
