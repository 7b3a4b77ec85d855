#include "tools/hostir/settings.h"

#include <fmt/format.h>

#include "hostir/error.h"

namespace hostir::tool {

ToolResult<api::Params> parseSettings(const std::vector<std::string>& items) {
  api::Params settings;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      return ToolError{kUsageError, fmt::format("error: --set expects NAME=VALUE, got '{}'\n", item)};
    api::ParamValue value;
    try {
      value = api::parseParamValue(item.substr(eq + 1));
    } catch (const api::Error& e) {
      return ToolError{kUsageError, fmt::format("error: --set {}: {}\n", name, e.message())};
    }
    // Two values for one parameter are a mistake, not "the last wins".
    if (!settings.emplace(name, value).second)
      return ToolError{kUsageError, fmt::format("error: --set {} is given twice; give each parameter once\n", name)};
  }
  return settings;
}

}  // namespace hostir::tool
