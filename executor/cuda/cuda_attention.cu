#include "executor/cuda/cuda_attention.cuh"

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

// One block per (head, row): the row's maximum and sum over its visible
// keys, then its probabilities (zeros past the visible keys) and its lse.
// Each probability is written by the thread that read its score, after
// both reductions, so the probabilities may overwrite the scores.
template <typename T>
__global__ void attentionSoftmaxKernel(AttentionSoftmax softmax) {
  using A = Arithmetic<T>;
  __shared__ A shared[32];
  const auto* scores = static_cast<const A*>(softmax.scores);
  auto* probabilities = static_cast<T*>(softmax.probabilities);
  const int64_t keys = softmax.keys;
  for (int64_t item = blockIdx.x; item < softmax.heads * softmax.rows; item += gridDim.x) {
    const int64_t head = item / softmax.rows, row = item % softmax.rows;
    const A* s = scores + item * keys;
    T* p = probabilities + item * keys;
    int64_t visible = keys;
    if (softmax.causal) {
      // Query position q sees keys up to q - kOffset, taken in unsigned
      // arithmetic: exact whenever q >= kOffset, whatever their signs.
      const int64_t query = softmax.firstQuery + row;
      const uint64_t last = static_cast<uint64_t>(query) - static_cast<uint64_t>(softmax.kOffset);
      visible =
          query < softmax.kOffset ? 0 : (last < static_cast<uint64_t>(keys) ? static_cast<int64_t>(last) + 1 : keys);
    }
    A maximum = negativeInfinity<A>();
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) maximum = MaxOf{}(maximum, s[j]);
    maximum = blockReduce(maximum, MaxOf{}, shared);
    A sum = 0;
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) sum += expOf(s[j] - maximum);
    sum = blockReduce(sum, SumOf{}, shared);
    for (int64_t j = threadIdx.x; j < keys; j += blockDim.x)
      narrow(j < visible ? expOf(s[j] - maximum) / sum : A(0), &p[j]);
    if (softmax.lse && threadIdx.x == 0)
      softmax.lse[row * softmax.lseRowStride + head * softmax.lseHeadStride] =
          visible > 0 ? static_cast<float>(maximum + logOf(sum)) : negativeInfinity<float>();
  }
}

// o's element [row, head·headDim + d] from the old lse of (row, head).
template <typename T>
__global__ void mergeOutputKernel(T* o, const T* part, AttentionMerge merge) {
  using A = Arithmetic<T>;
  const int64_t width = merge.heads * merge.headDim;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < merge.rows * width; i += step) {
    const int64_t row = i / width, column = i % width, head = column / merge.headDim;
    const A a = merge.lse[row * merge.lseRowStride + head * merge.lseHeadStride];
    const A b = merge.partLse[row * merge.partLseRowStride + head * merge.partLseHeadStride];
    if (b == negativeInfinity<A>()) continue;  // the part contributes nothing
    T* target = &o[row * merge.oRowStride + column];
    const A incoming = widen(part[row * merge.partRowStride + column]);
    if (a == negativeInfinity<A>()) {
      narrow(incoming, target);
      continue;
    }
    const A maximum = a > b ? a : b;
    const A ea = expOf(a - maximum), eb = expOf(b - maximum);
    narrow((ea * widen(*target) + eb * incoming) / (ea + eb), target);
  }
}

// lse of (row, head), once every element of o has read the old value.
__global__ void mergeLseKernel(AttentionMerge merge) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < merge.rows * merge.heads;
       i += step) {
    const int64_t row = i / merge.heads, head = i % merge.heads;
    float* target = &merge.lse[row * merge.lseRowStride + head * merge.lseHeadStride];
    const float a = *target;
    const float b = merge.partLse[row * merge.partLseRowStride + head * merge.partLseHeadStride];
    if (b == negativeInfinity<float>()) continue;
    if (a == negativeInfinity<float>()) {
      *target = b;
      continue;
    }
    const float maximum = a > b ? a : b;
    *target = maximum + logf(expf(a - maximum) + expf(b - maximum));
  }
}

}  // namespace

cudaError_t launchAttentionSoftmax(DType dtype, const AttentionSoftmax& softmax, cudaStream_t stream) {
  if (softmax.heads * softmax.rows == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    attentionSoftmaxKernel<T>
        <<<blocksForItems(softmax.heads * softmax.rows), threadsFor(softmax.keys), 0, stream>>>(softmax);
    return cudaGetLastError();
  });
}

cudaError_t launchMergeAttention(DType dtype, const AttentionMerge& merge, cudaStream_t stream) {
  if (merge.rows * merge.heads == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t elements = merge.rows * merge.heads * merge.headDim;
    if (elements > 0) {
      mergeOutputKernel<T><<<blocksFor(elements), kThreads, 0, stream>>>(static_cast<T*>(merge.o),
                                                                         static_cast<const T*>(merge.part), merge);
      if (cudaError_t status = cudaGetLastError(); status != cudaSuccess) return status;
    }
    mergeLseKernel<<<blocksFor(merge.rows * merge.heads), kThreads, 0, stream>>>(merge);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
