#include "tools/hostir/program_prediction.h"

namespace hostir::tool {

ToolResult<ProgramPrediction> predictProgram(const SourceProgram& source, const Program& program,
                                             const Bindings& bindings, int64_t streams, const MachineProfile& machine) {
  try {
    return api::predictProgram(source, program, bindings, streams, machine);
  } catch (const api::Error& error) {
    return toolError(error);
  }
}

}  // namespace hostir::tool
