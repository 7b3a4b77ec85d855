// The CUDA backend's reductions along one axis: sum, mean and max, cumsum's
// running sums, and
// top_k's selection along the last axis. One thread per output element
// walks the axis, accumulating in f32 (f64 for f64); max propagates NaN as
// NumPy's does. (C++17 for nvcc.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda {

enum class Reduction { Sum, Mean, Max };

// The outputs of a reduction: `outputs` walks out's shape (operand 0 out,
// operand 1 x without the axis); each reads `count` elements of x,
// `axisStride` apart.
struct ReductionLayout {
  ElementwiseLayout outputs;
  int64_t count = 0;
  int64_t axisStride = 0;
};

cudaError_t launchReduction(Reduction reduction, DType dtype, void* out, const void* x, const ReductionLayout& layout,
                            cudaStream_t stream);

// cumsum's lines along the axis: `lines.outputs` walks x's shape without
// the axis (operand 0 out, operand 1 x); each line has `lines.count`
// elements, `lines.axisStride` apart in x and `outAxisStride` in out. One
// thread per line sums it in order, as a reduction does, writing each
// running total.
cudaError_t launchCumsum(DType dtype, void* out, const void* x, const ReductionLayout& lines, int64_t outAxisStride,
                         cudaStream_t stream);

// top_k's rows: `rows` walks the leading dims (operand 0 the values, 1 the
// indices, 2 x); a row of x has `length` elements `xStride` apart, and its
// k results go `outStride` and `indexStride` apart.
struct TopKLayout {
  ElementwiseLayout rows;
  int64_t length = 0;
  int64_t k = 0;
  int64_t xStride = 1;
  int64_t outStride = 1;
  int64_t indexStride = 1;
};

// One thread per row picks the k largest in turn, each the first in the
// order (larger first, NaN above every number, lower position first among
// equals) after the one picked before: no scratch memory, k passes.
cudaError_t launchTopK(DType dtype, void* out, int32_t* indices, const void* x, const TopKLayout& layout,
                       cudaStream_t stream);

}  // namespace hostir::cuda
