// The cost model as the passes' oracle (passes/pass.h): model/simulation
// bound to a machine profile, the params, the team and the worker pool,
// as the race oracle binds the race check.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "model/machine_profile.h"
#include "passes/pass.h"

namespace hostir {

// simulateProgram for this machine, params, team and worker pool. The
// program is verified first; a program that does not verify, or that the
// profile cannot price, is an error.
CostOracle costOracle(std::shared_ptr<const MachineProfile> machine, std::map<std::string, int64_t> params,
                      int64_t world, int64_t streams);

}  // namespace hostir
