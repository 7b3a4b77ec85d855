#include "calibration/figure_estimate.h"

#include <algorithm>

namespace hostir {

double medianOf(std::vector<double> values) { return quantileOf(std::move(values), 0.5); }

double quantileOf(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(at);
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (at - static_cast<double>(low)) * (values[high] - values[low]);
}

double spreadOf(std::vector<double> values) {
  if (values.size() < 2) return 0;
  const double median = quantileOf(values, 0.5);
  return median > 0 ? (quantileOf(values, 0.75) - quantileOf(values, 0.25)) / median : 0;
}

FigureEstimate estimateFigure(const std::vector<double>& runSeconds, double emptySeconds, int64_t loop) {
  FigureEstimate figure;
  const double iterations = static_cast<double>(std::max<int64_t>(loop, 1));
  auto perIteration = [&](double run) { return (run > emptySeconds ? run - emptySeconds : run) / iterations; };
  const double low = perIteration(quantileOf(runSeconds, kMicroQuantile));
  figure.micro = low < kMicroFigureSeconds;
  figure.seconds = figure.micro ? low : perIteration(medianOf(runSeconds));
  figure.spread = spreadOf(runSeconds);
  figure.spreadMicros =
      runSeconds.size() < 2 ? 0 : (quantileOf(runSeconds, 0.75) - quantileOf(runSeconds, 0.25)) / iterations * 1e6;
  // Noisy only beyond both limits: a microsecond figure by its microseconds, a large one by its share.
  figure.noise =
      std::min(figure.spread / api::kCalibrationNoisySpread, figure.spreadMicros / api::kCalibrationNoisyMicros);
  figure.verdict = figure.noise > api::kCalibrationUnusableNoise ? FigureVerdict::Unusable
                   : figure.noise > 1                            ? FigureVerdict::Noisy
                                                                 : FigureVerdict::Steady;
  return figure;
}

}  // namespace hostir
