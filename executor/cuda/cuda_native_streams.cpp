#include <cuda_runtime_api.h>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_native_streams.h"

namespace hostir::cuda::native {

void* createStream() {
  cudaStream_t stream = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return stream;
}

void destroyStream(void* stream) { cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

void* createEvent() {
  cudaEvent_t event = nullptr;
  checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return event;
}

void destroyEvent(void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

void recordEvent(void* event, void* stream) {
  checkCuda(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
}

void waitEvent(void* stream, void* event) {
  checkCuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0),
            "cudaStreamWaitEvent");
}

void synchronizeStream(void* stream) {
  checkCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

}  // namespace hostir::cuda::native
