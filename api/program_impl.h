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

// A program bound to the caller's parameter values: its float and dtype
// parameters' values in place in its operands and types (bindValueParams),
// its integer parameters' values and the team size in `bindings`.
struct BoundProgram {
  ProgramSource source;
  Bindings bindings;
  std::map<std::string, ValueParam> values;  // every float and dtype parameter's value
};

// The program bound to `params` for `ranks` ranks and verified; throws Error
// (Usage: ranks out of range, an unknown parameter or a value of the wrong
// kind; Program: a failed verification, with its position).
BoundProgram verifiedProgram(const ProgramSource& program, const Params& params, int64_t ranks);
void checkStreams(int64_t streams);
// Every parameter's value for these bindings (defaults filled in).
std::map<std::string, int64_t> boundParams(const ProgramSource& program, const Bindings& bindings);

}  // namespace hostir::api
