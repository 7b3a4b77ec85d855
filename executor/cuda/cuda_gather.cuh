// The CUDA backend's row indexing: gather_rows (out[i…] = x[idx[i…]], zeros
// for −1) and scatter_add_rows (y[idx[i…]] += src[i…], −1 skipped, in
// row-major order of idx), and bucket, the layout MoE dispatch indexes by. An index out of range is recorded, not
// trapped: the first one goes into a small fault record in device memory
// the backend owns and checks when the host synchronizes (cuda_index_faults.h),
// and the kernel treats that index as −1. (C++17 for nvcc.)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "executor/cuda/cuda_layout.h"
#include "ir/dtype.h"

namespace hostir::cuda {

// The first index out of range since the backend last cleared it.
struct IndexFault {
  int32_t site = 0;  // 0: none; otherwise the IndexCheck::site of the launch that found it
  int32_t reserved = 0;
  int64_t index = 0;
  int64_t rows = 0;  // the rows the index had to be below
};

// Where a launch records a fault, and the number that names its statement.
struct IndexCheck {
  IndexFault* fault = nullptr;  // device memory
  int32_t site = 0;             // at least 1
};

// The iteration space of both operations. The per-entry tensor is gather's
// out or scatter's src (shaped idx.shape + row shape); the table is
// gather's x or scatter's out (rows along axis 0).
struct RowIndexing {
  ElementwiseLayout entries;  // over idx's shape: operand 0 the per-entry tensor, operand 1 idx
  ElementwiseLayout columns;  // over the table's row shape: operand 0 the per-entry tensor, operand 1 the table
  int64_t tableRows = 0;
  int64_t tableRowStride = 0;
};

// out = x[idx] on rows; elements of `elementSize` bytes (2, 4 or 8), moved as bits.
cudaError_t launchGatherRows(size_t elementSize, void* out, const void* table, const int32_t* idx,
                             const RowIndexing& indexing, IndexCheck check, cudaStream_t stream);

// table[idx] += src on rows, one thread per column walking idx in order:
// every element's additions happen in idx's row-major order, as on the CPU.
cudaError_t launchScatterAddRows(DType dtype, void* table, const void* src, const int32_t* idx,
                                 const RowIndexing& indexing, IndexCheck check, cudaStream_t stream);

// bucket: out [buckets, capacity] (i32, strides in elements) lists, per
// bucket e, the row-major positions of the entries of idx (walked by
// `entries`, one operand) equal to e, padded with -1.
cudaError_t launchBucket(int32_t* out, int64_t rowStride, int64_t columnStride, int64_t buckets, int64_t capacity,
                         const int32_t* idx, const ElementwiseLayout& entries, cudaStream_t stream);

}  // namespace hostir::cuda
