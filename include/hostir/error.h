// The one exception type of the hostir API. Every failure of a call (a bad
// program, a race, a failed run, a bad argument, a handle used after its
// runtime was reset) throws hostir::api::Error; nothing else escapes but
// std::bad_alloc where the caller's own memory runs out.
#pragma once

#include <stdexcept>
#include <string>

namespace hostir::api {

enum class ErrorKind {
  Program,  // the program does not parse or verify (a position in its source)
  Check,    // the program check found races, uninitialized reads or mismatched communications
  Run,      // a rank failed while running; the first failing rank's reason
  Usage,    // a bad argument to an API call (unknown pass, parameter or tensor name, wrong buffer shape)
  Runtime,  // a Stream or Event used after its Runtime was reset, or no device for the request
};

class Error : public std::runtime_error {
 public:
  // `rendered` is what what() returns: "file:line:col: error: message",
  // then the source line and a caret, where the error has a position.
  Error(ErrorKind kind, std::string message, std::string rendered, std::string file = {}, int line = 0, int column = 0);

  ErrorKind kind() const noexcept { return kind_; }
  // The message without its position.
  const std::string& message() const noexcept { return message_; }
  // Where the error is: the program's file (or the name given to its text);
  // empty, with line and column 0, when the error has no position.
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }

 private:
  ErrorKind kind_;
  std::string message_;
  std::string file_;
  int line_;
  int column_;
};

}  // namespace hostir::api
