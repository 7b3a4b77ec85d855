// The defaults every layer shares, named once: the library, the command
// line and the Python module all take them from here.
#pragma once

#include <cstdint>

namespace hostir {

// The worker stream pool a program is proved and run with (`--streams`).
inline constexpr int64_t kDefaultStreams = 4;

}  // namespace hostir
