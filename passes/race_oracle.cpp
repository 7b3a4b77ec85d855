#include "passes/race_oracle.h"

#include "analysis/race_check.h"

namespace hostir {

RaceOracle raceOracle(std::map<std::string, int64_t> params, int64_t world, int64_t streams,
                      const std::atomic<bool>* cancel) {
  return [params = std::move(params), world, streams, cancel](const Program& program) {
    std::vector<RaceFinding> findings;
    for (const RaceReport& report : checkRaces(program, params, world, streams, cancel))
      findings.push_back(RaceFinding{report.race, report.rank});
    return findings;
  };
}

Result<PassContext> raceCheckedContext(const Program& program, const Bindings& bindings, int64_t streams,
                                       const std::atomic<bool>* cancel) {
  auto params = bindParams(program, bindings);
  if (!params) return params.error();
  PassContext context;
  context.bindings = bindings;
  context.raceCheck = raceOracle(std::move(*params), bindings.world, streams, cancel);
  context.streams = streams;
  context.cancel = cancel;
  return context;
}

}  // namespace hostir
