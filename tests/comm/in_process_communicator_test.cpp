// InProcessTeam: every collective, op, dtype and layout on teams of 1 to 4
// threads, ordering across many back-to-back calls, abort, and mismatched
// calls. Every team runs under a deadline so a hang fails instead of
// blocking the suite.
#include "comm/in_process_communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <thread>
#include <tuple>
#include <vector>

#include "collective_checks.h"
#include "fmt/format.h"
#include "team_runner.h"

namespace {

using namespace hostir;
using namespace hostir::commtest;
using namespace std::chrono_literals;

// Runs the cases in order on every rank; failures are collected per rank
// and reported from the test thread.
void runCasesOnTeam(int teamSize, const std::vector<CollectiveCase>& cases) {
  InProcessTeam team(teamSize);
  std::vector<std::vector<std::string>> problems(static_cast<size_t>(teamSize));
  auto thrown = runTeam(team, [&](Communicator& comm) {
    for (const CollectiveCase& c : cases)
      if (std::string problem = runAndCheck(comm, c); !problem.empty())
        problems[static_cast<size_t>(comm.rank())].push_back(problem);
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

using MatrixParam = std::tuple<int, Collective, DType>;

class InProcessCollectiveTest : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(InProcessCollectiveTest, MatchesReference) {
  auto [teamSize, collective, dtype] = GetParam();
  runCasesOnTeam(teamSize, casesFor(collective, dtype, teamSize));
}

INSTANTIATE_TEST_SUITE_P(Teams, InProcessCollectiveTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kCollectives),
                                            ::testing::ValuesIn(kDTypes)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return std::string(collectiveName(std::get<1>(info.param))) + "_" +
                                  std::string(dtypeName(std::get<2>(info.param))) + "_team" +
                                  std::to_string(std::get<0>(info.param));
                         });

// all_to_all on the larger teams too (every rank writes into every other
// rank's buffer), and the collectives that move i32 indices.
INSTANTIATE_TEST_SUITE_P(LargerTeams, InProcessCollectiveTest,
                         ::testing::Combine(::testing::Values(5, 6, 7, 8), ::testing::Values(Collective::AllToAll),
                                            ::testing::Values(DType::F32, DType::BF16)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return std::string(collectiveName(std::get<1>(info.param))) + "_" +
                                  std::string(dtypeName(std::get<2>(info.param))) + "_team" +
                                  std::to_string(std::get<0>(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Indices, InProcessCollectiveTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kMovingCollectives),
                                            ::testing::Values(DType::I32)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return std::string(collectiveName(std::get<1>(info.param))) + "_i32_team" +
                                  std::to_string(std::get<0>(info.param));
                         });

// sendrecv on teams of 1 to 5 (odd sizes pair ranks unevenly): every shift,
// count rule and overlap of send and recv.
using SendRecvParam = std::tuple<int, DType>;

class InProcessSendRecvTest : public ::testing::TestWithParam<SendRecvParam> {};

TEST_P(InProcessSendRecvTest, MatchesReference) {
  auto [teamSize, dtype] = GetParam();
  const std::vector<SendRecvCase> cases = sendRecvCases(dtype, teamSize);
  InProcessTeam team(teamSize);
  std::vector<std::vector<std::string>> problems(static_cast<size_t>(teamSize));
  auto thrown = runTeam(team, [&](Communicator& comm) {
    for (const SendRecvCase& c : cases)
      if (std::string problem = runAndCheck(comm, c); !problem.empty())
        problems[static_cast<size_t>(comm.rank())].push_back(problem);
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

INSTANTIATE_TEST_SUITE_P(Teams, InProcessSendRecvTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 5), ::testing::ValuesIn(kAllDTypes)),
                         [](const ::testing::TestParamInfo<SendRecvParam>& info) {
                           return "sendrecv_" + std::string(dtypeName(std::get<1>(info.param))) + "_team" +
                                  std::to_string(std::get<0>(info.param));
                         });

TEST(InProcessTeamTest, SendRecvsAndCollectivesInterleaveByOrder) {
  // sendrecvs between collectives, with shifts and counts changing from call
  // to call, on an odd team.
  constexpr int kRanks = 5;
  InProcessTeam team(kRanks);
  std::vector<std::vector<std::string>> problems(kRanks);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    for (size_t i = 0; i < 200; ++i) {
      std::string problem;
      if (i % 3 == 0) {
        CollectiveCase c;
        c.collective = kCollectives[(i / 3) % std::size(kCollectives)];
        c.dtype = kDTypes[i % std::size(kDTypes)];
        c.count = (i * 37) % 97;
        c.root = static_cast<int>(i % kRanks);
        problem = runAndCheck(comm, c);
      } else {
        SendRecvCase c;
        c.dtype = kDTypes[(i / 2) % std::size(kDTypes)];
        c.count = (i * 53) % 89;
        c.perRankCounts = i % 4 == 1;
        c.shift = static_cast<int>(i % kRanks);
        c.layout = kSendRecvLayouts[(i / 5) % std::size(kSendRecvLayouts)];
        problem = runAndCheck(comm, c);
      }
      if (!problem.empty()) problems[static_cast<size_t>(comm.rank())].push_back(problem);
    }
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

TEST(InProcessTeamTest, SendRecvPairsAnyPermutation) {
  // Not a shift: ranks 0 <-> 3 swap, 1 -> 2 -> 4 -> 1 rotate.
  constexpr int kTo[] = {3, 2, 4, 0, 1};
  constexpr int kFrom[] = {3, 4, 1, 0, 2};
  InProcessTeam team(5);
  std::vector<std::vector<float>> received(5);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    const int r = comm.rank();
    std::vector<float> send(static_cast<size_t>(r) + 2, static_cast<float>(10 * r));
    std::vector<float>& recv = received[static_cast<size_t>(r)];
    recv.assign(static_cast<size_t>(kFrom[r]) + 2, -1.0f);
    comm.sendRecv(send.data(), send.size(), kTo[r], recv.data(), recv.size(), kFrom[r], DType::F32);
  });
  expectNoneThrew(thrown);
  for (int r = 0; r < 5; ++r)
    EXPECT_EQ(received[static_cast<size_t>(r)],
              std::vector<float>(static_cast<size_t>(kFrom[r]) + 2, static_cast<float>(10 * kFrom[r])))
        << "rank " << r;
}

// Every rank of a ring calls sendRecv of `count` f32 elements, except that
// rank `odd` uses the given peers and counts.
struct RingCall {
  int to, from;
  size_t sendCount, recvCount;
};
std::vector<std::exception_ptr> runRingWithOneOdd(int teamSize, int odd, RingCall oddCall) {
  InProcessTeam team(teamSize);
  return runTeam(
      team,
      [&](Communicator& comm) {
        const int r = comm.rank();
        RingCall call{(r + 1) % teamSize, (r + teamSize - 1) % teamSize, 8, 8};
        if (r == odd) call = oddCall;
        std::vector<float> send(call.sendCount, 1.0f), recv(call.recvCount);
        comm.sendRecv(send.data(), call.sendCount, call.to, recv.data(), call.recvCount, call.from, DType::F32);
      },
      30s);
}

TEST(InProcessTeamTest, SendRecvToARankOutsideTheTeamFailsOnEveryRank) {
  auto thrown = runRingWithOneOdd(4, 1, {5, 0, 8, 8});
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t),
                ::testing::HasSubstr("rank 1 called sendrecv to rank 5, but the team has 4 ranks"));
  thrown = runRingWithOneOdd(3, 2, {0, -1, 8, 8});
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t),
                ::testing::HasSubstr("rank 2 called sendrecv from rank -1, but the team has 3 ranks"));
}

