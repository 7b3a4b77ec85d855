#include "executor/trace.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <vector>

namespace hostir {
namespace {

// The team file's own text around the ranks' events, and the truncation
// mark a rank writes when it stops: kept out of every rank's share so the
// file stays within the limit.
constexpr uint64_t kFileOverheadBytes = 256;
constexpr uint64_t kTruncationMarkBytes = 512;
// The temporary file's write buffer: all the memory a recording takes.
constexpr size_t kWriteBufferBytes = size_t{64} << 10;

using Text = fmt::memory_buffer;

// The text as it goes between the quotes of a JSON string.
void appendJsonEscaped(Text& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '"': fmt::format_to(std::back_inserter(out), "\\\""); break;
      case '\\': fmt::format_to(std::back_inserter(out), "\\\\"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
          out.push_back(c);
    }
  }
}

void appendJsonString(Text& out, std::string_view text) {
  out.push_back('"');
  appendJsonEscaped(out, text);
  out.push_back('"');
}

std::string jsonString(std::string_view text) {
  Text out;
  appendJsonString(out, text);
  return fmt::to_string(out);
}

// Microseconds with nanosecond resolution; never NaN or infinite, which JSON cannot hold.
double finite(double value) { return std::isfinite(value) ? value : 0.0; }

// Chrome trace thread ids: the host first, then the main stream, then the pool.
int threadId(int track) { return track + 2; }

std::string trackName(int track) {
  if (track == kHostTrack) return "host";
  if (track == kMainStreamTrack) return "main stream";
  return "stream " + std::to_string(track);
}

void appendTrackMetadata(Text& out, int pid, int track) {
  const int tid = threadId(track);
  fmt::format_to(std::back_inserter(out),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}},\n"
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                 pid, tid, trackName(track), pid, tid, tid);
}

// A temporary file that is gone from the directory as soon as it exists,
// so nothing is left behind whatever happens to the process.
std::FILE* anonymousTemporaryFile(std::string& error) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "hostir-trace-XXXXXX").string();
  int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = fmt::format("cannot create a temporary file in '{}' for the trace: {}", dir.string(), std::strerror(errno));
    return nullptr;
  }
  ::unlink(name.c_str());
  std::FILE* file = ::fdopen(fd, "w+b");
  if (!file) {
    error = fmt::format("cannot open a temporary file for the trace: {}", std::strerror(errno));
    ::close(fd);
    return nullptr;
  }
  std::setvbuf(file, nullptr, _IOFBF, kWriteBufferBytes);
  return file;
}

}  // namespace

TraceRecorder::~TraceRecorder() {
  if (file_) std::fclose(file_);
}

