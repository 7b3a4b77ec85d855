#include "executor/cpu/transposed_copy.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HOSTIR_TRANSPOSE_AVX512 1
#endif

namespace hostir::cpu {
namespace {

// A tile: 16 rows of dst by a 64-byte line of columns (16 4-byte or 32
// 2-byte elements), which a tile's store writes whole.
constexpr int64_t kTileRows = 16;
template <typename T>
constexpr int64_t kTileColumns = 64 / static_cast<int64_t>(sizeof(T));

// Destinations at least this large are written with streaming stores: a
// full 64-byte line each, no read of the line first and no eviction of the
// source on its way. Smaller ones stay in cache for whoever reads them next
// (one core's L2 holds a 2 MiB destination; measured, docs/performance.md).
constexpr int64_t kStreamingBytes = int64_t{2} << 20;

// dst's columns [from, to) element by element.
template <typename T>
void columnsOneByOne(const T* src, int64_t srcColumnStride, T* dst, int64_t rows, int64_t cols, int64_t from,
                     int64_t to) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = from; j < to; ++j) dst[i * cols + j] = src[i + j * srcColumnStride];
}

// Tiles in column strips of dst: the source rows a strip reads are
// sequential streams, which the hardware prefetchers follow, where a tile
// row of dst would read 16 lines in 16 pages and wait on each. The strips
// start at column `lead`, the columns before it and the rows and columns
// that fill no tile are copied one by one; `tile` copies a tile or declines.
template <typename Tile, typename T>
void inStrips(const T* src, int64_t srcColumnStride, T* dst, int64_t rows, int64_t cols, int64_t lead, Tile tile) {
  constexpr int64_t kWidth = kTileColumns<T>;
  lead = std::min(lead, cols);
  columnsOneByOne(src, srcColumnStride, dst, rows, cols, 0, lead);
  const int64_t fullRows = rows / kTileRows * kTileRows, stripsEnd = lead + (cols - lead) / kWidth * kWidth;
  for (int64_t j0 = lead; j0 < stripsEnd; j0 += kWidth)
    for (int64_t i0 = 0; i0 < fullRows; i0 += kTileRows) {
      const T* at = src + i0 + j0 * srcColumnStride;
      T* out = dst + i0 * cols + j0;
      if (tile(at, out)) continue;
      for (int64_t i = 0; i < kTileRows; ++i)
        for (int64_t j = 0; j < kWidth; ++j) out[i * cols + j] = at[i + j * srcColumnStride];
    }
  for (int64_t i = fullRows; i < rows; ++i)  // the rows below the last full tile
    for (int64_t j = lead; j < stripsEnd; ++j) dst[i * cols + j] = src[i + j * srcColumnStride];
  columnsOneByOne(src, srcColumnStride, dst, rows, cols, stripsEnd, cols);
}

#if defined(HOSTIR_TRANSPOSE_AVX512)
// GCC 12 warns of the unset vector that avx512fintrin.h passes its masked
// shuffles as their merge source (GCC bug 105593); every lane is written.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// One 16 x 16 tile of 4-byte elements in registers: 16 loads, 64 shuffles
// (pairs, then quads, then 128-bit lanes twice) and 16 stores of a line each.
template <bool Streaming>
__attribute__((target("avx512f"))) void tile16(const uint32_t* in, int64_t stride, uint32_t* to, int64_t cols) {
  const auto* at = reinterpret_cast<const float*>(in);  // moved, never computed on: bits stay
  auto* out = reinterpret_cast<float*>(to);
  __m512 r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(at + k * stride);
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    r[k] = _mm512_shuffle_ps(t[k], t[k + 2], 0x44);
    r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], 0xEE);
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[k + 4], 0x88);
    t[k + 4] = _mm512_shuffle_f32x4(r[k], r[k + 4], 0xDD);
    t[k + 8] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], 0x88);
    t[k + 12] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], 0xDD);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xDD);
    r[k + 4] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], 0x88);
    r[k + 12] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], 0xDD);
  }
  for (int k = 0; k < 16; ++k) {
    if constexpr (Streaming)
      _mm512_stream_ps(out + k * cols, r[k]);
    else
      _mm512_storeu_ps(out + k * cols, r[k]);
  }
}

