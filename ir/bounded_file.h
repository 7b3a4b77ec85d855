// Reading a whole input file safely: a size bound, no blocking on a FIFO
// without a writer, directories refused, and never more than one byte past
// the bound read from something that has no size (a pipe, /dev/zero).
// Programs (api/program_file.h) and machine profiles (model/) read alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/diagnostic.h"

namespace hostir {

// The whole text of `path` ("-": a copy of standard input), at most
// `maxBytes` (a whole number of MiB), or why it cannot be had: a
// diagnostic without a position whose message names `what` ("program",
// "profile"): "cannot open the profile: ...", "the profile is longer than
// 16 MiB; hostir reads profile files of at most 16 MiB".
Result<std::string> readBoundedFile(const std::string& path, uint64_t maxBytes, std::string_view what);

}  // namespace hostir
