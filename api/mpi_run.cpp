// runOnMpi: the run on a communicator the caller owns.
#include <cstdio>
#include <memory>

#include "api/run_request.h"
#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "executor/backend_factory.h"
#include "hostir/mpi.h"
#include "runtime/backend_selection.h"

namespace hostir::api {

RunStats runOnMpi(MPI_Comm comm, const Program& program, const std::map<std::string, HostBuffer>& inputs,
                  const std::map<std::string, HostBuffer>& outputs, const RunOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw plainError(ErrorKind::Usage, "runOnMpi: MPI is not initialized");
  int threadLevel = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threadLevel);
  if (threadLevel < MPI_THREAD_SERIALIZED)
    throw plainError(ErrorKind::Usage,
                     "runOnMpi: MPI must be initialized with MPI_THREAD_MULTIPLE (or at least "
                     "MPI_THREAD_SERIALIZED): communications are issued from stream threads");
  int world = 0;
  MPI_Comm_size(comm, &world);
  MpiCommunicator team(comm);
  const TeamPlace place{false, world, ranksOnThisNode(team).value_or(world)};

  // Every rank prepares alike (the same program and options); a rank whose
  // preparation fails must not leave the others waiting in the run.
  std::optional<PreparedRun> prepared;
  std::optional<Error> failure;
  try {
    prepared = prepareRun(program, inputs, outputs, options, place);
  } catch (const Error& error) {
    failure = error;
  }
  int failed = failure ? 1 : 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, comm);
  if (failure) throw *failure;
  if (anyFailed) throw plainError(ErrorKind::Run, "another rank could not prepare the run");

  RunRequest& request = prepared->request;
  // A rank that stops answering ends the job rather than hanging the others.
  HostWatchdog watchdog(request.backend.commTimeout, [comm](const std::string& why) {
    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    std::fprintf(stderr, "hostir: rank %d: error: %s\n", rank, why.c_str());
    std::fflush(stderr);
    MPI_Abort(comm, 1);
  });
  request.watchdog = &watchdog;
  std::unique_ptr<MpiCommunicator> signatures;
  if (request.matchCommunications) signatures = std::make_unique<MpiCommunicator>(comm);
  Result<RunResult> result = runOnRank(request, team, signatures.get());
  return finishRun(program, std::move(result), outputs, team.rank() == 0);
}

}  // namespace hostir::api