TEST(InProcessTeamTest, SendRecvCountsThatDifferFailOnEveryRank) {
  // Rank 2 expects 5 elements from rank 1, which sends 8.
  auto thrown = runRingWithOneOdd(3, 2, {0, 1, 8, 5});
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("sendrecv mismatch: rank 1 sends 8 f32 elements to rank 2, "
                                                          "but rank 2 receives 5 f32 elements from rank 1"));
}

TEST(InProcessTeamTest, SendRecvFromTheWrongRankFailsOnEveryRank) {
  // Rank 0 sends to rank 1, which receives from rank 2 instead.
  auto thrown = runRingWithOneOdd(3, 1, {2, 2, 8, 8});
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t),
                ::testing::HasSubstr("rank 0 sends 8 f32 elements to rank 1, but rank 1 receives from rank 2"));
}

TEST(InProcessTeamTest, SendRecvAgainstAnotherCollectiveFailsOnEveryRank) {
  InProcessTeam team(2);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<float> data(8, 1.0f), recv(8);
    if (comm.rank() == 0)
      comm.sendRecv(data.data(), 8, 1, recv.data(), 8, 1, DType::F32);
    else
      comm.allreduce(data.data(), data.data(), 8, DType::F32, ReduceOp::Sum);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("collective mismatch: rank 0 called sendrecv of 8 f32 "
                                                          "elements to rank 1, receiving 8 from rank 1 but rank 1 "
                                                          "called allreduce of 8 f32 elements"));
}

