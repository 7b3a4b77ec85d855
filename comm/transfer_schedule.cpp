#include "comm/transfer_schedule.h"

#include <algorithm>
#include <cstddef>

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
  switch (s.kind) {
    case CollectiveKind::Allgather: {
      // recv block q = rank q's send (in place, block rank is the send).
      const size_t n = s.sendCount;
      for (int q = 0; q < world; ++q) {
        const Place block = b.own(Region::Recv, static_cast<size_t>(q) * n);
        if (q == rank && inPlace) continue;  // the send is this block already
        b.copy(block, Place{q, Region::Send, 0}, n);
      }
      break;
    }
    case CollectiveKind::ReduceScatter: {
      // recv = block rank of the reduction of every send.
      const size_t n = s.recvCount;
      const size_t block = static_cast<size_t>(rank) * n;
      const Place target = inPlace ? b.own(Region::Send, block) : b.own(Region::Recv, 0);
      b.reduceParts(block, n, target, s.op);
      break;
    }
    case CollectiveKind::Allreduce: {
      // Phase 1: this rank reduces its part into its recv; phase 2: it
      // pulls every other part from the rank that reduced it.
      const size_t n = s.sendCount;
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
    case CollectiveKind::AllToAll: {
      // recv block q = block rank of rank q's send: a pull from every peer
      // (and from itself), copies only, so no SM does the work on a GPU.
      const size_t part = s.sendCount / static_cast<size_t>(world);
      for (int q = 0; q < world; ++q)
        b.copy(b.own(Region::Recv, static_cast<size_t>(q) * part),
               Place{q, Region::Send, static_cast<size_t>(rank) * part}, part);
      break;
    }
    case CollectiveKind::Broadcast:
      if (rank != s.root) b.copy(b.own(Region::Recv, 0), Place{s.root, Region::Recv, 0}, s.recvCount);
      break;
    case CollectiveKind::SendRecv: b.copy(b.own(Region::Recv, 0), Place{s.from, Region::Send, 0}, s.recvCount); break;
  }
  return b.schedule;
}

bool inPlaceLayout(const CollectiveSignature& signature, int rank, const void* send, const void* recv) {
  const size_t elementSize = dtypeSize(signature.dtype);
  const auto* in = static_cast<const std::byte*>(send);
  const auto* out = static_cast<const std::byte*>(recv);
  const size_t block = static_cast<size_t>(rank) * elementSize;
  switch (collectiveInfo(signature.kind).shape) {
    case CollectiveShape::Same: return in == out;
    case CollectiveShape::Gathered: return in == out + block * signature.sendCount;   // send is block rank of recv
    case CollectiveShape::Scattered: return out == in + block * signature.recvCount;  // recv is block rank of send
    case CollectiveShape::InPlace: return true;                                       // one buffer
    case CollectiveShape::Exchanged:  // peers read send while this rank writes recv
    case CollectiveShape::PerPeer: return false;
  }
  return false;
}

}  // namespace hostir
