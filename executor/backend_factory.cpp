#include "executor/backend_factory.h"

#include <stdexcept>

#include "comm/copy_engine_communicator.h"
#include "comm/host_transfer_engine.h"
#include "executor/cpu/cpu_backend.h"

namespace hostir {

RankBackend createBackend(BackendKind kind, const BackendOptions& options, Communicator& hostComm) {
  if (kind == BackendKind::Cuda) return createCudaBackend(options, hostComm);
  if (std::optional<std::string> problem =
          communicatorProblem(options.communicator, false, isInProcessTeam(hostComm), hostComm.size(), 1, 0))
    throw std::runtime_error("the CPU backend " + *problem);
  cpu::CpuBackendOptions cpuOptions;
  cpuOptions.poolSize = options.streams;
  cpuOptions.reference = options.cpu.reference;
  cpuOptions.delays = options.cpu.delays;
  cpuOptions.commTimeout = options.commTimeout;
  cpuOptions.trace = options.trace;
  cpuOptions.computeSlots = options.cpu.computeSlots;
  // Copy engines on the CPU: the same schedule of copies and reductions as
  // on a GPU, in host memory (collective over the host team).
  std::unique_ptr<Communicator> copyEngines;
  if (options.communicator == CommunicatorChoice::CopyEngine)
    copyEngines = std::make_unique<CopyEngineCommunicator>(hostComm, std::make_unique<HostTransferEngine>());
  Communicator& comm = copyEngines ? *copyEngines : hostComm;
  auto backend = std::make_unique<cpu::CpuBackend>(cpuOptions, comm);
  return RankBackend{std::move(copyEngines), std::move(backend)};
}

}  // namespace hostir
