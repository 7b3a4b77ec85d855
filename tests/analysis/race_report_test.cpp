// What a race report says (both positions, both streams, the tensor, the
// region, the missing edge), that each race is reported once however often
// a loop repeats it, and the command line: `hostir check` and
// `hostir run --race-check`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "analysis/race_check.h"
#include "cli_runner.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Stream 0 writes the left half of y, stream 1 the bottom half: they overlap in [4:8, 0:4].
std::string strided() { return testing::testProgramText("analysis/check_programs/race_strided_overlap.hir"); }

// A worker reads t while the main stream frees it.
std::string dealloc() { return testing::testProgramText("analysis/check_programs/race_deallocate.hir"); }

// Every iteration of a 100-iteration loop races with the previous ones.
std::string repeatedRace() { return testing::testProgramText("analysis/check_programs/race_repeated_in_loop.hir"); }

// Two different races: on y (lines 8 and 11) and on z (lines 9 and 12).
std::string twoRaces() { return testing::testProgramText("analysis/check_programs/race_two_buffers.hir"); }

// Races on every rank but 0.
std::string rankRace() { return testing::testProgramText("analysis/check_programs/race_on_ranks_but_zero.hir"); }

// A missing entry synchronize, racy on every rank.
std::string missingEntry() {
  return testing::testProgramText("analysis/check_programs/race_missing_entry_synchronize.hir");
}

// The same loop with its entry synchronize: race-free.
std::string clean() { return testing::testProgramText("analysis/check_programs/loop_with_entry_synchronize.hir"); }

std::vector<RaceReport> check(const std::string& text, int64_t world, int64_t pool) {
  auto program = parseProgram(text);
  EXPECT_TRUE(program) << renderDiagnostic(program.error(), "test.hir", text);
  if (!program) return {};
  Bindings bindings{{}, world};
  auto error = verifyProgram(*program, bindings);
  EXPECT_FALSE(error) << renderDiagnostic(*error, "test.hir", text);
  if (error) return {};
  return checkRaces(*program, *bindParams(*program, bindings), world, pool);
}

TEST(RaceReport, NamesBothPositionsStreamsTensorRegionAndMissingEdge) {
  auto races = check(strided(), 1, 4);
  ASSERT_EQ(races.size(), 1u);
  const Race& r = races[0].race;
  EXPECT_EQ(r.first.loc, (SourceLoc{12, 3}));
  EXPECT_EQ(r.second.loc, (SourceLoc{16, 7}));
  EXPECT_EQ(r.first.stream, 0);
  EXPECT_EQ(r.second.stream, 1);
  EXPECT_EQ(r.buffer, "y");
  EXPECT_EQ(r.region.toString(), "[4:8, 0:4]");

  std::string text = formatRace(races[0], "race.hir", strided());
  SCOPED_TRACE(text);
  EXPECT_THAT(text, HasSubstr("race.hir:16:7"));
  EXPECT_THAT(text, HasSubstr("race.hir:12:3"));
  EXPECT_THAT(text, HasSubstr("stream(0)"));
  EXPECT_THAT(text, HasSubstr("stream(1)"));
  EXPECT_THAT(text, HasSubstr("'y'[4:8, 0:4]"));
  EXPECT_THAT(text, HasSubstr("missing edge"));
  EXPECT_THAT(text, HasSubstr("allreduce"));
  EXPECT_THAT(text, HasSubstr("copy"));
  // Both source lines are quoted.
  EXPECT_THAT(text, HasSubstr("copy(xc, out=yc)"));
  EXPECT_THAT(text, HasSubstr("h = allreduce(xr, out=yr, op=sum)"));
}

TEST(RaceReport, NamesTheMainStreamAndTheWholeBufferOfADeallocate) {
  auto races = check(dealloc(), 1, 4);
  ASSERT_EQ(races.size(), 1u);
  EXPECT_EQ(races[0].race.first.loc.line, 8u);
  EXPECT_EQ(races[0].race.second.loc.line, 10u);
  EXPECT_FALSE(races[0].race.first.write);
  EXPECT_TRUE(races[0].race.second.write);
  std::string text = formatRace(races[0], "d.hir", dealloc());
  SCOPED_TRACE(text);
  EXPECT_THAT(text, HasSubstr("d.hir:10:3"));
  EXPECT_THAT(text, HasSubstr("d.hir:8:3"));
  EXPECT_THAT(text, HasSubstr("the main stream"));
  EXPECT_THAT(text, HasSubstr("stream(3)"));
  EXPECT_THAT(text, HasSubstr("'t'[0:8, 0:8]"));
  EXPECT_THAT(text, HasSubstr("missing edge"));
}

