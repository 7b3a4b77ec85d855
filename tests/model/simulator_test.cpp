// The simulator's timing rules on tiny hand-computed cases: serial work,
// two streams, an event, a collective across ranks with skew, contention,
// host issue cost; then whole programs through the evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ir/parser.h"
#include "ir/verifier.h"
#include "model/cost_model.h"
#include "model/simulation.h"
#include "model/timeline_simulator.h"
#include "test_util.h"

namespace hostir {
namespace {

MachineProfile profile(Admission admission, double units) {
  MachineProfile p;
  p.name = "test";
  p.admission = admission;
  p.computeUnits = units;
  p.memory = MemoryCurve{{1}, {1e6}};
  return p;
}

// Builds one rank's work item by item, in issue order.
struct WorkBuilder {
  RankWork work;
  explicit WorkBuilder(int streams) { work.streams = streams; }
  WorkBuilder& compute(int stream, double seconds, double units = 1) {
    return add(WorkItem::Kind::Compute, stream, seconds, units);
  }
  WorkBuilder& communicate(int stream, double seconds, double units = 1) {
    add(WorkItem::Kind::Communication, stream, seconds, units);
    work.items.back().communication = lanes[0]++;
    ++work.communications;
    return *this;
  }
  // Over mesh axes `over`: in group `group` of `size` ranks.
  WorkBuilder& communicateOver(uint32_t over, int64_t group, int64_t size, int stream, double seconds) {
    add(WorkItem::Kind::Communication, stream, seconds, 1);
    WorkItem& item = work.items.back();
    item.over = over, item.group = group, item.groupSize = size;
    item.communication = lanes[over]++;
    ++work.communications;
    return *this;
  }
  std::map<uint32_t, int64_t> lanes;  // communications so far per set of axes
  // A communication on the copy engines: its own class, no SM held.
  WorkBuilder& copyEngineCommunicate(int stream, double seconds) {
    communicate(stream, seconds, 0);
    work.items.back().workClass = WorkClass::CopyEngineCommunication;
    return *this;
  }
  WorkBuilder& wait(int stream, int afterStream, uint64_t afterCount) {
    add(WorkItem::Kind::Wait, stream, 0, 0);
    work.items.back().afterStream = afterStream;
    work.items.back().afterCount = afterCount;
    return *this;
  }
  WorkBuilder& gemm(int stream, double seconds, double units = 1) {
    add(WorkItem::Kind::Compute, stream, seconds, units);
    work.items.back().op = OpKind::Linear;
    work.items.back().workClass = WorkClass::Gemm;
    return *this;
  }
  WorkBuilder& copy(int stream, double seconds, double units = 1) {
    return add(WorkItem::Kind::Memory, stream, seconds, units);
  }
  WorkBuilder& add(WorkItem::Kind kind, int stream, double seconds, double units) {
    WorkItem item;
    item.kind = kind;
    item.stream = stream;
    item.statement = work.statements++;
    item.seconds = seconds;
    item.units = units;
    work.items.push_back(item);
    return *this;
  }
};

Timeline simulate(const std::vector<RankWork>& ranks, const MachineProfile& p) {
  auto timeline = simulateTimeline(ranks, p);
  EXPECT_TRUE(timeline.ok()) << (timeline.ok() ? "" : timeline.error());
  return timeline.ok() ? *timeline : Timeline{};
}

void expectItem(const RankTimeline& rank, size_t item, double start, double end) {
  ASSERT_LT(item, rank.items.size());
  EXPECT_NEAR(rank.items[item].start, start, 1e-9) << "item " << item;
  EXPECT_NEAR(rank.items[item].end, end, 1e-9) << "item " << item;
}

TEST(TimelineSimulator, OneStreamRunsItsWorkInIssueOrder) {
  WorkBuilder b(1);
  b.compute(0, 1).compute(0, 2);
  Timeline t = simulate({b.work}, profile(Admission::IssueOrder, 4));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 1, 3);
  EXPECT_NEAR(t.end, 3, 1e-9);
}

TEST(TimelineSimulator, TwoStreamsRunAtOnceWhenTheRankHasTheUnits) {
  WorkBuilder b(3);
  b.compute(1, 1).compute(2, 2);
  Timeline t = simulate({b.work}, profile(Admission::IssueOrder, 2));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 0, 2);
}

