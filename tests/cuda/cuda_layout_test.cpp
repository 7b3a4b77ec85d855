// The elementwise layouts of the CUDA kernels (host code, no device
// needed): dropping unit dims and merging dims must visit exactly the
// elements of the original views, in the same order, with the same pairing
// of operands, and dense or pitched copies must be recognized as such.
#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

#include "executor/cuda/cuda_layout.h"

namespace hostir::cuda {
namespace {

using Offsets = std::vector<std::vector<int64_t>>;  // per element, per operand

// Every element's offsets over `shape` in row-major order.
Offsets visit(const Dims& shape, const std::vector<Dims>& strides) {
  Offsets out;
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  for (int64_t linear = 0; linear < numel; ++linear) {
    std::vector<int64_t> offsets(strides.size(), 0);
    int64_t rest = linear;
    for (size_t d = shape.size; d-- > 0;) {
      const int64_t index = rest % shape[d];
      rest /= shape[d];
      for (size_t o = 0; o < strides.size(); ++o) offsets[o] += index * strides[o][d];
    }
    out.push_back(offsets);
  }
  return out;
}

Offsets visit(const ElementwiseLayout& layout) {
  Dims shape;
  shape.size = static_cast<size_t>(layout.rank);
  std::vector<Dims> strides(static_cast<size_t>(layout.operands));
  for (int d = 0; d < layout.rank; ++d) shape[static_cast<size_t>(d)] = layout.shape[d];
  for (int o = 0; o < layout.operands; ++o) {
    strides[static_cast<size_t>(o)].size = shape.size;
    for (int d = 0; d < layout.rank; ++d)
      strides[static_cast<size_t>(o)][static_cast<size_t>(d)] = layout.strides[o][d];
  }
  if (layout.numel == 0) return {};
  return visit(shape, strides);
}

TEST(CudaLayout, WholeTensorsMergeIntoOneDenseDim) {
  Dims shape{3, 4, 5};
  ElementwiseLayout layout = elementwiseLayout(shape, {rowMajorStrides(shape), rowMajorStrides(shape)});
  EXPECT_EQ(layout.rank, 1);
  EXPECT_EQ(layout.numel, 60);
  EXPECT_TRUE(isDense(layout, 0) && isDense(layout, 1));
}

TEST(CudaLayout, ColumnChunksArePitchedRows) {
  // Chunk 1 of 2 along axis 1 of [6, 8] into a [6, 4] tensor.
  TensorView whole = TensorView::contiguous(nullptr, DType::F32, Dims{6, 8});
  TensorView chunk = whole.chunk(1, 1, 2);
  ElementwiseLayout layout = elementwiseLayout(chunk.shape, {rowMajorStrides(chunk.shape), chunk.strides});
  ASSERT_EQ(layout.rank, 2);
  EXPECT_TRUE(isPitched(layout));
  EXPECT_FALSE(isDense(layout, 1));
  EXPECT_EQ(layout.strides[1][0], 8);
}

TEST(CudaLayout, BroadcastOperandsAreNeitherDenseNorPitched) {
  // A bias [N] broadcast over the rows of [M, N].
  Dims shape{5, 7};
  Dims bias;
  bias.size = 2;
  bias[1] = 1;
  ElementwiseLayout layout = elementwiseLayout(shape, {rowMajorStrides(shape), bias});
  ASSERT_EQ(layout.rank, 2);
  EXPECT_FALSE(isPitched(layout));
  EXPECT_EQ(visit(layout), visit(shape, {rowMajorStrides(shape), bias}));
}

TEST(CudaLayout, EmptyAndSingleElementViews) {
  Dims empty{3, 0, 2};
  EXPECT_EQ(elementwiseLayout(empty, {rowMajorStrides(empty)}).numel, 0);
  Dims one{1, 1, 1};
  ElementwiseLayout layout = elementwiseLayout(one, {Dims{7, 9, 11}, rowMajorStrides(one)});
  EXPECT_EQ(layout.rank, 0);
  EXPECT_EQ(layout.numel, 1);
  EXPECT_EQ(visit(layout), (Offsets{{0, 0}}));
}

// Chunks of chunks of random tensors, copied into contiguous tensors and
// added with a third view: the merged layout visits the same offsets.
TEST(CudaLayout, RandomViewsVisitTheSameElements) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 500; ++trial) {
    Dims shape;
    shape.size = static_cast<size_t>(pick(1, 5));
    for (size_t d = 0; d < shape.size; ++d) shape[d] = pick(1, 4);
    auto randomView = [&] {
      TensorView v = TensorView::contiguous(nullptr, DType::F32, shape);
      for (int k = pick(0, 2); k > 0; --k) {
        auto axis = static_cast<size_t>(pick(0, static_cast<int>(shape.size) - 1));
        int64_t chunks = pick(1, 3);
        v = v.chunk(axis, pick(0, static_cast<int>(chunks) - 1), chunks);
      }
      return v;
    };
    TensorView a = randomView();
    // Operands of the same shape: views of bigger tensors shaped like `a`.
    Dims bigger = a.shape;
    for (size_t d = 0; d < bigger.size; ++d) bigger[d] += pick(0, 2);
    TensorView b = TensorView::contiguous(nullptr, DType::F32, bigger);
    b.shape = a.shape;
    Dims out = rowMajorStrides(a.shape);
    std::vector<Dims> strides = {out, a.strides, b.strides};
    ElementwiseLayout layout = elementwiseLayout(a.shape, {out, a.strides, b.strides});
    EXPECT_EQ(visit(layout), visit(a.shape, strides)) << a.describe();
  }
}

}  // namespace
}  // namespace hostir::cuda
