// Device helpers the CUDA backend's kernel files share (included by .cu
// files only): launch sizes, the offsets of an element of a strided layout,
// the arithmetic type of each storage type (f16 and bf16 compute in f32, as
// on the CPU), and block-wide reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda::device {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; larger tensors loop (grid stride).
constexpr int64_t kMaxBlocks = 65536;

inline unsigned blocksFor(int64_t numel) {
  return static_cast<unsigned>(std::clamp<int64_t>((numel + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// One block per item (a row, an index entry), grid stride beyond kMaxBlocks.
inline unsigned blocksForItems(int64_t items) {
  return static_cast<unsigned>(std::clamp<int64_t>(items, 1, kMaxBlocks));
}

// Threads for a block that walks `length` elements: a whole number of
// warps (the block reductions need that), at most kThreads.
inline unsigned threadsFor(int64_t length) {
  return static_cast<unsigned>(std::clamp<int64_t>((length + 31) / 32 * 32, 32, kThreads));
}

// A launch reports its errors through cudaGetLastError, which also holds
// the error of an earlier call whose status was deliberately ignored (a
// free in a destructor): drop that one so the launch reports its own.
// Sticky errors stay and are reported, as they should be.
inline void clearEarlierError() { (void)cudaGetLastError(); }

// Element `linear` (row-major over the layout's shape) of every operand.
template <int Operands>
__device__ __forceinline__ void offsetsOf(const ElementwiseLayout& layout, int64_t linear,
                                          int64_t (&offsets)[Operands]) {
#pragma unroll
  for (int o = 0; o < Operands; ++o) offsets[o] = 0;
  if (layout.rank == 1) {  // the common, coalesced case: no division
#pragma unroll
    for (int o = 0; o < Operands; ++o) offsets[o] = linear * layout.strides[o][0];
    return;
  }
#pragma unroll
  for (int d = kMaxLayoutRank - 1; d >= 0; --d) {
    if (d >= layout.rank) continue;
    const int64_t extent = layout.shape[d];
    const int64_t index = linear % extent;
    linear /= extent;
#pragma unroll
    for (int o = 0; o < Operands; ++o) offsets[o] += index * layout.strides[o][d];
  }
}

// Arithmetic type per storage type: the half types compute in f32.
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ double widen(double v) { return v; }
__device__ __forceinline__ void narrow(float v, __half* out) { *out = __float2half_rn(v); }
__device__ __forceinline__ void narrow(float v, __nv_bfloat16* out) { *out = __float2bfloat16_rn(v); }
__device__ __forceinline__ void narrow(float v, float* out) { *out = v; }
__device__ __forceinline__ void narrow(double v, double* out) { *out = v; }

template <typename T>
struct ArithmeticOf {
  using type = float;
};
template <>
struct ArithmeticOf<double> {
  using type = double;
};
template <typename T>
using Arithmetic = typename ArithmeticOf<T>::type;

// The math functions in the arithmetic type's precision.
__device__ __forceinline__ float expOf(float x) { return expf(x); }
__device__ __forceinline__ double expOf(double x) { return exp(x); }
__device__ __forceinline__ float logOf(float x) { return logf(x); }
__device__ __forceinline__ double logOf(double x) { return log(x); }
__device__ __forceinline__ float sqrtOf(float x) { return sqrtf(x); }
__device__ __forceinline__ double sqrtOf(double x) { return sqrt(x); }
__device__ __forceinline__ float tanhOf(float x) { return tanhf(x); }
__device__ __forceinline__ double tanhOf(double x) { return tanh(x); }
__device__ __forceinline__ float sinOf(float x) { return sinf(x); }
__device__ __forceinline__ double sinOf(double x) { return sin(x); }
__device__ __forceinline__ float cosOf(float x) { return cosf(x); }
__device__ __forceinline__ double cosOf(double x) { return cos(x); }
__device__ __forceinline__ float fabsOf(float x) { return fabsf(x); }
__device__ __forceinline__ double fabsOf(double x) { return fabs(x); }
__device__ __forceinline__ float erfOf(float x) { return erff(x); }
__device__ __forceinline__ double erfOf(double x) { return erf(x); }

template <typename A>
__device__ __forceinline__ A negativeInfinity() {
  return -static_cast<A>(INFINITY);
}

struct SumOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x + y;
  }
};
struct ProductOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x * y;
  }
};
struct MinOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    if (x != x) return x;  // NaN wins
    if (y != y) return y;
    return y < x ? y : x;
  }
};
struct MaxOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    if (x != x) return x;
    if (y != y) return y;
    return y > x ? y : x;
  }
};

// Calls launch(TypeTag<T>{}) with T the storage type of a floating dtype;
// i32 has no arithmetic (the verifier allows none).
template <typename T>
struct TypeTag {
  using type = T;
};
template <typename Launch>
cudaError_t byFloatType(DType dtype, Launch&& launch) {
  switch (dtype) {
    case DType::F32: return launch(TypeTag<float>{});
    case DType::F64: return launch(TypeTag<double>{});
    case DType::F16: return launch(TypeTag<__half>{});
    case DType::BF16: return launch(TypeTag<__nv_bfloat16>{});
    case DType::I32: break;
  }
  return cudaErrorInvalidValue;
}

// byFloatType, with i32 too: for what moves or tests values (fill, iota,
// where's condition) rather than computing on them.
template <typename Launch>
cudaError_t byAnyType(DType dtype, Launch&& launch) {
  if (dtype == DType::I32) return launch(TypeTag<int32_t>{});
  return byFloatType(dtype, launch);
}

// `value` combined by `op` over the block; every thread gets the result.
// Every thread of the block must call it (blockDim.x a multiple of 32);
// `shared` holds 32 values. It may be called again at once: the first
// barrier keeps a new reduction from overwriting what a slow warp is still
// reading of the previous one.
template <typename A, typename Op>
__device__ A blockReduce(A value, Op op, A* shared) {
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  value = shared[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w) value = op(value, shared[w]);
  return value;
}

}  // namespace hostir::cuda::device
