#include "tools/hostir/source_program.h"

#include <fmt/format.h>

#include "api/program_file.h"
#include "ir/parser.h"

namespace hostir {

tool::ToolError tool::programError(const SourceProgram& source, const Diagnostic& diag) {
  return ToolError{kProgramError, renderDiagnostic(diag, source.path, source.text)};
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

}  // namespace hostir
