// The canonical .hir printer: parse(printProgram(p)) == p, and printing the
// result again changes nothing.
#pragma once

#include <string>

#include "ir/ir.h"

namespace hostir {

std::string printProgram(const Program& program);
std::string printStatement(const Statement& stmt, int indent = 0);

}  // namespace hostir