void TraceRecorder::start(Clock::time_point origin, TraceSettings settings) {
  std::lock_guard lock(mutex_);
  settings_ = std::move(settings);
  settings_.world = std::max(settings_.world, 1);
  locPrefix_.clear();
  if (!settings_.sourceName.empty()) {
    locPrefix_ = jsonString(settings_.sourceName);
    locPrefix_.pop_back();  // the closing quote: the position follows
    locPrefix_ += ':';
  }
  origin_ = origin;
  written_ = 0;
  tracks_.clear();
  truncatedAtMicros_ = 0;
  error_.reset();
  truncated_.store(false, std::memory_order_relaxed);
  dropped_.store(0, std::memory_order_relaxed);
  const uint64_t share =
      (settings_.limitBytes > kFileOverheadBytes ? settings_.limitBytes - kFileOverheadBytes : 0) /
      static_cast<uint64_t>(settings_.world);
  budget_ = share > kTruncationMarkBytes ? share - kTruncationMarkBytes : 0;

  std::string error;
  if (!file_) file_ = anonymousTemporaryFile(error);
  if (!file_) {
    fail(std::move(error));
    recording_ = false;
    return;
  }
  std::rewind(file_);
  if (::ftruncate(::fileno(file_), 0) != 0)
    fail(fmt::format("cannot reuse the trace's temporary file: {}", std::strerror(errno)));
  // The process's name and place, whatever the limit: a rank's events are never anonymous.
  const int pid = settings_.rank;
  Text process;
  fmt::format_to(std::back_inserter(process),
                 "{{\"ph\":\"M\",\"pid\":{},\"name\":\"process_name\",\"args\":{{\"name\":\"rank {}\"}}}},\n"
                 "{{\"ph\":\"M\",\"pid\":{},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                 pid, pid, pid, pid);
  write({process.data(), process.size()});
  recording_ = true;
}

void TraceRecorder::stop() {
  std::lock_guard lock(mutex_);
  if (recording_ && truncated_.load(std::memory_order_acquire) && !error_) {
    // Said in the trace itself: whoever opens it sees where it ends and why.
    Text mark;
    fmt::format_to(std::back_inserter(mark),
                   "{{\"ph\":\"i\",\"s\":\"p\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"name\":\"trace truncated\","
                   "\"cat\":\"trace\",\"args\":{{\"reason\":\"--trace-limit reached\",\"limit_bytes\":{},"
                   "\"dropped_operations\":{}}}}}",
                   settings_.rank, threadId(kHostTrack), truncatedAtMicros_, settings_.limitBytes,
                   dropped_.load(std::memory_order_relaxed));
    write({mark.data(), mark.size()});
  }
  if (file_ && !error_ && std::fflush(file_) != 0)
    fail(fmt::format("cannot write the trace's temporary file: {}", std::strerror(errno)));
  recording_ = false;
}

double TraceRecorder::microsSinceOrigin(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void TraceRecorder::add(const TraceSlice& slice) {
  // What the host issued is what the warning counts as operations.
  const bool operation = slice.track == kHostTrack && slice.category == "host";
  if (truncated_.load(std::memory_order_acquire)) {
    if (operation) dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Formatted outside the lock: stream threads only contend for the append.
  Text event;
  auto out = std::back_inserter(event);
  fmt::format_to(out, "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":", settings_.rank, threadId(slice.track));
  appendJsonString(event, slice.name);
  fmt::format_to(out, ",\"cat\":");
  appendJsonString(event, slice.category);
  fmt::format_to(out, ",\"ts\":{:.3f},\"dur\":{:.3f},\"args\":{{", finite(slice.startMicros),
                 finite(slice.durationMicros));
  const char* separator = "";
  if (!slice.loc.empty()) {
    fmt::format_to(out, "\"loc\":{}", locPrefix_.empty() ? "\"" : locPrefix_);
    appendJsonEscaped(event, slice.loc);
    event.push_back('"');
    separator = ",";
  }
  if (slice.bytes) {
    fmt::format_to(out, "{}\"bytes\":{}", separator, slice.bytes);
    separator = ",";
  }
  if (slice.flops != 0 && std::isfinite(slice.flops)) fmt::format_to(out, "{}\"flops\":{}", separator, slice.flops);
  fmt::format_to(out, "}}}}");

  std::lock_guard lock(mutex_);
  if (error_ || truncated_.load(std::memory_order_relaxed)) {
    if (operation) dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Text track;
  if (!tracks_.contains(slice.track)) appendTrackMetadata(track, settings_.rank, slice.track);
  const uint64_t needed = 2 + event.size() + (track.size() ? 2 + track.size() : 0);  // with ",\n" before each
  if (written_ + needed > budget_) {
    truncatedAtMicros_ = finite(slice.startMicros);
    truncated_.store(true, std::memory_order_release);
    if (operation) dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (track.size()) {
    tracks_.insert(slice.track);
    write({track.data(), track.size()});
  }
  write({event.data(), event.size()});
}

bool TraceRecorder::write(std::string_view event) {
  if (!file_ || error_) return false;
  const bool ok = (written_ == 0 || std::fwrite(",\n", 1, 2, file_) == 2) &&
                  std::fwrite(event.data(), 1, event.size(), file_) == event.size();
  if (!ok) {
    fail(fmt::format("cannot write the trace's temporary file: {}", std::strerror(errno)));
    return false;
  }
  written_ += (written_ == 0 ? 0 : 2) + event.size();
  return true;
}

Status TraceRecorder::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

uint64_t TraceRecorder::recordedBytes() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void TraceRecorder::fail(std::string message) {
  if (!error_) error_ = Diagnostic{{}, std::move(message)};
}

int64_t TraceRecorder::readRecorded(uint64_t offset, char* out, size_t size) const {
  std::lock_guard lock(mutex_);
  if (offset >= written_) return 0;  // also a recorder that never started
  if (!file_ || error_) return -1;
  size = static_cast<size_t>(std::min<uint64_t>(size, written_ - offset));
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(::fileno(file_), out + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    done += static_cast<size_t>(got);
  }
  return static_cast<int64_t>(done);
}

namespace {

// Rank 0's output file: remembers the first failure instead of stopping,
// since the other ranks' chunks must be received either way.
class TraceFile {
 public:
  explicit TraceFile(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (!file_) fail();
  }
  ~TraceFile() {
    if (file_) std::fclose(file_);
  }
  void append(std::string_view text) {
    if (!file_ || !error_.empty()) return;
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail();
    bytes_ += text.size();
  }
  // Closes the file; the error, if any.
  std::string close() {
    if (file_ && std::fclose(file_) != 0) fail();
    file_ = nullptr;
    return error_;
  }
  const std::string& error() const { return error_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void fail() {
    if (error_.empty()) error_ = fmt::format("cannot write the trace to '{}': {}", path_, std::strerror(errno));
  }
  std::string path_;
  std::FILE* file_;
  std::string error_;
  uint64_t bytes_ = 0;
};

// A trace that could not be written whole is not left behind as if it had
// been; a device or a pipe given as the path is left alone.
void removeIfRegular(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) std::filesystem::remove(path, ec);
}

}  // namespace

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
    file->close();
    removeIfRegular(path);
    return Diagnostic{{}, reason};
  }

  if (file) file->append("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
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
  file->append(fmt::format("\n],\"otherData\":{{\"truncated\":{},\"trace_limit_bytes\":{},\"dropped_operations\":{}}}}}\n",
                           summary.truncated, mine.settings().limitBytes, summary.droppedOperations));
  summary.bytes = file->bytes();
  std::string error = file->close();
  if (error.empty() && unreadable >= 0) error = fmt::format("rank {} could not read back its trace", unreadable);
  if (!error.empty()) {
    removeIfRegular(path);
    return Diagnostic{{}, error};
  }
  return summary;
}

}  // namespace hostir
