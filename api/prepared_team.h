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
  // destinations): rank 0's result, or the failure that started the
  // team's failure.
  virtual Result<RunResult> run(const RunCall& call) = 0;
  // After a failed call: why the executable must close (its team cannot
  // serve again), or nullopt when the next call may run.
  virtual std::optional<std::string> closesAfterFailure() const = 0;
};

}  // namespace hostir::api
