// Hands out names for what passes insert: the base name itself when free,
// else base_1, base_2, ...
#pragma once

#include <string>
#include <unordered_set>

#include "ir/ir.h"

namespace hostir {

class FreshNames {
 public:
  explicit FreshNames(const Program& program);
  // A name no statement of the program uses anywhere.
  std::string take(const std::string& base);
  // An index for a new top-level loop: it must only avoid the names visible
  // at the top level, since loop bodies are scopes of their own.
  std::string takeForLoopIndex(const std::string& base);

 private:
  std::string firstFree(const std::string& base, const std::unordered_set<std::string>& avoid) const;
  std::unordered_set<std::string> used_;
  std::unordered_set<std::string> topLevel_;
};

}  // namespace hostir
