// The CUDA backend's elementwise kernels on strided views: copy (also the
// pack and unpack of collectives, and the bias broadcast of linear),
// zero-fill, and the elementwise computations (add, sub, mul, relu, silu,
// gelu, scale, cast; f16 and bf16 computed in f32, as on the CPU), found by
// their op table name through elementwiseKernel; and the contiguous
// reductions of the copy-engine communicator. Shapes and strides travel by
// value in a small struct, so a launch allocates nothing. (This file is
// C++17 for nvcc, so it names operations by their op table name rather
// than by OpKind.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda {

// Each launcher enqueues one kernel on `stream` (nothing for an empty
// layout) and returns the launch's status.

// dst = src, elements of `elementSize` bytes (2, 4 or 8); operand 0 is dst, 1 is src.
cudaError_t launchCopy(void* dst, const void* src, size_t elementSize, const ElementwiseLayout& layout,
                       cudaStream_t stream);

// The operands of one elementwise computation. Operand 0 of its layout is
// `out`, then each input in the order of the operation's signature (an
// input broadcast along a dim has stride 0 there).
struct ElementwiseOperands {
  DType dtype = DType::F32;       // out's, and every input's but cast's
  DType inputDtype = DType::F32;  // the first input's: what cast converts from
  void* out = nullptr;
  const void* inputs[3] = {};
  double parameter = 0;  // the operation's FLOAT attribute (scale's factor), if any
};
// out = f(inputs...), elementwise.
using ElementwiseLaunch = cudaError_t (*)(const ElementwiseOperands& operands, const ElementwiseLayout& layout,
                                          cudaStream_t stream);
// The launcher of the elementwise computation the op table calls `name`
// ("add"), or null when there is none; a computation's kernel and its entry
// in this lookup both live in cuda_kernels.cu.
ElementwiseLaunch elementwiseKernel(std::string_view name);
// dst = 0; operand 0 is dst.
cudaError_t launchZero(void* dst, size_t elementSize, const ElementwiseLayout& layout, cudaStream_t stream);

// The copy-engine communicator's reductions, on contiguous buffers.
enum class DeviceReduction { Sum, Prod, Min, Max };
// acc[i] = acc[i] op in[i] (f16 and bf16 combined in f32; min and max return
// NaN when either operand is NaN, as the host kernels do).
cudaError_t launchReduce(DType dtype, DeviceReduction op, void* acc, const void* in, size_t count, cudaStream_t stream);
// data[i] = data[i] * factor, the product taken in f64.
cudaError_t launchScale(DType dtype, void* data, size_t count, double factor, cudaStream_t stream);

}  // namespace hostir::cuda
