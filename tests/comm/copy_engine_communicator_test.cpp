// CopyEngineCommunicator: every collective, op, dtype and layout, and every
// sendrecv, on teams of 1 to 5 threads, against the same reference checks
// as the in-process and MPI communicators (collective_checks.h). Two
// engines run the same schedule: the host engine (memcpy before each call
// returns, as on the CPU backend) and an asynchronous stand-in with a GPU's
// timing (async_host_engine.h: streams are threads, fences positions,
// random delays), where a missing fence shows as a wrong element or, under
// ThreadSanitizer, as a race.
#include "comm/copy_engine_communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

#include "async_host_engine.h"
#include "collective_checks.h"
#include "comm/host_transfer_engine.h"
#include "team_runner.h"

namespace {

using namespace hostir;
using namespace hostir::commtest;

enum class Engine { Host, Async };

std::unique_ptr<TransferEngine> makeEngine(Engine engine, int rank) {
  if (engine == Engine::Host) return std::make_unique<HostTransferEngine>();
  return std::make_unique<AsyncHostEngine>(/*maxDelayMicros=*/20, /*seed=*/1000 + static_cast<uint64_t>(rank));
}

std::string engineName(Engine engine) { return engine == Engine::Host ? "host" : "async"; }

// Runs body(copy-engine communicator of rank r) on an in-process team.
std::vector<std::exception_ptr> runCopyEngineTeam(int size, Engine engine,
                                                  const std::function<void(CopyEngineCommunicator&)>& body) {
  InProcessTeam team(size);
  return runTeam(team, [&](Communicator& host) {
    CopyEngineCommunicator comm(host, makeEngine(engine, host.rank()));
    body(comm);
  });
}

// Counts small enough for the asynchronous engine's per-task delays.
constexpr size_t kAsyncCounts[] = {0, 1, 7, 1000};

using MatrixParam = std::tuple<Engine, int, Collective, DType>;

class CopyEngineCollectiveTest : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(CopyEngineCollectiveTest, MatchesReference) {
  auto [engine, teamSize, collective, dtype] = GetParam();
  const std::vector<CollectiveCase> cases = engine == Engine::Host
                                                ? casesFor(collective, dtype, teamSize)
                                                : casesFor(collective, dtype, teamSize, kAsyncCounts);
  std::vector<std::vector<std::string>> problems(static_cast<size_t>(teamSize));
  auto thrown = runCopyEngineTeam(teamSize, engine, [&](CopyEngineCommunicator& comm) {
    for (const CollectiveCase& c : cases)
      if (std::string problem = runAndCheck(comm, c); !problem.empty())
        problems[static_cast<size_t>(comm.rank())].push_back(problem);
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

INSTANTIATE_TEST_SUITE_P(Teams, CopyEngineCollectiveTest,
                         ::testing::Combine(::testing::Values(Engine::Host, Engine::Async),
                                            ::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kCollectives),
                                            ::testing::ValuesIn(kDTypes)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return engineName(std::get<0>(info.param)) + "_" +
                                  std::string(collectiveName(std::get<2>(info.param))) + "_" +
                                  std::string(dtypeName(std::get<3>(info.param))) + "_team" +
                                  std::to_string(std::get<1>(info.param));
                         });

using SendRecvParam = std::tuple<Engine, int, DType>;

class CopyEngineSendRecvTest : public ::testing::TestWithParam<SendRecvParam> {};

TEST_P(CopyEngineSendRecvTest, MatchesReference) {
  auto [engine, teamSize, dtype] = GetParam();
  const std::vector<SendRecvCase> cases =
      engine == Engine::Host ? sendRecvCases(dtype, teamSize) : sendRecvCases(dtype, teamSize, kAsyncCounts);
  std::vector<std::vector<std::string>> problems(static_cast<size_t>(teamSize));
  auto thrown = runCopyEngineTeam(teamSize, engine, [&](CopyEngineCommunicator& comm) {
    for (const SendRecvCase& c : cases)
      if (std::string problem = runAndCheck(comm, c); !problem.empty())
        problems[static_cast<size_t>(comm.rank())].push_back(problem);
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

INSTANTIATE_TEST_SUITE_P(Teams, CopyEngineSendRecvTest,
                         ::testing::Combine(::testing::Values(Engine::Host, Engine::Async),
                                            ::testing::Values(1, 2, 3, 4, 5), ::testing::ValuesIn(kDTypes)),
                         [](const ::testing::TestParamInfo<SendRecvParam>& info) {
                           return engineName(std::get<0>(info.param)) + "_sendrecv_" +
                                  std::string(dtypeName(std::get<2>(info.param))) + "_team" +
                                  std::to_string(std::get<1>(info.param));
                         });

// The pattern of a GPU program: collectives issued back to back on one
// stream with local work between them that overwrites the buffers, and the
// host waiting only at the end. Every rank's buffer starts at 1; each round
// allreduces it (sum over 3 ranks: x3), halves it on the stream (local
// work that writes what peers read in the last collective), allgathers the
// first element of every rank and sendrecvs along the ring. A missing
// fence lets a peer read a value of the wrong round.
TEST(CopyEngineCommunicatorTest, StreamOrderedRoundsNeedNoHostWaits) {
  constexpr int kRanks = 3;
  constexpr int kRounds = 13;
  constexpr size_t kCount = 96;
  std::vector<std::vector<float>> results(kRanks), gathered(kRanks), passed(kRanks);
  auto thrown = runCopyEngineTeam(kRanks, Engine::Async, [&](CopyEngineCommunicator& comm) {
    auto engine = std::make_unique<AsyncHostEngine>(30, 77 + static_cast<uint64_t>(comm.rank()));
    void* stream = engine->defaultStream();
    const int r = comm.rank();
    std::vector<float> x(kCount, 1.0f), all(kRanks * kRounds), ring(kCount), ringIn(kCount, static_cast<float>(r));
    for (int round = 0; round < kRounds; ++round) {
      comm.allreduce(x.data(), x.data(), kCount, DType::F32, ReduceOp::Sum, stream);
      engine->scale(x.data(), kCount, DType::F32, 0.5, stream);
      comm.allgather(x.data(), all.data() + round * kRanks, 1, DType::F32, stream);
      comm.sendRecv(ringIn.data(), kCount, (r + 1) % kRanks, ring.data(), kCount, (r + kRanks - 1) % kRanks, DType::F32,
                    stream);
      engine->copy(ringIn.data(), 0, ring.data(), 0, kCount * sizeof(float), stream);
    }
    engine->synchronize(stream);
    results[static_cast<size_t>(r)] = x;
    gathered[static_cast<size_t>(r)] = all;
    passed[static_cast<size_t>(r)] = ringIn;
  });
  expectNoneThrew(thrown);
  for (int r = 0; r < kRanks; ++r) {
    // x = 1.5^kRounds on every rank, and the gathered values each round's.
    EXPECT_THAT(results[static_cast<size_t>(r)], ::testing::Each(std::pow(1.5f, static_cast<float>(kRounds))));
    for (int round = 0; round < kRounds; ++round)
      for (int q = 0; q < kRanks; ++q)
        EXPECT_EQ(gathered[static_cast<size_t>(r)][static_cast<size_t>(round * kRanks + q)],
                  std::pow(1.5f, static_cast<float>(round + 1)))
            << "rank " << r << " round " << round;
    // After kRounds steps along the ring, each rank holds the value of the rank kRounds behind it.
    EXPECT_THAT(passed[static_cast<size_t>(r)],
                ::testing::Each(static_cast<float>((r - kRounds % kRanks + kRanks) % kRanks)));
  }
}

TEST(CopyEngineCommunicatorTest, MismatchedCallsFailOnEveryRankWithTheInProcessWording) {
  auto thrown = runCopyEngineTeam(3, Engine::Async, [](CopyEngineCommunicator& comm) {
    std::vector<float> buffer(8, 1.0f);
    if (comm.rank() == 1)
      comm.broadcast(buffer.data(), buffer.size(), DType::F32, 0);
    else
      comm.allreduce(buffer.data(), buffer.data(), buffer.size(), DType::F32, ReduceOp::Sum);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("rank 0 called allreduce(count=8, f32, sum) but rank 1 "
                                                          "called broadcast(count=8, f32, root=0)"));
}

TEST(CopyEngineCommunicatorTest, SendRecvPairsThatDoNotMatchFailOnEveryRank) {
  auto thrown = runCopyEngineTeam(3, Engine::Host, [](CopyEngineCommunicator& comm) {
    std::vector<float> send(4), recv(4);
    const int r = comm.rank();
    comm.sendRecv(send.data(), send.size(), (r + 1) % 3, recv.data(), recv.size(), r == 1 ? 2 : (r + 2) % 3,
                  DType::F32);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("rank 0 sends to rank 1, but rank 1 receives from rank 2"));
}

TEST(CopyEngineCommunicatorTest, AbortFromOneRankFailsThePendingCallsOfTheOthers) {
  auto thrown = runCopyEngineTeam(4, Engine::Async, [](CopyEngineCommunicator& comm) {
    std::vector<double> buffer(16, 1.0);
    comm.allreduce(buffer.data(), buffer.data(), buffer.size(), DType::F64, ReduceOp::Sum);
    if (comm.rank() == 2) {
      comm.abort("rank 2 ran out of memory");
      return;
    }
    comm.allreduce(buffer.data(), buffer.data(), buffer.size(), DType::F64, ReduceOp::Sum);
  });
  EXPECT_EQ(thrown[2], nullptr);
  for (int r : {0, 1, 3})
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), ::testing::HasSubstr("rank 2 ran out of memory"))
        << "rank " << r;
}

TEST(CopyEngineCommunicatorTest, NamesItselfAndItsBlocking) {
  auto thrown = runCopyEngineTeam(2, Engine::Host, [](CopyEngineCommunicator& comm) {
    EXPECT_EQ(comm.name(), "copy-engine");
    EXPECT_TRUE(comm.blocking());
    EXPECT_EQ(comm.devices(), (std::vector<int>{0, 0}));
  });
  expectNoneThrew(thrown);
  thrown = runCopyEngineTeam(2, Engine::Async, [](CopyEngineCommunicator& comm) { EXPECT_FALSE(comm.blocking()); });
  expectNoneThrew(thrown);
}

}  // namespace
