#include "runtime/trace.h"

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
  const uint64_t share = (settings_.limitBytes > kFileOverheadBytes ? settings_.limitBytes - kFileOverheadBytes : 0) /
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

}  // namespace hostir
