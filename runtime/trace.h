// Timelines of runs for `hostir run --trace FILE.json`: what each stream ran
// and when, what the host issued, on one time origin for all ranks, recorded
// as Chrome trace events (the format Perfetto and chrome://tracing open).
//
// A trace of a long run is large (a 500k-operation run is hundreds of MB),
// so nothing holds it in memory: each rank's recorder writes its events to
// a temporary file as they come. A size limit bounds the team's file: a
// rank that reaches its share stops recording and says so. Assembling and
// writing the team's file from the ranks' recordings is the tool's
// (api/trace_file.h); the runner calls it through
// RunRequest::writeTrace.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "hostir/defaults.h"
#include "ir/diagnostic.h"

namespace hostir {

// Tracks of one rank: the host, the main stream and each worker stream.
inline constexpr int kHostTrack = -2;
inline constexpr int kMainStreamTrack = -1;  // worker stream k is track k

// One piece of work on a track. The strings are only read during add().
struct TraceSlice {
  int track = kHostTrack;
  std::string_view name;      // the operation: "linear", "allreduce", ...
  std::string_view category;  // compute, communication, memory, sync or host
  std::string_view loc;       // "LINE:COL" of the statement, empty if none
  double startMicros = 0;
  double durationMicros = 0;
  int64_t bytes = 0;  // moved or touched; 0 if not meaningful
  double flops = 0;   // 0 for non-arithmetic work
};

inline constexpr uint64_t kDefaultTraceLimitBytes = kDefaultTraceLimitMiB << 20;

struct TraceSettings {
  int rank = 0;            // the Chrome trace process of the events
  int world = 1;           // the ranks that share the limit
  std::string sourceName;  // prefixes positions ("p.hir:3:4"); none when empty
  // The whole team's file stays within this; each rank records at most
  // its share (limit / world) and stops there.
  uint64_t limitBytes = kDefaultTraceLimitBytes;
};

// Records one rank's events as Chrome trace JSON into a temporary file;
// stream threads and the host add concurrently. Memory stays the same
// however long the run: one write buffer.
class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  TraceRecorder() = default;
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Starts a new recording (dropping the last one) whose times count from
  // `origin`. Call while no stream runs traced work.
  void start(Clock::time_point origin, TraceSettings settings);
  // Ends the recording; call once the streams are idle.
  void stop();
  // True from start() to stop(), also once the limit was reached (what is
  // added then is counted, not written).
  bool recording() const { return recording_; }
  double microsSinceOrigin(Clock::time_point t) const;
  void add(const TraceSlice& slice);

  // About the last recording, once stopped:
  const TraceSettings& settings() const { return settings_; }
  // Why the events could not be recorded (no temporary file, a full disk).
  Status error() const;
  bool truncated() const { return truncated_.load(std::memory_order_acquire); }
  // The operations the host issued after the limit was reached.
  uint64_t droppedOperations() const { return dropped_.load(std::memory_order_relaxed); }
  // The bytes of recorded events: JSON objects separated by ",\n".
  uint64_t recordedBytes() const;
  // Copies up to `size` recorded bytes from `offset`; returns the count, or
  // -1 when the temporary file cannot be read.
  int64_t readRecorded(uint64_t offset, char* out, size_t size) const;

 private:
  // Appends one event (the text of a JSON object), under mutex_.
  bool write(std::string_view event);
  void fail(std::string message);  // under mutex_

  mutable std::mutex mutex_;
  std::FILE* file_ = nullptr;     // the temporary file, already unlinked; guarded by mutex_
  uint64_t written_ = 0;          // guarded by mutex_
  uint64_t budget_ = 0;           // what this rank may write besides its process metadata and the truncation mark
  std::set<int> tracks_;          // tracks named so far; guarded by mutex_
  double truncatedAtMicros_ = 0;  // guarded by mutex_
  Status error_;                  // guarded by mutex_
  std::atomic<bool> truncated_{false};
  std::atomic<uint64_t> dropped_{0};
  TraceSettings settings_;
  std::string locPrefix_;  // the JSON-escaped source name and ':', or empty
  Clock::time_point origin_;
  bool recording_ = false;  // set and cleared by the host while the streams are idle
};

// What the team's trace file holds, as its writer (RunRequest::writeTrace) reports it.
struct TraceSummary {
  uint64_t bytes = 0;  // the file's size
  // Some rank reached its share of the limit and stopped recording.
  bool truncated = false;
  // The most operations any one rank issued after its trace stopped.
  uint64_t droppedOperations = 0;
};

}  // namespace hostir