TEST(TimelineSimulator, IssueOrderRanksTakeTurnsOnTooFewUnits) {
  WorkBuilder b(3);
  b.compute(1, 1).compute(2, 2);
  Timeline t = simulate({b.work}, profile(Admission::IssueOrder, 1));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 1, 3);
}

TEST(TimelineSimulator, TheGateStartsWorkInIssueOrderEvenWhenLaterWorkIsReady) {
  // Stream 1's second GEMM is ready at 1, but stream 2's, issued before
  // it, takes the one core first.
  WorkBuilder b(3);
  b.compute(1, 1).compute(2, 1).compute(1, 1);
  Timeline t = simulate({b.work}, profile(Admission::IssueOrder, 1));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 1, 2);
  expectItem(t.ranks[0], 2, 2, 3);
}

TEST(TimelineSimulator, AWaitOrdersTheWaiterAfterTheEventPlusSyncAndWakeUp) {
  MachineProfile p = profile(Admission::IssueOrder, 2);
  p.overheads.syncMicros = 100'000;   // 0.1 s
  p.overheads.wakeupMicros = 50'000;  // 0.05 s: the waiter had nothing else to do
  WorkBuilder b(3);
  b.compute(1, 1).wait(2, 1, 1).compute(2, 1);
  Timeline t = simulate({b.work}, p);
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 0, 1.15);
  expectItem(t.ranks[0], 2, 1.15, 2.15);
}

TEST(TimelineSimulator, AWaitForFinishedWorkCostsOnlyTheSync) {
  MachineProfile p = profile(Admission::IssueOrder, 2);
  p.overheads.syncMicros = 100'000;
  p.overheads.wakeupMicros = 50'000;
  WorkBuilder b(3);
  b.compute(1, 1).compute(2, 2).wait(2, 1, 1).compute(2, 1);
  Timeline t = simulate({b.work}, p);
  expectItem(t.ranks[0], 2, 2, 2.1);
  expectItem(t.ranks[0], 3, 2.1, 3.1);
}

TEST(TimelineSimulator, ACollectiveStartsWhenTheLastRankReachesIt) {
  // Rank 0 computes 1 s, rank 1 3 s: the allreduce (0.5 s) runs from 3 to
  // 3.5 on both; rank 0's core is held (Open MPI polls) from 1.
  WorkBuilder r0(1), r1(1);
  r0.compute(0, 1).communicate(0, 0.5).compute(0, 1);
  r1.compute(0, 3).communicate(0, 0.5).compute(0, 1);
  Timeline t = simulate({r0.work, r1.work}, profile(Admission::IssueOrder, 1));
  expectItem(t.ranks[0], 1, 3, 3.5);
  expectItem(t.ranks[1], 1, 3, 3.5);
  EXPECT_NEAR(t.ranks[0].items[1].ready, 1, 1e-9);
  expectItem(t.ranks[0], 2, 3.5, 4.5);
  EXPECT_NEAR(t.end, 4.5, 1e-9);
}

TEST(TimelineSimulator, ARankRunsItsCommunicationsOneAtATimeInIssueOrder) {
  WorkBuilder b(3);
  b.communicate(1, 1, 0.5).communicate(2, 1, 0.5);
  Timeline t = simulate({b.work}, profile(Admission::Concurrent, 4));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 1, 2);
}

// One rank for all: a tp, a dp and a tp communication, each on its own stream.
RankWork twoAxesOnThreeStreams() {
  WorkBuilder b(4);
  b.communicateOver(2, 0, 2, 1, 1).communicateOver(1, 0, 2, 2, 1).communicateOver(2, 0, 2, 3, 1);
  return b.work;
}

TEST(TimelineSimulator, OnTheCpuCommunicationsOverDifferentMeshAxesRunSideBySide) {
  // The dp one runs beside the first tp one; the second tp one waits for the first.
  Timeline t = simulate({twoAxesOnThreeStreams()}, profile(Admission::IssueOrder, 4));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 0, 1);
  expectItem(t.ranks[0], 2, 1, 2);
}

TEST(TimelineSimulator, OnAGpuEveryCommunicationWaitsForTheOneBefore) {
  Timeline t = simulate({twoAxesOnThreeStreams()}, profile(Admission::Concurrent, 4));
  expectItem(t.ranks[0], 0, 0, 1);
  expectItem(t.ranks[0], 1, 1, 2);
  expectItem(t.ranks[0], 2, 2, 3);
}

