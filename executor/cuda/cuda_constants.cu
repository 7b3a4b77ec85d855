#include "executor/cuda/cuda_constants.cuh"

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

__device__ __forceinline__ void storeValue(double v, int32_t* out) { *out = static_cast<int32_t>(v); }
__device__ __forceinline__ void storeValue(double v, float* out) { *out = __double2float_rn(v); }
__device__ __forceinline__ void storeValue(double v, double* out) { *out = v; }
__device__ __forceinline__ void storeValue(double v, __half* out) { *out = __double2half(v); }
__device__ __forceinline__ void storeValue(double v, __nv_bfloat16* out) { *out = __double2bfloat16(v); }

template <typename T>
__global__ void fillKernel(T* out, ElementwiseLayout layout, double value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[1];
    offsetsOf(layout, i, offsets);
    storeValue(value, &out[offsets[0]]);
  }
}

template <typename T>
__global__ void iotaKernel(T* out, ElementwiseLayout layout, int64_t inner, int64_t extent) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[1];
    offsetsOf(layout, i, offsets);
    storeValue(static_cast<double>((i / inner) % extent), &out[offsets[0]]);
  }
}

}  // namespace

cudaError_t launchFill(DType dtype, void* out, const ElementwiseLayout& layout, double value, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byAnyType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fillKernel<T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(out), layout, value);
    return cudaGetLastError();
  });
}

cudaError_t launchIota(DType dtype, void* out, const ElementwiseLayout& layout, int64_t inner, int64_t extent,
                       cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byAnyType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    iotaKernel<T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(out), layout, inner, extent);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
