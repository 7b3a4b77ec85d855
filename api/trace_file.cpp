#include "api/trace_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "api/output_file.h"

namespace hostir {
namespace {

// Rank 0's output file (api/output_file.h: written beside the path
// and renamed over it only when complete): remembers the first failure
// instead of stopping, since the other ranks' chunks must be received
// either way. A trace that is not committed leaves the path as it was.
class TraceFile {
 public:
  explicit TraceFile(const std::string& path) : path_(path) {
    auto opened = OutputFile::open(path);
    if (opened)
      file_.emplace(std::move(*opened));
    else
      fail(opened.error());
  }
  void append(std::string_view text) {
    if (!file_ || !error_.empty()) return;
    if (!file_->write(text.data(), text.size())) fail(std::strerror(errno));
    bytes_ += text.size();
  }
  // Completes the file; the error, if any (the path is then as it was).
  std::string commit() {
    if (file_ && error_.empty())
      if (auto failed = file_->commit()) fail(*failed);
    file_.reset();
    return error_;
  }
  const std::string& error() const { return error_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void fail(const std::string& why) {
    if (error_.empty()) error_ = fmt::format("cannot write the trace to '{}': {}", path_, why);
  }
  std::string path_;
  std::optional<OutputFile> file_;
  std::string error_;
  uint64_t bytes_ = 0;
};

// The file's text around the ranks' events.
constexpr std::string_view kTraceHeader = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
std::string traceFooter(const TraceSummary& summary, uint64_t limitBytes) {
  return fmt::format("\n],\"otherData\":{{\"truncated\":{},\"trace_limit_bytes\":{},\"dropped_operations\":{}}}}}\n",
                     summary.truncated, limitBytes, summary.droppedOperations);
}

}  // namespace

Result<TraceSummary> writeTraceFile(const std::vector<const TraceRecorder*>& ranks, const std::string& path) {
  TraceFile file(path);
  TraceSummary summary;
  file.append(kTraceHeader);
  std::vector<char> chunk(size_t{1} << 20);
  bool anyEvents = false;
  uint64_t limitBytes = kDefaultTraceLimitBytes;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const TraceRecorder& recorder = *ranks[r];
    if (Status error = recorder.error()) return *error;
    limitBytes = recorder.settings().limitBytes;
    summary.truncated |= recorder.truncated();
    summary.droppedOperations = std::max(summary.droppedOperations, recorder.droppedOperations());
    for (uint64_t offset = 0;;) {
      const int64_t n = recorder.readRecorded(offset, chunk.data(), chunk.size());
      if (n < 0) return Diagnostic{{}, fmt::format("rank {} could not read back its trace", r)};
      if (n == 0) break;
      if (offset == 0 && anyEvents) file.append(",\n");
      file.append({chunk.data(), static_cast<size_t>(n)});
      anyEvents = true;
      offset += static_cast<uint64_t>(n);
    }
  }
  file.append(traceFooter(summary, limitBytes));
  summary.bytes = file.bytes();
  if (std::string error = file.commit(); !error.empty()) return Diagnostic{{}, error};
  return summary;
}

Result<TraceSummary> writeTeamTrace(Communicator& comm, const TraceRecorder& mine, const std::string& path,
                                    size_t chunkBytes) {
  const int rank = comm.rank(), world = comm.size();
  // The communicators move typed elements: chunks travel as 8-byte words.
  const size_t chunkWords = std::max<size_t>(1, (chunkBytes + 7) / 8);
  std::optional<TraceFile> file;
  if (rank == 0) file.emplace(path);

  // Every rank learns every rank's state before any chunk moves, so all
  // take the same path: [failed, truncated, dropped operations] per rank.
  const Status recordError = mine.error();
  const bool failed = recordError || (file && !file->error().empty());
  double state[3] = {failed ? 1.0 : 0.0, mine.truncated() ? 1.0 : 0.0, static_cast<double>(mine.droppedOperations())};
  std::vector<double> states(3 * static_cast<size_t>(world));
  comm.allgather(state, states.data(), 3, DType::F64);
  TraceSummary summary;
  int failedRank = -1;
  for (int r = 0; r < world; ++r) {
    const double* s = &states[3 * static_cast<size_t>(r)];
    if (s[0] != 0 && failedRank < 0) failedRank = r;
    summary.truncated |= s[1] != 0;
    summary.droppedOperations = std::max(summary.droppedOperations, static_cast<uint64_t>(s[2]));
  }
  if (failedRank >= 0) {
    if (rank != 0) return recordError ? Result<TraceSummary>(*recordError) : Result<TraceSummary>(TraceSummary{});
    std::string reason = !file->error().empty() ? file->error()
                         : recordError          ? recordError->message
                                                : fmt::format("rank {} could not record its trace", failedRank);
    return Diagnostic{{}, reason};
  }

  if (file) file->append(kTraceHeader);
  std::vector<double> chunk(chunkWords);
  char* bytes = reinterpret_cast<char*>(chunk.data());
  bool anyEvents = false;
  int unreadable = -1;
  for (int r = 0; r < world; ++r) {
    uint64_t offset = 0;
    bool first = true;
    while (true) {
      double length = 0;  // of this chunk; 0 at the end, -1 when rank r cannot read its events
      if (rank == r) length = static_cast<double>(mine.readRecorded(offset, bytes, chunkWords * 8));
      if (r != 0) comm.broadcast(&length, 1, DType::F64, r);
      if (length <= 0) {
        if (length < 0 && unreadable < 0) unreadable = r;
        break;
      }
      const size_t n = static_cast<size_t>(length);
      if (r != 0) comm.broadcast(chunk.data(), (n + 7) / 8, DType::F64, r);
      if (file) {
        if (first && anyEvents) file->append(",\n");
        file->append({bytes, n});
      }
      first = false;
      anyEvents = true;
      offset += n;
    }
  }
  if (rank != 0) return TraceSummary{};
  file->append(traceFooter(summary, mine.settings().limitBytes));
  summary.bytes = file->bytes();
  if (unreadable >= 0) return Diagnostic{{}, fmt::format("rank {} could not read back its trace", unreadable)};
  if (std::string error = file->commit(); !error.empty()) return Diagnostic{{}, error};
  return summary;
}

std::function<Result<TraceSummary>(Communicator&, const TraceRecorder&)> teamTraceWriter(std::string path) {
  return [path = std::move(path)](Communicator& comm, const TraceRecorder& recorder) {
    return writeTeamTrace(comm, recorder, path);
  };
}

}  // namespace hostir
