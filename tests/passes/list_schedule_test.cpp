// List scheduling on small task graphs whose best schedules are known by
// hand: which processor each task gets, when it starts, and the makespan.
#include <gtest/gtest.h>

#include <stdexcept>

#include "passes/list_schedule.h"

namespace hostir {
namespace {

constexpr int kCompute = 0, kComm = 1;

ScheduleTask task(double seconds, int resourceClass, std::vector<size_t> predecessors = {}) {
  return ScheduleTask{seconds, resourceClass, std::move(predecessors)};
}

TEST(ListSchedule, UpwardRanksAreTheLongestPathToAnExit) {
  // a(2) -> b(3) -> d(1); a -> c(5) -> d; with 0.5 per edge.
  ScheduleProblem p;
  p.tasks = {task(2, kCompute), task(3, kCompute, {0}), task(5, kCompute, {0}), task(1, kCompute, {1, 2})};
  p.processors = {kCompute};
  p.crossProcessorSeconds = 0.5;
  std::vector<double> rank = upwardRanks(p);
  EXPECT_DOUBLE_EQ(rank[3], 1);
  EXPECT_DOUBLE_EQ(rank[1], 3 + 0.5 + 1);
  EXPECT_DOUBLE_EQ(rank[2], 5 + 0.5 + 1);
  EXPECT_DOUBLE_EQ(rank[0], 2 + 0.5 + 6.5);
}

// Two chunks, each a computation then its communication. The short
// computation goes first so that its long communication starts early:
// compute 0-1, 1-4; communicate 1-4.5, 4.5-5.5. No schedule beats 5.5 - the
// communications alone take 4.5 after the first computation's 1.
TEST(ListSchedule, TheCommunicationThatTakesLongestStartsFirst) {
  ScheduleProblem p;
  p.tasks = {task(1, kCompute), task(3.5, kComm, {0}), task(3, kCompute), task(1, kComm, {2})};
  p.processors = {kCompute, kComm};
  Schedule s = listSchedule(p, SchedulePriority::UpwardRank);
  EXPECT_EQ(s.order, (std::vector<size_t>{0, 2, 1, 3}));
  EXPECT_DOUBLE_EQ(s.start[1], 1);
  EXPECT_DOUBLE_EQ(s.start[2], 1);
  EXPECT_DOUBLE_EQ(s.start[3], 4.5);
  EXPECT_DOUBLE_EQ(s.makespan, 5.5);
  EXPECT_EQ(s.processor[1], 1u);
  EXPECT_EQ(s.processor[2], 0u);
}

// A fork-join on two processors of one class: the branches run side by
// side, each on the processor where it finishes first.
TEST(ListSchedule, IndependentBranchesSpreadOverProcessorsOfTheirClass) {
  ScheduleProblem p;
  p.tasks = {task(2, kCompute), task(3, kCompute, {0}), task(3, kCompute, {0}), task(1, kCompute, {1, 2})};
  p.processors = {kCompute, kCompute};
  Schedule s = listSchedule(p, SchedulePriority::UpwardRank);
  EXPECT_NE(s.processor[1], s.processor[2]);
  EXPECT_DOUBLE_EQ(s.makespan, 2 + 3 + 1);
  p.processors = {kCompute};  // one processor: everything in a row
  EXPECT_DOUBLE_EQ(listSchedule(p, SchedulePriority::UpwardRank).makespan, 9);
}

// A dependence across processors pays the event's cost; one on the same processor does not.
TEST(ListSchedule, CrossingProcessorsCostsTheEdge) {
  ScheduleProblem p;
  p.tasks = {task(2, kCompute), task(1, kComm, {0}), task(1, kCompute, {0})};
  p.processors = {kCompute, kComm};
  p.crossProcessorSeconds = 0.25;
  Schedule s = listSchedule(p, SchedulePriority::UpwardRank);
  EXPECT_DOUBLE_EQ(s.start[1], 2.25);
  EXPECT_DOUBLE_EQ(s.start[2], 2);
  EXPECT_DOUBLE_EQ(s.makespan, 3.25);
}

// The parallel transformer block: a short attention branch (1 + 1, then a
// 4-long allreduce) and a long MLP branch (4 + 4, then a 4-long allreduce),
// joined by an add (1). Attention first hides its allreduce under the MLP's
// GEMMs: 15, the best possible (the MLP chain and the add take 2 + 8 + 4 + 1).
// HEFT's upward ranks put the longer MLP branch first and reach only 19
// (its allreduce waits behind attention's), which is why the overlap pass
// also tries the program's own order.
TEST(ListSchedule, ProgramOrderBeatsUpwardRanksOnTheParallelBlock) {
  ScheduleProblem p;
  p.tasks = {task(1, kCompute),      task(1, kCompute, {0}), task(4, kComm, {1}),      task(4, kCompute),
             task(4, kCompute, {3}), task(4, kComm, {4}),    task(1, kCompute, {2, 5})};
  p.processors = {kCompute, kComm};
  Schedule programOrder = listSchedule(p, SchedulePriority::ProgramOrder);
  EXPECT_EQ(programOrder.order, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_DOUBLE_EQ(programOrder.makespan, 15);
  Schedule heft = listSchedule(p, SchedulePriority::UpwardRank);
  EXPECT_EQ(heft.order.front(), 3u);
  EXPECT_DOUBLE_EQ(heft.makespan, 19);
}

// Every schedule is a topological order, even with zero-cost tasks whose
// upward ranks tie with their successors'.
TEST(ListSchedule, ZeroCostTasksStillComeAfterTheirPredecessors) {
  ScheduleProblem p;
  p.tasks = {task(0, kCompute), task(0, kComm, {0}), task(0, kCompute, {1}), task(0, kComm, {2})};
  p.processors = {kCompute, kComm};
  for (SchedulePriority priority : {SchedulePriority::UpwardRank, SchedulePriority::ProgramOrder})
    EXPECT_EQ(listSchedule(p, priority).order, (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(ListSchedule, ACycleOrAMissingProcessorClassIsAnError) {
  ScheduleProblem cycle;
  cycle.tasks = {task(1, kCompute, {1}), task(1, kCompute, {0})};
  cycle.processors = {kCompute};
  EXPECT_THROW(listSchedule(cycle, SchedulePriority::UpwardRank), std::logic_error);
  ScheduleProblem noComm;
  noComm.tasks = {task(1, kComm)};
  noComm.processors = {kCompute};
  EXPECT_THROW(listSchedule(noComm, SchedulePriority::ProgramOrder), std::logic_error);
}

}  // namespace
}  // namespace hostir
