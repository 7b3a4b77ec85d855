// The CPU backend's entry in the registry (executor/backend_registry.h):
// always built, always able to run, made over the host team's
// communicator or copy engines in host memory.
#include <algorithm>
#include <stdexcept>

#include "comm/copy_engine_communicator.h"
#include "comm/host_transfer_engine.h"
#include "executor/backend_registry.h"
#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/cpu_backend.h"
#include "ir/ops.h"

namespace hostir {
namespace {

RankBackend createCpuBackend(const BackendOptions& options, Communicator& hostComm) {
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
  cpuOptions.describeFailure = options.describeFailure;
  // Copy engines on the CPU: the same schedule of copies and reductions as
  // on a GPU, in host memory (collective over the host team).
  std::unique_ptr<Communicator> copyEngines;
  if (options.communicator == CommunicatorChoice::CopyEngine)
    copyEngines = std::make_unique<CopyEngineCommunicator>(hostComm, std::make_unique<HostTransferEngine>());
  Communicator& comm = copyEngines ? *copyEngines : hostComm;
  auto backend = std::make_unique<cpu::CpuBackend>(cpuOptions, comm);
  return RankBackend{std::move(copyEngines), std::move(backend)};
}

// OpenBLAS and the GEMM buffers of every rank, before the ranks' threads start.
void loadCpuLibraries(const BackendOptions& options, const Program& program, int64_t ranks) {
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

bool alwaysBuilt() { return true; }

}  // namespace

const BackendEntry kCpuBackendEntry{
    .name = "cpu",
    .device = false,
    .built = alwaysBuilt,
    .create = createCpuBackend,
    .loadLibraries = loadCpuLibraries,
};

}  // namespace hostir
