// The CPU backend's constants: fill and iota write every element of a new
// tensor (the one in their type slot, operands::Fill::type), of any dtype.
#include "executor/cpu/cpu_kernels.h"

#include <array>
#include <cstring>
#include <vector>

#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {

namespace {

// `count` contiguous elements of `size` bytes, each `element`: 64 bytes of
// the pattern at a time (GCC's -O2 leaves a fill loop unvectorized).
void fillContiguous(std::byte* to, int64_t count, const std::byte* element, size_t size) {
  constexpr size_t kBlock = 64;  // a multiple of every element size
  std::array<std::byte, kBlock> block;
  for (size_t at = 0; at < kBlock; at += size) std::memcpy(block.data() + at, element, size);
  size_t bytes = static_cast<size_t>(count) * size;
  for (; bytes >= kBlock; bytes -= kBlock, to += kBlock) std::memcpy(to, block.data(), kBlock);
  std::memcpy(to, block.data(), bytes);
}

// `count` elements `stride` elements apart, each `element`.
void fillRow(std::byte* to, int64_t count, int64_t stride, const std::byte* element, size_t size) {
  if (stride == 1) return fillContiguous(to, count, element, size);
  for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * stride * static_cast<int64_t>(size), element, size);
}

}  // namespace

// Every element = value (rounded to the dtype; i32 takes it truncated).
template <>
void familyKernel<KernelFamily::Fill>(GemmKind, const KernelCall& call) {
  const TensorView& out = call.operand(operands::Fill::type);
  const size_t size = dtypeSize(out.dtype);
  // The value in out's dtype once, then its bytes everywhere.
  std::array<std::byte, 8> element{};
  store<double>(out.dtype, element.data(), call.scalars[operands::Fill::value]);
  forEachRow<1>({&out}, [&](auto ptrs, int64_t n, auto inner) { fillRow(ptrs[0], n, inner[0], element.data(), size); });
}

// Every element = its index along the axis.
template <>
void familyKernel<KernelFamily::Iota>(GemmKind, const KernelCall& call) {
  const TensorView& out = call.operand(operands::Iota::type);
  if (out.numel() == 0) return;
  const auto axis = static_cast<size_t>(call.integer(operands::Iota::axis));
  const size_t size = dtypeSize(out.dtype), rank = out.rank();
  if (rank == 0) return store<double>(out.dtype, out.data(), 0.0);
  // Row by row along the last axis: 0, 1, ... when it is the axis (that
  // row made once), else one value, the row's index along the axis.
  const int64_t cols = out.shape[rank - 1], stride = out.strides[rank - 1];
  std::vector<std::byte> counting;
  if (axis == rank - 1) {
    counting.resize(static_cast<size_t>(cols) * size);
    for (int64_t j = 0; j < cols; ++j) store<double>(out.dtype, counting.data() + j * size, static_cast<double>(j));
  }
  forEachIndex(out.shape, rank - 1, [&](const auto& index) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < rank; ++d) offset += index[d] * out.strides[d];
    std::byte* to = out.data() + offset * static_cast<int64_t>(size);
    if (axis == rank - 1 && stride == 1) {
      std::memcpy(to, counting.data(), counting.size());
    } else if (axis == rank - 1) {
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(to + j * stride * static_cast<int64_t>(size), counting.data() + j * size, size);
    } else {
      std::array<std::byte, 8> element{};
      store<double>(out.dtype, element.data(), static_cast<double>(index[axis]));
      fillRow(to, cols, stride, element.data(), size);
    }
  });
}

}  // namespace hostir::cpu
