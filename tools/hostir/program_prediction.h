// The API's prediction of a program (api/program_prediction.h), with its
// errors as the tool's.
#pragma once

#include "api/program_prediction.h"
#include "tools/hostir/exit_codes.h"
#include "tools/hostir/source_program.h"

namespace hostir::tool {

using api::ProgramPrediction;

ToolResult<ProgramPrediction> predictProgram(const SourceProgram& source, const Program& program,
                                             const Bindings& bindings, int64_t streams, const MachineProfile& machine);

}  // namespace hostir::tool
