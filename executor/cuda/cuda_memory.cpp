#include "executor/cuda/cuda_memory.h"

#include <algorithm>
#include <cstdint>
#include <new>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {
namespace {

cudaMemPool_t createPool(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  checkCuda(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  // Keep freed memory in the pool: runs after the first allocate nothing from the system.
  uint64_t keepAll = UINT64_MAX;
  checkCuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keepAll), "cudaMemPoolSetAttribute");
  return pool;
}

void* allocateFrom(cudaMemPool_t pool, size_t bytes, cudaStream_t stream) {
  void* data = nullptr;
  // At least one byte: every buffer has an address of its own.
  cudaError_t status = cudaMallocFromPoolAsync(&data, std::max<size_t>(bytes, 1), pool, stream);
  // Out of device memory is the program's size, as std::bad_alloc is on the
  // CPU: the evaluator names the statement and the size.
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not a sticky error: clear it, the context stays usable
    throw std::bad_alloc();
  }
  checkCuda(status, "cudaMallocFromPoolAsync");
  return data;
}

}  // namespace

class DeviceMemory::TensorBuffer : public Buffer {
 public:
  TensorBuffer(std::shared_ptr<DeviceMemory> memory, void* data, size_t bytes)
      : memory_(std::move(memory)), data_(static_cast<std::byte*>(data)), bytes_(bytes) {}
  ~TensorBuffer() override { memory_->retire(data_); }
  std::byte* data() override { return data_; }
  size_t bytes() const override { return bytes_; }

 private:
  std::shared_ptr<DeviceMemory> memory_;
  std::byte* data_;
  size_t bytes_;
};

class DeviceMemory::ScratchBuffer : public Buffer {
 public:
  ScratchBuffer(std::shared_ptr<DeviceMemory> memory, void* data, size_t bytes, cudaStream_t stream)
      : memory_(std::move(memory)), data_(static_cast<std::byte*>(data)), bytes_(bytes), stream_(stream) {}
  // The free follows, in stream order, every use already issued on the stream.
  ~ScratchBuffer() override { cudaFreeAsync(data_, stream_); }
  std::byte* data() override { return data_; }
  size_t bytes() const override { return bytes_; }

 private:
  std::shared_ptr<DeviceMemory> memory_;  // keeps the pool alive
  std::byte* data_;
  size_t bytes_;
  cudaStream_t stream_;
};

std::shared_ptr<DeviceMemory> DeviceMemory::create(int device) {
  return std::shared_ptr<DeviceMemory>(new DeviceMemory(device));
}

DeviceMemory::DeviceMemory(int device) : device_(device) {
  tensors_ = createPool(device);
  try {
    scratch_ = createPool(device);
  } catch (...) {
    cudaMemPoolDestroy(tensors_);
    throw;
  }
}

DeviceMemory::~DeviceMemory() {
  // The last buffer is gone; the backend waited for its streams before that.
  cudaSetDevice(device_);
  for (void* data : retired_) cudaFree(data);
  // A pool with memory still in use is released once that memory is freed.
  cudaMemPoolDestroy(tensors_);
  cudaMemPoolDestroy(scratch_);
}

std::shared_ptr<Buffer> DeviceMemory::allocateTensor(size_t bytes, cudaStream_t stream) {
  void* data = allocateFrom(tensors_, bytes, stream);
  return std::make_shared<TensorBuffer>(shared_from_this(), data, bytes);
}

std::shared_ptr<Buffer> DeviceMemory::allocateScratch(size_t bytes, cudaStream_t stream) {
  void* data = allocateFrom(scratch_, bytes, stream);
  return std::make_shared<ScratchBuffer>(shared_from_this(), data, bytes, stream);
}

void DeviceMemory::retire(void* data) {
  std::lock_guard lock(retiredMutex_);
  retired_.push_back(data);
}

void DeviceMemory::reclaim() {
  std::vector<void*> retired;
  {
    std::lock_guard lock(retiredMutex_);
    retired.swap(retired_);
  }
  // cudaFree of pool memory does not synchronize; the caller's streams are
  // idle, so the memory goes back to the pool free for any stream.
  for (void* data : retired) checkCuda(cudaFree(data), "cudaFree");
}

}  // namespace hostir::cuda