TEST(TimelineSimulator, AGroupsCommunicationWaitsForItsGroupOnly) {
  // 4 ranks, mesh (dp = 2, tp = 2): tp groups {0, 1} and {2, 3}. Only the
  // first group reduces over tp (after 2 s of work on rank 1); then every
  // rank reduces over dp (groups {0, 2} and {1, 3}).
  std::vector<WorkBuilder> ranks(4, WorkBuilder(1));
  for (int r = 0; r < 4; ++r) {
    ranks[r].compute(0, r == 1 ? 2 : 1);
    if (r < 2) ranks[r].communicateOver(2, 0, 2, 0, 1);
    ranks[r].communicateOver(1, r % 2, 2, 0, 1);
  }
  Timeline t =
      simulate({ranks[0].work, ranks[1].work, ranks[2].work, ranks[3].work}, profile(Admission::IssueOrder, 1));
  expectItem(t.ranks[0], 1, 2, 3);  // tp on {0, 1}: when rank 1 reaches it
  expectItem(t.ranks[2], 1, 3, 4);  // dp on {0, 2}: when rank 0 reaches it
  expectItem(t.ranks[3], 1, 3, 4);  // dp on {1, 3}
  EXPECT_NEAR(t.end, 4, 1e-9);
}

TEST(TimelineSimulator, AGroupMissingARanksCommunicationIsAnError) {
  std::vector<WorkBuilder> ranks(2, WorkBuilder(1));
  ranks[0].communicateOver(1, 0, 2, 0, 1);
  auto t = simulateTimeline({ranks[0].work, ranks[1].work}, profile(Admission::IssueOrder, 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(),
            "communication #1 over a set of mesh axes: rank 0 issues it, but only 1 of the 2 ranks of its group do");
}

TEST(TimelineSimulator, ConcurrentComputationsShareTheUnitsLeftByACommunication) {
  // 100 units; the GEMM wants all of them for 2 s alone, the communication
  // holds 20 for 1 s: the GEMM runs at 0.8 for 1 s, then at 1 for the
  // remaining 1.2 s of work.
  WorkBuilder b(3);
  b.compute(1, 2, 100).communicate(2, 1, 20);
  Timeline t = simulate({b.work}, profile(Admission::Concurrent, 100));
  expectItem(t.ranks[0], 0, 0, 2.2);
  expectItem(t.ranks[0], 1, 0, 1);
}

TEST(TimelineSimulator, TwoConcurrentGemmsEachRunAtHalfSpeed) {
  WorkBuilder b(3);
  b.compute(1, 1, 10).compute(2, 1, 10);
  Timeline t = simulate({b.work}, profile(Admission::Concurrent, 10));
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 2);
}

TEST(TimelineSimulator, TheHostIssuesOneStatementPerIssueCost) {
  MachineProfile p = profile(Admission::IssueOrder, 2);
  p.overheads.issueMicros = 1000;   // 1 ms
  p.overheads.launchMicros = 2000;  // 2 ms
  WorkBuilder b(3);
  b.compute(1, 0.001).compute(2, 0.001);  // statements 0 and 1
  Timeline t = simulate({b.work}, p);
  expectItem(t.ranks[0], 0, 0.003, 0.004);
  expectItem(t.ranks[0], 1, 0.004, 0.005);
  EXPECT_NEAR(t.ranks[0].hostEnd, 0.002, 1e-12);
}

TEST(TimelineSimulator, ACommunicationOneRankNeverIssuesIsAnError) {
  WorkBuilder r0(1), r1(1);
  r0.compute(0, 1).communicate(0, 1);
  r1.compute(0, 1);
  auto t = simulateTimeline({r0.work, r1.work}, profile(Admission::IssueOrder, 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), "rank 1 never issues communication #1, which other ranks wait for");
}

// Contention (docs/cost-model.md): on a Concurrent rank with a contention
// table, each class of work runs at its unit share times its rate beside
// every other class running.
MachineProfile contended(std::vector<Contention> table) {
  MachineProfile p = profile(Admission::Concurrent, 100);
  p.contention = std::move(table);
  return p;
}

