// The CUDA entry points of a build without the CUDA toolkit (HOSTIR_CUDA=OFF
// or no toolkit found): the backend is reported as unavailable.
#include "executor/backend_factory.h"
#include "executor/native_streams.h"

namespace hostir {

bool cudaBackendBuilt() { return false; }

std::optional<std::string> cudaUnavailableReason() {
  return "this hostir was built without the CUDA backend (configure with the CUDA toolkit and -DHOSTIR_CUDA=ON)";
}

int cudaDeviceCount() { return 0; }

std::optional<CudaDeviceFacts> cudaDeviceFacts(int) { return std::nullopt; }

RankBackend createCudaBackend(const BackendOptions&, Communicator&) {
  throw std::runtime_error(*cudaUnavailableReason());
}

namespace native {

// A CPU runtime never makes native streams or events; reaching these is a bug.
void* createStream() { throw std::runtime_error(*cudaUnavailableReason()); }
void destroyStream(void*) {}
void* createEvent() { throw std::runtime_error(*cudaUnavailableReason()); }
void destroyEvent(void*) {}
void recordEvent(void*, void*) { throw std::runtime_error(*cudaUnavailableReason()); }
void waitEvent(void*, void*) { throw std::runtime_error(*cudaUnavailableReason()); }
void synchronizeStream(void*) { throw std::runtime_error(*cudaUnavailableReason()); }

}  // namespace native
}  // namespace hostir
