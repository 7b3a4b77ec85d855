#include "executor/runner.h"

#include <fmt/format.h>

#include "executor/rank_session.h"
#include "executor/resident_team.h"

namespace hostir {

bool anyRankFailed(Communicator& comm, bool failed) {
  double flag = failed ? 1.0 : 0.0;
  comm.allreduce(&flag, &flag, 1, DType::F64, ReduceOp::Max);
  return flag != 0.0;
}

namespace {

RunCall callOf(const RunRequest& request) {
  RunCall call;
  for (const auto& [name, tensor] : request.inputs) call.inputs[name] = refOf(tensor);
  call.cancel = request.cancel;
  return call;
}

}  // namespace

Result<RunResult> runOnRank(const RunRequest& request, Communicator& comm, Communicator* signatures) {
  loadBackendLibraries(request.backend, request.program, 1);
  RankSession session(request, comm, signatures);
  RankOutcome setUp = session.setUp();
  if (!setUp.result) return setUp.result.error();
  return session.run(callOf(request)).result;
}

Result<RunResult> runInProcess(const RunRequest& request, int64_t world) {
  Result<std::unique_ptr<ResidentTeam>> team = ResidentTeam::start(request, world);
  if (!team) return team.error();
  return team.value()->run(callOf(request));
}

}  // namespace hostir