TEST(TimelineSimulator, ACommunicationBesideAGemmRunsAtItsContentionRate) {
  // Alone the GEMM takes 2 s and the communication 1 s. Together the
  // communication keeps 0.25 of its rate and the GEMM 0.8 (units are not
  // short: 1 + 1 of 100). The GEMM ends at 2 / 0.8 = 2.5 s, having left the
  // communication 2.5 * 0.25 = 0.625 s of its work done; the rest, 0.375 s
  // alone, ends it at 2.875 s.
  WorkBuilder b(3);
  b.gemm(1, 2).communicate(2, 1);
  Timeline t = simulate({b.work}, contended({{WorkClass::Communication, WorkClass::Gemm, 0.25, 0},
                                             {WorkClass::Gemm, WorkClass::Communication, 0.8, 0}}));
  expectItem(t.ranks[0], 0, 0, 2.5);
  expectItem(t.ranks[0], 1, 0, 2.875);
}

TEST(TimelineSimulator, APairTheTableLeavesOutSharesTheDevice) {
  // A copy beside a GEMM, neither pair in the table (which has entries):
  // both at 0.5. The copy (1 s) ends at 2 s; the GEMM (2 s alone) has done
  // 1 s of work by then, and does the other alone: it ends at 3 s.
  WorkBuilder b(3);
  b.gemm(1, 2).copy(2, 1);
  Timeline t = simulate({b.work}, contended({{WorkClass::Communication, WorkClass::Gemm, 0.25, 0}}));
  expectItem(t.ranks[0], 0, 0, 3);
  expectItem(t.ranks[0], 1, 0, 2);
}

TEST(TimelineSimulator, WithoutAContentionTableClassesRunSideBySideFreely) {
  WorkBuilder b(3);
  b.gemm(1, 2).copy(2, 1);
  Timeline t = simulate({b.work}, contended({}));
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 1);
}

TEST(TimelineSimulator, ContentionMultipliesOverTheOtherClassesAndNotWithinOne) {
  // Two GEMMs (one class: they share units, 0.5 each) beside a copy: each
  // GEMM at 0.5 * 0.9, the copy at 0.2 (one GEMM class beside it, counted once).
  WorkBuilder b(4);
  b.gemm(1, 0.9, 100).gemm(2, 0.9, 100).copy(3, 0.2, 0);
  Timeline t =
      simulate({b.work},
               contended({{WorkClass::Gemm, WorkClass::Memory, 0.9, 0}, {WorkClass::Memory, WorkClass::Gemm, 0.2, 0}}));
  // The copy ends at 1 s; the GEMMs have done 0.45 s each by then, and the
  // remaining 0.45 s each at 0.5: 0.9 s more.
  expectItem(t.ranks[0], 2, 0, 1);
  expectItem(t.ranks[0], 0, 0, 1.9);
  expectItem(t.ranks[0], 1, 0, 1.9);
}

TEST(TimelineSimulator, ACommunicationMovesAtItsSlowestRanksRate) {
  // Rank 0 computes a GEMM beside the allreduce, rank 1 does not: the
  // allreduce moves at rank 0's 0.25 while the GEMM runs (2 s at 1: it
  // holds no contention entry against communication), then at 1.
  WorkBuilder r0(3), r1(3);
  r0.gemm(1, 2).communicate(2, 1);
  r1.communicate(2, 1);
  Timeline t = simulate({r0.work, r1.work}, contended({{WorkClass::Communication, WorkClass::Gemm, 0.25, 0},
                                                       {WorkClass::Gemm, WorkClass::Communication, 1, 0}}));
  // By 2 s the allreduce did 0.5 s of its work; the other 0.5 s ends it at 2.5 s on both ranks.
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 2.5);
  expectItem(t.ranks[1], 0, 0, 2.5);
}

TEST(TimelineSimulator, WaitsAreNotWorkAndCommunicationsWaitingForPeersMoveNothing) {
  // Rank 0 reaches the allreduce at once, rank 1 after a 1 s GEMM: until
  // then rank 0's communication moves nothing and slows nothing, so rank
  // 0's GEMM (1 s) runs alone. Then both move data, rank 1 has nothing beside it.
  WorkBuilder r0(3), r1(3);
  r0.communicate(1, 1).gemm(2, 1).wait(0, 1, 1);
  r1.gemm(1, 1).communicate(1, 1);
  Timeline t = simulate({r0.work, r1.work}, contended({{WorkClass::Communication, WorkClass::Gemm, 0.25, 0},
                                                       {WorkClass::Gemm, WorkClass::Communication, 0.5, 0}}));
  expectItem(t.ranks[0], 1, 0, 1);
  expectItem(t.ranks[0], 0, 1, 2);
  expectItem(t.ranks[1], 1, 1, 2);
}

