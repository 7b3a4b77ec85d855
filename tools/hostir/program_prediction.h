// The API's prediction of a program (api/program_prediction.h), with its
// errors as the tool's.
#pragma once

#include <optional>

#include "api/program_prediction.h"
#include "tools/hostir/exit_codes.h"
#include "tools/hostir/source_program.h"

namespace hostir::tool {

using api::ProgramPrediction;

ToolResult<ProgramPrediction> predictOrError(const SourceProgram& source, const Program& program,
                                             const Bindings& bindings, int64_t streams, const MachineProfile& machine);

// The program's predicted time with every figure of the profile at the
// fast end of its spread and at the slow end (model/machine_profile.h,
// atSpreadEdge): what the profile's measured spreads allow. Absent when the
// profile has no spreads.
struct PredictionRange {
  double fastSeconds = 0;
  double slowSeconds = 0;
};
ToolResult<std::optional<PredictionRange>> predictRange(const SourceProgram& source, const Program& program,
                                                        const Bindings& bindings, int64_t streams,
                                                        const MachineProfile& machine);

}  // namespace hostir::tool
