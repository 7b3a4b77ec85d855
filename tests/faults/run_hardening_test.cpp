// `hostir run` refuses what cannot be run safely, and says why: programs that
// `check` rejects, rank-dependent communications under --unchecked (found
// while the program runs, at the statement), an allocation beyond memory,
// and command-line numbers out of range. In-process ranks: these run under
// the sanitizers too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "programs.h"
#include "sanitizers.h"

namespace hostir::testing {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

using RunHardening = CliTest;

TEST_F(RunHardening, RunRefusesARacyProgramWithCheckReport) {
  std::string path = write("racy.hir", kRacy);
  auto check = run("check " + path);
  auto r = run("run " + path);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_FALSE(r.signaled);
  EXPECT_THAT(r.err, HasSubstr("racy.hir:8:3: error: race on 'y'"));
  // The same report as `check` gives, line for line.
  EXPECT_THAT(r.err, HasSubstr(check.err.substr(0, check.err.find('\n'))));
  EXPECT_EQ(r.out, "");
}

TEST_F(RunHardening, UncheckedRunsWhatTheProofWouldRefuse) {
  // Not a racy program: running one races for real, which the
  // ThreadSanitizer build of these tests would rightly report.
  std::string path = write("missed_chunk.hir", kMissedChunk);
  auto refused = run("run " + path);
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_THAT(refused.err, HasSubstr("output 'y' is not fully written"));
  auto r = run("run " + path + " --unchecked");
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST_F(RunHardening, UncheckedStillVerifies) {
  auto r = run("run " + write("bad.hir", "program p() {\n  output y : f32[4]\n  y = allocate(f32[5])\n}\n") +
               " --unchecked");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.hir:2:"));
}

struct RankDependent {
  const char* name;
  const char* program;
  const char* line;  // where rank 0 and rank 1 part ways
};

class RankDependentCommunications : public RunHardening, public ::testing::WithParamInterface<RankDependent> {};

TEST_P(RankDependentCommunications, UncheckedRunStopsAtTheStatement) {
  const RankDependent& c = GetParam();
  for (int ranks : {2, 3}) {
    auto r =
        run("run " + write(std::string(c.name) + ".hir", c.program) + " --unchecked --ranks " + std::to_string(ranks));
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_FALSE(r.signaled);
    EXPECT_THAT(r.err, AllOf(HasSubstr("does not match across ranks"), HasSubstr(c.line),
                             Not(HasSubstr("internal error")), Not(HasSubstr("TRUNCATE"))));
  }
}

INSTANTIATE_TEST_SUITE_P(Classes, RankDependentCommunications,
                         ::testing::Values(RankDependent{"loop_by_rank", kLoopByRank, "at 6:9"},
                                           RankDependent{"size_by_rank", kSizeByRank, "size_by_rank.hir:6:"},
                                           RankDependent{"root_by_rank", kRootByRank, "root_by_rank.hir:5:"}),
                         [](const auto& info) { return std::string(info.param.name); });

// Over mesh axes, the ranks agree within each group, which the message names.
TEST_F(RunHardening, UncheckedRunStopsAtAGroupsStatement) {
  auto r = run("run " + write("size_by_place.hir", kSizeByGroupPlace) + " --unchecked --ranks 4");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_FALSE(r.signaled);
  EXPECT_THAT(r.err, AllOf(HasSubstr("size_by_place.hir:6:"),
                           HasSubstr("does not match across the ranks of its group over tp (by place)"),
                           Not(HasSubstr("internal error"))));
}

TEST_F(RunHardening, AllocationBeyondMemoryNamesTheStatementAndTheSize) {
  auto r = run("run " + write("huge.hir", kHugeAllocation));
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_FALSE(r.signaled);
  EXPECT_THAT(r.err, HasSubstr("huge.hir:4:9: error: cannot allocate 4.00 TiB for 'big'"));
}

struct BadNumber {
  const char* option;
  const char* value;
  const char* says;
};

class BadNumbers : public RunHardening, public ::testing::WithParamInterface<BadNumber> {};

TEST_P(BadNumbers, AreUsageErrorsWithShortMessages) {
  const BadNumber& c = GetParam();
  std::string path = write("p.hir", kChunkedAllreduce);
  auto r = run(std::string("run ") + path + " " + c.option + " " + c.value);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(c.says));
  // Human-sized: no 309-digit bounds.
  EXPECT_LT(r.err.find('\n'), 200u) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Options, BadNumbers,
    ::testing::Values(BadNumber{"--comm-timeout", "nan", "from 0.001 to 1e+06"},
                      BadNumber{"--comm-timeout", "inf", "from 0.001"}, BadNumber{"--comm-timeout", "-1", "from 0.001"},
                      BadNumber{"--comm-timeout", "0", "from 0.001"}, BadNumber{"--comm-timeout", "1e-9", "from 0.001"},
                      BadNumber{"--comm-timeout", "1e400", "from 0.001"}, BadNumber{"--min-gain", "nan", "from 0 to 1"},
                      BadNumber{"--min-gain", "-0.5", "from 0 to 1"}, BadNumber{"--warmup", "-1", "from 0 to 1000000"},
                      BadNumber{"--repeat", "x", "from 0 to 1000000"},
                      BadNumber{"--repeat", "99999999999", "from 0 to 1000000"},
                      BadNumber{"--seed", "-1", "from 0 to 2^64 - 1"}, BadNumber{"--streams", "0", "from 1 to 1024"},
                      BadNumber{"--ranks", "99999", "from 1 to 1024"},
                      BadNumber{"--cores-per-rank", "-1", "from 0 to 1024"},
                      BadNumber{"--inject-delays", "-5", "from 0 to 1000000"}));

// Threads and memory the process's limits refuse: each run ends with a clear
// resource error and exit 1 (or succeeds), never a signal, a hang, or
// "internal error". A sanitizer's runtime cannot even start under such
// limits, so these run in the plain build only.
TEST_F(RunHardening, ThreadsThatCannotStartAreAResourceError) {
  if (kSanitized) GTEST_SKIP() << "a sanitizer's shadow memory does not fit under these limits";
  const std::string program = example("row_parallel_linear.hir") + " --passes assign-streams";
  int refused = 0;
  for (const std::string limit : {"ulimit -v 1000000", "ulimit -v 1400000", "ulimit -v 2000000", "ulimit -s 100000000"})
    for (int ranks : {2, 16}) {
      SCOPED_TRACE(limit + ", " + std::to_string(ranks) + " ranks");
      auto r = run("run " + program + " --ranks " + std::to_string(ranks), limit + "; ");
      EXPECT_FALSE(r.signaled) << r.err;
      EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.exitCode << "\n" << r.err;
      if (r.exitCode == 0) continue;
      ++refused;
      EXPECT_THAT(r.err, AnyOf(HasSubstr("error: cannot start"), HasSubstr("error: out of memory while"),
                               HasSubstr("error: cannot allocate"), HasSubstr("error: cannot load OpenBLAS")));
      EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
      // Memory that runs out during the run is an error at the statement
      // (which of memory and threads runs out first depends on timing).
      if (r.err.find("out of memory while running") != std::string::npos) {
        EXPECT_THAT(r.err, HasSubstr("row_parallel_linear.hir:11:5: error: out of memory while running linear"));
      }
    }
  EXPECT_GE(refused, 4);  // the limits bite: the test is not vacuous
}

// A name given twice is a mistake, not "the last one wins".
TEST_F(RunHardening, ANameGivenTwiceIsAUsageError) {
  std::string path = write("p.hir", kChunkedAllreduce);
  for (const std::string& args : {"check " + path + " --set M=32 --set M=64", "run " + path + " --set M=32 --set M=64",
                                  "run " + path + " --output y=a.npy --output y=b.npy"}) {
    SCOPED_TRACE(args);
    auto r = run(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is given twice"));
  }
}

TEST_F(RunHardening, AMalformedFaultSpecIsAUsageError) {
  auto r = run("run " + write("p.hir", kChunkedAllreduce) + " --inject-fault stop:x:run");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("--inject-fault expects ACTION:RANK:POINT"));
}

TEST_F(RunHardening, HelpLeavesTheFaultAidOut) {
  auto r = run("run --help");
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.out, HasSubstr("--unchecked"));
  EXPECT_THAT(r.out, Not(HasSubstr("--inject-fault")));
}

}  // namespace
}  // namespace hostir::testing
