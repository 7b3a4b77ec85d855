// The defaults every layer shares, named once: the library, the command
// line and the Python module all take them from here.
#pragma once

#include <chrono>
#include <cstdint>

namespace hostir {

// The worker stream pool a program is proved and run with (`--streams`).
inline constexpr int64_t kDefaultStreams = 4;

// The predicted gain, as a fraction of the time before, that a pass's
// scheduling change must reach (`--min-gain`).
inline constexpr double kDefaultMinimumGain = 0.05;

// How long a communication may take before the run fails (`--comm-timeout`).
inline constexpr double kDefaultCommTimeoutSeconds = 300;
inline constexpr std::chrono::milliseconds kDefaultCommTimeout{static_cast<int64_t>(kDefaultCommTimeoutSeconds * 1000)};

// The largest trace a run records, in MiB (`--trace-limit`).
inline constexpr uint64_t kDefaultTraceLimitMiB = 256;

}  // namespace hostir
