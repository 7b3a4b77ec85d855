#include "comm/in_process_communicator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "comm/buffer_aliasing.h"
#include "comm/collective_signature.h"
#include "comm/reduce.h"
#include "comm/team_barrier.h"
#include "fmt/format.h"

namespace hostir {

namespace {

// What one rank brings to a collective: its signature, checked against the
// other ranks' (collective_signature.h), and its buffers, read by the other
// ranks during the data phase.
struct Posting {
  Rendezvous signature;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
};

}  // namespace

struct InProcessTeamState {
  explicit InProcessTeamState(int size, std::weak_ptr<InProcessTeamState> parentTeam = {})
      : barrier(size),
        postings(static_cast<size_t>(size)),
        signatures(static_cast<size_t>(size)),
        parent(std::move(parentTeam)) {}

  TeamBarrier barrier;
  // postings[r] and signatures[r] are written by rank r before it arrives at
  // a rendezvous; the postings are read by everyone between that rendezvous
  // and the end of the data phase, the signatures by the arrival check.
  std::vector<Posting> postings;
  std::vector<Rendezvous> signatures;

  // Groups (Communicator::split): the team this one was split from, and the
  // groups split from this one, so that an abort anywhere reaches them all.
  const std::weak_ptr<InProcessTeamState> parent;
  std::mutex groupsMutex;
  std::vector<std::weak_ptr<InProcessTeamState>> groups;  // guarded by groupsMutex
  // A group being handed out: by (the split's number, color), the group and
  // how many of its ranks took it; dropped once all did. Guarded by groupsMutex.
  std::map<std::pair<uint64_t, int>, std::pair<std::shared_ptr<InProcessTeamState>, int>> handing;
};

namespace {

// Aborts `team` and every group split from it, and theirs.
void abortDownward(InProcessTeamState& team, const std::string& reason) {
  team.barrier.abort(reason);
  std::vector<std::weak_ptr<InProcessTeamState>> groups;
  {
    std::lock_guard lock(team.groupsMutex);
    groups = team.groups;
  }
  for (const auto& group : groups)
    if (auto alive = group.lock()) abortDownward(*alive, reason);
}

// Aborts the whole team `team` belongs to: its first ancestor and every group below.
void abortTeamTree(const std::shared_ptr<InProcessTeamState>& team, const std::string& reason) {
  std::shared_ptr<InProcessTeamState> root = team;
  while (auto parent = root->parent.lock()) root = parent;
  abortDownward(*root, reason);
}

// The group (split number `number`, `color`) of `team`, of `size` ranks:
// made by the first of its ranks to ask, handed to the others.
std::shared_ptr<InProcessTeamState> groupOf(const std::shared_ptr<InProcessTeamState>& team, uint64_t number, int color,
                                            int size) {
  std::shared_ptr<InProcessTeamState> group;
  {
    std::lock_guard lock(team->groupsMutex);
    auto [it, made] = team->handing.try_emplace({number, color});
    if (made) {
      it->second.first = std::make_shared<InProcessTeamState>(size, team);
      team->groups.push_back(it->second.first);
    }
    group = it->second.first;
    if (++it->second.second == size) team->handing.erase(it);
  }
  // An abort that came before the group was listed did not reach it.
  if (auto reason = team->barrier.abortReason()) abortTeamTree(team, *reason);
  return group;
}

}  // namespace

namespace {

// Big enough to amortize the per-chunk loop, small enough for the stack.
constexpr size_t kChunkBytes = 4096;

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessTeamState> team, int rank)
      : team_(std::move(team)), rank_(rank), size_(static_cast<int>(team_->postings.size())) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "in-process"; }
  bool groupsOverlap() const override { return true; }

  void collective(const CollectiveArgs& call, void*) override {
    const CollectiveSignature& s = call.signature;
    auto* in = static_cast<const std::byte*>(call.send);
    auto* out = static_cast<std::byte*>(call.recv);
    switch (s.kind) {
      case CollectiveKind::Allreduce: return runAllreduce(s, in, out);
      case CollectiveKind::Allgather: return runAllgather(s, in, out);
      case CollectiveKind::ReduceScatter: return runReduceScatter(s, in, out);
      case CollectiveKind::AllToAll: return runAllToAll(s, in, out);
      case CollectiveKind::Broadcast: return runBroadcast(s, out);
      case CollectiveKind::SendRecv: return runSendRecv(s, in, out);
    }
  }

  void barrier() override { rendezvous({std::nullopt}); }

  std::unique_ptr<Communicator> split(int color, int key) override {
    const std::vector<std::array<int32_t, 2>> all = exchangeValues(*this, std::array<int32_t, 2>{color, key});
    std::vector<int> members;  // this rank's group, in its new rank order
    for (int r = 0; r < size_; ++r)
      if (all[static_cast<size_t>(r)][0] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return all[static_cast<size_t>(a)][1] < all[static_cast<size_t>(b)][1]; });
    const auto newRank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
    auto group = groupOf(team_, splits_++, color, static_cast<int>(members.size()));
    return std::make_unique<InProcessCommunicator>(std::move(group), newRank);
  }

  void abort(const std::string& reason) override { abortTeamTree(team_, reason); }

  std::shared_ptr<TeamBarrier> barrierOfTeam() const { return {team_, &team_->barrier}; }

 private:
  void runAllreduce(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
    const size_t elementSize = dtypeSize(s.dtype);
    const size_t bytes = s.sendCount * elementSize;
    // A partial overlap would let a peer's writes reach bytes this rank's
    // part still has to read: move the input into place first.
    if (in != out && bytesOverlap(in, bytes, out, bytes)) {
      std::memmove(out, in, bytes);
      in = out;
    }

    rendezvous({s, in, out});
    // This rank owns one part of the elements: it reads them from every rank
    // and writes the result into every rank, so no byte has two writers.
    const std::pair<size_t, size_t> part = partRange(s.sendCount, rank_, size_);
    reduceAcrossRanks(part.first, part.second - part.first, s.dtype, s.op,
                      [&](size_t first, const std::byte* chunk, size_t n) {
                        for (const Posting& p : team_->postings)
                          std::memcpy(p.recv + (part.first + first) * elementSize, chunk, n * elementSize);
                      });
    finish();
  }

  void runAllgather(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
    const size_t bytes = s.sendCount * dtypeSize(s.dtype);
    // In place, send is this rank's own block of recv, which no peer writes.
    // Any other overlap becomes that by moving the input into its block.
    std::byte* ownBlock = out + rank_ * bytes;
    if (in != ownBlock && bytesOverlap(in, bytes, out, bytes * size_)) {
      std::memmove(ownBlock, in, bytes);
      in = ownBlock;
    }

    rendezvous({s, in, out});
    // This rank writes block rank() of everyone's recv.
    if (bytes > 0)
      for (const Posting& p : team_->postings) {
        std::byte* block = p.recv + rank_ * bytes;
        if (block != in) std::memcpy(block, in, bytes);
      }
    finish();
  }

  void runReduceScatter(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
    const size_t elementSize = dtypeSize(s.dtype);
    const size_t count = s.recvCount;
    const size_t bytes = count * elementSize;
    // In place: recv is block rank() of send, which only this rank reads.
    // Any other overlap may cover bytes peers read, so the result waits in a
    // private buffer until every rank is done.
    const bool inPlace = out == in + rank_ * bytes;
    std::vector<std::byte> staged;
    std::byte* target = out;
    if (!inPlace && bytesOverlap(in, bytes * size_, out, bytes)) {
      staged.resize(bytes);
      target = staged.data();
    }

    rendezvous({s, in, target});
    reduceAcrossRanks(rank_ * count, count, s.dtype, s.op, [&](size_t first, const std::byte* chunk, size_t n) {
      std::memcpy(target + first * elementSize, chunk, n * elementSize);
    });
    finish();
    if (target != out) std::memcpy(out, target, bytes);
  }

  void runAllToAll(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
    const size_t bytes = s.sendCount * dtypeSize(s.dtype);
    // Peers write this rank's recv while it still reads its send: when they
    // overlap, the peers read a private copy instead, as if send were read first.
    std::vector<std::byte> staged;
    if (bytesOverlap(in, bytes, out, bytes)) {
      staged.assign(in, in + bytes);
      in = staged.data();
    }

    rendezvous({s, in, out});
    // This rank writes block rank() of every rank q's recv with its block q,
    // so every byte has one writer.
    const size_t part = bytes / static_cast<size_t>(size_);
    if (part > 0)
      for (size_t q = 0; q < team_->postings.size(); ++q)
        std::memcpy(team_->postings[q].recv + rank_ * part, in + q * part, part);
    finish();
  }

  void runSendRecv(const CollectiveSignature& s, const std::byte* in, std::byte* out) {
    const size_t elementSize = dtypeSize(s.dtype);
    // `to` reads send while this rank writes recv: when they overlap, `to`
    // reads a private copy instead, as if send were read first.
    std::vector<std::byte> staged;
    if (bytesOverlap(in, s.sendCount * elementSize, out, s.recvCount * elementSize)) {
      staged.assign(in, in + s.sendCount * elementSize);
      in = staged.data();
    }

    rendezvous({s, in, out});
    // Each rank pulls its own receive, so only this rank writes recv; the
    // rendezvous checked that `from` sends exactly recvCount elements.
    const std::byte* source = team_->postings[static_cast<size_t>(s.from)].send;
    if (s.recvCount > 0 && source != out) std::memcpy(out, source, s.recvCount * elementSize);
    // `to` may still be reading send (or the staged copy).
    finish();
  }

  void runBroadcast(const CollectiveSignature& s, std::byte* data) {
    const size_t elementSize = dtypeSize(s.dtype);
    rendezvous({s, data, data});
    // Each rank copies one part of root's buffer into every other rank.
    auto [begin, end] = partRange(s.recvCount, rank_, size_);
    const std::byte* source = team_->postings[static_cast<size_t>(s.root)].recv + begin * elementSize;
    if (end > begin)
      for (int r = 0; r < size_; ++r)
        if (r != s.root)
          std::memcpy(team_->postings[static_cast<size_t>(r)].recv + begin * elementSize, source,
                      (end - begin) * elementSize);
    finish();
  }

  // Posts this rank's buffers and waits for every rank's. Throws CommError
  // if the team is aborted first or the ranks called different collectives.
  void rendezvous(const Posting& posting) {
    team_->postings[static_cast<size_t>(rank_)] = posting;
    team_->signatures[static_cast<size_t>(rank_)] = posting.signature;
    team_->barrier.arriveAndWait([this] { return findMismatch(team_->signatures); });
  }

  // Waits until no rank touches another's buffers any more.
  void finish() { team_->barrier.arriveAndWaitForAll(); }

  // Reduces elements [offset, offset + count) of every rank's send buffer in
  // rank order, a chunk at a time, and hands each result chunk to
  // emit(index of its first element relative to offset, chunk, elements).
  template <typename Emit>
  void reduceAcrossRanks(size_t offset, size_t count, DType dtype, ReduceOp op, Emit emit) const {
    const size_t elementSize = dtypeSize(dtype);
    const size_t perChunk = kChunkBytes / elementSize;
    alignas(std::max_align_t) std::byte chunk[kChunkBytes];
    for (size_t first = 0; first < count; first += perChunk) {
      const size_t n = std::min(perChunk, count - first);
      const size_t at = (offset + first) * elementSize;
      std::memcpy(chunk, team_->postings.front().send + at, n * elementSize);
      for (size_t r = 1; r < team_->postings.size(); ++r) reduceInto(chunk, team_->postings[r].send + at, n, dtype, op);
      if (op == ReduceOp::Avg) scaleInPlace(chunk, n, dtype, 1.0 / size_);
      emit(first, chunk, n);
    }
  }

  std::shared_ptr<InProcessTeamState> team_;
  const int rank_;
  const int size_;
  uint64_t splits_ = 0;  // this rank's split() calls so far: the same count on every rank at each
};

}  // namespace

InProcessTeam::InProcessTeam(int size) {
  if (size < 1) throw std::invalid_argument(fmt::format("an in-process team needs at least one rank, got {}", size));
  state_ = std::make_shared<InProcessTeamState>(size);
}

InProcessTeam::~InProcessTeam() = default;

int InProcessTeam::size() const { return static_cast<int>(state_->postings.size()); }

std::unique_ptr<Communicator> InProcessTeam::communicator(int rank) {
  if (rank < 0 || rank >= size())
    throw std::invalid_argument(fmt::format("rank {} is not in an in-process team of {}", rank, size()));
  return std::make_unique<InProcessCommunicator>(state_, rank);
}

void InProcessTeam::abort(const std::string& reason) { abortTeamTree(state_, reason); }

std::shared_ptr<TeamBarrier> inProcessTeamBarrier(Communicator& comm) {
  auto* inProcess = dynamic_cast<InProcessCommunicator*>(&comm);
  return inProcess ? inProcess->barrierOfTeam() : nullptr;
}

}  // namespace hostir
