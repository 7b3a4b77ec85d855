// The bounds of every option's numbers, named once: the command line checks
// them as it parses, the API and the Python module as they are called, and
// the verifier where a program states them (proved_for).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostir {

// The largest team and worker stream pool (`--ranks`, `--streams`).
inline constexpr int64_t kMaxRanks = 1024;
inline constexpr int64_t kMaxStreams = 1024;
// `--warmup` and `--repeat`.
inline constexpr int kMaxRuns = 1'000'000;
// `--comm-timeout`, in seconds: a deadline below a millisecond is shorter
// than the host takes to notice it.
inline constexpr double kMinCommTimeoutSeconds = 1e-3;
inline constexpr double kMaxCommTimeoutSeconds = 1e6;
// `--cores-per-rank`.
inline constexpr int kMaxCoresPerRank = 1024;
// `--trace-limit`, in MiB.
inline constexpr uint64_t kMaxTraceLimitMiB = uint64_t{1} << 20;
// `--inject-delays`, in microseconds.
inline constexpr uint32_t kMaxInjectedDelayMicros = 1'000'000;
// `--min-gain`, a fraction of the time before.
inline constexpr double kMinMinimumGain = 0.0;
inline constexpr double kMaxMinimumGain = 1.0;
// The largest program file hostir reads. Real programs are a few KiB; the
// limit keeps a mistaken argument (a data file, /dev/zero, a FIFO that never
// ends) from filling memory, and bounds what the parser and verifier see.
inline constexpr uint64_t kMaxProgramFileBytes = uint64_t{16} << 20;  // 16 MiB
// Machine profiles (`--machine FILE`): their size, how deeply their JSON
// nests (a real profile nests 4 levels), and the largest team a
// communication entry describes (no run or simulation has more ranks).
inline constexpr uint64_t kMaxProfileFileBytes = uint64_t{16} << 20;  // 16 MiB
inline constexpr int kMaxProfileDepth = 64;
// What a pass may spend on proofs and predictions of the whole program
// (canonicalize's race proofs, overlap's cost-model predictions), counted
// as the program's statements times the proofs: about ten seconds on a
// 2-core machine. Past it, the pass leaves the rest of the program as it
// is and warns at the first statement it left.
inline constexpr int64_t kMaxPassWholeProgramWork = 1'000'000;

}  // namespace hostir
