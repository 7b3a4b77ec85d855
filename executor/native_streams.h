// The device runtime's own streams and events, as opaque handles, for
// callers that manage them (the API's Runtime). Implemented by
// executor/cuda/ when the CUDA backend is built, on the backend's one CUDA
// runtime, and reached through executor/cuda_loader.cpp; without it every
// call throws (a CPU runtime never makes them). Failures throw std::runtime_error.
#pragma once

namespace hostir::native {

void* createStream();  // non-blocking: no implicit order with the legacy default stream
void destroyStream(void* stream);
void* createEvent();  // without timing: ordering only
void destroyEvent(void* event);
void recordEvent(void* event, void* stream);
void waitEvent(void* stream, void* event);
void synchronizeStream(void* stream);

}  // namespace hostir::native
