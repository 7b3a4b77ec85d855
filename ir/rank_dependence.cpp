#include "ir/rank_dependence.h"

#include "ir/mesh.h"
#include "ir/names.h"

namespace hostir {

bool namesRank(const Program& program) {
  bool found = false;
  auto scan = [&](const Expr& e) {
    if (!found && !e.empty())
      forEachName(e, [&](const std::string& name, SourceLoc) {
        found |= name == kBuiltinNames[kRankSlot] || isMeshCoordName(name);
      });
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
    if (s.isIf()) {
      // A branch on `rank` issues different work on different ranks.
      forEachExpr(s.ifBlock().cond, scan);
      return;
    }
    for (const NameDef& result : s.op().results) scan(result.index);
    for (const auto& arg : s.op().operands) {
      if (!arg) continue;
      scan(arg->expr);
      scan(arg->index);
      for (const Expr& dim : arg->type.dims) scan(dim);
      for (const Expr& item : arg->items) scan(item);
    }
  });
  return found;
}

}  // namespace hostir
