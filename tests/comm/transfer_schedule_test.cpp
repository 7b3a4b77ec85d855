// The copy-engine communicator's schedule as data: for every collective,
// team size, rank and layout, (1) every rank writes only its own buffers
// and reduces only its own memory, (2) no rank reads, in a phase, memory
// that another rank writes in the same phase (the fence exchange between
// phases is all the ordering there is), (3) scratch stays within its size,
// and (4) the elements a rank must produce are each written exactly once by
// a copy or by the first step of a reduction.
#include "comm/transfer_schedule.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace hostir {
namespace {

// Where a place lives: a rank's memory, as one buffer per region except
// where the in-place layout makes send and recv one buffer.
struct Span {
  int rank;
  int buffer;  // 0: send (and recv in place), 1: recv, 2: scratch
  size_t begin, end;
};

struct Layout {
  CollectiveSignature signature;
  size_t block;  // elements per rank block: allgather's send, reduce-scatter's recv, all-to-all's part
  int world;
  bool inPlace;
};

// The signature of `kind` on `world` ranks with blocks of `n` elements.
CollectiveSignature signatureOf(CollectiveKind kind, size_t n, int world, ReduceOp op = ReduceOp::Sum) {
  const size_t w = static_cast<size_t>(world);
  switch (kind) {
    case CollectiveKind::Allgather: return {kind, DType::F32, n, n * w, op};
    case CollectiveKind::ReduceScatter: return {kind, DType::F32, n * w, n, op};
    case CollectiveKind::AllToAll: return {kind, DType::F32, n * w, n * w, op};
    case CollectiveKind::Allreduce:
    case CollectiveKind::Broadcast:
    case CollectiveKind::SendRecv: return {kind, DType::F32, n, n, op};
  }
  return {};
}

// The element offset of region `region`'s start within its buffer.
Span spanOf(const Layout& l, const Place& p, size_t count) {
  const size_t n = l.block;
  size_t base = 0;
  int buffer = p.region == Region::Send ? 0 : p.region == Region::Recv ? 1 : 2;
  if (l.inPlace && p.region != Region::Scratch) {
    // Everything in the send buffer's terms.
    switch (l.signature.kind) {
      case CollectiveKind::Allreduce: buffer = 0; break;
      case CollectiveKind::Allgather:  // send is block `rank` of recv
        buffer = 1;
        if (p.region == Region::Send) base = static_cast<size_t>(p.rank) * n;
        break;
      case CollectiveKind::ReduceScatter:  // recv is block `rank` of send
        buffer = 0;
        if (p.region == Region::Recv) base = static_cast<size_t>(p.rank) * n;
        break;
      case CollectiveKind::Broadcast: buffer = 0; break;
      case CollectiveKind::AllToAll:
      case CollectiveKind::SendRecv: break;  // never in place
    }
  }
  return Span{p.rank, buffer, base + p.offset, base + p.offset + count};
}

bool overlap(const Span& a, const Span& b) {
  return a.rank == b.rank && a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

std::vector<Layout> layouts() {
  std::vector<Layout> all;
  for (int world = 1; world <= 5; ++world)
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{64}}) {
      for (bool inPlace : {false, true}) {
        for (CollectiveKind kind :
             {CollectiveKind::Allreduce, CollectiveKind::Allgather, CollectiveKind::ReduceScatter})
          for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg})
            all.push_back(Layout{signatureOf(kind, count, world, op), count, world, inPlace});
      }
      all.push_back(Layout{signatureOf(CollectiveKind::AllToAll, count, world), count, world, false});
      for (int root = 0; root < world; ++root) {
        CollectiveSignature s = signatureOf(CollectiveKind::Broadcast, count, world);
        s.root = root;
        all.push_back(Layout{s, count, world, true});
      }
      for (int shift = 0; shift < world; ++shift) {
        CollectiveSignature s = signatureOf(CollectiveKind::SendRecv, count, world);
        s.from = shift;  // resolved per rank below
        all.push_back(Layout{s, count, world, false});
      }
    }
  return all;
}

CollectiveSignature forRank(CollectiveSignature s, int rank, int world) {
  if (s.kind == CollectiveKind::SendRecv) {
    const int shift = s.from;
    s.to = (rank + shift) % world;
    s.from = (rank - shift + world) % world;
  }
  return s;
}

