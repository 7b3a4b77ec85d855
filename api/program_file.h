// Reading a program file safely: a size bound, no blocking on FIFOs,
// directories refused. Shared by the API and the command line.
#pragma once

#include <cstddef>
#include <string>

#include "ir/diagnostic.h"

namespace hostir {

// The largest program file hostir reads. Real programs are a few KiB; the
// limit keeps a mistaken argument (a data file, /dev/zero, a FIFO that never
// ends) from filling memory, and bounds what the parser and verifier see.
inline constexpr size_t kMaxProgramFileBytes = size_t{16} << 20;  // 16 MiB

// The path that names standard input, as the command line's `-`.
inline constexpr const char* kStandardInput = "-";
// How messages name a program read from `path`: "<stdin>" for "-".
inline std::string programDisplayName(const std::string& path) { return path == kStandardInput ? "<stdin>" : path; }

// The whole text of `path` ("-": standard input), or why it cannot be had
// (a diagnostic without a position). Reads at most one byte more than the limit from anything that
// is not a regular file.
Result<std::string> readProgramFile(const std::string& path);

}  // namespace hostir