// Communication on the copy engines contends for memory bandwidth only
// (docs/machine-profiles.md, "Assumed contention"). The table has one
// unrelated entry, so every pair below takes its assumed figure.
const std::vector<Contention> kUnrelatedEntry = {{WorkClass::Memory, WorkClass::Elementwise, 0.7, 0}};

TEST(TimelineSimulator, CopyEngineCommunicationBesideAGemmRunsAtFullRate) {
  // GEMM 2 s, communication 1 s: neither slows the other, both end as alone.
  WorkBuilder b(3);
  b.gemm(1, 2).copyEngineCommunicate(2, 1);
  Timeline t = simulate({b.work}, contended(kUnrelatedEntry));
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 1);
  // The same communication on the SMs shares the device: both at 0.5, the
  // communication ends at 2 s, the GEMM does its other 1 s alone: 3 s.
  WorkBuilder sm(3);
  sm.gemm(1, 2).communicate(2, 1);
  Timeline u = simulate({sm.work}, contended(kUnrelatedEntry));
  expectItem(u.ranks[0], 0, 0, 3);
  expectItem(u.ranks[0], 1, 0, 2);
}

TEST(TimelineSimulator, CopyEngineCommunicationBesideMemoryWorkSharesTheBandwidth) {
  // Copy 2 s, communication 1 s, both at 0.5: the communication ends at
  // 2 s, the copy has done 1 s by then and does the other alone: 3 s.
  WorkBuilder b(3);
  b.copy(1, 2).copyEngineCommunicate(2, 1);
  Timeline t = simulate({b.work}, contended(kUnrelatedEntry));
  expectItem(t.ranks[0], 0, 0, 3);
  expectItem(t.ranks[0], 1, 0, 2);
}

TEST(TimelineSimulator, AMeasuredCopyEngineEntryOverridesTheAssumption) {
  // Measured on a shared GPU: the copy engines keep 0.25 beside GEMMs; the
  // GEMM, unmeasured beside them, keeps 1. The GEMM ends at 2 s, the
  // communication has done 0.5 s by then, the other 0.5 s ends it at 2.5 s.
  WorkBuilder b(3);
  b.gemm(1, 2).copyEngineCommunicate(2, 1);
  Timeline t = simulate({b.work}, contended({{WorkClass::CopyEngineCommunication, WorkClass::Gemm, 0.25, 0}}));
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 2.5);
}

TEST(TimelineSimulator, IssueOrderRanksIgnoreTheContentionTable) {
  WorkBuilder b(3);
  b.gemm(1, 2).copy(2, 1);
  MachineProfile p = profile(Admission::IssueOrder, 2);
  p.contention = {{WorkClass::Gemm, WorkClass::Memory, 0.1, 0}, {WorkClass::Memory, WorkClass::Gemm, 0.1, 0}};
  Timeline t = simulate({b.work}, p);
  expectItem(t.ranks[0], 0, 0, 2);
  expectItem(t.ranks[0], 1, 0, 1);
}

TEST(TimelineSimulator, AStatementWithItsOwnIssueCostTakesItsTimeOnTheHost) {
  MachineProfile p = profile(Admission::Concurrent, 4);
  p.overheads.issueMicros = 1000;  // 1 ms
  p.overheads.issueMicrosByOp[OpKind::Allreduce] = 5000;
  WorkBuilder b(3);
  b.gemm(1, 0.001).communicate(2, 0.001).gemm(1, 0.001);  // statements 0, 1, 2
  b.work.issued = {{OpKind::Linear, {}}, {OpKind::Allreduce, {}}, {OpKind::Linear, {}}};
  Timeline t = simulate({b.work}, p);
  EXPECT_NEAR(t.ranks[0].hostEnd, 0.007, 1e-12);
  ASSERT_EQ(t.ranks[0].issueEnd.size(), 3u);
  EXPECT_NEAR(t.ranks[0].issueEnd[0], 0.001, 1e-12);
  EXPECT_NEAR(t.ranks[0].issueEnd[1], 0.006, 1e-12);
  expectItem(t.ranks[0], 1, 0.006, 0.007);  // issued at 6 ms
  expectItem(t.ranks[0], 2, 0.007, 0.008);  // issued at 7 ms, after the first GEMM's stream freed at 2 ms
}