std::string describe(const Layout& l) {
  return fmt::format("{} on {} ranks{}", hostir::describe(l.signature), l.world, l.inPlace ? ", in place" : "");
}

// The elements rank `rank` must produce, in its own places' terms.
std::vector<Span> produced(const Layout& l, int rank) {
  const size_t n = l.block;
  const int w = l.world;
  switch (l.signature.kind) {
    case CollectiveKind::Allreduce: return {spanOf(l, Place{rank, Region::Recv, 0}, n)};
    case CollectiveKind::Allgather: return {spanOf(l, Place{rank, Region::Recv, 0}, n * static_cast<size_t>(w))};
    case CollectiveKind::ReduceScatter: return {spanOf(l, Place{rank, Region::Recv, 0}, n)};
    case CollectiveKind::AllToAll: return {spanOf(l, Place{rank, Region::Recv, 0}, n * static_cast<size_t>(w))};
    case CollectiveKind::Broadcast:
      if (rank == l.signature.root) return {};
      return {spanOf(l, Place{rank, Region::Recv, 0}, n)};
    case CollectiveKind::SendRecv: return {spanOf(l, Place{rank, Region::Recv, 0}, n)};
  }
  return {};
}

TEST(TransferSchedule, PhasesAreRaceFreeAndEveryResultElementIsWrittenOnce) {
  for (const Layout& l : layouts()) {
    SCOPED_TRACE(describe(l));
    std::vector<TransferSchedule> schedules;
    for (int r = 0; r < l.world; ++r)
      schedules.push_back(scheduleTransfers(forRank(l.signature, r, l.world), r, l.world, l.inPlace));
    size_t phases = 0;
    for (const TransferSchedule& s : schedules) phases = std::max(phases, s.phases.size());
    for (int r = 0; r < l.world; ++r) {
      // (4): per element of what rank r produces, how many steps first put a value there.
      std::map<size_t, int> writes;
      for (const auto& phase : schedules[static_cast<size_t>(r)].phases)
        for (const TransferStep& step : phase) {
          // (1)
          ASSERT_EQ(step.dst.rank, r);
          if (step.kind == TransferStep::Kind::Reduce) ASSERT_EQ(step.src.rank, r);
          // (3)
          for (const Place* p : {&step.dst, &step.src})
            if (p->region == Region::Scratch && (step.kind != TransferStep::Kind::Scale || p == &step.dst))
              EXPECT_LE(p->offset + step.count, schedules[static_cast<size_t>(r)].scratchElements);
          if (step.kind == TransferStep::Kind::Copy) {
            const Span dst = spanOf(l, step.dst, step.count);
            for (const Span& out : produced(l, r))
              if (overlap(dst, out))
                for (size_t e = std::max(dst.begin, out.begin); e < std::min(dst.end, out.end); ++e) ++writes[e];
          }
        }
      // A reduction's first value is a copy, or the element already there in
      // place (this rank's own part of its send); count those too.
      const CollectiveKind kind = l.signature.kind;
      if (l.inPlace && (kind == CollectiveKind::Allreduce || kind == CollectiveKind::ReduceScatter ||
                        kind == CollectiveKind::Allgather)) {
        size_t begin = 0, end = 0;
        if (kind == CollectiveKind::Allreduce) std::tie(begin, end) = partRange(l.block, r, l.world);
        if (kind == CollectiveKind::ReduceScatter) begin = 0, end = l.block;
        if (kind == CollectiveKind::Allgather) begin = static_cast<size_t>(r) * l.block, end = begin + l.block;
        const Span own = spanOf(l, Place{r, Region::Recv, begin}, end - begin);
        for (size_t e = own.begin; e < own.end; ++e) ++writes[e];
      }
      for (const Span& out : produced(l, r))
        for (size_t e = out.begin; e < out.end; ++e) EXPECT_EQ(writes[e], 1) << "rank " << r << " element " << e;
    }
    // (2)
    for (size_t p = 0; p < phases; ++p)
      for (int reader = 0; reader < l.world; ++reader) {
        const auto& readerPhases = schedules[static_cast<size_t>(reader)].phases;
        if (p >= readerPhases.size()) continue;
        for (const TransferStep& read : readerPhases[p]) {
          if (read.kind == TransferStep::Kind::Scale) continue;
          const Span source = spanOf(l, read.src, read.count);
          for (int writer = 0; writer < l.world; ++writer) {
            if (writer == reader) continue;  // one stream: in order
            const auto& writerPhases = schedules[static_cast<size_t>(writer)].phases;
            if (p >= writerPhases.size()) continue;
            for (const TransferStep& write : writerPhases[p])
              EXPECT_FALSE(overlap(source, spanOf(l, write.dst, write.count)))
                  << "phase " << p << ": rank " << reader << " reads what rank " << writer << " writes";
          }
        }
      }
  }
}

