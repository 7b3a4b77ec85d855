// Reading a program file safely: a size bound, no blocking on FIFOs,
// directories refused. Shared by the API and the command line.
#pragma once

#include <cstddef>
#include <string>

#include "hostir/limits.h"
#include "ir/diagnostic.h"

namespace hostir {

// The path that names standard input, as the command line's `-`.
inline constexpr const char* kStandardInput = "-";
// How messages name a program read from `path`: "<stdin>" for "-".
inline std::string programDisplayName(const std::string& path) { return path == kStandardInput ? "<stdin>" : path; }

// The whole text of `path` ("-": standard input), or why it cannot be had
// (a diagnostic without a position). Reads at most one byte more than the limit from anything that
// is not a regular file.
Result<std::string> readProgramFile(const std::string& path);

}  // namespace hostir
