// How `hostir calibrate` turns a figure's timed runs into its value and
// judges their spread.
//
// * The value: for a figure of a few microseconds per iteration (the
//   overheads, small copies, small-message collectives, tiny GEMMs), a
//   time slice lost to another thread stretches some runs by more than
//   the figure itself, so it is a low quantile of many runs (interference
//   only ever adds time); for a larger figure, the median of its runs.
// * The verdict: a figure is noisy only when its runs' interquartile range
//   exceeds both kCalibrationNoisySpread of their median and
//   kCalibrationNoisyMicros per iteration: a microsecond figure is judged
//   in microseconds, a large one relative to itself.
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

// Below this many seconds per iteration a figure's value is a low
// quantile. On the 2-vCPU VM, quiet (docs/performance.md, "Calibration's
// figures"), figures under 20 µs spread 20-95% relative while their runs
// differed by 0.1-3 µs per iteration, and figures above 50 µs spread under
// 15% but for a time slice lost now and then.
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
  bool micro = false;       // a microsecond figure: its value a low quantile
  // How far beyond its limits: the lesser of spread / kCalibrationNoisySpread
  // and spreadMicros / kCalibrationNoisyMicros; above 1 noisy.
  double noise = 0;
  FigureVerdict verdict = FigureVerdict::Steady;
};

// A figure from its timed runs' wall seconds, each a loop of `loop`
// iterations, less `emptySeconds` (the empty program's fastest run; a
// value that beats it, noise, is taken whole).
FigureEstimate estimateFigure(const std::vector<double>& runSeconds, double emptySeconds, int64_t loop);

}  // namespace hostir
