#include "executor/cuda/cuda_transfer_engine.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_kernels.cuh"

namespace hostir::cuda {
namespace {

cudaStream_t native(void* stream) { return static_cast<cudaStream_t>(stream); }

DeviceReduction deviceReduction(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return DeviceReduction::Sum;  // the caller scales afterwards
    case ReduceOp::Prod: return DeviceReduction::Prod;
    case ReduceOp::Min: return DeviceReduction::Min;
    case ReduceOp::Max: return DeviceReduction::Max;
  }
  throw std::invalid_argument("unknown reduce op");
}

}  // namespace

CudaTransferEngine::CudaTransferEngine(int device) : device_(device) {
  checkCuda(cudaSetDevice(device_), "cudaSetDevice");
  checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  for (cudaEvent_t& event : fences_)
    checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device_;
  checkCuda(cudaMemPoolCreate(&scratch_, &props), "cudaMemPoolCreate");
  // Keep freed scratch: later collectives of the same size allocate nothing.
  uint64_t keepAll = UINT64_MAX;
  checkCuda(cudaMemPoolSetAttribute(scratch_, cudaMemPoolAttrReleaseThreshold, &keepAll), "cudaMemPoolSetAttribute");
}

CudaTransferEngine::~CudaTransferEngine() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  for (cudaEvent_t event : fences_)
    if (event) cudaEventDestroy(event);
  if (stream_) cudaStreamDestroy(stream_);
  // Scratch still in flight on a caller's stream is returned once its free
  // runs; the pool goes then.
  if (scratch_) cudaMemPoolDestroy(scratch_);
}

void CudaTransferEngine::connect(const int* devices, int count) {
  checkCuda(cudaSetDevice(device_), "cudaSetDevice");
  for (int i = 0; i < count; ++i) {
    const int peer = devices[i];
    if (peer == device_) continue;
    int reachesPeer = 0, peerReaches = 0;
    checkCuda(cudaDeviceCanAccessPeer(&reachesPeer, device_, peer), "cudaDeviceCanAccessPeer");
    checkCuda(cudaDeviceCanAccessPeer(&peerReaches, peer, device_), "cudaDeviceCanAccessPeer");
    if (reachesPeer) {
      const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();  // another rank on this device enabled it: not an error
      else
        checkCuda(status, "cudaDeviceEnablePeerAccess");
    }
    if (peerReaches) {  // peers read staged sends from this pool
      cudaMemAccessDesc access{};
      access.location.type = cudaMemLocationTypeDevice;
      access.location.id = peer;
      access.flags = cudaMemAccessFlagsProtReadWrite;
      checkCuda(cudaMemPoolSetAccess(scratch_, &access, 1), "cudaMemPoolSetAccess");
    }
  }
}

void CudaTransferEngine::synchronize(void* stream) {
  checkCuda(cudaStreamSynchronize(native(stream)), "cudaStreamSynchronize");
}

void* CudaTransferEngine::allocate(size_t bytes, void* stream) {
  void* data = nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&data, std::max<size_t>(bytes, 1), scratch_, native(stream));
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw std::bad_alloc();
  }
  checkCuda(status, "cudaMallocFromPoolAsync");
  return data;
}

void CudaTransferEngine::release(void* data, void* stream) noexcept { cudaFreeAsync(data, native(stream)); }

void CudaTransferEngine::copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) {
  if (bytes == 0) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  checkCuda(cudaStreamIsCapturing(native(stream), &capture), "cudaStreamIsCapturing");
  // A stream being captured into a graph refuses cudaMemcpyPeerAsync; with
  // unified addressing a plain copy finds both devices from the pointers.
  if (dstDevice == srcDevice || capture != cudaStreamCaptureStatusNone)
    checkCuda(cudaMemcpyAsync(dst, src, bytes, dstDevice == srcDevice ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault,
                              native(stream)),
              "cudaMemcpyAsync");
  else
    checkCuda(cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, native(stream)), "cudaMemcpyPeerAsync");
}

void CudaTransferEngine::reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) {
  checkCuda(launchReduce(dtype, deviceReduction(op), acc, in, count, native(stream)), "reduction kernel launch");
}

void CudaTransferEngine::scale(void* data, size_t count, DType dtype, double factor, void* stream) {
  checkCuda(launchScale(dtype, data, count, factor, native(stream)), "scale kernel launch");
}

TransferEngine::Fence CudaTransferEngine::newFence() {
  return reinterpret_cast<Fence>(fences_[nextFence_++ % kFenceRing]);
}

void CudaTransferEngine::record(Fence fence, void* stream) {
  checkCuda(cudaEventRecord(reinterpret_cast<cudaEvent_t>(fence), native(stream)), "cudaEventRecord");
}

void CudaTransferEngine::wait(void* stream, Fence fence) {
  if (!fence) return;
  checkCuda(cudaStreamWaitEvent(native(stream), reinterpret_cast<cudaEvent_t>(fence), 0), "cudaStreamWaitEvent");
}

}  // namespace hostir::cuda