// 16 x 16 tiles of 2-byte elements, two side by side: per tile 16 loads of
// half a line, 64 shuffles (pairs, quads, octets, then 128-bit lanes), and
// the two tiles' rows joined into 16 stores of a line.
template <bool Streaming>
__attribute__((target("avx512f"))) void tile16x32(const uint16_t* at, int64_t stride, uint16_t* to, int64_t cols) {
  __m256i half[2][16];
  for (int side = 0; side < 2; ++side) {
    __m256i r[16], s[16];
    for (int k = 0; k < 16; ++k)
      r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + (16 * side + k) * stride));
    for (int k = 0; k < 16; k += 2) {  // columns k, k + 1; rows {0-3, 8-11}, {4-7, 12-15}
      s[k] = _mm256_unpacklo_epi16(r[k], r[k + 1]);
      s[k + 1] = _mm256_unpackhi_epi16(r[k], r[k + 1]);
    }
    for (int q = 0; q < 4; ++q)  // columns 4q to 4q + 3; rows from 2g (lane 0) and 2g + 8 (lane 1)
      for (int h = 0; h < 2; ++h) {
        r[4 * q + 2 * h] = _mm256_unpacklo_epi32(s[4 * q + h], s[4 * q + 2 + h]);
        r[4 * q + 2 * h + 1] = _mm256_unpackhi_epi32(s[4 * q + h], s[4 * q + 2 + h]);
      }
    for (int o = 0; o < 2; ++o)  // columns 8o to 8o + 7; row b (lane 0) and b + 8 (lane 1)
      for (int g = 0; g < 4; ++g) {
        s[8 * o + 2 * g] = _mm256_unpacklo_epi64(r[8 * o + g], r[8 * o + 4 + g]);
        s[8 * o + 2 * g + 1] = _mm256_unpackhi_epi64(r[8 * o + g], r[8 * o + 4 + g]);
      }
    for (int b = 0; b < 8; ++b) {
      half[side][b] = _mm256_permute2x128_si256(s[b], s[8 + b], 0x20);
      half[side][b + 8] = _mm256_permute2x128_si256(s[b], s[8 + b], 0x31);
    }
  }
  for (int k = 0; k < 16; ++k) {
    const __m512i row = _mm512_inserti64x4(_mm512_castsi256_si512(half[0][k]), half[1][k], 1);
    auto* out = reinterpret_cast<__m512i*>(to + k * cols);
    if constexpr (Streaming)
      _mm512_stream_si512(out, row);
    else
      _mm512_storeu_si512(out, row);
  }
}

template <typename T, bool Streaming>
__attribute__((target("avx512f"))) void copyTransposedAvx512(const T* from, int64_t srcColumnStride, T* to,
                                                             int64_t rows, int64_t cols, int64_t lead) {
  inStrips(from, srcColumnStride, to, rows, cols, lead, [&](const T* at, T* out) {
    if constexpr (sizeof(T) == 4)
      tile16<Streaming>(at, srcColumnStride, out, cols);
    else
      tile16x32<Streaming>(at, srcColumnStride, out, cols);
    return true;
  });
  if constexpr (Streaming) _mm_sfence();  // the streamed lines before any later write of the kernel's caller
}

template <typename T>
bool copyTransposedWide(const T* from, int64_t srcColumnStride, T* to, int64_t rows, int64_t cols) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512) return false;
  // Streaming needs every tile's rows on line boundaries: rows of whole
  // lines, and the strips led by the columns up to dst's first boundary.
  constexpr auto kSize = static_cast<int64_t>(sizeof(T));
  const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(to) % 64);
  if (cols % kTileColumns<T> == 0 && misaligned % kSize == 0 && rows * cols * kSize >= kStreamingBytes)
    copyTransposedAvx512<T, true>(from, srcColumnStride, to, rows, cols, (64 - misaligned) % 64 / kSize);
  else
    copyTransposedAvx512<T, false>(from, srcColumnStride, to, rows, cols, 0);
  return true;
}
#pragma GCC diagnostic pop
#endif

// Four by four through SSE registers (4 loads, a 4 x 4 transpose, 4 stores).
template <typename T>
bool fourByFour([[maybe_unused]] const T* at, [[maybe_unused]] int64_t stride, [[maybe_unused]] T* out,
                [[maybe_unused]] int64_t cols) {
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 4) {
    for (int64_t i = 0; i < kTileRows; i += 4)
      for (int64_t j = 0; j < kTileColumns<T>; j += 4) {
        const auto* in = reinterpret_cast<const float*>(at + i + j * stride);
        __m128 a = _mm_loadu_ps(in), b = _mm_loadu_ps(in + stride);
        __m128 c = _mm_loadu_ps(in + 2 * stride), d = _mm_loadu_ps(in + 3 * stride);
        _MM_TRANSPOSE4_PS(a, b, c, d);
        auto* o = reinterpret_cast<float*>(out + i * cols + j);
        _mm_storeu_ps(o, a);
        _mm_storeu_ps(o + cols, b);
        _mm_storeu_ps(o + 2 * cols, c);
        _mm_storeu_ps(o + 3 * cols, d);
      }
    return true;
  }
#endif
  return false;
}

template <typename T>
void copyTransposedOf(const std::byte* src, int64_t srcColumnStride, std::byte* dst, int64_t rows, int64_t cols) {
  const auto* from = reinterpret_cast<const T*>(src);
  auto* to = reinterpret_cast<T*>(dst);
#if defined(HOSTIR_TRANSPOSE_AVX512)
  if constexpr (sizeof(T) != 8)
    if (copyTransposedWide(from, srcColumnStride, to, rows, cols)) return;
#endif
  inStrips(from, srcColumnStride, to, rows, cols, 0,
           [&](const T* at, T* out) { return fourByFour(at, srcColumnStride, out, cols); });
}

}  // namespace

void copyTransposed(const std::byte* src, int64_t srcColumnStride, std::byte* dst, int64_t rows, int64_t cols,
                    size_t size) {
  if (size == 2) copyTransposedOf<uint16_t>(src, srcColumnStride, dst, rows, cols);
  if (size == 4) copyTransposedOf<uint32_t>(src, srcColumnStride, dst, rows, cols);
  if (size == 8) copyTransposedOf<uint64_t>(src, srcColumnStride, dst, rows, cols);
}

}  // namespace hostir::cpu
