// The ranks an executable runs on, prepared once: in-process threads
// (api/executable.cpp) or this process's rank of an MPI communicator
// (api/mpi_run.cpp). The executable sees only this interface.
#pragma once

#include <optional>
#include <string>

#include "executor/rank_session.h"

namespace hostir::api {

class PreparedTeam {
 public:
  virtual ~PreparedTeam() = default;
  // One call on every rank (rank 0 writes the outputs into the call's
  // destinations, and with one rank per process every rank its replicated
  // ones): rank 0's result, or the failure that started the
  // team's failure.
  virtual Result<RunResult> run(const RunCall& call) = 0;
  // After a failed call: why the executable must close (its team cannot
  // serve again), or nullopt when the next call may run.
  virtual std::optional<std::string> closesAfterFailure() const = 0;
  // Whether this process holds one rank of the team (MPI), so that the
  // caller's buffers on every rank are that rank's own.
  virtual bool oneRankPerProcess() const { return false; }
};

}  // namespace hostir::api
