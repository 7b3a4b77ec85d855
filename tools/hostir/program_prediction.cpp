#include "tools/hostir/program_prediction.h"

#include <fmt/format.h>

#include <utility>

#include "analysis/program_check.h"
#include "tools/hostir/commands.h"

namespace hostir::tool {

ToolResult<ProgramPrediction> predictProgram(const SourceProgram& source, const Program& program,
                                             const Bindings& bindings, int64_t streams, const MachineProfile& machine) {
  auto params = bindParams(program, bindings);
  if (!params) return source.error(params.error());

  ProgramCheck check = checkProgram(program, *params, bindings.world, streams);
  if (!check.ok())
    return ToolError{kProgramError,
                     formatProgramCheck(check, source.path, source.text) +
                         fmt::format("{}: refusing to simulate: {}\n", source.path, summarizeFindings(check))};

  auto simulateVariant = [&](const Program& variant) -> ToolResult<Simulation> {
    Result<Simulation> simulation = simulateProgram(variant, *params, bindings.world, streams, machine);
    if (!simulation) return source.error(simulation.error());
    return std::move(*simulation);
  };
  ProgramPrediction prediction;
  auto whole = simulateVariant(program);
  if (!whole) return whole.error();
  prediction.whole = std::move(*whole);
  // The variants need no race proof: removing work orders nothing differently.
  ApplyPassesOptions variantOptions;
  variantOptions.raceCheck = false;
  for (auto [pass, seconds] : {std::pair{"strip-communication", &prediction.computeSeconds},
                               std::pair{"strip-compute", &prediction.communicationSeconds}}) {
    auto variant = applyPasses(source, program, pass, bindings, variantOptions);
    if (!variant) return variant.error();
    auto simulated = simulateVariant(*variant);
    if (!simulated) return simulated.error();
    *seconds = simulated->seconds();
  }
  return prediction;
}

}  // namespace hostir::tool
