#include "runtime/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "ir/shapes.h"
#include "ir/verifier.h"

namespace hostir {

// The verifier refuses tensors of more dimensions than a view can hold.
static_assert(kMaxTensorRank >= kMaxTensorDims);

Dims::Dims(std::initializer_list<int64_t> list) : size(list.size()) {
  std::copy(list.begin(), list.end(), values.begin());
}

Dims::Dims(const std::vector<int64_t>& v) : size(v.size()) { std::copy(v.begin(), v.end(), values.begin()); }

Dims rowMajorStrides(const Dims& shape) {
  Dims strides;
  strides.size = shape.size;
  int64_t stride = 1;
  for (size_t i = shape.size; i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

TensorView TensorView::contiguous(std::shared_ptr<Buffer> buffer, DType dtype, const Dims& shape) {
  TensorView v;
  v.buffer = std::move(buffer);
  v.dtype = dtype;
  v.shape = shape;
  v.strides = rowMajorStrides(shape);
  return v;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

bool TensorView::isContiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size; i-- > 0;) {
    if (shape[i] == 1) continue;  // the stride of a unit dim never matters
    if (strides[i] != expected) return numel() == 0;
    expected *= shape[i];
  }
  return true;
}

TensorView TensorView::reshaped(const Dims& newShape) const {
  TensorView v = *this;
  v.shape = newShape;
  v.strides = rowMajorStrides(newShape);
  if (v.numel() != numel() || (numel() != 0 && !isContiguous()))
    throw std::logic_error(fmt::format("internal error: {} reshaped to {} dims", describe(), newShape.size));
  return v;
}

TensorView TensorView::chunk(size_t axis, int64_t index, int64_t chunks) const {
  TensorView v = *this;
  int64_t extent = shape[axis];
  v.shape[axis] = chunkExtent(extent, index, chunks);
  v.offset += chunkStart(extent, index, chunks) * strides[axis];
  return v;
}

ViewPlacement placementOf(const TensorView& v) {
  ViewPlacement p;
  const size_t rank = v.rank();
  p.start.size = p.baseExtent.size = rank;
  const int64_t elements = v.buffer ? static_cast<int64_t>(v.buffer->bytes() / dtypeSize(v.dtype)) : v.numel();
  int64_t offset = v.offset;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t stride = v.strides[d];
    const int64_t extent =
        d == 0 ? (stride > 0 ? elements / stride : v.shape[0]) : (stride > 0 ? v.strides[d - 1] / stride : v.shape[d]);
    p.start[d] = stride > 0 ? offset / stride : 0;
    if (stride > 0) offset %= stride;
    p.baseExtent[d] = std::max(extent, p.start[d] + v.shape[d]);
  }
  return p;
}

ViewOverlap overlapOf(const TensorView& a, const TensorView& b) {
  if (!a.buffer || a.buffer != b.buffer || a.numel() == 0 || b.numel() == 0) return ViewOverlap::Disjoint;
  if (a.dtype == b.dtype && a.offset == b.offset && a.shape == b.shape && a.strides == b.strides)
    return ViewOverlap::Identical;
  if (a.dtype != b.dtype || a.rank() != b.rank() || !(a.strides == b.strides)) return ViewOverlap::Partial;
  // Cut from one tensor: boxes of its index space, sharing elements when
  // they intersect along every dimension.
  const ViewPlacement pa = placementOf(a), pb = placementOf(b);
  for (size_t d = 0; d < a.rank(); ++d)
    if (std::max(pa.start[d], pb.start[d]) >= std::min(pa.start[d] + a.shape[d], pb.start[d] + b.shape[d]))
      return ViewOverlap::Disjoint;
  return ViewOverlap::Partial;
}

std::string TensorView::describe() const {
  return fmt::format("{}[{}] strides [{}] offset {}", dtypeName(dtype), fmt::join(shape, ", "),
                     fmt::join(strides, ", "), offset);
}

}  // namespace hostir
