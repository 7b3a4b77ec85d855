// When `hostir calibrate` refuses a machine, and when it does not: whole
// calibrations (the CPU's --quick plan on two ranks) on a team whose runs
// a test makes up, so that the load and each figure's spread are the
// test's. Nothing is timed: the made-up runs return at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/figure_estimate.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

// The runs of a team that answers every request with made-up run times:
// `secondsOf(run, i)` for the i-th timed run. The programs seen, in order.
struct MadeUpTeam {
  std::function<double(const RunRequest&, int)> secondsOf;
  std::vector<std::string> programs;

  TeamRunner runner() {
    return [this](const RunRequest& run) -> Result<RunResult> {
      programs.push_back(run.program.name);
      RunResult result;
      for (int i = 0; i < run.repeat; ++i) result.runMillis.push_back(secondsOf(run, i) * 1e3);
      return result;
    };
  }
};

CalibrationRequest quickRequest() {
  CalibrationRequest request;
  request.world = 2;
  request.quick = true;
  return request;
}

int64_t loopOf(const RunRequest& run) {
  auto r = run.params.find("R");
  return r == run.params.end() ? 1 : r->second;
}

// Other processes that hold the cores as it starts: refused at once, the
// busiest named with their share, before a single run.
TEST(CalibrationVerdicts, ABusyMachineIsRefusedBeforeAnythingRuns) {
  CalibrationRequest request = quickRequest();
  request.load.othersBusy = 0.93;
  request.load.busiest = {{4242, "stress-ng-cpu", 0.98}, {17, "cc1plus", 0.85}};
  MadeUpTeam team{[](const RunRequest&, int) { return 1e-3; }, {}};
  std::vector<std::string> said;
  request.progress = [&](std::string_view what) { said.emplace_back(what); };
  Result<Calibration> calibration = calibrate(request, team.runner());
  ASSERT_FALSE(calibration.ok());
  EXPECT_THAT(calibration.error().message,
              HasSubstr("the machine is busy: other processes kept 93% of its cores busy as the calibration "
                        "started (the busiest: stress-ng-cpu (pid 4242) 98% of a core, cc1plus (pid 17) 85% of a "
                        "core); quiet the machine, or force the calibration (--force)"));
  EXPECT_TRUE(team.programs.empty());
  EXPECT_EQ(said, std::vector<std::string>{"load"});
}

// A quiet shared VM: every run of a loop is 1 µs per iteration beyond the
// empty program's 1 ms, and up to 0.8 µs per iteration more in some runs
// (a long loop's runs then spread 20-30% relative). Microsecond figures all:
// judged in microseconds, none noisy; the profile is made.
TEST(CalibrationVerdicts, JitteryMicrosecondFiguresAreNotNoise) {
  const double jitter[] = {0, 0.8, 0.2, 0.6, 0.4, 0.1, 0.7, 0.3, 0.5};
  MadeUpTeam team{[&](const RunRequest& run, int i) {
                    if (run.program.name == "empty") return 1e-3;
                    const double loop = static_cast<double>(loopOf(run));
                    return 1e-3 + loop * (1 + jitter[i % 9]) * 1e-6;
                  },
                  {}};
  Result<Calibration> calibration = calibrate(quickRequest(), team.runner());
  ASSERT_TRUE(calibration.ok()) << calibration.error().message;
  EXPECT_TRUE(calibration->noisy.empty()) << calibration->noisy.front().name;
  // The launch overhead (one copy a run) is its runs' 0.2-quantile beyond the empty program.
  EXPECT_NEAR(
      calibration->profile.overheads.launchMicros,
      1 + quantileOf({0, 0.8, 0.2, 0.6, 0.4, 0.1, 0.7, 0.3, 0.5, 0, 0.8, 0.2, 0.6, 0.4, 0.1, 0.7, 0.3, 0.5}, 0.2),
      1e-6);
  // Each overhead timed once: none was measured again.
  EXPECT_EQ(std::count(team.programs.begin(), team.programs.end(), "pingpong"), 1);
  EXPECT_EQ(std::count(team.programs.begin(), team.programs.end(), "sync"), 1);
}

// Large figures (10 ms a run), the second run of each three times as slow:
// a time slice lost now and then is not noise.
TEST(CalibrationVerdicts, OneSlowRunIsNotNoise) {
  MadeUpTeam team{[](const RunRequest& run, int i) {
                    if (run.program.name == "empty") return 1e-4;
                    return i == 1 ? 0.03 : 0.01;
                  },
                  {}};
  Result<Calibration> calibration = calibrate(quickRequest(), team.runner());
  ASSERT_TRUE(calibration.ok()) << calibration.error().message;
  EXPECT_TRUE(calibration->noisy.empty()) << calibration->noisy.front().name;
}

// An allreduce whose runs alternate between 10 and 40 ms stays unusable
// through its retries: the calibration stops there, naming it, and measures
// nothing after it; forced, it goes on and keeps the figure as noisy.
TEST(CalibrationVerdicts, AnUnusableFigureStopsTheCalibrationWhereItIsMet) {
  auto secondsOf = [](const RunRequest& run, int i) {
    if (run.program.name == "empty") return 1e-4;
    if (run.program.name == "allreduce") return i % 2 ? 0.04 : 0.01;
    return 0.01;
  };
  MadeUpTeam team{secondsOf, {}};
  Result<Calibration> refused = calibrate(quickRequest(), team.runner());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("the machine is too noisy to measure: the runs of allreduce 16 KiB "
                                                 "spread "));
  EXPECT_THAT(refused.error().message, HasSubstr("after 2 retries"));
  // The first allreduce, three tries, and nothing after.
  ASSERT_EQ(std::count(team.programs.begin(), team.programs.end(), "allreduce"), 3);
  EXPECT_EQ(team.programs.back(), "allreduce");
  EXPECT_EQ(std::count(team.programs.begin(), team.programs.end(), "gemm"), 1);  // the load probe's, at the start

  MadeUpTeam forcedTeam{secondsOf, {}};
  CalibrationRequest forced = quickRequest();
  forced.force = true;
  Result<Calibration> kept = calibrate(forced, forcedTeam.runner());
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_FALSE(kept->noisy.empty());
  for (const NoisyFigure& figure : kept->noisy) EXPECT_THAT(figure.name, HasSubstr("allreduce"));
  EXPECT_GT(std::count(forcedTeam.programs.begin(), forcedTeam.programs.end(), "gemm"), 1);
}

}  // namespace
}  // namespace hostir
