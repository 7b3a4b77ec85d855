// What `hostir run` gives an executable that no embedder sets: its words in
// refusals, its progress and fault-injection hook, and under mpirun its
// launch (the start-up agreement of tools/hostir/launch_agreement.h, the
// watchdog its heartbeats feed). The command line's one way into the
// library below the public headers (docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "hostir/error.h"
#include "hostir/executable.h"

namespace hostir {
class HostWatchdog;
}

namespace hostir::api {

// How a refusal names the caller's commands and options.
struct RunWords {
  std::string_view run = "run";
  std::string_view check = "check";
  std::string_view unchecked = "checked=false";
};

// This rank's preparation, as the ranks compare it before starting.
struct PreparedForAgreement {
  const Error* failure = nullptr;         // why this rank cannot start; null: it can
  std::string backend;                    // the backend chosen ("cpu", "cuda"); empty on failure
  std::string programAfterPasses;         // printed; empty on failure
  std::map<std::string, int64_t> params;  // every parameter's value; empty on failure
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
