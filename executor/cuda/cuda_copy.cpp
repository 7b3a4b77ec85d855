#include "executor/cuda/cuda_copy.h"

#include <cstdint>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_kernels.cuh"
#include "executor/cuda/cuda_layout.h"

namespace hostir::cuda {
namespace {

// cudaMemcpy2D takes pitches up to the device's limit (2^31 - 1 bytes on
// current GPUs); wider rows go through the copy kernel.
constexpr int64_t kMaxPitchBytes = int64_t{1} << 31;

}  // namespace

void copyView(cudaStream_t stream, const TensorView& src, const TensorView& dst) {
  if (src.data() == dst.data() && src.strides == dst.strides) return;  // the same elements
  const ElementwiseLayout layout = elementwiseLayout(dst.shape, {dst.strides, src.strides});
  if (layout.numel == 0) return;
  const auto elementSize = static_cast<int64_t>(dtypeSize(dst.dtype));
  if (isDense(layout, 0) && isDense(layout, 1)) {
    checkCuda(cudaMemcpyAsync(dst.data(), src.data(), static_cast<size_t>(layout.numel * elementSize),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync");
  } else if (isPitched(layout) && layout.strides[0][0] * elementSize < kMaxPitchBytes &&
             layout.strides[1][0] * elementSize < kMaxPitchBytes) {
    // Rows of a chunk along a later axis: the copy engines' 2-D copy.
    checkCuda(cudaMemcpy2DAsync(dst.data(), static_cast<size_t>(layout.strides[0][0] * elementSize), src.data(),
                                static_cast<size_t>(layout.strides[1][0] * elementSize),
                                static_cast<size_t>(layout.shape[1] * elementSize),
                                static_cast<size_t>(layout.shape[0]), cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpy2DAsync");
  } else {
    checkCuda(launchCopy(dst.data(), src.data(), dtypeSize(dst.dtype), layout, stream), "copy kernel launch");
  }
}

void zeroView(cudaStream_t stream, const TensorView& dst) {
  const ElementwiseLayout layout = elementwiseLayout(dst.shape, {dst.strides});
  if (layout.numel == 0) return;
  if (isDense(layout, 0))
    checkCuda(cudaMemsetAsync(dst.data(), 0, dst.bytes(), stream), "cudaMemsetAsync");
  else
    checkCuda(launchZero(dst.data(), dtypeSize(dst.dtype), layout, stream), "zero kernel launch");
}

}  // namespace hostir::cuda
