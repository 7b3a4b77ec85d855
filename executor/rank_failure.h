// What a rank's failure says: the Diagnostic a caught exception stands for,
// and the text the rank aborts its team with. The rank session (a failure
// on the host) and the CPU backend (a failure on a stream's thread) abort
// with the same text, so under mpirun, where the aborting rank's message is
// the only one that reaches the user, an error keeps its position wherever
// it was raised.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "ir/diagnostic.h"

namespace hostir {

// Renders a rank's failure for Communicator::abort ("p.hir:9:7: error: ...",
// with the source line); unset, the abort says the plain message.
using DescribeFailure = std::function<std::string(const Diagnostic&)>;

// What a failure that escaped a rank's run means to a user: a positioned
// DiagnosticError keeps its position, std::bad_alloc becomes "out of memory
// while running the program", anything else its what().
Diagnostic failureDiagnostic(std::exception_ptr error);

// The text to abort the team with: `describe`'s rendering of `diag`, or its
// plain message when `describe` is unset or itself fails.
std::string abortReason(const Diagnostic& diag, const DescribeFailure& describe);

}  // namespace hostir
