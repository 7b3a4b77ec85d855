// The integer rules of shapes, written once: ceildiv, how shard_by_stream
// cuts an axis into chunks, and how a `shard(axis)` declaration splits an
// axis over the ranks. The verifier, the evaluator, expressions and runtime
// views all use these. Header-only and C++17, because runtime/tensor.h
// (included by CUDA sources compiled as C++17) uses it.
#pragma once

#include <cstdint>

namespace hostir {

// ceil(a / b) for a >= 0 and b > 0 (callers check the operands).
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// shard_by_stream(t, axis, index, chunks): every chunk but the last spans
// ceildiv(extent, chunks) elements of the axis; the last ones may be smaller
// or empty. For 0 <= index < chunks.
constexpr int64_t chunkSize(int64_t extent, int64_t chunks) { return ceilDiv(extent, chunks); }

// Where chunk `index` starts along the axis (clamped to the extent).
constexpr int64_t chunkStart(int64_t extent, int64_t index, int64_t chunks) {
  int64_t start = index * chunkSize(extent, chunks);
  return start < extent ? start : extent;
}

// The extent of chunk `index` along the axis.
constexpr int64_t chunkExtent(int64_t extent, int64_t index, int64_t chunks) {
  int64_t size = chunkSize(extent, chunks);
  int64_t rest = extent - index * size;
  return rest < 0 ? 0 : rest < size ? rest : size;
}

// A `shard(axis)` input or output: each of the `world` ranks holds an equal
// block of the axis (the verifier requires `world` to divide the extent).
constexpr int64_t shardExtent(int64_t extent, int64_t world) { return extent / world; }

// Where rank `rank`'s block starts along the sharded axis.
constexpr int64_t shardStart(int64_t extent, int64_t rank, int64_t world) { return rank * shardExtent(extent, world); }

}  // namespace hostir
