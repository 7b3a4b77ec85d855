#include "ir/rank_dependence.h"

#include "ir/names.h"

namespace hostir {

bool namesRank(const Program& program) {
  bool found = false;
  auto scan = [&](const Expr& e) {
    if (!found) forEachName(e, [&](const std::string& name, SourceLoc) { found |= name == kBuiltinNames[kRankSlot]; });
  };
  for (const Decl& d : program.decls)
    for (const Expr& dim : d.type.dims) scan(dim);
  walkStatements(program.body, [&](const Statement& s) {
    if (s.isFor()) {
      scan(s.loop().start);
      scan(s.loop().end);
      return;
    }
    if (s.isWith()) {
      scan(s.with().stream.expr);
      return;
    }
    for (const auto& arg : s.op().operands) {
      if (!arg) continue;
      scan(arg->expr);
      for (const Expr& dim : arg->type.dims) scan(dim);
    }
  });
  return found;
}

}  // namespace hostir
