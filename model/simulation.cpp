#include "model/simulation.h"

#include "ir/rank_dependence.h"
#include "model/simulation_backend.h"
#include "runtime/evaluator.h"

namespace hostir {

Result<Simulation> simulateProgram(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                                   int64_t streams, const MachineProfile& profile) {
  Simulation simulation;
  simulation.world = world;
  simulation.symmetric = !namesRank(program);
  const int64_t issued = simulation.symmetric ? 1 : world;
  try {
    for (int64_t rank = 0; rank < issued; ++rank) {
      Evaluator evaluator(program, params, rank, world);
      SimulationBackend backend(profile, rank, world, streams);
      std::map<std::string, TensorView> inputs;
      for (const TensorSpec& spec : evaluator.inputs()) inputs[spec.name] = backend.input(spec.dtype, spec.localShape);
      evaluator.run(backend, inputs);
      simulation.work.push_back(backend.work());
    }
  } catch (const DiagnosticError& e) {
    return e.diag;
  }
  Result<Timeline, std::string> timeline = simulateTimeline(simulation.work, profile);
  if (!timeline) return Diagnostic{{}, timeline.error()};
  simulation.timeline = std::move(*timeline);
  return simulation;
}

std::set<PricingAssumption> assumptionsOf(const Simulation& simulation) {
  std::set<PricingAssumption> all;
  for (const RankWork& work : simulation.work) all.insert(work.assumptions.begin(), work.assumptions.end());
  return all;
}

std::vector<double> streamBusySeconds(const Simulation& simulation, size_t rank) {
  const RankWork& work = simulation.work.at(rank);
  const RankTimeline& timeline = simulation.timeline.ranks.at(rank);
  std::vector<double> busy(static_cast<size_t>(work.streams), 0.0);
  for (size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    if (item.kind == WorkItem::Kind::Wait) continue;
    busy[static_cast<size_t>(item.stream)] += timeline.items[i].end - timeline.items[i].start;
  }
  return busy;
}

}  // namespace hostir
