// `--set NAME=VALUE`: the parameter values a command line binds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/hostir/exit_codes.h"

namespace hostir::tool {

// Parses `--set NAME=VALUE` items; on failure why (a usage error).
ToolResult<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items);

}  // namespace hostir::tool
