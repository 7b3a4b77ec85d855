// `hostir check` through the real binary: each kind of finding (a
// communication that differs between ranks, an uninitialized read, an
// output not fully written) exits 1 with the positioned report and a
// summary; a program that is fine everywhere exits 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRootIsRank = R"hir(program root_is_rank(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  c = broadcast(y, root=rank)
  wait(c)
}
)hir";

constexpr const char* kTripCount = R"hir(program trip_count(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  for i in range(rank) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
)hir";

constexpr const char* kUninitialized = R"hir(program uninitialized(M = 64, K = 128, N = 32) {
  input  w : f32[N, K]
  output z : f32[M, N]
  y = allocate(f32[M, K])
  z = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  linear(y, w, out=z)
  set_current_stream(main)
  synchronize(stream(0))
}
)hir";

constexpr const char* kMissesLastChunk = R"hir(program misses_last(M = 64, N = 128, S = 4) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S - 1) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
}
)hir";

using CheckCli = testing::CliTest;

TEST_F(CheckCli, ABroadcastRootThatDependsOnTheRankIsAMismatch) {
  std::string file = write("root.hir", kRootIsRank);
  for (int ranks : {2, 3, 4}) {
    auto r = run("check " + file + " --ranks " + std::to_string(ranks));
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_THAT(r.err,
                HasSubstr(file + ":6:7: error: ranks issue different communications: communication #1 is broadcast of "
                                 "64 f32 elements from root 0 on rank 0 but broadcast of 64 f32 elements from root 1 "
                                 "on rank 1\n"));
    EXPECT_THAT(r.err, HasSubstr(file + ":6:7: note: rank 1 issues its communication #1 here\n"));
    EXPECT_THAT(r.err, HasSubstr(file + ": a communication mismatch between ranks found with 4 worker streams\n"));
    EXPECT_THAT(r.out, Not(HasSubstr("ok")));
  }
  // One rank has nobody to disagree with.
  auto one = run("check " + file + " --ranks 1");
  EXPECT_EQ(one.exitCode, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("ok: program 'root_is_rank'"));
}

TEST_F(CheckCli, ALoopOverRankWithACommunicationIsAMismatch) {
  std::string file = write("trip.hir", kTripCount);
  auto r = run("check " + file + " --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":7:9: error: ranks issue different communications: communication #1 is "
                                      "allreduce of 64 f32 elements on rank 1 but rank 0 issues none\n"));
}

TEST_F(CheckCli, AnUninitializedReadIsPositionedWithTheAllocation) {
  std::string file = write("uninit.hir", kUninitialized);
  auto r = run("check " + file);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":9:3: error: linear on stream(0) reads 'y'[0:64, 0:128] before anything "
                                      "writes it (rank 0)\n  linear(y, w, out=z)\n  ^\n"));
  EXPECT_THAT(r.err, HasSubstr(file + ":4:7: note: 'y' is allocated here"));
  EXPECT_THAT(r.err, HasSubstr(file + ": 1 uninitialized read found with 4 worker streams\n"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CheckCli, AnOutputMissingItsLastChunkIsPositionedAtItsDeclaration) {
  std::string file = write("last.hir", kMissesLastChunk);
  auto r = run("check " + file + " --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":3:10: error: output 'y' is not fully written when the program ends: "
                                      "nothing writes 'y'[48:64, 0:128] (rank 0)\n"));
  // --set moves the missing chunk.
  auto eight = run("check " + file + " --set S=8");
  EXPECT_EQ(eight.exitCode, 1);
  EXPECT_THAT(eight.err, HasSubstr("nothing writes 'y'[56:64, 0:128]"));
}

TEST_F(CheckCli, EveryExampleIsOkOnTwoRanks) {
  for (const auto& path : testing::hirFiles(testing::sourceDir() / "examples")) {
    auto r = run("check " + path.string() + " --ranks 2");
    EXPECT_EQ(r.exitCode, 0) << path << "\n" << r.err;
    EXPECT_THAT(r.out, HasSubstr(": ok: program"));
  }
}

}  // namespace
}  // namespace hostir
