#include "passes/fresh_names.h"

namespace hostir {

FreshNames::FreshNames(const Program& program) {
  for (const Param& p : program.params) used_.insert(p.name);
  for (const Decl& d : program.decls) used_.insert(d.name);
  walkStatements(program.body, [&](const Statement& s) {
    if (s.isFor()) {
      used_.insert(s.loop().index.name);
      return;
    }
    for (const NameDef& r : s.op().results) used_.insert(r.name);
  });
}

std::string FreshNames::take(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; used_.count(name) || isReservedName(name); ++suffix) name = base + "_" + std::to_string(suffix);
  used_.insert(name);
  return name;
}

}  // namespace hostir
