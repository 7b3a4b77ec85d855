// Timelines of runs for `hostir run --trace FILE.json`: what each stream ran
// and when, what the host issued, on one time origin for all ranks, written
// in the Chrome trace format that Perfetto and chrome://tracing open.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace hostir {

// Tracks of one rank: the host, the main stream and each worker stream.
inline constexpr int kHostTrack = -2;
inline constexpr int kMainStreamTrack = -1;  // worker stream k is track k

struct TraceSlice {
  int track = kHostTrack;
  std::string name;      // the operation: "linear", "allreduce", ...
  std::string category;  // compute, communication, memory, sync or host
  std::string loc;       // "LINE:COL" of the statement, empty if none
  double startMicros = 0;
  double durationMicros = 0;
  int64_t bytes = 0;  // moved or touched; 0 if not meaningful
  double flops = 0;   // 0 for non-arithmetic work
};

// Collects one rank's slices; stream threads and the host add concurrently.
class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts a new recording whose times count from `origin`.
  void start(Clock::time_point origin);
  void stop();
  bool recording() const { return recording_; }
  double microsSinceOrigin(Clock::time_point t) const;
  void add(TraceSlice slice);
  std::vector<TraceSlice> slices() const;

 private:
  mutable std::mutex mutex_;
  std::vector<TraceSlice> slices_;  // guarded by mutex_
  Clock::time_point origin_;
  bool recording_ = false;  // set and cleared by the host while the streams are idle
};

// The Chrome trace of a whole team: `perRank[r]` becomes process r.
// `file` prefixes the source positions.
std::string chromeTraceJson(const std::vector<std::vector<TraceSlice>>& perRank, const std::string& file);

// Collective: every rank's slices, on rank 0 (empty elsewhere).
std::vector<std::vector<TraceSlice>> gatherTraces(Communicator& comm, const std::vector<TraceSlice>& mine);

}  // namespace hostir
