#include "runtime/backend_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace hostir {
namespace {

// A non-negative integer from the environment; nullopt when unset or not one.
std::optional<int64_t> environmentInt(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  std::string_view text(value);
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc() || end != text.data() + text.size() || parsed < 0) return std::nullopt;
  return parsed;
}

}  // namespace

std::optional<int64_t> launcherLocalRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (std::optional<int64_t> value = environmentInt(name)) return *value;
  return std::nullopt;
}

std::optional<int64_t> launcherLocalSize() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (std::optional<int64_t> value = environmentInt(name)) return std::max<int64_t>(1, *value);
  return std::nullopt;
}

bool isInProcessTeam(const Communicator& comm) { return comm.name() == "in-process"; }

std::optional<int64_t> ranksOnThisNode(bool inProcess, int64_t world) {
  if (inProcess) return world;
  return launcherLocalSize();
}

std::optional<int64_t> ranksOnThisNode(const Communicator& comm) {
  return ranksOnThisNode(isInProcessTeam(comm), comm.size());
}

int64_t localRank(const Communicator& comm) {
  if (!isInProcessTeam(comm))
    if (std::optional<int64_t> local = launcherLocalRank()) return *local;
  return comm.rank();
}

int resolveCoresPerRank(int requested, int64_t ranksOnNode) {
  if (requested > 0) return requested;
  return static_cast<int>(
      std::max<int64_t>(1, std::thread::hardware_concurrency() / std::max<int64_t>(1, ranksOnNode)));
}

int deviceForRank(int64_t localRank, int devices) { return devices > 0 ? static_cast<int>(localRank % devices) : 0; }

std::optional<std::string> deviceShortage(int64_t ranksOnNode, int devices) {
  if (ranksOnNode <= devices) return std::nullopt;
  return fmt::format("needs a CUDA device per rank for NCCL: {} ranks share this node's {} device{}", ranksOnNode,
                     devices, devices == 1 ? "" : "s");
}

std::optional<CommunicatorChoice> parseCommunicatorChoice(std::string_view name) {
  for (CommunicatorChoice choice : {CommunicatorChoice::Auto, CommunicatorChoice::Nccl, CommunicatorChoice::CopyEngine})
    if (name == communicatorChoiceName(choice)) return choice;
  return std::nullopt;
}

std::string_view communicatorChoiceName(CommunicatorChoice choice) {
  switch (choice) {
    case CommunicatorChoice::Auto: return "auto";
    case CommunicatorChoice::Nccl: return "nccl";
    case CommunicatorChoice::CopyEngine: return "copy-engine";
  }
  return "?";
}

CommunicatorChoice cudaCommunicator(CommunicatorChoice requested, bool inProcess, int64_t ranksOnNode, int devices) {
  if (requested != CommunicatorChoice::Auto) return requested;
  return inProcess && ranksOnNode > devices ? CommunicatorChoice::CopyEngine : CommunicatorChoice::Nccl;
}

std::optional<std::string> communicatorProblem(CommunicatorChoice requested, bool cuda, bool inProcess, int64_t world,
                                               int64_t ranksOnNode, int devices) {
  if (requested == CommunicatorChoice::Nccl && !cuda)
    return "cannot use the nccl communicator, which needs CUDA devices";
  if (requested == CommunicatorChoice::CopyEngine && !inProcess && world > 1)
    return "cannot use the copy-engine communicator across processes: it needs ranks that are threads of one "
           "process (in-process ranks, not mpirun)";
  if (cuda && cudaCommunicator(requested, inProcess, ranksOnNode, devices) == CommunicatorChoice::Nccl)
    return deviceShortage(ranksOnNode, devices);
  return std::nullopt;
}

}  // namespace hostir
