#include "tools/hostir/exit_codes.h"

namespace hostir::tool {

ToolError toolError(const api::Error& error) {
  std::string text = error.what();
  if (!text.ends_with('\n')) text += '\n';
  return ToolError{error.kind() == api::ErrorKind::Usage ? kUsageError : kProgramError, std::move(text)};
}

}  // namespace hostir::tool
