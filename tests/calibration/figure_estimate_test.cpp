// How a figure's timed runs become its value and its verdict
// (calibration/figure_estimate.h), on sample vectors whose quantiles and
// quartiles are worked out by hand.
#include "calibration/figure_estimate.h"

#include <gtest/gtest.h>

#include <vector>

#include "calibration/calibration_runs.h"

namespace hostir {
namespace {

std::vector<double> micros(std::vector<double> values) {
  for (double& v : values) v *= 1e-6;
  return values;
}

TEST(FigureEstimate, QuantilesInterpolateBetweenTheSortedValues) {
  EXPECT_EQ(quantileOf({}, 0.2), 0);
  EXPECT_DOUBLE_EQ(quantileOf({7}, 0.2), 7);
  // Sorted 1 2 3 4 5 6: the 0.2-quantile lies at index 1.0, the 0.5 at 2.5.
  EXPECT_DOUBLE_EQ(quantileOf({6, 1, 5, 2, 4, 3}, 0.2), 2);
  EXPECT_DOUBLE_EQ(quantileOf({6, 1, 5, 2, 4, 3}, 0.5), 3.5);
  EXPECT_DOUBLE_EQ(quantileOf({6, 1, 5, 2, 4, 3}, 0), 1);
  EXPECT_DOUBLE_EQ(quantileOf({6, 1, 5, 2, 4, 3}, 1), 6);
}

// A one-copy program's runs on a shared VM: ten runs of 10 to 14.5 µs and
// one of 40 µs. Their interquartile range, 2.5 µs, is 20% of the
// median: relative to a figure this small, noisy; in microseconds, within
// the floor. The value is the 0.2-quantile, not the median.
TEST(FigureEstimate, AMicrosecondFigureIsALowQuantileJudgedInMicroseconds) {
  const std::vector<double> runs = micros({12.5, 10, 14.5, 11, 40, 10.5, 13, 11.5, 13.5, 12, 14});
  // Sorted: 10 10.5 11 11.5 12 12.5 13 13.5 14 14.5 40. 0.2-quantile at
  // index 2 (11), quartiles at 2.5 (11.25) and 7.5 (13.75), median 12.5.
  const FigureEstimate figure = estimateFigure(runs, 0, 1);
  EXPECT_TRUE(figure.micro);
  EXPECT_DOUBLE_EQ(figure.seconds, 11e-6);
  EXPECT_NEAR(figure.spreadMicros, 2.5, 1e-9);
  EXPECT_NEAR(figure.spread, 0.2, 1e-9);
  EXPECT_GT(figure.spread, api::kCalibrationNoisySpread);  // the relative rule would call it noisy
  EXPECT_EQ(figure.verdict, FigureVerdict::Steady);
}

// A loop of 1000 iterations of about 2 µs less an empty program of 50 µs:
// the spread is per iteration.
TEST(FigureEstimate, AMicrosecondFigureIsPerIterationBeyondTheEmptyProgram) {
  const std::vector<double> runs = micros({2050, 2550, 3050, 4050, 6050});
  const FigureEstimate figure = estimateFigure(runs, 50e-6, 1000);
  EXPECT_TRUE(figure.micro);
  // 0.2-quantile at index 0.8: 2050 + 0.8 * 500 = 2450 µs, less 50, over 1000.
  EXPECT_NEAR(figure.seconds, 2.4e-6, 1e-15);
  // Quartiles 2550 and 4050 µs: 1.5 µs per iteration, though 49% of the median run.
  EXPECT_NEAR(figure.spreadMicros, 1.5, 1e-9);
  EXPECT_EQ(figure.verdict, FigureVerdict::Steady);
}

TEST(FigureEstimate, AMicrosecondFigureWhoseRunsDifferByMicrosecondsIsNoisyThenUnusable) {
  // Quartiles 10 and 16 µs: 6 µs apart (46% of the median), beyond both limits.
  FigureEstimate noisy = estimateFigure(micros({8, 10, 13, 16, 20}), 0, 1);
  EXPECT_NEAR(noisy.spreadMicros, 6, 1e-9);
  EXPECT_NEAR(noisy.noise, 6 / api::kCalibrationNoisyMicros, 1e-9);
  EXPECT_EQ(noisy.verdict, FigureVerdict::Noisy);
  // Quartiles 10 and 40 µs: 30 µs apart, six times the floor (and 150%).
  FigureEstimate unusable = estimateFigure(micros({8, 10, 20, 40, 45}), 0, 1);
  EXPECT_EQ(unusable.verdict, FigureVerdict::Unusable);
}

// A GEMM of 10 ms: the median, judged relative to it. One slow run of five
// (a time slice lost) moves neither the median nor the quartiles.
TEST(FigureEstimate, OneSlowRunOfALargeFigureIsNotNoise) {
  const std::vector<double> runs = {0.0100, 0.0101, 0.0099, 0.01005, 0.030};
  const FigureEstimate figure = estimateFigure(runs, 0, 1);
  EXPECT_FALSE(figure.micro);
  EXPECT_DOUBLE_EQ(figure.seconds, 0.01005);
  // Quartiles 0.0100 and 0.0101 over the median 0.01005.
  EXPECT_NEAR(figure.spread, 0.0001 / 0.01005, 1e-9);
  EXPECT_EQ(figure.verdict, FigureVerdict::Steady);
  // Every figure gets at least five timed runs, however long its runs are.
  for (double seconds : {1e-5, 0.01, 0.1, 1.0, 10.0}) EXPECT_GE(runsFor(seconds).second, kLeastTimedRuns);
}

TEST(FigureEstimate, ALargeFigureKeepsARelativeRule) {
  // Quartiles 10 and 13 ms over the median 12: 25%.
  FigureEstimate noisy = estimateFigure({0.009, 0.010, 0.012, 0.013, 0.014}, 0, 1);
  EXPECT_FALSE(noisy.micro);
  EXPECT_NEAR(noisy.spread, 0.25, 1e-9);
  EXPECT_EQ(noisy.verdict, FigureVerdict::Noisy);
  // Quartiles 10 and 30 ms over the median 20: 100%, beyond four times 15%.
  EXPECT_EQ(estimateFigure({0.009, 0.010, 0.020, 0.030, 0.031}, 0, 1).verdict, FigureVerdict::Unusable);
}

TEST(FigureEstimate, ARunThatBeatsTheEmptyProgramIsTakenWhole) {
  const FigureEstimate figure = estimateFigure(micros({30, 30, 30, 30, 30}), 40e-6, 1);
  EXPECT_NEAR(figure.seconds, 30e-6, 1e-15);
}

}  // namespace
}  // namespace hostir