TEST(InProcessTeamTest, AbortWakesPendingSendRecvs) {
  InProcessTeam team(3);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<double> send(4, 1.0), recv(4);
    if (comm.rank() == 2) {
      std::this_thread::sleep_for(50ms);
      comm.abort("rank 2 gave up");
      return;
    }
    comm.sendRecv(send.data(), 4, (comm.rank() + 1) % 3, recv.data(), 4, (comm.rank() + 2) % 3, DType::F64);
  });
  for (int r = 0; r < 2; ++r)
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), ::testing::HasSubstr("rank 2 gave up"))
        << "rank " << r;
}

TEST(InProcessTeamTest, ManyBackToBackCollectivesMatchByOrder) {
  // Kinds, sizes and dtypes change from call to call, so a call matched with
  // the wrong peer call would be caught as a mismatch or a wrong result.
  std::vector<CollectiveCase> cases;
  for (size_t i = 0; i < 400; ++i) {
    CollectiveCase c;
    c.collective = kCollectives[i % std::size(kCollectives)];
    c.dtype = kDTypes[(i / 4) % std::size(kDTypes)];
    c.op = kReduceOps[(i / 3) % std::size(kReduceOps)];
    c.count = (i * 37) % 97;
    c.layout = i % 5 == 0 ? Layout::InPlace : Layout::OutOfPlace;
    c.root = static_cast<int>(i % 3);
    cases.push_back(c);
  }
  runCasesOnTeam(3, cases);
}

TEST(InProcessTeamTest, BarrierOrdersPlainWrites) {
  constexpr int kRanks = 4;
  InProcessTeam team(kRanks);
  std::vector<int> slots(kRanks, 0);
  std::vector<int> wrong(kRanks, 0);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    for (int round = 1; round <= 100; ++round) {
      slots[static_cast<size_t>(comm.rank())] = round;
      comm.barrier();
      for (int value : slots) wrong[static_cast<size_t>(comm.rank())] += value != round;
      comm.barrier();
    }
  });
  expectNoneThrew(thrown);
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << "rank " << r;
}

TEST(InProcessTeamTest, AbortFromOneRankFailsThePendingCallsOfTheOthers) {
  InProcessTeam team(3);
  std::vector<char> laterCallThrew(3, 0);  // not vector<bool>: its elements share bytes
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<float> data(10, 1.0f);
    if (comm.rank() == 2) {
      std::this_thread::sleep_for(50ms);  // let the others block first
      comm.abort("rank 2 ran out of memory");
    } else {
      try {
        comm.allreduce(data.data(), data.data(), data.size(), DType::F32, ReduceOp::Sum);
      } catch (const CommError&) {
        // Every later call fails too, without waiting for anyone.
        try {
          comm.barrier();
        } catch (const CommError&) {
          laterCallThrew[static_cast<size_t>(comm.rank())] = true;
        }
        throw;
      }
    }
    // The aborting rank's own later calls fail as well.
    comm.broadcast(data.data(), data.size(), DType::F32, 0);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), ::testing::HasSubstr("rank 2 ran out of memory"))
        << "rank " << r;
    if (r != 2) {
      EXPECT_TRUE(laterCallThrew[static_cast<size_t>(r)]) << "rank " << r;
    }
  }
}

