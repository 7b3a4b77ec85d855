// The team a `hostir` command runs on: MPI's ranks under mpirun, else
// threads of this process. The MPI side is the session, the communicators
// and a deadline on every blocking step of the host, shared by `run` and
// `calibrate`.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_heartbeat.h"

namespace hostir::tool {

// The team this process belongs to.
struct Team {
  int64_t world = 1;
  int rank = 0;
  int64_t ranksOnThisNode = 1;
  bool mpi = false;
  bool leader() const { return rank == 0; }
};

// The MPI side of a run: the session, the communicators and the deadline
// on every blocking step of the host.
struct MpiTeam {
  std::unique_ptr<MpiSession> session;
  std::unique_ptr<HostWatchdog> watchdog;
  // Beats while this rank works on its own, so that its peers' deadlines
  // count waiting only (destroyed before the watchdog it tells).
  std::unique_ptr<MpiHeartbeat> heartbeat;
  std::unique_ptr<MpiCommunicator> comm;
  int64_t ranksOnThisNode = 1;  // learnt at the start, while every rank is there
};

// Starts MPI; `deadline` bounds every blocking step of the host (a rank that
// misses it ends the job through MPI_COMM_WORLD). Every rank makes the same
// communicators whatever its options, since making one is collective: the
// ranks must reach the start-up agreement before any option can differ.
MpiTeam startMpi(std::chrono::milliseconds deadline);

// Runs `work`, this rank's own, beating to the peers meanwhile (under
// mpirun; `team` null: in-process, nothing to tell).
template <typename Work>
auto whileBeating(MpiTeam* team, Work&& work) {
  std::optional<MpiHeartbeat::Beating> beating;
  if (team) beating.emplace(team->heartbeat->beat());
  return work();
}

}  // namespace hostir::tool
