#include "executor/rank_failure.h"

#include <new>
#include <stdexcept>

namespace hostir {

Diagnostic failureDiagnostic(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const DiagnosticError& e) {
    return e.diag;
  } catch (const std::bad_alloc&) {
    return Diagnostic{{}, "out of memory while running the program"};
  } catch (const std::exception& e) {
    return Diagnostic{{}, e.what()};
  } catch (...) {
    return Diagnostic{{}, "unknown error"};
  }
}

std::string abortReason(const Diagnostic& diag, const DescribeFailure& describe) {
  if (describe) {
    try {
      return describe(diag);
    } catch (...) {  // the plain message, then
    }
  }
  return diag.message;
}

}  // namespace hostir
