// Source positions and error values. Errors travel as values (Diagnostic,
// Status, Result<T>) until the tool prints them; nothing in the library
// prints, or aborts on bad input. Exceptions stay inside a stated boundary:
// DiagnosticError unwinds the parser, the verifier and the evaluator to
// their public entry point, which turns it into a value (the runner does
// the same for everything a rank's run throws: runner.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hostir {

// 1-based line and column of a token; line 0 means "no position" (built in C++).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

// A positioned remark that explains an error: "the '{' opened here", "the
// other access", "rank 1 issues ... here".
struct Note {
  SourceLoc loc;
  std::string message;
};

enum class Severity { Error, Warning, Note, Remark };

struct Diagnostic {
  SourceLoc loc;
  std::string message;
  std::vector<Note> notes = {};  // printed after the diagnostic, in order
  Severity severity = Severity::Error;
};

// The single line "FILE:LINE:COL: SEVERITY: MESSAGE" ("error" unless the
// diagnostic says otherwise), then the source line and a caret under the
// column when the source text is known, then each note the same way
// ("FILE:LINE:COL: note: ...").
std::string renderDiagnostic(const Diagnostic& diag, std::string_view file, std::string_view source = {});

// One positioned line of any severity, with its source line and caret.
std::string renderMessage(Severity severity, SourceLoc loc, std::string_view message, std::string_view file,
                          std::string_view source = {});

// Status: success or one diagnostic.
using Status = std::optional<Diagnostic>;

// A value or the error (by default a diagnostic) that explains why there is
// none. The tool uses it with its own error type (tools/hostir/exit_codes.h).
template <typename T, typename E = Diagnostic>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(E error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

// Thrown only inside the library (parser, verifier, evaluator) to unwind to
// the public entry point, which turns it into a Diagnostic value.
struct DiagnosticError {
  Diagnostic diag;
};

[[noreturn]] inline void fail(SourceLoc loc, std::string message) {
  throw DiagnosticError{Diagnostic{loc, std::move(message)}};
}

}  // namespace hostir
