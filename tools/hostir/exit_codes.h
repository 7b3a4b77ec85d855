// The exit codes of `hostir` (docs/hostir-language.md, "Exit codes"), and
// the error value of the tool's steps: an exit code with the text to print.
//
// The tool's steps return their errors as values (ToolError) and never
// print; each command prints them at one place, once it knows which rank
// prints.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "hostir/error.h"

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
class [[nodiscard]] ToolResult {
 public:
  ToolResult(T value) : state_(std::move(value)) {}
  ToolResult(ToolError error) : state_(std::move(error)) {}

  explicit operator bool() const { return state_.index() == 0; }
  T& operator*() { return std::get<0>(state_); }
  const T& operator*() const { return std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  const ToolError& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, ToolError> state_;
};

// Success (nullopt), or the ToolError of a step that produces nothing.
using ToolStatus = std::optional<ToolError>;

// An API error as the tool's: a bad argument is a usage error, anything else a bad program or run.
ToolError toolError(const api::Error& error);

}  // namespace hostir::tool
