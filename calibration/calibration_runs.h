// How `hostir calibrate` runs its measurement programs on the team: timed
// (each run's wall time), or traced (each operation's time on its stream,
// which tells apart loops that run at once), and how the spread of timed
// runs is judged.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/recorded_slices.h"
#include "ir/ir.h"

namespace hostir {

double medianOf(std::vector<double> values);
// A figure's spread: the interquartile range of its samples over their
// median (0 for fewer than two samples or a zero median).
double spreadOf(std::vector<double> values);

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
