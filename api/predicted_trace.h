// `hostir simulate --trace`: the predicted timeline in the Chrome trace
// format of `hostir run --trace` (the same tracks, names and categories),
// so a prediction and a measurement open side by side.
#pragma once

#include <string>

#include "model/simulation.h"
#include "runtime/trace.h"

namespace hostir {

// The ranks a predicted trace draws at most: each is a temporary file while
// it is written.
inline constexpr size_t kMaxTracedRanks = 64;

// Writes every simulated rank's timeline to `path`; `sourceName` prefixes
// the statements' positions. With SPMD symmetry the one simulated rank is
// written as rank 0.
Result<TraceSummary> writePredictedTrace(const Simulation& simulation, const std::string& path,
                                         const std::string& sourceName, const MachineProfile& profile);

}  // namespace hostir
