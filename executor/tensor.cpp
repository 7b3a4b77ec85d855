#include "executor/tensor.h"

#include <fmt/format.h>

#include <algorithm>

#include "hostir/shapes.h"
#include "hostir/verifier.h"

namespace hostir {

// The verifier refuses tensors of more dimensions than a view can hold.
static_assert(kMaxTensorRank >= kMaxTensorDims);

Dims::Dims(std::initializer_list<int64_t> list) : size(list.size()) {
  std::copy(list.begin(), list.end(), values.begin());
}

Dims::Dims(const std::vector<int64_t>& v) : size(v.size()) { std::copy(v.begin(), v.end(), values.begin()); }

bool operator==(const Dims& a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

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

TensorView TensorView::chunk(size_t axis, int64_t index, int64_t chunks) const {
  TensorView v = *this;
  int64_t extent = shape[axis];
  v.shape[axis] = chunkExtent(extent, index, chunks);
  v.offset += chunkStart(extent, index, chunks) * strides[axis];
  return v;
}

std::string TensorView::describe() const {
  return fmt::format("{}[{}] strides [{}] offset {}", dtypeName(dtype), fmt::join(shape, ", "),
                     fmt::join(strides, ", "), offset);
}

}  // namespace hostir
