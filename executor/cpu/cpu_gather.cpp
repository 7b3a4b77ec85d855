// The CPU backend's row gather and scatter: gather_rows (y = x[idx] on
// rows, -1 giving a zero row) and scatter_add_rows (y[idx] += src, -1
// skipped, in row-major order of idx). Every index is checked before any
// row moves: one out of range throws IndexOutOfRange, which the backend
// turns into an error at the statement.
#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "executor/cpu/strided_rows.h"
#include "executor/cpu/vector_loops.h"
#include "runtime/index_fault.h"

namespace hostir::cpu {
namespace {

// Calls f(index, rowOffset) for every element of the i32 tensor `idx` in
// row-major order: its value, and the offset (in elements) of the row it
// stands for in `rows`, a tensor whose leading axes are idx's.
template <typename F>
void forEachIndex(const TensorView& idx, const TensorView& rows, F&& f) {
  for (int64_t extent : idx.shape)
    if (extent == 0) return;
  std::array<int64_t, kMaxTensorRank> at{};
  while (true) {
    int64_t idxOffset = 0, rowOffset = rows.offset;
    for (size_t d = 0; d < idx.rank(); ++d) {
      idxOffset += at[d] * idx.strides[d];
      rowOffset += at[d] * rows.strides[d];
    }
    int32_t index;
    std::memcpy(&index, idx.data() + idxOffset * 4, 4);
    f(index, rowOffset);
    size_t d = idx.rank();
    while (d > 0) {
      --d;
      if (++at[d] < idx.shape[d]) break;
      at[d] = 0;
      if (d == 0) return;
    }
    if (idx.rank() == 0) return;
  }
}

// Every index of idx is -1 or a row of a tensor of `rows` rows; else an
// IndexOutOfRange naming the first offender.
void checkIndices(const TensorView& idx, const TensorView& other, int64_t rows) {
  forEachIndex(idx, other, [&](int32_t index, int64_t) {
    if (index < -1 || index >= rows) throw IndexOutOfRange{index, rows};
  });
}

// The row of `t` (its axes from `first` on) that starts at element `offset`.
TensorView rowAt(const TensorView& t, size_t first, int64_t offset) {
  TensorView row = t;
  row.offset = offset;
  row.shape.size = t.rank() - first;
  row.strides.size = t.rank() - first;
  for (size_t d = first; d < t.rank(); ++d) {
    row.shape[d - first] = t.shape[d];
    row.strides[d - first] = t.strides[d];
  }
  return row;
}

bool isContiguous(const TensorView& row) {
  int64_t expected = 1;
  for (size_t d = row.rank(); d-- > 0;) {
    if (row.shape[d] != 1 && row.strides[d] != expected) return false;
    expected *= row.shape[d];
  }
  return true;
}

// dst += src, elementwise over one row, in `Compute`.
template <typename Compute>
void addRow(const TensorView& src, const TensorView& dst) {
  const auto srcSize = static_cast<int64_t>(dtypeSize(src.dtype)), dstSize = static_cast<int64_t>(dtypeSize(dst.dtype));
  forEachRow<2>({&src, &dst}, [&](auto ptrs, int64_t n, auto inner) {
    for (int64_t i = 0; i < n; ++i) {
      std::byte* d = ptrs[1] + i * inner[1] * dstSize;
      store<Compute>(dst.dtype, d,
                     load<Compute>(dst.dtype, d) + load<Compute>(src.dtype, ptrs[0] + i * inner[0] * srcSize));
    }
  });
}

}  // namespace

template <>
void familyKernel<KernelFamily::GatherRows>(GemmKind, const KernelCall& call) {
  using O = operands::GatherRows;
  const TensorView &x = call.operand(O::x), &idx = call.operand(O::idx), &out = call.operand(O::out);
  const int64_t rows = x.shape[0];
  checkIndices(idx, out, rows);
  const size_t rowBytes = static_cast<size_t>(rowAt(x, 1, 0).numel()) * dtypeSize(x.dtype);
  forEachIndex(idx, out, [&](int32_t index, int64_t outOffset) {
    TensorView dst = rowAt(out, idx.rank(), outOffset);
    if (index < 0) {
      fillZero(dst);
      return;
    }
    TensorView src = rowAt(x, 1, x.offset + index * x.strides[0]);
    if (isContiguous(src) && isContiguous(dst)) {
      std::memcpy(dst.data(), src.data(), rowBytes);
      return;
    }
    copy(src, dst);
  });
}

// Adds in f32 (f64 for f64, and in the serial reference).
template <>
void familyKernel<KernelFamily::ScatterAddRows>(GemmKind mode, const KernelCall& call) {
  using O = operands::ScatterAddRows;
  const TensorView &src = call.operand(O::src), &idx = call.operand(O::idx), &out = call.operand(O::out);
  checkIndices(idx, src, out.shape[0]);
  const bool inF64 = mode == GemmKind::ReferenceF64 || out.dtype == DType::F64;
  forEachIndex(idx, src, [&](int32_t index, int64_t srcOffset) {
    if (index < 0) return;
    const TensorView from = rowAt(src, idx.rank(), srcOffset);
    const TensorView to = rowAt(out, 1, out.offset + index * out.strides[0]);
    if (!inF64 && out.dtype == DType::F32 && src.dtype == DType::F32 && isContiguous(from) && isContiguous(to)) {
      // The MoE combine's hot loop: whole rows, vectorized.
      auto* row = reinterpret_cast<float*>(to.data());
      vec::binary(vec::Binary::Add, row, reinterpret_cast<const float*>(from.data()), 1, row, to.numel());
      return;
    }
    if (inF64)
      addRow<double>(from, to);
    else
      addRow<float>(from, to);
  });
}

}  // namespace hostir::cpu
