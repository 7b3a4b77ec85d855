// The one exception type of the hostir API. Every failure of a call (a bad
// program, a race, a failed run, a bad argument, a handle used after its
// runtime was reset) throws hostir::api::Error; nothing else escapes but
// std::bad_alloc where the caller's own memory runs out.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace hostir::api {

enum class ErrorKind {
  Program,  // the program does not parse or verify (a position in its source)
  Check,    // the program check found races, uninitialized reads or mismatched communications
  Run,      // a rank failed while running; the first failing rank's reason
  Usage,    // a bad argument to an API call (unknown pass, parameter or tensor name, wrong buffer shape)
  Runtime,  // a Stream or Event used after its Runtime was reset, or no device for the request
};

// A note that explains a finding ("the other access", "rank 1 issues ...
// here"), with its position (file empty, line and column 0: none).
struct FindingNote {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;
};

// One thing an error reports: a check error has one per race, uninitialized
// read or mismatch; any other error has exactly one.
struct Finding {
  std::string file;  // empty, with line and column 0, when it has no position
  int line = 0;
  int column = 0;
  std::string severity = "error";  // "error", or "remark" and "note" in reports that have them
  std::string message;
  std::vector<FindingNote> notes;
};

class Error : public std::runtime_error {
 public:
  // `rendered` is what what() returns: "file:line:col: error: message",
  // then the source line and a caret, where the error has a position. The
  // error has one finding: this message at this position.
  Error(ErrorKind kind, std::string message, std::string rendered, std::string file = {}, int line = 0, int column = 0);
  // An error of several findings; its position is the first positioned
  // finding's.
  Error(ErrorKind kind, std::string message, std::string rendered, std::vector<Finding> findings);

  ErrorKind kind() const noexcept { return kind_; }
  // The message without its position.
  const std::string& message() const noexcept { return message_; }
  // Where the error is: the program's file (or the name given to its text);
  // empty, with line and column 0, when the error has no position.
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  // Every finding, in the order what() reports them; never empty.
  const std::vector<Finding>& findings() const noexcept { return findings_; }

 private:
  ErrorKind kind_;
  std::string message_;
  std::string file_;
  int line_;
  int column_;
  std::vector<Finding> findings_;
};

}  // namespace hostir::api
