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

namespace hostir {

struct SourceProgram {
  std::string path;
  std::string text;
  Program program;

  // Prints the diagnostic against this file to stderr.
  void report(const Diagnostic& diag) const;
};

// The largest program file hostir reads. Real programs are a few KiB; the
// limit keeps a mistaken argument (a data file, /dev/zero, a FIFO that never
// ends) from filling memory, and bounds what the parser and verifier see.
inline constexpr size_t kMaxProgramFileBytes = size_t{16} << 20;  // 16 MiB

// Reads and parses `path`; on failure prints the error and returns nullopt.
// Refuses directories and files over kMaxProgramFileBytes, reading at most
// one byte more than the limit from anything that is not a regular file.
std::optional<SourceProgram> loadProgram(const std::string& path);

// Parses `--set NAME=VALUE` items; on failure prints why and returns nullopt.
std::optional<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items);

}  // namespace hostir
