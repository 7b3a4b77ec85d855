// What the `hostir` command line alone uses below the public API, and the
// command line's one way into it (docs/architecture.md):
// - the MPI job that mpirun started (MpiLaunch): its ranks, a deadline on
//   every blocking step of the host, heartbeats while a rank works on its
//   own, and the few collectives of the launch itself;
// - what `hostir run` gives an executable that no embedder sets: its words
//   in refusals, its progress and fault-injection hook, and under mpirun
//   the start-up agreement (tools/hostir/launch_agreement.h) and the
//   launch's watchdog.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hostir/error.h"
#include "hostir/executable.h"

namespace hostir {
class HostWatchdog;
}

namespace hostir::api {

// The MPI job mpirun started: MPI initialized (and finalized when this
// ends), MPI_COMM_WORLD's ranks. Every rank makes one at start-up (its
// communicators are made collectively, whatever the options: the ranks
// must reach the start-up agreement before any option can differ).
// Every blocking step below has the deadline given; a rank that misses it
// ends the job through MPI_COMM_WORLD with the step's name.
class MpiLaunch {
 public:
  // Whether mpirun (mpiexec, srun) started this process, judged from the
  // environment before MPI is initialized.
  static bool launchedByMpirun();

  explicit MpiLaunch(std::chrono::milliseconds deadline);
  ~MpiLaunch();
  MpiLaunch(const MpiLaunch&) = delete;
  MpiLaunch& operator=(const MpiLaunch&) = delete;

  int rank() const;
  int64_t world() const;
  int64_t ranksOnThisNode() const;  // learnt at the start, while every rank is there
  HostWatchdog* watchdog() const;   // for CommandLineHooks::watchdog

  // Runs `work`, this rank's own, beating to its peers meanwhile, so that
  // their deadlines count waiting only.
  void whileBeating(const std::function<void()>& work);

  // Collectives of the launch, each under the deadline, named by `step`.
  void barrier(std::string_view step);
  bool anyRank(bool mine, std::string_view step);         // whether any rank said true
  double fromRank0(double value, std::string_view step);  // rank 0's value, on every rank
  // Every rank's row (all of one length), rank by rank.
  std::vector<double> allgather(const std::vector<double>& row, std::string_view step);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How a refusal names the caller's commands and options.
struct RunWords {
  std::string_view run = "run";
  std::string_view check = "check";
  std::string_view unchecked = "checked=false";
};

// This rank's preparation, as the ranks compare it before starting.
struct PreparedForAgreement {
  const Error* failure = nullptr;             // why this rank cannot start; null: it can
  std::string backend;                        // the backend chosen ("cpu", "cuda"); empty on failure
  std::string programAfterPasses;             // printed; empty on failure
  std::map<std::string, int64_t> params;      // every integer parameter's value; empty on failure
  std::map<std::string, std::string> values;  // every float and dtype parameter's value, as text
};

struct CommandLineHooks {
  RunWords words;
  // Called with a run's index (warmups first) before the barrier that
  // starts it (started false) and just after (true), from the ranks' threads.
  std::function<void(int run, bool started)> atRun;

  // Under mpirun only.
  // The launch's deadline on the host's blocking steps (its heartbeats feed
  // it); null: the executable makes its own.
  HostWatchdog* watchdog = nullptr;
  std::optional<int64_t> ranksOnThisNode;  // known already: no collective to learn it
  // Collective, in place of the plain vote on whether every rank prepared:
  // true when every rank may start.
  std::function<bool(const PreparedForAgreement&)> agree;
  // Runs this rank's own work (its preparation, rank 0's writing of the
  // team's trace), during which its peers must hear it is alive.
  std::function<void(const std::function<void()>&)> whileOwnWork;
};

// The executable of `hostir run` on in-process ranks (options.ranks).
Executable compileForCommandLine(const Program& program, const RunOptions& options, const CommandLineHooks& hooks);

// The executable of `hostir run` under mpirun, on MPI_COMM_WORLD (MPI
// initialized by the caller). When hooks.agree refuses, throws Error (kind
// Run): this rank's failure, or that another rank's stopped the start.
Executable compileOnMpiWorldForCommandLine(const Program& program, const RunOptions& options,
                                           const CommandLineHooks& hooks);

}  // namespace hostir::api