// The contention rates never stall the simulation: many short pieces of
// work of every class beside each other still finish, in time linear in
// their number.
TEST(TimelineSimulator, ContendedWorkAlwaysFinishes) {
  WorkBuilder b(4);
  for (int i = 0; i < 2000; ++i)
    b.gemm(1, 1e-6 * (i % 5 + 1)).copy(2, 3e-7).communicate(3, 2e-6).add(WorkItem::Kind::Compute, 0, 1e-7, 1);
  MachineProfile p = contended({{WorkClass::Communication, WorkClass::Gemm, 0.2, 0},
                                {WorkClass::Gemm, WorkClass::Communication, 0.93, 0},
                                {WorkClass::Memory, WorkClass::Gemm, 0.15, 0}});
  auto t = simulateTimeline({b.work, b.work}, p);
  ASSERT_TRUE(t.ok()) << t.error();
  for (const ItemTiming& item : t->ranks[0].items) EXPECT_LE(item.start, item.end);
  EXPECT_GT(t->end, 2000 * 2e-6);
}

// Whole programs: the evaluator issues them against the simulation backend.
MachineProfile gemmProfile() {
  MachineProfile p = profile(Admission::IssueOrder, 1);
  p.gemm[DType::F32] = GemmGrid{{1}, {1}, {1}, {1e-6}};  // 1 MFLOP/s everywhere
  p.communication.push_back(
      CommunicationCost{OpKind::Allreduce, 2, CommAlgorithm::Flat, 1000, 1e-6, {}, {}});  // 1 ms + 1 KB/s
  return p;
}

Simulation simulateText(const std::string& text, int64_t world, const MachineProfile& p) {
  auto program = parseProgram(text);
  EXPECT_TRUE(program.ok());
  Bindings bindings{{}, world};
  EXPECT_FALSE(verifyProgram(*program, bindings).has_value());
  auto params = bindParams(*program, bindings);
  auto simulation = simulateProgram(*program, *params, world, 4, p);
  EXPECT_TRUE(simulation.ok()) << (simulation.ok() ? "" : simulation.error().message);
  return simulation.ok() ? *simulation : Simulation{};
}

std::string rowParallel() { return testing::testProgramText("model/programs/row_parallel_small.hir"); }

// Predicted times far beyond a run's (a GEMM of 2^22 cubed) leave rounding
// residue larger than the short work after them: every piece of work
// still ends, at the time the simulator chose for it.
TEST(TimelineSimulator, ShortWorkAfterHugeWorkStillFinishes) {
  for (Admission admission : {Admission::Concurrent, Admission::IssueOrder}) {
    WorkBuilder b(3);
    b.compute(1, 2.6e6, 4);
    for (int i = 0; i < 200; ++i) b.compute(2, 1e-9 * (i % 7 + 1), 1).compute(1, 3e-10, 1);
    b.wait(0, 1, 201).compute(0, 1e-12);
    auto t = simulateTimeline({b.work}, profile(admission, 4));
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_GE(t->end, 2.6e6);
    EXPECT_LE(t->end, 2.6e6 * (1 + 1e-9));
    for (const ItemTiming& item : t->ranks[0].items) EXPECT_LE(item.start, item.end);
  }
}

// Starting a communication costs the same however many came before it: a
// loop of 200,000 collectives on 2 ranks is simulated in about a second,
// far within the test's time limit (it took minutes when every event
// scanned them all).
TEST(TimelineSimulator, ManyCommunicationsAreSimulatedInLinearTime) {
  constexpr int kIterations = 200'000;
  WorkBuilder b(2);
  for (int i = 0; i < kIterations; ++i)
    b.compute(0, 1e-6).communicate(1, 1e-6).wait(0, 1, static_cast<uint64_t>(i + 1));
  MachineProfile p = profile(Admission::Concurrent, 4);
  auto t = simulateTimeline({b.work, b.work}, p);
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_NEAR(t->end, kIterations * 1e-6, 1e-6);  // each GEMM beside its allreduce
}