TEST(TransferSchedule, AllreduceTakesTwoPhasesAndPullsOnePartFromEachPeer) {
  const TransferSchedule s = scheduleTransfers(signatureOf(CollectiveKind::Allreduce, 10, 3), 1, 3, false);
  ASSERT_EQ(s.phases.size(), 2u);
  // Part 1 of 10 over 3 ranks is [4, 7): own copy, then per peer a pull and a reduction.
  ASSERT_EQ(s.phases[0].size(), 5u);
  EXPECT_EQ(s.phases[0][0].kind, TransferStep::Kind::Copy);
  EXPECT_EQ(s.phases[0][0].src.offset, 4u);
  EXPECT_EQ(s.phases[0][1].src.rank, 0);
  EXPECT_EQ(s.phases[0][3].src.rank, 2);
  EXPECT_EQ(s.scratchElements, 6u);  // two peers' parts of 3
  // Then the other two parts, from the ranks that reduced them.
  ASSERT_EQ(s.phases[1].size(), 2u);
  EXPECT_EQ(s.phases[1][0].src.rank, 0);
  EXPECT_EQ(s.phases[1][0].count, 4u);
  EXPECT_EQ(s.phases[1][1].src.rank, 2);
  EXPECT_EQ(s.phases[1][1].count, 3u);
}

TEST(TransferSchedule, AvgDividesOnceAfterTheSum) {
  const TransferSchedule s =
      scheduleTransfers(signatureOf(CollectiveKind::ReduceScatter, 4, 4, ReduceOp::Avg), 0, 4, true);
  ASSERT_EQ(s.phases.size(), 1u);
  const TransferStep& last = s.phases[0].back();
  EXPECT_EQ(last.kind, TransferStep::Kind::Scale);
  EXPECT_DOUBLE_EQ(last.factor, 0.25);
}

TEST(TransferSchedule, OneRankMovesNothingButItsOwnData) {
  EXPECT_TRUE(scheduleTransfers(signatureOf(CollectiveKind::Allreduce, 8, 1), 0, 1, true).phases[0].empty());
  const TransferSchedule copy = scheduleTransfers(signatureOf(CollectiveKind::Allgather, 8, 1), 0, 1, false);
  ASSERT_EQ(copy.phases[0].size(), 1u);
  EXPECT_EQ(copy.phases[0][0].src.region, Region::Send);
}

TEST(TransferSchedule, AllToAllPullsItsPartFromEveryRankInOnePhase) {
  // Rank 2 of 4 with parts of 5: recv block q is block 2 of rank q's send.
  const TransferSchedule s = scheduleTransfers(signatureOf(CollectiveKind::AllToAll, 5, 4), 2, 4, false);
  ASSERT_EQ(s.phases.size(), 1u);
  ASSERT_EQ(s.phases[0].size(), 4u);
  for (int q = 0; q < 4; ++q) {
    const TransferStep& step = s.phases[0][static_cast<size_t>(q)];
    EXPECT_EQ(step.kind, TransferStep::Kind::Copy);  // copies only: no SM work on a GPU
    EXPECT_EQ(step.count, 5u);
    EXPECT_EQ(step.src.rank, q);
    EXPECT_EQ(step.src.region, Region::Send);
    EXPECT_EQ(step.src.offset, 10u);
    EXPECT_EQ(step.dst.region, Region::Recv);
    EXPECT_EQ(step.dst.offset, static_cast<size_t>(q) * 5);
  }
  EXPECT_EQ(s.scratchElements, 0u);
}

}  // namespace
}  // namespace hostir
