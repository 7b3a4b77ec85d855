#include "hostir/error.h"

#include <utility>

namespace hostir::api {

Error::Error(ErrorKind kind, std::string message, std::string rendered, std::string file, int line, int column)
    : std::runtime_error(std::move(rendered)),
      kind_(kind),
      message_(std::move(message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      findings_{Finding{file_, line_, column_, "error", message_, {}}} {}

Error::Error(ErrorKind kind, std::string message, std::string rendered, std::vector<Finding> findings)
    : std::runtime_error(std::move(rendered)),
      kind_(kind),
      message_(std::move(message)),
      line_(0),
      column_(0),
      findings_(std::move(findings)) {
  if (findings_.empty()) findings_.push_back(Finding{{}, 0, 0, "error", message_, {}});
  for (const Finding& finding : findings_) {
    if (finding.line == 0) continue;
    file_ = finding.file;
    line_ = finding.line;
    column_ = finding.column;
    break;
  }
}

}  // namespace hostir::api
