// The CPU backend's reductions along one axis of a strided view: sum, mean
// and max (the Reduce kernel family), and top_k's selection along the last
// axis. They accumulate in f64 whatever the dtype; max propagates NaN as
// NumPy's does, and top_k ranks NaN above every number (as NumPy's sort
// places it last, after the largest).
#include "executor/cpu/cpu_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "executor/cpu/strided_rows.h"
#include "executor/cpu/vector_loops.h"

namespace hostir::cpu {
namespace {

// Each reduction: its start, how it takes in one element, and what it
// gives for `count` elements.
struct Sum {
  static constexpr double kStart = 0;
  static double add(double total, double v) { return total + v; }
  static double finish(double total, int64_t) { return total; }
  static double row(const float* x, int64_t count) { return vec::sum(x, count); }
};
struct Mean {
  static constexpr double kStart = 0;
  static double add(double total, double v) { return total + v; }
  // An empty axis gives NaN, as NumPy's mean does.
  static double finish(double total, int64_t count) { return total / static_cast<double>(count); }
  static double row(const float* x, int64_t count) { return vec::sum(x, count); }
};
struct Max {
  static constexpr double kStart = -std::numeric_limits<double>::infinity();
  static double add(double largest, double v) {
    if (std::isnan(largest) || std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
    return v > largest ? v : largest;
  }
  static double finish(double largest, int64_t) { return largest; }
  static double row(const float* x, int64_t count) { return vec::maxOrNaN(x, count); }
};

template <typename R>
void reduce(GemmKind, const KernelCall& call) {
  using O = operands::Reduce;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const auto axis = static_cast<size_t>(call.integer(O::axis));
  // x seen with out's shape: the reduced axis taken out, walked per element.
  TensorView rest = x;
  rest.shape.size = 0;
  rest.strides.size = 0;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    rest.shape[rest.shape.size++] = x.shape[d];
    rest.strides[rest.strides.size++] = x.strides[d];
  }
  const int64_t count = x.shape[axis];
  const auto inSize = static_cast<int64_t>(dtypeSize(x.dtype)), outSize = static_cast<int64_t>(dtypeSize(out.dtype));
  const int64_t step = x.strides[axis] * inSize;
  // f32 along a contiguous axis: the vector loops, in f64 as the rest.
  const bool denseF32 = x.dtype == DType::F32 && x.strides[axis] == 1;
  forEachRow<2>({&out, &rest}, [&](auto ptrs, int64_t n, auto inner) {
    for (int64_t i = 0; i < n; ++i) {
      const std::byte* from = ptrs[1] + i * inner[1] * inSize;
      double total = R::kStart;
      if (denseF32)
        total = R::row(reinterpret_cast<const float*>(from), count);
      else
        for (int64_t k = 0; k < count; ++k) total = R::add(total, load<double>(x.dtype, from + k * step));
      store<double>(out.dtype, ptrs[0] + i * inner[0] * outSize, R::finish(total, count));
    }
  });
}

using Kernel = void (*)(GemmKind, const KernelCall&);

// The family's operations, checked at compile time to be exactly the rows
// of ir/op_list.h of the Reduce family.
constexpr std::pair<OpKind, Kernel> kEntries[] = {
    {OpKind::Sum, reduce<Sum>},
    {OpKind::Mean, reduce<Mean>},
    {OpKind::Max, reduce<Max>},
};
constexpr OpTable<Kernel> kReductions = opTable(kEntries);
static_assert(coversExactly(kReductions, KernelFamily::Reduce), "a CPU kernel for every reduction, and only those");

}  // namespace

// out = x reduced along call.integer(operands::Reduce::axis), which out lacks.
template <>
void familyKernel<KernelFamily::Reduce>(GemmKind mode, const KernelCall& call) {
  kReductions[opIndex(call.kind)](mode, call);
}

// cumsum: out[.., k, ..] = x[.., 0, ..] + ... + x[.., k, ..] along the axis,
// summed in f64 as the reductions are; each element of x is read before
// the one of out at its position is written, so x may be out.
template <>
void familyKernel<KernelFamily::Cumsum>(GemmKind, const KernelCall& call) {
  using O = operands::Cumsum;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const auto axis = static_cast<size_t>(call.integer(O::axis));
  // x and out without the axis: one line along it per element.
  TensorView xLines = x, outLines = out;
  xLines.shape.size = xLines.strides.size = outLines.shape.size = outLines.strides.size = 0;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    xLines.shape[xLines.shape.size++] = x.shape[d];
    xLines.strides[xLines.strides.size++] = x.strides[d];
    outLines.shape[outLines.shape.size++] = out.shape[d];
    outLines.strides[outLines.strides.size++] = out.strides[d];
  }
  const int64_t count = x.shape[axis];
  const auto inSize = static_cast<int64_t>(dtypeSize(x.dtype)), outSize = static_cast<int64_t>(dtypeSize(out.dtype));
  const int64_t inStep = x.strides[axis] * inSize, outStep = out.strides[axis] * outSize;
  // f32 along a contiguous axis: vec::cumsum, in f64 too.
  const bool denseF32 =
      x.dtype == DType::F32 && out.dtype == DType::F32 && x.strides[axis] == 1 && out.strides[axis] == 1;
  forEachRow<2>({&outLines, &xLines}, [&](auto ptrs, int64_t n, auto inner) {
    for (int64_t i = 0; i < n; ++i) {
      const std::byte* from = ptrs[1] + i * inner[1] * inSize;
      std::byte* to = ptrs[0] + i * inner[0] * outSize;
      if (denseF32) {
        vec::cumsum(reinterpret_cast<const float*>(from), reinterpret_cast<float*>(to), count);
        continue;
      }
      double total = 0;
      for (int64_t k = 0; k < count; ++k) {
        total += load<double>(x.dtype, from + k * inStep);
        store<double>(out.dtype, to + k * outStep, total);
      }
    }
  });
}

