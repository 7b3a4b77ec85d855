#include "executor/cuda/cuda_gather.cuh"

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

// Records `index` unless an earlier fault is there already.
__device__ void recordFault(const IndexCheck& check, int64_t index, int64_t rows) {
  if (atomicCAS(&check.fault->site, 0, check.site) == 0) {
    check.fault->index = index;
    check.fault->rows = rows;
  }
}

// One block per index entry: its row of out is the table's row, or zeros.
template <typename T>
__global__ void gatherRowsKernel(T* out, const T* table, const int32_t* idx, RowIndexing indexing, IndexCheck check) {
  for (int64_t e = blockIdx.x; e < indexing.entries.numel; e += gridDim.x) {
    int64_t entry[2];
    offsetsOf(indexing.entries, e, entry);
    const int64_t row = idx[entry[1]];
    const bool inRange = row >= 0 && row < indexing.tableRows;
    if (row != -1 && !inRange && threadIdx.x == 0) recordFault(check, row, indexing.tableRows);
    for (int64_t c = threadIdx.x; c < indexing.columns.numel; c += blockDim.x) {
      int64_t column[2];
      offsetsOf(indexing.columns, c, column);
      out[entry[0] + column[0]] = inRange ? table[row * indexing.tableRowStride + column[1]] : T(0);
    }
  }
}

// One thread per column of a row, walking every entry in order, so the
// additions into one element never race and keep idx's order. Column 0's
// thread (there is one even for empty rows) records faults.
template <typename T>
__global__ void scatterAddRowsKernel(T* table, const T* src, const int32_t* idx, RowIndexing indexing,
                                     IndexCheck check) {
  const int64_t width = indexing.columns.numel;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < (width > 0 ? width : 1);
       c += step) {
    int64_t column[2] = {0, 0};
    if (c < width) offsetsOf(indexing.columns, c, column);
    for (int64_t e = 0; e < indexing.entries.numel; ++e) {
      int64_t entry[2];
      offsetsOf(indexing.entries, e, entry);
      const int64_t row = idx[entry[1]];
      if (row == -1) continue;
      if (row < 0 || row >= indexing.tableRows) {
        if (c == 0) recordFault(check, row, indexing.tableRows);
        continue;
      }
      if (c >= width) continue;
      T* target = &table[row * indexing.tableRowStride + column[1]];
      narrow(widen(*target) + widen(src[entry[0] + column[0]]), target);
    }
  }
}

template <typename T>
cudaError_t gatherAs(void* out, const void* table, const int32_t* idx, const RowIndexing& indexing, IndexCheck check,
                     cudaStream_t stream) {
  gatherRowsKernel<T><<<blocksForItems(indexing.entries.numel), threadsFor(indexing.columns.numel), 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(table), idx, indexing, check);
  return cudaGetLastError();
}

// One thread per bucket walks every entry of idx in row-major order: the
// order the CPU writes positions in, without atomics.
__global__ void bucketKernel(int32_t* out, int64_t rowStride, int64_t columnStride, int64_t buckets, int64_t capacity,
                             const int32_t* idx, ElementwiseLayout entries) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < buckets; e += step) {
    int32_t* row = out + e * rowStride;
    int64_t filled = 0;
    for (int64_t p = 0; p < entries.numel && filled < capacity; ++p) {
      int64_t offsets[1];
      offsetsOf(entries, p, offsets);
      if (idx[offsets[0]] == e) row[filled++ * columnStride] = static_cast<int32_t>(p);
    }
    for (; filled < capacity; ++filled) row[filled * columnStride] = -1;
  }
}

}  // namespace

cudaError_t launchBucket(int32_t* out, int64_t rowStride, int64_t columnStride, int64_t buckets, int64_t capacity,
                         const int32_t* idx, const ElementwiseLayout& entries, cudaStream_t stream) {
  if (buckets == 0 || capacity == 0) return cudaSuccess;
  clearEarlierError();
  bucketKernel<<<blocksFor(buckets), kThreads, 0, stream>>>(out, rowStride, columnStride, buckets, capacity, idx,
                                                            entries);
  return cudaGetLastError();
}

cudaError_t launchGatherRows(size_t elementSize, void* out, const void* table, const int32_t* idx,
                             const RowIndexing& indexing, IndexCheck check, cudaStream_t stream) {
  if (indexing.entries.numel == 0) return cudaSuccess;
  clearEarlierError();
  switch (elementSize) {
    case 2: return gatherAs<uint16_t>(out, table, idx, indexing, check, stream);
    case 4: return gatherAs<uint32_t>(out, table, idx, indexing, check, stream);
    case 8: return gatherAs<uint64_t>(out, table, idx, indexing, check, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launchScatterAddRows(DType dtype, void* table, const void* src, const int32_t* idx,
                                 const RowIndexing& indexing, IndexCheck check, cudaStream_t stream) {
  if (indexing.entries.numel == 0) return cudaSuccess;
  clearEarlierError();
  const int64_t threads = indexing.columns.numel > 0 ? indexing.columns.numel : 1;
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scatterAddRowsKernel<T><<<blocksFor(threads), kThreads, 0, stream>>>(
        static_cast<T*>(table), static_cast<const T*>(src), idx, indexing, check);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
