// compileOnMpi and runOnMpi: an executable on a communicator the caller owns.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "api/calibration_team.h"
#include "api/command_line.h"
#include "api/executable_impl.h"
#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "executor/backend_factory.h"
#include "hostir/mpi.h"
#include "ir/printer.h"
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

// A deadline on the host's blocking steps: a rank that stops answering
// ends the job rather than hanging the others.
std::unique_ptr<HostWatchdog> abortingWatchdog(MPI_Comm comm, std::chrono::milliseconds deadline) {
  return std::make_unique<HostWatchdog>(deadline, [comm](const std::string& why) {
    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    std::fprintf(stderr, "hostir: rank %d: error: %s\n", rank, why.c_str());
    std::fflush(stderr);
    MPI_Abort(comm, 1);
  });
}

std::string mpiLibrary() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<size_t>(std::max(length, 0)));
  size_t end = text.find_first_of(",\n");  // "Open MPI v4.1.4, package: ..."
  return end == std::string::npos ? text : text.substr(0, end);
}

// This process's rank: its session runs on the caller's thread.
class MpiTeamOfExecutable : public PreparedTeam {
 public:
  // `watchdog`: the caller's deadline on the host's blocking steps; null:
  // the team's own, which ends the job through `comm`.
  MpiTeamOfExecutable(MPI_Comm comm, RunRequest& request, HostWatchdog* watchdog) : team_(comm) {
    if (!watchdog) {
      ownWatchdog_ = abortingWatchdog(comm, request.backend.commTimeout);
      watchdog = ownWatchdog_.get();
    }
    request.watchdog = watchdog;
    if (request.matchCommunications) signatures_ = std::make_unique<MpiCommunicator>(comm);
    loadBackendLibraries(request.backend, request.program, 1);
    session_ = std::make_unique<RankSession>(request, team_, signatures_.get());
  }

  Result<RunResult> setUp() { return session_->setUp().result; }
  Result<RunResult> run(const RunCall& call) override { return session_->run(call).result; }
  std::optional<std::string> closesAfterFailure() const override {
    return "a failed run ends the MPI team, which cannot be started again";
  }
  bool oneRankPerProcess() const override { return true; }

 private:
  MpiCommunicator team_;
  std::unique_ptr<HostWatchdog> ownWatchdog_;
  std::unique_ptr<MpiCommunicator> signatures_;
  std::unique_ptr<RankSession> session_;
};

