// How `hostir calibrate` turns a figure's timed runs into its value and
// judges their spread. Two kinds of figure, told apart by their size:
//
// * a figure of a few microseconds per iteration (the overheads, small
//   copies, small-message collectives, tiny GEMMs): a time slice lost to
//   another thread stretches some of its runs by more than the figure
//   itself, so the value is a low quantile of many runs (interference only
//   ever adds time) and the spread is judged in microseconds against a
//   floor, not relative to a value that small;
// * a larger figure (GEMMs, copies and messages beyond the caches): the
//   median of its runs, its spread judged relative to it.
//
// Pure functions of the run times: tests/calibration checks them on sample
// vectors.
#pragma once

#include <cstdint>
#include <vector>

#include "hostir/calibration.h"

namespace hostir {

double medianOf(std::vector<double> values);
// The q-quantile (0 <= q <= 1) by linear interpolation between the sorted
// values; 0 for none.
double quantileOf(std::vector<double> values, double q);
// The interquartile range of the values over their median (0 for fewer than
// two values or a zero median): the relative spread a profile records.
double spreadOf(std::vector<double> values);

// Below this many seconds per iteration a figure is a microsecond figure.
// On the 2-vCPU VM (docs/performance.md, "Calibration's figures") every
// figure under 20 µs spread 20-60% relative on a quiet machine while its
// runs differed by under a microsecond per iteration; figures above 50 µs
// stayed within 10%.
inline constexpr double kMicroFigureSeconds = api::kCalibrationMicroFigureMicros * 1e-6;
// A microsecond figure's value: this quantile of its runs. Not the
// fastest run (one lucky run would set it), nor the median (which a third
// of slowed runs on a shared VM moves by the slice they lost).
inline constexpr double kMicroQuantile = 0.2;

enum class FigureVerdict {
  Steady,    // within its limit
  Noisy,     // beyond it: measured again, and kept with its spread if it stays so
  Unusable,  // far beyond (kCalibrationUnusableNoise times its limit): the machine is too noisy to measure
};

struct FigureEstimate {
  double seconds = 0;       // per loop iteration, beyond the empty program's time
  double spread = 0;        // the runs' relative spread (spreadOf), as the profile records it
  double spreadMicros = 0;  // the runs' interquartile range per iteration, in microseconds
  bool micro = false;       // a microsecond figure: a low quantile, its spread judged in microseconds
  // The spread over the figure's limit: kCalibrationNoisySpread for a large
  // figure, kCalibrationNoisyMicros for a microsecond one; above 1 noisy.
  double noise = 0;
  FigureVerdict verdict = FigureVerdict::Steady;
};

// A figure from its timed runs' wall seconds, each a loop of `loop`
// iterations, less `emptySeconds` (the empty program's fastest run; a
// value that beats it, noise, is taken whole).
FigureEstimate estimateFigure(const std::vector<double>& runSeconds, double emptySeconds, int64_t loop);

}  // namespace hostir
