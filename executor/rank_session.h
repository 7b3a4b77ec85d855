// One rank of a prepared run: its backend, streams, evaluator and input
// tensors are set up once, then serve any number of calls, each with the
// inputs its caller gives. runOnRank, the in-process resident team and an
// executable on MPI all run a rank through it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "executor/host_tensor.h"
#include "executor/runner.h"

namespace hostir {

// One call of a prepared run.
struct RunCall {
  // Global tensors the caller owns for the call; inputs not given are
  // filled from request.seed.
  std::map<std::string, HostTensorRef> inputs;
  // Where rank 0 writes these outputs' global tensors (the caller's memory,
  // contiguous), instead of returning them in RunResult::outputs.
  std::map<std::string, std::byte*> outputs;
  // Whether every rank, not only rank 0, writes the replicated outputs
  // (declared without shard) into `outputs`: ranks in processes of their
  // own (MPI), whose `outputs` are each their own memory.
  bool everyRankWritesReplicatedOutputs = false;
  // Whether the outputs not in `outputs` come back in RunResult::outputs
  // (the command line's --check compares them all) or are not gathered.
  bool gatherOtherOutputs = true;
  // Whether rank 0 also receives every rank's copy of each replicated
  // output (RunResult::copies), for a check that the ranks agree.
  bool gatherCopies = false;
  // Set from another thread: the rank stops at its next operation or run,
  // and its streams drop the work they have queued.
  const std::atomic<bool>* cancel = nullptr;
  // In-process teams: called every 10 ms by the thread that waits for the
  // ranks; true cancels the call as `cancel` does.
  std::function<bool()> interruptCheck;
};

// A rank's answer, and whether its failure was caused by another rank's
// (the team was aborted under it) rather than its own.
struct RankOutcome {
  Result<RunResult> result;
  bool failedBecauseOfPeer = false;
  bool abortedTeam = false;  // the failure aborted the team: its sessions are done
};

// The failure that started a team's failure: a rank's own, not the
// communication errors it caused in its peers; null when every rank succeeded.
const Diagnostic* firstCause(const std::vector<RankOutcome>& outcomes);

class RankSession {
 public:
  // `request` and the communicators must outlive the session.
  RankSession(const RunRequest& request, Communicator& comm, Communicator* signatures);
  ~RankSession();
  RankSession(const RankSession&) = delete;
  RankSession& operator=(const RankSession&) = delete;

  // Collective: the backend and the inputs' tensors. A failure aborts the
  // team; the session is then unusable.
  RankOutcome setUp();
  // Collective: request.warmup + request.repeat runs with these inputs. A
  // call whose inputs do not fit their declarations fails alike on every
  // rank and leaves the session usable; any other failure aborts the team
  // and leaves the session unusable.
  RankOutcome run(const RunCall& call);
  // From any thread: the streams drop their queued work (a cancelled call).
  void abandonQueuedWork();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hostir
