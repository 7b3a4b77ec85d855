// How `hostir calibrate` runs its measurement programs on the team: timed
// (each run's wall time), or traced (each operation's time on its stream,
// which tells apart loops that run at once), and how the spread of timed
// runs is judged.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/figure_estimate.h"
#include "calibration/recorded_slices.h"
#include "ir/ir.h"

namespace hostir {

// One timed figure: seconds per loop iteration, and the spread of its runs.
struct Measured {
  double seconds = 0;
  double spread = 0;
};

// Times one figure (Calibrator::perIteration): `program` with R = loop
// and `set`, after `warmup` untimed runs, `repeat` timed ones, measured
// again while noisy; named `figure` in the noisy list.
using TimeLoop = std::function<Measured(const std::string& figure, const Program& program,
                                        std::map<std::string, int64_t> set, int64_t loop, int warmup, int repeat)>;

// Warm-up and timed runs for a run of about `estimatedSeconds`: short runs
// are cheap, and many of them give a microsecond figure its low quantile;
// long runs are steady, and repeating them many times would not fit the
// budget. Never fewer than kLeastTimedRuns, so that one slow run does not
// move the quartiles of the spread.
inline constexpr int kLeastTimedRuns = 5;
std::pair<int, int> runsFor(double estimatedSeconds);

// "16 KiB", "4 MiB", "100 B".
std::string sizeName(int64_t bytes);

class CalibrationRuns {
 public:
  CalibrationRuns(const CalibrationRequest& request, const TeamRunner& runTeam)
      : request_(request), runTeam_(runTeam) {}

  // A calibration program; a program that does not parse is a bug.
  Program parse(std::string_view text) const;
  // The seconds of each of `repeat` timed runs after `warmup` untimed ones;
  // every input is zeros, filled outside the timing.
  std::vector<double> timedRuns(const Program& program, const std::map<std::string, int64_t>& set, int warmup,
                                int repeat) const;
  // Rank 0's recorded slices of one traced run after `warmup` untimed ones.
  std::vector<RecordedSlice> tracedRun(const Program& program, const std::map<std::string, int64_t>& set,
                                       int warmup) const;

 private:
  RunRequest requestFor(const Program& program, const std::map<std::string, int64_t>& set) const;
  RunResult runOrFail(const RunRequest& run) const;

  const CalibrationRequest& request_;
  const TeamRunner& runTeam_;
};

}  // namespace hostir
