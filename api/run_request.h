// The steps a run shares, in process and on MPI: the request built and
// checked from the API's arguments, and the result copied out.
#pragma once

#include <map>
#include <string>

#include "api/command_line.h"
#include "api/program_impl.h"
#include "executor/host_tensor.h"
#include "executor/runner.h"
#include "hostir/execution.h"

namespace hostir::api {

// A run prepared for a team: its request, and the declarations (global
// shapes) the caller's buffers must match.
struct PreparedRun {
  RunRequest request;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// Verifies for the team's ranks, applies the passes, proves the program
// (unless options.checked is false) and chooses the backend
// (api/backend_choice.h); throws Error. `words` name the caller's commands
// in a refusal.
PreparedRun prepareRun(const Program& program, const RunOptions& options, const TeamPlace& team,
                       const RunWords& words = {});

// One call's buffers checked against the declarations: every input given
// (or none: all are then seeded) unless `fillMissing`, none unknown, each of its declared dtype and global
// shape (Error kind Usage naming the first that is not). The inputs as the
// ranks read them.
std::map<std::string, HostTensorRef> checkedInputs(const PreparedRun& prepared,
                                                   const std::map<std::string, HostBuffer>& inputs,
                                                   const std::map<std::string, HostBuffer>& outputs, bool fillMissing);

// The call's statistics, or its failure as Error (kind Run). The outputs
// were written into the caller's buffers by rank 0 (RunCall::outputs).
RunStats finishRun(const Program& program, Result<RunResult> result);

}  // namespace hostir::api
