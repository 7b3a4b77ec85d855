// The exit codes of `hostir` (docs/hostir-language.md, "Exit codes"), and
// the error value of the tool's steps: an exit code with the text to print.
//
// The tool's steps return their errors as values (ToolError, or the
// library's Diagnostic where no rendering is needed yet) and never print;
// each command prints them at one place, once it knows which rank prints.
#pragma once

#include <optional>
#include <string>

#include "hostir/error.h"
#include "ir/diagnostic.h"

namespace hostir::tool {

// No other value leaves the process: every command's result, every rank's
// exit and every abort uses one of these.
enum ExitCode : int {
  kSuccess = 0,
  kProgramError = 1,    // a bad program or input, a race, a failed run
  kUsageError = 2,      // a bad command line
  kInternalError = 70,  // EX_SOFTWARE: an internal error (a bug), reported instead of a crash
};

// A failed step: its exit code and its message, already rendered (one or
// more lines, each ending in '\n', as they are to be printed to stderr).
struct ToolError {
  ExitCode exitCode = kProgramError;
  std::string text;
};

// A value or the ToolError that explains why there is none.
template <typename T>
using ToolResult = Result<T, ToolError>;

// Success (nullopt), or the ToolError of a step that produces nothing; as
// Status is to Diagnostic.
using ToolStatus = std::optional<ToolError>;

// An API error as the tool's: a bad argument is a usage error, anything else a bad program or run.
ToolError toolError(const api::Error& error);

}  // namespace hostir::tool
