// compileOnMpi and runOnMpi: an executable on a communicator the caller owns.
#include <cstdio>
#include <memory>

#include "api/executable_impl.h"
#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "executor/backend_factory.h"
#include "hostir/mpi.h"
#include "runtime/backend_selection.h"

namespace hostir::api {
namespace {

void checkMpiReady() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw plainError(ErrorKind::Usage, "compileOnMpi: MPI is not initialized");
  int threadLevel = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threadLevel);
  if (threadLevel < MPI_THREAD_SERIALIZED)
    throw plainError(ErrorKind::Usage,
                     "compileOnMpi: MPI must be initialized with MPI_THREAD_MULTIPLE (or at least "
                     "MPI_THREAD_SERIALIZED): communications are issued from stream threads");
}

// This process's rank: its session runs on the caller's thread.
class MpiTeamOfExecutable : public PreparedTeam {
 public:
  MpiTeamOfExecutable(MPI_Comm comm, RunRequest& request)
      : comm_(comm),
        team_(comm),
        // A rank that stops answering ends the job rather than hanging the others.
        watchdog_(request.backend.commTimeout, [comm](const std::string& why) {
          int rank = -1;
          MPI_Comm_rank(comm, &rank);
          std::fprintf(stderr, "hostir: rank %d: error: %s\n", rank, why.c_str());
          std::fflush(stderr);
          MPI_Abort(comm, 1);
        }) {
    request.watchdog = &watchdog_;
    if (request.matchCommunications) signatures_ = std::make_unique<MpiCommunicator>(comm);
    loadBackendLibraries(request.backend, request.program, 1);
    session_ = std::make_unique<RankSession>(request, team_, signatures_.get());
  }

  Result<RunResult> setUp() { return session_->setUp().result; }
  Result<RunResult> run(const RunCall& call) override { return session_->run(call).result; }
  std::optional<std::string> closesAfterFailure() const override {
    return "a failed run ends the MPI team, which cannot be started again";
  }

 private:
  MPI_Comm comm_;
  MpiCommunicator team_;
  HostWatchdog watchdog_;
  std::unique_ptr<MpiCommunicator> signatures_;
  std::unique_ptr<RankSession> session_;
};

}  // namespace

Executable compileOnMpi(MPI_Comm comm, const Program& program, const RunOptions& options) {
  checkMpiReady();
  int world = 0;
  MPI_Comm_size(comm, &world);
  MpiCommunicator probe(comm);
  const TeamPlace place{false, world, ranksOnThisNode(probe).value_or(world)};

  // Every rank prepares alike (the same program and options); a rank whose
  // preparation fails must not leave the others waiting in the run.
  std::unique_ptr<Executable::Impl> impl;
  std::optional<Error> failure;
  try {
    impl = std::make_unique<Executable::Impl>(program, options, prepareRun(program, options, place));
  } catch (const Error& error) {
    failure = error;
  }
  int failed = failure ? 1 : 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, comm);
  if (failure) throw *failure;
  if (anyFailed) throw plainError(ErrorKind::Run, "another rank could not prepare the run");

  auto team = std::make_unique<MpiTeamOfExecutable>(comm, impl->prepared.request);
  Result<RunResult> setUp = team->setUp();
  if (!setUp) throw diagnosticError(ErrorKind::Run, setUp.error(), program.impl().path, program.impl().text);
  impl->team = std::move(team);
  return Executable(std::move(impl));
}

RunStats runOnMpi(MPI_Comm comm, const Program& program, const std::map<std::string, HostBuffer>& inputs,
                  const std::map<std::string, HostBuffer>& outputs, const RunOptions& options) {
  RunOptions once = options;
  once.fillMissingInputs = true;  // runOnMpi has always filled what the caller does not give
  return compileOnMpi(comm, program, once).run(inputs, outputs);
}

}  // namespace hostir::api
