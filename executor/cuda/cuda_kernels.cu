#include "executor/cuda/cuda_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace hostir::cuda {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill any current GPU; larger tensors loop (grid stride).
constexpr int64_t kMaxBlocks = 65536;

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

template <typename T>
__global__ void copyKernel(T* dst, const T* src, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(layout, i, offsets);
    dst[offsets[0]] = src[offsets[1]];
  }
}

template <typename T>
__global__ void zeroKernel(T* dst, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[1];
    offsetsOf(layout, i, offsets);
    dst[offsets[0]] = T(0);
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

// out = op(a, b); operands 0, 1, 2 of the layout are out, a, b.
template <typename T, typename Op>
__global__ void binaryKernel(T* out, const T* a, const T* b, ElementwiseLayout layout, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[3];
    offsetsOf(layout, i, offsets);
    narrow(op(widen(a[offsets[1]]), widen(b[offsets[2]])), &out[offsets[0]]);
  }
}

template <typename T, typename Op>
__global__ void reduceKernel(T* acc, const T* in, int64_t count, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step)
    narrow(op(widen(acc[i]), widen(in[i])), &acc[i]);
}

template <typename T>
__global__ void scaleKernel(T* data, int64_t count, double factor) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const double scaled = static_cast<double>(widen(data[i])) * factor;
    narrow(static_cast<decltype(widen(data[i]))>(scaled), &data[i]);
  }
}

// A launch reports its errors through cudaGetLastError, which also holds
// the error of an earlier call whose status was deliberately ignored (a
// free in a destructor): drop that one so the launch reports its own.
// Sticky errors stay and are reported, as they should be.
void clearEarlierError() { (void)cudaGetLastError(); }

unsigned blocksFor(int64_t numel) {
  return static_cast<unsigned>(std::min<int64_t>((numel + kThreads - 1) / kThreads, kMaxBlocks));
}

template <typename T>
cudaError_t copyAs(void* dst, const void* src, const ElementwiseLayout& layout, cudaStream_t stream) {
  copyKernel<T>
      <<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src), layout);
  return cudaGetLastError();
}

template <typename T>
cudaError_t zeroAs(void* dst, const ElementwiseLayout& layout, cudaStream_t stream) {
  zeroKernel<T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(dst), layout);
  return cudaGetLastError();
}

template <typename T, typename Op>
cudaError_t binaryAs(void* out, const void* const* inputs, const ElementwiseLayout& layout, cudaStream_t stream) {
  binaryKernel<T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]), layout, Op{});
  return cudaGetLastError();
}

// out = op(a, b) for every dtype: an ElementwiseLaunch.
template <typename Op>
cudaError_t launchBinary(DType dtype, void* out, const void* const* inputs, const ElementwiseLayout& layout,
                         cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  switch (dtype) {
    case DType::F32: return binaryAs<float, Op>(out, inputs, layout, stream);
    case DType::F64: return binaryAs<double, Op>(out, inputs, layout, stream);
    case DType::F16: return binaryAs<__half, Op>(out, inputs, layout, stream);
    case DType::BF16: return binaryAs<__nv_bfloat16, Op>(out, inputs, layout, stream);
  }
  return cudaErrorInvalidValue;
}

// The elementwise computations, by their op table name.
struct NamedKernel {
  std::string_view name;
  ElementwiseLaunch launch;
};
constexpr NamedKernel kElementwiseKernels[] = {
    {"add", launchBinary<SumOf>},
};

template <typename T>
cudaError_t reduceAs(DeviceReduction op, void* acc, const void* in, int64_t count, cudaStream_t stream) {
  auto* a = static_cast<T*>(acc);
  auto* b = static_cast<const T*>(in);
  const unsigned blocks = blocksFor(count);
  switch (op) {
    case DeviceReduction::Sum: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, SumOf{}); break;
    case DeviceReduction::Prod: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, ProductOf{}); break;
    case DeviceReduction::Min: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, MinOf{}); break;
    case DeviceReduction::Max: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, MaxOf{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t scaleAs(void* data, int64_t count, double factor, cudaStream_t stream) {
  scaleKernel<T><<<blocksFor(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, factor);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchCopy(void* dst, const void* src, size_t elementSize, const ElementwiseLayout& layout,
                       cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  // Copies move bits: only the element size matters.
  switch (elementSize) {
    case 2: return copyAs<uint16_t>(dst, src, layout, stream);
    case 4: return copyAs<uint32_t>(dst, src, layout, stream);
    case 8: return copyAs<uint64_t>(dst, src, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launchZero(void* dst, size_t elementSize, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  switch (elementSize) {  // +0.0 is all zero bits in every dtype
    case 2: return zeroAs<uint16_t>(dst, layout, stream);
    case 4: return zeroAs<uint32_t>(dst, layout, stream);
    case 8: return zeroAs<uint64_t>(dst, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

ElementwiseLaunch elementwiseKernel(std::string_view name) {
  for (const NamedKernel& kernel : kElementwiseKernels)
    if (kernel.name == name) return kernel.launch;
  return nullptr;
}

cudaError_t launchReduce(DType dtype, DeviceReduction op, void* acc, const void* in, size_t count,
                         cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  clearEarlierError();
  const auto n = static_cast<int64_t>(count);
  switch (dtype) {
    case DType::F32: return reduceAs<float>(op, acc, in, n, stream);
    case DType::F64: return reduceAs<double>(op, acc, in, n, stream);
    case DType::F16: return reduceAs<__half>(op, acc, in, n, stream);
    case DType::BF16: return reduceAs<__nv_bfloat16>(op, acc, in, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launchScale(DType dtype, void* data, size_t count, double factor, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  clearEarlierError();
  const auto n = static_cast<int64_t>(count);
  switch (dtype) {
    case DType::F32: return scaleAs<float>(data, n, factor, stream);
    case DType::F64: return scaleAs<double>(data, n, factor, stream);
    case DType::F16: return scaleAs<__half>(data, n, factor, stream);
    case DType::BF16: return scaleAs<__nv_bfloat16>(data, n, factor, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace hostir::cuda
