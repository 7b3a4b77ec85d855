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

template <typename T>
__global__ void layerNormKernel(T* out, const T* x, const T* w, int64_t wStride, const T* b, int64_t bStride,
                                double eps, RowLayout layout) {
  using A = Arithmetic<T>;
  __shared__ A shared[32];
  const int64_t n = layout.length;
  for (int64_t row = blockIdx.x; row < layout.rows.numel; row += gridDim.x) {
    int64_t offsets[2];
    offsetsOf(layout.rows, row, offsets);
    T* o = out + offsets[0];
    const T* in = x + offsets[1];
    A sum = 0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) sum += widen(in[c * layout.xStride]);
    const A mean = blockReduce(sum, SumOf{}, shared) / static_cast<A>(n);
    A squares = 0;  // about the mean: no cancellation for rows far from zero
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      const A d = widen(in[c * layout.xStride]) - mean;
      squares += d * d;
    }
    squares = blockReduce(squares, SumOf{}, shared);
    const A inverse = A(1) / sqrtOf(squares / static_cast<A>(n) + static_cast<A>(eps));
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x)
      narrow((widen(in[c * layout.xStride]) - mean) * inverse * widen(w[c * wStride]) + widen(b[c * bStride]),
             &o[c * layout.outStride]);
  }
}

__device__ __forceinline__ void narrowFrom(double v, float* out) { *out = static_cast<float>(v); }
__device__ __forceinline__ void narrowFrom(double v, double* out) { *out = v; }
__device__ __forceinline__ void narrowFrom(double v, __half* out) { *out = __double2half(v); }
__device__ __forceinline__ void narrowFrom(double v, __nv_bfloat16* out) { *out = __double2bfloat16(v); }

template <typename T>
__global__ void ropeKernel(T* out, const T* x, int64_t heads, int64_t offset, double theta, RowLayout layout) {
  const int64_t half = layout.length / heads / 2;
  const int64_t pairs = heads * half;
  const int64_t total = layout.rows.numel * pairs;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t row = i / pairs, pair = i % pairs;
    const int64_t j = pair % half, first = (pair / half) * 2 * half + j, second = first + half;
    int64_t offsets[2];
    offsetsOf(layout.rows, row, offsets);
    const double angle = static_cast<double>(offset + row) * pow(theta, -static_cast<double>(j) / half);
    double s = 0, c = 0;
    sincos(angle, &s, &c);
    const double a = widen(x[offsets[1] + first * layout.xStride]);
    const double b = widen(x[offsets[1] + second * layout.xStride]);
    narrowFrom(a * c - b * s, &out[offsets[0] + first * layout.outStride]);
    narrowFrom(b * c + a * s, &out[offsets[0] + second * layout.outStride]);
  }
}

}  // namespace

cudaError_t launchLayerNorm(DType dtype, void* out, const void* x, const void* w, int64_t wStride, const void* b,
                            int64_t bStride, double eps, const RowLayout& layout, cudaStream_t stream) {
  if (layout.rows.numel == 0 || layout.length == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    layerNormKernel<T><<<blocksForItems(layout.rows.numel), threadsFor(layout.length), 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(w), wStride, static_cast<const T*>(b),
        bStride, eps, layout);
    return cudaGetLastError();
  });
}

cudaError_t launchRope(DType dtype, void* out, const void* x, int64_t heads, int64_t offset, double theta,
                       const RowLayout& layout, cudaStream_t stream) {
  if (layout.rows.numel == 0 || layout.length == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ropeKernel<T><<<blocksFor(layout.rows.numel * (layout.length / 2)), kThreads, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), heads, offset, theta, layout);
    return cudaGetLastError();
  });
}

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
