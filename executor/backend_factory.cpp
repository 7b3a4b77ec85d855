#include "executor/backend_factory.h"

#include <algorithm>
#include <stdexcept>

#include "comm/copy_engine_communicator.h"
#include "comm/host_transfer_engine.h"
#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/cpu_backend.h"
#include "ir/ops.h"

namespace hostir {

std::optional<BackendRequest> parseBackendRequest(std::string_view name) {
  if (name == "auto") return BackendRequest::Auto;
  if (name == "cpu") return BackendRequest::Cpu;
  if (name == "cuda") return BackendRequest::Cuda;
  return std::nullopt;
}

BackendChoice chooseBackend(BackendRequest requested, CommunicatorChoice communicator, const TeamPlace& team) {
  std::optional<std::string> unavailable = requested == BackendRequest::Cpu ? std::nullopt : cudaUnavailableReason();
  // A CPU request never asks: the answer would load the CUDA component.
  const int devices = unavailable || requested == BackendRequest::Cpu ? 0 : cudaDeviceCount();
  auto problemOn = [&](bool cuda) {
    return communicatorProblem(communicator, cuda, team.inProcess, team.world, team.ranksOnNode, cuda ? devices : 0);
  };
  auto chose = [&](BackendKind kind, std::optional<std::string> refusal = std::nullopt) {
    return BackendChoice{kind, communicator, std::move(refusal)};
  };
  if (requested == BackendRequest::Cuda) {
    if (unavailable) return chose(BackendKind::Cuda, "cuda: " + *unavailable);
    if (auto problem = problemOn(true)) return chose(BackendKind::Cuda, "cuda " + *problem);
    return chose(BackendKind::Cuda);
  }
  // Auto falls back to the CPU where CUDA cannot serve this team.
  if (requested == BackendRequest::Auto && !unavailable && !problemOn(true)) return chose(BackendKind::Cuda);
  if (auto problem = problemOn(false)) return chose(BackendKind::Cpu, "cpu " + *problem);
  return chose(BackendKind::Cpu);
}

RankBackend createBackend(const BackendOptions& options, Communicator& hostComm) {
  if (options.kind == BackendKind::Cuda) return createCudaBackend(options, hostComm);
  if (std::optional<std::string> problem =
          communicatorProblem(options.communicator, false, isInProcessTeam(hostComm), hostComm.size(), 1, 0))
    throw std::runtime_error("the CPU backend " + *problem);
  cpu::CpuBackendOptions cpuOptions;
  cpuOptions.streams = options.streams;
  cpuOptions.reference = options.cpu.reference;
  cpuOptions.delays = options.cpu.delays;
  cpuOptions.commTimeout = options.commTimeout;
  cpuOptions.trace = options.trace;
  cpuOptions.coresPerRank = options.cpu.coresPerRank;
  // Copy engines on the CPU: the same schedule of copies and reductions as
  // on a GPU, in host memory (collective over the host team).
  std::unique_ptr<Communicator> copyEngines;
  if (options.communicator == CommunicatorChoice::CopyEngine)
    copyEngines = std::make_unique<CopyEngineCommunicator>(hostComm, std::make_unique<HostTransferEngine>());
  Communicator& comm = copyEngines ? *copyEngines : hostComm;
  auto backend = std::make_unique<cpu::CpuBackend>(cpuOptions, comm);
  return RankBackend{std::move(copyEngines), std::move(backend)};
}

void loadBackendLibraries(const BackendOptions& options, const Program& program, int64_t ranks) {
  if (options.kind != BackendKind::Cpu) return;
  bool usesBlas = false;
  walkStatements(program.body, [&](const Statement& s) {
    if (!s.isOp()) return;
    CostRule rule = signatureOf(s.op().kind).cost;
    usesBlas |= isGemm(rule) || rule == CostRule::Attention;
  });
  if (!usesBlas) return;
  // A rank runs at most this many GEMMs at once (its compute gate).
  const int64_t perRank = options.cpu.reference          ? 1
                          : options.cpu.coresPerRank > 0 ? options.cpu.coresPerRank
                                                         : options.streams + 1;
  try {
    cpu::BlasBufferPool::process().reserveUpTo(static_cast<int>(std::min<int64_t>(ranks * perRank, 1 << 20)));
  } catch (const std::exception&) {  // reported by the first GEMM, at its statement
  }
}

}  // namespace hostir
