#include "executor/cpu/cpu_constants.h"

#include <array>
#include <cstring>

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

}  // namespace

void fill(const KernelCall& call) {
  const TensorView& out = call.operand(operands::Fill::type);
  const size_t size = dtypeSize(out.dtype);
  // The value in out's dtype once, then its bytes everywhere.
  std::array<std::byte, 8> element{};
  store<double>(out.dtype, element.data(), call.scalars[operands::Fill::value]);
  forEachRow<1>({&out}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1) return fillContiguous(ptrs[0], n, element.data(), size);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(ptrs[0] + i * inner[0] * static_cast<int64_t>(size), element.data(), size);
  });
}

void iota(const KernelCall& call) {
  const TensorView& out = call.operand(operands::Iota::type);
  if (out.numel() == 0) return;
  const auto axis = static_cast<size_t>(call.integer(operands::Iota::axis));
  const auto size = static_cast<int64_t>(dtypeSize(out.dtype));
  // Row-major over out's shape, each element's index kept per axis.
  std::array<int64_t, kMaxTensorRank> index{};
  const int64_t total = out.numel();
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < out.rank(); ++d) offset += index[d] * out.strides[d];
    store<double>(out.dtype, out.data() + offset * size, out.rank() ? static_cast<double>(index[axis]) : 0.0);
    for (size_t d = out.rank(); d-- > 0;) {
      if (++index[d] < out.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace hostir::cpu
