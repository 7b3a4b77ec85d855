// The race check as the passes' oracle (passes/pass.h): analysis/race_check
// bound to the params, team and worker pool that the tools, tests and
// benchmarks run the passes for.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "ir/verifier.h"
#include "passes/pass.h"

namespace hostir {

// checkRaces for these params, team and worker pool; each check throws
// Cancelled once `cancel` is set (null: it cannot be cancelled).
RaceOracle raceOracle(std::map<std::string, int64_t> params, int64_t world, int64_t streams,
                      const std::atomic<bool>* cancel = nullptr);

// The context `hostir opt --set ... --ranks N --streams P` gives the passes:
// the bindings and the race oracle, for `program`'s params under them, and
// `cancel` for the passes and the oracle alike.
Result<PassContext> raceCheckedContext(const Program& program, const Bindings& bindings, int64_t streams,
                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace hostir
