#include "comm/transfer_schedule.h"

#include <algorithm>

namespace hostir {
namespace {

struct Builder {
  int rank;
  int world;
  TransferSchedule schedule;

  std::vector<TransferStep>& phase() { return schedule.phases.back(); }
  void newPhase() { schedule.phases.emplace_back(); }
  Place own(Region region, size_t offset) const { return Place{rank, region, offset}; }

  void copy(Place dst, Place src, size_t count) {
    if (count == 0) return;
    if (dst.rank == src.rank && dst.region == src.region && dst.offset == src.offset) return;
    phase().push_back(TransferStep{TransferStep::Kind::Copy, dst, src, count});
  }
  void reduce(Place dst, Place src, size_t count) {
    if (count > 0) phase().push_back(TransferStep{TransferStep::Kind::Reduce, dst, src, count});
  }
  void scale(Place dst, size_t count, double factor) {
    if (count > 0) phase().push_back(TransferStep{TransferStep::Kind::Scale, dst, {}, count, factor});
  }

  // Reduces elements [offset, offset + count) of every rank's send buffer
  // into `target` (this rank's): its own part first (moved into place
  // unless it is there already), then each peer's, pulled into scratch
  // slot by slot, in rank order. Avg ends with the division.
  void reduceParts(size_t offset, size_t count, Place target, ReduceOp op) {
    copy(target, own(Region::Send, offset), count);
    if (count == 0) return;
    size_t slot = 0;
    for (int peer = 0; peer < world; ++peer) {
      if (peer == rank) continue;
      const Place pulled = own(Region::Scratch, slot++ * count);
      copy(pulled, Place{peer, Region::Send, offset}, count);
      reduce(target, pulled, count);
    }
    schedule.scratchElements = std::max(schedule.scratchElements, slot * count);
    if (op == ReduceOp::Avg) scale(target, count, 1.0 / world);
  }
};

}  // namespace

TransferSchedule scheduleTransfers(const CollectiveSignature& s, int rank, int world, bool inPlace) {
  Builder b{rank, world, {}};
  b.newPhase();
  const size_t n = s.count;
  switch (s.kind) {
    case CollectiveKind::Allgather:
      // recv block q = rank q's send (in place, block rank is the send).
      for (int q = 0; q < world; ++q) {
        const Place block = b.own(Region::Recv, static_cast<size_t>(q) * n);
        if (q == rank && inPlace) continue;  // the send is this block already
        b.copy(block, Place{q, Region::Send, 0}, n);
      }
      break;
    case CollectiveKind::ReduceScatter: {
      // recv = block rank of the reduction of every send.
      const size_t block = static_cast<size_t>(rank) * n;
      const Place target = inPlace ? b.own(Region::Send, block) : b.own(Region::Recv, 0);
      b.reduceParts(block, n, target, s.op);
      break;
    }
    case CollectiveKind::Allreduce: {
      // Phase 1: this rank reduces its part into its recv; phase 2: it
      // pulls every other part from the rank that reduced it.
      const auto [begin, end] = partRange(n, rank, world);
      const Place target = inPlace ? b.own(Region::Send, begin) : b.own(Region::Recv, begin);
      b.reduceParts(begin, end - begin, target, s.op);
      if (world > 1) {
        b.newPhase();
        for (int q = 0; q < world; ++q) {
          if (q == rank) continue;
          const auto [qBegin, qEnd] = partRange(n, q, world);
          b.copy(b.own(Region::Recv, qBegin), Place{q, Region::Recv, qBegin}, qEnd - qBegin);
        }
      }
      break;
    }
    case CollectiveKind::Broadcast:
      if (rank != s.root) b.copy(b.own(Region::Recv, 0), Place{s.root, Region::Recv, 0}, n);
      break;
    case CollectiveKind::SendRecv: b.copy(b.own(Region::Recv, 0), Place{s.from, Region::Send, 0}, n); break;
    case CollectiveKind::Barrier: break;
  }
  return b.schedule;
}

}  // namespace hostir
