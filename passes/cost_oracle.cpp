#include "passes/cost_oracle.h"

#include "ir/verifier.h"
#include "model/simulation.h"

namespace hostir {
namespace {

// A copy of `program` whose statements carry, as their line, the position
// of the top-level statement they belong to (from 1), so that the work the
// simulation records can be summed per top-level statement.
Program taggedByTopLevelStatement(const Program& program) {
  Program tagged = program;
  for (size_t i = 0; i < tagged.body.size(); ++i) {
    const SourceLoc tag{static_cast<uint32_t>(i + 1), 1};
    std::vector<Statement> one;
    one.push_back(std::move(tagged.body[i]));
    walkStatements(one, [&](Statement& s) { s.setLoc(tag); });
    tagged.body[i] = std::move(one.front());
  }
  return tagged;
}

}  // namespace

CostOracle costOracle(std::shared_ptr<const MachineProfile> machine, std::map<std::string, int64_t> params,
                      int64_t world, int64_t streams) {
  return [machine = std::move(machine), params = std::move(params), world,
          streams](const Program& program) -> Result<CostPrediction> {
    if (auto error = verifyProgram(program, Bindings{params, world})) return *error;
    Result<Simulation> simulation =
        simulateProgram(taggedByTopLevelStatement(program), params, world, streams, *machine);
    if (!simulation) return simulation.error();
    CostPrediction prediction;
    prediction.seconds = simulation->seconds();
    prediction.statementSeconds.assign(program.body.size(), 0.0);
    for (const WorkItem& item : simulation->work.front().items) {
      if (item.kind == WorkItem::Kind::Wait || !item.loc.valid() || item.loc.line > program.body.size()) continue;
      prediction.statementSeconds[item.loc.line - 1] += item.seconds;
    }
    return prediction;
  };
}

}  // namespace hostir
