// The result of each computation whose result is not simply shaped like one
// of its operands (ir/ops.h's ResultShape), written once: three layers
// compute it, each with its own shape type, and each instantiates these
// templates:
//
//   ir/symbolic_types.cpp     std::vector<Expr>, dims as expressions
//   ir/verify_compute.cpp     std::vector<int64_t>, the bound check's extents
//   runtime/issue_compute.cpp Dims (runtime/tensor.h), fixed capacity, so
//                             that issuing an operation allocates nothing
//
// Each layer gathers its operands' shapes, integers and flags and calls the
// rule; the verifier checks the operands first (and says what is wrong with
// them), so a rule assumes operands the verifier accepts: ranks as the
// operation needs them, axes in range, and a result of at most
// kMaxTensorRank dims.
//
// A shape type offers an empty value (`Shape{}`), copies, `begin()` and
// `end()`, `operator[]` and `push_back`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir::result_shape {

template <typename Shape>
constexpr size_t rankOf(const Shape& shape) {
  return static_cast<size_t>(shape.end() - shape.begin());
}

// An axis of a tensor of rank `rank`, counted from the end when negative
// (NumPy's -1 is the last).
constexpr int64_t normalizedAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// linear: x [.., K] times w [N, K] transposed is [x's leading dims, N].
template <typename Shape>
Shape linear(const Shape& x, const Shape& w) {
  Shape out = x;
  out[rankOf(out) - 1] = w[0];
  return out;
}

// matmul: op(a) · op(b) is [(B,) M, N], M from a [(B,) M, K] (transposed:
// [(B,) K, M]) and N from b [(B,) K, N] (transposed: [(B,) N, K]), after
// the batch axis that a, b and the result share.
template <typename Shape>
Shape matmul(const Shape& a, const Shape& b, bool transposeA, bool transposeB) {
  const size_t batched = rankOf(a) - 2;
  Shape out = a;
  out[batched] = a[batched + (transposeA ? 1 : 0)];
  out[batched + 1] = b[batched + (transposeB ? 0 : 1)];
  return out;
}

// gather_rows: y = x[idx] on rows is idx.shape + x.shape[1:].
template <typename Shape>
Shape gatherRows(const Shape& x, const Shape& idx) {
  Shape out = idx;
  for (size_t d = 1; d < rankOf(x); ++d) out.push_back(x[d]);
  return out;
}

// sum, mean, max along `axis` (negative: from the end): x without the axis.
template <typename Shape>
Shape reduce(const Shape& x, int64_t axis) {
  const int64_t drop = normalizedAxis(axis, rankOf(x));
  Shape out{};
  for (size_t d = 0; d < rankOf(x); ++d)
    if (static_cast<int64_t>(d) != drop) out.push_back(x[d]);
  return out;
}

// top_k: x with k along the last axis (its values and its indices both).
template <typename Shape, typename Dim>
Shape topK(const Shape& x, const Dim& k) {
  Shape out = x;
  out[rankOf(out) - 1] = k;
  return out;
}

// bucket: [buckets, capacity], whatever idx's shape.
template <typename Shape, typename Dim>
Shape bucket(const Dim& buckets, const Dim& capacity) {
  Shape out{};
  out.push_back(buckets);
  out.push_back(capacity);
  return out;
}

// transpose: x's dims in the order of `axes` (each negative one from the
// end), a permutation of x's axes. The runtime permutes a view's strides
// by the same rule.
template <typename Shape, typename Axes>
Shape transpose(const Shape& x, const Axes& axes) {
  Shape out{};
  for (const int64_t axis : axes) out.push_back(x[static_cast<size_t>(normalizedAxis(axis, rankOf(x)))]);
  return out;
}

// The dtype of the tensor an operation writes into its tensor operand
// `spec` (or defines in its place), for an operation on `dtype`: indices
// are i32 (top_k's, bucket's), log-sum-exps f32; any other its dtype.
constexpr DType writtenDType(const OperandSpec& spec, DType dtype) {
  switch (spec.dtype) {
    case DTypeRule::I32: return DType::I32;
    case DTypeRule::F32: return DType::F32;
    case DTypeRule::Shared:
    case DTypeRule::Any: break;
  }
  return dtype;
}

}  // namespace hostir::result_shape
