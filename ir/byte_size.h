// Sizes for people: "37.3 GiB" instead of a 20-digit byte count, in every
// message that names a size (allocations, program files, traces).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace hostir {

// 1023 B, 1.5 KiB, 37.3 GiB, ... up to EiB; three significant digits.
std::string formatBytes(uint64_t bytes);

// The bytes of a tensor of `shape` with elements of `elementBytes`,
// saturating at UINT64_MAX instead of wrapping (negative extents count 0).
uint64_t tensorBytes(size_t elementBytes, std::span<const int64_t> shape);

}  // namespace hostir
