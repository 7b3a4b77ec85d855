// mergeContiguousDims: the layout the CPU kernels walk and the cost model
// prices copies by.
#include "runtime/tensor.h"

#include <gtest/gtest.h>

namespace hostir {
namespace {

TensorView view(const Dims& shape, const Dims& strides) {
  TensorView t;
  t.shape = shape;
  t.strides = strides;
  return t;
}

TEST(MergeContiguousDims, RowMajorTensorsAreOneRow) {
  TensorView a = view({64, 8, 2}, rowMajorStrides({64, 8, 2}));
  TensorView b = view({64, 8, 2}, rowMajorStrides({64, 8, 2}));
  MergedLayout<2> merged = mergeContiguousDims<2>({&a, &b});
  EXPECT_EQ(merged.shape, (Dims{1024}));
  EXPECT_EQ(merged.strides[0], (Dims{1}));
  EXPECT_EQ(merged.strides[1], (Dims{1}));
}

TEST(MergeContiguousDims, AColumnBlockKeepsItsRowsApart) {
  // Half the columns of [64, 32]: rows of 16 elements, 32 apart; its
  // contiguous source alone would merge, but not beside it.
  TensorView block = view({64, 16}, {32, 1});
  TensorView source = view({64, 16}, rowMajorStrides({64, 16}));
  MergedLayout<2> merged = mergeContiguousDims<2>({&source, &block});
  EXPECT_EQ(merged.shape, (Dims{64, 16}));
  EXPECT_EQ(merged.strides[0], (Dims{16, 1}));
  EXPECT_EQ(merged.strides[1], (Dims{32, 1}));
}

TEST(MergeContiguousDims, MergesOnlyTheDimensionsEveryViewHoldsContiguously) {
  // [4, 8, 16] where the second view is a row chunk of [4, 16, 16]: its
  // inner two dimensions are contiguous, its outer one is not.
  TensorView a = view({4, 8, 16}, rowMajorStrides({4, 8, 16}));
  TensorView b = view({4, 8, 16}, {256, 16, 1});
  MergedLayout<2> merged = mergeContiguousDims<2>({&a, &b});
  EXPECT_EQ(merged.shape, (Dims{4, 128}));
  EXPECT_EQ(merged.strides[0], (Dims{128, 1}));
  EXPECT_EQ(merged.strides[1], (Dims{256, 1}));
}

TEST(MergeContiguousDims, AScalarHasNoDimensions) {
  TensorView s = view(Dims{}, Dims{});
  EXPECT_EQ(mergeContiguousDims<1>({&s}).shape.size, 0u);
}

}  // namespace
}  // namespace hostir
