#include "tools/hostir/settings.h"

#include <fmt/format.h>

#include <charconv>

namespace hostir::tool {

ToolResult<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> settings;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      return ToolError{kUsageError, fmt::format("error: --set expects NAME=VALUE, got '{}'\n", item)};
    std::string_view value = std::string_view(item).substr(eq + 1);
    int64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || number < 0)
      return ToolError{
          kUsageError,
          fmt::format("error: --set {}: '{}' is not a non-negative integer that fits in 64 bits\n", name, value)};
    // Two values for one parameter are a mistake, not "the last wins".
    if (!settings.emplace(name, number).second)
      return ToolError{kUsageError, fmt::format("error: --set {} is given twice; give each parameter once\n", name)};
  }
  return settings;
}

}  // namespace hostir::tool
