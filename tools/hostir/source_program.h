// A program read from a file together with its text, so every error the
// tool prints can show FILE:LINE:COL, the line and a caret.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/program_file.h"
#include "api/program_impl.h"
#include "ir/ir.h"
#include "ir/verifier.h"
#include "tools/hostir/exit_codes.h"

namespace hostir {

// The library's program with its text (path, text, program).
using SourceProgram = api::ProgramSource;

namespace tool {
// The diagnostic against the program's file (FILE:LINE:COL, the line and a
// caret), as the error of a step (exit code 1: a bad program).
ToolError programError(const SourceProgram& source, const Diagnostic& diag);
}  // namespace tool

// Reads and parses `path`; on failure the error, rendered against the file.
// Refuses directories and files over kMaxProgramFileBytes, reading at most
// one byte more than the limit from anything that is not a regular file.
tool::ToolResult<SourceProgram> loadProgram(const std::string& path);

}  // namespace hostir
