// What names an operation reads, as the passes that move operations need to
// know: a moved operation takes the definitions of these names with it.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace hostir {

// Every name the operation's operands mention: tensors, streams, handles,
// and the names in its integer expressions and types.
std::vector<std::string> namesUsedBy(const Operation& op);

// Whether the operation defines or names an element of a handle or event
// array: such a handle may be waited in another iteration or after the
// statements a pass looks at, which the pass cannot see.
bool namesArrayElement(const Operation& op);

}  // namespace hostir
