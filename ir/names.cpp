#include "ir/names.h"

namespace hostir {

bool isBuiltinName(std::string_view name) {
  for (std::string_view builtin : kBuiltinNames)
    if (builtin == name) return true;
  return false;
}

NameResolver::NameResolver() {
  openScope();
  static_assert(kRankSlot == 0 && kWorldSlot == 1, "the builtins take the first slots, in kBuiltinNames order");
  for (std::string_view builtin : kBuiltinNames) define(std::string(builtin), ValueKind::Int);
}

const NameSlot* NameResolver::lookup(const std::string& name) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->names.find(name);
    if (it != scope->names.end()) return &it->second;
  }
  return nullptr;
}

const NameSlot& NameResolver::define(const std::string& name, ValueKind kind, SourceLoc loc) {
  NameSlot& slot = scopes_.back().names[name];
  slot = NameSlot{next_++, kind, loc};
  return slot;
}

void NameResolver::openScope() { scopes_.push_back(Scope{{}, next_}); }

void NameResolver::closeScope(bool reuseSlots) {
  if (reuseSlots) next_ = scopes_.back().firstSlot;
  scopes_.pop_back();
}

}  // namespace hostir
