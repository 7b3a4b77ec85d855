// The steps a run shares, in process and on MPI: the request built and
// checked from the API's arguments, and the result copied out.
#pragma once

#include <map>
#include <string>

#include "api/program_impl.h"
#include "executor/runner.h"
#include "hostir/execution.h"

namespace hostir::api {

struct PreparedRun {
  RunRequest request;
};

// Verifies for the team's ranks, applies the passes, proves the program
// (unless options.checked is false), checks the buffers against the
// declarations and chooses the backend (api/backend_choice.h); throws Error.
PreparedRun prepareRun(const Program& program, const std::map<std::string, HostBuffer>& inputs,
                       const std::map<std::string, HostBuffer>& outputs, const RunOptions& options,
                       const TeamPlace& team);

// The outputs copied into the caller's buffers (by the leader, which has
// the global tensors), or the run's failure as Error (kind Run).
RunStats finishRun(const Program& program, Result<RunResult> result, const std::map<std::string, HostBuffer>& outputs,
                   bool leader);

}  // namespace hostir::api
