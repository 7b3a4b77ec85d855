// The command line keeps programs race-free through the passes: `hostir opt`
// and `hostir run --passes` leave loops whose iterations depend on each other
// as they are (so `run --check` passes on them every time, whatever the
// timing), say why under `--remarks`, rewrite loops with any start, and
// refuse a pass that makes the program racy, naming it and both positions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using IndependenceCli = testing::CliTest;

int countLines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

// Accumulating, reading the previous chunk, sharing a scratch buffer and
// updating the whole buffer in place: run on worker streams these loops
// race and the check fails; left as they are they pass every time, however
// the injected delays order the streams.
TEST_F(IndependenceCli, RunCheckPassesOnLoopsWhoseIterationsDependOnEachOtherEveryTime) {
  const std::string file = golden("dependent_loops.hir");
  for (int attempt = 0; attempt < 20; ++attempt) {
    SCOPED_TRACE(attempt);
    auto r = run(
        fmt::format("run {} --passes assign-streams --check --ranks 2 --inject-delays 200 --seed {}", file, attempt));
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("check: ok"));
  }
}

TEST_F(IndependenceCli, RunCheckPassesOnLoopsWithNonZeroStarts) {
  for (const char* name : {"range_start.hir", "range_negative.hir", "range_expressions.hir"}) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      SCOPED_TRACE(fmt::format("{}, attempt {}", name, attempt));
      auto r = run(fmt::format("run {} --passes assign-streams --check --ranks 2 --inject-delays 200 --seed {}",
                               golden(name), attempt));
      ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
      EXPECT_THAT(r.out, HasSubstr("check: ok"));
    }
  }
  // Other bindings of the expression bounds, before and after the passes.
  auto r = run(fmt::format("run {} --passes assign-streams --check --ranks 2 --set A=0 --set S=2 --inject-delays 200",
                           golden("range_expressions.hir")));
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST_F(IndependenceCli, OptRemarksSayWhyEachLoopIsLeftAsItIs) {
  const std::string file = golden("dependent_loops.hir");
  auto r = run("opt " + file + " --passes assign-streams --remarks");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, testing::readFile(golden("dependent_loops.assign-streams.hir")));
  EXPECT_EQ(countLines(r.err, ": remark: assign-streams: "), 4) << r.err;
  EXPECT_EQ(countLines(r.err, ": remark: assign-streams: loop left as it is: its iterations are not independent"), 4)
      << r.err;
  for (const char* loop : {":12:3: remark:", ":22:3: remark:", ":32:3: remark:", ":43:3: remark:"})
    EXPECT_THAT(r.err, HasSubstr(file + loop));
  EXPECT_THAT(r.err, HasSubstr("race on 'acc'"));
  EXPECT_THAT(r.err, HasSubstr("race on 'y'"));
  EXPECT_THAT(r.err, HasSubstr("race on 'scratch'"));
  EXPECT_THAT(r.err, HasSubstr("race on 'w'"));
  // Both statements of a race, as notes with their lines.
  EXPECT_THAT(r.err, HasSubstr(file + ":35:5: note: the racing access: copy on stream(1) writes 'scratch'\n"
                                      "    copy(xi, out=scratch)\n"));
  EXPECT_THAT(r.err, HasSubstr(file + ":36:9: note: the other access: allreduce on stream(0) writes 'scratch'\n"));

  auto quiet = run("opt " + file + " --passes assign-streams");
  EXPECT_EQ(quiet.exitCode, 0);
  EXPECT_EQ(quiet.err, "");
}

TEST_F(IndependenceCli, RemarksNameTheRewrittenLoopsAndTheirStreams) {
  auto r = run("opt " + golden("range_negative.hir") + " --passes assign-streams --remarks");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, testing::readFile(golden("range_negative.assign-streams.hir")));
  EXPECT_THAT(r.err, HasSubstr(golden("range_negative.hir") +
                               ":8:3: remark: assign-streams: iteration i runs on stream(i + 1), joined after the "
                               "loop"));
  auto untouched = run("opt " + golden("untouched_loops.hir") + " --passes assign-streams --remarks");
  ASSERT_EQ(untouched.exitCode, 0) << untouched.err;
  EXPECT_THAT(untouched.err, HasSubstr(":8:3: remark: assign-streams: loop left as it is: it issues no computation"));
  EXPECT_THAT(untouched.err,
              HasSubstr(":13:3: remark: assign-streams: loop left as it is: it chooses its own streams"));
}

TEST_F(IndependenceCli, RunPrintsTheRemarksOnce) {
  auto r = run("run " + golden("dependent_loops.hir") + " --passes assign-streams --remarks --ranks 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(countLines(r.err, ": remark: assign-streams: "), 4) << r.err;
  auto quiet = run("run " + golden("dependent_loops.hir") + " --passes assign-streams --ranks 2");
  EXPECT_EQ(quiet.exitCode, 0);
  EXPECT_THAT(quiet.err, Not(HasSubstr("remark")));
}

// range(-1, 2) once made the pass emit stream(-1), an error with no position.
TEST_F(IndependenceCli, ANegativeStartRunsOnStreamsFromZero) {
  auto r = run("opt " + golden("range_negative.hir") + " --passes assign-streams");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("with stream(i + 1) {"));
  EXPECT_THAT(r.out, HasSubstr("synchronize(stream(j + 1))"));
  EXPECT_THAT(r.out, Not(HasSubstr("stream(i)")));
}

// strip-communication deletes the collective and the `wait` that ordered
// the main stream after stream(0)'s copy: the pass manager refuses the
// result, naming the pass and both statements, in `opt` and in `run`.
std::string orderedByWait() { return testing::testProgramText("analysis/check_programs/ordered_by_wait.hir"); }

TEST_F(IndependenceCli, APassThatMakesTheProgramRacyIsAnErrorNamingThePassAndBothPositions) {
  std::string file = write("ordered_by_wait.hir", orderedByWait());
  ASSERT_EQ(run("check " + file).exitCode, 0) << "the input is race-free";
  for (const std::string command : {"opt", "run"}) {
    SCOPED_TRACE(command);
    auto r = run(command + " " + file + " --passes strip-communication");
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr(file + ":13:3: error: pass 'strip-communication' made the program racy: race on "
                                        "'y'[0:8]: add on the main stream reads it while copy at 9:3 on stream(0) "
                                        "writes it"));
    EXPECT_THAT(r.err, HasSubstr(file + ":9:3: note: the other access: copy on stream(0) writes 'y'\n"
                                        "  copy(x, out=y)\n"));
  }
}

}  // namespace
}  // namespace hostir
