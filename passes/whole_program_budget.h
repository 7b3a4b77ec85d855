// The work a pass may spend proving or predicting the whole program again
// for each rewrite it considers (hostir/limits.h, kMaxPassWholeProgramWork):
// each proof costs the program's statements. A pass takes from it before
// each proof; once it is spent, the pass leaves the rest as it is and
// warns, once, at the first statement it left, so that it never runs for
// minutes on a long program.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/ir.h"
#include "passes/pass.h"

namespace hostir {

class WholeProgramBudget {
 public:
  explicit WholeProgramBudget(const Program& program);

  // Takes `proofs` whole-program proofs or predictions; false, with the
  // warning at `loc` the first time, once the budget cannot pay for them.
  bool take(int64_t proofs, const PassContext& context, std::string_view pass, SourceLoc loc, std::string_view what);

 private:
  int64_t statements_;
  int64_t spent_ = 0;
  bool warned_ = false;
};

}  // namespace hostir
