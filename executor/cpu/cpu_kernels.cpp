#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "executor/cpu/strided_rows.h"
#include "executor/cpu/transposed_copy.h"

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

// A copy into a contiguous dst from a src whose last two axes are swapped
// (its second-to-last axis has unit stride): transpose's layout, one
// [rows, cols] transposed block per index of the leading axes. False when
// the views are laid out otherwise, or the elements are not 2, 4 or 8 bytes.
bool copyLastAxesSwapped(const TensorView& src, const TensorView& dst) {
  const size_t rank = src.rank(), size = dtypeSize(src.dtype);
  if (rank < 2 || !dst.isContiguous() || src.strides[rank - 2] != 1 || src.strides[rank - 1] == 1) return false;
  if (size != 2 && size != 4 && size != 8) return false;
  const int64_t rows = src.shape[rank - 2], cols = src.shape[rank - 1];
  int64_t block = 0;
  forEachIndex(src.shape, rank - 2, [&](const auto& index) {
    int64_t offset = 0;
    for (size_t d = 0; d + 2 < rank; ++d) offset += index[d] * src.strides[d];
    const std::byte* from = src.data() + offset * static_cast<int64_t>(size);
    std::byte* to = dst.data() + block++ * rows * cols * static_cast<int64_t>(size);
    copyTransposed(from, src.strides[rank - 1], to, rows, cols, size);
  });
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

void runKernel(GemmKind gemm, const KernelCall& call) {
  const Kernel kernel = kKernels[static_cast<size_t>(kernelFamilyOf(call.kind))];
  if (!kernel)
    throw std::logic_error(
        fmt::format("internal error: the CPU backend has no kernel for '{}'", signatureOf(call.kind).name));
  kernel(gemm, call);
}

}  // namespace hostir::cpu
