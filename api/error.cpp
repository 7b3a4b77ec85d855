#include "hostir/error.h"

#include <utility>

namespace hostir::api {

Error::Error(ErrorKind kind, std::string message, std::string rendered, std::string file, int line, int column)
    : std::runtime_error(std::move(rendered)),
      kind_(kind),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line),
      column_(column) {}

}  // namespace hostir::api
