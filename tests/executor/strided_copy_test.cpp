// cpu::copy from views whose last two axes are swapped (transpose's
// layout, copied in tiles) against an element-by-element reading of the
// strides: every element size, shapes that fill no tile or vector
// evenly, and leading axes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "executor/cpu/cpu_kernels.h"
#include "runtime/tensor.h"

namespace hostir {
namespace {

// Copies x (row-major `shape`) seen with its last two axes swapped into a
// contiguous tensor `offset` bytes into its buffer and checks every element
// against x's strides.
void checkSwappedCopy(DType dtype, const Dims& shape, size_t offset = 0) {
  const size_t size = dtypeSize(dtype);
  TensorView x = TensorView::contiguous(nullptr, dtype, shape);
  std::vector<std::byte> xBytes(x.bytes());
  for (size_t i = 0; i < xBytes.size(); ++i) xBytes[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  x.buffer = std::make_shared<BorrowedBuffer>(xBytes.data(), xBytes.size());
  TensorView swapped = x;
  const size_t rank = shape.size;
  std::swap(swapped.shape[rank - 1], swapped.shape[rank - 2]);
  std::swap(swapped.strides[rank - 1], swapped.strides[rank - 2]);
  TensorView out = TensorView::contiguous(nullptr, dtype, swapped.shape);
  std::vector<std::byte> buffer(out.bytes() + 64 + offset);
  std::byte* outBytes = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) + offset;
  out.buffer = std::make_shared<BorrowedBuffer>(outBytes, out.bytes());
  cpu::copy(swapped, out);

  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < out.numel(); ++linear) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) from += index[d] * swapped.strides[d];
    ASSERT_EQ(std::memcmp(outBytes + linear * static_cast<int64_t>(size),
                          xBytes.data() + from * static_cast<int64_t>(size), size),
              0)
        << dtypeName(dtype) << " element " << linear;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < swapped.shape[d]) break;
      index[d] = 0;
    }
  }
}

TEST(StridedCopy, SwappedLastAxesMatchTheirStrides) {
  for (DType dtype : {DType::F32, DType::I32, DType::F16, DType::BF16, DType::F64})
    for (const Dims& shape :
         {Dims{37, 23}, Dims{16, 16}, Dims{4, 64}, Dims{1, 5}, Dims{64, 48}, Dims{3, 19, 6}, Dims{2, 2, 33, 17}}) {
      SCOPED_TRACE(::testing::Message() << dtypeName(dtype) << " rank " << shape.size);
      checkSwappedCopy(dtype, shape);
    }
}

// Destinations of 2 MiB and more take streaming stores in whole lines, the
// columns before dst's first line boundary copied apart: line-aligned
// destinations and ones 1, 4 and 9 elements past a line, rows that fill
// no tile.
TEST(StridedCopy, LargeCopiesMatchAtEveryAlignment) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Dims& shape : {Dims{2048, 520}, Dims{2080, 513}})
      for (size_t elements : {0, 1, 4, 9}) {
        const size_t offset = elements * dtypeSize(dtype);
        SCOPED_TRACE(::testing::Message()
                     << dtypeName(dtype) << " " << shape[1] << " x " << shape[0] << " at byte " << offset);
        checkSwappedCopy(dtype, shape, offset);
      }
}

}  // namespace
}  // namespace hostir
