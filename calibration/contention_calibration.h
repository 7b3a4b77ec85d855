// `hostir calibrate --backend cuda`: how much a GEMM and each memory-bound
// kind of work (copies, elementwise kernels, collectives) slow each other
// down when they run at once, measured pairwise from traced runs. Two loops
// run on two streams; the trace gives each operation's time, alone and
// while the other loop's work covers it.
#pragma once

#include <optional>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/calibration_runs.h"
#include "model/machine_profile.h"

namespace hostir {

// Both directions of every pair of work classes (the communication pairs
// only on a team of two or more), each rate the median over a few sizes.
// A pair whose loops did not overlap enough to time is left out. The
// spreads are recorded, not judged: work beside other work varies with the
// phase of what it meets.
std::vector<Contention> measureContention(const CalibrationRuns& runs, const CalibrationRequest& request);

// One direction of a pair from one traced run: the rate of the work whose
// slices are `mine` beside the work whose slices are `theirs`, i.e. its
// time alone (`aloneMicros`, a median) over the median time of those of its
// slices that lie wholly inside a stretch `theirs` covers (slices joined
// across gaps of up to `gapMicros`, the launch between two operations);
// at most 1. Nullopt when fewer than two of its slices are covered.
std::optional<double> rateBeside(double aloneMicros, const std::vector<RecordedSlice>& mine,
                                 const std::vector<RecordedSlice>& theirs, double gapMicros);

}  // namespace hostir
