// Runtime tensors: a view (dtype, shape, strides, offset) into a buffer the
// backend allocated. Views share their buffer; the buffer lives until the
// last view and the last operation that uses it are gone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace hostir {

inline constexpr size_t kMaxTensorRank = 8;

// Memory owned by a backend (host memory for the CPU, device memory for CUDA).
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::byte* data() = 0;
  virtual size_t bytes() const = 0;
};

// Memory someone else owns (a host tensor, an upload's source), seen as a
// Buffer for the span of one call; it must outlive every view of it.
class BorrowedBuffer : public Buffer {
 public:
  BorrowedBuffer(const void* data, size_t bytes)
      : data_(static_cast<std::byte*>(const_cast<void*>(data))), bytes_(bytes) {}
  std::byte* data() override { return data_; }
  size_t bytes() const override { return bytes_; }

 private:
  std::byte* data_;
  size_t bytes_;
};

// Fixed-capacity dims, so building a view on the hot path never allocates.
struct Dims {
  std::array<int64_t, kMaxTensorRank> values{};
  size_t size = 0;

  Dims() = default;
  Dims(std::initializer_list<int64_t> list);
  explicit Dims(const std::vector<int64_t>& v);
  int64_t& operator[](size_t i) { return values[i]; }
  int64_t operator[](size_t i) const { return values[i]; }
  // One more dim; the caller keeps within kMaxTensorRank.
  void push_back(int64_t extent) { values[size++] = extent; }
  const int64_t* begin() const { return values.data(); }
  const int64_t* end() const { return values.data() + size; }
  std::vector<int64_t> vector() const { return {begin(), end()}; }
  // Inline, element by element: views are compared on every issued
  // operation (overlapOf), and a call to memcmp for a few dims costs more
  // than the comparison.
  friend bool operator==(const Dims& a, const Dims& b) {
    if (a.size != b.size) return false;
    for (size_t i = 0; i < a.size; ++i)
      if (a.values[i] != b.values[i]) return false;
    return true;
  }
};

struct TensorView {
  std::shared_ptr<Buffer> buffer;
  DType dtype = DType::F32;
  Dims shape;
  Dims strides;        // in elements
  int64_t offset = 0;  // in elements

  // A row-major view of a whole buffer.
  static TensorView contiguous(std::shared_ptr<Buffer> buffer, DType dtype, const Dims& shape);

  size_t rank() const { return shape.size; }
  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * dtypeSize(dtype); }
  bool isContiguous() const;
  std::byte* data() const { return buffer->data() + offset * static_cast<int64_t>(dtypeSize(dtype)); }

  // Chunk `index` of `chunks` along `axis`: size ceildiv(extent, chunks), the last may be smaller or empty.
  TensorView chunk(size_t axis, int64_t index, int64_t chunks) const;
  // The same elements, row-major with the dims `shape` (as many elements);
  // the view must be contiguous (the verifier's reshape check).
  TensorView reshaped(const Dims& shape) const;
  std::string describe() const;  // "f32[4, 8] strides [16, 1] offset 32"
};

Dims rowMajorStrides(const Dims& shape);

// N views of one shape, with adjacent dimensions merged wherever every view
// lays them out contiguously: a row-major [R, 8] is one row of 8R elements,
// not R rows of 8. Kernels walk this layout row by row; the cost model
// prices a copy by its innermost row.
template <size_t N>
struct MergedLayout {
  Dims shape;
  std::array<Dims, N> strides;
};
template <size_t N>
MergedLayout<N> mergeContiguousDims(const std::array<const TensorView*, N>& views) {
  MergedLayout<N> merged;
  const Dims& shape = views[0]->shape;
  // Innermost first, then reversed.
  std::array<int64_t, kMaxTensorRank> extents{};
  std::array<std::array<int64_t, kMaxTensorRank>, N> strides{};
  size_t count = 0;
  for (size_t d = shape.size; d-- > 0;) {
    bool joins = count > 0;
    for (size_t v = 0; v < N && joins; ++v) joins = views[v]->strides[d] == extents[count - 1] * strides[v][count - 1];
    if (joins) {
      extents[count - 1] *= shape[d];
      continue;
    }
    extents[count] = shape[d];
    for (size_t v = 0; v < N; ++v) strides[v][count] = views[v]->strides[d];
    ++count;
  }
  merged.shape.size = count;
  for (size_t v = 0; v < N; ++v) merged.strides[v].size = count;
  for (size_t i = 0; i < count; ++i) {
    merged.shape[i] = extents[count - 1 - i];
    for (size_t v = 0; v < N; ++v) merged.strides[v][i] = strides[v][count - 1 - i];
  }
  return merged;
}

// A view's place in its buffer's row-major index space. Views keep the
// strides of the tensor they were cut from (shard_by_stream changes only
// the offset and the shape), so the base extents follow from the strides,
// and the buffer's size for the outermost one. The race and initialization
// analyses and the evaluator's overlap test all read views this way.
struct ViewPlacement {
  Dims start;       // the view's first index along each dimension
  Dims baseExtent;  // the buffer's extent along each dimension (at least start + shape)
};
ViewPlacement placementOf(const TensorView& view);

// How the elements of two views relate: none in common (other buffers, or
// disjoint parts of one), the very same elements in the same order, or any
// other sharing (a partial overlap, or views of one buffer laid out
// differently).
enum class ViewOverlap { Disjoint, Identical, Partial };
ViewOverlap overlapOf(const TensorView& a, const TensorView& b);

}  // namespace hostir
