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
  ~TensorBuffer() override {
    if (!freed_) memory_->retire(data_, bytes_);
  }
  std::byte* data() override { return data_; }
  size_t bytes() const override { return bytes_; }
  // Freed in `stream`'s order; the views left must not be used again.
  void freeOn(cudaStream_t stream) {
    if (freed_) return;
    freed_ = true;
    checkCuda(cudaFreeAsync(data_, stream), "cudaFreeAsync");
    memory_->usage_.freed(bytes_);
  }

 private:
  std::shared_ptr<DeviceMemory> memory_;
  std::byte* data_;
  size_t bytes_;
  bool freed_ = false;
};

class DeviceMemory::ScratchBuffer : public Buffer {
 public:
  ScratchBuffer(std::shared_ptr<DeviceMemory> memory, void* data, size_t bytes, cudaStream_t stream)
      : memory_(std::move(memory)), data_(static_cast<std::byte*>(data)), bytes_(bytes), stream_(stream) {}
  // The free follows, in stream order, every use already issued on the stream.
  ~ScratchBuffer() override {
    cudaFreeAsync(data_, stream_);
    memory_->usage_.freed(bytes_);
  }
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
  for (const Retired& r : retired_) cudaFree(r.data);
  // A pool with memory still in use is released once that memory is freed.
  cudaMemPoolDestroy(tensors_);
  cudaMemPoolDestroy(scratch_);
}

std::shared_ptr<Buffer> DeviceMemory::allocateTensor(size_t bytes, cudaStream_t stream) {
  void* data = allocateFrom(tensors_, bytes, stream);
  auto buffer = std::make_shared<TensorBuffer>(shared_from_this(), data, bytes);
  usage_.allocated(bytes);
  return buffer;
}

void DeviceMemory::freeInStreamOrder(const std::shared_ptr<Buffer>& buffer, cudaStream_t stream) {
  if (auto* tensor = dynamic_cast<TensorBuffer*>(buffer.get())) tensor->freeOn(stream);
}

void DeviceMemory::grantAccess(const std::vector<int>& devices) {
  for (int peer : devices) {
    if (peer == device_) continue;
    int canAccess = 0;
    checkCuda(cudaDeviceCanAccessPeer(&canAccess, peer, device_), "cudaDeviceCanAccessPeer");
    if (!canAccess) continue;  // the runtime stages such peer copies through the host
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = peer;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    for (cudaMemPool_t pool : {tensors_, scratch_})
      checkCuda(cudaMemPoolSetAccess(pool, &access, 1), "cudaMemPoolSetAccess");
  }
}

std::shared_ptr<Buffer> DeviceMemory::allocateScratch(size_t bytes, cudaStream_t stream) {
  void* data = allocateFrom(scratch_, bytes, stream);
  auto buffer = std::make_shared<ScratchBuffer>(shared_from_this(), data, bytes, stream);
  usage_.allocated(bytes);
  return buffer;
}

void DeviceMemory::retire(void* data, size_t bytes) {
  std::lock_guard lock(retiredMutex_);
  retired_.push_back(Retired{data, bytes});
}

void DeviceMemory::reclaim() {
  std::vector<Retired> retired;
  {
    std::lock_guard lock(retiredMutex_);
    retired.swap(retired_);
  }
  // cudaFree of pool memory does not synchronize; the caller's streams are
  // idle, so the memory goes back to the pool free for any stream.
  for (const Retired& r : retired) {
    checkCuda(cudaFree(r.data), "cudaFree");
    usage_.freed(r.bytes);
  }
}

void DeviceMemory::freeRetiredOn(cudaStream_t stream) {
  std::vector<Retired> retired;
  {
    std::lock_guard lock(retiredMutex_);
    retired.swap(retired_);
  }
  for (const Retired& r : retired) {
    checkCuda(cudaFreeAsync(r.data, stream), "cudaFreeAsync");
    usage_.freed(r.bytes);
  }
}

}  // namespace hostir::cuda
