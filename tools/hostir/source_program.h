// A program read from a file together with its text, so every error the
// tool prints can show FILE:LINE:COL, the line and a caret.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir.h"
#include "hostir/verifier.h"
#include "tools/hostir/exit_codes.h"

namespace hostir {

struct SourceProgram {
  std::string path;
  std::string text;
  Program program;

  // The diagnostic against this file: FILE:LINE:COL, the line and a caret.
  std::string render(const Diagnostic& diag) const;
  // The same, as the error of a step (exit code 1: a bad program).
  tool::ToolError error(const Diagnostic& diag) const;
};

// The largest program file hostir reads. Real programs are a few KiB; the
// limit keeps a mistaken argument (a data file, /dev/zero, a FIFO that never
// ends) from filling memory, and bounds what the parser and verifier see.
inline constexpr size_t kMaxProgramFileBytes = size_t{16} << 20;  // 16 MiB

// Reads and parses `path`; on failure the error, rendered against the file.
// Refuses directories and files over kMaxProgramFileBytes, reading at most
// one byte more than the limit from anything that is not a regular file.
tool::ToolResult<SourceProgram> loadProgram(const std::string& path);

// Parses `--set NAME=VALUE` items; on failure why (a usage error).
tool::ToolResult<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items);

}  // namespace hostir
