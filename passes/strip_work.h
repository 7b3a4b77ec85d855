// Removing operations from a program, for the benchmark variants of
// strip-communication and strip-compute.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace hostir {

// Erases every operation of `body`, nested loops, with blocks and if
// branches included, that `erase` selects. Blocks stay, even when left empty.
void eraseOperationsIf(std::vector<Statement>& body, const std::function<bool(const Operation&)>& erase);

}  // namespace hostir
