#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "executor/cpu/cpu_attention.h"
#include "executor/cpu/cpu_constants.h"
#include "executor/cpu/cpu_elementwise.h"
#include "executor/cpu/cpu_gather.h"
#include "executor/cpu/cpu_gemm.h"
#include "executor/cpu/cpu_reductions.h"
#include "executor/cpu/cpu_routing.h"
#include "executor/cpu/cpu_rows.h"
#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {

void fillZero(const TensorView& t) {
  size_t size = dtypeSize(t.dtype);
  forEachRow<1>({&t}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1) {
      std::memset(ptrs[0], 0, static_cast<size_t>(n) * size);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memset(ptrs[0] + i * inner[0] * static_cast<int64_t>(size), 0, size);
  });
}

namespace {

// dst[i, j] = src[i + j · srcColumnStride] for a row-major [rows, cols]
// dst: a transposed read, in square tiles, so that the lines of src each
// tile reads stay in cache for the tile's other rows; 4-byte elements four
// by four through SSE registers (a 4 x 4 transpose of 4 loads and 4 stores),
// about 3.5 times faster than element by element.
template <typename T>
void copyTransposed(const std::byte* src, int64_t srcColumnStride, std::byte* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 16;
  const auto* from = reinterpret_cast<const T*>(src);
  auto* to = reinterpret_cast<T*>(dst);
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t iEnd = std::min(rows, i0 + kTile), jEnd = std::min(cols, j0 + kTile);
      int64_t i = i0;
#if defined(__SSE2__)
      if constexpr (sizeof(T) == 4) {
        const int64_t jFours = j0 + (jEnd - j0) / 4 * 4;
        for (; i + 4 <= iEnd; i += 4) {
          int64_t j = j0;
          for (; j < jFours; j += 4) {
            const float* at = reinterpret_cast<const float*>(from + i + j * srcColumnStride);
            __m128 a = _mm_loadu_ps(at), b = _mm_loadu_ps(at + srcColumnStride);
            __m128 c = _mm_loadu_ps(at + 2 * srcColumnStride), d = _mm_loadu_ps(at + 3 * srcColumnStride);
            _MM_TRANSPOSE4_PS(a, b, c, d);
            auto* out = reinterpret_cast<float*>(to + i * cols + j);
            _mm_storeu_ps(out, a);
            _mm_storeu_ps(out + cols, b);
            _mm_storeu_ps(out + 2 * cols, c);
            _mm_storeu_ps(out + 3 * cols, d);
          }
          for (int64_t r = i; r < i + 4; ++r)
            for (int64_t k = j; k < jEnd; ++k) to[r * cols + k] = from[r + k * srcColumnStride];
        }
      }
#endif
      for (; i < iEnd; ++i)
        for (int64_t j = j0; j < jEnd; ++j) to[i * cols + j] = from[i + j * srcColumnStride];
    }
}

// A copy into a contiguous dst from a src whose last two axes are swapped
// (its second-to-last axis has unit stride): transpose's layout, one
// [rows, cols] transposed block per index of the leading axes. False when
// the views are laid out otherwise, or the elements are not 2, 4 or 8 bytes.
bool copyLastAxesSwapped(const TensorView& src, const TensorView& dst) {
  const size_t rank = src.rank(), size = dtypeSize(src.dtype);
  if (rank < 2 || !dst.isContiguous() || src.strides[rank - 2] != 1 || src.strides[rank - 1] == 1) return false;
  if (size != 2 && size != 4 && size != 8) return false;
  const int64_t rows = src.shape[rank - 2], cols = src.shape[rank - 1];
  const int64_t blocks = rows * cols == 0 ? 0 : dst.numel() / (rows * cols);
  std::array<int64_t, kMaxTensorRank> index{};  // over the leading axes
  for (int64_t block = 0; block < blocks; ++block) {
    int64_t offset = 0;
    for (size_t d = 0; d + 2 < rank; ++d) offset += index[d] * src.strides[d];
    const std::byte* from = src.data() + offset * static_cast<int64_t>(size);
    std::byte* to = dst.data() + block * rows * cols * static_cast<int64_t>(size);
    if (size == 2) copyTransposed<uint16_t>(from, src.strides[rank - 1], to, rows, cols);
    if (size == 4) copyTransposed<uint32_t>(from, src.strides[rank - 1], to, rows, cols);
    if (size == 8) copyTransposed<uint64_t>(from, src.strides[rank - 1], to, rows, cols);
    for (size_t d = rank - 2; d-- > 0;) {
      if (++index[d] < src.shape[d]) break;
      index[d] = 0;
    }
  }
  return true;
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst) {
  if (copyLastAxesSwapped(src, dst)) return;
  int64_t size = static_cast<int64_t>(dtypeSize(src.dtype));
  forEachRow<2>({&src, &dst}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1 && inner[1] == 1) {
      std::memmove(ptrs[1], ptrs[0], static_cast<size_t>(n * size));
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      std::memmove(ptrs[1] + i * inner[1] * size, ptrs[0] + i * inner[0] * size, static_cast<size_t>(size));
  });
}

