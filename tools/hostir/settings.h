// `--set NAME=VALUE`: the parameter values a command line binds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hostir/program.h"
#include "tools/hostir/exit_codes.h"

namespace hostir::tool {

// Parses `--set NAME=VALUE` items; on failure why (a usage error).
ToolResult<api::Params> parseSettings(const std::vector<std::string>& items);

}  // namespace hostir::tool
