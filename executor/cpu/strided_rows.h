// Walking strided views row by row, and one element of any dtype at a
// time: what the CPU kernels share (private to executor/cpu/).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ir/element.h"
#include "runtime/tensor.h"

namespace hostir::cpu {

template <typename Compute>
Compute load(DType dtype, const std::byte* p) {
  return loadElement<Compute>(dtype, p);
}

template <typename Compute>
void store(DType dtype, std::byte* p, Compute value) {
  storeElement<Compute>(dtype, p, value);
}

// Calls visit(index) for every index of shape's first `axes` axes, in
// row-major order: once (all zeros) when `axes` is 0, never when one of
// those extents is 0. `index` holds an entry per axis of shape.
template <typename Visit>
void forEachIndex(const Dims& shape, size_t axes, Visit&& visit) {
  for (size_t d = 0; d < axes; ++d)
    if (shape[d] == 0) return;
  std::array<int64_t, kMaxTensorRank> index{};
  for (;;) {
    visit(std::as_const(index));
    size_t d = axes;
    for (; d > 0; --d) {
      if (++index[d - 1] < shape[d - 1]) break;
      index[d - 1] = 0;
    }
    if (d == 0) return;
  }
}

// Calls row(ptrs, n, innerStrides) for every innermost row of the common
// shape of `views` (that of views[0]), with the dimensions they all hold
// contiguously merged; pointers are to the row's first element, strides in
// elements (0 along an axis a view is broadcast over).
template <size_t N, typename Row>
void forEachRow(const std::array<const TensorView*, N>& views, Row&& row) {
  for (int64_t extent : views[0]->shape)
    if (extent == 0) return;
  const MergedLayout<N> layout = mergeContiguousDims(views);
  const Dims& shape = layout.shape;
  std::array<int64_t, N> inner{};
  for (size_t v = 0; v < N; ++v) inner[v] = shape.size ? layout.strides[v][shape.size - 1] : 1;
  const int64_t length = shape.size ? shape[shape.size - 1] : 1;
  const size_t outer = shape.size ? shape.size - 1 : 0;
  forEachIndex(shape, outer, [&](const auto& index) {
    std::array<std::byte*, N> ptrs{};
    for (size_t v = 0; v < N; ++v) {
      int64_t offset = 0;
      for (size_t d = 0; d < outer; ++d) offset += index[d] * layout.strides[v][d];
      ptrs[v] = views[v]->data() + offset * static_cast<int64_t>(dtypeSize(views[v]->dtype));
    }
    row(ptrs, length, inner);
  });
}

// Calls row(ptrs, n, innerStrides) for every row along the last axis of
// the common shape of `views`, in row-major order, never merging rows:
// the walk of the row operations (rms_norm, softmax), which reduce over it.
template <size_t N, typename Row>
void forEachLastAxisRow(const std::array<const TensorView*, N>& views, Row&& row) {
  const Dims& shape = views[0]->shape;
  if (shape.size == 0) return;
  for (int64_t extent : shape)
    if (extent == 0) return;
  const size_t last = shape.size - 1;
  std::array<int64_t, N> inner{};
  for (size_t v = 0; v < N; ++v) inner[v] = views[v]->strides[last];
  forEachIndex(shape, last, [&](const auto& index) {
    std::array<std::byte*, N> ptrs{};
    for (size_t v = 0; v < N; ++v) {
      int64_t offset = 0;
      for (size_t d = 0; d < last; ++d) offset += index[d] * views[v]->strides[d];
      ptrs[v] = views[v]->data() + offset * static_cast<int64_t>(dtypeSize(views[v]->dtype));
    }
    row(ptrs, shape[last], inner);
  });
}

}  // namespace hostir::cpu
