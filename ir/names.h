// Scoped name resolution, written once and shared by the verifier and the
// evaluator's compiler: every visible name maps to a typed slot, an index
// into a flat array of values. The builtins `rank` and `world` are ordinary
// integer names, declared here in the outermost scope (slots kRankSlot and
// kWorldSlot); params, inputs, loop indices and results follow in the order
// their walk defines them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ops.h"

namespace hostir {

// What a name is bound to and where its value lives.
struct NameSlot {
  int32_t slot = -1;
  ValueKind kind = ValueKind::Int;
  SourceLoc loc;  // where the name is defined; invalid for builtins
};

// The integers every program can read: this rank's number and the team size.
inline constexpr int32_t kRankSlot = 0;
inline constexpr int32_t kWorldSlot = 1;
inline constexpr std::array<std::string_view, 2> kBuiltinNames = {"rank", "world"};
bool isBuiltinName(std::string_view name);

class NameResolver {
 public:
  // Opens the outermost scope with the builtins.
  NameResolver();

  // The innermost visible definition of `name`, or null.
  const NameSlot* lookup(const std::string& name) const;
  // Binds `name` in the innermost scope to the next slot, replacing a
  // binding of the same scope. Callers that must refuse redefinitions look
  // the name up first.
  const NameSlot& define(const std::string& name, ValueKind kind, SourceLoc loc = {});
  // A slot no name refers to (a loop's bound).
  int32_t anonymousSlot() { return next_++; }
  bool isBuiltin(const NameSlot& slot) const { return slot.slot == kRankSlot || slot.slot == kWorldSlot; }

  void openScope();
  // Closes the innermost scope. With reuseSlots its slots are given back, so
  // that a walk which runs one scope many times (the verifier's unrolled
  // loops) needs no new slots per run; the evaluator keeps every slot.
  void closeScope(bool reuseSlots = false);

  // Slots handed out so far (the size of a value array that holds them all).
  size_t slotCount() const { return static_cast<size_t>(next_); }

 private:
  struct Scope {
    std::unordered_map<std::string, NameSlot> names;
    int32_t firstSlot;
  };
  std::vector<Scope> scopes_;
  int32_t next_ = 0;
};

}  // namespace hostir
