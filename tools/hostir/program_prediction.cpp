#include "tools/hostir/program_prediction.h"

namespace hostir::tool {

ToolResult<ProgramPrediction> predictOrError(const SourceProgram& source, const Program& program,
                                             const Bindings& bindings, int64_t streams, const MachineProfile& machine) {
  try {
    return api::predictProgram(source, program, bindings, streams, machine);
  } catch (const api::Error& error) {
    return toolError(error);
  }
}

ToolResult<std::optional<PredictionRange>> predictRange(const SourceProgram& source, const Program& program,
                                                        const Bindings& bindings, int64_t streams,
                                                        const MachineProfile& machine) {
  if (!hasSpread(machine)) return std::optional<PredictionRange>();
  PredictionRange range;
  for (auto [edge, seconds] :
       {std::pair{SpreadEdge::Fast, &range.fastSeconds}, std::pair{SpreadEdge::Slow, &range.slowSeconds}}) {
    const MachineProfile atEdge = atSpreadEdge(machine, edge);
    try {
      *seconds = api::predictProgram(source, program, bindings, streams, atEdge).seconds();
    } catch (const api::Error& error) {
      return toolError(error);
    }
  }
  return std::optional<PredictionRange>(range);
}

}  // namespace hostir::tool
