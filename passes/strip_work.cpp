#include "passes/strip_work.h"

#include <algorithm>

namespace hostir {

void eraseOperationsIf(std::vector<Statement>& body, const std::function<bool(const Operation&)>& erase) {
  std::erase_if(body, [&](const Statement& s) { return s.isOp() && erase(s.op()); });
  for (Statement& s : body)
    for (std::vector<Statement>& nested : s.nestedBodies()) eraseOperationsIf(nested, erase);
}

}  // namespace hostir
