#include "passes/whole_program_budget.h"

#include <fmt/format.h>

#include <algorithm>

#include "hostir/limits.h"

namespace hostir {

WholeProgramBudget::WholeProgramBudget(const Program& program) : statements_(0) {
  walkStatements(program.body, [&](const Statement&) { ++statements_; });
  statements_ = std::max<int64_t>(statements_, 1);
}

bool WholeProgramBudget::take(int64_t proofs, const PassContext& context, std::string_view pass, SourceLoc loc,
                              std::string_view what) {
  if (spent_ + proofs * statements_ <= kMaxPassWholeProgramWork) {
    spent_ += proofs * statements_;
    return true;
  }
  if (!warned_) {
    warned_ = true;
    context.warn(pass, loc,
                 fmt::format("{}: the pass reached its limit of whole-program proofs ({} for a program of {} "
                             "statements)",
                             what, spent_ / statements_, statements_));
  }
  return false;
}

}  // namespace hostir
