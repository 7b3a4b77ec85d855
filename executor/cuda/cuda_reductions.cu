#include "executor/cuda/cuda_reductions.cuh"

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

template <typename T>
__global__ void reductionKernel(Reduction reduction, T* out, const T* x, ReductionLayout layout) {
  using A = Arithmetic<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.outputs.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(layout.outputs, i, offsets);
    const T* from = x + offsets[1];
    A total = reduction == Reduction::Max ? negativeInfinity<A>() : A(0);
    for (int64_t k = 0; k < layout.count; ++k) {
      const A v = widen(from[k * layout.axisStride]);
      total = reduction == Reduction::Max ? MaxOf{}(total, v) : total + v;
    }
    if (reduction == Reduction::Mean) total /= static_cast<A>(layout.count);  // 0/0: NaN for an empty axis
    narrow(total, &out[offsets[0]]);
  }
}

template <typename T>
__global__ void cumsumKernel(T* out, const T* x, ReductionLayout lines, int64_t outAxisStride) {
  using A = Arithmetic<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < lines.outputs.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(lines.outputs, i, offsets);
    const T* from = x + offsets[1];
    T* to = out + offsets[0];
    A total = A(0);
    for (int64_t k = 0; k < lines.count; ++k) {
      total += widen(from[k * lines.axisStride]);
      narrow(total, &to[k * outAxisStride]);
    }
  }
}

// Whether (u at position a) comes before (v at position b) in top_k's order.
template <typename A>
__device__ __forceinline__ bool comesBefore(A u, int64_t a, A v, int64_t b) {
  const bool uNan = u != u, vNan = v != v;
  if (uNan != vNan) return uNan;
  if (!uNan && u != v) return u > v;
  return a < b;
}

template <typename T>
__global__ void topKKernel(T* out, int32_t* indices, const T* x, TopKLayout layout) {
  using A = Arithmetic<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < layout.rows.numel;
       row += step) {
    int64_t offsets[3];
    offsetsOf(layout.rows, row, offsets);
    const T* in = x + offsets[2];
    int64_t previous = -1;
    for (int64_t j = 0; j < layout.k; ++j) {
      int64_t best = -1;
      for (int64_t c = 0; c < layout.length; ++c) {
        const A v = widen(in[c * layout.xStride]);
        if (previous >= 0 && !comesBefore(widen(in[previous * layout.xStride]), previous, v, c)) continue;
        if (best < 0 || comesBefore(v, c, widen(in[best * layout.xStride]), best)) best = c;
      }
      out[offsets[0] + j * layout.outStride] = in[best * layout.xStride];
      indices[offsets[1] + j * layout.indexStride] = static_cast<int32_t>(best);
      previous = best;
    }
  }
}

}  // namespace

cudaError_t launchTopK(DType dtype, void* out, int32_t* indices, const void* x, const TopKLayout& layout,
                       cudaStream_t stream) {
  if (layout.rows.numel == 0 || layout.k == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    topKKernel<T><<<blocksFor(layout.rows.numel), kThreads, 0, stream>>>(static_cast<T*>(out), indices,
                                                                         static_cast<const T*>(x), layout);
    return cudaGetLastError();
  });
}

cudaError_t launchReduction(Reduction reduction, DType dtype, void* out, const void* x, const ReductionLayout& layout,
                            cudaStream_t stream) {
  if (layout.outputs.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reductionKernel<T><<<blocksFor(layout.outputs.numel), kThreads, 0, stream>>>(reduction, static_cast<T*>(out),
                                                                                 static_cast<const T*>(x), layout);
    return cudaGetLastError();
  });
}

cudaError_t launchCumsum(DType dtype, void* out, const void* x, const ReductionLayout& lines, int64_t outAxisStride,
                         cudaStream_t stream) {
  if (lines.outputs.numel == 0 || lines.count == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cumsumKernel<T><<<blocksFor(lines.outputs.numel), kThreads, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), lines, outAxisStride);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
