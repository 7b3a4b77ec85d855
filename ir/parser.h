// The .hir parser: text to Program, or the first error with its position.
// It checks the grammar and each operation's operand list against its
// signature; names, kinds, scopes and shapes are the verifier's job.
#pragma once

#include <string_view>

#include "ir/ir.h"

namespace hostir {

Result<Program> parseProgram(std::string_view source);

// Parses one integer expression (used for `--set` values and tests).
Result<Expr> parseExpr(std::string_view source);

}  // namespace hostir
