// Communicator::split on in-process teams: the groups of a mesh's axes on
// teams of 1 to 8 ranks (and on copy engines over them), two axes'
// collectives in flight at once, and aborts that reach every group. Every team runs under a deadline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "comm/copy_engine_communicator.h"
#include "comm/host_transfer_engine.h"
#include "comm/in_process_communicator.h"
#include "split_checks.h"
#include "team_runner.h"

namespace {

using namespace hostir;
using namespace hostir::commtest;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(CommunicatorSplit, GroupsOfEveryMeshShape) {
  struct Shape {
    int ranks, columns;
  };
  for (Shape shape : {Shape{1, 1}, Shape{2, 1}, Shape{2, 2}, Shape{3, 3}, Shape{4, 2}, Shape{6, 3}, Shape{6, 2},
                      Shape{8, 4}, Shape{8, 2}}) {
    SCOPED_TRACE(::testing::Message() << shape.ranks << " ranks in rows of " << shape.columns);
    InProcessTeam team(shape.ranks);
    std::vector<std::vector<std::string>> problems(static_cast<size_t>(shape.ranks));
    auto thrown = runTeam(team, [&](Communicator& world) {
      problems[static_cast<size_t>(world.rank())] = checkMeshGroups(world, shape.columns);
    });
    expectNoneThrew(thrown);
    reportProblems(problems);
  }
}

// The same groups on copy engines (host engine): each group is a copy-engine
// communicator over its in-process sub-team, with an engine of its own.
TEST(CommunicatorSplit, CopyEngineTeamsSplitIntoTheirMeshGroups) {
  struct Shape {
    int ranks, columns;
  };
  for (Shape shape : {Shape{2, 2}, Shape{4, 2}, Shape{8, 4}, Shape{8, 2}}) {
    SCOPED_TRACE(::testing::Message() << shape.ranks << " ranks in rows of " << shape.columns);
    InProcessTeam team(shape.ranks);
    std::vector<std::vector<std::string>> problems(static_cast<size_t>(shape.ranks));
    auto thrown = runTeam(team, [&](Communicator& host) {
      CopyEngineCommunicator world(host, std::make_unique<HostTransferEngine>());
      problems[static_cast<size_t>(world.rank())] = checkMeshGroups(world, shape.columns);
    });
    expectNoneThrew(thrown);
    reportProblems(problems);
  }
}

// A 2 x 2 mesh: each rank runs its row's and its column's allreduces on two
// threads at once, as two streams do with a tp and a dp collective.
TEST(CommunicatorSplit, TwoAxesCollectivesRunAtOnce) {
  constexpr int kRounds = 200;
  InProcessTeam team(4);
  std::vector<int> wrong(4, 0);
  auto thrown = runTeam(team, [&](Communicator& world) {
    const int rank = world.rank();
    std::unique_ptr<Communicator> row = world.split(rank / 2, rank % 2);
    std::unique_ptr<Communicator> column = world.split(rank % 2, rank / 2);
    int rowWrong = 0, columnWrong = 0;
    auto sums = [&](Communicator& group, int& wrongCount, double expected) {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<double> values(64, rank + round);
        group.allreduce(values.data(), values.data(), values.size(), DType::F64, ReduceOp::Sum);
        for (double v : values) wrongCount += v != expected + 2.0 * round;
      }
    };
    // Row r holds ranks 2r and 2r + 1; column c holds c and c + 2.
    std::thread other([&] { sums(*column, columnWrong, (rank % 2) * 2.0 + 2); });
    sums(*row, rowWrong, (rank / 2) * 4.0 + 1);
    other.join();
    wrong[static_cast<size_t>(rank)] = rowWrong + columnWrong;
  });
  expectNoneThrew(thrown);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << "rank " << r;
}

// Rank 0 fails inside its row's group: its row partner, blocked in that
// group, and the other row, blocked in the whole team's barrier, all learn why.
TEST(CommunicatorSplit, AnAbortInAGroupEndsTheWholeTeam) {
  InProcessTeam team(4);
  auto thrown = runTeam(team, [&](Communicator& world) {
    const int rank = world.rank();
    std::unique_ptr<Communicator> row = world.split(rank / 2, rank % 2);
    std::vector<float> data(16, 1.0f);
    if (rank == 0) {
      std::this_thread::sleep_for(50ms);  // let the others block first
      row->abort("rank 0 ran out of memory");
      return;
    }
    if (rank == 1) row->allreduce(data.data(), data.data(), data.size(), DType::F32, ReduceOp::Sum);
    world.barrier();
  });
  EXPECT_FALSE(thrown[0]);
  for (int r = 1; r < 4; ++r)
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), HasSubstr("rank 0 ran out of memory"))
        << "rank " << r;
}

// The team is aborted from outside while its ranks wait in groups of
// groups (a split of a split) and in the team itself.
TEST(CommunicatorSplit, ATeamAbortReachesGroupsOfGroups) {
  InProcessTeam team(4);
  auto thrown = runTeam(team, [&](Communicator& world) {
    const int rank = world.rank();
    std::unique_ptr<Communicator> half = world.split(rank / 2, rank);
    std::unique_ptr<Communicator> single = half->split(0, 0);  // the whole half again
    std::vector<double> data(8, 1.0);
    if (rank == 3) {  // never joins; something outside the ranks gives up on the team
      std::this_thread::sleep_for(50ms);
      team.abort("shutting down");
      return;
    }
    if (rank == 2)
      single->allreduce(data.data(), data.data(), data.size(), DType::F64, ReduceOp::Sum);
    else
      world.barrier();
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), HasSubstr("shutting down")) << "rank " << r;
  EXPECT_FALSE(thrown[3]);
}

// A group made after the team was aborted is aborted too.
TEST(CommunicatorSplit, ASplitAfterAnAbortFails) {
  InProcessTeam team(2);
  team.abort("gone");
  auto thrown = runTeam(team, [&](Communicator& world) { world.split(0, world.rank()); });
  for (const auto& t : thrown) EXPECT_THAT(commErrorMessage(t), HasSubstr("gone"));
}

}  // namespace
