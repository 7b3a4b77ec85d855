// Runs a verified program on a team: each rank evaluates it on its own
// backend, with its shard of the inputs, and rank 0 ends up with the global
// outputs. `runOnRank` is the SPMD body (MPI calls it in each process);
// `runInProcess` runs it on threads with an in-process team.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/race_check.h"
#include "comm/communicator.h"
#include "comm/host_watchdog.h"
#include "executor/backend_factory.h"
#include "executor/host_tensor.h"
#include "executor/rank_failure.h"
#include "hostir/defaults.h"
#include "ir/ir.h"
#include "runtime/trace.h"

namespace hostir {

struct RunRequest {
  Program program;                        // verified for these params and world
  std::map<std::string, int64_t> params;  // every integer param's value
  // Every float and dtype param's value, bound into `program` (bindValueParams).
  std::map<std::string, ValueParam> values;
  std::map<std::string, HostTensor> inputs;  // global tensors; the others are seeded
  uint64_t seed = 0;
  // The rank's backend and its knobs. backend.cpu.reference asks for the
  // serial reference: the CPU backend on the host team's communicator, one
  // stream, f64-accumulating GEMMs, whatever the rest says.
  BackendOptions backend;
  bool raceCheck = false;  // check the issued work for stream races while it runs
  // The inputs the program never writes. A backend whose tensors live in
  // host memory reads the caller's tensor of these in place, without a
  // copy, wherever a rank's shard of it is contiguous.
  std::set<std::string> inputsReadInPlace;
  int warmup = 0;
  int repeat = 1;
  // Set: every rank records the last run's timeline, within
  // its share of traceLimitBytes, and once the runs end calls this with its
  // stopped recorder, collectively and under the watchdog's deadline. The
  // tool's writer assembles the team's file on rank 0
  // (api/trace_file.h); rank 0's answer is RunResult::trace.
  std::function<Result<TraceSummary>(Communicator&, const TraceRecorder&)> writeTrace;
  std::string traceSourceName;  // prefixes the trace's source positions ("p.hir:3:4")
  uint64_t traceLimitBytes = kDefaultTraceLimitBytes;
  // Deadlines for the host's blocking steps (barriers, votes, gathers);
  // null for in-process teams, whose ranks fail together.
  HostWatchdog* watchdog = nullptr;
  // Exchange every communication's signature between the ranks before it is
  // issued (`--unchecked`: the static cross-rank proof was skipped).
  bool matchCommunications = false;
  // Turns a failure into the text `Communicator::abort` reports (under
  // mpirun the failing rank's abort is the only message that reaches the
  // user); the plain message when unset.
  DescribeFailure describeFailure;
  // Set from another thread: every rank throws "the run was cancelled" at
  // its next operation or run, and the team unwinds as for any failure.
  const std::atomic<bool>* cancel = nullptr;
  // Testing aid: called with the run's index before the barrier that starts
  // it (started false) and just after that barrier (started true).
  std::function<void(int run, bool started)> atRun;
};

struct RunResult {
  std::map<std::string, HostTensor> outputs;  // global; filled on rank 0
  // With RunCall::gatherCopies, on rank 0: every rank's copy of each
  // replicated output (declared without shard), in rank order.
  std::map<std::string, std::vector<HostTensor>> copies;
  std::vector<double> runMillis;  // one per timed run (rank 0)
  // Rank 0's host time per timed run from its start until all its work was
  // issued (a replayed graph: launched), before it waits for the streams.
  std::vector<double> issueMillis;
  // The most tensor memory any rank held at once during the last run,
  // inputs included; absent when the backend holds none.
  std::optional<uint64_t> peakMemoryBytes;
  uint64_t issuedOperationsPerRun = 0;
  std::vector<RaceReport> races;  // with raceCheck: what the issued work raced on (every rank's, in process)
  // With writeTrace, on rank 0: what the trace file holds (truncated?), or why it could not be written.
  std::optional<Result<TraceSummary>> trace;
};

// Collective: every rank learns whether any rank failed, so that none goes
// on alone into a communication its peers will never join. A host step, not
// a run: it throws CommError when the team was aborted.
bool anyRankFailed(Communicator& comm, bool failed);

// The SPMD body for one rank. Errors of one rank reach every rank: the
// failing rank aborts the team (with request.describeFailure's text), the
// others' communications fail. `signatures` is the communicator of the
// signature exchange, needed when request.matchCommunications is set.
//
// Errors are values: nothing escapes runOnRank or runInProcess. Inside, the
// evaluator, the backends and the host's steps throw (DiagnosticError for a
// positioned error, CommError when a peer failed, a timeout of the
// watchdog, std::bad_alloc, and what a stream thread threw, rethrown by
// synchronizeHost); the rank's run catches every one of them at this
// boundary, aborts the team with it, and returns it as a Diagnostic
// (executor/rank_failure.h). Nothing here prints.
Result<RunResult> runOnRank(const RunRequest& request, Communicator& comm, Communicator* signatures = nullptr);

// `world` ranks as threads of this process; returns rank 0's result, or the
// first rank's error (the one that caused the others to fail).
Result<RunResult> runInProcess(const RunRequest& request, int64_t world);

}  // namespace hostir
