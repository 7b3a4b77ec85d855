// Hands out names no statement of a program uses yet: the base name itself
// when free, else base_1, base_2, ... Passes use it for what they insert.
#pragma once

#include <string>
#include <unordered_set>

#include "hostir/ir.h"

namespace hostir {

class FreshNames {
 public:
  explicit FreshNames(const Program& program);
  std::string take(const std::string& base);

 private:
  std::unordered_set<std::string> used_;
};

}  // namespace hostir
