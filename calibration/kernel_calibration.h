// `hostir calibrate`'s measurement of the kernels that are neither GEMMs
// nor copies (the profile's `kernels`): the bandwidth of an elementwise
// kernel (`mul`) and of a row reduction (`rms_norm`) by bytes touched, and
// the rate of attention at a few sequence lengths and head dims, each as a
// loop of one statement through the runner, as the other figures are.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "calibration/calibration_runs.h"
#include "model/machine_profile.h"

namespace hostir {

struct KernelPlan {
  std::vector<int64_t> bytes;  // the curves' sizes: bytes a kernel touches (read + written)
  double bytesPerRun = 0;      // a run's loop touches at least this many bytes...
  int64_t maxLoop = 1;         // ...in at most this many statements
  double guessBytesPerSecond = 1e9;
  // Attention: t query and key rows, head dim d, `heads` heads, not causal.
  std::vector<int64_t> attentionT, attentionD;
  int64_t attentionHeads = 4;
  std::vector<DType> attentionDtypes;
  double attentionFlopsPerRun = 0;
  int64_t attentionMaxLoop = 1;
  double guessFlopsPerSecond = 1e9;
};

// The elementwise and row-reduction curves and the attention rates, timed
// with `time`; `progress` names each group as it starts.
KernelRates measureKernels(const CalibrationRuns& runs, const KernelPlan& plan, const TimeLoop& time,
                           const std::function<void(std::string_view)>& progress);

// The calibration programs, for tests: `mul(a, b, out=c)` on C elements;
// `rms_norm(x, w, out=y)` on [H, W]; attention on [T, H·D] in `dtype`.
std::string_view elementwiseCalibrationProgram();
std::string_view rowReductionCalibrationProgram();
std::string attentionCalibrationProgram(DType dtype);

}  // namespace hostir
