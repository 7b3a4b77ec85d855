// The progress line of long commands (tools/hostir/progress_line.h): when
// it is due, what it says, how it is redrawn and erased, that its ticker
// stops cleanly, and that `hostir run` shows it on a terminal only.
#include "tools/hostir/progress_line.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_runner.h"

namespace hostir::tool {
namespace {

using namespace std::chrono_literals;

TEST(ProgressThrottle, NothingBeforeTheDelayThenAtMostOncePerInterval) {
  ProgressThrottle throttle(ProgressSettings{2000ms, 250ms});
  EXPECT_FALSE(throttle.due(0ms));
  EXPECT_FALSE(throttle.due(1999ms));
  EXPECT_TRUE(throttle.due(2000ms));
  EXPECT_FALSE(throttle.due(2100ms));
  EXPECT_FALSE(throttle.due(2249ms));
  EXPECT_TRUE(throttle.due(2250ms));
  EXPECT_TRUE(throttle.due(9000ms));  // a late tick draws at once
  EXPECT_FALSE(throttle.due(9001ms));
}

TEST(ProgressLine, ARedrawCoversTheLongerLineBeforeIt) {
  EXPECT_EQ(redrawnLine("run: 2.0 s", 0), "\rrun: 2.0 s");
  EXPECT_EQ(redrawnLine("ab", 5), "\rab   ");
  EXPECT_EQ(redrawnLine("abcdef", 5), "\rabcdef");
  EXPECT_EQ(erasedLine(3), "\r   \r");
}

TEST(ProgressLine, RunTextNamesTheWarmupOrRepetitionUnderWay) {
  EXPECT_EQ(runProgressText(0, 0, 1, 4.25), "run: 4.2 s");
  EXPECT_EQ(runProgressText(-1, 2, 10, 2.0), "run: 2.0 s");  // not started yet
  EXPECT_EQ(runProgressText(0, 2, 10, 2.0), "run: warmup 1/2, 2.0 s");
  EXPECT_EQ(runProgressText(1, 2, 10, 2.5), "run: warmup 2/2, 2.5 s");
  EXPECT_EQ(runProgressText(2, 2, 10, 3.0), "run: repetition 1/10, 3.0 s");
  EXPECT_EQ(runProgressText(11, 2, 10, 12.0), "run: repetition 10/10, 12.0 s");
}

// What a ticker wrote, in order.
struct Captured {
  std::mutex mutex;
  std::vector<std::string> writes;
  ProgressTicker::Write writer() {
    return [this](std::string_view text) {
      std::lock_guard lock(mutex);
      writes.emplace_back(text);
    };
  }
};

TEST(ProgressTicker, DrawsWhileRunningAndErasesWhenStopped) {
  Captured captured;
  ProgressTicker ticker([](double) { return std::string("tick"); }, ProgressSettings{0ms, 5ms}, captured.writer());
  std::this_thread::sleep_for(60ms);
  ticker.stop();
  ticker.stop();  // a second stop does nothing
  ASSERT_GE(captured.writes.size(), 2u);
  EXPECT_EQ(captured.writes.front(), "\rtick");
  EXPECT_EQ(captured.writes.back(), "\r    \r");
}

TEST(ProgressTicker, ACommandShorterThanTheDelayPrintsNothing) {
  Captured captured;
  {
    ProgressTicker ticker([](double) { return std::string("tick"); }, ProgressSettings{10s, 5ms}, captured.writer());
    std::this_thread::sleep_for(10ms);
  }  // the destructor stops it at once, without waiting for the delay
  EXPECT_TRUE(captured.writes.empty());
}

TEST(RunProgress, ShowsTheLatestRunAnyRankStarted) {
  RunProgress progress(true, 1, 3, ProgressSettings{1h, 1h});  // never draws
  EXPECT_EQ(progress.runShown(), -1);
  progress.atRun(0, false);
  EXPECT_EQ(progress.runShown(), -1);  // announced, not started
  progress.atRun(1, true);
  progress.atRun(0, true);  // a slower rank's start does not move it back
  EXPECT_EQ(progress.runShown(), 1);
}

}  // namespace
}  // namespace hostir::tool

namespace hostir::testing {
namespace {

class ProgressCli : public CliTest {
 protected:
  // A run of about four seconds that leaves the cores to others: seeded
  // sleeps before every task (--inject-delays), three repetitions.
  static std::string longRun() {
    return "run " + example("row_parallel_linear.hir") + " --ranks 2 --inject-delays 200000 --seed 1 --repeat 3";
  }
};

TEST_F(ProgressCli, ALongRunPrintsNoProgressWhenStderrIsNotATerminal) {
  CommandResult r = run(longRun());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_GT(r.seconds, 2.0) << "the run is too short to test the progress line";
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("run: "), std::string::npos) << r.err;
}

// On a terminal (a pseudo-terminal from util-linux's `script`) the line is
// drawn, then erased before the timing line.
TEST_F(ProgressCli, ALongRunOnATerminalShowsProgressAndErasesIt) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no `script` to make a terminal";
  CommandResult r = shell("script -qec '" + std::string(HOSTIR_BINARY) + " " + longRun() + "' /dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\rrun: repetition "), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\r +\rtiming: median_ms="))) << r.out;
}

}  // namespace
}  // namespace hostir::testing
