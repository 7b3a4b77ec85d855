// A program read from a file together with its text, so every error the
// tool prints can show FILE:LINE:COL, the line and a caret.
#pragma once

#include <map>
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

// Reads and parses `path`; on failure prints the error and returns nullopt.
std::optional<SourceProgram> loadProgram(const std::string& path);

// Parses `--set NAME=VALUE` items; on failure prints why and returns nullopt.
std::optional<std::map<std::string, int64_t>> parseSettings(const std::vector<std::string>& items);

}  // namespace hostir