TEST(InProcessTeamTest, TeamAbortWakesEveryCollective) {
  InProcessTeam team(4);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<double> send(8, 1.0), recv(32);
    if (comm.rank() < 3) {
      comm.allgather(send.data(), recv.data(), 8, DType::F64);
    } else {  // never joins; something outside the ranks gives up on the team
      std::this_thread::sleep_for(50ms);
      team.abort("shutting down");
    }
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), ::testing::HasSubstr("shutting down"))
        << "rank " << r;
  EXPECT_FALSE(thrown[3]);
}

TEST(InProcessTeamTest, MismatchedCallsFailOnEveryRank) {
  InProcessTeam team(2);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<float> data(8, 1.0f);
    size_t count = comm.rank() == 0 ? 4 : 5;
    comm.allreduce(data.data(), data.data(), count, DType::F32, ReduceOp::Sum);
  });
  for (const auto& t : thrown) EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("mismatch"));
}

TEST(InProcessTeamTest, DifferentCollectivesFailOnEveryRank) {
  InProcessTeam team(3);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<float> data(8, 1.0f);
    if (comm.rank() == 1)
      comm.broadcast(data.data(), 8, DType::F32, 0);
    else
      comm.allreduce(data.data(), data.data(), 8, DType::F32, ReduceOp::Max);
  });
  for (const auto& t : thrown) EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("rank 1 called broadcast"));
}

// all_to_all splits each rank's buffer into one equal part per rank: a
// count the team size does not divide is refused on every rank, before
// anything moves.
TEST(InProcessTeamTest, AllToAllOfUnevenPartsFailsOnEveryRank) {
  for (int teamSize : {2, 3, 5, 8}) {
    InProcessTeam team(teamSize);
    const size_t count = static_cast<size_t>(teamSize) * 4 + 1;
    auto thrown = runTeam(team, [&](Communicator& comm) {
      std::vector<float> send(count, 1.0f), recv(count, -1.0f);
      CollectiveSignature s{CollectiveKind::AllToAll, DType::F32, count, count};
      comm.collective({s, send.data(), recv.data()});
    });
    for (const auto& t : thrown)
      EXPECT_THAT(commErrorMessage(t),
                  ::testing::HasSubstr(fmt::format("all_to_all of {} f32 elements over {} ranks: {} elements do not "
                                                   "split into {} equal parts",
                                                   count, teamSize, count, teamSize)));
  }
}

// A reducing collective refuses i32 (indices only move); the moving ones take it.
TEST(InProcessTeamTest, ReductionsOfIndicesFailOnEveryRank) {
  InProcessTeam team(2);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<int32_t> data(4, 1);
    comm.allreduce(data.data(), data.data(), data.size(), DType::I32, ReduceOp::Sum);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("allreduce cannot reduce i32 elements"));
}

TEST(InProcessTeamTest, AllToAllsOfDifferentCountsFailOnEveryRank) {
  InProcessTeam team(3);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<double> send(12), recv(12);
    comm.allToAll(send.data(), recv.data(), comm.rank() == 2 ? 3 : 4, DType::F64);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("collective mismatch: rank 0 called all_to_all of 12 f64 "
                                                          "elements but rank 2 called all_to_all of 9 f64 elements"));
}

TEST(InProcessTeamTest, BadBroadcastRootFailsOnEveryRank) {
  InProcessTeam team(2);
  auto thrown = runTeam(team, [&](Communicator& comm) {
    std::vector<float> data(8, 1.0f);
    comm.broadcast(data.data(), 8, DType::F32, 2);
  });
  for (const auto& t : thrown) EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("root 2"));
}

TEST(InProcessTeamTest, CommunicatorsKnowTheirPlace) {
  InProcessTeam team(3);
  auto comm = team.communicator(2);
  EXPECT_EQ(comm->rank(), 2);
  EXPECT_EQ(comm->size(), 3);
  EXPECT_EQ(comm->name(), "in-process");
  EXPECT_TRUE(comm->blocking());
  EXPECT_THROW(team.communicator(3), std::invalid_argument);
  EXPECT_THROW(InProcessTeam(0), std::invalid_argument);
}

}  // namespace
