// The race check as the passes' oracle (passes/pass.h): analysis/race_check
// bound to the params, team and worker pool that the tools, tests and
// benchmarks run the passes for.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/verifier.h"
#include "passes/pass.h"

namespace hostir {

// checkRaces for these params, team and worker pool.
RaceOracle raceOracle(std::map<std::string, int64_t> params, int64_t world, int64_t streams);

// The context `hostir opt --set ... --ranks N --streams P` gives the passes:
// the bindings and the race oracle, for `program`'s params under them.
Result<PassContext> raceCheckedContext(const Program& program, const Bindings& bindings, int64_t streams);

}  // namespace hostir
