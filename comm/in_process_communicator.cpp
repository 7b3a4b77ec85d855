#include "comm/in_process_communicator.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "comm/buffer_aliasing.h"
#include "comm/reduce.h"
#include "comm/sendrecv_peers.h"
#include "comm/team_barrier.h"
#include "fmt/format.h"

namespace hostir {

namespace {

enum class CollectiveKind { Allreduce, Allgather, ReduceScatter, Broadcast, SendRecv, Barrier };

std::string_view kindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::Allreduce: return "allreduce";
    case CollectiveKind::Allgather: return "allgather";
    case CollectiveKind::ReduceScatter: return "reduceScatter";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "sendRecv";
    case CollectiveKind::Barrier: return "barrier";
  }
  return "?";
}

bool reduces(CollectiveKind kind) { return kind == CollectiveKind::Allreduce || kind == CollectiveKind::ReduceScatter; }

// What one rank brings to a collective: checked against the other ranks'
// postings, then read by them during the data phase.
struct Posting {
  CollectiveKind kind = CollectiveKind::Barrier;
  size_t count = 0;  // sendrecv: the elements this rank receives
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  // sendrecv only: count elements go into recv from `from`, sendCount leave send for `to`.
  size_t sendCount = 0;
  int to = 0;
  int from = 0;
};

}  // namespace

struct InProcessTeamState {
  explicit InProcessTeamState(int size) : barrier(size), postings(static_cast<size_t>(size)) {}

  TeamBarrier barrier;
  // postings[r] is written by rank r before it arrives at a rendezvous and
  // read by everyone between that rendezvous and the end of the data phase.
  std::vector<Posting> postings;
};

namespace {

std::string describe(const Posting& p) {
  if (p.kind == CollectiveKind::Barrier) return "barrier()";
  if (p.kind == CollectiveKind::SendRecv)
    return fmt::format("sendRecv(sendCount={}, to={}, recvCount={}, from={}, {})", p.sendCount, p.to, p.count, p.from,
                       dtypeName(p.dtype));
  std::string extra;
  if (reduces(p.kind)) extra = fmt::format(", {}", reduceOpName(p.op));
  if (p.kind == CollectiveKind::Broadcast) extra = fmt::format(", root={}", p.root);
  return fmt::format("{}(count={}, {}{})", kindName(p.kind), p.count, dtypeName(p.dtype), extra);
}

// Why the sendrecv postings of one rendezvous do not pair up, or "".
std::string findSendRecvMismatch(const std::vector<Posting>& postings) {
  const int size = static_cast<int>(postings.size());
  for (int r = 0; r < size; ++r) {
    const Posting& p = postings[static_cast<size_t>(r)];
    if (std::string error = sendRecvPeerError(r, size, p.to, p.from); !error.empty()) return error;
  }
  // When every rank's receiver receives from it, `to` is a permutation and
  // `from` its inverse, so checking each sender covers every receiver too.
  for (int r = 0; r < size; ++r) {
    const Posting& p = postings[static_cast<size_t>(r)];
    const Posting& q = postings[static_cast<size_t>(p.to)];
    if (q.from != r)
      return fmt::format("sendrecv mismatch: rank {} sends to rank {}, but rank {} receives from rank {}", r, p.to,
                         p.to, q.from);
    if (q.count != p.sendCount)
      return fmt::format(
          "sendrecv mismatch: rank {} sends {} elements to rank {}, but rank {} receives {} from rank {}", r,
          p.sendCount, p.to, p.to, q.count, r);
  }
  return "";
}

// Why the postings of one rendezvous do not form one collective, or "".
std::string findMismatch(const std::vector<Posting>& postings) {
  const Posting& first = postings.front();
  for (size_t r = 1; r < postings.size(); ++r) {
    const Posting& p = postings[r];
    // A sendrecv's counts differ from rank to rank; its pairs are checked below.
    const bool countsAgree = p.count == first.count || p.kind == CollectiveKind::SendRecv;
    bool same = p.kind == first.kind && countsAgree && p.dtype == first.dtype &&
                (!reduces(p.kind) || p.op == first.op) && (p.kind != CollectiveKind::Broadcast || p.root == first.root);
    if (!same)
      return fmt::format("collective mismatch: rank 0 called {} but rank {} called {}", describe(first), r,
                         describe(p));
  }
  if (first.kind == CollectiveKind::Broadcast && (first.root < 0 || first.root >= static_cast<int>(postings.size())))
    return fmt::format("broadcast root {} is not a rank of this team of {}", first.root, postings.size());
  if (first.kind == CollectiveKind::SendRecv) return findSendRecvMismatch(postings);
  return "";
}

// Elements [begin, end) of part `part` when `count` elements are split into
// `parts` parts whose sizes differ by at most one.
std::pair<size_t, size_t> partRange(size_t count, int part, int parts) {
  const size_t p = static_cast<size_t>(part);
  const size_t base = count / static_cast<size_t>(parts);
  const size_t extra = count % static_cast<size_t>(parts);
  const size_t begin = p * base + std::min(p, extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

// Big enough to amortize the per-chunk loop, small enough for the stack.
constexpr size_t kChunkBytes = 4096;

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessTeamState> team, int rank)
      : team_(std::move(team)), rank_(rank), size_(static_cast<int>(team_->postings.size())) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "in-process"; }

