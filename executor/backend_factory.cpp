#include "executor/backend_factory.h"

#include <fmt/format.h>

#include <span>

#include "executor/backend_registry.h"

namespace hostir {

bool isBackendRequest(std::string_view name) { return name == "auto" || findBackend(name) != nullptr; }

namespace {

// Why `entry` cannot serve this team with `communicator`, as what follows
// "backend " in a sentence; nullopt when it can.
std::optional<std::string> refusalOf(const BackendEntry& entry, CommunicatorChoice communicator,
                                     const TeamPlace& team) {
  if (entry.unavailable)
    if (std::optional<std::string> why = entry.unavailable()) return fmt::format("{}: {}", entry.name, *why);
  const int devices = entry.device && entry.deviceCount ? entry.deviceCount() : 0;
  if (std::optional<std::string> problem =
          communicatorProblem(communicator, entry.device, team.inProcess, team.world, team.ranksOnNode, devices))
    return fmt::format("{} {}", entry.name, *problem);
  return std::nullopt;
}

}  // namespace

BackendChoice chooseBackend(std::string_view requested, CommunicatorChoice communicator, const TeamPlace& team) {
  if (requested != "auto") {
    const BackendEntry& entry = backendEntry(BackendKind{requested});  // the caller checked the name
    return BackendChoice{BackendKind{entry.name}, communicator, refusalOf(entry, communicator, team)};
  }
  // Auto: the first that can serve; the last (the CPU) with its refusal, if any.
  std::span<const BackendEntry* const> entries = registeredBackends();
  for (const BackendEntry* entry : entries.first(entries.size() - 1))
    if (!refusalOf(*entry, communicator, team)) return BackendChoice{BackendKind{entry->name}, communicator, {}};
  const BackendEntry& last = *entries.back();
  return BackendChoice{BackendKind{last.name}, communicator, refusalOf(last, communicator, team)};
}

RankBackend createBackend(const BackendOptions& options, Communicator& hostComm) {
  return backendEntry(options.kind).create(options, hostComm);
}

void loadBackendLibraries(const BackendOptions& options, const Program& program, int64_t ranks) {
  const BackendEntry& entry = backendEntry(options.kind);
  if (entry.loadLibraries) entry.loadLibraries(options, program, ranks);
}

}  // namespace hostir