namespace {

using Kernel = void (*)(GemmKind, const KernelCall&);

// Every kernel family's kernel, by the family list; a computation's family
// has one by construction, and None none.
constexpr FamilyTable<Kernel> kKernels = {nullptr,
#define HOSTIR_CPU_KERNEL_ENTRY(family) &familyKernel<KernelFamily::family>,
                                          HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_CPU_KERNEL_ENTRY)
#undef HOSTIR_CPU_KERNEL_ENTRY
};
static_assert(coversEveryFamily(kKernels), "a CPU kernel for every kernel family");

}  // namespace

// The kernels of the families whose concept's header names a function of
// their own (cpu_gemm.h, cpu_elementwise.h, ...); a family may instead
// define its familyKernel in its concept's file.
template <>
void familyKernel<KernelFamily::Linear>(GemmKind gemm, const KernelCall& call) {
  linear(gemm, call);
}
template <>
void familyKernel<KernelFamily::Matmul>(GemmKind gemm, const KernelCall& call) {
  matmul(gemm, call);
}
template <>
void familyKernel<KernelFamily::Scale>(GemmKind gemm, const KernelCall& call) {
  scale(gemm, call);
}
template <>
void familyKernel<KernelFamily::RmsNorm>(GemmKind gemm, const KernelCall& call) {
  rmsNorm(gemm, call);
}
template <>
void familyKernel<KernelFamily::Softmax>(GemmKind gemm, const KernelCall& call) {
  softmax(gemm, call);
}
template <>
void familyKernel<KernelFamily::Attention>(GemmKind gemm, const KernelCall& call) {
  attention(gemm, call);
}
template <>
void familyKernel<KernelFamily::MergeAttention>(GemmKind gemm, const KernelCall& call) {
  mergeAttention(gemm, call);
}
template <>
void familyKernel<KernelFamily::GatherRows>(GemmKind, const KernelCall& call) {
  gatherRows(call);
}
template <>
void familyKernel<KernelFamily::ScatterAddRows>(GemmKind gemm, const KernelCall& call) {
  scatterAddRows(gemm, call);
}
template <>
void familyKernel<KernelFamily::Cast>(GemmKind, const KernelCall& call) {
  cast(call);
}
template <>
void familyKernel<KernelFamily::Where>(GemmKind, const KernelCall& call) {
  where(call);
}
template <>
void familyKernel<KernelFamily::Reduce>(GemmKind gemm, const KernelCall& call) {
  reduceAlongAxis(gemm, call);
}
template <>
void familyKernel<KernelFamily::LayerNorm>(GemmKind gemm, const KernelCall& call) {
  layerNorm(gemm, call);
}
template <>
void familyKernel<KernelFamily::Rope>(GemmKind, const KernelCall& call) {
  rope(call);
}
template <>
void familyKernel<KernelFamily::Bucket>(GemmKind, const KernelCall& call) {
  bucket(call);
}
template <>
void familyKernel<KernelFamily::Fill>(GemmKind, const KernelCall& call) {
  fill(call);
}
template <>
void familyKernel<KernelFamily::Iota>(GemmKind, const KernelCall& call) {
  iota(call);
}
template <>
void familyKernel<KernelFamily::TopK>(GemmKind, const KernelCall& call) {
  topK(call);
}

void runKernel(GemmKind gemm, const KernelCall& call) {
  const Kernel kernel = kKernels[static_cast<size_t>(kernelFamilyOf(call.kind))];
  if (!kernel)
    throw std::logic_error(
        fmt::format("internal error: the CPU backend has no kernel for '{}'", signatureOf(call.kind).name));
  kernel(gemm, call);
}

}  // namespace hostir::cpu