TEST(Simulation, ARowParallelLayerCostsItsGemmThenItsAllreduce) {
  const MachineProfile p = gemmProfile();
  Simulation s = simulateText(rowParallel(), 2, p);
  ASSERT_EQ(s.work.size(), 1u);  // never names `rank`: one rank stands for both
  EXPECT_TRUE(s.symmetric);
  // Local GEMM: M=4, N=2, K=8/2: 64 flops at 1 MFLOP/s; the allreduce: 1 ms + 32 bytes * 1 at 1 KB/s.
  const double gemm = 64e-6, allreduce = 1e-3 + 32 * busFactor(OpKind::Allreduce, 2) / 1e3;
  EXPECT_NEAR(s.seconds(), gemm + allreduce, 1e-9);
}

// Attention is priced in the GEMM class: beside an allreduce it takes the
// GEMM pairs' rates, not the elementwise ones.
std::string attentionBesideAllreduce() {
  return testing::testProgramText("model/programs/attention_beside_allreduce.hir");
}

TEST(Simulation, AttentionBesideAnAllreduceTakesTheGemmContentionRates) {
  MachineProfile p = gemmProfile();
  p.admission = Admission::Concurrent;
  p.computeUnits = 100;
  // Communication keeps 0.25 beside GEMMs and the GEMMs 0.8; beside elementwise work both keep 1.
  p.contention = {{WorkClass::Communication, WorkClass::Gemm, 0.25, 0},
                  {WorkClass::Gemm, WorkClass::Communication, 0.8, 0},
                  {WorkClass::Communication, WorkClass::Elementwise, 1, 0},
                  {WorkClass::Elementwise, WorkClass::Communication, 1, 0}};
  // Attention: 4 * T * T * D = 2048 flops at the GEMM rate, 1 MFLOP/s: 2.048 ms.
  // The allreduce: 1 ms + 4 bytes at 1 KB/s (bus factor 1 on 2 ranks): 5 ms.
  const double attention = 2048e-6, allreduce = 1e-3 + 4 * busFactor(OpKind::Allreduce, 2) / 1e3;
  ASSERT_NEAR(allreduce, 5e-3, 1e-12);
  // Together from 0 (no overheads): attention at 0.8 ends at 2.56 ms; the
  // allreduce has done 2.56 * 0.25 = 0.64 ms of its work by then, and does
  // the other 4.36 ms alone: it ends at 6.92 ms, the run's end.
  Simulation s = simulateText(attentionBesideAllreduce(), 2, p);
  ASSERT_EQ(s.work.size(), 1u);
  EXPECT_NEAR(attention / 0.8, 2.56e-3, 1e-12);
  EXPECT_NEAR(s.seconds(), 2.56e-3 + (allreduce - 2.56e-3 * 0.25), 1e-9);
  EXPECT_NEAR(s.seconds(), 6.92e-3, 1e-9);
}

TEST(Simulation, AProgramThatNamesRankIsIssuedOnEveryRank) {
  std::string text = rowParallel();
  text.replace(text.find("  c = allreduce"), 0, "  z = allocate(f32[rank + 1])\n");
  Simulation s = simulateText(text, 2, gemmProfile());
  EXPECT_FALSE(s.symmetric);
  EXPECT_EQ(s.work.size(), 2u);
}

TEST(Simulation, MeshGroupsMatchTheirOwnCommunications) {
  // Ranks 0 and 1 (dp row 0) reduce over tp, then everyone over dp: rank
  // 2's dp allreduce waits for rank 0's tp one; rank 3's tp has none.
  MachineProfile p = gemmProfile();
  CommunicationCost allreduce;  // 1 ms and 1 TB/s: the latency only, at this size
  allreduce.algorithm = CommAlgorithm::Flat, allreduce.latencyMicros = 1000, allreduce.busGbps = 1000;
  p.communication.push_back(allreduce);
  Simulation s = simulateText(testing::testProgramText("model/programs/groups_differ.hir"), 4, p);
  ASSERT_EQ(s.work.size(), 4u);
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(s.work[r].communications, r < 2 ? 2 : 1) << "rank " << r;
  const RankTimeline& rank2 = s.timeline.ranks[2];
  const auto dp = std::find_if(s.work[2].items.begin(), s.work[2].items.end(),
                               [](const WorkItem& w) { return w.kind == WorkItem::Kind::Communication; });
  ASSERT_NE(dp, s.work[2].items.end());
  EXPECT_GE(rank2.items[static_cast<size_t>(dp - s.work[2].items.begin())].start, 1e-3);  // after rank 0's tp (1 ms)
  EXPECT_NEAR(s.seconds(), s.timeline.ranks[0].end, 1e-12);
}

