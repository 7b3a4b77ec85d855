#include "comm/copy_engine_communicator.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "comm/buffer_aliasing.h"
#include "comm/in_process_communicator.h"
#include "comm/team_barrier.h"
#include "comm/transfer_schedule.h"

namespace hostir {
namespace {

struct Identity {
  uint64_t process = 0;
  int64_t device = 0;
  uint64_t board = 0;  // rank 0's: the board of the team
};

// Scratch of the engine, released in the stream's order however the call ends.
class Scratch {
 public:
  Scratch(TransferEngine& engine, size_t bytes, void* stream)
      : engine_(engine), stream_(stream), data_(bytes ? engine.allocate(bytes, stream) : nullptr) {}
  ~Scratch() {
    if (data_) engine_.release(data_, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return data_; }

 private:
  TransferEngine& engine_;
  void* stream_;
  void* data_;
};

}  // namespace

// What every rank publishes at a call, on the board (all ranks share one
// address space).
struct CopyEngineCommunicator::Posting {
  Rendezvous signature;
  uint64_t send = 0;
  uint64_t recv = 0;
  uint64_t scratch = 0;
  TransferEngine::Fence ready = 0;  // the rank's stream once its inputs are written
  // Phase k's fence, recorded once the rank has issued phase k; its count on
  // the board reaches `recorded` + k + 1 after the record.
  std::array<TransferEngine::Fence, kMaxTransferPhases> phases{};
  uint64_t recorded = 0;
};

// Written by one rank each, read by all: padded so that a rank's entries
// share no cache line with another's.
struct CopyEngineCommunicator::Board {
  explicit Board(int ranks)
      : references(ranks), recorded(static_cast<size_t>(ranks)), posted(static_cast<size_t>(ranks)) {}
  struct alignas(64) Count {
    std::atomic<uint64_t> value{0};
  };
  // A rank's posting for its call n sits in postings[n % 2], published by
  // `calls` reaching n. Two slots suffice: a rank posts call n + 2 only once
  // every peer has posted call n + 1, which each does only after reading
  // every posting of call n.
  struct alignas(64) Postings {
    std::atomic<uint64_t> calls{0};
    std::array<Posting, 2> postings{};
  };
  std::atomic<int> references;  // one per rank that holds the board
  std::vector<Count> recorded;
  std::vector<Postings> posted;
};

void CopyEngineCommunicator::BoardRelease::operator()(Board* board) const noexcept {
  if (board->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete board;
}

CopyEngineCommunicator::CopyEngineCommunicator(Communicator& hostComm, std::unique_ptr<TransferEngine> engine)
    : CopyEngineCommunicator(nullptr, hostComm, std::move(engine)) {}

CopyEngineCommunicator::CopyEngineCommunicator(std::unique_ptr<Communicator> owned, Communicator& hostComm,
                                               std::unique_ptr<TransferEngine> engine)
    : ownedHost_(std::move(owned)), hostComm_(hostComm), engine_(std::move(engine)) {
  // Rank 0 makes the board with a reference for every rank; a rank that
  // fails before it takes its own leaves the board to leak, never to be
  // freed under a peer.
  if (rank() == 0) board_.reset(new Board(size()));
  const std::vector<Identity> identities = exchangeValues(
      hostComm_,
      Identity{static_cast<uint64_t>(::getpid()), engine_->device(), reinterpret_cast<uint64_t>(board_.get())});
  for (const Identity& identity : identities) {
    if (identity.process != identities.front().process)
      throw CommError(
          "the copy-engine communicator needs ranks that are threads of one process (hostir run --ranks N), "
          "not MPI processes; use NCCL across processes");
    devices_.push_back(static_cast<int>(identity.device));
  }
  if (rank() != 0) board_.reset(reinterpret_cast<Board*>(identities.front().board));
  team_ = inProcessTeamBarrier(hostComm_);
  if (!team_ && size() > 1)
    throw CommError("the copy-engine communicator needs an in-process team as its host team (hostir run --ranks N)");
  engine_->connect(devices_.data(), static_cast<int>(devices_.size()));
}

CopyEngineCommunicator::~CopyEngineCommunicator() {
  // A peer may not yet have enqueued its waits for this rank's last fences,
  // which die with the engine: wait until every rank is here too. A failed
  // team answers at once (aborted, or a mismatch with a peer's other call).
  try {
    hostComm_.barrier();
  } catch (...) {
  }
}

std::unique_ptr<Communicator> CopyEngineCommunicator::split(int color, int key) {
  std::unique_ptr<TransferEngine> engine = engine_->sibling();
  if (!engine) throw CommError("the copy-engine communicator's transfer engine cannot make another for a group");
  std::unique_ptr<Communicator> group = hostComm_.split(color, key);
  Communicator& host = *group;
  return std::unique_ptr<Communicator>(new CopyEngineCommunicator(std::move(group), host, std::move(engine)));
}

// The one host exchange of a call: every rank's posting, through the board,
// once every rank has called the same collective.
std::vector<CopyEngineCommunicator::Posting> CopyEngineCommunicator::post(const Posting& mine) {
  if (size() == 1) {
    if (std::string mismatch = findMismatch(std::span(&mine.signature, 1)); !mismatch.empty())
      throw CommError(mismatch);
    return {mine};
  }
  const uint64_t call = ++calls_;
  Board::Postings& own = board_->posted[static_cast<size_t>(rank())];
  own.postings[call % 2] = mine;
  own.calls.store(call);
  team_->signal();
  std::vector<Posting> postings;
  std::vector<Rendezvous> signatures;
  for (const Board::Postings& peer : board_->posted) {
    if (peer.calls.load() < call) team_->waitUntil([&] { return peer.calls.load() >= call; });
    postings.push_back(peer.postings[call % 2]);
    signatures.push_back(postings.back().signature);
  }
  if (std::string mismatch = findMismatch(signatures); !mismatch.empty()) throw CommError(mismatch);
  return postings;
}

void CopyEngineCommunicator::run(const CollectiveArgs& call, Layout layout, void* stream) {
  void* s = stream ? stream : engine_->defaultStream();
  const int me = rank();
  const CollectiveSignature& signature = call.signature;
  const size_t elementSize = dtypeSize(signature.dtype);
  const size_t sendBytes = signature.sendCount * elementSize;

  // Peers read a private copy of a send buffer that this rank's own writes
  // could reach, as if the send were read first.
  Scratch staged(*engine_, layout.stage ? sendBytes : 0, s);
  const void* send = call.send;
  if (layout.stage) {
    engine_->copy(staged.data(), engine_->device(), call.send, engine_->device(), sendBytes, s);
    send = staged.data();
  }
  const TransferSchedule schedule = scheduleTransfers(signature, me, size(), layout.inPlace);
  if (schedule.phases.size() > kMaxTransferPhases) throw std::logic_error("a transfer schedule with too many phases");
  Scratch scratch(*engine_, schedule.scratchElements * elementSize, s);

  Posting mine{signature,
               reinterpret_cast<uint64_t>(send),
               reinterpret_cast<uint64_t>(call.recv),
               reinterpret_cast<uint64_t>(scratch.data()),
               engine_->fence(s),
               {},
               recorded_};
  if (size() > 1)
    for (size_t k = 0; k < schedule.phases.size(); ++k) mine.phases[k] = engine_->newFence();
  const std::vector<Posting> postings = post(mine);

  auto address = [&](const Place& place) {
    const Posting& p = postings[static_cast<size_t>(place.rank)];
    const uint64_t base = place.region == Region::Send ? p.send : place.region == Region::Recv ? p.recv : p.scratch;
    return reinterpret_cast<std::byte*>(base) + place.offset * elementSize;
  };

  for (int q = 0; q < size(); ++q)
    if (q != me) engine_->wait(s, postings[static_cast<size_t>(q)].ready);
  for (size_t k = 0; k < schedule.phases.size(); ++k) {
    for (const TransferStep& step : schedule.phases[k]) {
      std::byte* dst = address(step.dst);
      switch (step.kind) {
        case TransferStep::Kind::Copy:
          engine_->copy(dst, engine_->device(), address(step.src), devices_[static_cast<size_t>(step.src.rank)],
                        step.count * elementSize, s);
          break;
        case TransferStep::Kind::Reduce:
          engine_->reduce(dst, address(step.src), step.count, signature.dtype, signature.op, s);
          break;
        case TransferStep::Kind::Scale: engine_->scale(dst, step.count, signature.dtype, step.factor, s); break;
      }
    }
    // The next phase reads what the peers wrote in this one; after the last,
    // no rank may reuse a buffer before its peers are done reading it. A
    // peer's fence may be waited for only once it is recorded: its count
    // on the board says so.
    if (size() == 1) continue;
    engine_->record(mine.phases[k], s);
    board_->recorded[static_cast<size_t>(me)].value.store(++recorded_);
    team_->signal();
    for (int q = 0; q < size(); ++q) {
      if (q == me) continue;
      const Posting& peer = postings[static_cast<size_t>(q)];
      const std::atomic<uint64_t>& count = board_->recorded[static_cast<size_t>(q)].value;
      const uint64_t target = peer.recorded + k + 1;
      if (count.load() < target) team_->waitUntil([&] { return count.load() >= target; });
      engine_->wait(s, peer.phases[k]);
    }
  }
  if (!stream) engine_->synchronize(s);
}

void CopyEngineCommunicator::collective(const CollectiveArgs& call, void* stream) { run(call, layoutOf(call), stream); }

CopyEngineCommunicator::Layout CopyEngineCommunicator::layoutOf(const CollectiveArgs& call) const {
  const CollectiveSignature& s = call.signature;
  const size_t elementSize = dtypeSize(s.dtype);
  const bool inPlace = inPlaceLayout(s, rank(), call.send, call.recv);
  return Layout{inPlace,
                !inPlace && bytesOverlap(call.send, s.sendCount * elementSize, call.recv, s.recvCount * elementSize)};
}

// Through the board, as every other call is, so that a barrier facing a
// peer's collective is a mismatch rather than a wait for ever.
void CopyEngineCommunicator::barrier() { post(Posting{}); }

void CopyEngineCommunicator::abort(const std::string& reason) { hostComm_.abort(reason); }

}  // namespace hostir
