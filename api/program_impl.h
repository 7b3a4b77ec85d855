// Inside the library: a Program is a ProgramSource, its IR with the text and
// the name that positions refer to; errors become hostir::api::Error here,
// at one place.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "hostir/error.h"
#include "hostir/program.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/verifier.h"

namespace hostir::api {

// A program with its text and the name its positions refer to: what the
// library's steps (passes, proof, prediction, run preparation) and the
// command line work on, and what a public Program holds.
struct ProgramSource {
  std::string path;  // the file, or the name given to the text
  std::string text;
  hostir::Program program;
};

struct Program::Impl : ProgramSource {};

// The diagnostic against the program's source, as an Error of `kind`.
Error diagnosticError(ErrorKind kind, const Diagnostic& diag, std::string_view path, std::string_view text = {});
// An error without a position: what() is "error: MESSAGE".
Error plainError(ErrorKind kind, std::string message);

// The team size and parameter values the program is verified for; throws
// Error (Usage: ranks < 1 or streams < 1; Program: an unknown parameter or
// a failed verification, with its position).
Bindings verifiedBindings(const ProgramSource& program, const Params& params, int64_t ranks);
void checkStreams(int64_t streams);
// Every parameter's value for these bindings (defaults filled in).
std::map<std::string, int64_t> boundParams(const ProgramSource& program, const Bindings& bindings);

}  // namespace hostir::api
