#include "executor/backend_factory.h"

#include "executor/cpu/cpu_backend.h"

namespace hostir {

RankBackend createBackend(BackendKind kind, const BackendOptions& options, Communicator& hostComm) {
  if (kind == BackendKind::Cuda) return createCudaBackend(options, hostComm);
  cpu::CpuBackendOptions cpuOptions;
  cpuOptions.poolSize = options.streams;
  cpuOptions.reference = options.cpu.reference;
  cpuOptions.delays = options.cpu.delays;
  cpuOptions.commTimeout = options.commTimeout;
  cpuOptions.trace = options.cpu.trace;
  cpuOptions.computeSlots = options.cpu.computeSlots;
  return RankBackend{nullptr, std::make_unique<cpu::CpuBackend>(cpuOptions, hostComm)};
}

}  // namespace hostir
