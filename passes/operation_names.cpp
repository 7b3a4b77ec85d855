#include "passes/operation_names.h"

namespace hostir {

std::vector<std::string> namesUsedBy(const Operation& op) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name, SourceLoc) { names.push_back(name); };
  for (const std::optional<Arg>& arg : op.operands) {
    if (!arg) continue;
    if (arg->form == Arg::Form::Type) {
      for (const Expr& dim : arg->type.dims) forEachName(dim, add);
    } else {
      forEachName(arg->expr, add);
      if (arg->isElement()) forEachName(arg->index, add);
    }
  }
  return names;
}

bool namesArrayElement(const Operation& op) {
  for (const NameDef& result : op.results)
    if (result.isElement()) return true;
  for (const std::optional<Arg>& arg : op.operands)
    if (arg && arg->isElement()) return true;
  return false;
}

}  // namespace hostir
