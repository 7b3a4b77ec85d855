// The measurements of calibration/ without the command line: the spread of
// a figure's runs, the contention programs and the rate read from their
// traces, and the least-squares fit of the communication costs.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/calibration_runs.h"
#include "calibration/contention_calibration.h"

namespace hostir {
namespace {

TEST(CalibrationSpread, IsTheInterquartileRangeOverTheMedian) {
  EXPECT_EQ(spreadOf({}), 0);
  EXPECT_EQ(spreadOf({5}), 0);
  EXPECT_DOUBLE_EQ(spreadOf({1, 1, 1, 1}), 0);
  // Sorted 1 2 3 4 5: quartiles 2 and 4, median 3.
  EXPECT_DOUBLE_EQ(spreadOf({5, 1, 4, 2, 3}), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 2, 3}), 2.5);
}

// The contention measurement's programs and trace reading, on the CPU
// backend's streams (threads): it runs, and every pair it times has a rate
// in (0, 1]. (Which pairs overlap enough to time depends on the cores a
// loaded machine gives the threads; rateBeside's test below is exact.)
TEST(ContentionCalibration, RunsItsProgramsAndReadsTheirTraces) {
  CalibrationRequest request;
  request.world = 2;
  request.backend.cpu.coresPerRank = 2;
  request.quick = true;
  TeamRunner runTeam = [](const RunRequest& run) { return runInProcess(run, 2); };
  CalibrationRuns runs(request, runTeam);
  std::vector<Contention> measured = measureContention(runs, request);
  std::set<std::pair<WorkClass, WorkClass>> pairs;
  for (const Contention& c : measured) {
    EXPECT_NE(c.slowed, c.beside);
    EXPECT_TRUE(pairs.insert({c.slowed, c.beside}).second);
    EXPECT_GT(c.rate, 0);
    EXPECT_LE(c.rate, 1);
    EXPECT_GE(c.spread, 0);
  }
}

RecordedSlice slice(std::string name, double start, double duration) {
  return RecordedSlice{2, std::move(name), "compute", start, duration};
}

// GEMMs of 10 µs alone; copies of 8 µs run from 0 to 46 µs with launch gaps
// of 1.5 µs. The GEMMs wholly inside that stretch took 20 µs: a rate of 0.5.
// The copies (4 µs alone, all inside the GEMMs' stretch) run at 0.5.
TEST(ContentionCalibration, ARateIsTheTimeAloneOverTheTimeWhollyBeside) {
  std::vector<RecordedSlice> gemms = {slice("linear", 0, 20), slice("linear", 20, 20), slice("linear", 40, 20),
                                      slice("linear", 60, 10)};
  std::vector<RecordedSlice> copies;
  for (double at = 0; at + 8 <= 48; at += 9.5) copies.push_back(slice("copy", at, 8));
  // Covered: [0, 46] once the gaps are joined; the GEMMs at 0 and 20 lie inside, the one at 40 does not.
  std::optional<double> gemm = rateBeside(10, gemms, copies, 2);
  ASSERT_TRUE(gemm);
  EXPECT_DOUBLE_EQ(*gemm, 0.5);
  std::optional<double> copy = rateBeside(4, copies, gemms, 2);
  ASSERT_TRUE(copy);
  EXPECT_DOUBLE_EQ(*copy, 0.5);
  // Gaps wider than allowed split the stretch: no GEMM lies wholly in a piece.
  EXPECT_FALSE(rateBeside(10, gemms, copies, 1));
  // Faster beside than alone (noise) is capped at 1.
  EXPECT_DOUBLE_EQ(*rateBeside(30, gemms, copies, 2), 1.0);
}

TEST(CalibrationFit, RecoversALine) {
  // 10 us + bytes / 5 GB/s.
  std::vector<double> x = {1e3, 1e5, 1e7, 1e8}, t;
  for (double bytes : x) t.push_back(10e-6 + bytes / 5e9);
  LineFit fit = fitLatencyBandwidth(x, t);
  EXPECT_NEAR(fit.latency, 10e-6, 1e-9);
  EXPECT_NEAR(fit.bandwidth, 5e9, 1e3);
}

TEST(CalibrationFit, ClampsANegativeLatency) {
  LineFit fit = fitLatencyBandwidth({1e6, 2e6}, {0.5e-3, 1.5e-3});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_GT(fit.bandwidth, 0);
}

TEST(CalibrationFit, OnePointIsABandwidth) {
  LineFit fit = fitLatencyBandwidth({1e6}, {1e-3});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_NEAR(fit.bandwidth, 1e9, 1);
}

TEST(CalibrationFit, TimesThatDoNotGrowAreALatency) {
  LineFit fit = fitLatencyBandwidth({1e3, 1e6}, {20e-6, 19e-6});
  EXPECT_GT(fit.latency, 19e-6);
  EXPECT_LT(fit.latency, 20e-6);
  EXPECT_EQ(fit.bandwidth, 0);
}

}  // namespace
}  // namespace hostir
