// The CUDA entry points of executor/backend_factory.h in a build with the
// CUDA backend (no_cuda_backend.cpp stands in for them otherwise).
#include <memory>
#include <stdexcept>

#include "comm/nccl_communicator.h"
#include "executor/backend_factory.h"
#include "executor/backend_selection.h"
#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_devices.h"

namespace hostir {

std::optional<std::string> cudaUnavailableReason() { return cuda::deviceProblem(); }

int cudaDeviceCount() { return cuda::usableDeviceCount(); }

RankBackend createCudaBackend(const BackendOptions& options, Communicator& hostComm) {
  if (auto problem = cuda::deviceProblem()) throw std::runtime_error(*problem);
  // NCCL drives one device per rank; every rank sees the same counts and
  // fails here alike, before any rank enters the NCCL set-up.
  const int devices = cuda::usableDeviceCount();
  if (std::optional<int64_t> ranks = ranksOnThisNode(hostComm))
    if (std::optional<std::string> shortage = deviceShortage(*ranks, devices))
      throw std::runtime_error("the CUDA backend " + *shortage);
  const int device = deviceForRank(localRank(hostComm), devices);
  // Collective over the host team: every rank gets here together.
  auto nccl = std::make_unique<NcclCommunicator>(hostComm, device);
  cuda::CudaBackendOptions cudaOptions;
  cudaOptions.device = device;
  cudaOptions.poolSize = options.streams;
  cudaOptions.commTimeout = options.commTimeout;
  cudaOptions.externalMainStream = static_cast<cudaStream_t>(options.externalMainStream);
  auto backend = std::make_unique<cuda::CudaBackend>(cudaOptions, *nccl);
  return RankBackend{std::move(nccl), std::move(backend)};
}

}  // namespace hostir
