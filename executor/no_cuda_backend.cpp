// The CUDA entry points of a build without the CUDA toolkit (HOSTIR_CUDA=OFF
// or no toolkit found): the backend is reported as unavailable.
#include "executor/backend_factory.h"

namespace hostir {

std::optional<std::string> cudaUnavailableReason() {
  return "this hostir was built without the CUDA backend (configure with the CUDA toolkit and -DHOSTIR_CUDA=ON)";
}

int cudaDeviceCount() { return 0; }

RankBackend createCudaBackend(const BackendOptions&, Communicator&) {
  throw std::runtime_error(*cudaUnavailableReason());
}

}  // namespace hostir
