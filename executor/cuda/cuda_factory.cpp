// The CUDA component's entry table (executor/cuda_plugin.h): the device
// queries, the backend with its communicator, and the native streams, which
// executor/cuda_loader.cpp forwards backend_factory.h's calls to.
#include <cuda_runtime_api.h>

#include <memory>
#include <stdexcept>

#include "comm/copy_engine_communicator.h"
#include "comm/nccl_communicator.h"
#include "executor/backend_factory.h"
#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_devices.h"
#include "executor/cuda/cuda_native_streams.h"
#include "executor/cuda/cuda_transfer_engine.h"
#include "executor/cuda_plugin.h"
#include "runtime/backend_selection.h"

namespace hostir::cuda {
namespace {

std::optional<CudaDeviceFacts> deviceFacts(int device) {
  if (device < 0 || device >= usableDeviceCount()) return std::nullopt;
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for later calls to report
    return std::nullopt;
  }
  return CudaDeviceFacts{properties.name, properties.multiProcessorCount, properties.totalGlobalMem, properties.major,
                         properties.minor};
}

RankBackend createRankBackend(const BackendOptions& options, Communicator& hostComm) {
  if (auto problem = deviceProblem()) throw std::runtime_error(*problem);
  // Every rank sees the same counts and fails here alike, before any rank
  // enters the communicator's set-up. Without a launcher's word on the
  // node, the ranks are taken to have a device each.
  const int devices = usableDeviceCount();
  const bool inProcess = isInProcessTeam(hostComm);
  const int64_t onNode = ranksOnThisNode(hostComm).value_or(1);
  if (std::optional<std::string> problem =
          communicatorProblem(options.communicator, true, inProcess, hostComm.size(), onNode, devices))
    throw std::runtime_error("the CUDA backend " + *problem);
  const int device = deviceForRank(localRank(hostComm), devices);
  CudaBackendOptions cudaOptions;
  cudaOptions.device = device;
  cudaOptions.streams = options.streams;
  cudaOptions.commTimeout = options.commTimeout;
  cudaOptions.externalMainStream = static_cast<cudaStream_t>(options.externalMainStream);
  cudaOptions.trace = options.trace;
  cudaOptions.graph = options.graph;
  if (options.graph && inProcess && hostComm.size() > 1) cudaOptions.graphTeam = &hostComm;
  // Collective over the host team: every rank gets here together.
  std::unique_ptr<Communicator> comm;
  if (cudaCommunicator(options.communicator, inProcess, onNode, devices) == CommunicatorChoice::CopyEngine) {
    auto copyEngines = std::make_unique<CopyEngineCommunicator>(hostComm, std::make_unique<CudaTransferEngine>(device));
    cudaOptions.peerDevices = copyEngines->devices();  // they read this rank's tensors
    comm = std::move(copyEngines);
  } else {
    comm = std::make_unique<NcclCommunicator>(hostComm, device);
  }
  auto backend = std::make_unique<CudaBackend>(cudaOptions, *comm);
  return RankBackend{std::move(comm), std::move(backend)};
}

std::optional<std::string> unavailableReason() { return deviceProblem(); }

int deviceCount() { return usableDeviceCount(); }

const CudaPlugin kPlugin{HOSTIR_VERSION,         sizeof(BackendOptions),
                         sizeof(RankBackend),    &unavailableReason,
                         &deviceCount,           &deviceFacts,
                         &createRankBackend,     &native::createStream,
                         &native::destroyStream, &native::createEvent,
                         &native::destroyEvent,  &native::recordEvent,
                         &native::waitEvent,     &native::synchronizeStream};

}  // namespace
}  // namespace hostir::cuda

extern "C" const hostir::CudaPlugin* hostir_cuda_plugin() { return &hostir::cuda::kPlugin; }
