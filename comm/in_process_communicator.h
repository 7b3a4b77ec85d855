// A team of ranks that are threads of one process, each with its own
// Communicator. Every collective is a rendezvous: each rank posts its
// buffers, then works on its own share of the result directly in the other
// ranks' buffers, then waits until everyone is done so no buffer is released
// while a peer still uses it. No staging copy, in place included, except
// for a sendrecv whose send and receive buffers overlap (the send is copied
// first, as if read before the receive lands).
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"

namespace hostir {

struct InProcessTeamState;
class TeamBarrier;

class InProcessTeam {
 public:
  explicit InProcessTeam(int size);
  ~InProcessTeam();
  InProcessTeam(const InProcessTeam&) = delete;
  InProcessTeam& operator=(const InProcessTeam&) = delete;

  int size() const;

  // The communicator of `rank`, to be used by one thread at a time. Each
  // rank's calls are matched with the other ranks' by call order, and each
  // rank's buffers must be its own (not shared with another rank). Safe to
  // call from any thread; communicators may outlive the team object.
  std::unique_ptr<Communicator> communicator(int rank);

  // As if a rank had called abort(reason).
  void abort(const std::string& reason);

 private:
  std::shared_ptr<InProcessTeamState> state_;
};

// The barrier of the in-process team that `comm` is a communicator of (kept
// alive by the pointer), or null when `comm` is any other communicator: for
// communicators built over an in-process team whose ranks wait for each
// other one-sidedly yet must end their waits when the team is aborted
// (TeamBarrier::waitUntil; the copy-engine communicator).
std::shared_ptr<TeamBarrier> inProcessTeamBarrier(Communicator& comm);

}  // namespace hostir
