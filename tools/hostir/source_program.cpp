#include "tools/hostir/source_program.h"

#include <fmt/format.h>

#include <charconv>

#include "api/program_file.h"
#include "ir/parser.h"

namespace hostir {

tool::ToolError tool::programError(const SourceProgram& source, const Diagnostic& diag) {
  return ToolError{kProgramError, renderDiagnostic(diag, source.path, source.text)};
}

tool::ToolError tool::toolError(const api::Error& error) {
  std::string text = error.what();
  if (!text.ends_with('\n')) text += '\n';
  return ToolError{error.kind() == api::ErrorKind::Usage ? kUsageError : kProgramError, std::move(text)};
}

tool::ToolResult<SourceProgram> loadProgram(const std::string& path) {
  auto text = readProgramFile(path);
  if (!text) return tool::ToolError{tool::kProgramError, renderDiagnostic(text.error(), programDisplayName(path))};
  SourceProgram source;
  source.path = programDisplayName(path);
  source.text = std::move(*text);
  auto parsed = parseProgram(source.text);
  if (!parsed) return tool::programError(source, parsed.error());
  source.program = std::move(*parsed);
  return source;
}

tool::ToolResult<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> settings;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      return tool::ToolError{tool::kUsageError, fmt::format("error: --set expects NAME=VALUE, got '{}'\n", item)};
    std::string_view value = std::string_view(item).substr(eq + 1);
    int64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || number < 0)
      return tool::ToolError{
          tool::kUsageError,
          fmt::format("error: --set {}: '{}' is not a non-negative integer that fits in 64 bits\n", name, value)};
    // Two values for one parameter are a mistake, not "the last wins".
    if (!settings.emplace(name, number).second)
      return tool::ToolError{tool::kUsageError,
                             fmt::format("error: --set {} is given twice; give each parameter once\n", name)};
  }
  return settings;
}

}  // namespace hostir
