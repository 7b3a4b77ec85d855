// The CUDA runtime's streams and events behind executor/native_streams.h,
// which the core reaches through the CUDA component's table
// (executor/cuda_plugin.h). Failures throw std::runtime_error.
#pragma once

namespace hostir::cuda::native {

void* createStream();  // non-blocking: no implicit order with the legacy default stream
void destroyStream(void* stream);
void* createEvent();  // without timing: ordering only
void destroyEvent(void* event);
void recordEvent(void* event, void* stream);
void waitEvent(void* stream, void* event);
void synchronizeStream(void* stream);

}  // namespace hostir::cuda::native
