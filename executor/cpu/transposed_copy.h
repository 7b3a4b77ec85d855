// The copy behind the transpose operation: a contiguous [rows, cols] block
// read from a source whose last two axes are swapped (unit stride down the
// rows), a tile of 16 rows by a 64-byte line at a time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostir::cpu {

// dst[i·cols + j] = src[i + j·srcColumnStride] for elements of `size` bytes
// (2, 4 or 8), copied bit for bit.
void copyTransposed(const std::byte* src, int64_t srcColumnStride, std::byte* dst, int64_t rows, int64_t cols,
                    size_t size);

}  // namespace hostir::cpu