TEST(RaceReport, ALoopRepeatingARaceReportsItOnce) {
  for (int64_t world : {1, 2}) {
    auto races = check(repeatedRace(), world, 4);
    ASSERT_EQ(races.size(), 1u) << "world " << world;
    EXPECT_EQ(races[0].race.first.loc.line, 8u);
    EXPECT_EQ(races[0].race.second.loc.line, 8u);
    EXPECT_EQ(races[0].race.buffer, "y");
  }
  // With one worker stream every iteration runs in order after the others.
  EXPECT_TRUE(check(repeatedRace(), 1, 1).empty());
}

TEST(RaceReport, DistinctRacesAreEachReported) {
  auto races = check(twoRaces(), 1, 4);
  ASSERT_EQ(races.size(), 2u);
  std::set<std::tuple<uint32_t, uint32_t, std::string>> got;
  for (const RaceReport& r : races) got.emplace(r.race.first.loc.line, r.race.second.loc.line, r.race.buffer);
  EXPECT_EQ(got, (std::set<std::tuple<uint32_t, uint32_t, std::string>>{{8, 12, "y"}, {9, 13, "z"}}));
}

TEST(RaceReport, ARaceOnlyOneRankHasNamesThatRank) {
  auto races = check(rankRace(), 2, 4);
  ASSERT_EQ(races.size(), 1u);
  EXPECT_EQ(races[0].rank, 1);
  EXPECT_THAT(formatRace(races[0], "r.hir", rankRace()), HasSubstr("(rank 1)"));
  EXPECT_TRUE(check(rankRace(), 1, 4).empty());
}

// ---------------------------------------------------------------------------
// The command line.

using RaceCli = testing::CliTest;

TEST_F(RaceCli, CheckExitsOneOnARacyFileWithBothPositions) {
  std::string file = write("racy.hir", strided());
  auto r = run("check " + file);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("race"));
  EXPECT_THAT(r.err, HasSubstr(file + ":16:7"));
  EXPECT_THAT(r.err, HasSubstr(file + ":12:3"));
  EXPECT_THAT(r.err, HasSubstr("1 race found"));
  EXPECT_THAT(r.out, Not(HasSubstr("race-free")));
}

TEST_F(RaceCli, CheckExitsZeroAndSaysRaceFreeOnACleanFile) {
  auto r = run("check " + write("clean.hir", clean()) + " --ranks 2");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("race-free"));
  EXPECT_EQ(r.err, "");
}

TEST_F(RaceCli, CheckHonoursStreamsRanksAndSet) {
  // One pool slot merges the two streams of the loop; 100 iterations on 4 slots race.
  std::string repeated = write("repeated.hir", repeatedRace());
  EXPECT_EQ(run("check " + repeated + " --streams 1").exitCode, 0);
  EXPECT_EQ(run("check " + repeated + " --streams 4").exitCode, 1);
  // --set S=1: a single iteration has nothing to race with.
  auto one = run("check " + repeated + " --set S=1");
  EXPECT_EQ(one.exitCode, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("race-free"));
  // Only rank 1 races.
  std::string rank = write("rank.hir", rankRace());
  EXPECT_EQ(run("check " + rank + " --ranks 1").exitCode, 0);
  auto two = run("check " + rank + " --ranks 2");
  EXPECT_EQ(two.exitCode, 1);
  EXPECT_THAT(two.err, HasSubstr("(rank 1)"));
}

TEST_F(RaceCli, RunWithRaceCheckExitsOneOnARacyProgram) {
  auto r = run("run " + write("racy.hir", missingEntry()) + " --race-check --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("race"));
  EXPECT_THAT(r.err, HasSubstr("missing edge"));
}

TEST_F(RaceCli, RunWithRaceCheckPassesEveryExampleAfterAssignStreams) {
  for (const auto& path : testing::hirFiles(testing::sourceDir() / "examples")) {
    SCOPED_TRACE(path.string());
    auto r = run("run " + path.string() + " --passes assign-streams --race-check --ranks 2");
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("race")));
  }
}

TEST_F(RaceCli, RunWithRaceCheckPassesACleanProgram) {
  auto r = run("run " + write("clean.hir", clean()) + " --race-check --ranks 2");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

// Every rank's races are reported. The racy add is issued only after the
// copy it races with has finished, so the checked run itself does not race
// (ThreadSanitizer builds run this test too).
TEST_F(RaceCli, RunWithRaceCheckReportsARaceOnlyRankOneHas) {
  auto r = run("run " + write("rank.hir", rankRace()) + " --race-check --ranks 2");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("race"));
}

}  // namespace
}  // namespace hostir