// What every rank of compileOnMpi must have alike, hashed (FNV-1a): the
// program the passes made, its parameters and the backend. Ranks that
// differ would issue different communications and fail, or hang, inside
// the first run.
uint64_t preparedFingerprint(const RunRequest& request) {
  std::string text = fmt::format("{}\n{}\n", request.backend.kind.name, printProgram(request.program));
  for (const auto& [name, value] : request.params) text += fmt::format("{}={};", name, value);
  // The program prints its float and dtype parameters' names; their values count too.
  for (const auto& [name, value] : request.values) text += fmt::format("{}={};", name, formatValueParam(value));
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// The plain vote, for callers without the command line's agreement: whether
// every rank prepared (nullopt: this one failed), and the same run.
enum class Vote { Proceed, AnotherRankFailed, RanksDiffer };
Vote everyRankPreparedAlike(MPI_Comm comm, std::optional<uint64_t> fingerprint) {
  // One MPI_MAX gives whether any rank failed, and the largest and smallest
  // fingerprint (the smallest as the largest complement).
  uint64_t mine[3] = {fingerprint ? 0u : 1u, fingerprint.value_or(0), ~fingerprint.value_or(~uint64_t{0})};
  uint64_t team[3] = {0, 0, 0};
  MPI_Allreduce(mine, team, 3, MPI_UINT64_T, MPI_MAX, comm);
  if (team[0] != 0) return Vote::AnotherRankFailed;
  return team[1] == ~team[2] ? Vote::Proceed : Vote::RanksDiffer;
}

// Rank 0 writes the team's trace between the chunks it receives: its own
// work, during which its peers must hear it.
void writeTraceAsOwnWork(RunRequest& request, const CommandLineHooks& hooks) {
  if (!request.writeTrace || !hooks.whileOwnWork) return;
  request.writeTrace = [write = std::move(request.writeTrace), own = hooks.whileOwnWork](
                           Communicator& comm, const TraceRecorder& recorder) -> Result<TraceSummary> {
    if (comm.rank() != 0) return write(comm, recorder);
    std::optional<Result<TraceSummary>> written;
    own([&] { written.emplace(write(comm, recorder)); });
    return std::move(*written);
  };
}

Executable compileOnComm(MPI_Comm comm, const Program& program, const RunOptions& options,
                         const CommandLineHooks& hooks) {
  checkMpiReady();
  int world = 0;
  MPI_Comm_size(comm, &world);
  std::optional<int64_t> onThisNode = hooks.ranksOnThisNode;
  if (!onThisNode) onThisNode = ranksOnThisNode(MpiCommunicator(comm));
  const TeamPlace place{false, world, onThisNode.value_or(world)};

  // Every rank prepares alike (the same program and options); a rank whose
  // preparation fails must not leave the others waiting in the run.
  std::unique_ptr<Executable::Impl> impl;
  std::optional<Error> failure;
  auto prepare = [&] {
    try {
      impl = std::make_unique<Executable::Impl>(program, options, prepareRun(program, options, place, hooks.words));
    } catch (const Error& error) {
      failure = error;
    } catch (const std::bad_alloc&) {
      failure = plainError(ErrorKind::Program,
                           "out of memory while preparing the run (verifying, rewriting or proving the program)");
    }
  };
  if (hooks.whileOwnWork)
    hooks.whileOwnWork(prepare);
  else
    prepare();
  bool proceed = false;
  if (hooks.agree) {
    PreparedForAgreement mine;
    mine.failure = failure ? &*failure : nullptr;
    if (impl) {
      const RunRequest& request = impl->prepared.request;
      mine.backend = std::string(request.backend.kind.name);
      mine.programAfterPasses = printProgram(request.program);
      mine.params = request.params;
      for (const auto& [name, value] : request.values) mine.values[name] = formatValueParam(value);
    }
    proceed = hooks.agree(mine);
  } else {
    std::optional<uint64_t> fingerprint;
    if (impl) fingerprint = preparedFingerprint(impl->prepared.request);
    Vote vote = everyRankPreparedAlike(comm, fingerprint);
    if (vote == Vote::RanksDiffer)
      throw plainError(ErrorKind::Usage,
                       "the ranks prepared different runs: every rank must give the same program, parameters, "
                       "passes and backend (the program after the passes, its parameters or the backend differ "
                       "between ranks)");
    proceed = vote == Vote::Proceed;
  }
  if (failure) throw *failure;
  if (!proceed) throw plainError(ErrorKind::Run, "another rank could not prepare the run");

  RunRequest& request = impl->prepared.request;
  request.atRun = hooks.atRun;
  writeTraceAsOwnWork(request, hooks);
  auto team = std::make_unique<MpiTeamOfExecutable>(comm, request, hooks.watchdog);
  Result<RunResult> setUp = team->setUp();
  if (!setUp) throw diagnosticError(ErrorKind::Run, setUp.error(), program.impl().path, program.impl().text);
  impl->team = std::move(team);
  return Executable(std::move(impl));
}

}  // namespace

Executable compileOnMpi(MPI_Comm comm, const Program& program, const RunOptions& options) {
  return compileOnComm(comm, program, options, {});
}

Executable compileOnMpiWorldForCommandLine(const Program& program, const RunOptions& options,
                                           const CommandLineHooks& hooks) {
  return compileOnComm(MPI_COMM_WORLD, program, options, hooks);
}

Calibration calibrateOnMpi(MPI_Comm comm, const CalibrateOptions& options) {
  checkMpiReady();
  MpiCommunicator team(comm);
  // Generous: the longest single run of a calibration is a second or two.
  std::unique_ptr<HostWatchdog> watchdog = abortingWatchdog(comm, std::chrono::seconds(300));
  CalibrationTeam on;
  on.world = team.size();
  on.ranksOnThisNode = ranksOnThisNode(team).value_or(team.size());
  on.inProcess = false;
  on.leader = team.rank() == 0;
  on.description = fmt::format("an MPI team ({})", mpiLibrary());
  on.runTeam = [&team](const RunRequest& run) { return runOnRank(run, team); };
  on.watchdog = watchdog.get();
  on.agree = [&](double value) {
    withDeadline(watchdog.get(), "the broadcast of rank 0's value",
                 [&] { team.broadcast(&value, 1, hostir::DType::F64, 0); });
    return value;
  };
  on.barrier = [&] { withDeadline(watchdog.get(), "the barrier before sampling the load", [&] { team.barrier(); }); };
  return calibrateOnTeam(options, on);
}

RunStats runOnMpi(MPI_Comm comm, const Program& program, const std::map<std::string, HostBuffer>& inputs,
                  const std::map<std::string, HostBuffer>& outputs, const RunOptions& options) {
  return compileOnMpi(comm, program, options).run(inputs, outputs);
}

}  // namespace hostir::api
