// Collectives and sendrecv for ranks that are threads of one process, done
// with copies instead of a communication library: every rank pulls what it
// needs from its peers' buffers and reduces locally (comm/transfer_schedule.h),
// through a TransferEngine. With the CUDA engine the copies run on the copy
// engines (cudaMemcpyPeerAsync, cudaMemcpyAsync) and only the reductions
// take SMs, so a rank's GEMMs keep the SMs while its communication moves;
// several ranks may share one GPU, which NCCL refuses. With the host engine
// it runs the same schedule in host memory (the CPU backend, and tests).
//
// Calls are matched across ranks by issue order through the host team
// (`hostComm`, an in-process team): at each call the ranks exchange their
// buffers, a fence recorded once their inputs are written and one fence per
// phase of the schedule, to be recorded later, and check that they called
// the same collective. That is the call's only exchange. After each phase a
// rank records that phase's fence and counts it on a board the team shares;
// before its next work it waits on the host, one-sidedly, until each peer's
// count says the peer has recorded the same phase (a CUDA stream waits only
// for a record made before its wait), then makes its stream wait for the
// peer's fence. A rank's host waits for its peers' hosts to reach the same
// call and to issue its phases (not for any device work), so stream-ordered
// calls return as soon as their work is issued. Those waits end with a
// CommError when the team is aborted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/collective_signature.h"
#include "comm/communicator.h"
#include "comm/transfer_engine.h"

namespace hostir {

class TeamBarrier;

class CopyEngineCommunicator final : public Communicator {
 public:
  // Collective over `hostComm`, which must outlive this communicator and
  // whose ranks must be threads of this process: the ranks exchange their
  // process ids and devices. Throws CommError when they are not one process.
  CopyEngineCommunicator(Communicator& hostComm, std::unique_ptr<TransferEngine> engine);
  // Collective too: the ranks meet before their engines (and fences) go.
  ~CopyEngineCommunicator() override;

  // A group's copy engines: over the host team's group, with an engine like
  // this one's (TransferEngine::sibling).
  std::unique_ptr<Communicator> split(int color, int key) override;

  int rank() const override { return hostComm_.rank(); }
  int size() const override { return hostComm_.size(); }
  std::string name() const override { return "copy-engine"; }
  // Each group has its own host group and board.
  bool groupsOverlap() const override { return true; }
  bool blocking() const override { return !engine_->asynchronous(); }
  // Every rank's device, in rank order.
  const std::vector<int>& devices() const { return devices_; }

  // With a stream the work completes in its order (or at once, on the
  // host); without one it runs on the engine's own stream and the call
  // returns once it has completed.
  void collective(const CollectiveArgs& call, void* stream = nullptr) override;
  void barrier() override;
  void abort(const std::string& reason) override;

 private:
  // `owned`: the host team when this communicator owns it (a split's group).
  CopyEngineCommunicator(std::unique_ptr<Communicator> owned, Communicator& hostComm,
                         std::unique_ptr<TransferEngine> engine);

  // How a call's buffers are laid out (see scheduleTransfers).
  struct Layout {
    bool inPlace;  // the collective's own in-place layout
    bool stage;    // send overlaps recv some other way: peers read a copy of it
  };
  Layout layoutOf(const CollectiveArgs& call) const;
  void run(const CollectiveArgs& call, Layout layout, void* stream);
  struct Posting;
  std::vector<Posting> post(const Posting& mine);

  // Per rank, its postings and how many phase fences it has recorded;
  // shared by the team's communicators (the last one frees it).
  struct Board;
  struct BoardRelease {
    void operator()(Board* board) const noexcept;
  };

  std::unique_ptr<Communicator> ownedHost_;  // null unless this is a split's group; outlives the rest
  Communicator& hostComm_;
  std::unique_ptr<TransferEngine> engine_;
  std::vector<int> devices_;
  std::shared_ptr<TeamBarrier> team_;  // its abort ends the waits for the board
  std::unique_ptr<Board, BoardRelease> board_;
  uint64_t recorded_ = 0;  // this rank's count on the board
  uint64_t calls_ = 0;     // this rank's calls posted on the board
};

}  // namespace hostir
