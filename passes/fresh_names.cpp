#include "passes/fresh_names.h"

namespace hostir {

namespace {

// Names `body` defines where `body` is visible: with blocks open no scope
// (loop bodies and if branches do).
void addVisibleDefinitions(const std::vector<Statement>& body, std::unordered_set<std::string>& names) {
  for (const Statement& s : body) {
    if (s.isOp())
      for (const NameDef& r : s.op().results) names.insert(r.name);
    else if (s.isWith())
      addVisibleDefinitions(s.with().body, names);
  }
}

}  // namespace

FreshNames::FreshNames(const Program& program) {
  for (const Param& p : program.params) topLevel_.insert(p.name);
  for (const Decl& d : program.decls) topLevel_.insert(d.name);
  addVisibleDefinitions(program.body, topLevel_);
  used_ = topLevel_;
  walkStatements(program.body, [&](const Statement& s) {
    if (s.isFor()) used_.insert(s.loop().index.name);
    if (!s.isOp()) return;
    for (const NameDef& r : s.op().results) {
      used_.insert(r.name);
      // A handle or event array is visible everywhere after its definition.
      if (r.isElement()) topLevel_.insert(r.name);
    }
  });
}

std::string FreshNames::firstFree(const std::string& base, const std::unordered_set<std::string>& avoid) const {
  std::string name = base;
  for (int suffix = 1; avoid.count(name) || isReservedName(name); ++suffix) name = base + "_" + std::to_string(suffix);
  return name;
}

std::string FreshNames::take(const std::string& base) {
  std::string name = firstFree(base, used_);
  used_.insert(name);
  topLevel_.insert(name);
  return name;
}

std::string FreshNames::takeForLoopIndex(const std::string& base) {
  std::string name = firstFree(base, topLevel_);
  used_.insert(name);
  topLevel_.insert(name);
  return name;
}

}  // namespace hostir
