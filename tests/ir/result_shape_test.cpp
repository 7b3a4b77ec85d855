// The result shapes of ir/result_shape.h, written once for the three shape
// types that compute them: each rule gives the shape derived by hand here
// as symbolic dims (std::vector<Expr>), as the bound check's extents
// (std::vector<int64_t>) and as the runtime's fixed-capacity Dims.
#include "ir/result_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ir/expr.h"
#include "runtime/tensor.h"

namespace hostir {
namespace {

// Each shape type, built from extents and read back as extents.
struct Symbolic {
  using Shape = std::vector<Expr>;
  static Shape shape(std::initializer_list<int64_t> extents) {
    Shape dims;
    for (int64_t extent : extents) dims.emplace_back(extent);
    return dims;
  }
  static Expr dim(int64_t extent) { return Expr(extent); }
  static std::vector<int64_t> axes(std::initializer_list<int64_t> list) { return list; }
  static std::vector<int64_t> extents(const Shape& dims) {
    std::vector<int64_t> values;
    for (const Expr& dim : dims) {
      EXPECT_TRUE(dim.literalValue()) << dim.toString() << " is not a literal";
      values.push_back(dim.literalValue().value_or(-1));
    }
    return values;
  }
};

struct Bound {
  using Shape = std::vector<int64_t>;
  static Shape shape(std::initializer_list<int64_t> extents) { return extents; }
  static int64_t dim(int64_t extent) { return extent; }
  static std::vector<int64_t> axes(std::initializer_list<int64_t> list) { return list; }
  static std::vector<int64_t> extents(const Shape& shape) { return shape; }
};

// The runtime reads transpose's axes as Dims too (the instruction's dims).
struct Runtime {
  using Shape = Dims;
  static Shape shape(std::initializer_list<int64_t> extents) { return Dims(extents); }
  static int64_t dim(int64_t extent) { return extent; }
  static Dims axes(std::initializer_list<int64_t> list) { return Dims(list); }
  static std::vector<int64_t> extents(const Shape& shape) { return shape.vector(); }
};

template <typename T>
class ResultShape : public ::testing::Test {};
using ShapeTypes = ::testing::Types<Symbolic, Bound, Runtime>;
TYPED_TEST_SUITE(ResultShape, ShapeTypes);

using Extents = std::vector<int64_t>;

TYPED_TEST(ResultShape, LinearKeepsXsLeadingDimsAndTakesWsFirst) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::linear(T::shape({4, 3, 8}), T::shape({16, 8}))), (Extents{4, 3, 16}));
  EXPECT_EQ(T::extents(result_shape::linear(T::shape({8}), T::shape({5, 8}))), (Extents{5}));
}

TYPED_TEST(ResultShape, MatmulTakesMAndNAsTheTransposesSay) {
  using T = TypeParam;
  // a [M=4, K=8], b [K=8, N=16].
  EXPECT_EQ(T::extents(result_shape::matmul(T::shape({4, 8}), T::shape({8, 16}), false, false)), (Extents{4, 16}));
  // a [K=8, M=4] transposed, b [N=16, K=8] transposed.
  EXPECT_EQ(T::extents(result_shape::matmul(T::shape({8, 4}), T::shape({16, 8}), true, true)), (Extents{4, 16}));
  // Batched: a [B=2, M=3, K=8], b [B=2, N=5, K=8] transposed.
  EXPECT_EQ(T::extents(result_shape::matmul(T::shape({2, 3, 8}), T::shape({2, 5, 8}), false, true)),
            (Extents{2, 3, 5}));
  // Batched: a [B=2, K=8, M=3] transposed, b [B=2, K=8, N=5].
  EXPECT_EQ(T::extents(result_shape::matmul(T::shape({2, 8, 3}), T::shape({2, 8, 5}), true, false)),
            (Extents{2, 3, 5}));
}

TYPED_TEST(ResultShape, ReduceDropsTheAxisCountingNegativeOnesFromTheEnd) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::reduce(T::shape({2, 3, 5}), -1)), (Extents{2, 3}));
  EXPECT_EQ(T::extents(result_shape::reduce(T::shape({2, 3, 5}), -3)), (Extents{3, 5}));
  EXPECT_EQ(T::extents(result_shape::reduce(T::shape({2, 3, 5}), 1)), (Extents{2, 5}));
  EXPECT_EQ(T::extents(result_shape::reduce(T::shape({7}), 0)), (Extents{}));
}

TYPED_TEST(ResultShape, TopKPutsKAlongTheLastAxis) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::topK(T::shape({6, 32}), T::dim(4))), (Extents{6, 4}));
  EXPECT_EQ(T::extents(result_shape::topK(T::shape({2, 3, 9}), T::dim(9))), (Extents{2, 3, 9}));
}

TYPED_TEST(ResultShape, GatherRowsIsIdxsShapeThenXsRowShape) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::gatherRows(T::shape({100, 3, 7}), T::shape({2, 5}))), (Extents{2, 5, 3, 7}));
  EXPECT_EQ(T::extents(result_shape::gatherRows(T::shape({100}), T::shape({6}))), (Extents{6}));
}

TYPED_TEST(ResultShape, TransposePermutesXsDims) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::transpose(T::shape({2, 3, 5}), T::axes({2, 0, 1}))), (Extents{5, 2, 3}));
  EXPECT_EQ(T::extents(result_shape::transpose(T::shape({2, 3, 5}), T::axes({-1, -2, 0}))), (Extents{5, 3, 2}));
}

TYPED_TEST(ResultShape, BucketIsBucketsByCapacity) {
  using T = TypeParam;
  EXPECT_EQ(T::extents(result_shape::bucket<typename T::Shape>(T::dim(4), T::dim(10))), (Extents{4, 10}));
}

// Symbolic dims pass through as the expressions they are.
TEST(ResultShapeSymbolic, DimsKeepTheirNames) {
  const Expr t = Expr::name("T"), k = Expr::name("K"), n = Expr::name("N");
  EXPECT_EQ(result_shape::linear(std::vector<Expr>{t, k}, std::vector<Expr>{n, k}), (std::vector<Expr>{t, n}));
  EXPECT_EQ(result_shape::matmul(std::vector<Expr>{k, t}, std::vector<Expr>{n, k}, true, true),
            (std::vector<Expr>{t, n}));
  EXPECT_EQ(result_shape::topK(std::vector<Expr>{t, n}, Expr::name("top")), (std::vector<Expr>{t, Expr::name("top")}));
}

// An operand whose spec fixes its dtype holds that dtype; any other the operation's.
TEST(ResultShapeDType, IndicesAreI32) {
  const OpSignature& topK = signatureOf(OpKind::TopK);
  EXPECT_EQ(result_shape::writtenDType(topK.operands[operands::TopK::out], DType::F16), DType::F16);
  EXPECT_EQ(result_shape::writtenDType(topK.operands[operands::TopK::indices], DType::F16), DType::I32);
  const OpSignature& bucket = signatureOf(OpKind::Bucket);
  EXPECT_EQ(result_shape::writtenDType(bucket.operands[operands::Bucket::out], DType::F32), DType::I32);
  const OpSignature& gather = signatureOf(OpKind::GatherRows);
  EXPECT_EQ(result_shape::writtenDType(gather.operands[operands::GatherRows::out], DType::BF16), DType::BF16);
}

}  // namespace
}  // namespace hostir
