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

std::string rootIsRank() { return testing::testProgramText("analysis/check_programs/broadcast_root_is_rank.hir"); }

std::string tripCount() { return testing::testProgramText("analysis/check_programs/loop_trip_count_is_rank.hir"); }

std::string uninitialized() {
  return testing::testProgramText("analysis/check_programs/uninitialized_linear_input.hir");
}

std::string missesLastChunk() {
  return testing::testProgramText("analysis/check_programs/output_misses_last_chunk.hir");
}

// A constant peer on every rank: the program never names `rank`, yet it
// pairs on no team but one.
std::string constantPeer() { return testing::testProgramText("analysis/check_programs/sendrecv_constant_peer.hir"); }

std::string ring() { return testing::testProgramText("analysis/check_programs/sendrecv_ring.hir"); }

using CheckCli = testing::CliTest;

TEST_F(CheckCli, ABroadcastRootThatDependsOnTheRankIsAMismatch) {
  std::string file = write("root.hir", rootIsRank());
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
  std::string file = write("trip.hir", tripCount());
  auto r = run("check " + file + " --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":7:9: error: ranks issue different communications: communication #1 is "
                                      "allreduce of 64 f32 elements on rank 1 but rank 0 issues none\n"));
}

TEST_F(CheckCli, AnUninitializedReadIsPositionedWithTheAllocation) {
  std::string file = write("uninit.hir", uninitialized());
  auto r = run("check " + file);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":9:3: error: linear on stream(0) reads 'y'[0:64, 0:128] before anything "
                                      "writes it (rank 0)\n  linear(y, w, out=z)\n  ^\n"));
  EXPECT_THAT(r.err, HasSubstr(file + ":4:7: note: 'y' is allocated here"));
  EXPECT_THAT(r.err, HasSubstr(file + ": 1 uninitialized read found with 4 worker streams\n"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CheckCli, AnOutputMissingItsLastChunkIsPositionedAtItsDeclaration) {
  std::string file = write("last.hir", missesLastChunk());
  auto r = run("check " + file + " --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":3:10: error: output 'y' is not fully written when the program ends: "
                                      "nothing writes 'y'[48:64, 0:128] (rank 0)\n"));
  // --set moves the missing chunk.
  auto eight = run("check " + file + " --set S=8");
  EXPECT_EQ(eight.exitCode, 1);
  EXPECT_THAT(eight.err, HasSubstr("nothing writes 'y'[56:64, 0:128]"));
}

TEST_F(CheckCli, ASendRecvThatDoesNotPairIsAMismatch) {
  std::string file = write("peer.hir", constantPeer());
  for (int ranks : {2, 3}) {
    auto r = run("check " + file + " --ranks " + std::to_string(ranks));
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(file + ":5:7: error: ranks' sendrecv pairs do not match: communication #1 sends 64 "
                                        "f32 elements from rank 1 to rank 0, but rank 0's communication #1 receives "
                                        "from rank 0\n"));
    EXPECT_THAT(r.err, HasSubstr(file + ":5:7: note: rank 0 issues its communication #1 here\n"));
    EXPECT_THAT(r.err, HasSubstr(file + ": a communication mismatch between ranks found with 4 worker streams\n"));
    EXPECT_EQ(r.out, "");

    // `run` refuses it with the same report, and under --unchecked the
    // exchange of signatures stops it at the statement instead of a hang.
    auto refused = run("run " + file + " --ranks " + std::to_string(ranks));
    EXPECT_EQ(refused.exitCode, 1) << refused.err;
    EXPECT_THAT(refused.err, HasSubstr("ranks' sendrecv pairs do not match"));
    EXPECT_THAT(refused.err, HasSubstr("`hostir run` refuses a program that `hostir check` rejects"));
    auto unchecked = run("run " + file + " --unchecked --ranks " + std::to_string(ranks));
    EXPECT_EQ(unchecked.exitCode, 1) << unchecked.err;
    EXPECT_FALSE(unchecked.signaled);
    EXPECT_THAT(unchecked.err, HasSubstr(file + ":5:7: error: communication #1 does not pair across ranks: rank 1 "
                                                "sends 64 f32 elements to rank 0 at 5:7, but rank 0 receives from "
                                                "rank 0 at 5:7"));
  }
  auto one = run("check " + file + " --ranks 1");
  EXPECT_EQ(one.exitCode, 0) << one.err;
}

// Under --unchecked the signature exchange compares what each pair moves.
TEST_F(CheckCli, AnUncheckedSendRecvOfTheWrongSizeStopsAtTheStatement) {
  std::string file = write("sizes.hir", testing::testProgramText("analysis/check_programs/sendrecv_wrong_size.hir"));
  auto checked = run("check " + file + " --ranks 2");
  EXPECT_EQ(checked.exitCode, 1);
  EXPECT_THAT(checked.err, HasSubstr(file + ":6:7: error: ranks' sendrecv pairs do not match: communication #1 sends "
                                            "65 f32 elements from rank 1 to rank 0, but rank 0 receives 64 f32 "
                                            "elements from rank 1\n"));
  auto r = run("run " + file + " --unchecked --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_FALSE(r.signaled);
  EXPECT_THAT(r.err, HasSubstr(file + ":6:7: error: communication #1 does not pair across ranks: rank 1 sends 65 f32 "
                                      "elements to rank 0 at 6:7, but rank 0 receives 64 f32 elements from rank 1 "
                                      "at 6:7"));
}

TEST_F(CheckCli, ARingOfSendRecvsIsOk) {
  std::string file = write("ring.hir", ring());
  for (int ranks : {1, 2, 3, 5}) {
    auto r = run("check " + file + " --ranks " + std::to_string(ranks));
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(": ok: program 'ring'"));
  }
}

// Iteration i waits h[i + 2], which the iteration after it issues: check
// and run (which verifies first, --unchecked too) stop at the wait.
std::string waitsAhead() { return testing::testProgramText("analysis/check_programs/handle_waited_ahead.hir"); }

TEST_F(CheckCli, AnArrayElementWaitedBeforeItIsIssuedIsPositioned) {
  std::string file = write("ahead.hir", waitsAhead());
  for (std::string command : {"check ", "run ", "run --unchecked "}) {
    auto r = run(command + file + " --ranks 2");
    EXPECT_EQ(r.exitCode, 1) << command << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(file + ":7:10: error: 'wait' waits on 'h[2]', which rank 0 has not issued yet\n"))
        << command;
  }
  // Without iterations nothing waits early.
  auto none = run("check " + file + " --set S=0");
  EXPECT_EQ(none.exitCode, 0) << none.err;
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
