// A team of in-process ranks that stays between calls: one thread per rank,
// each with its RankSession (backend, streams, buffers) set up once, waiting
// for the next call. runInProcess is one start and one call; an executable
// keeps the team for as many calls as its caller makes.
#pragma once

#include <memory>

#include "executor/rank_session.h"

namespace hostir {

class ResidentTeam {
 public:
  // Starts `world` ranks and sets each one up for `request` (which must
  // outlive the team); the first failing rank's reason when any could not.
  static Result<std::unique_ptr<ResidentTeam>> start(const RunRequest& request, int64_t world);
  // Stops the ranks and joins their threads.
  ~ResidentTeam();
  ResidentTeam(const ResidentTeam&) = delete;
  ResidentTeam& operator=(const ResidentTeam&) = delete;

  // One call on every rank; one at a time. Rank 0's result (with every
  // rank's races), or the failure that started the team's failure. While it
  // waits, the calling thread watches call.cancel and calls
  // call.interruptCheck: once cancelled, every rank's streams drop their
  // queued work and the team is aborted.
  Result<RunResult> run(const RunCall& call);
  // A call failed and aborted the team (a rank's error, a cancellation):
  // it serves no more calls. A refusal of the call's inputs leaves it whole.
  bool broken() const;

 private:
  struct Shared;
  explicit ResidentTeam(std::unique_ptr<Shared> shared);
  std::unique_ptr<Shared> shared_;
};

}  // namespace hostir