// One ring step: every rank sends its block to the next and receives the previous one's.
std::string ringStep() { return testing::testProgramText("model/programs/ring_step.hir"); }

TEST(Simulation, ASendrecvCostsOneTransferToAPeer) {
  MachineProfile p = gemmProfile();
  p.communication.push_back(
      CommunicationCost{OpKind::SendRecv, 2, CommAlgorithm::Flat, 2000, 1e-6, {}, {}});  // 2 ms + 1 KB/s
  Simulation s = simulateText(ringStep(), 4, p);
  EXPECT_FALSE(s.symmetric);  // to and from name `rank`
  ASSERT_EQ(s.work.size(), 4u);
  // 64 f32 elements: 2 ms + 256 bytes at 1 KB/s, on every rank at once.
  EXPECT_NEAR(s.seconds(), 2e-3 + 256 / 1e3, 1e-9);
}

TEST(Simulation, ASendrecvToItselfIsALocalCopy) {
  MachineProfile p = gemmProfile();
  p.communication.push_back(CommunicationCost{OpKind::SendRecv, 2, CommAlgorithm::Flat, 2000, 1e-6, {}, {}});
  std::string text = ringStep();
  text.replace(text.find("K = 1"), 5, "K = 0");
  Simulation s = simulateText(text, 4, p);
  // 256 bytes read and 256 written at the memory curve's rate, nothing like the 2 ms transfer.
  EXPECT_NEAR(s.seconds(), memorySeconds(p, 512), 1e-9);
}

TEST(Simulation, ADtypeTheProfileCannotPriceIsAnErrorAtItsStatement) {
  std::string text = rowParallel();
  for (size_t at; (at = text.find("f32")) != std::string::npos;) text.replace(at, 3, "f64");
  auto program = parseProgram(text);
  ASSERT_TRUE(program.ok());
  Bindings bindings{{}, 2};
  auto params = bindParams(*program, bindings);
  auto simulation = simulateProgram(*program, *params, 2, 4, gemmProfile());
  ASSERT_FALSE(simulation.ok());
  EXPECT_EQ(simulation.error().loc.line, 6);
  EXPECT_EQ(simulation.error().message, "the profile 'test' has no f64 GEMM rates");
}

// A copy into a column block moves its bytes in rows of W elements: it is
// priced at the profile's strided slowdown for W * 4 bytes, and the same
// copy between contiguous tensors at the memory curve's rate. The same
// holds for the pack before a reduce_scatter along axis 1.
TEST(SimulationBackend, StridedCopiesAndPacksCostTheirSlowdown) {
  MachineProfile p = profile(Admission::IssueOrder, 1);
  p.memory = MemoryCurve{{1}, {1e-3}};  // 1 MB/s
  p.memory.stridedRunBytes = {64, 4096};
  p.memory.stridedSlowdown = {3, 1.5};
  p.communication.push_back(CommunicationCost{OpKind::ReduceScatter, 2, CommAlgorithm::Flat, 0, 1e6, {}, {}});
  auto seconds = [&](const std::string& body) {
    return simulateText(
               "program c(H = 64, W = 16) {\n  input a : f32[H, W]\n  input b : f32[H, 2 * W]\n" + body + "}\n", 2, p)
        .seconds();
  };
  const double bytes = 2.0 * 64 * 16 * 4;  // read and written
  const double contiguous = seconds("  t = allocate(f32[H, W])\n  copy(a, out=t)\n");
  const double strided = seconds("  bi = shard_by_stream(b, axis=1, index=1, chunks=2)\n  copy(a, out=bi)\n");
  EXPECT_NEAR(contiguous, bytes / 1e6, 1e-3 * bytes / 1e6);
  EXPECT_NEAR(strided - contiguous, 2 * bytes / 1e6, 1e-3 * bytes / 1e6);  // rows of 64 bytes: 3x
  // reduce_scatter of b [64, 32] along axis 1: each rank's half of every row packed into a contiguous send.
  const double packed = seconds(
      "  o = allocate(f32[H, W])\n  h = reduce_scatter(b, out=o, axis=1, op=sum)\n"
      "  wait(h)\n");
  EXPECT_GE(packed, 3 * 2.0 * 64 * 32 * 4 / 1e6 - 1e-3);
}

}  // namespace
}  // namespace hostir
