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

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
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

// all_to_all's pulls from every peer on the larger teams too, and the
// collectives that move i32 indices.
INSTANTIATE_TEST_SUITE_P(LargerTeams, CopyEngineCollectiveTest,
                         ::testing::Combine(::testing::Values(Engine::Host, Engine::Async),
                                            ::testing::Values(5, 6, 7, 8), ::testing::Values(Collective::AllToAll),
                                            ::testing::Values(DType::F32, DType::F16)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return engineName(std::get<0>(info.param)) + "_" +
                                  std::string(collectiveName(std::get<2>(info.param))) + "_" +
                                  std::string(dtypeName(std::get<3>(info.param))) + "_team" +
                                  std::to_string(std::get<1>(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Indices, CopyEngineCollectiveTest,
                         ::testing::Combine(::testing::Values(Engine::Host, Engine::Async),
                                            ::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kMovingCollectives),
                                            ::testing::Values(DType::I32)),
                         [](const ::testing::TestParamInfo<MatrixParam>& info) {
                           return engineName(std::get<0>(info.param)) + "_" +
                                  std::string(collectiveName(std::get<2>(info.param))) + "_i32_team" +
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
    EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("collective mismatch: rank 0 called allreduce of 8 f32 "
                                                          "elements but rank 1 called broadcast of 8 f32 elements "
                                                          "from root 0"));
}

TEST(CopyEngineCommunicatorTest, ABarrierFacingACollectiveIsAMismatchNotAHang) {
  auto thrown = runCopyEngineTeam(2, Engine::Host, [](CopyEngineCommunicator& comm) {
    std::vector<float> buffer(4, 1.0f);
    if (comm.rank() == 0)
      comm.barrier();
    else
      comm.allgather(buffer.data(), buffer.data(), 2, DType::F32);
  });
  for (const auto& t : thrown) EXPECT_THAT(commErrorMessage(t), ::testing::HasSubstr("but rank 1 called allgather"));
}

// Every call is one host exchange on the board, each rank's posting in one of
// two slots. Calls of differing kinds and counts (some with no transfer
// phase, which do not wait for the peers' phases) follow each other at once
// while the ranks dawdle at random: a posting overwritten before a peer read
// it would show as a mismatch, or as a wrong sum.
TEST(CopyEngineCommunicatorTest, BackToBackCallsReadEachOthersPostingsOfTheSameCall) {
  constexpr int kRanks = 3;
  constexpr int kCalls = 300;
  auto thrown = runCopyEngineTeam(kRanks, Engine::Host, [](CopyEngineCommunicator& comm) {
    std::mt19937 random(static_cast<unsigned>(comm.rank()) + 7);
    std::uniform_int_distribution<int> dawdle(0, 30);
    for (int call = 0; call < kCalls; ++call) {
      std::this_thread::sleep_for(std::chrono::microseconds(dawdle(random)));
      const size_t count = static_cast<size_t>(call % 3);
      std::vector<float> buffer(count * kRanks, static_cast<float>(comm.rank() + call));
      switch (call % 3) {
        case 0: comm.barrier(); break;
        case 1: {
          comm.allreduce(buffer.data(), buffer.data(), count, DType::F32, ReduceOp::Sum);
          const float expected = static_cast<float>(kRanks * call + (kRanks * (kRanks - 1)) / 2);
          if (buffer[0] != expected) throw std::runtime_error(fmt::format("call {}: sum {}", call, buffer[0]));
          break;
        }
        default:
          comm.allgather(buffer.data() + comm.rank() * count, buffer.data(), count, DType::F32);
          for (size_t i = 0; i < buffer.size(); ++i)
            if (buffer[i] != static_cast<float>(static_cast<int>(i / count) + call))
              throw std::runtime_error(fmt::format("call {}: element {} is {}", call, i, buffer[i]));
      }
    }
  });
  for (const auto& t : thrown) EXPECT_EQ(t, nullptr) << commErrorMessage(t);
}

TEST(CopyEngineCommunicatorTest, SendRecvPairsThatDoNotMatchFailOnEveryRank) {
  auto thrown = runCopyEngineTeam(3, Engine::Host, [](CopyEngineCommunicator& comm) {
    std::vector<float> send(4), recv(4);
    const int r = comm.rank();
    comm.sendRecv(send.data(), send.size(), (r + 1) % 3, recv.data(), recv.size(), r == 1 ? 2 : (r + 2) % 3,
                  DType::F32);
  });
  for (const auto& t : thrown)
    EXPECT_THAT(commErrorMessage(t),
                ::testing::HasSubstr("rank 0 sends 4 f32 elements to rank 1, but rank 1 receives from rank 2"));
}

// The schedule's pulls read only a peer's send and write only the rank's
// own recv, so all_to_all needs one phase; a send that overlaps recv (in
// place included) is staged, and uneven parts are refused on every rank.
TEST(CopyEngineCommunicatorTest, AllToAllOfUnevenPartsFailsOnEveryRank) {
  for (int teamSize : {1, 3, 4}) {
    auto thrown = runCopyEngineTeam(teamSize, Engine::Async, [&](CopyEngineCommunicator& comm) {
      const size_t count = static_cast<size_t>(teamSize) * 2 + (teamSize > 1 ? 1 : 0);
      std::vector<float> send(count), recv(count);
      comm.collective({{CollectiveKind::AllToAll, DType::F32, count, count}, send.data(), recv.data()});
    });
    if (teamSize == 1) {
      expectNoneThrew(thrown);  // one part: every count splits
      continue;
    }
    for (const auto& t : thrown)
      EXPECT_THAT(commErrorMessage(t),
                  ::testing::HasSubstr("do not split into " + std::to_string(teamSize) + " equal parts"));
  }
}

// all_to_all as MoE dispatch and combine use it: rounds back to back on
// one stream, with local work between them that overwrites what peers read
// in the last call, and the host waiting only at the end. Rank r's token i
// is 1000 r + i + round; dispatch sends part q to rank q, the "expert"
// doubles what it received, and combine sends it back, halved on arrival.
// A missing fence shows as a token of another round or rank.
TEST(CopyEngineCommunicatorTest, StreamOrderedAllToAllRoundTrips) {
  constexpr int kRanks = 4;
  constexpr int kRounds = 9;
  constexpr size_t kPart = 33, kTokens = kPart * kRanks;
  std::vector<std::vector<float>> combined(kRanks), dispatched(kRanks);
  auto thrown = runCopyEngineTeam(kRanks, Engine::Async, [&](CopyEngineCommunicator& comm) {
    auto engine = std::make_unique<AsyncHostEngine>(30, 91 + static_cast<uint64_t>(comm.rank()));
    void* stream = engine->defaultStream();
    const int r = comm.rank();
    std::vector<float> x(kTokens), received(kTokens), back(kTokens), one(kTokens, 1.0f);
    for (size_t i = 0; i < kTokens; ++i) x[i] = static_cast<float>(1000 * r + static_cast<int>(i));
    for (int round = 0; round < kRounds; ++round) {
      comm.allToAll(x.data(), received.data(), kPart, DType::F32, stream);
      engine->scale(received.data(), kTokens, DType::F32, 2.0, stream);
      comm.allToAll(received.data(), back.data(), kPart, DType::F32, stream);
      engine->scale(back.data(), kTokens, DType::F32, 0.5, stream);
      // The next round's tokens: these plus one, written where peers read this round's.
      engine->copy(x.data(), 0, back.data(), 0, kTokens * sizeof(float), stream);
      engine->reduce(x.data(), one.data(), kTokens, DType::F32, ReduceOp::Sum, stream);
    }
    engine->synchronize(stream);
    combined[static_cast<size_t>(r)] = back;
    dispatched[static_cast<size_t>(r)] = received;
  });
  expectNoneThrew(thrown);
  const int last = kRounds - 1;
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < kTokens; ++i) {
      // Back home: the rank's own tokens of the last round.
      EXPECT_EQ(combined[static_cast<size_t>(r)][i], static_cast<float>(1000 * r + static_cast<int>(i) + last))
          << "rank " << r << " token " << i;
      // At the expert: part q came from rank q, its tokens r·kPart + k, doubled.
      const int q = static_cast<int>(i / kPart), k = static_cast<int>(i % kPart);
      EXPECT_EQ(dispatched[static_cast<size_t>(r)][i],
                2.0f * static_cast<float>(1000 * q + r * static_cast<int>(kPart) + k + last))
          << "rank " << r << " received token " << i;
    }
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

// An engine that runs another's work but lets a test act on the host just
// before each record of a fence (the first of a call is its ready fence,
// then one per phase): to delay a rank's issue of its phases, or fail it.
class HookedEngine final : public TransferEngine {
 public:
  HookedEngine(std::unique_ptr<TransferEngine> inner, std::function<void(uint64_t records)> beforeRecord)
      : inner_(std::move(inner)), beforeRecord_(std::move(beforeRecord)) {}
  bool asynchronous() const override { return inner_->asynchronous(); }
  int device() const override { return inner_->device(); }
  void* defaultStream() override { return inner_->defaultStream(); }
  void synchronize(void* stream) override { inner_->synchronize(stream); }
  void* allocate(size_t bytes, void* stream) override { return inner_->allocate(bytes, stream); }
  void release(void* data, void* stream) noexcept override { inner_->release(data, stream); }
  void copy(void* dst, int dstDevice, const void* src, int srcDevice, size_t bytes, void* stream) override {
    inner_->copy(dst, dstDevice, src, srcDevice, bytes, stream);
  }
  void reduce(void* acc, const void* in, size_t count, DType dtype, ReduceOp op, void* stream) override {
    inner_->reduce(acc, in, count, dtype, op, stream);
  }
  void scale(void* data, size_t count, DType dtype, double factor, void* stream) override {
    inner_->scale(data, count, dtype, factor, stream);
  }
  Fence newFence() override { return inner_->newFence(); }
  void record(Fence fence, void* stream) override {
    beforeRecord_(records_++);
    inner_->record(fence, stream);
  }
  void wait(void* stream, Fence fence) override { inner_->wait(stream, fence); }

 private:
  std::unique_ptr<TransferEngine> inner_;
  std::function<void(uint64_t)> beforeRecord_;
  uint64_t records_ = 0;
};

// Phase 2 of an allreduce pulls the parts that the peers reduced in phase
// 1. Rank 1's stream is slow (up to 400 us before each task) and its host
// dawdles before recording some of its fences, while the others run at
// once: a rank that pulled before rank 1's phase 1 had completed would get
// the sentinel its recv starts with, and one whose stream waited for a
// fence rank 1 had not recorded yet fails in the asynchronous engine.
TEST(CopyEngineCommunicatorTest, APhaseReadsOnlyWhatASlowPeerFinishedWritingInTheLastOne) {
  constexpr int kRanks = 3;
  constexpr int kRounds = 40;
  constexpr size_t kCount = 300;
  InProcessTeam team(kRanks);
  std::vector<std::vector<std::string>> problems(kRanks);
  auto thrown = runTeam(team, [&](Communicator& host) {
    const int r = host.rank();
    auto inner = std::make_unique<AsyncHostEngine>(r == 1 ? 400 : 0, 5 + static_cast<uint64_t>(r));
    auto engine = std::make_unique<HookedEngine>(std::move(inner), [r](uint64_t records) {
      if (r == 1 && records % 3 != 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    });
    CopyEngineCommunicator comm(host, std::move(engine));
    std::vector<float> send(kCount), recv(kCount);
    for (int round = 0; round < kRounds; ++round) {
      for (size_t i = 0; i < kCount; ++i) send[i] = static_cast<float>((r + 1) * (round + 1) + static_cast<int>(i % 7));
      std::fill(recv.begin(), recv.end(), -1.0f);
      comm.allreduce(send.data(), recv.data(), kCount, DType::F32, ReduceOp::Sum);  // blocks: the host checks
      for (size_t i = 0; i < kCount; ++i) {
        // sum over ranks q of (q + 1) * (round + 1) + i % 7
        const float expected = static_cast<float>(6 * (round + 1) + kRanks * static_cast<int>(i % 7));
        if (recv[i] != expected) {
          problems[static_cast<size_t>(r)].push_back(
              fmt::format("round {} element {}: {} instead of {}", round, i, recv[i], expected));
          break;
        }
      }
    }
  });
  expectNoneThrew(thrown);
  reportProblems(problems);
}

// A rank waits on the host for a slow peer to record its phase's fence;
// the peer fails instead and aborts the team: the wait ends with the
// peer's reason at once, not when some deadline expires.
TEST(CopyEngineCommunicatorTest, AbortOfAPeerEndsTheWaitForItsPhasePromptly) {
  constexpr int kRanks = 3;
  InProcessTeam team(kRanks);
  std::atomic<int64_t> abortedAt{0};
  std::vector<int64_t> endedAt(kRanks, 0);
  auto now = [] { return std::chrono::steady_clock::now().time_since_epoch().count(); };
  auto thrown = runTeam(team, [&](Communicator& host) {
    const int r = host.rank();
    auto engine = std::make_unique<HookedEngine>(std::make_unique<HostTransferEngine>(), [&, r](uint64_t records) {
      // Records 0 to 2: the first allreduce's ready fence and its two
      // phases'; 3 to 5 the second's.
      if (r == 1 && records == 4) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the peers are asleep by now
        abortedAt = now();
        team.abort("rank 1 failed in its phase");
        throw std::runtime_error("rank 1 failed");
      }
    });
    CopyEngineCommunicator comm(host, std::move(engine));
    std::vector<double> buffer(16, 1.0);
    comm.allreduce(buffer.data(), buffer.data(), buffer.size(), DType::F64, ReduceOp::Sum);
    try {
      comm.allreduce(buffer.data(), buffer.data(), buffer.size(), DType::F64, ReduceOp::Sum);
    } catch (...) {
      endedAt[static_cast<size_t>(r)] = now();
      throw;
    }
  });
  EXPECT_NE(thrown[1], nullptr);
  for (int r : {0, 2}) {
    EXPECT_THAT(commErrorMessage(thrown[static_cast<size_t>(r)]), ::testing::HasSubstr("rank 1 failed in its phase"))
        << "rank " << r;
    EXPECT_LT(std::chrono::steady_clock::duration(endedAt[static_cast<size_t>(r)] - abortedAt.load()),
              std::chrono::milliseconds(500))
        << "rank " << r << " noticed the abort late";
  }
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