  void allreduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void*) override {
    const size_t elementSize = dtypeSize(dtype);
    const size_t bytes = count * elementSize;
    auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    // A partial overlap would let a peer's writes reach bytes this rank's
    // part still has to read: move the input into place first.
    if (in != out && bytesOverlap(in, bytes, out, bytes)) {
      std::memmove(out, in, bytes);
      in = out;
    }

    rendezvous({CollectiveKind::Allreduce, count, dtype, op, 0, in, out});
    // This rank owns one part of the elements: it reads them from every rank
    // and writes the result into every rank, so no byte has two writers.
    const std::pair<size_t, size_t> part = partRange(count, rank_, size_);
    reduceAcrossRanks(part.first, part.second - part.first, dtype, op,
                      [&](size_t first, const std::byte* chunk, size_t n) {
                        for (const Posting& p : team_->postings)
                          std::memcpy(p.recv + (part.first + first) * elementSize, chunk, n * elementSize);
                      });
    finish();
  }

  void allgather(const void* send, void* recv, size_t count, DType dtype, void*) override {
    const size_t bytes = count * dtypeSize(dtype);
    auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    // In place, send is this rank's own block of recv, which no peer writes.
    // Any other overlap becomes that by moving the input into its block.
    std::byte* ownBlock = out + rank_ * bytes;
    if (in != ownBlock && bytesOverlap(in, bytes, out, bytes * size_)) {
      std::memmove(ownBlock, in, bytes);
      in = ownBlock;
    }

    rendezvous({CollectiveKind::Allgather, count, dtype, ReduceOp::Sum, 0, in, out});
    // This rank writes block rank() of everyone's recv.
    if (bytes > 0)
      for (const Posting& p : team_->postings) {
        std::byte* block = p.recv + rank_ * bytes;
        if (block != in) std::memcpy(block, in, bytes);
      }
    finish();
  }

  void reduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, void*) override {
    const size_t elementSize = dtypeSize(dtype);
    const size_t bytes = count * elementSize;
    auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
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

    rendezvous({CollectiveKind::ReduceScatter, count, dtype, op, 0, in, target});
    reduceAcrossRanks(rank_ * count, count, dtype, op, [&](size_t first, const std::byte* chunk, size_t n) {
      std::memcpy(target + first * elementSize, chunk, n * elementSize);
    });
    finish();
    if (target != out) std::memcpy(out, target, bytes);
  }

  void sendRecv(const void* send, size_t sendCount, int to, void* recv, size_t recvCount, int from, DType dtype,
                void*) override {
    const size_t elementSize = dtypeSize(dtype);
    auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    // `to` reads send while this rank writes recv: when they overlap, `to`
    // reads a private copy instead, as if send were read first.
    std::vector<std::byte> staged;
    if (bytesOverlap(in, sendCount * elementSize, out, recvCount * elementSize)) {
      staged.assign(in, in + sendCount * elementSize);
      in = staged.data();
    }

    Posting posting{CollectiveKind::SendRecv, recvCount, dtype, ReduceOp::Sum, 0, in, out};
    posting.sendCount = sendCount;
    posting.to = to;
    posting.from = from;
    rendezvous(posting);
    // Each rank pulls its own receive, so only this rank writes recv; the
    // rendezvous checked that `from` sends exactly recvCount elements.
    const std::byte* source = team_->postings[static_cast<size_t>(from)].send;
    if (recvCount > 0 && source != out) std::memcpy(out, source, recvCount * elementSize);
    // `to` may still be reading send (or the staged copy).
    finish();
  }

  void broadcast(void* buffer, size_t count, DType dtype, int root, void*) override {
    const size_t elementSize = dtypeSize(dtype);
    auto* data = static_cast<std::byte*>(buffer);
    rendezvous({CollectiveKind::Broadcast, count, dtype, ReduceOp::Sum, root, data, data});
    // Each rank copies one part of root's buffer into every other rank.
    auto [begin, end] = partRange(count, rank_, size_);
    const std::byte* source = team_->postings[static_cast<size_t>(root)].recv + begin * elementSize;
    if (end > begin)
      for (int r = 0; r < size_; ++r)
        if (r != root)
          std::memcpy(team_->postings[static_cast<size_t>(r)].recv + begin * elementSize, source,
                      (end - begin) * elementSize);
    finish();
  }

  void barrier() override { rendezvous({}); }

  void abort(const std::string& reason) override { team_->barrier.abort(reason); }

 private:
  // Posts this rank's buffers and waits for every rank's. Throws CommError
  // if the team is aborted first or the ranks called different collectives.
  void rendezvous(const Posting& posting) {
    team_->postings[static_cast<size_t>(rank_)] = posting;
    team_->barrier.arriveAndWait([this] { return findMismatch(team_->postings); });
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

void InProcessTeam::abort(const std::string& reason) { state_->barrier.abort(reason); }

}  // namespace hostir
