// Source positions and error values. Errors travel as values (Diagnostic)
// until the CLI prints them; nothing in the library aborts on bad input.
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

struct Diagnostic {
  SourceLoc loc;
  std::string message;
  std::vector<Note> notes = {};  // printed after the error, in order
};

enum class Severity { Error, Note, Remark };

// The single line "FILE:LINE:COL: error: MESSAGE", then the source line and a
// caret under the column when the source text is known, then each note the
// same way ("FILE:LINE:COL: note: ...").
std::string renderDiagnostic(const Diagnostic& diag, std::string_view file,
                             std::string_view source = {});

// One positioned line of any severity, with its source line and caret.
std::string renderMessage(Severity severity, SourceLoc loc, std::string_view message, std::string_view file,
                          std::string_view source = {});

// Status: success or one diagnostic.
using Status = std::optional<Diagnostic>;

// A value or the diagnostic that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Diagnostic diag) : state_(std::move(diag)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Diagnostic& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Diagnostic> state_;
};

// Thrown only inside the library (parser, verifier) to unwind to the public
// entry point, which turns it into a Diagnostic value.
struct DiagnosticError {
  Diagnostic diag;
};

[[noreturn]] inline void fail(SourceLoc loc, std::string message) {
  throw DiagnosticError{Diagnostic{loc, std::move(message)}};
}

}  // namespace hostir