// out and indices: each row's k largest of x, in descending order, ties
// (and NaNs among themselves) to the lower position.
template <>
void familyKernel<KernelFamily::TopK>(GemmKind, const KernelCall& call) {
  using O = operands::TopK;
  const TensorView &x = call.operand(O::x), &out = call.operand(O::out), &indices = call.operand(O::indices);
  const int64_t n = x.shape[x.rank() - 1], k = out.shape[out.rank() - 1];
  const auto inSize = static_cast<int64_t>(dtypeSize(x.dtype)), outSize = static_cast<int64_t>(dtypeSize(out.dtype));
  std::vector<double> row(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  // Whether position a comes before position b: the larger first, NaN above
  // every number, and the lower position first among equals.
  const auto before = [&row](int64_t a, int64_t b) {
    const double u = row[static_cast<size_t>(a)], v = row[static_cast<size_t>(b)];
    if (std::isnan(u) != std::isnan(v)) return std::isnan(u);
    if (!std::isnan(u) && u != v) return u > v;
    return a < b;
  };
  // Small k of contiguous f32: vec::topPositions' one pass.
  const bool small = x.dtype == DType::F32 && k > 0 && k <= vec::kMaxSmallTopK && k <= n;
  std::array<int64_t, vec::kMaxSmallTopK> best{};
  std::vector<int32_t> candidates(small ? static_cast<size_t>(n) + 16 : 0);
  const bool rowsFollow = x.isContiguous();  // each row followed by the next
  forEachLastAxisRow<3>({&x, &out, &indices}, [&](auto ptrs, int64_t, auto inner) {
    if (small && inner[0] == 1) {
      const auto* values = reinterpret_cast<const float*>(ptrs[0]);
      // Past the last row a prefetch never faults.
      vec::topPositions(values, n, k, best.data(), candidates.data(), rowsFollow ? values + n : nullptr);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t from = best[static_cast<size_t>(j)];
        std::memcpy(ptrs[1] + j * inner[1] * outSize, ptrs[0] + from * inSize, static_cast<size_t>(outSize));
        reinterpret_cast<int32_t*>(ptrs[2])[j * inner[2]] = static_cast<int32_t>(from);
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      row[static_cast<size_t>(i)] = load<double>(x.dtype, ptrs[0] + i * inner[0] * inSize);
    std::iota(order.begin(), order.end(), int64_t{0});
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t from = order[static_cast<size_t>(j)];
      // The element itself, not its f64 value: the bits of x, NaN's included.
      std::memcpy(ptrs[1] + j * inner[1] * outSize, ptrs[0] + from * inner[0] * inSize, static_cast<size_t>(outSize));
      reinterpret_cast<int32_t*>(ptrs[2])[j * inner[2]] = static_cast<int32_t>(from);
    }
  });
}

}  // namespace hostir::cpu
