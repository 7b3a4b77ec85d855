// `hostir simulate`'s engine: issues a verified program on every rank
// through the evaluator, against the simulation backend, and simulates the
// ranks' timelines on a machine profile. A program that never names `rank`
// issues the same work on every rank (SPMD symmetry): one rank is issued
// and stands for all of them, so a team of 1024 costs what a team of one
// does. A program that names `rank` is issued once per rank.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "model/machine_profile.h"
#include "model/rank_work.h"
#include "model/timeline_simulator.h"

namespace hostir {

struct Simulation {
  int64_t world = 1;
  bool symmetric = false;      // one simulated rank stands for every rank
  std::vector<RankWork> work;  // per simulated rank
  Timeline timeline;           // parallel to work

  double seconds() const { return timeline.end; }
};

// `program` must have passed verifyProgram with these params and world.
// Errors: what the profile cannot price ("the profile 'x' has no f64 GEMM
// rates", at the statement), or ranks that never meet in a communication.
Result<Simulation> simulateProgram(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                                   int64_t streams, const MachineProfile& profile);

// Every assumption the pricing of the simulated ranks' work made
// (cost_model.h): what the prediction rests on beyond the profile's figures.
std::set<PricingAssumption> assumptionsOf(const Simulation& simulation);

// Seconds each stream of a simulated rank spends running work ([0] the
// main stream, [1 + k] worker stream k; waits are not work).
std::vector<double> streamBusySeconds(const Simulation& simulation, size_t rank);

}  // namespace hostir
