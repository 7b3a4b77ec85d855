#include "executor/cuda/cuda_rows.cuh"

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

template <typename T>
__global__ void rmsNormKernel(T* out, const T* x, const T* w, int64_t wStride, double eps, RowLayout layout) {
  using A = Arithmetic<T>;
  __shared__ A shared[32];
  const int64_t n = layout.length;
  for (int64_t row = blockIdx.x; row < layout.rows.numel; row += gridDim.x) {
    int64_t offsets[2];
    offsetsOf(layout.rows, row, offsets);
    T* o = out + offsets[0];
    const T* in = x + offsets[1];
    A squares = 0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      const A v = widen(in[c * layout.xStride]);
      squares += v * v;
    }
    squares = blockReduce(squares, SumOf{}, shared);
    const A inverse = A(1) / sqrtOf(squares / static_cast<A>(n) + static_cast<A>(eps));
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x)
      narrow(widen(in[c * layout.xStride]) * inverse * widen(w[c * wStride]), &o[c * layout.outStride]);
  }
}

template <typename T>
__global__ void softmaxKernel(T* out, const T* x, RowLayout layout) {
  using A = Arithmetic<T>;
  __shared__ A shared[32];
  const int64_t n = layout.length;
  for (int64_t row = blockIdx.x; row < layout.rows.numel; row += gridDim.x) {
    int64_t offsets[2];
    offsetsOf(layout.rows, row, offsets);
    T* o = out + offsets[0];
    const T* in = x + offsets[1];
    A maximum = negativeInfinity<A>();
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) maximum = MaxOf{}(maximum, widen(in[c * layout.xStride]));
    maximum = blockReduce(maximum, MaxOf{}, shared);
    A sum = 0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) sum += expOf(widen(in[c * layout.xStride]) - maximum);
    sum = blockReduce(sum, SumOf{}, shared);
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x)
      narrow(expOf(widen(in[c * layout.xStride]) - maximum) / sum, &o[c * layout.outStride]);
  }
}

}  // namespace

cudaError_t launchRmsNorm(DType dtype, void* out, const void* x, const void* w, int64_t wStride, double eps,
                          const RowLayout& layout, cudaStream_t stream) {
  if (layout.rows.numel == 0 || layout.length == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rmsNormKernel<T><<<blocksForItems(layout.rows.numel), threadsFor(layout.length), 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(w), wStride, eps, layout);
    return cudaGetLastError();
  });
}

cudaError_t launchSoftmax(DType dtype, void* out, const void* x, const RowLayout& layout, cudaStream_t stream) {
  if (layout.rows.numel == 0 || layout.length == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmaxKernel<T><<<blocksForItems(layout.rows.numel), threadsFor(layout.length), 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), layout);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
