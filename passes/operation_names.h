// What an operation names and which buffers it touches, as the passes that
// move operations need to know: a moved operation takes the definitions of
// the names it reads with it, and keeps its order with every operation that
// touches a buffer it writes.
#pragma once

#include <map>
#include <set>
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

// The buffer each tensor name is a view of (itself when it is not a view).
using Roots = std::map<std::string, std::string>;
std::string rootOf(const Roots& roots, const std::string& name);
// Records the view `op` defines, when it is one (shard_by_stream).
void recordView(Roots& roots, const Operation& op);

// The buffers an operation reads and writes (by root), from the op table;
// a tensor result counts as a write of its own name.
void accessesOf(const Operation& op, const Roots& roots, std::set<std::string>& reads, std::set<std::string>& writes);

// Every buffer (by root) that some operation of `body`, nested ones
// included, may write. Names are not scoped: a name that a nested scope
// redefines counts as the outer one, which can only add buffers.
std::set<std::string> buffersWrittenBy(const std::vector<Statement>& body);

}  // namespace hostir
